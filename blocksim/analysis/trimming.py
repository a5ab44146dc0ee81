"""`blocksim trim`: an operating point of a diagram at its start time. Unknowns: the states
not fixed and the free inputs (constants added to signals); equations: every continuous
state's derivative is 0, every sampled block's state is at a fixed point, every fixed signal
has its value. Solved by least squares (scipy's Levenberg-Marquardt, or its trust region
method when there are more unknowns than equations: the solution nearest the start) with
the Jacobian the linearisation assembles (exact where the blocks declare it)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.optimize

from ..block import Sample
from ..engine.compiler.layout import indexed
from ..errors import AnalysisError, DiagramError
from ..language import expr
from ..language.diagram import parse_override
from .interconnect import interconnect
from .jacobians import linear_part
from .offsets import add_offset
from .operating import at_start, capture, worst
from .signals import resolve, resolve_state

TOLERANCE = 1e-9  # the largest residual of a converged trim (units of dx/dt, of the signals)


@dataclass
class _Unknowns:
    """Where the unknowns live: model state elements ((discrete, index) pairs) and free
    input elements (views of the offsets' values)."""
    states: list
    inputs: list  # (flat view, element) pairs


def trim(model, fix=(), free=(), tol=TOLERANCE):
    """The OperatingPoint of a compiled model (changed in place: it ends at the point).
    `fix`: [(path, value)], a state `BLOCK.x[i:j]` / `BLOCK.xd[...]` held at the value, or a
    signal that must have it; `free`: signals (as `--input` of linearize) whose added
    constants are unknowns. Raises AnalysisError when it does not converge, with the point
    reached attached as `error.point`."""
    free_signals = [resolve(model, text, "--free") for text in free]
    added = [add_offset(model, s) for s in free_signals]
    held, specs = _fixes(model, fix)
    evaluator = at_start(model)
    t = evaluator.t
    for part, value in held:
        buffer = model.xdbuf if part.discrete else model.xbuf
        base = model.state_slices[part.block][1 if part.discrete else 0].start
        buffer[base + part.indices] = value
    parts = [linear_part(model, b, t, pade=0) for b in model.blocks if _moves(model, b)]
    # the parts' states in order; the model's own ones (not a Padé state) are the rows
    places = [(name, p.discrete, k) for p in parts
              for name, k in zip(p.names, p.indices if p.indices is not None
                                 else [None] * len(p.names))]
    own = [i for i, (_, _, k) in enumerate(places) if k is not None]
    rows = [places[i] for i in own]
    fixed = {(part.discrete, int(model.state_slices[part.block][1 if part.discrete else 0].start + k))
             for part, _ in held for k in part.indices}
    unknown = [i for i in own if places[i][1:] not in fixed]
    unknown_states = [places[i][1:] for i in unknown]
    inputs = [(indexed(a, s.index).reshape(-1), j) for a, s in zip(added, free_signals)
              for j in range(s.size)]
    targets = np.concatenate([np.ravel(v) for _, v in specs] or [np.zeros(0)])

    def write(z):
        for (discrete, k), v in zip(unknown_states, z):
            (model.xdbuf if discrete else model.xbuf)[k] = v
        for (view, j), v in zip(inputs, z[len(unknown_states):]):
            view[j] = v

    def residual(z):
        write(z)
        evaluator.outputs()
        evaluator.settle()
        rates = evaluator.rates()
        after = evaluator.next_discrete() - model.xdbuf
        measured = np.concatenate([np.ravel(indexed(model.outputs[s.ends[0]], s.index))
                                   if s.output else np.ravel(_input_value(model, s))
                                   for s, _ in specs] or [np.zeros(0)])
        return np.concatenate([[after[k] if d else rates[k] for _, d, k in rows],
                               measured - targets])

    def jacobian(z):
        residual(z)
        now = [linear_part(model, p.block, t, pade=0) for p in parts]
        A, B, C, D = interconnect(model, now, free_signals, [s for s, _ in specs], [])
        n = len(places)
        J = np.vstack([np.hstack([A, B])[own], np.hstack([C, D])])
        for r, i in enumerate(own):
            if places[i][1]:
                J[r, i] -= 1.0  # x[k+1] - x[k]
        return J[:, unknown + list(range(n, n + len(inputs)))]

    z0 = np.array([(model.xdbuf if d else model.xbuf)[k] for d, k in unknown_states]
                  + [view[j] for view, j in inputs], dtype=float)
    names = [name for name, _, _ in rows] + [s.text for s, _ in specs for _ in range(s.size)]
    # a trial step may leave a function's domain (sqrt of a negative level): the solver
    # rejects a non-finite residual, so numpy need not warn about it
    with np.errstate(all="ignore"):
        r0 = residual(z0)
        if not np.all(np.isfinite(r0)):
            raise AnalysisError(f"the model is not finite at the starting point: "
                                f"{worst(names, np.nan_to_num(r0, nan=np.inf))}",
                                hint="start elsewhere: --set the blocks' initial values")
        if z0.size and np.max(np.abs(r0), initial=0.0) > tol:
            method = "lm" if r0.size >= z0.size else "trf"
            solution = scipy.optimize.least_squares(
                residual, z0, jac=jacobian, method=method, x_scale="jac", xtol=1e-15,
                ftol=1e-15, gtol=1e-15, max_nfev=100 * (z0.size + 1))
            z0 = solution.x
        r = residual(z0)
    size = float(np.max(np.abs(r), initial=0.0))
    values = {s.text: np.array(indexed(a, s.index)) for s, a in zip(free_signals, added)}
    point = capture(model, t, values, size, size <= tol)
    if not point.converged:
        error = AnalysisError(
            f"trim did not converge: residual {size:.3g} (at most {tol:g} wanted); the "
            f"largest: {worst(names, r)}",
            hint="free an input that can hold the point (--free BLOCK.PORT), fix fewer "
                 "states, or start nearer (--set the blocks' x0)")
        error.point = point
        raise error
    return point


def _moves(model, block):
    """Whether a block takes part: it has an input, or a state that moves, and an output or
    a state (a sink moves nothing)."""
    cs, ds = model.state_slices[block.name]
    states = cs.stop > cs.start or (isinstance(block.sample, Sample) and ds.stop > ds.start)
    return states or (any(u is not None for u in block.u) and bool(block.y))


def _input_value(model, signal):
    block, port = signal.ends[0]
    owner = next(b for b in model.blocks if b.name == block)
    return indexed(owner.u[list(model.ports[block][0]).index(port)], signal.index)


def _fixes(model, fix):
    """([(StatePart, value)], [(Signal, value)]) of the --fix items (path, value)."""
    held, specs = [], []
    for item in fix:
        path, raw = parse_override(item, via="--fix") if isinstance(item, str) else item
        try:
            value = np.asarray(expr.evaluate(raw, {}), dtype=float)
        except (expr.ExprError, ValueError, TypeError) as e:
            raise DiagramError(f"--fix {path}: {e}", file="--fix") from None
        part = resolve_state(model, path, "--fix")
        target = resolve(model, path, "--fix") if part is None else part
        size = part.indices.size if part is not None else target.size
        if value.size not in (1, size):
            raise DiagramError(f"--fix {path}: {size} values wanted, got {value.size}",
                               file="--fix")
        value = np.broadcast_to(value.ravel() if value.size > 1 else value, (size,)).copy()
        (held if part is not None else specs).append((target, value))
    return held, specs
