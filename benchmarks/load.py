"""Loading big diagrams (issue 30): a 2,000-block chain of first-order lags (666 feedback
loops, benchmarks/lag_chain.py), a 2,000-block chain of gains, and the lag chain's cached
accelerated start, before (a commit extracted with `git archive`) and now.

    python benchmarks/load.py                      # before = e326fdd, the commit before
    python benchmarks/load.py --before REV --repeat 5
    python benchmarks/load.py --quick              # this tree only

Every figure is measured in a new process running one tree (PYTHONPATH), as CPU seconds
(the machine is shared: wall times of the same work vary by 2x). `load` is
`blocksim.load(path)` after the imports, best of --repeat (of one for the lag chain before:
it took 9 s). The cached accelerated start is what a second process running the diagram
with `mode: accelerated` spends before its first step when the compiled code is in the cache:
load, generate the C source and hash it for the cache key, load the library and bind the
run; a first process compiled it into a cache of the benchmark's own. With bdsim installed
(the `bench` extra) the same lag chain is built and compiled there (`bd.compile()`).
"""
import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "e326fdd"  # the last commit before shape inference went over loops once (issue 30)
CLOCK = time.process_time
LAGS = 666  # 3 * 666 + 1 = 1,999 blocks
GAINS = 1998  # the integrator and 1,998 gains: 1,999 blocks


def worker(kind, path, repeat):
    """One measurement in this process, with the blocksim on PYTHONPATH: a JSON line."""
    import blocksim
    if kind == "load":
        best = float("inf")
        for _ in range(repeat):
            t0 = CLOCK()
            blocksim.load(path)
            best = min(best, CLOCK() - t0)
        out = {"load": best}
    else:  # the start of cached compiled code, by part
        from blocksim.accel.build import build
        from blocksim.accel.mode import decide
        from blocksim.accel.runner import CompiledRun
        t0 = CLOCK()
        model = blocksim.load(path)
        t1 = CLOCK()
        decision = decide(model)  # the lowerings, the generated source and its key
        t2 = CLOCK()
        built = build(decision.generated.source, decision.key)
        CompiledRun(built.library, model, decision.generated)
        t3 = CLOCK()
        out = {"load": t1 - t0, "generate": t2 - t1, "library": t3 - t2, "start": t3 - t0,
               "cached": built.cached}
    out["blocksim"] = blocksim.__file__
    print(json.dumps(out))


def measure(tree, kind, path, repeat=1, cache=None):
    from hybrid import tree_env
    env = tree_env(tree)
    if cache is not None:
        env["BLOCKSIM_CACHE_DIR"] = str(cache)
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", kind,
                           str(path), str(repeat)], env=env, cwd=tree, check=True,
                          capture_output=True, text=True)
    out = json.loads(done.stdout.splitlines()[-1])
    if not Path(out["blocksim"]).resolve().is_relative_to(Path(tree).resolve()):
        raise RuntimeError(f"the worker for {tree} imported blocksim from {out['blocksim']}")
    return out


def cached_start(tree, path, cache, repeat):
    """The best of `repeat` cached starts (by total), after a first run that compiles."""
    measure(tree, "start", path, cache=cache)
    runs = [measure(tree, "start", path, cache=cache) for _ in range(repeat)]
    if not all(r["cached"] for r in runs):
        raise RuntimeError("the compiled code was not found in the cache")
    return min(runs, key=lambda r: r["start"])


def bdsim_lag_chain(n):
    """CPU seconds to build the lag chain in bdsim and compile it, or None without bdsim."""
    try:
        import bdsim
    except ImportError:
        return None
    t0 = CLOCK()
    argv, sys.argv[1:] = sys.argv[1:], []  # BDSim reads the command line
    try:
        sim = bdsim.BDSim(toolboxes=False, graphics=False, animation=False, progress=False)
    finally:
        sys.argv[1:] = argv
    bd = sim.blockdiagram()
    prev = bd.STEP(T=0)
    for _ in range(n):
        s, i, g = bd.SUM("+-"), bd.INTEGRATOR(x0=0.0), bd.GAIN(2.0)
        bd.connect(prev, s[0])
        bd.connect(g, s[1])
        bd.connect(s, i)
        bd.connect(i, g)
        prev = i
    with contextlib.redirect_stdout(io.StringIO()):
        bd.compile(report=False)
    return CLOCK() - t0


def main():
    # here, not at the top: a worker must import no blocksim but its tree's
    from engine import chain
    from hybrid import old_tree
    from lag_chain import lag_chain
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE, help="the commit to compare against")
    parser.add_argument("--quick", action="store_true", help="this tree only")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    trees = {"now": ROOT}
    if not args.quick:
        sha, trees["before"] = old_tree(args.before)
    sides = [s for s in ("before", "now") if s in trees]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        lag, lag_acc, gains = tmp / "lag.yaml", tmp / "lag_acc.yaml", tmp / "gains.yaml"
        lag.write_text(lag_chain(LAGS))
        lag_acc.write_text(lag_chain(LAGS, mode="accelerated"))
        gains.write_text(chain(GAINS))
        figures, parts = {}, {}
        for side in sides:
            tree = trees[side]
            slow = side == "before"
            figures[("lag", side)] = measure(tree, "load", lag, 1 if slow else args.repeat)["load"]
            figures[("gain", side)] = measure(tree, "load", gains, args.repeat)["load"]
            parts[side] = cached_start(tree, lag_acc, tmp / f"cache-{side}",
                                       1 if slow else args.repeat)
            figures[("start", side)] = parts[side]["start"]
    theirs = bdsim_lag_chain(LAGS)
    trees_text = ", ".join("before: " + sha if s == "before" else "now: this tree" for s in sides)
    print(f"\n## Loading 2,000-block diagrams, CPU s ({trees_text})\n")
    head = "| work | " + " | ".join(sides) + (" | before / now" if len(sides) == 2 else "") \
        + " | target |"
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    rows = [("lag chain (666 loops): load", "lag", "<= 0.3 s"),
            ("gain chain: load", "gain", "-"),
            ("lag chain: cached accelerated start", "start", "<= 0.5 s")]
    for label, key, target in rows:
        cells = [f"{figures[(key, s)]:.3f}" for s in sides]
        if len(sides) == 2:
            cells.append(f"{figures[(key, 'before')] / figures[(key, 'now')]:.0f}x")
        print(f"| {label} | " + " | ".join(cells) + f" | {target} |")
    if theirs is not None:
        print(f"| lag chain in bdsim: build + compile | {theirs:.3f} (bdsim) |"
              + " |" * (len(sides) + (len(sides) == 2)))
    print("\nThe cached accelerated start by part (CPU s):\n")
    print("| tree | load | lowerings + C source + key | library loaded, run bound | total |")
    print("|---|---|---|---|---|")
    for side in sides:
        p = parts[side]
        print(f"| {side} | {p['load']:.3f} | {p['generate']:.3f} | {p['library']:.3f} | "
              f"{p['start']:.3f} |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        sys.path.insert(0, os.getcwd())  # the tree under test, before this checkout
        worker(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        main()
