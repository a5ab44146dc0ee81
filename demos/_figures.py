"""Shared set-up for the demo figure scripts: paths, the Agg backend, saving."""
import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIAGRAMS = ROOT / "diagrams"
sys.path.insert(0, str(ROOT))


def parse_args(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "figures",
                   help="directory for the figure (default: demos/figures)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a diagram value, as blocksim run --set")
    return p.parse_args()


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
