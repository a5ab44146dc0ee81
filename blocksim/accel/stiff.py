"""scipy's implicit solvers (radau, bdf, lsoda) on compiled evaluations.

Their steppers stay scipy's and the run loop stays the simulator's; what the solver calls
thousands of times, the derivative (all outputs, then all derivatives) and, around events,
the outputs and the indicators, is one call into compiled code each. The event handlers,
discrete updates and source switches run interpreted, on the same buffers: outputs,
derivatives and indicators are functions of (t, u, x, xd) and the parameters, which both
sides share, so the two halves agree. A compiled indicator may also read what the compiled
outputs left in its block's workspace (a stuck joint's holding torque), so wherever the
simulator computes outputs interpreted before asking for indicators (an event instant, a
handler's change), the compiled outputs are computed as well.

Every compiled evaluation returns the run's error status: where a block's compiled code
failed (a domain fault, a point behind a camera), the evaluation raises the error normal
mode's block raises there, so the run stops at the same evaluation, and a failed run's
notes come from the compiled workspaces, as after a compiled loop's run.
"""
from __future__ import annotations

import ctypes

import numpy as np

from ..engine.simulator import Simulation, simulate_with
from .boundary import REMEMBER
from .runner import bind, evaluation_error, failure_notes_of



class _CompiledEvaluations(Simulation):
    """A Simulation whose f, outputs and indicators are the compiled ones."""

    def __init__(self, library, rt, keep, model, generated, progress, plots, jacobian):
        super().__init__(model, progress, plots, jacobian)
        self._lib, self._rt, self._keep, self._generated = library, rt, keep, generated
        self._dx = ctypes.c_void_p(model.dxbuf.ctypes.data)
        self._x = ctypes.c_void_p(model.xbuf.ctypes.data)

    def f(self, t, y):
        self.last_time = t
        y = np.ascontiguousarray(y, dtype=float)
        if self._lib.rt_eval_f(self._rt, t, y.ctypes.data, self._dx):
            raise self._failure()
        return self.dxbuf

    def outputs(self, t, y):
        y = np.ascontiguousarray(y, dtype=float)
        if self._lib.rt_eval_outputs(self._rt, t, y.ctypes.data):
            raise self._failure()

    def indicators(self, t):
        if self._lib.rt_eval_indicators(self._rt, t):
            raise self._failure()

    def recompute(self, t):
        """The outputs again from the state buffer, interpreted (for the handlers, which
        read their blocks' own attributes) and compiled (for the compiled indicators, which
        may read their blocks' workspaces: a stuck joint's holding torque)."""
        super().recompute(t)
        self._compiled_outputs(t)

    def hit_plan(self, due):
        """An event instant's plan, then the compiled outputs from the state it leaves."""
        plan, updates = super().hit_plan(due)
        return (*plan, self._compiled_outputs), updates

    def _compiled_outputs(self, t):
        if self._lib.rt_eval_outputs(self._rt, t, self._x):
            raise self._failure()

    def remember_at(self, t, kind):
        """The compiled histories (which the compiled outputs read) take the sample too; the
        interpreted ones, kept alongside from the same inputs, say when to land."""
        if self._lib.rt_eval_remember(self._rt, t, getattr(REMEMBER, kind)):
            raise self._failure()
        return super().remember_at(t, kind)

    def failure_notes(self):
        """The notes of the compiled workspaces, which watched the compiled evaluations."""
        return failure_notes_of(self.m, self._generated, self._keep)

    def _failure(self):
        """The error of the block whose compiled code failed in the last evaluation."""
        info, y = np.zeros(16), np.zeros(max(self.xbuf.size, 1))
        self._lib.rt_info(self._rt, info.ctypes.data, y.ctypes.data)
        return evaluation_error(self._lib, self._rt, self.m, info)


def simulate_stiff(library, model, generated, progress=None, plots=False, jacobian=None):
    """(t, data, info) of `model` run by the simulator with compiled evaluations; the state
    `jacobian` (Simulation's) stays interpreted, on the outputs the compiled code computed."""
    rt, keep = bind(library, model, generated)
    try:
        return simulate_with(_CompiledEvaluations(library, rt, keep, model, generated,
                                                  progress, plots, jacobian), model)
    finally:
        library.rt_free(rt)
        del keep
