"""The `simulation:` section: settings with their defaults, and the budget they imply.

Every problem goes into `problems` (a `Problems`); a setting that fails keeps its default so
that the other checks still run.
"""
from __future__ import annotations

import math
import sys

import numpy as np

from ...block import Sample
from ...errors import DiagramError
from ...language import expr
from ...language.diagram import bool_hint, suggest
from ..solvers import FIXED_STEP, SOLVERS
from .model import MAX_STEPS, Settings

MODES = ("normal", "accelerated", "auto")


def simulation_settings(sim, evaluate, problems, file):
    """The Settings of a diagram's `simulation:` mapping; `evaluate(raw)` evaluates a value
    with the top-level parameters."""
    def num(key, default, positive=True):
        if key not in sim:
            return default
        v = sim[key]
        if isinstance(v.raw, bool):  # YAML reads yes/no/on/off/true/false as booleans
            problems.add(v.loc.error(f"simulation.{key}: expected a number, got the boolean "
                                     f"{str(v.raw).lower()}"))
            return default
        try:
            x = np.asarray(evaluate(v.raw), dtype=float)
            if x.size != 1:
                raise ValueError(f"expected a single number, got shape {x.shape}")
            x = float(x.reshape(()))
        except expr.Unavailable:  # a parameter it uses failed: reported there
            return default
        except (expr.ExprError, ValueError, TypeError) as e:
            problems.add(v.loc.error(f"simulation.{key}: {e}"))
            return default
        if not math.isfinite(x) or (positive and x <= 0):
            problems.add(v.loc.error(f"simulation.{key} must be a {'positive ' if positive else ''}"
                                     f"finite number, got {x:g}"))
            return default
        return x

    start = num("start", 0.0, positive=False)
    stop = None
    if "stop" not in sim:
        problems.add(DiagramError("simulation.stop is required", file=file,
                                  hint="add `simulation: {stop: 10}` (the end time, in s)"))
    else:
        stop = num("stop", None, positive=False)
        if stop is not None and stop <= start:
            problems.add(sim["stop"].loc.error(f"simulation.stop ({stop:g}) must be after start ({start:g})"))
            stop = None
        elif stop is not None and not math.isfinite(stop - start):
            problems.add(sim["stop"].loc.error(
                f"simulation.stop - start = {stop:g} - ({start:g}) is more than the largest "
                f"number, {sys.float_info.max:.4g}: the run's length overflows",
                hint="shorten the run"))
            stop = None
    timed = stop is not None  # else the settings that depend on the span are not checked
    if not timed:
        stop = start + 1.0  # to go on checking the others with (start + 1 may equal start)
    mode = _choice(sim, "mode", MODES, "auto", problems)
    solver = "rk45"
    if "solver" in sim:
        v = sim["solver"]
        if v.raw not in SOLVERS:
            problems.add(v.loc.error(f"unknown solver {v.raw!r}{suggest(v.raw, SOLVERS)}",
                                     hint=bool_hint(v.raw) or "solvers: " + ", ".join(SOLVERS)))
        else:
            solver = v.raw
    span = stop - start
    max_events = num("max_consecutive_events", 1000)
    if max_events != int(max_events):
        problems.add(sim["max_consecutive_events"].loc.error(
            f"simulation.max_consecutive_events must be a whole number, got {max_events:g}"))
    settings = Settings(start=start, stop=stop, solver=solver,
                        rtol=num("rtol", 1e-3), atol=num("atol", 1e-6),
                        max_step=num("max_step", span / 50), step=num("step", span / 1000),
                        output_interval=num("output_interval", None),
                        refine=_refine(sim, num, problems),
                        event_tol=num("event_tol", 1e-10),
                        max_consecutive_events=int(max_events), mode=mode)
    max_steps = num("max_steps", MAX_STEPS)
    if max_steps != int(max_steps):
        problems.add(sim["max_steps"].loc.error(
            f"simulation.max_steps must be a whole number, got {max_steps:g}"))
    else:
        settings.max_steps = int(max_steps)
        if timed:
            _check_budget(settings, sim, problems, file)
    return settings


def _choice(sim, key, choices, default, problems):
    """A setting that names one of `choices` (default when absent or wrong)."""
    if key not in sim:
        return default
    v = sim[key]
    if v.raw in choices:
        return v.raw
    problems.add(v.loc.error(f"simulation.{key}: expected one of {', '.join(choices)}, got "
                             f"{v.raw!r}{suggest(str(v.raw), choices)}", hint=bool_hint(v.raw)))
    return default


def _refine(sim, num, problems):
    """simulation.refine: a whole number >= 1 of result rows per solver step; it adds rows
    between the steps, output_interval puts them on a grid instead: not both."""
    k = num("refine", 1)
    if k != int(k):
        problems.add(sim["refine"].loc.error(
            f"simulation.refine must be a whole number of rows per step, got {k:g}"))
        return 1
    if k > 1 and "output_interval" in sim:
        problems.add(sim["refine"].loc.error(
            "simulation.refine adds rows between the solver's steps, output_interval records "
            "on a grid of its own instead: use one of them",
            hint="drop refine to keep the grid, or output_interval to keep every step"))
        return 1
    return int(k)


def _check_budget(s, sim, problems, file):
    """Refuse settings that imply more solver steps or result rows than simulation.max_steps
    (a grid of 10^15 rows would try to allocate petabytes; a step of 1e-12 s never ends), and
    steps or intervals given below the time's resolution."""
    span = s.stop - s.start
    fixed = s.solver in FIXED_STEP
    for key in ("step" if fixed else "max_step", "output_interval"):
        refused = key in sim and getattr(s, key) and _unresolved(getattr(s, key), s)
        if refused:
            problems.add(sim[key].loc.error(f"simulation.{key}: {refused[0]}", hint=refused[1]))
    implied = [("step", "steps of the fixed-step solver", span / s.step)] if fixed else \
        [("max_step", "steps at least (no step is longer than max_step)", span / s.max_step)]
    if s.output_interval:
        implied.append(("output_interval", "result rows", span / s.output_interval + 1))
    if s.refine > 1:  # rows per step times the fewest steps there can be
        implied.append(("refine", "result rows at least", s.refine * implied[0][2]))
    for key, what, count in implied:
        if count > s.max_steps:
            where = sim.get(key) or sim.get("stop")  # a default comes from the stop time
            message = (f"simulation.{key} = {getattr(s, key):g} over {span:g} s means "
                       f"{count:.3g} {what}, more than simulation.max_steps = {s.max_steps:,}")
            fewer = "a smaller" if key == "refine" else "a larger"  # rows per step vs spacing
            hint = f"use {fewer} {key}, or raise simulation.max_steps if you mean it"
            problems.add(where.loc.error(message, hint=hint) if where else
                         DiagramError(message, file=file, hint=hint))


def _unresolved(seconds, settings):
    """(message, hint) refusing a length of time below the time's resolution, the spacing
    of floats at the run's largest |t| (3.6e-15 s at t = 20: 20 + 1e-15 is 20), or None."""
    largest = max(abs(settings.start), abs(settings.stop))
    spacing = math.ulp(largest)
    if seconds >= spacing:
        return None
    return (f"{seconds:g} s is below the time's resolution: near t = {largest:g} floats are "
            f"{spacing:.3g} s apart, so no time there is {seconds:g} s after another",
            f"use at least {spacing:.3g} s, or times nearer 0 (simulation.start and stop)")


def check_rates(settings, blocks, events, problems, spec):
    """Refuse discrete rates and source switches that would stop the solver more often than
    simulation.max_steps times (each is an event the solver must land on), and lengths of
    time blocks measure off from t (`durations()`, sample periods) below its resolution."""
    span = settings.stop - settings.start
    for block in blocks:
        bspec = spec.blocks[block.name]
        for param, seconds in block.durations().items():
            refused = _unresolved(seconds, settings)
            if refused:
                loc = bspec.params[param].loc if param in bspec.params else bspec.loc
                problems.add(loc.error(refused[0], block=block.name, param=param,
                                       hint=refused[1]))
        if not isinstance(block.sample, Sample):
            continue
        period = block.sample.period
        refused = _unresolved(period, settings)
        if refused:
            problems.add(bspec.loc.error("sample period " + refused[0], block=block.name,
                                         hint=refused[1]))
        elif span / period > settings.max_steps:
            problems.add(bspec.loc.error(
                f"sample period {period:g} s over {span:g} s means {span / period:.3g} sample "
                f"hits, more than simulation.max_steps = {settings.max_steps:,}",
                block=block.name,
                hint="use a longer period, or raise simulation.max_steps if you mean it"))
    if len(events) > settings.max_steps:
        problems.add(DiagramError(
            f"the sources switch {len(events):,} times, more than simulation.max_steps = "
            f"{settings.max_steps:,}", file=spec.file,
            hint="raise simulation.max_steps if you mean it"))

