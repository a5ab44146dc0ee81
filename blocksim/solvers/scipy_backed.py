"""The implicit and switching solvers of scipy.integrate (Radau IIA order 5, BDF orders 1–5,
LSODA) driven step by step behind the stepper interface. scipy is imported on first use.

A restart builds a new scipy solver at (t, y) (their internal histories cannot be rewound),
passing the current step size as `first_step`. scipy does not report rejected steps, so
`nrejected` stays 0. With no state at all the steps are simply `max_step` long (scipy would
ignore max_step there).
"""
from __future__ import annotations

import math

import numpy as np

from .base import SolverError, Stepper

_CLASSES = {"radau": "Radau", "bdf": "BDF", "lsoda": "LSODA"}


class ScipyStepper(Stepper):
    """scipy.integrate.{Radau, BDF, LSODA} as a restartable stepper."""

    def __init__(self, name, fun, t0, y0, t_bound, rtol, atol, max_step):
        import scipy.integrate
        super().__init__(name, t0, y0, t_bound)
        self._cls = getattr(scipy.integrate, _CLASSES[name])
        self._fun = fun
        self._options = dict(rtol=rtol, atol=atol, max_step=max_step)
        self.max_step = float(max_step)
        self._dense = None
        self._solver = self._new_solver(None)

    def _counted_fun(self, t, y):
        """fun may hand back the same buffer each call: scipy keeps values, so copy."""
        self.nfev += 1
        return np.array(self._fun(t, y), dtype=float)

    def _new_solver(self, first_step):
        if self.n == 0:
            return None
        return self._cls(self._counted_fun, self.t, self.y.copy(), self.t_bound,
                         first_step=first_step, **self._options)

    def step(self):
        """Advance one accepted step of the scipy solver; lands exactly on t_bound."""
        t = self.t
        self._check_running()
        solver = self._solver
        if solver is None:
            reach = self.max_step + 4 * math.ulp(self.t_bound)
            t_new = self.t_bound if self.t_bound - t <= reach else t + self.max_step
        else:
            message = solver.step()
            if solver.status == "failed":
                raise SolverError(f"{self.name}: {message}", time=solver.t)
            t_new = self.t_bound if solver.status == "finished" else solver.t
            if not t_new > t:
                # LSODA reports success with a zero step when it cannot go on (y overflows)
                raise SolverError(f"{self.name}: the step size fell to zero at t={t:.9g}",
                                  time=t)
            self.y = solver.y
        self.t_old, self.t = t, t_new
        self._dense = None
        self.nsteps += 1

    def dense(self, t):
        """y(t) from scipy's interpolant of the last accepted step."""
        if self.t_old == self.t:
            raise RuntimeError("dense() needs an accepted step since the last (re)start")
        if self._solver is None:
            return np.empty(0)
        if self._dense is None:
            self._dense = self._solver.dense_output()
        return self._dense(t)

    def restart(self, t, y, t_bound):
        """Continue from (t, y) up to t_bound with a fresh scipy solver; the last step size
        (the solver's proposed next one where scipy exposes it) is its first step."""
        t = float(t)
        self.t_bound = self._check_bound(t, t_bound)
        old = self._solver
        hint = None
        if old is not None and old.step_size is not None:
            hint = getattr(old, "h_abs", old.step_size)
        self.t = self.t_old = t
        self.y = np.array(y, dtype=float).reshape(self.n)
        self._dense = None
        if hint is not None and t_bound > t:
            hint = min(hint, t_bound - t, self.max_step)
        else:
            hint = None
        self._solver = self._new_solver(hint)
