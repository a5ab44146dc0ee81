"""Run results: the `Result` object and the run directory (results.npz, meta.json, plots).

Every file is written atomically (temporary name, then rename). `results.npz` is written
with the zip container directly so that record names such as `file`, which clash with
`numpy.savez` keywords, work.
"""
from __future__ import annotations

import contextlib
import json
import math
import platform
import sys
import zipfile
from pathlib import Path

import numpy as np

from .atomic import atomic_path, atomic_paths, check_writable_dir
from .errors import DiagramError, OutputError
from .block import FinalRun


class Result:
    """Recorded time `t`, one array per `record:` entry (`result["q"]`), and `meta`."""

    def __init__(self, t, data, meta, messages=()):
        self.t = t
        self.data = data
        self.meta = meta
        self.messages = list(messages)

    @property
    def complete(self):
        return self.meta["complete"]

    def __getitem__(self, name):
        if name == "t":
            return self.t
        return self.data[name]

    def __contains__(self, name):
        return name == "t" or name in self.data

    def keys(self):
        return ["t", *self.data]

    def __repr__(self):
        state = "complete" if self.complete else "incomplete"
        return f"<Result {self.meta['name']}: {len(self.t)} rows, {list(self.data)}, {state}>"


def write_npz(path, t, data):
    """results.npz (atomically): `t` and one float64 array per entry of `data`."""
    with atomic_path(path) as tmp:
        npz_to(tmp, t, data)


def npz_to(path, t, data):
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, arr in (("t", t), *data.items()):
            with zf.open(f"{name}.npy", "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, np.asarray(arr, dtype=float), allow_pickle=False)


def write_json(path, obj):
    """A JSON file (atomically), see `json_to`."""
    with atomic_path(path) as tmp:
        json_to(tmp, obj)


def json_to(path, obj):
    """Strict JSON (RFC 8259 has no NaN or Infinity): non-finite numbers are written as the
    strings "nan", "inf", "-inf", which float() reads back."""
    text = json.dumps(_finite(obj), indent=2, default=_jsonable, allow_nan=False)
    Path(path).write_text(text + "\n")


def _finite(x):
    """`x` with every non-finite float (also inside lists, dicts, arrays) as a string."""
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    if isinstance(x, np.ndarray):
        return _finite(x.tolist())
    if isinstance(x, (float, np.floating)) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def _jsonable(x):
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    return str(x)


def check_out_dir(out):
    """Before simulating: the run directory exists or can be made, and files can be written
    in it (a long run must not be lost at its end). DiagramError (exit 2) otherwise."""
    try:
        check_writable_dir(out)
    except OSError as e:
        where = f" ('{e.filename}')" if e.filename and str(e.filename) != str(out) else ""
        raise DiagramError(f"cannot write the results to '{out}': "
                           f"{e.strerror or e}{where}", file="--out",
                           hint="choose a directory you can write to (--out DIR)") from None


@contextlib.contextmanager
def run_files(out):
    """Yield temporary paths for (results.npz, meta.json) in `out`; both appear together
    when the block ends. A failure to write (a full disk) removes them, leaves the
    directory's earlier results as they were, and raises OutputError."""
    try:
        with atomic_paths(Path(out) / "results.npz", Path(out) / "meta.json") as paths:
            yield paths
    except OSError as e:
        raise OutputError(f"cannot write the results to '{out}': {e.strerror or e}; "
                          "results written there before are unchanged") from None


def versions():
    """Versions of the interpreter, numpy, blocksim and of the optional libraries this run
    actually loaded (scipy for the stiff solvers, numba for the robot kernels, matplotlib for
    plots), read from the loaded modules: no package metadata is parsed."""
    from . import __version__
    out = {"python": platform.python_version(), "numpy": np.__version__, "blocksim": __version__}
    for name in ("scipy", "numba", "matplotlib", "networkx"):
        module = sys.modules.get(name)
        if module is not None:
            out[name] = getattr(module, "__version__", "unknown")
    return out


def finalize_sinks(model, t, sink_data, out_dir, plots, complete):
    """Let recording blocks draw, print and report from the recording; returns (messages,
    reports). A failing block does not lose the results (written before) and is reported as
    a message."""
    messages, reports = [], {}
    for block, _ in model.sinks:
        run = FinalRun(t=t, inputs=sink_data.get(block.name, []),
                       out_dir=Path(out_dir) if out_dir is not None else None,
                       plots=plots, complete=complete, messages=messages, reports=reports)
        try:
            block.finalize(run)
        except Exception as e:  # a plot failing must not lose the run
            messages.append(f"warning: block '{block.name}' could not finish its output: {e}")
    return messages, reports
