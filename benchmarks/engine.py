"""Engine overhead per derivative evaluation: chains of gain blocks, in µs per block; and
the time to load and compile a diagram against its size (must grow linearly).

    python benchmarks/engine.py

A chain integrator -> gain_1 -> ... -> gain_N -> (back to the integrator) is compiled and
its derivative function timed (median of repeats). The integrator is one block; the rest is
pure framework plus one small numpy operation per gain. Prints a table. The second table is
CPU time (best of 3) to load and to compile chains of 1,000 to 40,000 blocks, per block,
listed in dataflow order and against it (the last gain first).
"""
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import blocksim  # noqa: E402
from blocksim.engine.compiler import compile_diagram  # noqa: E402
from blocksim.language.diagram import load_diagram  # noqa: E402
from blocksim.engine.simulator import Simulation  # noqa: E402


def chain(n, size=1, against=False):
    """The chain's YAML; `against`: the gains listed against the dataflow (the last first)."""
    lines = ["blocksim: 1", "blocks:",
             f"  I: {{type: integrator, x0: {[1.0] * size if size > 1 else 1.0}}}"]
    for k in (reversed(range(n)) if against else range(n)):
        lines.append(f"  G{k}: {{type: gain, K: {-1.0 if k == 0 else 1.0}}}")
    lines.append("wires:")
    lines.append("  - I -> G0")
    for k in range(1, n):
        lines.append(f"  - G{k - 1} -> G{k}")
    lines.append(f"  - G{n - 1} -> I")
    lines.append("simulation: {stop: 1}")
    return "\n".join(lines) + "\n"


def time_f(model, repeats=7, number=2000):
    sim = Simulation(model)
    y = model.x0.copy()
    f = sim.f
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            f(0.5, y)
        runs.append((time.perf_counter() - t0) / number)
    return statistics.median(runs)


def main():
    print(f"{'diagram':<28} {'blocks':>6} {'µs/eval':>10} {'µs/block':>10} {'compile s':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (10, 100, 1000):
            path = Path(tmp) / f"chain{n}.yaml"
            path.write_text(chain(n))
            t0 = time.perf_counter()
            model = blocksim.load(path)
            compile_s = time.perf_counter() - t0
            per_eval = time_f(model, number=max(200, 20000 // n))
            blocks = n + 1
            print(f"{'gain chain, scalar':<28} {blocks:>6} {per_eval * 1e6:>10.1f} "
                  f"{per_eval * 1e6 / blocks:>10.2f} {compile_s:>10.3f}")
    # demo3: the framework's share of a derivative evaluation, robot dynamics subtracted
    demo3 = Path(__file__).resolve().parents[1] / "diagrams" / "demo3.yaml"
    model = blocksim.load(demo3)
    per_eval = time_f(model, number=2000)
    sim = Simulation(model)
    sim.f(0.5, model.x0.copy())
    heavy = [b for b in model.blocks if b.type in ("robot", "rne")]
    calls = [getattr(b, n.calc) for b in heavy for n in model.nodes if n.block is b]
    calls += [b.derivative for b in heavy if b.type == "robot"]
    t0 = time.perf_counter()
    for _ in range(2000):
        for c in calls:
            c(0.5)
    dynamics = (time.perf_counter() - t0) / 2000
    others = sum(1 for n in model.nodes if n.group == "continuous") - len(heavy)
    print(f"{'demo3 (dynamics subtracted)':<28} {others:>6} {per_eval * 1e6:>10.1f} "
          f"{(per_eval - dynamics) * 1e6 / max(others, 1):>10.2f} {'':>10}   "
          f"(dynamics {dynamics * 1e6:.1f} µs of the evaluation)")
    # the floor: one numpy in-place multiply per block, no framework at all
    K, u, y = np.asarray(2.0), np.ones(()), np.empty(())
    t0 = time.perf_counter()
    for _ in range(100000):
        np.multiply(K, u, out=y)
    print(f"{'numpy multiply alone':<28} {'':>6} {'':>10} {(time.perf_counter() - t0) * 10:>10.2f}")
    print()
    scaling()


def scaling():
    """Load and compile CPU time against the number of blocks: linear means a flat µs/block,
    whichever order the blocks are listed in."""
    print(f"{'blocks':>7} {'listed':>8} {'load s':>8} {'compile s':>10} {'total s':>8} "
          f"{'µs/block':>9} {'blocksim check s':>17}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (1000, 10000, 40000):
            for against in (False, True):
                path = Path(tmp) / f"chain{n}{'_against' if against else ''}.yaml"
                path.write_text(chain(n, against=against))
                best = [float("inf")] * 2
                for _ in range(3):
                    t0 = time.process_time()
                    spec = load_diagram(path)
                    t1 = time.process_time()
                    compile_diagram(spec)
                    t2 = time.process_time()
                    best = [min(best[0], t1 - t0), min(best[1], t2 - t1)]
                total = sum(best)
                listed = "against" if against else "in order"
                print(f"{n + 1:>7} {listed:>8} {best[0]:>8.3f} {best[1]:>10.3f} {total:>8.3f} "
                      f"{total / (n + 1) * 1e6:>9.1f} {check_cpu(path):>17.3f}")


def check_cpu(path):
    """CPU seconds of a whole `blocksim check` process (start-up, imports, printing)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "blocksim", "check", str(path)], check=True,
                   stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


if __name__ == "__main__":
    main()
