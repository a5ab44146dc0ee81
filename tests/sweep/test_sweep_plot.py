"""The metric figures of a sweep, drawn from hand-made tables (no runs)."""
import numpy as np
import pytest

from blocksim.batch.plot import (MAX_BINS, caption, figure_plan, plot_fraction, plot_histogram,
                                 plot_metric, plot_scatter)
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


def test_a_true_false_metric_is_drawn_as_the_runs_true_and_false():
    # a test (a comparison) was a histogram of 0s and 1s: one or two bars, no pass rate.
    # Runs 0 and 3 true, 1 false, 2 failed: true in 2 of the 3 runs with a value
    table = made([{"k": 1, "status": "ok", "m": 1.0}, {"k": 2, "status": "ok", "m": 0.0},
                  {"k": 3, "status": "failed", "m": None}, {"k": 4, "status": "ok", "m": 1.0}],
                 ["k"], {"m": "max(x) < 2"})
    ax = plot_fraction(table, "m")
    assert "true in 2 of 3 runs, 66.7 %" in ax.get_title()
    widths = [bar.get_width() for bars in ax.containers for bar in bars]
    assert widths == [2, 1, 1]  # true, false, without a value
    assert [t.get_text() for t in ax.texts] == ["false in run 1"]


def test_a_true_false_metric_per_grid_point_is_the_fraction_true():
    rows = [{"g": g, "status": "ok", "m": float(v)}
            for g, values in (("a", (1, 1, 0, 1)), ("b", (0, 0, 0, 1))) for v in values]
    ax = plot_fraction(made(rows, ["g"], {"m": "final(x) > 1"}), "m", by=["g"])
    (bars,) = ax.containers
    assert [b.get_height() for b in bars] == [0.75, 0.25]  # 3 of 4, 1 of 4
    assert [t.get_text() for t in ax.texts] == ["3/4", "1/4"]


def test_a_scatter_puts_each_run_at_its_drawn_value_and_metric():
    table = table_of([(0.5, 5.0), (2.5, None), (1.5, 7.0)])
    ax = plot_scatter(table, "m", "k")
    points = ax.collections[0].get_offsets()
    assert points.tolist() == [[0.5, 5.0], [1.5, 7.0]]
    assert _marked_x(ax, "failed runs") == [2.5]
    test = made([{"k": 0.5, "status": "ok", "m": 1.0}, {"k": 1.5, "status": "ok", "m": 0.0}],
                ["k"], {"m": "max(x) > 1"})
    ax = plot_scatter(test, "m", "k")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["false", "true"]


def test_a_monte_carlo_over_a_grid_has_a_colour_per_grid_point_in_its_scatter():
    # a Monte Carlo at each of two grid points (g = a, b), c drawn: the points of each grid
    # point apart, as the histogram's outlines are (they were one colour, the grid lost)
    # (a grid path labels them without its section: it was the section, 'parameters=a')
    g, c = "parameters.g", "parameters.c"
    rows = [{g: v, c: u, "status": "failed" if m is None else "ok", "m": m}
            for v, u, m in (("a", 0.1, 1.0), ("a", 0.2, 2.0), ("b", 0.3, 3.0), ("b", 0.4, None),
                            ("b", 0.5, 5.0))]
    table = made(rows, [g, c], {"m": "max(x)"})
    ax = plot_scatter(table, "m", c, by=[g])
    assert [(p.get_label(), p.get_offsets().tolist()) for p in ax.collections] == [
        ("g=a", [[0.1, 1.0], [0.2, 2.0]]), ("g=b", [[0.3, 3.0], [0.5, 5.0]])]
    assert len({tuple(p.get_facecolor()[0]) for p in ax.collections}) == 2
    assert _marked_x(ax, "failed runs") == [0.4]
    # the sweep's figure takes the groups from its grid paths
    from blocksim.batch.plot import _scatter_figure
    table.meta["varied"] = [{"key": g, "kind": "grid"}, {"key": c, "kind": "random"}]
    figure = _scatter_figure(table, "m", [c])
    (ax,) = figure.axes
    assert [p.get_label() for p in ax.collections] == ["g=a", "g=b"]
    assert figure.get_suptitle() == "m = max(x) against the drawn value (4 ok, 1 failed)"
    # and the histogram's outlines likewise
    ax = plot_histogram(table, "m", by=[g])
    assert [p.get_label() for p in ax.patches] == ["g=a", "g=b"]


def test_a_monte_carlo_is_drawn_against_each_drawn_value_but_seeds():
    meta = {"varied": [{"key": "blocks.G.K", "kind": "grid"},
                       {"key": "parameters.m", "kind": "random"},
                       {"key": "robots.r.seed", "kind": "random"},
                       {"key": "parameters.c", "kind": "random"}],
            "metrics": ["err", "ok"],
            "sweep": {"samples": 10, "metrics": {"err": "max(abs(e))", "ok": "max(e) < 1"}}}
    assert figure_plan(meta) == [
        ("err", "histogram", ["blocks.G.K"]), ("err", "scatter", ["parameters.m", "parameters.c"]),
        ("ok", "fraction", ["blocks.G.K"]), ("ok", "scatter", ["parameters.m", "parameters.c"])]


@pytest.mark.parametrize("figure, text", [
    ({"metric": "max_th", "kind": "histogram", "paths": []}, "max_th: its values over the runs"),
    ({"metric": "e", "kind": "histogram", "paths": ["blocks.K.K"]},
     "e: its values over the runs, by blocks.K.K"),
    ({"metric": "ok", "kind": "fraction", "paths": []}, "ok: the runs where it is true"),
    ({"metric": "e", "kind": "scatter", "paths": ["parameters.m", "parameters.c"]},
     "e against the drawn values parameters.m, parameters.c"),
    ({"metric": "e", "kind": "line", "paths": ["parameters.tau"]}, "e against parameters.tau"),
    ({"metric": "e", "kind": "heatmap", "paths": ["a.b", "c.d"]},
     "e over a.b (across) and c.d (up)"),
])
def test_every_figure_has_a_whole_caption(figure, text):
    # a Monte Carlo's histogram was captioned "max_th: histogram over " (no grid paths)
    assert caption(figure) == text
