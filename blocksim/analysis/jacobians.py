"""Each block's linear model at the point: the exact Jacobian the block declares
(`Block.jacobian`), or central differences of its own methods with a step scaled to each
variable. The block's states are its continuous state, or the discrete state of a sampled
block; its inputs and outputs are every port, flattened in port order.

A difference has an error, truncation and the rounding of what the block computes; it is
estimated from a second difference with a step 1.618 times longer (its truncation is 1.6
times larger; not a power of 2, so the block's rounding is not in step with the first's)
and taken 4 times, plus the rounding of the values differenced (eps |f| / h). An estimate,
not a bound: a block whose own arithmetic cancels can hide rounding larger than it. An
entry within its estimate of 0 is 0 (its digits would be noise shown as a value, -1e-13
for a gain of 2e-9); the largest estimate, relative to the block's largest entry, is
stated with the model."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..block import Jacobian, Sample
from ..engine.conditional import Gates
from ..errors import DiagramError, SimulationError
from .evaluation import _named_faults

# central differences: the step h = EPS^(1/3) * max(1, |v|) balances truncation (h^2) and
# rounding (eps/h); a power of two, so that v + h and v - h are exact and a linear map's
# differences are exact too
STEP = np.finfo(float).eps ** (1 / 3)
ROUNDING = 4 * np.finfo(float).eps  # of a value the block computes, relative to it
SECOND_STEP = (1 + 5 ** 0.5) / 2  # the second difference's step, in first steps


@dataclass
class Part:
    """One block's linear model: ds = A s + B u, y = C s + D u over its `names` states, held
    (when they are the simulation's) at `indices` of the model's continuous state, or of its
    discrete state when `discrete`; `period` the block's sample period (None: continuous)."""
    block: object
    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    names: list
    indices: np.ndarray | None
    discrete: bool
    period: float | None
    exact: bool
    error: float = 0.0  # differenced: the largest error estimate, relative to the largest entry


def linear_part(model, block, t, pade):
    """The Part of `block` at the model's current values (see the module docstring)."""
    period = block.sample.period if isinstance(block.sample, Sample) else None
    cs, ds = model.state_slices[block.name]
    discrete = period is not None and cs.stop == cs.start
    own = ds if discrete else cs
    # a block a conditional subsystem does not run now (or a trigger runs, held between its
    # edges) is its gated methods: differences of nothing that moves
    declared = _declared(model, block, t, pade) if _running(model, block) else None
    if declared is None:
        if block.keeps_history:
            raise DiagramError(f"block '{block.name}' keeps a history of its input but "
                               "declares no Jacobian: it cannot be linearised",
                               file=model.file, block=block.name)
        (A, B, C, D), error = _differenced(model, block, t, discrete)
        states = np.arange(own.stop - own.start)
        return Part(block, A, B, C, D, _names(block.name, discrete, states),
                    own.start + states, discrete, period, exact=False, error=error)
    try:
        A, B, C, D = (np.atleast_2d(np.asarray(m, dtype=float)) for m in
                      (declared.A, declared.B, declared.C, declared.D))
    except (TypeError, ValueError):
        raise _faulty(model, block, "gave matrices that are not arrays of numbers") from None
    if declared.labels:
        names = [f"{block.name}.{label}" for label in declared.labels]
        indices, discrete = None, False
    else:
        states = np.arange(own.stop - own.start) if declared.states is None \
            else np.asarray(declared.states, dtype=int)
        names, indices = _names(block.name, discrete, states), own.start + states
    _check_shapes(model, block, A, B, C, D, len(names))
    return Part(block, A, B, C, D, names, indices, discrete, period, exact=True)


def declares_exact(model, block, t):
    """Whether `block` declares its exact Jacobian at the model's current values over its
    continuous states as the simulation has them (no Padé states, no subset of them)."""
    declared = _declared(model, block, t, None)
    if declared is None or declared.labels:
        return False
    cs, _ = model.state_slices[block.name]
    return declared.states is None or list(declared.states) == list(range(cs.stop - cs.start))


def _declared(model, block, t, pade):
    """`block.jacobian(pade)`: a Jacobian, or None (none declared). A failure on the
    point's values is the SimulationError a run gives (the block, the time); anything else
    it raises or gives is a fault of the block type (a plugin's): a DiagramError naming
    the block and the method."""
    try:
        with _named_faults(model, t):
            declared = block.jacobian(pade)
    except SimulationError:
        raise
    except Exception as e:  # noqa: BLE001 - whatever a block type's code raises
        raise _faulty(model, block, f"raised {type(e).__name__}: {e}") from None
    if declared is not None and not isinstance(declared, Jacobian):
        raise _faulty(model, block, f"gave a {type(declared).__name__}, not a "
                                    "blocksim.block.Jacobian")
    return declared


def _faulty(model, block, what):
    return DiagramError(f"block type '{block.type}' has a faulty jacobian(): it {what}",
                        file=model.file, block=block.name)


def _running(model, block):
    """Whether the block runs at the point: not inside a triggered subsystem, and every
    enabled subsystem around it enabled."""
    gate = model.gates.get(block.name)
    return gate is None or (gate.owner is None and all(model.xdbuf[i] > 0.0 for i in gate.flags))


def _names(block, discrete, states):
    return [f"{block}.{'xd' if discrete else 'x'}[{k}]" for k in states]


def _check_shapes(model, block, A, B, C, D, n):
    m = sum(0 if u is None else u.size for u in block.u)
    p = sum(y.size for y in block.y)
    want = {"A": (n, n), "B": (n, m), "C": (p, n), "D": (p, m)}
    for name, matrix in zip("ABCD", (A, B, C, D)):
        if matrix.size == 0 and 0 in want[name]:
            continue
        if matrix.shape != want[name]:
            raise _faulty(model, block, f"gave {name} of shape {matrix.shape}, expected "
                                        f"{want[name]}")


def _differenced(model, block, t, discrete):
    """Central differences of the block's outputs and of its state derivatives (next
    discrete states) with respect to its states and inputs, as (A, B, C, D), and their
    largest error estimate relative to the largest entry (entries within their estimate
    of 0 are 0; see the module docstring). The block is bound to copies of its inputs
    meanwhile, so nothing else sees the steps; every value is restored after."""
    states = block.xd if discrete else block.x
    inputs = block.u
    copies = tuple(None if u is None else np.array(u, dtype=float) for u in inputs)
    kept = [(a, a.copy()) for a in (block.x, block.dx, block.xd, block.y_flat) if a is not None]
    block.bind(copies, block.y, block.x, block.dx, block.xd)
    gates = Gates(model)  # its methods as bound to the copies (a behaviour's are made there)
    # as the block runs between events: its modes (an enable's decision) held, gated
    calcs = tuple(gates.node(n) for n in model.nodes
                  if n.block is block and n.group not in ("event", "triggered"))
    derivative = gates.method(block, "derivative") or (lambda t: None)
    update = gates.method(block, "update") or (lambda t: None)

    def evaluate():
        for calc in calcs:
            calc(t)
        if discrete:
            before = block.xd.copy()
            update(t)
            rates = block.xd.copy()
            block.xd[:] = before
        else:
            if states.size:
                derivative(t)
            rates = block.dx.copy()
        return np.concatenate([rates.ravel()] + [y.ravel() for y in block.y])

    variables = [states.reshape(-1)] + [c.reshape(-1) for c in copies if c is not None]
    try:
        with _named_faults(model, t):
            columns = [_column(v, k, evaluate) for v in variables for k in range(v.size)]
    finally:
        for array, value in kept:
            array[...] = value
        block.bind(inputs, block.y, block.x, block.dx, block.xd)
    n = states.size
    rows = n + sum(y.size for y in block.y)
    J, E = (np.array([c[i] for c in columns]).T.reshape(rows, len(columns)) for i in (0, 1))
    J = np.where(np.abs(J) <= E, 0.0, J)
    largest = np.abs(J).max(initial=0.0)
    error = float(E.max(initial=0.0) / largest) if largest else 0.0
    return (J[:n, :n], J[:n, n:], J[n:, :n], J[n:, n:]), error


def _column(v, k, evaluate):
    """d(evaluate())/d(v[k]) by a central difference, and its error estimate per element
    (see the module docstring)."""
    value = v[k]
    h = 2.0 ** np.round(np.log2(STEP * max(1.0, abs(value))))
    differences, size = [], 0.0
    for step in (h, h * SECOND_STEP):
        v[k] = value + step
        up, above = evaluate(), v[k]
        v[k] = value - step
        down, below = evaluate(), v[k]
        differences.append((up - down) / (above - below))  # the steps as stored
        size = np.maximum(size, np.maximum(np.abs(up), np.abs(down)))
    v[k] = value
    near, far = differences
    return near, 4 * np.abs(far - near) + ROUNDING * size / h
