"""Figures of a sweep: each metric against one or two varied values, or its distribution.

- one varied value (a grid or zip path): a line plot of the metric against it;
- two grid paths: a heat map over the grid, one cell per run, each cell labelled;
- more varied values: one line plot per path, the mean over the other paths with the
  min-max band;
- Monte Carlo (`samples:`): a histogram of the metric over the successful runs, one outline
  per grid point when there are a few, and a scatter of the metric against each drawn
  value (a panel per `random:` path; seeds, which only name a stream, left out; a colour
  per grid point when there are a few).
A true/false metric (a test: `metrics.true_false`) is drawn as the fraction of runs where it
holds: a line plot's mean over other paths and a heat map's cells are that fraction; a Monte
Carlo's histogram becomes a bar of the runs true and false (per grid point: the fraction
true), its scatter puts each run at false or true.
Failed runs are drawn as gaps (grey cells marked "failed"; red crosses on the x axis) and
counted in the title; a successful run whose metric is NaN or infinite is a gap marked
apart ("not finite"; grey triangles on the x axis).

`plot_metric`, `plot_histogram`, `plot_fraction`, `plot_scatter` draw into a given
matplotlib Axes (for reports); `write_figures(table, out_dir)` writes the default figures of
every metric as PNG files and returns their descriptions (file, metric, kind, paths) for
sweep.json; `caption(description)` says what one shows.
"""
from __future__ import annotations

import re

import numpy as np

from ..language import expr
from ..util.atomic import atomic_path
from .metrics import true_false
from .table import FAILED, OK

MAX_BINS = 60  # of a histogram
MAX_TICKS = 10  # labelled levels on an axis of many


def numeric(value):
    """A varied value as a float, or None when it is not one number ("pi/4" counts)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            v = expr.evaluate(value, {})
        except expr.ExprError:
            return None
        return float(v) if np.size(v) == 1 else None
    return None


def _label(value):
    x = numeric(value)
    return f"{x:g}" if x is not None and not isinstance(value, str) else str(value)


def _metric_values(table, metric):
    """The metric of every run, NaN where the run did not succeed."""
    return np.where(table.status == OK, table.values[metric], np.nan)


def _ok_but_not_finite(table, values):
    """Runs that succeeded with a metric value that is NaN or infinite (not failed ones)."""
    return (table.status == OK) & ~np.isfinite(values)


def _failed(table):
    return table.status == FAILED


def _levels(table, key):
    """(the distinct values of a varied path in the order they first appear, each run's
    index into them)."""
    found = table.level_codes(key)  # a grid or zip path: by arithmetic on the run index
    values, codes = found if found is not None else (table.column(key), np.arange(len(table)))
    distinct, index, remap = [], {}, []
    for v in values:
        k = index.setdefault(repr(v), len(index))
        if k == len(distinct):
            distinct.append(v)
        remap.append(k)
    return distinct, np.asarray(remap, dtype=np.int64)[codes]


def _per_level(codes, count, values=None, reduce=None):
    """Per level: how many runs (values None), the sum of `values`, or their min/max
    (`reduce` np.minimum / np.maximum; NaN for a level without any)."""
    if values is None:
        return np.bincount(codes, minlength=count)
    if reduce is None:
        return np.bincount(codes, weights=values, minlength=count)
    out = np.full(count, np.inf if reduce is np.minimum else -np.inf)
    reduce.at(out, codes, values)
    out[~np.isfinite(out)] = np.nan
    return out


def _named(table, metric):
    """'max_err = max(abs(e))': the metric with its expression, for titles and labels."""
    text = _text(table.meta, metric)
    return f"{metric} = {text}" if text else metric


def _text(meta, metric):
    return (meta.get("sweep") or {}).get("metrics", {}).get(metric)


def is_test(meta, metric):
    """Whether `metric` of the sweep described by `meta` is true or false in every run."""
    text = _text(meta, metric)
    return isinstance(text, str) and true_false(text)


def _status_note(table):
    c = table.counts()
    note = f"{c['ok']} ok"
    if c["failed"]:
        note += f", {c['failed']} failed"
    if c["interrupted"]:
        note += f", {c['interrupted']} not run"
    return note


def plot_metric(table, metric, x, y=None, ax=None):
    """Draw `metric` against the varied path `x` (line plot, the mean over any other
    varied paths with their min-max band), or against `x` and `y` (heat map of the mean per
    cell). Returns the Axes."""
    ax = ax or _new_axes()
    values = _metric_values(table, metric)
    if y is None:
        _line(ax, table, values, metric, x)
    else:
        _heat_map(ax, table, values, metric, x, y)
    return ax


def _line(ax, table, values, metric, key):
    levels, codes = _levels(table, key)
    xs = [numeric(v) for v in levels]
    positions = xs if all(v is not None for v in xs) else list(range(len(levels)))
    failed_runs, not_finite = _failed(table), _ok_but_not_finite(table, values)
    n, finite = len(levels), np.isfinite(values)
    count = _per_level(codes[finite], n)
    with np.errstate(invalid="ignore"):
        mean = _per_level(codes[finite], n, values[finite]) / count
    lo = _per_level(codes[finite], n, values[finite], np.minimum)
    hi = _per_level(codes[finite], n, values[finite], np.maximum)
    failed = _per_level(codes[failed_runs], n) > 0
    nonfinite = _per_level(codes[not_finite], n) > 0
    order = np.argsort(positions)
    p = np.asarray(positions, dtype=float)[order]
    m, lo, hi = (np.asarray(a)[order] for a in (mean, lo, hi))
    ax.plot(p, m, "o-", color="C0", label=metric)
    if np.any(np.asarray(hi) > np.asarray(lo)):
        ax.fill_between(p, lo, hi, color="C0", alpha=0.2, label="min - max")
    # on the x axis, not at any metric value: these runs have none
    for marks, style, color, label in ((failed, "x", "C3", "failed runs"),
                                       (nonfinite, "^", "0.5", "not finite (ok runs)")):
        bad = np.asarray(marks, dtype=bool)[order]
        if bad.any():
            ax.plot(p[bad], np.zeros(bad.sum()), style, color=color, markersize=9,
                    clip_on=False, transform=ax.get_xaxis_transform(), label=label)
    if positions is not xs:
        shown = _shown_levels(len(levels))
        ax.set_xticks(shown, [_label(levels[k]) for k in shown])
    ax.set_xlabel(key)
    if is_test(table.meta, metric):  # the mean of 0s and 1s
        ax.set_ylabel(f"{metric}: fraction true")
        ax.set_ylim(-0.05, 1.05)
    else:
        ax.set_ylabel(metric)
    if np.isfinite(m).any() and np.nanmin(lo) > 0 and np.nanmax(hi) / np.nanmin(lo) > 50 \
            and not is_test(table.meta, metric):
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(f"{_named(table, metric)} against {key} ({_status_note(table)})",
                 fontsize="medium")


def _heat_map(ax, table, values, metric, xkey, ykey):
    from matplotlib.colors import LogNorm

    xl, xc = _levels(table, xkey)
    yl, yc = _levels(table, ykey)
    cells = len(yl) * len(xl)
    flat = yc * len(xl) + xc  # each run's cell
    finite = np.isfinite(values)
    shape = (len(yl), len(xl))
    total = np.bincount(flat[finite], weights=values[finite], minlength=cells).reshape(shape)
    count = np.bincount(flat[finite], minlength=cells).reshape(shape)
    failed = np.bincount(flat[_failed(table)], minlength=cells).reshape(shape)
    not_finite = np.bincount(flat[_ok_but_not_finite(table, values)],
                             minlength=cells).reshape(shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    finite = z[np.isfinite(z)]
    norm = None
    test = is_test(table.meta, metric)
    if test:
        from matplotlib.colors import Normalize
        norm = Normalize(0.0, 1.0)
    elif finite.size and finite.min() > 0 and finite.max() / finite.min() > 50:
        norm = LogNorm(finite.min(), finite.max())
    ax.set_facecolor("0.85")  # cells without a successful run
    # an image, one pixel per cell (a mesh of a million quads takes seconds to draw)
    mesh = ax.imshow(np.ma.masked_invalid(z), cmap="viridis", norm=norm, origin="lower",
                     extent=(0, len(xl), 0, len(yl)), aspect="auto", interpolation="nearest")
    ax.figure.colorbar(mesh, ax=ax, label=f"{metric}: fraction true" if test else metric)
    xt, yt = _shown_levels(len(xl)), _shown_levels(len(yl))
    ax.set_xticks(xt + 0.5, [_label(xl[k]) for k in xt],
                  rotation=30 if len(xt) < len(xl) else 0)
    ax.set_yticks(yt + 0.5, [_label(yl[k]) for k in yt])
    ax.set_xlabel(xkey)
    ax.set_ylabel(ykey)
    if z.size <= 150:
        fmt = _cell_format(finite)
        for i in range(len(yl)):
            for j in range(len(xl)):
                if np.isfinite(z[i, j]):
                    shade = mesh.norm(z[i, j])
                    text = (("false", "true")[int(z[i, j])] if test and count[i, j] == 1
                            else format(z[i, j], fmt))
                    ax.text(j + 0.5, i + 0.5, text, ha="center", va="center",
                            fontsize="x-small", color="black" if shade > 0.6 else "white")
                elif not_finite[i, j] or failed[i, j]:
                    ax.text(j + 0.5, i + 0.5, "not finite" if not_finite[i, j] else "failed",
                            ha="center", va="center", fontsize="x-small",
                            color="0.3" if not_finite[i, j] else "C3")
    ax.set_title(f"{_named(table, metric)} ({_status_note(table)})", fontsize="medium")


def _shown_levels(count):
    """The levels an axis labels: every one, or every k-th from the first, at most
    MAX_TICKS, so that the labelled cells are equally spaced (a label per level of a
    1000-value grid would be unreadable, and slow to lay out)."""
    return np.arange(0, count, -(-count // MAX_TICKS))


def _cell_format(values):
    """Enough significant digits to tell the cells apart: 3, more when the values spread
    little relative to their size (11.43 and 11.35 must not both read 11.4)."""
    if values.size < 2 or np.ptp(values) == 0:
        return ".3g"
    spread = np.max(np.abs(values)) / np.ptp(values)
    return f".{int(min(6, max(3, np.ceil(np.log10(spread)) + 2)))}g"


def plot_histogram(table, metric, by=(), ax=None):
    """Histogram of `metric` over the successful runs; with `by` (grid paths) and at most six
    groups, one outline per group. Mean, median and 95th percentile are marked. Returns the
    Axes."""
    ax = ax or _new_axes()
    values = _metric_values(table, metric)
    ok = values[np.isfinite(values)]
    if ok.size == 0:
        ax.text(0.5, 0.5, "no successful run", ha="center", transform=ax.transAxes)
        ax.set_title(f"{metric} ({_status_note(table)})", fontsize="medium")
        return ax
    edges = np.histogram_bin_edges(ok, bins=_bins(ok))
    groups = _few_groups(table, by, np.isfinite(values))
    if groups:
        for n, (label, members) in enumerate(groups.items()):
            ax.hist(values[members], bins=edges, histtype="step", linewidth=1.5,
                    color=f"C{n}", label=label)
    else:
        ax.hist(ok, bins=edges, color="C0", alpha=0.8, label=f"{ok.size} runs")
    for value, style, name in ((ok.mean(), "-", "mean"), (np.median(ok), "--", "median"),
                               (np.percentile(ok, 95), ":", "95th percentile")):
        ax.axvline(value, color="k", linestyle=style, linewidth=1, label=f"{name} {value:.3g}")
    ax.set_xlabel(_named(table, metric))
    ax.set_ylabel("runs")
    ax.yaxis.set_major_locator(_integer_ticks())  # counts: no tick at 2.5 runs
    ax.legend(fontsize="small")
    ax.set_title(f"{metric} over {ok.size} runs ({_status_note(table)})", fontsize="medium")
    return ax


def _few_groups(table, keys, selected):
    """{label: selected runs} of the runs grouped by their values of `keys` (grid paths),
    labelled by the paths without their section ('m=2, Kp.K=50' for parameters.m and
    blocks.Kp.K), when there are two to six groups (a colour each); else {}."""
    groups = _groups(table, keys, selected) if keys else {}
    if not 1 < len(groups) <= 6:
        return {}
    return {", ".join(f"{k.split('.', 1)[-1]}={_label(table.rows[int(first)][k])}"
                      for k in keys): members for first, members in groups.items()}


def _groups(table, keys, selected):
    """{first run of a group: its selected runs} of the runs grouped by their values of
    `keys`, in order of first appearance."""
    combined = np.zeros(len(table), dtype=np.int64)
    for key in keys:
        levels, codes = _levels(table, key)
        combined = combined * len(levels) + codes
    groups = {}
    for i in np.flatnonzero(selected):
        groups.setdefault(combined[i], []).append(i)
    return {members[0]: np.asarray(members) for members in groups.values()}


def _bins(values):
    """Freedman-Diaconis: bins 2*IQR/n^(1/3) wide, counted before numpy makes them, at most
    MAX_BINS (quartiles a rounding error apart around one outlier would ask for billions);
    Sturges' count when the quartiles coincide."""
    span = np.ptp(values)
    if span == 0:
        return 1
    q25, q75 = np.percentile(values, [25, 75])
    width = 2 * (q75 - q25) / values.size ** (1 / 3)
    count = span / width if width > 0 else np.log2(values.size) + 1
    return int(min(MAX_BINS, np.ceil(count)))


def plot_fraction(table, metric, by=(), ax=None):
    """The runs where the true/false `metric` is true: one bar of the runs true, false and
    without a value (failed, not run), the first runs false named under it; with `by` (grid
    paths) a bar per grid point of the fraction true among its runs, labelled true/all.
    Returns the Axes."""
    ax = ax or _new_axes()
    values = _metric_values(table, metric)
    valued = np.isfinite(values)
    true = valued & (values != 0)
    share = f", {100 * true.sum() / valued.sum():.3g} %" if valued.any() else ""
    ax.set_title(f"{_named(table, metric)}: true in {int(true.sum())} of {int(valued.sum())} "
                 f"runs{share} ({_status_note(table)})", fontsize="medium")
    groups = _groups(table, by, valued) if by else {}
    if len(groups) > 1:
        return _fractions(ax, table, groups, true, by)
    counts = (int(true.sum()), int((valued & ~true).sum()), int((~valued).sum()))
    left = 0
    for count, color, label in zip(counts, ("C2", "C3", "0.75"),
                                   ("true", "false", "no value (failed or not run)")):
        if count:
            ax.barh(0, count, left=left, color=color, height=0.5,
                    label=f"{label}: {count}{_percent(count, len(table))}")
            left += count
    ax.set_xlim(0, max(len(table), 1))
    ax.set_ylim(-0.6, 0.9)
    ax.set_yticks([])
    ax.set_xlabel("runs")
    ax.xaxis.set_major_locator(_integer_ticks())
    ax.legend(fontsize="small", loc="upper left", ncols=3, frameon=False)
    false = np.flatnonzero(valued & ~true)
    if false.size:
        shown = ", ".join(map(str, false[:MAX_LISTED]))
        more = f" and {false.size - MAX_LISTED} more" if false.size > MAX_LISTED else ""
        ax.text(0, -0.5, f"false in run{'s' if false.size > 1 else ''} {shown}{more}",
                fontsize="small", va="center")
    return ax


MAX_LISTED = 12  # runs named under a fraction's bar


def _fractions(ax, table, groups, true, by):
    """A bar per group of runs (`groups`: first run -> members with a value): the fraction
    true, labelled true/all."""
    fractions, labels = [], []
    for first, members in groups.items():
        fractions.append(true[members].mean())
        row = table.rows[int(first)]
        labels.append(", ".join(_label(row[k]) for k in by))
        ax.text(len(fractions) - 1, fractions[-1],
                f"{int(true[members].sum())}/{members.size}", ha="center", va="bottom",
                fontsize="x-small")
    ax.bar(np.arange(len(fractions)), fractions, color="C2", width=0.7)
    shown = _shown_levels(len(labels))
    ax.set_xticks(shown, [labels[k] for k in shown], rotation=30 if len(labels) > 4 else 0)
    ax.set_xlabel(", ".join(by))
    ax.set_ylabel("fraction true")
    ax.set_ylim(0, 1.12)
    return ax


def _percent(part, whole):
    return f" ({100 * part / whole:.3g} %)" if whole else ""


def _integer_ticks():
    from matplotlib.ticker import MaxNLocator
    return MaxNLocator(integer=True)


def plot_scatter(table, metric, x, by=(), ax=None, legend=True):
    """`metric` of each successful run against its value of the varied path `x` (a point
    each; a true/false metric at false or true), failed runs as crosses on the x axis, runs
    whose value is not finite as triangles there. With `by` (grid paths) and two to six
    groups, a colour per group. Returns the Axes."""
    ax = ax or _new_axes()
    values = _metric_values(table, metric)
    levels, codes = _levels(table, x)
    xs = [numeric(v) for v in levels]
    numbers = all(v is not None for v in xs)
    where = (np.asarray(xs, dtype=float) if numbers else np.arange(len(levels), dtype=float))
    where = where[codes]
    ok = np.isfinite(values)
    many = ok.sum() > 2000
    groups = _few_groups(table, by, ok) or {f"{int(ok.sum())} runs": np.flatnonzero(ok)}
    for n, (label, members) in enumerate(groups.items()):
        ax.scatter(where[members], values[members], s=4 if many else 14, alpha=0.6,
                   color=f"C{n}", linewidths=0, rasterized=many, label=label)
    for marks, style, color, label in ((_failed(table), "x", "C3", "failed runs"),
                                       (_ok_but_not_finite(table, values), "^", "0.5",
                                        "not finite (ok runs)")):
        if marks.any():
            ax.plot(where[marks], np.zeros(marks.sum()), style, color=color, markersize=8,
                    clip_on=False, transform=ax.get_xaxis_transform(), label=label)
    if not numbers:
        shown = _shown_levels(len(levels))
        ax.set_xticks(shown, [_label(levels[k]) for k in shown])
    if is_test(table.meta, metric):
        ax.set_yticks([0, 1], ["false", "true"])
        ax.set_ylim(-0.4, 1.4)
    ax.set_xlabel(x)
    ax.set_ylabel(metric)
    ax.grid(True, alpha=0.3)
    if legend:
        ax.legend(fontsize="small")
    return ax


def drawn(meta):
    """The `random:` paths a metric is plotted against: all but seeds (a seed names a random
    stream; a metric against it is noise)."""
    return [v["key"] for v in meta["varied"]
            if v["kind"] == "random" and v["key"].rsplit(".", 1)[-1] != "seed"]


def figure_plan(meta):
    """[(metric, kind, paths)] of the default figures for a sweep described by `meta`
    (sweep.json without rows): see the module docstring."""
    varied = meta["varied"]
    listed = [v["key"] for v in varied if v["kind"] in ("grid", "zip")]
    grid = [v["key"] for v in varied if v["kind"] == "grid"]
    plan = []
    for metric in meta["metrics"]:
        if meta["sweep"]["samples"]:
            plan.append((metric, "fraction" if is_test(meta, metric) else "histogram", grid))
            if drawn(meta):
                plan.append((metric, "scatter", drawn(meta)))
        elif len(listed) == 1:
            plan.append((metric, "line", listed))
        elif len(grid) == 2 and len(listed) == 2:
            plan.append((metric, "heatmap", grid))
        else:
            plan.extend((metric, "line", [key]) for key in listed)
    return plan


def caption(figure):
    """What a figure described in sweep.json ({metric, kind, paths}) shows, in a phrase."""
    metric, kind = figure.get("metric"), figure.get("kind")
    paths = [str(p) for p in figure.get("paths") or []]
    names = ", ".join(paths)
    if kind == "line":
        return f"{metric} against {names}"
    if kind == "heatmap" and len(paths) == 2:
        return f"{metric} over {paths[0]} (across) and {paths[1]} (up)"
    if kind == "histogram":
        return f"{metric}: its values over the runs" + (f", by {names}" if paths else "")
    if kind == "fraction":
        return (f"{metric}: the runs where it is true" +
                (f", the fraction per value of {names}" if paths else ""))
    if kind == "scatter":
        return f"{metric} against the drawn {'value' if len(paths) == 1 else 'values'} {names}"
    return f"{metric}: {kind}" + (f" over {names}" if paths else "")


def write_figures(table, out_dir):
    """Write the default figures into `out_dir`; returns [{file, metric, kind, paths}]."""
    written = []
    plan = figure_plan(table.meta)
    for metric, kind, paths in plan:
        lines = sum(1 for m, k, _ in plan if m == metric and k == "line") > 1
        name = metric + (f"_vs_{_slug(paths[0])}" if lines else
                         "_vs_drawn" if kind == "scatter" else "") + ".png"
        if kind == "scatter":
            figure = _scatter_figure(table, metric, paths)
        else:
            ax = _new_axes(size=(7, 5.5) if kind == "heatmap" else
                           (7, 3.2) if kind == "fraction" and not paths else (7, 4.5))
            if kind == "histogram":
                plot_histogram(table, metric, by=paths, ax=ax)
            elif kind == "fraction":
                plot_fraction(table, metric, by=paths, ax=ax)
            elif kind == "heatmap":
                plot_metric(table, metric, paths[0], paths[1], ax=ax)
            else:
                plot_metric(table, metric, paths[0], ax=ax)
            figure = ax.figure
        figure.tight_layout()
        with atomic_path(out_dir / name) as tmp:
            figure.savefig(tmp, dpi=110)
        written.append({"file": name, "metric": metric, "kind": kind, "paths": paths})
    return written


def _scatter_figure(table, metric, paths):
    """The metric against each drawn path: a panel each, three to a row, one y axis; a
    colour per grid point when there are a few, as in the histogram."""
    from matplotlib.figure import Figure
    columns = min(len(paths), 3)
    rows = -(-len(paths) // columns)
    figure = Figure(figsize=(2.2 + 3.6 * columns, 0.8 + 3.2 * rows))
    axes = figure.subplots(rows, columns, squeeze=False, sharey=True)
    grid = [v["key"] for v in table.meta["varied"] if v["kind"] == "grid"]
    for k, (ax, key) in enumerate(zip(axes.flat, paths)):
        plot_scatter(table, metric, key, by=grid, ax=ax, legend=k == 0)
        if k % columns:
            ax.set_ylabel("")
    for ax in axes.flat[len(paths):]:
        ax.set_visible(False)
    figure.suptitle(f"{_named(table, metric)} against the drawn "
                    f"{'value' if len(paths) == 1 else 'values'} ({_status_note(table)})",
                    fontsize="medium")
    return figure


def _slug(key):
    return re.sub(r"[^A-Za-z0-9]+", "_", key).strip("_")


def _new_axes(size=(7, 4.5)):
    from matplotlib.figure import Figure
    return Figure(figsize=size).add_subplot()
