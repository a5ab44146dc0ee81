"""Batch runs: `blocksim sweep` on 1 and 2 workers, its per-run overhead, and the same Monte
Carlo as a plain loop over blocksim.run and as a loop over bdsim.

    pip install -e ".[fast,bench]"        # bdsim + roboticstoolbox-python for the last row
    python benchmarks/sweep.py [--runs 200] [--loop-runs 40] [--peer-runs 10]
    python benchmarks/sweep.py --keep-runs 2000 [--before CHECKOUT]  # --keep all vs metrics
    python benchmarks/sweep.py --large 1000000 [--before CHECKOUT]   # a large grid, SIGTERM

The work: demo3 (Puma 560 computed torque, 10 s) with the controller's model perturbed by
10 % with a different random seed per run, RK45 at rtol 1e-10, atol 1e-12 (`--rtol`; atol is
rtol/100): about 0.1 s of simulation per run, the run length the speed-up target is set for;
metric max(abs(e)).

Rows:
- sweep, 1 worker: in this process (no Dask); per-run overhead = (wall time of the runs -
  time inside simulate()) / runs: loading, writing the run's values into the model (here:
  building the perturbed robot), metrics and bookkeeping.
- sweep, 2 workers: a local Dask cluster of 2 processes; the cluster's start-up (a few
  seconds, paid once per sweep) is shown apart, and the speed-up is given in steady state
  (the second half of the runs, after each worker's imports and first compile), for all the
  runs, and for the whole sweep.
- the same gains-only sweep overhead (values change, no robot rebuilt) for comparison, and
  the cost of a model per run: load + compile afresh against the route of new values
  (interleaved).
- plain loop: `blocksim.run(diagram, overrides)` per run (load and compile every time).
- bdsim loop: per run, a new bdsim diagram of the same structure (rtb's JTraj, IDyn of the
  rtb Puma perturbed exactly as robots.md specifies for the run's seed, FDyn) compiled and
  run at the same tolerances; its max error is checked against the sweep's, run by run.
Ratios are what to compare: the machine is shared, absolute numbers move with its load.

`--keep-runs N`: a compiled sweep (pid_motor, N Monte Carlo samples of its gain, time constant
and PID gains, 2 workers, into a directory) with `--keep metrics` and with `--keep all`, the
default, which writes every run's results.npz and meta.json: the wall time of each and where
the runs went. With `--before CHECKOUT` the same from another checkout of blocksim (its own
process each), for the ratio.

`--large N`: `blocksim sweep` of an N-run grid (two paths, sqrt(N) values each) of a
first-order lag with 0.1 s runs, --workers 1, --keep metrics, as a command: its resident
memory when the first row is in summary.csv, then SIGTERM and the seconds until it has
exited (written every row, sweep.json, the heat map and the report). With `--before
CHECKOUT` the same command of another checkout of blocksim runs first, for the ratio.
"""
import argparse
import contextlib
import io
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import blocksim  # noqa: E402
from blocksim.batch.run import prepare  # noqa: E402

DEMO3 = ROOT / "diagrams" / "demo3.yaml"

MONTE_CARLO = f"""\
blocksim-sweep: 1
diagram: {DEMO3}
name: bench_robustness
set:
  simulation.rtol: {{rtol}}
  simulation.atol: {{atol}}
  robots.p560p.perturb: 0.1
samples: {{runs}}
random:
  robots.p560p.seed: integers(0, 2**31 - 1)
seed: 1
metrics:
  max_err: max(abs(e))
"""

GAINS = f"""\
blocksim-sweep: 1
diagram: {DEMO3}
name: bench_gains
set:
  simulation.rtol: {{rtol}}
  simulation.atol: {{atol}}
grid:
  blocks.Kp.K: linspace(50, 200, {{n}})
  blocks.Kd.K: [10, 20]
metrics:
  max_err: max(abs(e))
"""


def sweep_file(folder, text, **kw):
    path = Path(folder) / f"sweep_{len(list(Path(folder).iterdir()))}.yaml"
    path.write_text(text.format(**kw))
    return path


def timed_sweep(path, workers):
    """(table, wall of the whole run, wall from the first run's start to the end, steady
    throughput: runs per second over the second half of the runs, once every worker has
    imported and compiled)."""
    sweep = prepare(path)
    marks = {"done": []}

    def progress(p):
        if p.outcome is None:
            marks["runs"] = time.perf_counter()
        else:
            marks["done"].append(time.perf_counter())

    t0 = time.perf_counter()
    table = sweep.run(workers=workers, keep="metrics", progress=progress)
    t1 = time.perf_counter()
    done = marks["done"]
    half = len(done) // 2
    steady = (len(done) - 1 - half) / (done[-1] - done[half])
    return table, t1 - t0, t1 - marks["runs"], steady


def overhead_ms(table, runs_wall):
    ex = table.meta["execution"]
    return 1e3 * (runs_wall - ex["simulate_s"]) / len(table), 1e3 * ex["simulate_s"] / len(table)


def plain_loop(seeds, tol):
    """Per run: blocksim.run loads and compiles the diagram, then the metric in numpy."""
    t0 = time.perf_counter()
    values = []
    for seed in seeds:
        r = blocksim.run(DEMO3, overrides={**tol, "robots.p560p.perturb": 0.1,
                                           "robots.p560p.seed": int(seed)})
        values.append(float(np.max(np.abs(r["e"]))))
    return time.perf_counter() - t0, values


def perturbed(plant, p, seed):
    """rtb's Puma perturbed as robots.md specifies (so it is blocksim's robot for `seed`):
    s = default_rng(seed).uniform(1 - p, 1 + p, (n, 2)); link j's mass x s[j, 0], its
    inertia tensor x s[j, 1]."""
    s = np.random.default_rng(seed).uniform(1 - p, 1 + p, size=(plant.n, 2))
    model = plant.copy()
    for j, link in enumerate(model.links):
        link.m = plant.links[j].m * s[j, 0]
        link.I = plant.links[j].I * s[j, 1]
    return model


def bdsim_loop(seeds, tol):
    """Per run: a new bdsim diagram of demo3's structure with the perturbed controller model."""
    from peers import QF, bdsim_quiet_run, bdsim_sim
    import roboticstoolbox as rtb
    from roboticstoolbox.blocks import FDyn, IDyn, JTraj

    plant = rtb.models.DH.Puma560().nofriction(coulomb=True, viscous=False)  # viscous kept
    t0 = time.perf_counter()
    values = []
    for seed in seeds:
        sim = bdsim_sim()
        bd = sim.blockdiagram()
        jt = JTraj(q0=np.zeros(6), qf=QF, T=10, bd=bd)
        robot = FDyn(plant, q0=np.zeros(6), bd=bd)
        rne = IDyn(perturbed(plant, 0.1, int(seed)), bd=bd)
        e, ed = bd.SUM("+-"), bd.SUM("+-")
        kp, kd = bd.GAIN(100.0), bd.GAIN(20.0)
        acc = bd.SUM("+++")
        bd.connect(jt[0], e[0]); bd.connect(robot[0], e[1])  # noqa: E702
        bd.connect(jt[1], ed[0]); bd.connect(robot[1], ed[1])  # noqa: E702
        bd.connect(e, kp); bd.connect(ed, kd)  # noqa: E702
        bd.connect(jt[2], acc[0]); bd.connect(kp, acc[1]); bd.connect(kd, acc[2])  # noqa: E702
        bd.connect(robot[0], rne[0]); bd.connect(robot[1], rne[1])  # noqa: E702
        bd.connect(acc, rne[2]); bd.connect(rne, robot)  # noqa: E702
        bd.connect(robot[2], bd.NULL())
        with contextlib.redirect_stdout(io.StringIO()):
            bd.compile(report=False)
        out = bdsim_quiet_run(sim, bd, 10, watch=[e], rtol=tol["simulation.rtol"],
                              atol=tol["simulation.atol"])
        values.append(float(np.max(np.abs(out.y))))  # the one watched signal, (N, 6)
    return time.perf_counter() - t0, values


def preparation(runs=60):
    """ms per run to get a model: load + compile afresh, against writing the run's values
    into a compiled model by the one route of new values (`Compilation.change`, as a
    sweep's worker does), interleaved so that both see the same load."""
    from blocksim.engine.compiler import compile_diagram
    from blocksim.language.diagram import load_diagram

    base = load_diagram(DEMO3)
    model = compile_diagram(base.copy())
    cases = {"perturbed robot": lambda i: [("robots.p560p.perturb", 0.1), ("robots.p560p.seed", i)],
             "gains only": lambda i: [("blocks.Kp.K", 50 + i), ("blocks.Kd.K", 10 + i % 7)]}
    out = {}
    for label, overrides in cases.items():
        fresh = kept = 0.0
        for i in range(runs):
            t0 = time.perf_counter()
            compile_diagram(load_diagram(DEMO3, overrides(i)))
            t1 = time.perf_counter()
            model.compilation.change(model, overrides(i), base=base)
            t2 = time.perf_counter()
            fresh, kept = fresh + t1 - t0, kept + t2 - t1
        out[label] = (1e3 * fresh / runs, 1e3 * kept / runs)
    return out


LAG = """\
blocksim: 1
name: lag
parameters: {tau: 1.0}
blocks:
  U: {type: constant, value: 1}
  S: {type: sum, signs: "+-"}
  G: {type: gain, K: 1/tau}
  I: {type: integrator}
wires: [U -> S.u1, S -> G, G -> I, I -> S.u2]
simulation: {stop: 0.1, output_interval: 0.1}
record: {x: I.y}
"""


def large_grid(n, checkout):
    """(MB resident when the first row is written, s from SIGTERM to exit, rows written) of
    `blocksim sweep` over an n-run grid, run from `checkout`."""
    side = int(round(n ** 0.5))
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        (folder / "lag.yaml").write_text(LAG)
        (folder / "big.yaml").write_text(
            "blocksim-sweep: 1\ndiagram: lag.yaml\ngrid:\n"
            f"  parameters.tau: linspace(1, 2, {side})\n  blocks.U.value: linspace(0, 1, {side})\n"
            "metrics: {final_x: final(x)}\n")
        out = folder / "out"
        env = {**os.environ, "PYTHONPATH": str(checkout), "MPLBACKEND": "Agg"}
        proc = subprocess.Popen([sys.executable, "-m", "blocksim", "sweep", str(folder / "big.yaml"),
                                 "--workers", "1", "--keep", "metrics", "--out", str(out), "--quiet"],
                                cwd=folder, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        while proc.poll() is None:
            time.sleep(0.5)
            table = out / "summary.csv"
            if table.exists() and ",ok," in table.read_text()[:100_000]:
                break
        rss = _resident_mb(proc.pid)
        signalled = time.perf_counter()
        proc.send_signal(signal.SIGTERM)
        proc.wait()
        exit_s = time.perf_counter() - signalled
        with open(out / "summary.csv") as f:
            rows = sum(1 for _ in f) - 1
    return rss, exit_s, rows


def _resident_mb(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


PID_KEEP = """\
blocksim-sweep: 1
diagram: {diagram}
name: keep_bench
samples: {runs}
random:
  parameters.K: uniform(1.5, 2.5)
  parameters.tau: uniform(0.4, 0.6)
  blocks.PID.Kp: uniform(6, 10)
seed: 1
metrics:
  overshoot: max(theta) - 10
"""

KEEP_RUN = """
import json, sys, tempfile, time
from pathlib import Path
import blocksim
path, keep = sys.argv[1], sys.argv[2]
blocksim.sweep(path, workers=2, keep="metrics", out=tempfile.mkdtemp())  # compiled, cached
with tempfile.TemporaryDirectory() as out:
    t0 = time.perf_counter()
    table = blocksim.sweep(path, workers=2, keep=keep, out=out)
    wall = time.perf_counter() - t0
    kept = len(list(Path(out, "runs").glob("*/meta.json")))
print(json.dumps({"wall": wall, "where": table.meta["execution"]["where"], "kept": kept,
                  "ok": table.counts()["ok"]}))
"""


def keep_sweep(runs, checkout):
    """{keep: (wall s, where, runs kept)} of the pid_motor sweep from `checkout`."""
    import json
    out = {}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "keep.yaml"
        path.write_text(PID_KEEP.format(diagram=ROOT / "diagrams" / "pid_motor.yaml", runs=runs))
        env = {**os.environ, "PYTHONPATH": str(checkout), "MPLBACKEND": "Agg"}
        for keep in ("metrics", "all"):
            done = subprocess.run([sys.executable, "-c", KEEP_RUN, str(path), keep], env=env,
                                  cwd=folder, capture_output=True, text=True, check=True)
            found = json.loads(done.stdout.splitlines()[-1])
            assert found["ok"] == runs, done.stderr
            out[keep] = (found["wall"], found["where"], found["kept"])
    return out


def keep(runs, before):
    print(f"pid_motor Monte Carlo, {runs:,} runs, accelerated, 2 workers, into a directory "
          f"(load {os.getloadavg()[0]:.1f} at the start)")
    print("| blocksim | --keep | wall s | ms / run | runs went | results kept | vs --keep metrics |")
    print("|---|---|---|---|---|---|---|")
    for label, checkout in (("before", before), ("this checkout", ROOT)):
        if checkout is None:
            continue
        found = keep_sweep(runs, checkout)
        for option, (wall, where, kept) in found.items():
            print(f"| {label} | {option} | {wall:.2f} | {1e3 * wall / runs:.2f} | {where} | "
                  f"{kept:,} | {wall / found['metrics'][0]:.2f} |")


def large(n, before):
    print(f"{n:,}-run grid, blocksim sweep --workers 1 --keep metrics, SIGTERM after the first row")
    print("| blocksim | resident MB at the first row | s from SIGTERM to exit | rows written |")
    print("|---|---|---|---|")
    for label, checkout in (("before", before), ("this checkout", ROOT)):
        if checkout is not None:
            rss, exit_s, rows = large_grid(n, checkout)
            print(f"| {label} | {rss:.0f} | {exit_s:.1f} | {rows:,} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200, help="Monte Carlo runs of the sweeps")
    ap.add_argument("--loop-runs", type=int, default=40, help="runs of the plain loop")
    ap.add_argument("--peer-runs", type=int, default=10, help="runs of the bdsim loop")
    ap.add_argument("--rtol", type=float, default=1e-10, help="RK45 rtol (atol = rtol/100)")
    ap.add_argument("--large", type=int, help="only the large grid of this many runs")
    ap.add_argument("--keep-runs", type=int, help="only --keep all against --keep metrics, "
                                                   "on a compiled sweep of this many runs")
    ap.add_argument("--before", help="with --large or --keep-runs: another checkout of "
                                     "blocksim to compare")
    args = ap.parse_args()
    if args.large:
        return large(args.large, args.before)
    if args.keep_runs:
        return keep(args.keep_runs, args.before)
    tol = {"simulation.rtol": args.rtol, "simulation.atol": args.rtol / 100}
    sweep_tol = {"rtol": args.rtol, "atol": args.rtol / 100}
    n = args.runs
    rows = []
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")
    with tempfile.TemporaryDirectory() as folder:
        mc = sweep_file(folder, MONTE_CARLO, runs=n, **sweep_tol)
        one, wall1, runs1, steady1 = timed_sweep(mc, 1)
        over1, sim1 = overhead_ms(one, runs1)
        rows.append(("sweep, 1 worker (in-process)", n, wall1, runs1))
        two, wall2, runs2, steady2 = timed_sweep(mc, 2)
        rows.append(("sweep, 2 workers (local Dask)", n, wall2, runs2))
        same = [r["max_err"] for r in one.rows] == [r["max_err"] for r in two.rows]
        gains = sweep_file(folder, GAINS, n=max(1, n // 20), **sweep_tol)
        g, _, gruns, _ = timed_sweep(gains, 1)
        over_gains, sim_gains = overhead_ms(g, gruns)
    seeds = one.column("robots.p560p.seed")
    swept = one.column("max_err")
    loop_wall, loop_values = plain_loop(seeds[:args.loop_runs], tol)
    rows.append(("plain loop over blocksim.run", args.loop_runs, loop_wall, loop_wall))
    agreement = [f"plain loop = sweep: {loop_values == swept[:args.loop_runs]}"]
    try:
        peer_wall, peer_values = bdsim_loop(seeds[:args.peer_runs], tol)
        rows.append(("bdsim + rtb in a loop", args.peer_runs, peer_wall, peer_wall))
        rel = np.max(np.abs(np.array(peer_values) / swept[:args.peer_runs] - 1))
        agreement.append(f"bdsim's max error / the sweep's - 1: at most {rel:.1e}")
    except ImportError as e:
        print(f"bdsim row skipped: {e}")

    base = runs1 / n
    print(f"\nMonte Carlo of demo3 (perturbed controller model, RK45 rtol {args.rtol:g}): "
          f"{sim1:.0f} ms of simulation per run\n")
    print("| way | runs | wall s | runs only s | ms / run | runs / s | time per run vs sweep (1 worker) |")
    print("|---|---|---|---|---|---|---|")
    for label, count, wall, runs in rows:
        per = runs / count
        print(f"| {label} | {count} | {wall:.2f} | {runs:.2f} | {1e3 * per:.1f} | "
              f"{count / runs:.2f} | {per / base:.2f} |")
    print(f"\nspeed-up 2 workers / 1 worker: {steady2 / steady1:.2f} in steady state (second half "
          f"of the runs: {steady1:.2f} -> {steady2:.2f} runs/s), {runs1 / runs2:.2f} for all the "
          f"runs, {wall1 / wall2:.2f} with the cluster's start-up ({wall2 - runs2:.1f} s); "
          f"tables identical: {same}")
    print(f"per-run overhead beyond the simulation, 1 worker: {over1:.2f} ms with a perturbed robot "
          f"built per run, {over_gains:.2f} ms for gains only ({sim_gains:.0f} ms simulated per run)")
    ex, ex1 = two.meta["execution"], one.meta["execution"]
    print(f"2 workers: {ex['compiles']} full compiles, {ex['reparameterised']} given new values; "
          f"worker occupancy {ex['run_s'] / (2 * runs2):.2f} (time inside runs / (2 x the runs' "
          "wall time): 1 means the cluster never left a worker waiting)")
    print(f"processor time per run: {1e3 * ex1['cpu_s'] / n:.1f} ms in-process, "
          f"{1e3 * ex['cpu_s'] / n:.1f} ms on a worker (the difference: the cluster's own threads "
          "in the worker processes)")
    print("same Monte Carlo (the same seeds, the same perturbed robots): " + "; ".join(agreement))
    for label, (fresh, kept) in preparation().items():
        print(f"a model per run, {label}: load + compile {fresh:.2f} ms, new values "
              f"{kept:.2f} ms ({fresh / kept:.1f}x)")


if __name__ == "__main__":
    main()
