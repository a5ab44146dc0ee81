"""The Python entry points: `load` (validated, compiled, not simulated; engine/loading.py),
`run` and `execute` (simulate a model and write its run directory)."""
from __future__ import annotations

import contextlib
import datetime
import os
import time
from pathlib import Path

import numpy as np

from .accel.mode import simulate_model
from .block import overrides
from .engine.compiler import Model
from .engine.csvio import csv_to
from .engine.journal import journal_results
from .engine.loading import diagram_file, load  # noqa: F401  (load is blocksim.load)
from .engine.results import (REPORT, Result, check_out_dir, data_files, finalize_sinks, json_to, npz_to,
                      remove_stale, run_files, versions, written_since)
from .errors import OutputError


_NO_FILES = contextlib.nullcontext({})  # a run without a directory writes no data files


def run(path, overrides=None, *, out=None, plots=False, progress=None, library=None,
        csv=False, mp4=False, op=None):
    """Load and simulate a diagram; returns a Result (t and the `record:` signals). `op`: start
    from an operating point (an OperatingPoint from `blocksim.trim`, or its file).

    Files are written only when `out` is given (results.npz, meta.json, with `csv=True`
    results.csv, and with `plots=True` the sinks' figures and animations (GIF; with
    `mp4=True` also MP4, through ffmpeg), the drawing diagram.svg and report.html). When
    the simulation fails or is interrupted, what was recorded so far is still written
    (marked incomplete) and the exception is re-raised with the partial Result attached as
    `error.result`.
    """
    if isinstance(path, Model):
        if overrides:
            raise ValueError("overrides= applies when a diagram file is loaded: give them to "
                             "blocksim.load(), or pass run() the file")
        if op is not None:
            raise ValueError("op= applies when a diagram file is loaded: pass run() the file")
        model = path
    else:
        model = load(diagram_file(path, "run"), overrides, library=library)
    if op is not None:
        from .analysis.operating import start_from
        start_from(model, op)
    return execute(model, out=out, plots=plots, progress=progress, csv=csv, mp4=mp4)


def execute(model, *, out=None, plots=False, progress=None, csv=False, figure_progress=None,
            mp4=False):
    """Simulate a compiled Model (from `load`, or one changed with `Model.set`) and write its
    run directory; returns a Result. `out`, `plots`, `csv`, `mp4` as for `run`;
    `progress(t)` is told the simulated time as the run goes, `figure_progress(fraction,
    block name)` how drawing the figures goes.

    A run directory used before keeps nothing stale: the files the previous run wrote (listed
    in its meta.json) that this run does not write again are removed; other files are never
    touched. meta.json lists this run's files, `wall_time` (simulating) and `figures_time`.

    The directory is checked before simulating (DiagramError: a long run is not lost at its
    end). results.npz, results.csv and meta.json replace the previous run's together; when
    they cannot be written (a full disk) the previous ones stay as they were and OutputError
    is raised with the Result attached as `error.result`."""
    if not isinstance(model, Model):
        raise TypeError(f"execute() takes a Model from blocksim.load(), got {type(model).__name__}")
    if out is not None and not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"out= takes a directory (a str or pathlib.Path), got {type(out).__name__}")
    if out is not None:
        out = Path(out)
        check_out_dir(out)
    drawn = plots and out is not None  # figures, the drawing and the report
    t, data, info = simulate_model(model, progress, plots=drawn)
    sinks = {name: (ts, inputs) for name, (ts, inputs, _) in info["sink_data"].items()}
    error = info["error"]
    meta = run_meta(model, t, info)
    event_t, event_block, _ = info["events"]
    names = ["results.npz", *(["results.csv"] if csv else []), "meta.json"]
    files = data_files(out, names) if out is not None else _NO_FILES
    messages = [f"{b.name}: {line}" for b in _logging(model) for line in b.log()]
    reports = {}
    try:
        with files as paths:
            if out is not None:
                previous, before = run_files(out)
                extra = {"events_t": event_t, "events_block": event_block} if len(event_t) else {}
                extra.update(journal_results(model, info.get("journal", ()))[0])
                npz_to(paths["results.npz"], t, {**data, **extra})
                if csv:
                    csv_to(paths["results.csv"], t, data)
            started, times = time.perf_counter(), {}
            try:
                if drawn:
                    _load_matplotlib(times)
                finalize_sinks(model, t, info["sink_data"], out, drawn, info["complete"],
                               figure_progress, messages, reports, mp4=mp4, times=times,
                               error=error)
                if drawn:
                    _drawing(model, out, messages, times)
            except KeyboardInterrupt as e:  # Ctrl-C while drawing: keep the results
                drawn = False
                messages.append("warning: interrupted while drawing the figures: some are "
                                "missing (the recorded results are all written)")
                if error is None:
                    error = e
                    meta.update(complete=False, status="interrupted",
                                error=str(e) or type(e).__name__)
            meta["figures_time"] = time.perf_counter() - started
            meta["figure_times"] = times
            meta["blocks"] = reports
            meta["messages"] = list(messages)
            if out is not None:
                figures = {n for n in written_since(out, before) if not n.startswith(".")}
                meta["files"] = sorted(figures | set(names) | ({REPORT} if drawn else set()))
                json_to(paths["meta.json"], meta)
    except OutputError as e:
        e.result = Result(t, data, meta, events=info["events"], sinks=sinks)
        raise
    if out is not None:
        try:
            if drawn:  # built from the files just written, as `blocksim report` builds it
                _report(out, messages)
        finally:  # also on Ctrl-C during the report: the previous run's files are not this one's
            remove_stale(out, previous - set(meta["files"]))
    result = Result(t, data, meta, messages, events=info["events"], sinks=sinks)
    if error is not None:
        error.result = result
        raise error
    return result


def _logging(model):
    """The model's blocks whose type gives lines for the run's messages (Block.log), found
    once per structure."""
    kept = model.__dict__.get("_log_blocks")
    if kept is None or kept[0] is not model.blocks:
        kept = model.__dict__["_log_blocks"] = (
            model.blocks, [b for b in model.blocks if overrides(b, "log")])
    return kept[1]


def _load_matplotlib(times):
    """Import matplotlib's figure and its Agg canvas, which the figures and the drawing use,
    and note what that took (a good part of a short run's drawing)."""
    started = time.perf_counter()
    import matplotlib.backends.backend_agg  # noqa: F401
    import matplotlib.figure  # noqa: F401
    times["loading matplotlib"] = time.perf_counter() - started


def _drawing(model, out, messages, times):
    """The diagram's drawing, diagram.svg, beside the figures."""
    from .report.drawing import write_chart_drawings, write_drawing
    started = time.perf_counter()
    try:
        write_drawing(out, model)
        write_chart_drawings(out, model)
    except Exception as e:  # a drawing failing must not lose the run
        messages.append(f"warning: could not draw the diagram: {e}")
    times["diagram.svg"] = time.perf_counter() - started


def _report(out, messages):
    """report.html from the run directory's files (as `blocksim report` builds it); a
    failure costs the report (and removes an older one), never the run. Interrupted, it
    removes an older one too (a previous run's page would pass for this run's)."""
    from .report.run_report import write_run_report
    try:
        write_run_report(out)
    except BaseException as e:
        (out / REPORT).unlink(missing_ok=True)
        if not isinstance(e, Exception):
            raise
        messages.append(f"warning: could not write the report: {e}")


def run_meta(model, t, info):
    """The run's meta.json content (before the sinks' reports are added)."""
    s = model.settings
    error = info["error"]
    status = "complete" if error is None else (
        "interrupted" if isinstance(error, KeyboardInterrupt) else "failed")
    return {
        "name": model.name,
        "description": model.description,
        "file": model.file,
        "complete": error is None,
        "status": status,
        "error": None if error is None else (str(error) or type(error).__name__),
        **({"notes": error.notes} if getattr(error, "notes", None) else {}),
        "end_time": info["end_time"],
        "rows": int(len(t)),
        "created": _created(),
        "wall_time": info["wall_time"],
        "mode": _mode_meta(info),
        "solver": {"name": s.solver, "rtol": s.rtol, "atol": s.atol, "max_step": s.max_step,
                   "step": s.step, "output_interval": s.output_interval, "refine": s.refine,
                   **info["stats"]},
        "configuration": model.config,
        "overrides": list(model.spec.overrides.values()) if model.spec is not None else [],
        **_events_meta(info["events"]),
        **journal_results(model, info.get("journal", ()))[1],
        "seeds": _seeds(model),
        "versions": versions(),
    }


_NOW = [None, ""]  # (a second since the epoch, its text)


def _created():
    """Now, as meta.json's `created` (UTC, ISO 8601 to the second), made once a second."""
    second = int(time.time())
    if _NOW[0] != second:
        _NOW[:] = second, datetime.datetime.fromtimestamp(
            second, datetime.timezone.utc).isoformat(timespec="seconds")
    return _NOW[1]


def _seeds(model):
    """The robots' and blocks' seeds of the model's values (kept while they are the same)."""
    context = model.context
    kept = model.__dict__.get("_seeds")
    if kept is not None and kept[0] is model.config and kept[1] is context and \
            kept[2] == context.version:
        return kept[3]
    robots = model.config.get("robots", {})
    seeds = {**{name: r["seed"] for name, r in robots.items() if "seed" in r},
             **{b.name: b.p.seed for b in model.blocks if hasattr(b.p, "seed")}}
    model.__dict__["_seeds"] = (model.config, context, context.version, seeds)
    return seeds


def _mode_meta(info):
    """meta.json's account of the mode: normal or accelerated, why, and for accelerated
    mode the compile time (0 when the compiled code came from the cache)."""
    mode = info.get("mode") or {"mode": "normal", "why": "simulated directly", "note": ""}
    return {k: v for k, v in mode.items() if k != "note" or v}


def _events_meta(events):
    """meta.json's account of the hybrid blocks' events (hybrid.md): the blocks that can have
    events (`events_block` in results.npz indexes this list) and the counts (a total of 0 and
    no blocks for a diagram without any)."""
    times, blocks, names = events
    counts = np.bincount(blocks, minlength=len(names)) if names else ()
    return {"event_blocks": names,
            "events": {"total": int(len(times)),
                       "per_block": {n: int(c) for n, c in zip(names, counts)}}}
