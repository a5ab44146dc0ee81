"""A sweep's table of results: one row per run, kept as columns (a few numbers per run).

Columns, in order: `run`, each varied path (its value in that run), `status` (`ok`,
`failed` or `interrupted`: not run, or stopped by Ctrl-C), `message`, `wall_s` (the run's
time on its worker, compile and metrics included), `steps` (accepted solver steps), then
each metric. The varied values come from the plan's runs (made when asked for); the results
are arrays, so a table of a million runs holds tens of megabytes, and `table.rows` makes
each row's dict when it is read.

`TableFile` writes summary.csv as the sweep goes: rows are appended in run order, each once,
as soon as every run before it is final, and the rest at the end; nothing is rewritten, so
a sweep that stops (a signal, a full disk) has written every row it will write within a
moment. `read_rows(path)` reads summary.csv back (for --resume and the report).
"""
from __future__ import annotations

import csv
import json
import os
from collections.abc import Sequence

import numpy as np

from ..util.atomic import atomic_path

STATUSES = ("interrupted", "ok", "failed")  # status codes 0, 1, 2
NOT_RUN, OK, FAILED = 0, 1, 2
NOT_RUN_MESSAGE = "not run"
CHUNK = 10_000  # rows formatted at once


class SweepTable:
    """The rows of a sweep (`table.rows`: a sequence of dicts keyed by `table.columns`, by
    run index): `runs` (a plan's Runs, or any sequence of `spec.Run`) give the varied values,
    `set(i, row)` takes run i's results.

    `table.meta` is the content of sweep.json; `table.column(name)` one column as a list;
    `to_csv(path)` writes summary.csv; `to_pandas()` a DataFrame, when pandas is installed."""

    def __init__(self, runs, varied, metrics, meta):
        n = len(runs)
        self.runs = runs
        self.varied = list(varied)
        self.metrics = list(metrics)
        self.columns = ["run", *self.varied, "status", "message", "wall_s", "steps",
                        *self.metrics]
        self.meta = meta
        self.status = np.zeros(n, np.int8)
        self.messages = {}  # run -> message, where it is not the status's usual one
        self.wall_s = np.full(n, np.nan)
        self.steps = np.full(n, -1, np.int64)  # -1: none
        self.values = {m: np.full(n, np.nan) for m in self.metrics}
        self.rows = _Rows(self)

    def __len__(self):
        return len(self.status)

    def __repr__(self):
        c = self.counts()
        return (f"<SweepTable {self.meta.get('name')}: {len(self)} runs, {c['ok']} ok, "
                f"{c['failed']} failed, {c['interrupted']} interrupted>")

    def column(self, name, index=None):
        """Column `name` as a list, of every run or of the runs `index` (an index array)."""
        index = np.arange(len(self)) if index is None else np.asarray(index)
        status = self.status[index]
        if name == "run":
            return index.tolist()
        if name == "status":
            return [STATUSES[s] for s in status.tolist()]
        if name == "message":
            return [self.messages.get(i, _usual_message(s))
                    for i, s in zip(index.tolist(), status.tolist())]
        if name == "wall_s":
            return [None if v != v else v for v in self.wall_s[index].tolist()]
        if name == "steps":
            return [None if v < 0 else v for v in self.steps[index].tolist()]
        if name in self.values:
            return [v if s == OK else None
                    for v, s in zip(self.values[name][index].tolist(), status.tolist())]
        column = getattr(self.runs, "column", None)
        if column is not None:
            return column(name, index)
        return [self.runs[i].values[name] for i in index.tolist()]

    def counts(self):
        n = np.bincount(self.status, minlength=3)
        return {"runs": len(self), "ok": int(n[OK]), "failed": int(n[FAILED]),
                "interrupted": int(n[NOT_RUN])}

    def set(self, index, row):
        """Take a run's results: a row dict with status, message, wall_s, steps, metrics.
        The status is stored last: a set cut short (Ctrl-C) leaves the row not run."""
        status = STATUSES.index(row["status"])
        message = row.get("message") or ""
        self.wall_s[index] = np.nan if row.get("wall_s") is None else row["wall_s"]
        self.steps[index] = -1 if row.get("steps") is None else row["steps"]
        for m in self.metrics:
            v = row.get(m)
            self.values[m][index] = np.nan if v is None else v
        if message != _usual_message(status):
            self.messages[index] = message
        else:
            self.messages.pop(index, None)
        self.status[index] = status

    def set_ok(self, index, wall_s, steps, metrics):
        """Take the results of runs `index` (an int array) that ended ok: as `set` of each
        (a status ok, no message), a column at once."""
        self.wall_s[index] = wall_s
        self.steps[index] = steps
        for m in self.metrics:
            self.values[m][index] = metrics[m]
        if self.messages:
            for i in index.tolist():
                self.messages.pop(i, None)
        self.status[index] = OK

    def row(self, i):
        return {c: self.column(c, [i])[0] for c in self.columns}

    def csv_lines(self, start, end):
        """summary.csv's rows start..end-1 as text lines, made a column at a time (most
        cells of a large table are a few distinct texts: rows not run, grid levels)."""
        index = np.arange(start, end)
        columns = [self._texts(c, index) for c in self.columns]
        return "".join(",".join(cells) + "\n" for cells in zip(*columns))

    def _texts(self, name, index):
        """Column `name` of the runs `index` as summary.csv's cells (quoted where needed)."""
        status = self.status[index]
        if name == "run":
            return list(map(str, index.tolist()))
        if name == "status" or (name == "message" and not self.messages):
            texts = STATUSES if name == "status" else [_usual_message(k) for k in range(3)]
            return [texts[k] for k in status.tolist()]
        empty = {"wall_s": lambda: np.isnan(self.wall_s[index]).all(),
                 "steps": lambda: (self.steps[index] < 0).all()}.get(
            name, lambda: name in self.values and not (status == OK).any())
        if empty():  # e.g. rows not run: no results
            return [""] * len(index)
        if name in self.varied and hasattr(self.runs, "column_texts"):
            return self.runs.column_texts(name, index, _csv_cell)
        return [_csv_cell(v) for v in self.column(name, index)]

    def level_codes(self, key):
        """(the values of a grid or zip path, each run's index into them), or None (another
        path, or runs that are a plain list)."""
        codes = getattr(self.runs, "level_codes", None)
        return codes(key) if codes is not None else None

    def to_csv(self, path):
        """summary.csv, written whole and atomically (TableFile writes it as a sweep goes)."""
        with atomic_path(path) as tmp, TableFile(tmp, self) as f:
            f.finish()

    def to_pandas(self):
        """The table as a pandas DataFrame, a column per column of summary.csv (needs
        pandas, not a dependency of blocksim)."""
        try:
            import pandas
        except ImportError:
            raise ImportError("SweepTable.to_pandas needs pandas (pip install pandas); "
                              "table.column(name) gives each column as a list") from None
        return pandas.DataFrame({c: self.column(c) for c in self.columns}, columns=self.columns)


class _Rows(Sequence):
    """table.rows: row i's dict, made when asked for."""

    def __init__(self, table):
        self.table = table

    def __len__(self):
        return len(self.table)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"row {i} of {n}")
        return self.table.row(i % n)


def _usual_message(status):
    return NOT_RUN_MESSAGE if status == NOT_RUN else ""


class TableFile:
    """summary.csv written as the sweep goes: the header first, then each row once, in run
    order, once it and every row before it are final (`done`); `finish()` writes the rest
    as they stand. Appending costs the new rows only, whatever the table's size.

    `mark` = (bytes, rows) of what the file is known to hold whole. A write stopped part-way
    or just after it ended (a full disk, or Ctrl-C / SIGTERM arriving between the write and
    the mark) leaves bytes past the mark: the next write cuts them and writes those rows
    again, so no row is written twice or in half."""

    def __init__(self, path, table, done=None):
        self.path = path
        self.table = table
        self.done = np.zeros(len(table), bool) if done is None else done
        self.mark = (0, 0)  # (bytes of whole rows in the file, the first row not in it)
        self.file = open(path, "wb", buffering=0)
        self._append(",".join(map(_quoted, table.columns)) + "\n", 0)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def advance(self):
        """Append the final rows that follow the ones written (to the file itself: a
        reader, or a sweep killed outright, has them)."""
        n = len(self.done)
        end = start = self.mark[1]
        while end < n and self.done[end]:
            end += 1
        if end > start:
            self._write(end)

    def finish(self):
        """Append every row not written yet, final or not."""
        self._write(len(self.done))

    def _write(self, end):
        self._cut()  # after an interrupted write the sweep may still report rows
        for start in range(self.mark[1], end, CHUNK):
            stop = min(start + CHUNK, end)
            self._append(self.table.csv_lines(start, stop), stop)

    def _append(self, text, rows):
        """Write `text` (the rows up to `rows`) whole, then mark it written; a write that
        fails (a full disk) is cut back to the mark, so the file never ends in half a row."""
        encoded = text.encode()
        data = memoryview(encoded)
        try:
            while data:
                data = data[self.file.write(data):]
        except OSError:
            self._cut()
            raise
        self.mark = (self.mark[0] + len(encoded), rows)  # one store: whole or not at all

    def _cut(self):
        """Drop what follows the mark (a write that did not finish, or was not marked)."""
        size = self.mark[0]
        if self.file.tell() != size:
            os.ftruncate(self.file.fileno(), size)
            self.file.seek(size)

    def close(self):
        if not self.file.closed:
            self.file.close()


def modes_text(execution):
    """How a sweep's runs were simulated, from sweep.json's execution.modes: 'accelerated',
    'normal', '3 accelerated, 1 normal'; None when no run was simulated."""
    modes = {k: n for k, n in sorted((execution or {}).get("modes", {}).items()) if n}
    if len(modes) > 1:
        return ", ".join(f"{n} {k}" for k, n in modes.items())
    return next(iter(modes), None)


def read_rows(path):
    """The rows of a summary.csv, one at a time, as (line, {column: text}); reading stops
    at a row that cannot be read (a damaged file gives the rows before it), a missing file
    gives none. (Numbers are written as Python's repr: float() gives them back exactly.)"""
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            for row in reader:
                yield reader.line_num, row
    except (OSError, UnicodeDecodeError, csv.Error):
        return


def cell_value(text):
    """A cell of summary.csv as written: None when empty, a number as the number, anything
    else as its text."""
    if text is None or text == "":
        return None
    v = number(text)
    return text if v is None else v


def number(text):
    """A cell of summary.csv as the number it shows, or None (empty, or not a number)."""
    if text is None or text == "":
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return None


def _csv_cell(v):
    """A value as a cell of summary.csv: floats in full (repr), lists as JSON, quoted as the
    csv module quotes (when the text holds a comma, a quote or a line break)."""
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (list, tuple, dict)):
        return _quoted(json.dumps(v))
    return _quoted(str(v))


def _quoted(text):
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text
