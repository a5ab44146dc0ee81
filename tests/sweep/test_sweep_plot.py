"""The metric figures of a sweep, drawn from hand-made tables (no runs)."""
import numpy as np
import pytest

from blocksim.batch.plot import MAX_BINS, plot_histogram, plot_metric
from blocksim.batch.spec import Run
from blocksim.batch.table import SweepTable


def made(rows, varied, metrics):
    """A table of the given rows: their varied values and results."""
    runs = [Run(i, {k: row[k] for k in varied}, []) for i, row in enumerate(rows)]
    table = SweepTable(runs, varied, ["m"], {"sweep": {"metrics": metrics}})
    for i, row in enumerate(rows):
        table.set(i, row)
    return table


def table_of(values, key="k"):
    """One row per (varied value, metric value or None for a failed run)."""
    rows = [{key: k, "status": "ok" if m is not None else "failed", "m": m} for k, m in values]
    return made(rows, [key], {"m": "max(x)"})


def test_a_failed_run_is_marked_on_the_x_axis_not_at_a_metric_value():
    ax = plot_metric(table_of([(1.0, 5.0), (2.0, None), (3.0, 7.0)]), "m", "k")
    (cross,) = [line for line in ax.get_lines() if line.get_label() == "failed runs"]
    ax.get_ylim()  # settle the autoscaled limits
    shown = cross.get_transform().transform(np.column_stack(cross.get_data()))
    assert shown[0, 1] == pytest.approx(ax.transAxes.transform((0, 0))[1])  # the bottom edge
    assert ax.transData.inverted().transform(shown)[0, 0] == pytest.approx(2.0)


def test_histogram_of_nearly_equal_values_and_one_outlier_has_a_bounded_number_of_bins():
    # quartiles 1e-12 apart and one run at 5: Freedman-Diaconis alone asks for ~1e13 bins
    values = [1.0] * 50 + [1.0 + 1e-12] * 49 + [5.0]
    ax = plot_histogram(table_of([(0, m) for m in values]), "m")
    (bars,) = ax.containers
    assert len(bars) == MAX_BINS and sum(b.get_height() for b in bars) == len(values)


def _marked_x(ax, label):
    """The x positions of the markers labelled `label` (none: [])."""
    return [x for line in ax.get_lines() if line.get_label() == label
            for x in line.get_xdata()]


def test_a_successful_run_with_a_nan_metric_is_not_drawn_as_a_failed_run():
    # k = 2 failed; k = 3 succeeded but its metric is NaN (e.g. log of a negative value)
    table = table_of([(1.0, 5.0), (2.0, None), (3.0, float("nan")), (4.0, 7.0)])
    ax = plot_metric(table, "m", "k")
    assert _marked_x(ax, "failed runs") == [2.0]
    assert _marked_x(ax, "not finite (ok runs)") == [3.0]


def test_heat_map_cells_say_failed_or_not_finite():
    rows = [{"a": 1, "b": 1, "status": "ok", "m": 1.0},
            {"a": 1, "b": 2, "status": "failed", "m": None},
            {"a": 2, "b": 1, "status": "ok", "m": float("inf")},
            {"a": 2, "b": 2, "status": "ok", "m": 4.0}]
    table = made(rows, ["a", "b"], {})
    ax = plot_metric(table, "m", "a", "b")
    cells = {(round(t.get_position()[0] - 0.5), round(t.get_position()[1] - 0.5)): t.get_text()
             for t in ax.texts}
    # x: a's level index, y: b's
    assert cells == {(0, 0): "1", (0, 1): "failed", (1, 0): "not finite", (1, 1): "4"}


def test_histogram_counts_runs_in_whole_numbers():
    # three runs: matplotlib's default ticks for counts 0..2 are 0, 0.25, 0.5, ... (a run
    # axis with ticks at 2.5 runs, issue 23's "also noticed")
    ax = plot_histogram(table_of([(0, 1.0), (1, 2.0), (2, 2.1)]), "m")
    low, high = ax.get_ylim()
    ticks = [y for y in ax.get_yticks() if low <= y <= high]
    assert len(ticks) >= 2 and all(float(y).is_integer() for y in ticks)


@pytest.mark.parametrize("count, shown", [(3, [0, 1, 2]), (10, list(range(10))),
                                          (12, [0, 2, 4, 6, 8, 10]),
                                          (1000, list(range(0, 1000, 100)))])
def test_an_axis_of_many_levels_labels_equally_spaced_ones(count, shown):
    # 12 levels labelled at 10 rounded positions left gaps of one and two cells
    from blocksim.batch.plot import MAX_TICKS, _shown_levels
    assert _shown_levels(count).tolist() == shown and len(shown) <= MAX_TICKS
