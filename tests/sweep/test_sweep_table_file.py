"""summary.csv as a sweep writes it, when Ctrl-C or SIGTERM lands inside a write: each
row once, whole, in run order. (A SIGTERM that arrived just after a write had reached the
file, before the file's bookkeeping, wrote those rows a second time at the end: the large
interrupted grid of test_sweep_runs.py failed so, once.)"""
import csv
from pathlib import Path

import numpy as np
import pytest

from blocksim.batch.table import SweepTable, TableFile


class _Run:
    def __init__(self, tau):
        self.values = {"tau": tau}


def _table(n):
    table = SweepTable([_Run(0.5 + k) for k in range(n)], ["tau"], ["peak"], {})
    for k in range(n):
        table.set(k, {"status": "ok", "message": "", "wall_s": 0.25, "steps": 10 + k,
                      "peak": k / 8})
    return table


class _Interrupting:
    """A file whose `fail_at`-th write writes `part` of its bytes (all: 1.0) and then
    raises KeyboardInterrupt, as a signal handler would on the way back from write()."""

    def __init__(self, file, fail_at, part):
        self.file, self.fail_at, self.part, self.writes = file, fail_at, part, 0

    def write(self, data):
        self.writes += 1
        if self.writes != self.fail_at:
            return self.file.write(data)
        self.file.write(data[:int(len(data) * self.part)])
        raise KeyboardInterrupt

    def __getattr__(self, name):
        return getattr(self.file, name)


@pytest.mark.parametrize("part", [1.0, 0.5, 0.0])
def test_an_interrupt_inside_a_write_leaves_each_row_once_and_whole(tmp_path, part):
    n = 6
    table = _table(n)
    done = np.zeros(n, bool)
    path = tmp_path / "summary.csv"
    f = TableFile(path, table, done)
    f.file = _Interrupting(f.file, fail_at=2, part=part)  # row 0, then rows 1-2
    done[0] = True
    f.advance()
    done[1:3] = True
    with pytest.raises(KeyboardInterrupt):
        f.advance()
    done[3] = True  # a run that ended is still reported after the interrupt
    f.advance()
    f.finish()  # as the sweep does once stopped: every row, as it stands
    f.close()
    with open(path, newline="") as r:
        rows = list(csv.DictReader(r))
    assert [int(r["run"]) for r in rows] == list(range(n))
    assert [float(r["peak"]) for r in rows] == [k / 8 for k in range(n)]  # set before: ok
    assert [int(r["steps"]) for r in rows] == [10 + k for k in range(n)]


def test_a_set_cut_short_leaves_the_row_not_run():
    # the status is stored last: an interrupt while the metrics are stored does not leave
    # an 'ok' row without its values
    table = SweepTable([_Run(1.0)], ["tau"], ["peak", "final"], {})

    class _Stop(dict):
        def get(self, key, default=None):
            if key == "final":
                raise KeyboardInterrupt
            return super().get(key, default)
    with pytest.raises(KeyboardInterrupt):
        table.set(0, _Stop(status="ok", message="", wall_s=0.1, steps=3, peak=2.0, final=1.0))
    assert table.rows[0]["status"] == "interrupted"
    assert table.rows[0]["peak"] is None


def test_a_row_of_a_large_grid_formats_its_own_levels_alone(tmp_path):
    """summary.csv is written a row at a time while a progress callback sees each run (the
    command line's): a row's cells format the grid levels it takes, not every level of the
    grid (a 40,000-level grid took 15 minutes, its rows formatting 40,000 texts each)."""
    from blocksim.batch.spec import load_plan
    from blocksim.batch.table import _csv_cell
    path = tmp_path / "grid.yaml"
    msd = Path(__file__).resolve().parents[2] / "diagrams" / "msd.yaml"
    path.write_text(f"blocksim-sweep: 1\ndiagram: {msd}\ngrid:\n"
                    "  blocks.Spring.K: linspace(1, 2, 1000)\n  blocks.Damping.K: [0.5, 2]\n")
    runs = load_plan(path, None, None, ()).runs()
    formatted = []

    def text(value):
        formatted.append(value)
        return _csv_cell(value)
    rows = np.array([7, 8, 1999])  # Spring.K levels 3, 4 and 999; Damping.K 1, 0, 1
    assert runs.column_texts("blocks.Spring.K", rows, text) == \
        [_csv_cell(1 + k / 999) for k in (3, 4, 999)]  # linspace's levels by hand
    assert runs.column_texts("blocks.Damping.K", rows, text) == ["2", "0.5", "2"]
    assert len(formatted) == 3 + 2  # each level these rows take, once
