"""The run report: `report.html` in a run directory, one self-contained page built from the
run's files (meta.json, results.npz, the figures, diagram.svg).

`blocksim run` writes it after the figures (unless --no-plots), together with the diagram's
drawing `diagram.svg`; `blocksim report RUN_DIR` rebuilds it from the files alone (drawing
the diagram named in meta.json, with the run's overrides, when diagram.svg is missing). A
sweep directory's report is report_sweep's.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..engine.results import DRAWING, REPORT
from ..errors import DiagramError
from .drawing import chart_file, drawing_section
from .html import (Raw, as_text, code, esc, media, number, own_file, read_json,
                   sectioned_page, table, write_page)

FIGURES = (".png", ".gif", ".mp4")
SHOWN_EVENTS = 20


def write_run_report(run_dir):
    """Write `run_dir/report.html`, built from the run directory's files."""
    run_dir = Path(run_dir)
    return write_page(run_dir / REPORT, run_report_html(run_dir))


def _read_meta(run_dir):
    path = run_dir / "meta.json"
    if not path.is_file():
        raise DiagramError(f"not a run or sweep directory (no meta.json or sweep.json): "
                           f"{run_dir}", file=str(run_dir))
    return read_json(path)


def run_report_html(run_dir):
    """The report page of a run directory, as text."""
    run_dir = Path(run_dir)
    meta = _read_meta(run_dir)
    results = _read_results(run_dir)
    name = meta.get("name", run_dir.name)
    intro = f"<h1>{esc(name)}</h1>"
    if meta.get("description"):
        intro += f"\n<p>{esc(meta['description'])}</p>"
    return sectioned_page(f"blocksim run: {name}", intro, [
        ("run", "Run", _status(meta)),
        ("diagram", "Diagram", _diagram(run_dir, meta)),
        ("figures", "Figures and animations", _figures(run_dir, meta)),
        ("signals", "Recorded signals: final values", _signals(meta, results)),
        ("conditional", "Enabled and triggered subsystems", _conditional(meta)),
        ("events", "Events", _events(meta, results)),
        ("charts", "Charts", _charts(run_dir, meta, results)),
        ("solver", "Solver", _solver(meta)),
        ("parameters", "Parameters and robots", _configuration(meta)),
        ("versions", "Versions", _versions(meta)),
    ])


def _read_results(run_dir):
    path = run_dir / "results.npz"
    if not path.is_file():
        return {}
    try:
        with np.load(path, allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except (OSError, ValueError):
        return {}


# ---- sections ----------------------------------------------------------------------------------
def _status(meta):
    status = meta.get("status") or ("complete" if meta.get("complete") else "failed")
    cls = {"complete": "ok", "interrupted": "interrupted"}.get(status, "failed")
    rows = [("status", Raw(f'<span class="status {cls}">{esc(status)}</span>')),
            ("diagram file", meta.get("file")),
            ("simulated time", _span(meta)),
            ("rows recorded", meta.get("rows")),
            ("simulation wall time", _seconds(meta.get("wall_time"))),
            ("mode", _mode(meta.get("mode"))),
            ("figures and drawing", _seconds(meta.get("figures_time"))),
            ("created", meta.get("created"))]
    out = table(None, [r for r in rows if r[1] is not None])
    if meta.get("error"):
        out += f'<p>The run stopped with this error (results up to then are kept):</p>' \
               f'<div class="error">{esc(meta["error"])}</div>'
    for line in meta.get("messages") or []:
        out += f"<pre>{esc(line)}</pre>"
    return out


def _seconds(x):
    return f"{x:.4g} s" if isinstance(x, (int, float)) else None


def _mode(mode):
    """'accelerated (compiled in 0.9 s): why', 'accelerated (cached): why', 'normal: why'
    (a run that switched says how long it ran in normal mode in its why)."""
    if not mode:
        return None
    how = ""
    if mode.get("mode") == "accelerated":
        how = " (cached)" if mode.get("cache_hit") else \
            f" (compiled in {_seconds(mode.get('compile_time'))})"
    return f"{mode.get('mode')}{how}: {mode.get('why', '')}"


def _span(meta):
    sim = (meta.get("configuration") or {}).get("simulation") or {}
    if "end_time" not in meta:
        return None
    start, stop = sim.get("start"), sim.get("stop")
    text = f"{meta['end_time']:g} s"
    if start is not None and stop is not None:
        text = f"{start:g} .. {meta['end_time']:g} s (of {start:g} .. {stop:g} s)"
    return text


def _diagram(run_dir, meta):
    return drawing_section(run_dir / DRAWING, meta.get("file"), meta.get("overrides") or [],
                           meta.get("name", ""))


def _figures(run_dir, meta):
    """The run's figures and animations: those meta.json lists as the run's files (a
    previous run's figures in the directory are not this run's: `blocksim run` removes
    them only after writing the report), or every one there for a meta.json without a list."""
    listed = meta.get("files")
    files = sorted(p for p in run_dir.iterdir() if p.suffix.lower() in FIGURES
                   and own_file(run_dir, p.name) and not p.name.startswith(".")
                   and (listed is None or p.name in listed))
    # an animation written both ways is shown as its GIF (the MP4 stays beside the report)
    names = {p.name for p in files}
    files = [p for p in files
             if not (p.suffix.lower() == ".mp4" and p.with_suffix(".gif").name in names)]
    if not files:
        return '<p class="note">No figures (the run wrote none).</p>'
    blocks = (meta.get("configuration") or {}).get("blocks") or {}
    stems = {name.replace("/", "."): name for name in blocks}
    by_block, others = {}, []
    for p in files:
        owner = stems.get(p.stem)
        (by_block.setdefault(owner, []) if owner else others).append(p)
    # figures first (scopes, graphs), then animations with their last frames
    animated = {name for name, paths in by_block.items()
                if any(p.suffix.lower() != ".png" for p in paths)}
    order = sorted((name for name in blocks if name in by_block), key=lambda n: n in animated)
    out = []
    for name in order:
        kind = blocks[name].get("type", "")
        for p in sorted(by_block[name], key=lambda p: FIGURES.index(p.suffix.lower())):
            out.append(_figure(p, f"{name} ({kind}): {p.name}"))
    for p in others:
        out.append(_figure(p, p.name))
    return "\n".join(out)


def _figure(path, caption):
    return (f"<figure>{media(path.read_bytes(), path.suffix.lower(), caption)}"
            f"<figcaption>{esc(caption)}</figcaption></figure>")


def _signals(meta, results):
    record = (meta.get("configuration") or {}).get("record")
    if record is None:
        record = {k: "" for k in results if k != "t" and not k.startswith("events_")}
    if not record:
        return '<p class="note">The diagram records no signals.</p>'
    t = results.get("t")
    rows = []
    for name, source in record.items():
        # a bus is recorded element by element: NAME.ELEMENT
        names = [name] if name in results else [k for k in results if k.startswith(name + ".")]
        if not names or t is None or len(t) == 0:
            rows.append((name, source, "", "(not recorded)", "", ""))
        for each in names:
            data = results[each]
            rows.append((code(each), source if each == name else f"{source} (bus element)",
                         str(tuple(data.shape[1:])), code(number(data[-1])),
                         number(np.min(data)), number(np.max(data))))
    note = f'<p class="note">At t = {float(t[-1]):g} s.</p>' if t is not None and len(t) else ""
    return note + table(("name", "signal", "shape", "final value", "min", "max"), rows, numeric=(4, 5))


def _conditional(meta):
    """A row per enabled or triggered subsystem: what controls it, its options, how often it
    switched (enabled) or ran (triggered): its events."""
    blocks = (meta.get("configuration") or {}).get("blocks") or {}
    counts = (meta.get("events") or {}).get("per_block") or {}
    rows = []
    for name, b in blocks.items():
        if b.get("type") != "subsystem":
            continue
        if b.get("kind") == "enable":
            control, what = f"enabled by {b.get('signal')} > 0", "switches"
        else:
            control = f"triggered by {b.get('signal')}, {b.get('edge', 'rising')} edges" + (
                f", while {b['enable']} > 0" if b.get("enable") else "")
            what = "runs"
        options = ", ".join(f"{k} = {as_text(b[k])}" for k in
                            ("outputs_when_disabled", "states_when_enabling", "initial") if k in b)
        rows.append((code(name), control, options or "(defaults)",
                     f"{counts.get(name, 0)} {what}"))
    return table(("subsystem", "control", "options", "events"), rows) if rows else ""


def _events(meta, results):
    events = meta.get("events")
    if not events or not (events.get("total") or events.get("per_block")):
        return ""  # no block with zero crossings
    per_block = events.get("per_block") or {}
    total = int(events.get("total", 0))
    out = f"<p>{total} event{'' if total == 1 else 's'}.</p>"
    if per_block:
        out += table(("block", "events"), sorted(per_block.items()), numeric=(1,))
    times = results.get("events_t")
    if times is not None and len(times):
        names = meta.get("event_blocks") or []
        index = results.get("events_block")
        rows = []
        for i in range(min(len(times), SHOWN_EVENTS)):
            k = int(index[i]) if index is not None and i < len(index) else -1
            rows.append((f"{float(times[i]):.9g}", names[k] if 0 <= k < len(names) else k))
        more = f" (the first {SHOWN_EVENTS} of {len(times)})" if len(times) > SHOWN_EVENTS else ""
        out += f"<p>Event times{more}:</p>" + table(("t (s)", "block"), rows, numeric=(0,))
    return out


def _charts(run_dir, meta, results):
    """Each chart: its drawing (written with the run), how often each state was entered and
    each transition taken, and the first states entered with their times."""
    charts = meta.get("charts") or {}
    out = []
    names, labels = meta.get("chart_states") or [], meta.get("chart_transitions") or []
    t, state, via = (results.get(k) for k in ("chart_t", "chart_state", "chart_transition"))
    for name, counts in charts.items():
        out.append(f"<h3>{esc(name)}</h3>")
        drawing = own_file(run_dir, chart_file(name))
        if drawing is not None and (meta.get("files") is None
                                    or chart_file(name) in meta["files"]):
            svg = drawing.read_bytes()
            out.append(f'<div class="diagram">{media(svg, ".svg", "chart " + name)}</div>')
        out.append(table(("state", "entered"), list((counts.get("entries") or {}).items()),
                         numeric=(1,)))
        out.append(table(("transition", "taken"),
                         list((counts.get("transitions") or {}).items()), numeric=(1,)))
        if t is not None and state is not None:
            prefix = f"{name}."
            rows = [(f"{float(t[i]):.9g}", names[int(state[i])][len(prefix):],
                     labels[int(via[i])].split(": ", 1)[1] if via is not None and via[i] >= 0
                     else "(the chart starts)")
                    for i in range(len(t)) if names[int(state[i])].startswith(prefix)]
            more = f" (the first {SHOWN_EVENTS} of {len(rows)})" if len(rows) > SHOWN_EVENTS \
                else ""
            out.append(f"<p>States entered{more}:</p>" + table(
                ("t (s)", "state", "by"), rows[:SHOWN_EVENTS], numeric=(0,)))
    return "\n".join(out)


def _solver(meta):
    """The solver's settings and statistics; a fixed-step solver's tolerances and an adaptive
    one's `step` (meta.json keeps every resolved setting) are left out: they were not used."""
    from ..engine.solvers import FIXED_STEP
    solver = meta.get("solver") or {}
    unused = ("rtol", "atol", "max_step") if solver.get("name") in FIXED_STEP else ("step",)
    rows = [(k, v) for k, v in solver.items() if k not in unused and v is not None]
    if "wall_time" in meta:
        rows.append(("wall time (s)", meta["wall_time"]))
    return table(None, rows, numeric=(1,))


def _configuration(meta):
    config = meta.get("configuration") or {}
    out = []
    params = config.get("parameters") or {}
    if params:
        out.append("<h3>Parameters</h3>" + table(("name", "value"), [
            (code(k), code(v)) for k, v in params.items()]))
    robots = config.get("robots") or {}
    if robots:
        out.append("<h3>Robots</h3>" + table(("name", "options"), [
            (code(k), code(v)) for k, v in robots.items()]))
    blocks = config.get("blocks") or {}
    if blocks:
        out.append("<h3>Blocks</h3>" + table(("block", "type", "parameters"), [
            (code(k), v.get("type", ""), code(", ".join(
                f"{p} = {as_text(x)}" for p, x in v.items() if p != "type")))
            for k, v in blocks.items()]))
    if meta.get("overrides"):
        out.append("<h3>Overrides (--set)</h3>" + table(("setting",), [
            (code(o if isinstance(o, str) else f"{o[0]}={as_text(o[1])}"),)
            for o in meta["overrides"]]))
    if meta.get("seeds"):
        out.append("<h3>Random seeds</h3>" + table(("robot", "seed"), list(meta["seeds"].items())))
    wires = config.get("wires") or []
    if wires:
        out.append(f"<details><summary>{len(wires)} wires</summary><pre>"
                   + esc("\n".join(wires)) + "</pre></details>")
    return "\n".join(out)


def _versions(meta):
    from .. import __version__
    versions = meta.get("versions") or {}
    out = "<p>The run:</p>" + table(("package", "version"), list(versions.items()))
    import matplotlib
    return out + (f'<p class="note">This report was written by blocksim {esc(__version__)} '
                  f'with matplotlib {esc(matplotlib.__version__)}.</p>')
