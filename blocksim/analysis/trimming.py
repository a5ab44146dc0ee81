"""`blocksim trim`: an operating point of a diagram at its start time. Unknowns: the states
not fixed and the free inputs (constants added to signals); equations: every continuous
state's derivative is 0, every sampled block's state is at a fixed point, every fixed signal
has its value. Solved by least squares (scipy's Levenberg-Marquardt, or its trust region
method when there are more unknowns than equations: the solution nearest the start) with
the Jacobian the linearisation assembles (exact where the blocks declare it)."""
from __future__ import annotations

import numpy as np
import scipy.optimize

from ..engine.compiler.layout import indexed
from ..errors import AnalysisError, DiagramError
from ..language import expr
from ..language.diagram import parse_override
from .interconnect import interconnect
from .jacobians import linear_part
from .offsets import add_offset
from .operating import at_start, capture, moves_at_hits, worst
from .signals import full_shape, resolve, resolve_state

TOLERANCE = 1e-9  # the largest residual of a converged trim (units of dx/dt, of the signals)


def trim(model, fix=(), free=(), tol=TOLERANCE):
    """The OperatingPoint of a compiled model (changed in place: it ends at the point).
    `fix`: [(path, value)], a state `BLOCK.x[i:j]` / `BLOCK.xd[...]` held at the value, or a
    signal that must have it; `free`: signals (as `--input` of linearize) whose added
    constants are unknowns. Raises AnalysisError when it does not converge, with the point
    reached attached as `error.point`."""
    problem = _Problem(model, fix, free)
    z = problem.start()
    # a trial step may leave a function's domain (sqrt of a negative level): the solver
    # rejects a non-finite residual, so numpy need not warn about it
    with np.errstate(all="ignore"):
        r = problem.residual(z)
        if not np.all(np.isfinite(r)):
            raise AnalysisError(f"the model is not finite at the starting point: "
                                f"{worst(problem.names, np.nan_to_num(r, nan=np.inf))}",
                                hint="start elsewhere: --set the blocks' initial values")
        if z.size and np.max(np.abs(r), initial=0.0) > tol:
            solution = scipy.optimize.least_squares(
                problem.residual, z, jac=problem.jacobian, x_scale="jac",
                method="lm" if r.size >= z.size else "trf", xtol=1e-15, ftol=1e-15,
                gtol=1e-15, max_nfev=100 * (z.size + 1))
            r = problem.residual(solution.x)  # the model is left at the solution
    size = float(np.max(np.abs(r), initial=0.0))
    point = capture(model, problem.t, problem.free_values(), size, size <= tol)
    if not point.converged:
        error = AnalysisError(
            f"trim did not converge: residual {size:.3g} (at most {tol:g} wanted); the "
            f"largest: {worst(problem.names, r)}",
            hint="free an input that can hold the point (--free BLOCK.PORT), fix fewer "
                 "states, or start nearer (--set the blocks' x0)")
        error.point = point
        raise error
    return point


class _Problem:
    """The trim's equations on a model: unknowns z (the states not fixed, then the free
    inputs' elements), residuals (dx/dt, x[k+1] - x[k], fixed signals minus their values)
    and their Jacobian from the blocks' linear models joined along the wires."""

    def __init__(self, model, fix, free):
        self.model = model
        self.free = [resolve(model, text, "--free") for text in free]
        self.added = [add_offset(model, s) for s in self.free]
        self.held, self.specs = _fixes(model, fix)
        self.evaluator = at_start(model)
        self.t = self.evaluator.t
        self.parts = [linear_part(model, b, self.t, pade=0) for b in model.blocks
                      if _moves(model, b)]
        # the parts' states in order; the rows are the model's own (not a Padé state)
        self.places = [(name, p.discrete, k) for p in self.parts
                       for name, k in zip(p.names, p.indices if p.indices is not None
                                          else [None] * len(p.names))]
        self.own = [i for i, (_, _, k) in enumerate(self.places) if k is not None]
        self.rows = [self.places[i] for i in self.own]
        fixed = {(part.discrete, int(_base(model, part) + k))
                 for part, _ in self.held for k in part.indices}
        self.unknown = [i for i in self.own if self.places[i][1:] not in fixed]
        self.inputs = [(indexed(a, s.index).reshape(-1), j)
                       for a, s in zip(self.added, self.free) for j in range(s.size)]
        self.targets = np.concatenate([np.ravel(v) for _, v in self.specs] or [np.zeros(0)])
        self.names = [name for name, _, _ in self.rows] + [
            s.text for s, _ in self.specs for _ in range(s.size)]

    def start(self):
        """The fixed states written; z at the model's initial point (free inputs 0)."""
        for part, value in self.held:
            self._buffer(part.discrete)[_base(self.model, part) + part.indices] = value
        return np.array([self._buffer(self.places[i][1])[self.places[i][2]]
                         for i in self.unknown] + [view[j] for view, j in self.inputs],
                        dtype=float)

    def _buffer(self, discrete):
        return self.model.xdbuf if discrete else self.model.xbuf

    def write(self, z):
        for i, v in zip(self.unknown, z):
            _, discrete, k = self.places[i]
            self._buffer(discrete)[k] = v
        for (view, j), v in zip(self.inputs, z[len(self.unknown):]):
            view[j] = v

    def residual(self, z):
        self.write(z)
        ev, model = self.evaluator, self.model
        ev.outputs()
        ev.settle()
        rates = ev.rates()
        after = ev.next_discrete() - model.xdbuf
        measured = np.concatenate([np.ravel(indexed(model.outputs[s.ends[0]], s.index))
                                   if s.output else np.ravel(_input_value(model, s))
                                   for s, _ in self.specs] or [np.zeros(0)])
        return np.concatenate([[after[k] if d else rates[k] for _, d, k in self.rows],
                               measured - self.targets])

    def jacobian(self, z):
        self.residual(z)
        now = [linear_part(self.model, p.block, self.t, pade=0) for p in self.parts]
        A, B, C, D = interconnect(self.model, now, self.free, [s for s, _ in self.specs], [])
        n = len(self.places)
        J = np.vstack([np.hstack([A, B])[self.own], np.hstack([C, D])])
        for r, i in enumerate(self.own):
            if self.places[i][1]:
                J[r, i] -= 1.0  # x[k+1] - x[k]
        return J[:, self.unknown + list(range(n, n + len(self.inputs)))]

    def free_values(self):
        return {s.text: np.array(indexed(a, s.index)) for s, a in zip(self.free, self.added)}


def _base(model, part):
    """Where a StatePart's block's state starts in the model's buffer."""
    return model.state_slices[part.block][1 if part.discrete else 0].start


def _moves(model, block):
    """Whether a block takes part: it has an input, or a state that moves, and an output or
    a state (a sink moves nothing)."""
    cs = model.state_slices[block.name][0]
    return cs.stop > cs.start or moves_at_hits(model, block) or (
        any(u is not None for u in block.u) and bool(block.y))


def _input_value(model, signal):
    block, port = signal.ends[0]
    owner = next(b for b in model.blocks if b.name == block)
    return indexed(owner.u[list(model.ports[block][0]).index(port)], signal.index)


def _fixes(model, fix):
    """([(StatePart, value)], [(Signal, value)]) of the --fix items (path, value). An element
    fixed twice is refused: which value was meant is the user's to say."""
    held, specs, seen = [], [], {}
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
        for element, name in _elements(model, part, target):
            written = item if isinstance(item, str) else f"{path}={raw}"
            if element in seen:
                raise DiagramError(f"--fix: {name} is fixed twice ({seen[element]} and "
                                   f"{written}): give each element one value", file="--fix")
            seen[element] = written
        (held if part is not None else specs).append((target, value))
    return held, specs


def _elements(model, part, signal):
    """What a --fix holds, element by element: (key, name) with equal keys when two fixes
    hold the same state element or the same element of a signal (a record name too)."""
    if part is not None:
        kind = "xd" if part.discrete else "x"
        return [((part.block, kind, int(k)), f"{part.block}.{kind}[{int(k)}]")
                for k in part.indices]
    full = full_shape(model, signal)
    return [((signal.ends, int(k)), name)
            for k, name in zip(signal.flat(full), signal.element_names(full))]
