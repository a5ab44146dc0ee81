"""Time series as CSV: a header row `t, name1, ...`, then one row per time.

A signal of shape () is one column named after it; a vector `q` of 3 elements the columns
`q[0], q[1], q[2]`; a matrix `M` the columns `M[0,0], M[0,1], ...` (row-major). Values are
written with Python's shortest round-trip repr, so reading a file back gives the same floats.
Used by `blocksim run --csv` (results.csv), and by the to_file and from_file blocks.
"""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import numpy as np

from .atomic import atomic_path

_ELEMENT = re.compile(r"\s*([^\[\]]*?)\s*\[\s*(\d+(?:\s*,\s*\d+)*)\s*\]\s*\Z")


def column_names(name, shape):
    """Header names of the columns of a signal `name` of the given shape."""
    if not shape:
        return [name]
    return [f"{name}[{','.join(map(str, index))}]" for index in np.ndindex(*shape)]


def write_csv(path, t, data):
    """Write t (N,) and the signals {name: array (N, *shape)} to `path`, atomically."""
    with atomic_path(path) as tmp:
        csv_to(tmp, t, data)


def csv_to(path, t, data):
    """Write t (N,) and the signals {name: array (N, *shape)} to the file `path`."""
    t = np.asarray(t, dtype=float)
    header = ["t"]
    columns = [t.reshape(-1, 1)]
    for name, values in data.items():
        values = np.asarray(values, dtype=float)
        header += column_names(name, values.shape[1:])
        columns.append(values.reshape(len(t), -1))
    table = np.hstack(columns) if columns else np.zeros((len(t), 0))
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    for row in table.tolist():
        writer.writerow([repr(v) for v in row])
    Path(path).write_text(text.getvalue())


def read_csv(path):
    """(header names, values (N, columns)) of a CSV file with a header row and numbers below.
    Raises ValueError naming the file's line for a ragged row or a cell that is not a number;
    blank lines are skipped."""
    with open(path, newline="") as fh:
        rows = csv.reader(fh)
        header = next(rows, None)
        if header is None:
            raise ValueError("the file is empty (expected a header row: t, name1, ...)")
        header = [h.strip() for h in header]
        table = []
        for row in rows:
            line = rows.line_num
            if not row or all(not cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                raise ValueError(f"line {line}: {len(row)} values for {len(header)} columns")
            try:
                table.append([float(cell) for cell in row])
            except ValueError:
                bad = next(c for c in row if not _is_number(c))
                raise ValueError(f"line {line}: not a number: {bad.strip()!r}") from None
    return header, np.array(table, dtype=float).reshape(len(table), len(header))


def _is_number(cell):
    try:
        float(cell)
    except ValueError:
        return False
    return True


def group_columns(header):
    """{signal name: (column indices, shape)} of a header, in order: `q[0], q[1]` form the
    vector q (2,), `M[i,j]` a matrix; a plain name is a scalar. A group whose indices do not
    fill a full array is kept as separate columns."""
    groups, order = {}, []
    for k, name in enumerate(header):
        m = _ELEMENT.match(name)
        base, index = (m.group(1), tuple(int(i) for i in m.group(2).split(","))) if m else (name, None)
        if base not in groups:
            groups[base] = []
            order.append(base)
        groups[base].append((index, k))
    out = {}
    for base in order:
        items = groups[base]
        if len(items) == 1 and items[0][0] is None:
            out[base] = ([items[0][1]], ())
            continue
        indices = [i for i, _ in items]
        ndims = {len(i) for i in indices if i is not None}
        if None in indices or len(ndims) != 1:
            for index, k in items:
                out[header[k]] = ([k], ())
            continue
        shape = tuple(max(i[d] for i in indices) + 1 for d in range(ndims.pop()))
        if sorted(indices) != list(np.ndindex(*shape)):
            for index, k in items:
                out[header[k]] = ([k], ())
            continue
        by_index = dict(items)
        out[base] = ([by_index[i] for i in np.ndindex(*shape)], shape)
    return out
