"""Time series as CSV: a header row `t, name1, ...`, then one row per time.

A signal of shape () is one column named after it; a vector `q` of 3 elements the columns
`q[0], q[1], q[2]`; a matrix `M` the columns `M[0,0], M[0,1], ...` (row-major). Values are
written with Python's shortest round-trip repr, so reading a file back gives the same floats.
Used by `blocksim run --csv` (results.csv), and by the to_file and from_file blocks.
"""
from __future__ import annotations

import csv
import io
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np

from ..language.expr import MAX_ELEMENTS
from ..util.atomic import atomic_path

_INDICES = re.compile(r"\s*\d+(?:\s*,\s*\d+)*\s*")  # inside the brackets of `M[0, 2]`
MAX_INDICES = 31  # numpy arrays have at most 32 dimensions (numpy 1.x), one of them the rows


def column_names(name, shape):
    """Header names of the columns of a signal `name` of the given shape."""
    if not shape:
        return [name]
    return [f"{name}[{','.join(map(str, index))}]" for index in np.ndindex(*shape)]


def write_csv(path, t, data):
    """Write t (N,) and the signals {name: array (N, *shape)} to `path`, atomically."""
    with atomic_path(path) as tmp:
        csv_to(tmp, t, data)


def table(t, data):
    """(header, values (N, columns)): t (N,) and the signals {name: array (N, *shape)} as
    one table, a column per signal element, named as the CSV header names them."""
    t = np.asarray(t, dtype=float)
    header = ["t"]
    columns = [t.reshape(-1, 1)]
    for name, values in data.items():
        values = np.asarray(values, dtype=float)
        header += column_names(name, values.shape[1:])
        columns.append(values.reshape(len(t), -1))
    return header, np.hstack(columns)


def csv_to(path, t, data):
    """Write t (N,) and the signals {name: array (N, *shape)} to the file `path`."""
    header, values = table(t, data)
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    for row in values.tolist():
        writer.writerow([repr(v) for v in row])
    Path(path).write_text(text.getvalue())


def read_csv(path):
    """(header names, values (N, columns), the file's line of each row) of a CSV file with a
    header row and numbers below.
    Raises ValueError naming the file's line for a ragged row, a cell that is not a number or
    one longer than the csv module reads (csv.field_size_limit()); blank lines are skipped."""
    with open(path, newline="") as fh:
        rows = _Rows(csv.reader(fh))
        header = next(rows, None)
        if header is None:
            raise ValueError("the file is empty (expected a header row: t, name1, ...)")
        header = [h.strip() for h in header]
        twice = sorted(name for name, n in Counter(header).items() if n > 1)
        if twice:
            raise ValueError(f"line 1: column name(s) {', '.join(map(repr, twice))} appear "
                             f"more than once")
        table, lines = _numbers(rows, len(header), "columns", comments=False)
    return header, table, lines


def read_numbers(path):
    """(values (rows, columns), the file's line of each row) of a CSV file of numbers only
    (a table: no header), every row as long as the first; blank lines and lines starting
    with # are skipped. Raises ValueError naming the line, as read_csv."""
    with open(path, newline="") as fh:
        return _numbers(_Rows(csv.reader(fh)), None, "values in the first row", comments=True)


def _numbers(rows, width, what, comments):
    """The remaining rows of a csv reader as floats (rows, width), and their lines; `width`
    None: the first row's length; `comments`: skip rows starting with #."""
    table, lines = [], []
    for row in rows:
        line = rows.line_num
        if not row or all(not cell.strip() for cell in row) or (comments and row[0].lstrip().startswith("#")):
            continue
        lines.append(line)
        width = len(row) if width is None else width
        if len(row) != width:
            raise ValueError(f"line {line}: {len(row)} values for {width} {what}")
        try:
            table.append([float(cell) for cell in row])
        except ValueError:
            bad = next(c for c in row if not _is_number(c))
            raise ValueError(f"line {line}: not a number: {bad.strip()!r}") from None
    return np.array(table, dtype=float).reshape(len(table), width or 0), lines


class _Rows:
    """A csv reader whose one failure, a field over the size limit, is a ValueError naming
    the line (csv.Error would be a traceback)."""

    def __init__(self, reader):
        self.reader = reader

    @property
    def line_num(self):
        return self.reader.line_num

    def __iter__(self):
        return self

    def __next__(self):
        try:
            return next(self.reader)
        except csv.Error as e:
            raise ValueError(f"line {self.reader.line_num}: a value of more than "
                             f"{csv.field_size_limit():,} characters ({e})") from None


def _is_number(cell):
    try:
        float(cell)
    except ValueError:
        return False
    return True


def group_columns(header):
    """{signal name: (column indices, shape)} of a header of distinct names, in order:
    `q[0], q[1]` form the vector q (2,), `M[i,j]` a matrix; a plain name is a scalar. Columns
    whose indices do not fill a whole array stay separate scalars under their own names.
    ValueError for an index no signal can have (`_element`)."""
    groups = {}  # base name -> {index: column}, in order of first appearance
    for k, name in enumerate(header):
        base, index = _element(name)
        groups.setdefault(base, {})[index] = k
    out = {}
    for base, columns in groups.items():
        ndim = len(next(iter(columns)))
        shape = tuple(max(i[d] for i in columns if len(i) == ndim) + 1 for d in range(ndim))
        # whole only if the columns are as many as the array's elements (checked first: an
        # index such as q[99999999999] must not make a 10^11-element list)
        if math.prod(shape) == len(columns) and sorted(columns) == list(np.ndindex(*shape)):
            out[base] = ([columns[i] for i in np.ndindex(*shape)], shape)
        else:
            out.update((header[k], ([k], ())) for k in columns.values())
    return out


def _element(name):
    """(base, index) of an element's column name (`q[1]`: ('q', (1,)); `M[0,2]`), (name, ())
    of a plain one. ValueError for an index of an array no signal can be: more than
    MAX_INDICES indices, or beyond expr.MAX_ELEMENTS elements (`q[99999999999]`, a mistake;
    checked on the digits before any is converted: int() refuses 4,300 of them)."""
    text = name.strip()
    i = text.find("[")  # found, not matched by one expression: linear in a 131,072-character name
    if i < 0 or not text.endswith("]") or "]" in text[:i] or \
            not _INDICES.fullmatch(text, i + 1, len(text) - 1):
        return name, ()
    digits = [d.strip().lstrip("0") or "0" for d in text[i + 1:-1].split(",")]
    shown = name if len(name) <= 60 else name[:57] + "..."
    if len(digits) > MAX_INDICES:
        raise ValueError(f"line 1: column {shown!r} has {len(digits)} indices, more than the "
                         f"{MAX_INDICES} an array can have")
    elements = 1  # of the smallest array holding this element
    for d in digits:
        elements *= int(d) + 1 if len(d) <= len(str(MAX_ELEMENTS)) else MAX_ELEMENTS + 1
        if elements > MAX_ELEMENTS:
            raise ValueError(f"line 1: column {shown!r} is an element of an array of more "
                             f"than {MAX_ELEMENTS:,} elements, the most a signal can have")
    return text[:i].strip(), tuple(map(int, digits))
