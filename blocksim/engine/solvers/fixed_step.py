"""Fixed-step explicit Runge–Kutta: forward Euler (order 1), Heun (2), classical RK4 (4).

Steps land on the grid ``origin + k*step`` (computed by multiplication, so nothing drifts).
A `t_bound` between grid points (an event) shortens the step that crosses it; the next step
then goes to the next grid point. Times within `1e-9*step` (plus a few ulps) of a grid point
count as on it, so an event that equals a grid point up to round-off never makes a
sliver step. Dense output is the cubic Hermite interpolant from the end-point values and
slopes; the slope at the new point is evaluated only when dense output is asked for, and is
then reused as the next step's first stage.

Each stage argument and the new state are sums over the tableau's non-zero coefficients,
``y + ((h c_0) k_0 + (h c_1) k_1 + ...)`` added left to right, one numpy ufunc per
operation: no BLAS. numpy's dot hands even a 4-term combination to the BLAS, whose call
costs more than the sums and whose bits depend on the kernel it picks for the CPU; the
compiled stepper (accel/runtime/rt_stepper.c) does the same operations in the same order.
"""
from __future__ import annotations

import math

import numpy as np

from .base import SolverError
from .explicit_rk import ExplicitRK


def nonfinite_step(name, t, t_new, h):
    """The error of a step from t to t_new (size h) whose end state is not finite."""
    return SolverError(f"{name}: the state became non-finite in the step from t={t:.9g} to "
                       f"t={t_new:.9g} (step {h:.3g})", time=t)


class FixedStepRK(ExplicitRK):
    """``y1 = y + h Σ b_i k_i`` with h the distance to the next grid point or to t_bound."""
    fixed = True

    def __init__(self, name, tableau, fun, t0, y0, t_bound, step, origin):
        super().__init__(name, tableau, fun, t0, y0, t_bound)
        step = float(step)
        if not (step > 0 and math.isfinite(step)):
            raise ValueError(f"solver {name!r} needs a positive finite step, got {step!r}")
        self.grid_step = step
        self.origin = float(origin)
        self._k0 = self._K[0]
        # (c_s, terms a_sj) of the stages after the first, and the terms b_s: each the
        # non-zero (j, coefficient) as (the first or None, a tuple of the others)
        self._stage_terms = [(float(tableau.c[s]), _nonzero(tableau.A[s, :s]))
                             for s in range(1, tableau.stages)]
        self._b_terms = _nonzero(tableau.b[:tableau.stages])
        self._tmp = np.empty(self.n)
        self._f1 = np.empty(self.n)
        self._f1_ready = False     # _f1 holds f(t, y) at the current point
        self._set_grid()

    def _set_grid(self):
        """Grid tolerance for the current interval and the index of the last grid point at
        or before t."""
        t, origin, step = self.t, self.origin, self.grid_step
        self._tol = tol = 1e-9 * step + 4 * math.ulp(max(abs(origin), abs(self.t_bound)))
        k = math.floor((t - origin) / step)
        while origin + (k + 1) * step <= t + tol:
            k += 1
        while origin + k * step > t + tol:
            k -= 1
        self._k = k

    def step(self):
        """Advance to the next grid point, or to t_bound if that comes first."""
        t, t_bound, y = self.t, self.t_bound, self.y
        if not t < t_bound:
            raise self._at_bound()
        k = self._k + 1
        t_new = self.origin + k * self.grid_step
        if t_bound <= t_new + self._tol:
            t_new = t_bound        # the last step of the interval: restart() re-derives k
        h = t_new - t
        if self._f1_ready:
            self._k0[...] = self._f1
        else:
            self._k0[...] = self._fun(t, y)
            self.nfev += 1
        K, fun, arg = self._K, self._fun, self._arg
        for s, (c, terms) in enumerate(self._stage_terms, 1):
            self._combine(y, terms, h, arg)
            K[s] = fun(t + c * h, arg)
        self.nfev += len(self._stage_terms)
        y_new = self._y_new
        self._combine(y, self._b_terms, h, y_new)
        if not math.isfinite(y_new.dot(y_new)) and not np.isfinite(y_new).all():
            raise nonfinite_step(self.name, t, t_new, h)
        self._accept(t, t_new, h)
        self._k = k
        self._f1_ready = False

    def _combine(self, y, terms, h, out):
        """out = y + Σ (h c_j) k_j over `terms` ((j, c_j) first, the others), the products
        added left to right."""
        first, rest = terms
        if first is None:
            out[...] = y
            return
        K, tmp = self._K, self._tmp
        j, c = first
        np.multiply(K[j], h * c, out)
        for j, c in rest:
            np.multiply(K[j], h * c, tmp)
            np.add(out, tmp, out)
        np.add(y, out, out)

    def _dense_coefficients(self):
        self._check_dense()
        if not self._f1_ready:
            self._f1[...] = self._fun(self.t, self.y)
            self.nfev += 1
            self._f1_ready = True
        return self._hermite(self._f1, 0)

    def restart(self, t, y, t_bound):
        """Continue from (t, y) up to t_bound on the same grid (origin unchanged)."""
        super().restart(t, y, t_bound)
        self._f1_ready = False
        self._set_grid()


def _nonzero(coefficients):
    """The non-zero (j, c_j), split once as (the first or None, a tuple of the others)."""
    terms = [(j, float(c)) for j, c in enumerate(coefficients) if c != 0.0]
    return (terms[0], tuple(terms[1:])) if terms else (None, ())
