"""A sweep's table of results: one row per run, and its files (summary.csv, sweep.json).

Columns, in order: `run`, each varied path (its value in that run), `status` (`ok`,
`failed` or `interrupted`: not run, or stopped by Ctrl-C), `message`, `wall_s` (the run's
time on its worker, compile and metrics included), `steps` (accepted solver steps), then
each metric. `sweep.json` holds the resolved sweep and everything needed to read the table
without the CSV: the rows themselves (plain JSON, floats exact), the varied paths and their
kinds, the metrics, seeds, counts, versions and `complete`.
"""
from __future__ import annotations

import csv
import io
import json
import math

from ..util.atomic import atomic_path
from ..engine.results import write_json

STATUSES = ("ok", "failed", "interrupted")


class SweepTable:
    """The rows of a sweep (`table.rows`: dicts keyed by `table.columns`, sorted by run).

    `table.meta` is the content of sweep.json without the rows; `table.column(name)` one
    column as a list; `to_csv(path)` writes summary.csv; `to_pandas()` a DataFrame, when
    pandas is installed."""

    def __init__(self, columns, rows, meta):
        self.columns = list(columns)
        self.rows = rows
        self.meta = meta

    def __len__(self):
        return len(self.rows)

    def __repr__(self):
        c = self.counts()
        return (f"<SweepTable {self.meta.get('name')}: {len(self)} runs, {c['ok']} ok, "
                f"{c['failed']} failed, {c['interrupted']} interrupted>")

    def column(self, name):
        return [row[name] for row in self.rows]

    def counts(self):
        out = {"runs": len(self.rows), **{s: 0 for s in STATUSES}}
        for row in self.rows:
            out[row["status"]] += 1
        return out

    def set(self, index, values):
        self.rows[index].update(values)

    def to_csv(self, path):
        with atomic_path(path) as tmp:
            tmp.write_text(self.csv_text())

    def csv_text(self):
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.columns)
        for row in self.rows:
            w.writerow([_cell(row.get(c)) for c in self.columns])
        return buf.getvalue()

    def to_json(self, path):
        write_json(path, {**self.meta, "counts": self.counts(), "columns": self.columns,
                          "rows": [{c: _json_value(row.get(c)) for c in self.columns}
                                   for row in self.rows]})

    def to_pandas(self):
        import pandas as pd
        return pd.DataFrame(self.rows, columns=self.columns)


def new_table(plan, runs, meta):
    """All rows `interrupted` (not run yet), with each run's varied values."""
    metrics = list(plan.metrics)
    columns = ["run", *plan.varied, "status", "message", "wall_s", "steps", *metrics]
    rows = [{"run": r.index, **r.values, "status": "interrupted", "message": "not run",
             "wall_s": None, "steps": None, **{m: None for m in metrics}} for r in runs]
    return SweepTable(columns, rows, meta)


def read_previous(path):
    """The content of a previous sweep.json, or None when there is none."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}


def _cell(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(v)
    return str(v)


def _json_value(v):
    """NaN and infinities as strings, which JSON does not have."""
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    return v
