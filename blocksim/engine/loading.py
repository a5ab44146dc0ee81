"""A diagram file to a compiled Model: `load`, shared by the Python API, the report and the
batch runs (re-exported as `blocksim.load`)."""
from __future__ import annotations

import os

from ..language.diagram import load_diagram
from ..util.gcpause import without_gc
from .compiler import compile_diagram


def override_items(overrides):
    """Overrides as a list of "path=value" texts or (path, value) pairs, from a dict, a list or
    one text alone (not its letters); TypeError for anything else."""
    if overrides is None:
        return []
    if isinstance(overrides, str):
        return [overrides]
    if isinstance(overrides, dict):
        return list(overrides.items())
    if isinstance(overrides, (list, tuple)):
        return list(overrides)
    raise TypeError("overrides= takes a dict {'simulation.stop': 2} or a list of "
                    f"'path=value' strings, got {type(overrides).__name__}")


def diagram_file(path, who):
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{who}() takes a diagram file (a str or pathlib.Path)"
                        + (" or a Model from blocksim.load()" if who == "run" else "")
                        + f", got {type(path).__name__}")
    return path


@without_gc
def load(path, overrides=None, *, library=None):
    """Load, validate and compile a diagram file. `overrides` is a dict of dotted paths to
    values ({"simulation.stop": 2}) or a list of "path=value" strings (as the CLI's --set).
    Raises DiagramError / DiagramErrors listing every problem. The Model keeps what compiled
    it, so that `model.set(path, value)` writes new values into it."""
    spec = load_diagram(diagram_file(path, "load"), override_items(overrides), via="overrides")
    return compile_diagram(spec, library)
