"""Machinery shared by the explicit Runge–Kutta steppers: the preallocated stage array and
the dense output in the nested Hermite form described in `tableaus`.

Buffers are allocated once. The current y is row 0 of the stage array ``Y = [y; k_0; k_1; ...]``
(the embedded steppers compute each stage argument as one dot product with a row of it,
adaptive_rk.py; the fixed-step one sums its few non-zero terms, fixed_step.py). `fun`
receives a scratch buffer as its y: it must not keep it.
"""
from __future__ import annotations

import numpy as np

from .base import Stepper


class ExplicitRK(Stepper):
    """An explicit RK stepper for `tableau`; subclasses decide the step size."""

    def __init__(self, name, tableau, fun, t0, y0, t_bound):
        super().__init__(name, t0, y0, t_bound)
        n, m = self.n, len(tableau.c)
        self.tableau = tableau
        self._fun = fun
        self._Y = np.zeros((1 + m, n))
        self._Y[0] = self.y
        self.y = self._Y[0]
        self._K = self._Y[1:]
        self._y_new = np.empty(n)
        self._y_old = np.zeros(n)
        self._arg = np.empty(n)
        self._h_last = None        # size of the last accepted step; None: none since (re)start
        self._F = None             # dense coefficients of the last step, built on demand

    def _hermite(self, f1, extra_rows):
        """Dense coefficients F0..F2 (cubic Hermite from y_old, y, f0 = K[0], f1) followed by
        `extra_rows` rows left for the method's own correction terms."""
        h, f0 = self._h_last, self._K[0]
        F = np.empty((3 + extra_rows, self.n))
        delta = np.subtract(self.y, self._y_old, F[0])
        np.subtract(h * f0, delta, F[1])
        F[2] = 2.0 * delta - h * (f0 + f1)
        return F

    def _check_dense(self):
        if self._h_last is None:
            raise RuntimeError("dense() needs an accepted step since the last (re)start")

    def dense(self, t):
        """y(t) from the interpolant of the last accepted step, for t in [t_old, t]."""
        F = self._F
        if F is None:
            F = self._F = self._dense_coefficients()
        x = (t - self.t_old) / self._h_last
        x1 = 1.0 - x
        acc = F[-1]
        for j in range(len(F) - 2, -1, -1):
            acc = F[j] + (x if j & 1 else x1) * acc
        return self._y_old + x * acc

    def _accept(self, t, t_new, h):
        """Make (t_new, _y_new) current after a step of size h from t."""
        self._y_old[...] = self.y
        self.y[...] = self._y_new
        self.t_old, self.t = t, t_new
        self._h_last = h
        self._F = None
        self.nsteps += 1
        if self.nsteps > self.max_steps:
            raise self._over_budget(t_new)

    def restart(self, t, y, t_bound):
        """Continue from (t, y) up to t_bound. The derivative may jump at t: every cached
        value of f is dropped."""
        t = float(t)
        self.t_bound = self._check_bound(t, t_bound)
        self.t = self.t_old = t
        np.copyto(self.y, y)
        self._h_last = None
        self._F = None
