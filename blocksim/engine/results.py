"""Run results: the `Result` object and the run directory (results.npz, meta.json, plots).

Every file is written atomically (temporary name, then rename). `results.npz` is written
with the zip container directly so that record names such as `file`, which clash with
`numpy.savez` keywords, work.
"""
from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import platform
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

from ..util.atomic import atomic_path, atomic_paths, check_writable_dir
from ..errors import DiagramError, OutputError
from ..block import FinalRun
from .csvio import table


# the run directory's report and drawing (blocksim/report.py writes them)
REPORT = "report.html"
DRAWING = "diagram.svg"
# every file of a run directory that the run itself writes (blocks' files must not be one)
RUN_FILES = ("results.npz", "results.csv", "meta.json", REPORT, DRAWING)


class Result:
    """Recorded time `t`, one array per `record:` entry (`result["q"]`, rows are times), and
    `meta` (meta.json's content). `keys()` names the signals; `table()` is everything as one
    2-D array with a named column per element (`q[0]`, `M[0,1]`, as results.csv);
    `to_dataframe()` the same as a pandas DataFrame indexed by t (pandas is optional).
    `events_t`, `events_block`: the times of the hybrid blocks' events and the index of the
    block in `meta["event_blocks"]` (empty arrays when there were none). `sinks`: what each
    recording block (a scope, an xy graph) was given, block name -> (t, [an array per
    input]): the points its figure plots (with figures, the solver's dense output too)."""

    def __init__(self, t, data, meta, messages=(), events=None, sinks=None):
        self.t = t
        self.data = data
        self.meta = meta
        self.messages = list(messages)
        self.sinks = sinks or {}
        times, blocks, _ = events if events is not None else ((), (), [])
        self.events_t = np.asarray(times, dtype=float)
        self.events_block = np.asarray(blocks, dtype=np.int64)

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

    def table(self):
        """(columns, values): the column names ['t', 'x', 'q[0]', ..., 'M[0,0]', ...] and the
        values (rows, columns), a column per element of every recorded signal, row-major, as
        results.csv has them."""
        return table(self.t, self.data)

    def to_dataframe(self):
        """The table as a pandas DataFrame indexed by t (needs pandas, not a dependency of
        blocksim: `pip install pandas`)."""
        try:
            import pandas
        except ImportError:
            raise ImportError("Result.to_dataframe needs pandas (pip install pandas); "
                              "Result.table() gives the same columns as numpy arrays") from None
        columns, values = self.table()
        return pandas.DataFrame(values[:, 1:], columns=columns[1:],
                                index=pandas.Index(values[:, 0], name="t"))

    def __repr__(self):
        state = "complete" if self.complete else "incomplete"
        return f"<Result {self.meta['name']}: {len(self.t)} rows, {list(self.data)}, {state}>"


def write_npz(path, t, data):
    """results.npz (atomically): `t` and one array per entry of `data`."""
    with atomic_path(path) as tmp:
        npz_to(tmp, t, data)


def npz_to(path, t, data):
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, arr in (("t", t), *data.items()):
            arr = np.asarray(arr)
            kind = np.int64 if arr.dtype.kind in "iu" else float  # event indices stay integers
            with zf.open(f"{name}.npy", "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, arr.astype(kind, copy=False), allow_pickle=False)


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
def data_files(out, names):
    """Yield {name: temporary path} for the run's data files (results.npz, meta.json, ...) in
    `out`; they replace the files of those names together when the block ends. A failure
    to write (a full disk) removes them, leaves the directory's earlier results as they
    were, and raises OutputError."""
    try:
        with atomic_paths(*(Path(out) / name for name in names)) as paths:
            yield dict(zip(names, paths))
    except OSError as e:
        raise OutputError(f"cannot write the results to '{out}': {e.strerror or e}; "
                          "results written there before are unchanged") from None


@functools.lru_cache(maxsize=1)
def _base_versions():
    """The interpreter's, numpy's and blocksim's versions (read once)."""
    from .. import __version__
    return {"python": platform.python_version(), "numpy": np.__version__,
            "blocksim": __version__}


_OPTIONAL = ("scipy", "numba", "matplotlib", "networkx")  # libraries a run may load


def versions():
    """Versions of the interpreter, numpy, blocksim and of the optional libraries this run
    actually loaded (scipy for the stiff solvers, numba for the robot kernels, matplotlib for
    plots), read from the loaded modules: no package metadata is parsed."""
    out = dict(_base_versions())
    for name in _OPTIONAL:
        module = sys.modules.get(name)
        if module is not None:
            out[name] = getattr(module, "__version__", "unknown")
    return out


def installed_versions():
    """`versions` with every optional library installed, read from its package metadata
    (nothing imported): a sweep's, the same whatever this process imported before (its runs
    load what they need, maybe in other processes)."""
    return {**_base_versions(), **dict(_optional_installed())}


@functools.lru_cache(maxsize=None)
def _optional_installed():
    """((name, version)) of the optional libraries installed, read once per process (the
    package metadata takes some 7 ms to read: a 1,000-value grid sweep's runs cost 30 ms)."""
    from importlib import metadata
    out = []
    for name in _OPTIONAL:
        try:
            out.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            pass
    return tuple(out)


def finalize_sinks(model, t, sink_data, out_dir, plots, complete, progress=None,
                   messages=None, reports=None, mp4=False, times=None, error=None):
    """Let recording blocks draw, print and report from what they recorded (their own time
    rows: with figures, dense-output points and two rows at each event, the values before and
    after it); returns (messages, reports), the lists given (filled as the blocks finish, so
    an interrupted drawing leaves what was done) or new ones. A failing block does not lose
    the results (written before) and is reported as a message. `progress(fraction, block
    name)`, when given, follows the drawing (blocks that take long, animations, report their
    own progress through `FinalRun.progress`). `mp4`: animations also as MP4. `times`, when
    given, receives each block's drawing time in seconds (block name -> s). `error`: what
    ended a failed run."""
    messages = [] if messages is None else messages
    reports = {} if reports is None else reports
    n = len(model.sinks)
    for k, (block, _) in enumerate(model.sinks):
        ts, inputs, rows = sink_data.get(block.name, (t, [], None))
        run = FinalRun(t=ts, inputs=inputs, rows=rows,
                       out_dir=Path(out_dir) if out_dir is not None else None,
                       plots=plots, complete=complete, messages=messages, reports=reports,
                       mp4=mp4, error=error)
        if progress is not None:
            run.progress = lambda f, k=k, name=block.name: progress((k + f) / n, name)
        started = time.perf_counter()
        try:
            block.finalize(run)
        except Exception as e:  # a plot failing must not lose the run
            messages.append(f"warning: block '{block.name}' could not finish its output: {e}")
        if times is not None:
            times[block.name] = time.perf_counter() - started
        if progress is not None:
            progress((k + 1) / n, block.name)
    return messages, reports


def run_files(out_dir):
    """(the files the previous run in out_dir wrote, from its meta.json; a snapshot of the
    directory) before a run writes there."""
    previous = set()
    try:
        listed = json.loads((out_dir / "meta.json").read_text()).get("files", [])
        previous = {f for f in listed if isinstance(f, str) and _plain_name(f)}
    except (OSError, ValueError, AttributeError):
        pass  # no previous run, or not one of ours: nothing to clean up
    return previous, _snapshot(out_dir)


def written_since(out_dir, before):
    """Names of the files in out_dir created or replaced since the snapshot `before`
    (every file is written to a temporary name and renamed, so a rewrite is a new file)."""
    now = _snapshot(out_dir)
    return {name for name, stamp in now.items() if before.get(name) != stamp}


def remove_stale(out_dir, names):
    """Remove files a previous run wrote that this run did not write again."""
    for name in names:
        path = out_dir / name
        if _plain_name(name) and path.is_file() and not path.is_symlink():
            path.unlink()


def _snapshot(out_dir):
    try:
        return {e.name: (e.inode(), e.stat().st_mtime_ns, e.stat().st_size)
                for e in os.scandir(out_dir) if e.is_file(follow_symlinks=False)}
    except OSError:
        return {}


def _plain_name(name):
    """A file name directly in the run directory: no separators, no '..', not hidden."""
    return bool(name) and "/" not in name and "\\" not in name and not name.startswith(".")
