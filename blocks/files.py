"""Signals from and to files: from_file plays a measured time series, to_file writes signals
into the run directory."""
import math
import re
import zipfile
from pathlib import Path

import numpy as np

from blocksim.accel.lowering import computes_nothing
from blocksim.engine import csvio
from blocksim.block import Block, In, Out
from blocksim.params import Param, ParamError
from blocksim.engine.results import write_npz

from .sources import TimeSeries, series


def _columns(value):
    """The `columns` parameter: None, or a list of names."""
    if value is None:
        return None
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not names or \
            not all(isinstance(n, str) and n for n in names):
        raise ParamError("columns", "expected a column name or a list of them")
    return list(names)


def _read_csv(path):
    """({signal name: values (N, *shape)}, the names played by default, the file's line of
    each row) of a CSV file: its columns grouped as blocksim.engine.csvio.group_columns says, and
    each column of a group also by its own name (q[0])."""
    try:
        header, table, lines = csvio.read_csv(path)
        groups = csvio.group_columns(header)
    except ValueError as e:
        raise ParamError("file", f"{path.name}: {e}") from None
    except UnicodeDecodeError:
        raise ParamError("file", f"{path.name}: not a text (CSV) file") from None
    signals = {name: table[:, k] for k, name in enumerate(header)}
    signals.update((name, table[:, cols].reshape((len(table),) + shape))
                   for name, (cols, shape) in groups.items())
    return signals, [name for name in groups if name != "t"], lines


def _read_npz(path):
    """({array name: values}, the names played by default (every array with as many rows as
    t), None) of an NPZ file."""
    arrays = read_npz(path, "file")
    rows = np.shape(arrays.get("t", ()))[:1]
    return arrays, [n for n, v in arrays.items() if n != "t" and v.shape[:1] == rows], None


def read_npz(path, param):
    """{array name: values (float64)} of an NPZ file named by parameter `param`; each
    array's header is checked first (`_check_member`), a problem is a ParamError."""
    try:
        with zipfile.ZipFile(path) as zf:
            for member in zf.infolist():
                if member.filename.endswith(".npy"):
                    _check_member(path, zf, member, param)
        with np.load(path, allow_pickle=False) as data:
            return {name: np.asarray(data[name], dtype=float) for name in data.files}
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        raise ParamError(param, f"{path.name}: not a readable NPZ file ({e})") from None


def _check_member(path, zf, member, param):
    """An array of numbers whose header's shape fits the bytes stored (numpy allocates what
    the header claims before reading: a header claiming 10^13 values was a 73 TiB
    MemoryError; a structured array, a TypeError)."""
    name = member.filename[:-len(".npy")]
    with zf.open(member) as f:
        version = np.lib.format.read_magic(f)
        read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                else np.lib.format.read_array_header_2_0)
        shape, _, dtype = read(f)
        stored = member.file_size - f.tell()
    if dtype.kind not in "biuf":
        raise ParamError(param, f"{path.name}: array '{name}' is not numbers (dtype {dtype})")
    claimed = math.prod(shape) * dtype.itemsize
    if claimed > stored:
        raise ParamError(param, f"{path.name}: array '{name}' claims shape {shape} "
                                 f"({claimed:,} bytes) but holds {stored:,}")


def _check_values(where, name, values):
    """ParamError naming the row (where(k)) of the first value that is NaN or infinite."""
    bad = ~np.isfinite(values.reshape(values.shape[0], -1)).all(axis=1)
    if bad.any():
        k = int(np.argmax(bad))
        raise ParamError("file", f"{where(k)}: {name} is not a finite number (NaN or inf)")


class FromFile(TimeSeries):
    """y(t) = a measured signal read from a file, interpolated in time; end values held.

    file: a CSV file with a header row `t, name1, name2, ...` (one row per time point; the
    columns `q[0], q[1]` form a vector q, `M[0,0], M[0,1], ...` a matrix, as `blocksim run
    --csv` writes them), or an NPZ file with a 1-D array `t` and arrays of N rows (a
    results.npz works). The path is relative to the diagram file.
    columns: the signals to play (names of columns, column groups such as q, single elements
    such as q[1], or arrays), default every one but t (in an NPZ: every array with N rows).
    One signal keeps its shape; several are flattened and concatenated in the order given.
    method: linear (straight lines between the points) or previous (held steps); the solver
    lands on every time point, as for `table`.
    Output: y. t must be strictly increasing; no value may be NaN or infinite, nor a time step
    or (linear) slope beyond the largest number; an element's index, at most a signal's size
    (10^7 elements, 31 indices): the file is read and checked when the diagram is loaded.
    """

    type = "from_file"
    params = (
        Param("file", "path", doc="CSV (header t, name1, ...) or NPZ (t and arrays) file"),
        Param("columns", "data", None, "signals to play (default: all but t)"),
        Param("method", "choice", "linear", "interpolation", choices=("linear", "previous")),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        path = Path(self.p.file)
        if not path.is_file():
            raise ParamError("file", f"no such file: {path}")
        npz = path.suffix.lower() == ".npz"
        if not npz and path.suffix.lower() != ".csv":
            raise ParamError("file", f"expected a .csv or .npz file, got {path.name}")
        signals, default, lines = _read_npz(path) if npz else _read_csv(path)
        where = (lambda k: f"{path.name} line {lines[k]}") if lines else \
            (lambda k: f"{path.name} row {k}")
        t = signals.pop("t", None)
        if t is None:
            raise ParamError("file", f"{path.name} has no time column/array 't'")
        if t.ndim != 1 or t.size == 0:
            raise ParamError("file", f"{path.name}: t must be a non-empty vector, got shape "
                                     f"{t.shape}")
        _check_values(where, "t", t)
        with np.errstate(over="ignore"):  # a step beyond the largest number: _series says so
            late = np.flatnonzero(np.diff(t) <= 0)
        if late.size:
            k = int(late[0]) + 1
            raise ParamError("file", f"{where(k)}: t must be strictly increasing, got "
                                     f"{float(t[k])!r} after {float(t[k - 1])!r}")
        wanted = _columns(self.p.columns)
        if wanted is None:
            wanted = default
            if not wanted:
                raise ParamError("file", f"{path.name} has no signal besides t")
        pieces = []
        for column in wanted:
            if column not in signals:
                raise ParamError("columns", f"{path.name} has no column {column!r} (it has: "
                                            f"{', '.join(default) or 'only t'})")
            values = signals[column]
            if values.ndim == 0 or values.shape[0] != t.size:
                raise ParamError("columns", f"{path.name}: {column!r} has shape {values.shape},"
                                            f" expected {t.size} rows (one per time)")
            _check_values(where, column, values)
            pieces.append(values)
        values = pieces[0] if len(pieces) == 1 else \
            np.hstack([v.reshape(t.size, -1) for v in pieces])
        self._read = series(t, values, "file", "file", where,
                            self.p.method == "linear")
        self._series()

    def _arrays(self, p):
        return self._read  # the file's, read once (its parameters are structure)

    def ports(self):
        return [], [Out("y", shape=self._row, feedthrough=())]

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._bind_series(True)


_FILE_NAME = re.compile(r"[^/\\\x00]+\.(csv|npz)\Z", re.IGNORECASE)


class ToFile(Block):
    """Writes its inputs at the recorded times into the run directory.

    file: a file name only (no directory, no `..`), ending in .csv or .npz, neither one of the
    run's own files (results.npz, results.csv) nor another to_file's. CSV: a header row
    `t, u1, ...` (a vector input u1 gives u1[0], u1[1], ...; a matrix u1[0,0], ...) and one row
    per recorded time (the rows of results.npz), values in full precision. NPZ: arrays t (N,)
    and u1..uN (N, *shape). Inputs: u1..uN (N = inputs), any shapes. Nothing is written when
    the run has no output directory (blocksim.run without out=); an incomplete run writes
    what was recorded.
    """

    type = "to_file"
    records_inputs = True
    lower = computes_nothing
    params = (
        Param("file", "string", doc="file name (.csv or .npz) in the run directory"),
        Param("inputs", "int", 1, "number of inputs", minimum=1),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        name = self.p.file
        if ".." in name or not _FILE_NAME.match(name) or name != name.strip():
            raise ParamError("file", f"expected a file name ending in .csv or .npz, without a "
                                     f"directory (the file goes into the run directory), got "
                                     f"{name!r}")

    def ports(self):
        return [In(f"u{i + 1}") for i in range(self.p.inputs)], []

    def files(self):
        return (self.p.file,)

    def finalize(self, run):
        if run.out_dir is None:
            return
        t, inputs = run.recorded()  # the run's rows, not the extra points drawn in figures
        data = {f"u{i + 1}": np.asarray(v, dtype=float) for i, v in enumerate(inputs)}
        path = Path(run.out_dir) / self.p.file
        if path.suffix.lower() == ".csv":
            csvio.write_csv(path, t, data)
        else:
            write_npz(path, t, data)

