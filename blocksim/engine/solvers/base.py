"""What every stepper shares: the failure type, the current point and the statistics.

A stepper integrates y' = f(t, y) forward in time one accepted step at a time, up to
`t_bound`, and is restarted by the simulator after every event (sample hit, discontinuity)
rather than rebuilt, so that it keeps its step-size history.
"""
from __future__ import annotations

import math

import numpy as np

from ...errors import SimulationError


class SolverError(SimulationError):
    """The integration failed: the step size fell below round-off, or a scipy solver gave up."""


class StepBudgetError(SolverError):
    """The solver needs more steps than the run allows (simulation.max_steps)."""


class StiffnessError(StepBudgetError):
    """An explicit method's step is held by stability on a stiff problem, so the run would
    need more steps than it allows: an implicit solver is the remedy."""


PROJECT_EVERY = 10_000  # accepted steps between projections of the steps still needed
PROJECT_OVER = 10  # stop when they are this many times the budget ...
PROJECT_TIMES = 2  # ... at this many projections in a row whose pace did not double,
PROJECT_FLAT = 3  # or more than the budget at this many in a row whose pace did not grow
FLAT = 1.5  # (by more than this factor from the first of them)


class Projection:
    """Stops a run heading for simulation.max_steps long before it gets there.

    `check(nsteps, t)`, called as the run goes: once PROJECT_EVERY steps have passed since
    the last projection, the steps still needed to reach t_final at their pace (time per
    step). It raises StepBudgetError when they are PROJECT_OVER times max_steps at
    PROJECT_TIMES projections in a row and the pace did not double between them (steps that
    grow may still finish), or when they exceed what is left of max_steps at PROJECT_FLAT
    projections in a row over which the pace did not grow (beyond FLAT times the first's,
    room for the noise of short windows): such a run would otherwise take
    max_steps steps (10^7: tens of minutes, hours for an implicit solver's steps) to be
    stopped. Stiff runs stop early the same way (adaptive_rk); this covers steps that stay
    short for any reason (a tolerance too loose to follow the solution, a run far too long
    for its dynamics, a derivative that jumps as a state crosses a threshold, the solution
    chattering along it). `implicit`: the stepper is one (the advice differs)."""

    def __init__(self, name, max_steps, t_final, implicit=False):
        self.name, self.max_steps, self.t_final = name, max_steps, t_final
        self.implicit = implicit
        self.mark = None  # (nsteps, t) of the last projection
        self.pace = None
        self.over = 0
        self.flat = 0  # projections in a row beyond the budget, the pace not grown since
        self.flat_pace = None  # the first of them's

    def check(self, nsteps, t):
        if not math.isfinite(self.max_steps):
            return
        if self.mark is None:
            self.mark = (nsteps, t)
            return
        steps, span = nsteps - self.mark[0], t - self.mark[1]
        if steps < PROJECT_EVERY:
            return
        self.mark = (nsteps, t)
        if not span > 0:
            return
        pace = span / steps
        needed = (self.t_final - t) / pace
        over = needed > PROJECT_OVER * self.max_steps
        steady = self.pace is None or pace < 2 * self.pace
        self.pace = pace
        self.over = self.over + 1 if over and steady else int(over)
        if nsteps + needed <= self.max_steps:
            self.flat = 0
        elif self.flat and pace <= FLAT * self.flat_pace:
            self.flat += 1
        else:
            self.flat, self.flat_pace = 1, pace
        if self.over >= PROJECT_TIMES or self.flat >= PROJECT_FLAT:
            advice = ("raise max_steps, loosen rtol/atol or shorten the run; an implicit "
                      "solver's steps this short often mean a derivative that jumps as a "
                      "state crosses a threshold (where() or sign() of a state), the "
                      "solution chattering along it" if self.implicit else
                      "raise max_steps, loosen rtol/atol, shorten the run, or, if the system "
                      "is stiff, use an implicit solver (radau, bdf or lsoda)")
            raise StepBudgetError(
                f"{self.name} would need about {needed:.3g} more steps to reach "
                f"t={self.t_final:g}, more than {self.max_steps:,} steps, the limit set by "
                f"simulation.max_steps (at the pace of the last {steps:,} steps, {pace:.3g} s "
                f"a step, at t={t:.6g}): {advice}", time=t)


class Stepper:
    """Common state of all steppers.

    `t`, `y` is the current point (`y` is the stepper's buffer: copy it to keep it), `t_old`
    the start of the last accepted step, `t_bound` the end of the current integration
    interval. `nfev`, `nsteps` (accepted) and `nrejected` count across restarts. More than
    `max_steps` accepted steps raise `StepBudgetError`; `t_final` is where the whole
    integration ends (the simulation's stop), for projecting how many steps remain.
    """
    fixed = False
    implicit = False
    max_steps = math.inf
    t_final = math.inf

    def __init__(self, name, t0, y0, t_bound):
        y0 = np.array(y0, dtype=float)
        if y0.ndim != 1:
            raise ValueError(f"the state must be a 1-D array, got shape {y0.shape}")
        self.name = name
        self.n = y0.size
        self.t = self.t_old = float(t0)
        self.y = y0
        self.t_bound = self._check_bound(self.t, t_bound)
        self.nfev = 0
        self.nsteps = 0
        self.nrejected = 0

    @staticmethod
    def _check_bound(t, t_bound):
        t_bound = float(t_bound)
        if not t_bound >= t:
            raise ValueError(f"t_bound={t_bound!r} is before t={t!r}: steppers run forward")
        return t_bound

    def _over_budget(self, t):
        """The error for a step beyond `max_steps` (raised when it is accepted)."""
        return StepBudgetError(
            f"{self.name} needs more than {self.max_steps:,} steps, the limit set by "
            f"simulation.max_steps, to reach t={self.t_final:g}: raise max_steps, loosen "
            "rtol/atol, or, if the system is stiff, use an implicit solver (radau, bdf or "
            "lsoda)", time=t)

    def _project(self, t):
        """Every PROJECT_EVERY accepted steps, the steps still needed (`Projection`)."""
        if self.nsteps % PROJECT_EVERY == 0:
            if self._projection is None:
                self._projection = Projection(self.name, self.max_steps, self.t_final,
                                              self.implicit)
            self._projection.check(self.nsteps, t)

    _projection = None

    def dense_degree(self):
        """The degree in t of the interpolant `dense` gives on the last step (a cubic Hermite
        unless the method says otherwise): that many points of the step and its start
        determine it."""
        return 3

    def _at_bound(self):
        return RuntimeError(f"step() called at t_bound={self.t_bound!r}; restart first")
