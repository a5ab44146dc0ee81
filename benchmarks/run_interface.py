"""The run interface (issue 30): what a run with new values costs around the compiled code.

    python benchmarks/run_interface.py [--repeat N] [--grid 1000] [--mc 200] [--before CHECKOUT]
        [--collimator PYTHON] [--mc-msd 1000000]

Rows (medians of --repeat timings of processor time, the machine being shared; ratios to
the issue's targets, measured in one run):
- execute: `blocksim.execute(model)` of a compiled chain integrator -> 10 gains (engine.py's
  chain, accelerated mode, loaded once), no output directory; and the part spent inside the
  compiled run (meta.json's wall_time) for comparison.
- set + execute: `model.set("blocks.Spring.K", k)` then `execute(model)` on msd.yaml in
  accelerated mode, k another value each time (a change of values: written into the
  model's Context, nothing recompiled).
- set, 2,000 gains: `model.set("blocks.G5.K", k)` alone on a chain integrator -> 2,000
  gains (normal mode): what a change of one block's value costs in a big diagram (the
  same as in a small one when nothing else is visited).
- msd grid: `blocksim sweep` of a --grid-value grid of msd's spring constant, in this
  process, preparation included (prepare + run, --keep metrics), per run: on one thread,
  and on two C threads (workers=2: still this process, its compiled batches on 2 threads).
  Beside it, per run over the same spring constants: a hand-fused numba loop of msd's
  equations (Dormand-Prince 5(4) with the engine's controller, landing on the force step,
  max(x) over its steps; compile excluded), and with `--collimator PYTHON` (an interpreter
  with pycollimator: it pins numpy < 2, so a venv of its own) Collimator's jitted grid of
  the same diagram, jax.lax.map and jax.vmap (benchmarks/collimator_msd.py says which
  configuration and why, and what differs; compile excluded), and its x at t = 20 for the
  first spring constant beside ours.
  Beside set + execute, with `--collimator`: Collimator's jitted call of one run with a new
  spring constant (final state; and recording x, v, F at every step as ours does).
- msd Monte Carlo (`--mc-msd N`, 0: not run): a sweep of N samples of msd with the spring
  and damping constants drawn, max(x) per run, on 2 workers, whole wall (prepare + run).
- demo3 Monte Carlo: demo3 with its controller's model perturbed by 10 % and a seed per run
  (--mc runs, benchmarks/sweep.py's at demo3's own tolerances), one worker, processor time
  per run.
With `--before CHECKOUT` (another checkout of blocksim, its robot kernels built) the same
measurements of that checkout, in a process of their own, are shown beside these.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
ROOT = Path(os.environ.get("BLOCKSIM_BENCH_ROOT", HERE))  # the checkout measured
if ROOT != HERE:  # not the editable install's packages: those of the checkout
    sys.meta_path[:] = [f for f in sys.meta_path
                        if "__editable__" not in getattr(f, "__module__", "")]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import blocksim  # noqa: E402
from blocksim.batch.run import prepare  # noqa: E402
from engine import chain  # noqa: E402
from sweep import MONTE_CARLO  # noqa: E402  (demo3, its controller's model perturbed)

MSD = ROOT / "diagrams" / "msd.yaml"

GRID = ("blocksim-sweep: 1\ndiagram: " + str(MSD) + "\nname: bench_grid\n"
        "grid: {{blocks.Spring.K: 'linspace(1, 10, {n})'}}\nmetrics: {{peak: 'max(x)'}}\n")


def median_us(fn, repeat, number):
    """Median over `repeat` timings of `number` calls of fn(i), in microseconds of processor
    time per call (the machine is shared: wall time counts the others' work too)."""
    runs = []
    k = 0
    for _ in range(repeat):
        t0 = time.process_time()
        for _ in range(number):
            fn(k)
            k += 1
        runs.append((time.process_time() - t0) / number)
    return 1e6 * statistics.median(runs)


def execute_chain(folder, repeat):
    path = Path(folder) / "chain10.yaml"
    path.write_text(chain(10))
    model = blocksim.load(path, {"simulation.mode": "accelerated"})
    first = blocksim.execute(model)
    assert first.meta["mode"]["mode"] == "accelerated", first.meta["mode"]
    inside = []

    def once(_):
        inside.append(blocksim.execute(model).meta["wall_time"])

    total = median_us(once, repeat, 200)
    return total, 1e6 * statistics.median(inside)


def set_execute_msd(repeat):
    model = blocksim.load(MSD, {"simulation.mode": "accelerated"})
    blocksim.execute(model)

    def once(i):
        model.set("blocks.Spring.K", 3.0 + (i % 100) / 100)
        blocksim.execute(model)

    total = median_us(once, repeat, 100)
    result = blocksim.execute(model)
    assert result.meta["mode"]["mode"] == "accelerated" and result.meta["mode"].get(
        "compile_time", 0) == 0, result.meta["mode"]
    return total


def set_big(folder, repeat, n=2000):
    path = Path(folder) / f"chain{n}.yaml"
    path.write_text(chain(n))
    model = blocksim.load(path, {"simulation.mode": "normal"})

    def once(i):
        model.set("blocks.G5.K", 1.0 + (i % 100) / 1000)

    return median_us(once, repeat, 50)


def sweep_per_run(folder, text, n, workers=1):
    """(wall ms per run, preparation included; CPU ms per run) of a sweep in this process."""
    path = Path(folder) / f"sweep_{n}_{abs(hash(text)) % 1000}.yaml"
    path.write_text(text.format(n=n))
    w0, c0 = time.perf_counter(), time.process_time()
    table = prepare(path).run(workers=workers, keep="metrics")
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    assert len(table) == n and table.counts()["ok"] == n, table
    return 1e3 * wall / n, 1e3 * cpu / n


MSD_MC = ("blocksim-sweep: 1\ndiagram: " + str(MSD) + "\nname: bench_msd_mc\nsamples: {n}\n"
          "random: {{blocks.Spring.K: 'uniform(1, 10)', blocks.Damping.K: 'uniform(0.2, 1)'}}\n"
          "seed: 1\nmetrics: {{peak: 'max(x)'}}\n")

NUMBA_MSD = """
import math
import numpy as np
from numba import njit

@njit(cache=False)
def msd_peaks(ks, c, A, e, rtol, atol, max_step):
    peaks = np.empty(ks.size)
    k = np.empty((7, 2))
    steps = 0
    for r in range(ks.size):
        spring = ks[r]
        x0, x1, t, peak, h = 0.0, 0.0, 0.0, 0.0, -1.0
        for t_end, force in ((1.0, 0.0), (20.0, 1.0)):
            while t < t_end:
                if h < 0:  # Hairer's starting step, as the engine's
                    s0, s1 = atol + rtol * abs(x0), atol + rtol * abs(x1)
                    f0 = x1; f1 = force - c * x1 - spring * x0
                    d0 = math.sqrt(((x0 / s0) ** 2 + (x1 / s1) ** 2) / 2)
                    d1 = math.sqrt(((f0 / s0) ** 2 + (f1 / s1) ** 2) / 2)
                    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
                    y0, y1 = x0 + h0 * f0, x1 + h0 * f1
                    g0 = y1 - f0; g1 = force - c * y1 - spring * y0 - f1
                    d2 = math.sqrt(((g0 / s0) ** 2 + (g1 / s1) ** 2) / 2) / h0
                    h1 = max(1e-6, h0 * 1e-3) if max(d1, d2) <= 1e-15 else \
                        (0.01 / max(d1, d2)) ** 0.2
                    h = min(100 * h0, h1, t_end - t, max_step)
                hs = min(h, t_end - t)
                for s in range(7):
                    y0, y1 = x0, x1
                    for j in range(s):
                        y0 += hs * A[s, j] * k[j, 0]
                        y1 += hs * A[s, j] * k[j, 1]
                    k[s, 0] = y1
                    k[s, 1] = force - c * y1 - spring * y0
                n0 = n1 = 0.0
                for s in range(7):
                    n0 += e[s] * k[s, 0]
                    n1 += e[s] * k[s, 1]
                s0 = atol + rtol * max(abs(x0), abs(y0))
                s1 = atol + rtol * max(abs(x1), abs(y1))
                err = hs * math.sqrt(((n0 / s0) ** 2 + (n1 / s1) ** 2) / 2)
                if err <= 1.0:
                    t, x0, x1 = t + hs, y0, y1
                    peak = max(peak, x0)
                    steps += 1
                    h = min(hs * (min(10.0, 0.9 * err ** -0.2) if err > 0 else 10.0), max_step)
                else:
                    h = hs * max(0.2, 0.9 * err ** -0.2)
        peaks[r] = peak
    return peaks, steps
"""


def numba_grid(n, repeat):
    """(ms per run of the hand-fused numba loop over the grid's n spring constants, steps
    per run, the peaks)."""
    import numpy as np

    from blocksim.engine.solvers.tableaus import DP54
    namespace = {}
    exec(NUMBA_MSD, namespace)  # noqa: S102 - the peer's source, compiled by numba
    call = (np.linspace(1, 10, n), 0.4, DP54.A, DP54.e, 1e-6, 1e-9, 0.4)  # msd's c, settings
    peaks, steps = namespace["msd_peaks"](*call)  # compiled here
    best = min(_wall(lambda: namespace["msd_peaks"](*call)) for _ in range(repeat))
    return 1e3 * best / n, steps / n, peaks


def _wall(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def collimator(python, n):
    """Collimator over the grid's n spring constants and one call at a time, in `python`'s
    process: benchmarks/collimator_msd.py's figures."""
    out = subprocess.run([python, str(HERE / "benchmarks" / "collimator_msd.py"), str(n)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def msd_step_response(k, t, m=1.0, c=0.4):
    """msd's x(t) in closed form (underdamped, unit force from t = 1): a second-order
    system's step response, m and c as in msd.yaml."""
    wn, zeta = math.sqrt(k / m), c / (2 * math.sqrt(k * m))
    wd, tau = wn * math.sqrt(1 - zeta ** 2), t - 1
    return (1 - math.exp(-zeta * wn * tau) * (math.cos(wd * tau) + zeta * wn / wd
                                             * math.sin(wd * tau))) / k


def msd_final_x(k):
    """Our x at t = 20 on msd with the spring constant k (accelerated mode)."""
    model = blocksim.load(MSD, {"simulation.mode": "accelerated"})
    model.set("blocks.Spring.K", k)
    return float(blocksim.execute(model)["x"][-1])


def measure(args):
    """{row: figure} of this process's checkout."""
    with tempfile.TemporaryDirectory() as folder:
        total, inside = execute_chain(folder, args.repeat)
        set_exec = set_execute_msd(args.repeat)
        big = set_big(folder, args.repeat)
        sweep_file = Path(folder) / "warm.yaml"  # imports and the compiled code's cache
        sweep_file.write_text(GRID.format(n=4))
        prepare(sweep_file).run(workers=1, keep="metrics")
        grid_wall, grid_cpu = sweep_per_run(folder, GRID, args.grid)
        grid2_wall, _ = sweep_per_run(folder, GRID, args.grid, workers=2)
        msd_mc = [1e-3 * args.mc_msd * v for v in sweep_per_run(folder, MSD_MC, args.mc_msd,
                                                                  workers=2)] \
            if args.mc_msd else None  # [wall s, CPU s]
        mc_wall, mc_cpu = sweep_per_run(  # at demo3's own tolerances
            folder, MONTE_CARLO.format(rtol=1e-3, atol=1e-6, runs="{n}"), args.mc)
    return {"execute": total, "inside": inside, "set": set_exec / 1e3, "set_big": big / 1e3,
            "grid": grid_wall, "grid_cpu": grid_cpu, "grid2": grid2_wall, "mc": mc_cpu,
            "mc_wall": mc_wall, "msd_mc": msd_mc}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--grid", type=int, default=1000)
    ap.add_argument("--mc", type=int, default=200)
    ap.add_argument("--before", help="another checkout of blocksim, measured too")
    ap.add_argument("--collimator", metavar="PYTHON",
                    help="a python with pycollimator: Collimator's jit(vmap) beside the grid")
    ap.add_argument("--mc-msd", type=int, default=0, metavar="N",
                    help="an N-sample Monte Carlo of msd on 2 workers (0: not run)")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.json:
        print(json.dumps(measure(args)))
        return
    before = None
    if args.before:
        out = subprocess.run(
            [sys.executable, __file__, "--json", "--repeat", str(args.repeat), "--grid",
             str(args.grid), "--mc", str(args.mc), "--mc-msd", str(args.mc_msd)],
            check=True, capture_output=True, text=True,
            env={**os.environ, "BLOCKSIM_BENCH_ROOT": str(Path(args.before).resolve())})
        before = json.loads(out.stdout.strip().splitlines()[-1])
    now = measure(args)
    numba_ms, numba_steps, _ = numba_grid(args.grid, args.repeat)
    peers = {"numba": numba_ms}
    if args.collimator:
        found = collimator(args.collimator, args.grid)
        peers["collimator"] = found["per_run_ms"]
    rows = [("execute", "execute, chain of 10 gains (accelerated)", "us", "243 us", 30),
            ("inside", "  of which inside the compiled run", "us", "27 us", None),
            ("set", "model.set + execute, msd (accelerated)", "ms", "1.78 ms", 0.1),
            ("set_big", "model.set alone, 2,000-gain chain (normal)", "ms", "", None),
            ("grid", f"msd {args.grid:,}-value grid sweep, per run (wall)", "ms",
             "0.96-1.66 ms", 0.05),
            ("grid_cpu", "  the same, CPU per run", "ms", "", None),
            ("grid2", "  the same on 2 C threads (wall)", "ms", "", 0.05),
            ("mc", f"demo3 {args.mc}-run Monte Carlo, CPU per run", "ms", "6.5 ms", 3)]
    print(f"{'work':<46} {'before':>9} {'now':>9} {'issue 30':>13} {'target':>8} "
          f"{'now/target':>10}")
    for key, work, unit, issue, target in rows:
        fmt = (lambda v: f"{v:.0f} {unit}") if unit == "us" else (lambda v: f"{v:.3f} {unit}")
        was = fmt(before[key]) if before else "-"
        print(f"{work:<46} {was:>9} {fmt(now[key]):>9} {issue:>13} "
              f"{'' if target is None else f'{target:g} {unit}':>8} "
              f"{'' if target is None else f'{now[key] / target:.2f}x':>10}")
        if key == "set" and "collimator" in peers:
            print(f"{'  peer: Collimator jitted call, new k':<46} {'':>9} "
                  f"{found['call_ms']:.3f} ms {'0.17 ms':>13}  (final state; ours "
                  f"{now['set'] / found['call_ms']:.2f}x it; recording x, v, F at every "
                  f"step {found['call_record_ms']:.2f} ms: ours "
                  f"{now['set'] / found['call_record_ms']:.2f}x)")
    if now["msd_mc"] is not None:
        was = f"{before['msd_mc'][0]:.1f} s" if before and before.get("msd_mc") else "-"
        wall, cpu = now["msd_mc"]
        print(f"{f'msd {args.mc_msd:,}-sample Monte Carlo, 2 workers (wall)':<46} {was:>9} "
              f"{wall:>7.1f} s {'-':>13} {'30 s':>8} {wall / 30:>9.2f}x")
        print(f"{'  the same, CPU (all threads)':<46} {'':>9} {cpu:>7.1f} s")
    print(f"(demo3 wall per run {now['mc_wall']:.2f} ms; processor times but the grid's "
          "wall, the issue's figures were wall times on an idle machine)")
    print(f"\nmsd {args.grid:,}-value grid, per run, beside its peers (ratio: ours / peer)")
    ours = min(now["grid"], now["grid2"])
    print(f"  hand-fused numba loop: {numba_ms:.4f} ms ({numba_steps:.0f} steps a run; "
          f"ours {ours / numba_ms:.1f}x; target <= 3x: {3 * numba_ms:.3f} ms)")
    if "collimator" in peers:
        print(f"  Collimator jit(lax.map): {found['per_run_ms']:.4f} ms, jit(vmap): "
              f"{found['vmap_ms']:.4f} ms (compile {found['compile_s']:.1f} s excluded, "
              f"{found['per_run_ms'] + 1e3 * found['compile_s'] / args.grid:.3f} ms with it; ours "
              f"{ours / peers['collimator']:.2f}x the faster; its CPU "
              f"{found['per_run_cpu_ms']:.4f} ms, ours "
              f"{now['grid_cpu'] / found['per_run_cpu_ms']:.2f}x; its per-step-attempt host "
              "callback removed, final x not max(x): see "
              "benchmarks/collimator_msd.py)")
        exact = msd_step_response(1.0, 20.0)
        print(f"    x(20) at k = 1, minus the exact {exact:.10f}: Collimator's "
              f"{found['x_at_k1'] - exact:.1e}, ours {msd_final_x(1.0) - exact:.1e}")
    else:
        print("  Collimator: not measured (--collimator PYTHON: an interpreter with pycollimator)")


if __name__ == "__main__":
    main()
