"""The implicit and switching solvers of scipy.integrate (Radau IIA order 5, BDF orders 1–5,
LSODA) driven step by step behind the stepper interface. scipy is imported on first use.

A restart builds a new scipy solver at (t, y) (their internal histories cannot be rewound),
passing as `first_step` the step size the old one proposed after its last step that was not
shortened to land on t_bound. BDF and LSODA still restart at order 1, whose error estimate
forces short steps. scipy does not report rejected steps, so `nrejected` stays 0. With no
state at all the steps are simply `max_step` long (scipy would ignore max_step there).

`fun` is wrapped to copy its result: scipy keeps f values between calls (its own RK classes
mis-step after a rejection when fun reuses one output buffer). `jac(t, y)`, when given, is
the state Jacobian the methods' Newton iterations use instead of differencing `fun` (n
evaluations of it per Jacobian).
"""
from __future__ import annotations

import math

import numpy as np

from .base import SolverError, Stepper

_CLASSES = {"radau": "Radau", "bdf": "BDF", "lsoda": "LSODA"}


class ScipyStepper(Stepper):
    """scipy.integrate.{Radau, BDF, LSODA} as a restartable stepper."""
    implicit = True

    def __init__(self, name, fun, t0, y0, t_bound, rtol, atol, max_step, jac=None):
        import scipy.integrate
        super().__init__(name, t0, y0, t_bound)
        self._cls = getattr(scipy.integrate, _CLASSES[name])
        self._fun = fun
        self._options = dict(rtol=rtol, atol=atol, max_step=max_step)
        if jac is not None:
            self._options["jac"] = jac
        self.max_step = float(max_step)
        self._dense = None
        self._hint = None          # proposed step size after the last unshortened step
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
        if not t < self.t_bound:
            raise self._at_bound()
        solver = self._solver
        if solver is None:
            reach = self.max_step + 4 * math.ulp(self.t_bound)
            t_new = self.t_bound if self.t_bound - t <= reach else t + self.max_step
        else:
            message = solver.step()
            if solver.status == "failed":
                raise SolverError(f"{self.name}: {message}", time=solver.t)
            if solver.status == "finished":
                t_new = self.t_bound
            else:
                t_new = solver.t
                self._hint = getattr(solver, "h_abs", solver.step_size)
            if not t_new > t:
                # LSODA reports success with a zero step when it cannot go on (y overflows)
                raise SolverError(f"{self.name}: the step size fell to zero at t={t:.9g}",
                                  time=t)
            self.y = solver.y
        self.t_old, self.t = t, t_new
        self._dense = None
        self.nsteps += 1
        if self.nsteps > self.max_steps:
            raise self._over_budget(t_new)
        self._project(t_new)

    def dense(self, t):
        """y(t) from scipy's interpolant of the last accepted step."""
        if self.t_old == self.t:
            raise RuntimeError("dense() needs an accepted step since the last (re)start")
        if self._solver is None:
            return np.empty(0)
        if self._dense is None:
            self._dense = self._solver.dense_output()
        return self._dense(t)

    def dense_degree(self):
        """Radau's collocation cubic; BDF's and LSODA's interpolant has the degree of the
        order they stepped with."""
        if self._solver is None:
            return super().dense_degree()
        if self._dense is None:
            self._dense = self._solver.dense_output()
        dense = self._dense
        if hasattr(dense, "Q"):  # Radau: y_old + Q [x, x^2, x^3]
            return dense.Q.shape[1]
        return int(dense.order) if hasattr(dense, "order") else len(dense.p) - 1  # BDF, LSODA

    def restart(self, t, y, t_bound):
        """Continue from (t, y) up to t_bound with a fresh scipy solver whose first step is the
        step size proposed before (h_abs where scipy has it, else the last step size)."""
        t = float(t)
        self.t_bound = self._check_bound(t, t_bound)
        self.t = self.t_old = t
        self.y = np.array(y, dtype=float).reshape(self.n)
        self._dense = None
        first = None
        if self._hint is not None and self.t_bound > t:
            first = min(self._hint, self.t_bound - t, self.max_step)
        self._solver = self._new_solver(first)
