"""The sweep report: `report.html` in a sweep directory, one self-contained page built from
its files (sweep.json, summary.csv, the metric figures, diagram.svg).

It shows how the sweep went (counts, where it ran, how long it took), the diagram, what was
varied and measured, the true/false metrics (how many runs each holds in, and the runs where
it does not, with their values), the table of runs (sortable by clicking a header: numbers
as numbers, true/false as words), the failed runs with their messages, and the figures of
each metric with what they show. `blocksim sweep` writes
it at the end (also after Ctrl-C, with the finished rows); `blocksim report SWEEP_DIR`
rebuilds it. Only the directory's own files are embedded: a figure named in sweep.json by a
path (absolute, `../`), or one that is a symbolic link, is left out.
"""
from __future__ import annotations

from pathlib import Path

from ..batch.plot import caption, is_test
from ..batch.table import cell_value, modes_text, read_rows
from ..engine.results import DRAWING, REPORT
from .drawing import drawing_section
from .html import (Raw, as_text, code, esc, media, own_file, read_json, sectioned_page, table,
                   write_page)

SWEEP_FILE = "sweep.json"
TABLE = "summary.csv"
MAX_ROWS = 10_000  # rows shown in the page; summary.csv has them all
MAX_FALSE = 10  # runs listed where a true/false metric is false


def is_sweep_dir(path):
    return (Path(path) / SWEEP_FILE).is_file()


def write_sweep_report(sweep_dir, spec=None):
    """Write `sweep_dir/report.html` (and diagram.svg first, from the sweep's diagram spec
    with its fixed overrides, when given)."""
    sweep_dir = Path(sweep_dir)
    if spec is not None:
        from ..engine.compiler import compile_diagram
        from .drawing import write_drawing
        write_drawing(sweep_dir, compile_diagram(spec.copy()))
    return write_page(sweep_dir / REPORT, sweep_report_html(sweep_dir))


def sweep_report_html(sweep_dir):
    """The report page of a sweep directory, as text."""
    sweep_dir = Path(sweep_dir)
    meta = read_json(sweep_dir / SWEEP_FILE)
    name = meta.get("name") or sweep_dir.name
    overrides = list(((meta.get("sweep") or {}).get("set") or {}).items())
    tests = [m for m in meta.get("metrics") or [] if is_test(meta, m)]
    columns, shown, failed, tallies = _read_table(sweep_dir / TABLE, tests, _varied(meta))
    total = (meta.get("counts") or {}).get("runs")
    return sectioned_page(f"blocksim sweep: {name}", f"<h1>{esc(name)}</h1>", [
        ("sweep", "Sweep", _status(meta)),
        ("diagram", "Diagram", drawing_section(sweep_dir / DRAWING, meta.get("diagram"),
                                               overrides, name)),
        ("definition", "Varied and measured", _definition(meta)),
        ("tests", "True or false", _tests(meta, tallies)),
        ("table", "All runs", _table(columns, shown, total, tests)),
        ("failed", "Failed runs", _failed(meta, failed, total)),
        ("figures", "Metrics", _figures(sweep_dir, meta)),
        ("versions", "Versions", table(("package", "version"),
                                       list((meta.get("versions") or {}).items()))),
    ])


def _status(meta):
    counts = meta.get("counts") or {}
    status = meta.get("status") or ("finished" if meta.get("complete") else "interrupted")
    failed = counts.get("failed", 0)
    cls = "interrupted" if status != "finished" else ("failed" if failed else "ok")
    label = status if not failed or status != "finished" else f"finished, {failed} failed"
    execution = meta.get("execution") or {}
    where = execution.get("where")
    rows = [("status", Raw(f'<span class="status {cls}">{esc(label)}</span>')),
            ("runs", ", ".join(f"{counts[k]} {k}" for k in ("runs", "ok", "failed", "interrupted")
                               if k in counts)),
            ("diagram", meta.get("diagram")),
            ("sweep file", meta.get("file")),
            ("ran", f"{where}, {execution.get('workers')} worker(s)"  # a cluster's count
             if where and where.startswith("Dask cluster") else where),
            ("mode", modes_text(execution)),
            ("wall time", f"{execution['wall_s']:.4g} s" if execution.get("wall_s") else None),
            ("diagram built / re-parameterised",
             f"{execution.get('compiles', 0)} / {execution.get('reparameterised', 0)}"
             if where else None),
            ("kept results", meta.get("keep")),
            ("created", meta.get("created"))]
    return table(None, [r for r in rows if r[1] not in (None, "")])


def _definition(meta):
    sweep = meta.get("sweep") or {}
    rows = []
    for kind in ("set", "grid", "zip", "random"):
        for key, value in (sweep.get(kind) or {}).items():
            rows.append((kind, code(key), code(value)))
    if sweep.get("samples"):
        rows.append(("samples", "", str(sweep["samples"])))
    if sweep.get("seed") is not None:
        rows.append(("seed", "", str(sweep["seed"])))
    out = table(("", "path", "values"), rows) if rows else ""
    metrics = sweep.get("metrics") or {}
    if metrics:
        out += "<h3>Metrics</h3>" + table(("metric", "expression"), [
            (code(k), code(v)) for k, v in metrics.items()])
    return out


def _varied(meta):
    return [v["key"] for v in meta.get("varied") or []]


def _read_table(path, tests, varied):
    """(columns, the first MAX_ROWS rows, the first MAX_ROWS rows not ok, the tallies of the
    true/false metrics `tests`) of summary.csv, read row by row (a table of a million rows is
    not held); numbers as numbers. A tally: [runs true, runs false, the first MAX_FALSE
    runs false (run and `varied` values)]."""
    shown, failed, columns = [], [], []
    tallies = {m: [0, 0, []] for m in tests}
    for _, row in read_rows(path):
        row = {k: cell_value(v) for k, v in row.items() if k is not None}
        columns = columns or list(row)
        if len(shown) < MAX_ROWS:
            shown.append(row)
        if row.get("status") != "ok" and len(failed) < MAX_ROWS:
            failed.append(row)
        for metric, tally in tallies.items():
            value = row.get(metric)
            if row.get("status") == "ok" and isinstance(value, (int, float)) and value == value:
                tally[0 if value else 1] += 1
                if not value and len(tally[2]) < MAX_FALSE:
                    tally[2].append({k: row.get(k) for k in ("run", *varied)})
        if len(shown) >= MAX_ROWS and len(failed) >= MAX_ROWS and not tallies:
            break
    return columns, shown, failed, tallies


def _tests(meta, tallies):
    """Each true/false metric: in how many runs it holds, and the runs where it does not."""
    out = []
    texts = (meta.get("sweep") or {}).get("metrics") or {}
    keys = _varied(meta)
    runs = (meta.get("counts") or {}).get("runs") or 0
    for metric, (true, false, listed) in tallies.items():
        valued = true + false
        share = f" ({100 * true / valued:.3g} %)" if valued else ""
        none = runs - valued
        out.append(f"<h3>{esc(metric)} = <code>{esc(texts.get(metric, ''))}</code></h3>"
                   f"<p>true in {true} of {valued} runs with a value{share}"
                   + (f", false in {false}" if false else "")
                   + (f"; {none} without a value (failed or not run)" if none > 0 else "")
                   + ".</p>")
        if listed:
            note = "" if false <= len(listed) else \
                f'<p class="note">The first {len(listed)} of the {false} runs where it is false.</p>'
            out.append(note + table(("run where false", *keys), [
                (r.get("run"), *(r.get(k) for k in keys)) for r in listed], numeric=(0,)))
    return "\n".join(out)


def _failed(meta, rows, total):
    if not rows:
        return ""
    keys = _varied(meta)
    failed = sum((meta.get("counts") or {}).get(k) or 0 for k in ("failed", "interrupted"))
    note = "" if len(rows) >= failed or not total else \
        f'<p class="note">The first {len(rows)} of {failed}.</p>'
    return note + table(("run", *keys, "status", "message"), [
        (r.get("run"), *(as_text(r.get(k)) for k in keys), r.get("status"),
         code(r.get("message") or "")) for r in rows], numeric=(0,))


def _figures(sweep_dir, meta):
    out = []
    for fig in meta.get("figures") or []:
        path = own_file(sweep_dir, fig.get("file") if isinstance(fig, dict) else None)
        if path is None or path.suffix.lower() != ".png":
            continue
        text = caption(fig)
        wide = fig.get("kind") == "scatter" and len(fig.get("paths") or []) > 1
        out.append(f'<figure class="{"wide" if wide else "half"}">'
                   f'{media(path.read_bytes(), ".png", text)}'
                   f"<figcaption>{esc(text)}</figcaption></figure>")
    return "\n".join(out)


def _table(columns, rows, total, tests=()):
    if not columns or not rows:
        return '<p class="note">No runs.</p>'
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = []
    for row in rows:
        cells = "".join(_cell(row.get(c), c in tests) for c in columns)
        cls = ' class="failed"' if row.get("status") not in ("ok", None) else ""
        body.append(f"<tr{cls}>{cells}</tr>")
    note = ('<p class="note">Click a column\'s header to sort by it (again to reverse).'
            + ("" if not total or len(rows) >= total else
               f" The first {len(rows)} of {total} runs; summary.csv has them all.") + "</p>")
    return (note + f'<div class="scroll"><table class="sortable" id="runs"><thead><tr>{head}</tr>'
            f"</thead><tbody>{''.join(body)}</tbody></table></div>")


def _cell(value, test=False):
    """A table cell; a number shows 6 digits and sorts by its full value (data-value), a
    true/false metric's 1 or 0 shows as true or false."""
    if value is None:
        return '<td data-value=""></td>'
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"<td>{esc(as_text(value))}</td>"
    if test and value in (0, 1):
        return f'<td data-value="{int(value)}">{"true" if value else "false"}</td>'
    shown = str(value) if isinstance(value, int) else f"{value:.6g}"
    return f'<td class="num" data-value="{value!r}">{esc(shown)}</td>'
