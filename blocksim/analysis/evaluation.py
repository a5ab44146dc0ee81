"""A compiled model evaluated at a point of our choosing, outside a run: its outputs, the
hybrid blocks' modes there, the state derivatives and the discrete blocks' next states.

At an operating point every signal is constant, so the discrete blocks compute their outputs
as at a sample hit and a block that keeps a history (a transport delay) outputs its input
(`steady`). Evaluating leaves the model's buffers at the point: the blocks' views then show
its values, which is where their Jacobians are taken.
"""
from __future__ import annotations

import contextlib

import numpy as np

from ..block import Sample, overrides
from ..engine.conditional import Gates
from ..engine.diagnosis import BLOCK_FAULTS, block_failure
from ..errors import SimulationError

MAX_ROUNDS = 100  # mode decisions at one point before giving up (as the simulator's events)


class Evaluator:
    """Evaluate `model` at time t (see the module docstring). The plan follows the model's
    nodes as they are when it is built (offsets added before are included)."""

    def __init__(self, model, t, steady=True):
        self.model, self.t, self.steady = model, t, steady
        # the blocks of a conditional subsystem as in a run: an enabled one's while its
        # gate is open (its flag decided here), a triggered one's not at all (held)
        gates = Gates(model)
        nodes = [n for n in model.nodes if n.group != "triggered"] if steady else \
            [n for n in model.nodes if n.group == "continuous"]
        self.plan = tuple(_pass_through(n.block) if steady and n.block.keeps_history
                          else gates.node(n) for n in nodes)
        # a delay's input may come after it in the order: one more pass per delay
        self.passes = 1 + sum(b.keeps_history for b in model.blocks) if steady else 1
        self.continuous = _methods(gates, model, "derivative", lambda b: _states(model, b, False)
                                   and overrides(b, "derivative"))
        self.sampled = _methods(gates, model, "update", lambda b: isinstance(b.sample, Sample)
                                and _states(model, b, True))
        self.handlers = tuple((h, sl) for b, sl in model.hybrid
                              for h in [gates.method(b, "crossing", False)] if h is not None)

    def outputs(self):
        """Every output at the point (constant, discrete and continuous ones when steady)."""
        t = self.t
        with _named_faults(self.model, t):
            for _ in range(self.passes):
                for calc in self.plan:
                    calc(t)

    def start(self):
        """The model's initial point as a run starts it: outputs, the blocks that initialise
        states from their inputs, outputs again, the modes."""
        m = self.model
        m.xbuf[:] = m.x0
        m.xdbuf[:] = m.xd0
        self.outputs()
        with _named_faults(m, self.t):
            for block in m.blocks:
                if overrides(block, "initialize"):
                    block.initialize(self.t)
        self.outputs()
        self.settle()

    def settle(self):
        """The hybrid blocks' modes at the point, decided as at the start of a run (no
        crossing in progress); the outputs are recomputed after every change."""
        m, t = self.model, self.t
        for _ in range(MAX_ROUNDS):
            changed = False
            with _named_faults(m, t):
                for handler, sl in self.handlers:
                    changed |= bool(handler(t, np.zeros(sl.stop - sl.start, np.int8)))
            if not changed:
                return
            self.outputs()
        names = ", ".join(b.name for b, _ in m.hybrid)
        raise SimulationError(f"the modes of {names} keep switching each other at the point",
                              time=t)

    def rates(self):
        """dx/dt of every continuous state (a copy), the outputs being computed."""
        m = self.model
        m.dxbuf[:] = 0.0
        with _named_faults(m, self.t):
            for derivative in self.continuous:
                derivative(self.t)
        return m.dxbuf.copy()

    def next_discrete(self):
        """The discrete state after the sampled blocks' updates at a hit here (a copy); the
        discrete state itself is left as it was."""
        m = self.model
        kept = m.xdbuf.copy()
        with _named_faults(m, self.t):
            for update in self.sampled:
                update(self.t)
        after = m.xdbuf.copy()
        m.xdbuf[:] = kept
        return after


def _methods(gates, model, name, wanted):
    """Method `name` of the blocks `wanted` picks, as gated in a run (none of the blocks a
    triggered subsystem runs)."""
    return tuple(f for b in model.blocks if wanted(b)
                 for f in [gates.method(b, name)] if f is not None)


def _states(model, block, discrete):
    cs, ds = model.state_slices[block.name]
    part = ds if discrete else cs
    return part.stop > part.start




def _pass_through(block):
    """A delay at steady state: its output is its input."""
    y, u = block.y[0], block.u[0]
    return lambda t: np.copyto(y, u)


@contextlib.contextmanager
def _named_faults(model, t):
    """Block computations as in a run: numpy's warnings off (the values are checked for
    being finite where it matters), and a block failing on the values it meets raises the
    SimulationError a run gives (the block, the port its method computes) at time t."""
    try:
        with np.errstate(all="ignore"):
            yield
    except BLOCK_FAULTS as e:
        raise block_failure(model, e, t) from None
