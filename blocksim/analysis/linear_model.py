"""`blocksim linearize`: the linear model of a diagram from perturbations of chosen signals to
chosen measurements around a point (the initial state, an operating point, or the state a
run reaches at a time), with loops opened where asked, as a python-control StateSpace with
named states, inputs and outputs."""
from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass

import numpy as np

from ..engine.simulator import simulate
from ..errors import AnalysisError, DiagramError
from ..language.diagram import suggest
from .domains import choose, convert
from .evaluation import Evaluator
from .interconnect import interconnect
from .jacobians import linear_part
from .operating import (EQUILIBRIUM_TOL, at_start, equilibrium_rows, residuals, start_from,
                        worst)
from .paths import check_loops, path_blocks
from .signals import full_shape, resolve


MAX_PADE = 10  # the highest order of a delay's Padé approximation (see _check_options)


@dataclass
class Linearization:
    """A linear model and how it was made. Names are blocksim's (`Motor.x[0]`, `Error.u1`);
    `system` is the python-control StateSpace, whose signal names write '.' as '_'
    (python-control keeps '.' for `system.signal`)."""
    system: object
    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    states: list
    inputs: list
    outputs: list
    dt: float | None
    time: float
    point: str  # 'the initial state', 'the operating point FILE', 'the state the run reaches'
    residual: float
    worst: str  # the largest equilibrium residuals by name ('' when none)
    exact: list  # blocks linearised by their declared Jacobians
    differenced: list  # blocks linearised by central differences
    difference_error: float  # their largest error estimate, relative to a block's largest entry
    modes: list  # (block, its mode in words) of the hybrid blocks linearised
    domain: str  # continuous or discrete, and how it was chosen
    converted: list  # blocks converted to the model's domain
    opened: list


def linearization(model, inputs, outputs, opened=(), at=None, op=None, pade=None,
                  period=None, states=None):
    """The Linearization of a compiled model (changed in place: evaluated at the point).
    `at`: linearise the run's state at time `at` (no equilibrium needed); `op`: an
    OperatingPoint or its file; neither: the initial state, which must be an equilibrium.
    `states`: the order of the states (see `state_order`), None: the diagram's."""
    _check_options(model, at, op, pade, period)
    ins = [resolve(model, text, "--input") for text in inputs]
    outs = [resolve(model, text, "--output") for text in outputs]
    cuts = [resolve(model, text, "--open", want="input") for text in opened]
    if not ins or not outs:
        raise DiagramError("give at least one --input and one --output", file="linearize",
                           hint="e.g. --input Force.y --output Position.y")
    check_loops(model, cuts)
    on_path = path_blocks(model, ins, outs, cuts)
    blocks = [b for b in model.blocks if b.name in on_path]
    delays = [b.name for b in blocks if b.keeps_history]
    if delays and pade is None:
        raise DiagramError(f"{', '.join(delays)} delay{'s' if len(delays) == 1 else ''} the "
                           "signal: a linear model needs the order of a Padé approximation "
                           "of the delay", file="--pade", hint="give --pade N, e.g. --pade 3")
    evaluator, point = _point(model, at, op)
    rows = equilibrium_rows(model, evaluator.t)
    values = residuals(evaluator, rows) if rows else np.zeros(0)
    names = [r[0] for r in rows]
    broken = [f"{name} = {v}" for name, v in zip(names, values) if not np.isfinite(v)]
    if broken:
        raise AnalysisError(
            f"{point} of {model.name} is not a point to linearise at: the state derivatives "
            f"are not finite ({', '.join(broken[:5])}{', ...' if len(broken) > 5 else ''})",
            hint="a function outside its domain there (sqrt or log of a negative value, a "
                 "division by zero)? --set the initial values elsewhere, or use --op or --at")
    residual = float(np.max(np.abs(values), initial=0.0))
    if at is None and residual > EQUILIBRIUM_TOL:
        raise AnalysisError(
            f"{point} of {model.name} is not an equilibrium: residual {residual:.3g} (the "
            f"largest: {worst(names, values)}); a linear model there holds only along the "
            "trajectory", hint="find an operating point with `blocksim trim` (then --op "
            "FILE), or linearise there anyway with --at T")
    parts = [linear_part(model, b, evaluator.t, pade) for b in blocks]
    broken = [p.block.name for p in parts
              if not all(np.all(np.isfinite(m)) for m in (p.A, p.B, p.C, p.D))]
    if broken:
        raise AnalysisError(f"the Jacobians of {', '.join(broken)} are not finite at "
                            f"{point} (a signal outside a function's domain there?)")
    dt, domain = choose(parts, period)
    parts, converted = convert(parts, dt, model.file)
    A, B, C, D = interconnect(model, parts, ins, outs, cuts)
    state_names = [name for p in parts for name in p.names]
    if states is not None:
        order = state_order(state_names, states)
        A, B, C = A[np.ix_(order, order)], B[order], C[:, order]
        state_names = [state_names[k] for k in order]
    in_names = _element_names(model, ins)
    out_names = _element_names(model, outs)
    return Linearization(
        system=_state_space(model.name, A, B, C, D, dt, state_names, in_names, out_names),
        A=A, B=B, C=C, D=D, states=state_names, inputs=in_names, outputs=out_names, dt=dt,
        time=evaluator.t, point=point, residual=residual, worst=worst(names, values),
        exact=[p.block.name for p in parts if p.exact and _has_work(p)],
        differenced=[p.block.name for p in parts if not p.exact and _has_work(p)],
        difference_error=max((p.error for p in parts if not p.exact), default=0.0),
        modes=[(b.name, b.mode_text() or f"discrete state {b.xd.tolist()}")
               for b, _ in model.hybrid if b.name in on_path],
        domain=domain, converted=converted, opened=[c.text for c in cuts])


def state_order(names, wanted):
    """Where each state of `wanted` is among `names` (the model's states): each item names a
    state as printed (`Motor.x[0]`, `Delay.pade[2]`) or a block, standing for its states in
    their order; an item may hold several, between commas or spaces ('X, Xd Th'), as the
    command line and Python take them alike. Every state once: DiagramError (naming
    --states) for a name that is none, a state named twice and one left out."""
    wanted = [name for item in wanted for name in re.split(r"[,\s]+", item) if name]
    blocks = {}
    for k, name in enumerate(names):
        blocks.setdefault(name.split(".", 1)[0], []).append(k)
    where = {name: k for k, name in enumerate(names)}
    order, named = [], {}
    for item in wanted:
        found = [where[item]] if item in where else blocks.get(item)
        if found is None:
            raise DiagramError(f"--states: the model has no state or block with states "
                               f"'{item}'{suggest(item, list(blocks) + names)}",
                               file="--states", hint="its states: " + _listed(names))
        for k in found:
            if k in named:
                raise DiagramError(f"--states: {names[k]} is named twice ({named[k]} and "
                                   f"{item}): name each state once", file="--states")
            named[k] = item
        order += found
    left = [name for k, name in enumerate(names) if k not in named]
    if left:
        raise DiagramError(f"--states: the order leaves out {_listed(left)}: name all "
                           f"{len(names)} states, or none for the diagram's order",
                           file="--states")
    return order


def _listed(names, count=12):
    return ", ".join(names[:count]) + (f", ... ({len(names)} in all)" if len(names) > count
                                       else "")


def _check_options(model, at, op, pade, period):
    if at is not None and op is not None:
        raise DiagramError("--at and --op choose the point two ways: give one", file="--at")
    if at is not None and not (np.isfinite(at) and at >= model.settings.start):
        raise DiagramError(f"--at {at:g}: the time must be a number from the start, "
                           f"{model.settings.start:g} s, on", file="--at")
    if pade is not None and (int(pade) != pade or not 0 <= pade <= MAX_PADE):
        raise DiagramError(
            f"--pade {pade}: the order is a whole number from 0 to {MAX_PADE}: higher orders "
            "cluster the approximation's poles so tightly that rounding moves them (order 20 "
            "keeps about 6 digits of them, order 30 one), as MATLAB's pade warns; order 10 "
            "already follows the delay's phase closely up to 5/delay rad/s",
            file="--pade")
    if period is not None and not (np.isfinite(period) and period > 0):
        raise DiagramError(f"--period {period:g}: the period must be positive", file="--period")


def _point(model, at, op):
    """(Evaluator at the point, what the point is)."""
    if op is not None:
        start_from(model, op)
        where = f" {op}" if isinstance(op, (str, os.PathLike)) else ""
        return at_start(model), f"the operating point{where}"
    if at is None:
        return at_start(model), "the initial state"
    start = model.settings.start
    if at == start:
        return at_start(model), "the run's start"
    model.settings = dataclasses.replace(model.settings, stop=float(at))
    _, _, info = simulate(model)
    if info["error"] is not None:
        raise info["error"]
    evaluator = Evaluator(model, float(at), steady=False)
    evaluator.outputs()
    return evaluator, "the state the run reaches"


def _has_work(part):
    """A part with something to linearise: inputs or states (not a source)."""
    return part.names or part.D.size


def _element_names(model, signals):
    return [name for s in signals for name in s.element_names(full_shape(model, s))]


def _state_space(name, A, B, C, D, dt, states, inputs, outputs):
    import control
    return control.ss(A, B, C, D, dt if dt is not None else 0, states=_labels(states),
                      inputs=_labels(inputs), outputs=_labels(outputs), name=name)


def _labels(names):
    """python-control's signal names: '.' written '_'."""
    return [n.replace(".", "_") for n in names]
