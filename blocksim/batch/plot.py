"""Figures of a sweep: each metric against one or two varied values, or its distribution.

- one varied value (a grid or zip path): a line plot of the metric against it;
- two grid paths: a heat map over the grid, one cell per run, each cell labelled;
- more varied values: one line plot per path, the mean over the other paths with the
  min-max band;
- Monte Carlo (`samples:`): a histogram of the metric over the successful runs, one outline
  per grid point when there are a few.
Failed runs are drawn as gaps (grey cells marked "failed"; red crosses on the x axis) and
counted in the title; a successful run whose metric is NaN or infinite is a gap marked
apart ("not finite"; grey triangles on the x axis).

`plot_metric`, `plot_histogram` draw into a given matplotlib Axes (for reports);
`write_figures(table, out_dir)` writes the default figure of every metric as `<metric>.png`
and returns their descriptions (file, metric, kind, paths) for sweep.json.
"""
from __future__ import annotations

import re

import numpy as np

from ..language import expr
from ..util.atomic import atomic_path
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
    text = table.meta.get("sweep", {}).get("metrics", {}).get(metric)
    return f"{metric} = {text}" if text else metric


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
    ax.set_ylabel(metric)
    if np.isfinite(m).any() and np.nanmin(lo) > 0 and np.nanmax(hi) / np.nanmin(lo) > 50:
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
    if finite.size and finite.min() > 0 and finite.max() / finite.min() > 50:
        norm = LogNorm(finite.min(), finite.max())
    ax.set_facecolor("0.85")  # cells without a successful run
    # an image, one pixel per cell (a mesh of a million quads takes seconds to draw)
    mesh = ax.imshow(np.ma.masked_invalid(z), cmap="viridis", norm=norm, origin="lower",
                     extent=(0, len(xl), 0, len(yl)), aspect="auto", interpolation="nearest")
    ax.figure.colorbar(mesh, ax=ax, label=metric)
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
                    ax.text(j + 0.5, i + 0.5, format(z[i, j], fmt), ha="center", va="center",
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
    groups = _groups(table, by, np.isfinite(values)) if by else {}
    if 1 < len(groups) <= 6:
        for n, (first, members) in enumerate(groups.items()):
            row = table.rows[int(first)]
            label = ", ".join(f"{k.split('.')[-2] if k.count('.') else k}={_label(row[k])}"
                              for k in by)
            ax.hist(values[members], bins=edges, histtype="step", linewidth=1.5,
                    color=f"C{n}", label=label)
    else:
        ax.hist(ok, bins=edges, color="C0", alpha=0.8, label=f"{ok.size} runs")
    for value, style, name in ((ok.mean(), "-", "mean"), (np.median(ok), "--", "median"),
                               (np.percentile(ok, 95), ":", "95th percentile")):
        ax.axvline(value, color="k", linestyle=style, linewidth=1, label=f"{name} {value:.3g}")
    ax.set_xlabel(_named(table, metric))
    ax.set_ylabel("runs")
    from matplotlib.ticker import MaxNLocator
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts: no tick at 2.5 runs
    ax.legend(fontsize="small")
    ax.set_title(f"{metric} over {ok.size} runs ({_status_note(table)})", fontsize="medium")
    return ax


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


def figure_plan(meta):
    """[(metric, kind, paths)] of the default figures for a sweep described by `meta`
    (sweep.json without rows): see the module docstring."""
    varied = meta["varied"]
    listed = [v["key"] for v in varied if v["kind"] in ("grid", "zip")]
    grid = [v["key"] for v in varied if v["kind"] == "grid"]
    plan = []
    for metric in meta["metrics"]:
        if meta["sweep"]["samples"]:
            plan.append((metric, "histogram", grid))
        elif len(listed) == 1:
            plan.append((metric, "line", listed))
        elif len(grid) == 2 and len(listed) == 2:
            plan.append((metric, "heatmap", grid))
        else:
            plan.extend((metric, "line", [key]) for key in listed)
    return plan


def write_figures(table, out_dir):
    """Write the default figures into `out_dir`; returns [{file, metric, kind, paths}]."""
    written = []
    plan = figure_plan(table.meta)
    for metric, kind, paths in plan:
        several = sum(1 for m, _, _ in plan if m == metric) > 1
        name = metric + (f"_vs_{_slug(paths[0])}" if several else "") + ".png"
        ax = _new_axes(size=(7, 5.5) if kind == "heatmap" else (7, 4.5))
        if kind == "histogram":
            plot_histogram(table, metric, by=paths, ax=ax)
        elif kind == "heatmap":
            plot_metric(table, metric, paths[0], paths[1], ax=ax)
        else:
            plot_metric(table, metric, paths[0], ax=ax)
        ax.figure.tight_layout()
        with atomic_path(out_dir / name) as tmp:
            ax.figure.savefig(tmp, dpi=110)
        written.append({"file": name, "metric": metric, "kind": kind, "paths": paths})
    return written


def _slug(key):
    return re.sub(r"[^A-Za-z0-9]+", "_", key).strip("_")


def _new_axes(size=(7, 4.5)):
    from matplotlib.figure import Figure
    return Figure(figsize=size).add_subplot()
