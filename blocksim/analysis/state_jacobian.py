"""The state Jacobian d(dx/dt)/dx of a model during a run, for scipy's implicit solvers
(radau, bdf, lsoda), assembled as `blocksim linearize` assembles A: each block's exact
Jacobian (`Block.jacobian`: an FMU's directional derivatives, a linear block's matrices, a
function block's derivatives of its expression) joined along the wires (interconnect.py).

Only the blocks on a path from a continuous state to a state derivative count: those whose
outputs move with the state within an evaluation (the blocks with states and those computed
in every evaluation) and that feed such a block back. A sampled block's output is held
between its hits and a transport delay's is the past of its input, so neither moves with
the state now: they cut the paths. When every block on a path declares its Jacobian at the
run's start the solver gets the assembled matrix, one evaluation of each block's Jacobian
instead of n evaluations of the whole diagram; otherwise it differences the diagram as it
always did. A block that declines later in the run (an FMU call that fails) is differenced
alone, as linearize does.

The run entry point (`blocksim.accel.mode.simulate_model`) builds it and hands it to the
simulator: the engine sits below linear analysis and knows only the object's contract
(`applies(t)`, then `jacobian(t)`: see `blocksim.engine.simulator.Simulation`).
"""
from __future__ import annotations

import numpy as np

from .interconnect import Wiring
from .jacobians import declares_exact, linear_part
from .paths import reach


class StateJacobian:
    """The state Jacobian of `model` at its current values (see the module docstring)."""

    def __init__(self, model):
        self.model = model
        names = path_blocks(model)
        self.blocks = tuple(b for b in model.blocks if b.name in names)
        self.n = model.xbuf.size
        self.wiring = self.rows = None  # the parts' wiring and states, at the first call

    def applies(self, t):
        """Whether every block on a path declares its exact Jacobian here."""
        return all(declares_exact(self.model, b, t) for b in self.blocks)

    def __call__(self, t):
        """d(dx/dt)/dx, (n, n), the outputs computed at t."""
        parts = [linear_part(self.model, b, t, None) for b in self.blocks]
        if self.wiring is None:
            self.wiring = Wiring(self.model, parts, (), (), ())
            self.rows = np.ix_(*[np.concatenate([p.indices for p in parts]).astype(int)] * 2)
        J = np.zeros((self.n, self.n))
        J[self.rows] = self.wiring.join(parts)[0]
        return J


def path_blocks(model):
    """The names of the blocks on a path from a continuous state to a state derivative."""
    stateful = {b.name for b in model.blocks
                if model.state_slices[b.name][0].stop > model.state_slices[b.name][0].start}
    moving = stateful | {n.block.name for n in model.nodes
                         if n.group == "continuous" and not n.block.keeps_history}
    after, before = {}, {}
    for (dst, _), driver in model.drivers.items():
        if driver[0] in moving and dst in moving:
            after.setdefault(driver[0], set()).add(dst)
            before.setdefault(dst, set()).add(driver[0])
    return reach(stateful, after) & reach(stateful, before)
