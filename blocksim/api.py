"""The Python entry points: `load` (validated, compiled, not simulated) and `run`."""
from __future__ import annotations

import contextlib
import datetime
from pathlib import Path

from .compiler import compile_diagram
from .diagram import load_diagram
from .errors import OutputError
from .results import (Result, check_out_dir, finalize_sinks, json_to, npz_to, run_files,
                      versions)
from .simulator import simulate


def _override_items(overrides):
    if not overrides:
        return []
    if isinstance(overrides, dict):
        return list(overrides.items())
    return list(overrides)


def load(path, overrides=None, *, library=None):
    """Load, validate and compile a diagram file. `overrides` is a dict of dotted paths to
    values ({"simulation.stop": 2}) or a list of "path=value" strings (as the CLI's --set).
    Raises DiagramError / DiagramErrors listing every problem."""
    spec = load_diagram(path, _override_items(overrides))
    return compile_diagram(spec, library)


def run(path, overrides=None, *, out=None, plots=False, progress=None, library=None):
    """Load and simulate a diagram; returns a Result (t and the `record:` signals).

    Files are written only when `out` is given (results.npz, meta.json, and with
    `plots=True` the sinks' figures). When the simulation fails or is interrupted, what was
    recorded so far is still written (marked incomplete) and the exception is re-raised
    with the partial Result attached as `error.result`.
    """
    model = path if not isinstance(path, (str, Path)) else load(path, overrides, library=library)
    return execute(model, out=out, plots=plots, progress=progress)


def execute(model, *, out=None, plots=False, progress=None):
    """Simulate a compiled Model and write its run directory (see `run`). The directory is
    checked before simulating (DiagramError); results that cannot be written raise
    OutputError with the Result attached as `error.result`."""
    if out is not None:
        out = Path(out)
        check_out_dir(out)
    t, data, info = simulate(model, progress)
    error = info["error"]
    meta = _meta(model, t, info)
    try:
        files = run_files(out) if out is not None else contextlib.nullcontext((None, None))
        with files as (npz, meta_json):
            if npz is not None:
                npz_to(npz, t, data)
            messages, reports = finalize_sinks(model, t, info["sink_data"], out,
                                               plots and out is not None, info["complete"])
            meta["blocks"] = reports
            if meta_json is not None:
                json_to(meta_json, meta)
    except OutputError as e:
        e.result = Result(t, data, meta)
        raise
    result = Result(t, data, meta, messages)
    if error is not None:
        error.result = result
        raise error
    return result


def _meta(model, t, info):
    s = model.settings
    error = info["error"]
    status = "complete" if error is None else (
        "interrupted" if isinstance(error, KeyboardInterrupt) else "failed")
    robots = model.config.get("robots", {})
    return {
        "name": model.name,
        "description": model.description,
        "file": model.file,
        "complete": error is None,
        "status": status,
        "error": None if error is None else (str(error) or type(error).__name__),
        "end_time": info["end_time"],
        "rows": int(len(t)),
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "wall_time": info["wall_time"],
        "solver": {"name": s.solver, "rtol": s.rtol, "atol": s.atol, "max_step": s.max_step,
                   "step": s.step, "output_interval": s.output_interval, **info["stats"]},
        "configuration": model.config,
        "seeds": {name: r["seed"] for name, r in robots.items() if "seed" in r},
        "versions": versions(),
    }
