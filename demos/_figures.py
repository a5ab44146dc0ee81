"""Shared set-up for the demo figure scripts: paths, the Agg backend, saving."""
import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIAGRAMS = ROOT / "diagrams"
sys.path.insert(0, str(ROOT))


FIGURES = Path(__file__).resolve().parent / "figures"  # the figures tracked in the repository


def parse_args(description, argv=None):
    """--out DIR (default runs/demos/ under the current directory, like `blocksim run`),
    --update-figures (write into demos/figures/, the tracked copies), --set KEY=VALUE."""
    p = argparse.ArgumentParser(description=description)
    where = p.add_mutually_exclusive_group()
    where.add_argument("--out", type=Path, default=Path("runs") / "demos",
                       help="directory for the figure (default: runs/demos/)")
    where.add_argument("--update-figures", dest="out", action="store_const", const=FIGURES,
                       help="write into demos/figures/, replacing the tracked figures")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a diagram value, as blocksim run --set")
    return p.parse_args(argv)


def pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(fig, out, name):
    out.mkdir(parents=True, exist_ok=True)
    path = out / name
    fig.savefig(path, dpi=90, bbox_inches="tight")
    print(f"wrote {path}")
    return path
