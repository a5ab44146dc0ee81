"""What the figures of a run cost: every shipped demo run with plots, figures timed against
the simulation, by part, and against another checkout.

    python benchmarks/figures.py [--baseline DIR] [--repeat 3] [--demos demo1 demo6 ...]

Each run is a fresh process (`blocksim.execute(load(demo), out=..., plots=True)` after
importing blocksim, as `blocksim run` does), so matplotlib's import is paid as a user pays
it. Per demo: the simulation's wall time, the figures' wall time and processor time
(everything after the simulation: this process and its children, e.g. ffmpeg, the
results' files and report.html included), the largest parts
(meta.json's `figure_times`) and the animation frames written. Columns:

- GIF: the default (animations as GIF; `--mp4` not given);
- GIF + MP4: `blocksim run --mp4` with ffmpeg on the PATH;
- with `--baseline DIR` (e.g. `git worktree add /tmp/old REV`): that checkout's default
  (GIF, and MP4 whenever ffmpeg is installed) and its GIF alone (ffmpeg hidden), the runs of
  both checkouts interleaved so that both see the same machine.

Wall times depend on the machine's load (printed first); processor times much less: they
are what an idle machine would take, one core each.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMOS = ("demo1", "demo2", "demo3", "demo4", "demo5", "demo6", "planar7r")


def worker(tree, demo, mp4):
    """Run `demo` of checkout `tree` with plots; print its numbers as JSON."""
    import resource
    import time

    sys.path.insert(0, tree)
    import blocksim
    from blocksim import api

    model = blocksim.load(Path(tree) / "diagrams" / f"{demo}.yaml")

    def cpu():
        own = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    simulating = {}
    simulate = api.simulate

    def timed(*args, **kwargs):  # the simulation's processor time, to leave it out
        start = cpu()
        try:
            return simulate(*args, **kwargs)
        finally:
            simulating["cpu"] = cpu() - start

    api.simulate = timed
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / demo
        before = cpu()
        options = {"mp4": True} if mp4 else {}
        result = blocksim.execute(model, out=out, plots=True, **options)
        used = cpu() - before - simulating["cpu"]
        meta = result.meta
        frames = 0
        for gif in out.glob("*.gif"):
            from PIL import Image
            with Image.open(gif) as image:
                frames += image.n_frames
        print(json.dumps({"sim": meta["wall_time"], "figures": meta["figures_time"],
                          "cpu": used, "frames": frames,
                          "mp4": len(list(out.glob("*.mp4"))),
                          "parts": meta.get("figure_times", {})}))


def measure(tree, demo, mp4=False, ffmpeg=True):
    env = dict(os.environ, PYTHONPATH=str(tree))
    if not ffmpeg:
        env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep)
                                      if not (Path(p) / "ffmpeg").exists())
    cmd = [sys.executable, __file__, "--worker", str(tree), demo] + (["--mp4"] if mp4 else [])
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if done.returncode:
        raise RuntimeError(f"{demo} in {tree} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def median(runs, key):
    return statistics.median(r[key] for r in runs)


def parts(runs, shown=3):
    """The largest parts of the drawing (medians), as 'plot 0.61, Scope 0.21'."""
    names = runs[0]["parts"]
    values = {n: statistics.median(r["parts"].get(n, 0.0) for r in runs) for n in names}
    top = sorted(values.items(), key=lambda item: -item[1])[:shown]
    return ", ".join(f"{n} {v:.2f}" for n, v in top)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--baseline", help="another checkout to compare with")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--demos", nargs="*", default=list(DEMOS))
    p.add_argument("--worker", nargs=2, metavar=("TREE", "DEMO"), help=argparse.SUPPRESS)
    p.add_argument("--mp4", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(*args.worker, args.mp4)
    has_ffmpeg = shutil.which("ffmpeg") is not None
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; ffmpeg "
          f"{'installed' if has_ffmpeg else 'not installed'}; median of {args.repeat} runs; "
          f"figures: wall s / processor s\n")
    columns = [("GIF", ROOT, {})] + ([("GIF + MP4", ROOT, {"mp4": True})] if has_ffmpeg else [])
    if args.baseline:
        columns += [("baseline", Path(args.baseline).resolve(), {}),
                    ("baseline, GIF", Path(args.baseline).resolve(), {"ffmpeg": False})]
    head = " | ".join(f"{name} (s)" for name, _, _ in columns)
    print(f"| demo | simulation (s) | frames | {head} | largest parts of GIF (s) |")
    print("|---|---|---|" + "---|" * len(columns) + "---|")
    for demo in args.demos:
        runs = {name: [] for name, _, _ in columns}
        for _ in range(args.repeat):
            for name, tree, options in columns:
                runs[name].append(measure(tree, demo, **options))
        cells = " | ".join(f"{median(runs[name], 'figures'):.2f} / {median(runs[name], 'cpu'):.2f}"
                           for name, _, _ in columns)
        first = runs["GIF"]
        print(f"| {demo} | {median(first, 'sim'):.2f} | {int(median(first, 'frames'))} | "
              f"{cells} | {parts(first)} |")


if __name__ == "__main__":
    main()
