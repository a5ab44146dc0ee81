"""What drawing a diagram and writing a run's report cost (`blocksim draw`, report.html).

    python benchmarks/draw_report.py [--repeat 5] [--demos demo1 demo3 ...]

Table 1, every diagram in diagrams/: blocks and wires, the layout and the SVG / PNG
rendering in one process (median of --repeat, after a first call that loads the fonts), and
the whole `blocksim draw FILE -o x.svg` command (process start included) beside `blocksim
check FILE`, which loads and compiles the same diagram without drawing it.

Table 2, demo runs with plots: the run (simulation, figures, animation, drawing, report),
what the report adds to it (drawing diagram.svg + building report.html; measured on their
own after the run, median of --repeat), and the report's size; the animation is a GIF
(ffmpeg hidden from PATH) and, when ffmpeg is installed, also an MP4.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import blocksim  # noqa: E402
from blocksim.draw import render as draw
from blocksim.report.run_report import write_drawing, write_run_report  # noqa: E402
from peers import median_time  # noqa: E402

DEMOS = ("demo1", "demo2", "demo3", "demo4", "demo5", "demo6", "planar7r")


def draw_table(repeat):
    print("| diagram | blocks | wires | layout (ms) | SVG (ms, with layout) | PNG (ms, with layout) "
          "| `blocksim draw` (s) | `blocksim check` (s) |")
    print("|---|---|---|---|---|---|---|---|")
    draw.to_bytes(blocksim.load(ROOT / "diagrams" / "msd.yaml"), "svg")  # fonts, backends
    for path in sorted((ROOT / "diagrams").glob("*.yaml")):
        model = blocksim.load(path)
        layout = median_time(lambda: draw.lay_out(model), repeat)
        svg = median_time(lambda: draw.to_bytes(model, "svg"), repeat)
        png = median_time(lambda: draw.to_bytes(model, "png"), repeat)
        with tempfile.TemporaryDirectory() as tmp:
            cli, check = (median_time(lambda: subprocess.run(
                [sys.executable, "-m", "blocksim", *args], check=True, capture_output=True,
                env={**os.environ, "PYTHONPATH": str(ROOT)}), max(1, repeat // 2))
                for args in (("draw", str(path), "-o", f"{tmp}/x.svg"), ("check", str(path))))
        print(f"| {path.stem} | {len(model.blocks)} | {len(model.spec.written_wires)} | "
              f"{1e3 * layout:.0f} | {1e3 * svg:.0f} | {1e3 * png:.0f} | {cli:.2f} | {check:.2f} |")


def report_row(name, repeat, animation):
    env_path = os.environ["PATH"]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / name
        if animation == "GIF":
            os.environ["PATH"] = tmp  # no ffmpeg: plot_robot writes a GIF
        try:
            model = blocksim.load(ROOT / "diagrams" / f"{name}.yaml")
            t = time.perf_counter()
            blocksim.execute(model, out=out, plots=True)
            run = time.perf_counter() - t
        finally:
            os.environ["PATH"] = env_path
        drawing = median_time(lambda: write_drawing(out, model), repeat)
        report = median_time(lambda: write_run_report(out), repeat)
        size = (out / "report.html").stat().st_size
        files = sorted(p.suffix for p in out.iterdir() if p.suffix in (".gif", ".mp4"))
    added = drawing + report
    print(f"| {name} | {animation if files else '-'} | {run:.2f} | {1e3 * drawing:.0f} | "
          f"{1e3 * report:.0f} | {added:.2f} | {100 * added / run:.0f} % | {size / 1e6:.2f} |")


def report_table(demos, repeat):
    print("| demo | animation | run with plots (s) | drawing (ms) | report.html (ms) | "
          "report adds (s) | of the run | report size (MB) |")
    print("|---|---|---|---|---|---|---|---|")
    import shutil
    for name in demos:
        report_row(name, repeat, "GIF")
        if shutil.which("ffmpeg") and name in ("demo1", "demo6"):
            report_row(name, repeat, "MP4")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--demos", nargs="*", default=list(DEMOS))
    args = p.parse_args()
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}\n")
    draw_table(args.repeat)
    print()
    report_table(args.demos, args.repeat)


if __name__ == "__main__":
    main()
