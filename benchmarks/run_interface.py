"""The run interface (issue 30): what a run with new values costs around the compiled code.

    python benchmarks/run_interface.py [--repeat N] [--grid 1000] [--mc 200] [--before CHECKOUT]

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
  process, preparation included (prepare + run, --keep metrics), per run.
- demo3 Monte Carlo: demo3 with its controller's model perturbed by 10 % and a seed per run
  (--mc runs, benchmarks/sweep.py's at demo3's own tolerances), one worker, processor time
  per run.
With `--before CHECKOUT` (another checkout of blocksim, its robot kernels built) the same
measurements of that checkout, in a process of their own, are shown beside these.
"""
import argparse
import json
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


def sweep_per_run(folder, text, n):
    """(wall ms per run, preparation included; CPU ms per run) of a one-worker sweep."""
    path = Path(folder) / f"sweep_{n}_{abs(hash(text)) % 1000}.yaml"
    path.write_text(text.format(n=n))
    w0, c0 = time.perf_counter(), time.process_time()
    table = prepare(path).run(workers=1, keep="metrics")
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    assert len(table) == n and all(s == "ok" for s in table.column("status")), table
    return 1e3 * wall / n, 1e3 * cpu / n


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
        mc_wall, mc_cpu = sweep_per_run(  # at demo3's own tolerances
            folder, MONTE_CARLO.format(rtol=1e-3, atol=1e-6, runs="{n}"), args.mc)
    return {"execute": total, "inside": inside, "set": set_exec / 1e3, "set_big": big / 1e3,
            "grid": grid_wall,
            "grid_cpu": grid_cpu, "mc": mc_cpu, "mc_wall": mc_wall}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--grid", type=int, default=1000)
    ap.add_argument("--mc", type=int, default=200)
    ap.add_argument("--before", help="another checkout of blocksim, measured too")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.json:
        print(json.dumps(measure(args)))
        return
    before = None
    if args.before:
        out = subprocess.run(
            [sys.executable, __file__, "--json", "--repeat", str(args.repeat), "--grid",
             str(args.grid), "--mc", str(args.mc)], check=True, capture_output=True, text=True,
            env={**os.environ, "BLOCKSIM_BENCH_ROOT": str(Path(args.before).resolve())})
        before = json.loads(out.stdout.strip().splitlines()[-1])
    now = measure(args)
    rows = [("execute", "execute, chain of 10 gains (accelerated)", "us", "243 us", 30),
            ("inside", "  of which inside the compiled run", "us", "27 us", None),
            ("set", "model.set + execute, msd (accelerated)", "ms", "1.78 ms", 0.1),
            ("set_big", "model.set alone, 2,000-gain chain (normal)", "ms", "", None),
            ("grid", f"msd {args.grid:,}-value grid sweep, per run (wall)", "ms",
             "0.96-1.66 ms", 0.05),
            ("grid_cpu", "  the same, CPU per run", "ms", "", None),
            ("mc", f"demo3 {args.mc}-run Monte Carlo, CPU per run", "ms", "6.5 ms", 3)]
    print(f"{'work':<46} {'before':>9} {'now':>9} {'issue 30':>13} {'target':>8} "
          f"{'now/target':>10}")
    for key, work, unit, issue, target in rows:
        fmt = (lambda v: f"{v:.0f} {unit}") if unit == "us" else (lambda v: f"{v:.3f} {unit}")
        was = fmt(before[key]) if before else "-"
        print(f"{work:<46} {was:>9} {fmt(now[key]):>9} {issue:>13} "
              f"{'' if target is None else f'{target:g} {unit}':>8} "
              f"{'' if target is None else f'{now[key] / target:.2f}x':>10}")
    print(f"(demo3 wall per run {now['mc_wall']:.2f} ms; processor times but the grid's "
          "wall, the issue's figures were wall times on an idle machine)")


if __name__ == "__main__":
    main()
