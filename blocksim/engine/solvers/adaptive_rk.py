"""Embedded explicit Runge–Kutta pairs with error control: Bogacki–Shampine 3(2), Dormand–
Prince 5(4) and DOP853 (Hairer, Nørsett & Wanner, Solving ODEs I, II.4 and II.10).

Error norm: ``‖err‖ = RMS(err_i / (atol + rtol max(|y_i|, |y1_i|)))``; a step is accepted when
it is <= 1. Step-size controller (the standard one of Hairer's codes and scipy): the next step
is ``h * min(10, max(0.2, 0.9 ‖err‖^(-1/(q+1))))`` with q the order of the embedded estimate,
never growing right after a rejection, never above `max_step`. The first step comes from
Hairer's estimate (II.4), made only once: after `restart` the current step size is kept.

Stiffness (Hairer & Wanner, Solving ODEs II, IV.2; the test of Hairer's DOPRI5 and DOP853):
two stages i, j of the accepted step give ``h·λ ≈ ‖k_j − k_i‖ / ‖(a_j − a_i)·k‖`` (their
arguments differ by ``h (a_j − a_i)·k``, so h cancels). A step with |h·λ| beyond the
tableau's bound, just inside the method's stability interval, is held by stability, not
accuracy; 15 such steps without 6 ordinary ones in a row in between make the problem stiff.
The test runs every 100 accepted steps, and at every step while stiff steps are being
counted. A stiff problem stops the run (`StiffnessError`) only when the steps it still needs
at the current step size would exceed `max_steps`: an explicit method that will finish in
reasonable time on a mildly stiff problem is left alone.

A step within 1 % of t_bound (and no longer than max_step, up to the round-off of t_bound) is
stretched to land on it exactly. Because the simulator restarts at every sample hit, a step
shortened to land on t_bound must not shrink the step size for the following interval (the
error estimate of a very short step is mere round-off): after such a step the controller keeps
the step size it had proposed before shortening, unless the short step asks for a larger one.
"""
from __future__ import annotations

import math

import numpy as np

from .base import SolverError, StiffnessError
from .explicit_rk import ExplicitRK
from .tableaus import DOP853_E3

SAFETY = 0.9
MIN_FACTOR = 0.2
MAX_FACTOR = 10.0
STIFF_TEST_EVERY = 100  # accepted steps between stiffness tests while none is stiff
STIFF_STEPS = 15  # stiff steps that make the problem stiff (Hairer's DOPRI5)
NONSTIFF_STEPS = 6  # ordinary steps in a row that clear the count

# Where f(t, y) at the start of the next step is: in K[0], in the FSAL stage, or unknown.
_F0_IN_K0, _F0_IN_LAST, _F0_UNKNOWN = 0, 1, 2


class EmbeddedRK(ExplicitRK):
    """An FSAL embedded pair whose last step stage is f(t + h, y1) (see `tableaus`)."""

    def __init__(self, name, tableau, fun, t0, y0, t_bound, rtol, atol, max_step):
        super().__init__(name, tableau, fun, t0, y0, t_bound)
        if not rtol > 0:
            raise ValueError(f"rtol must be positive, got {rtol!r}")
        if not np.all(np.asarray(atol) >= 0):
            raise ValueError(f"atol must be non-negative, got {atol!r}")
        if not max_step > 0:
            raise ValueError(f"max_step must be positive, got {max_step!r}")
        n, S = self.n, tableau.stages
        self.rtol = float(rtol)
        self.atol = np.asarray(atol, dtype=float) if np.ndim(atol) else float(atol)
        self.max_step = float(max_step)
        self._S = S
        self._exponent = -1.0 / (tableau.error_order + 1)
        m = len(tableau.c)
        self._A = tableau.A
        self._coef = np.zeros((m, 1 + m))      # [1 | h A]: stage s's argument is one dot
        self._coef[:, 0] = 1.0                 # product of its row with [y; k_0; k_1; ...]
        self._hA = self._coef[:, 1:]
        self._step_plan = self._plan(1, S - 1)
        self._last_coef = self._coef[S - 1, :S]
        self._before_last = self._Y[:S]
        self._k0, self._k_last = self._K[0], self._K[S - 1]
        self._k_step = self._K[:S]
        self._atol_rtol = self.atol / self.rtol
        self._err = np.empty(n)
        self._scale = np.empty(n)
        self._abs_y = np.abs(self.y)
        self._abs_new = np.empty(n)
        self._inv_n = 1.0 / n if n else 0.0
        self._h = None             # proposed next step size; None until the first step
        self._f0 = _F0_UNKNOWN
        self._set_reach()
        i, j, self._stiff_bound = tableau.stiffness
        self._stiff_ki, self._stiff_kj = self._K[i], self._K[j]
        self._stiff_da = tableau.A[j, :S] - tableau.A[i, :S]
        self._stiff_count = self._nonstiff_count = 0

    def _plan(self, first, stop):
        """Pre-bound views for stages first..stop-1: (c, coefficient row [1, h a_s:],
        rows [y; k_0..k_s-1], output row k_s)."""
        c, Y, coef = self.tableau.c, self._Y, self._coef
        return tuple((c[s], coef[s, :s + 1], Y[:s + 1], Y[s + 1]) for s in range(first, stop))

    def _stages(self, t, h, plan):
        """Evaluate the stages of `plan` for a step of size h from (t, y); K[0] = f(t, y)."""
        fun, arg = self._fun, self._arg
        np.multiply(self._A, h, self._hA)
        for c, coef, rows, k in plan:
            np.dot(coef, rows, arg)
            k[...] = fun(t + c * h, arg)
        self.nfev += len(plan)

    def _set_reach(self):
        """Longest step that may land on t_bound: max_step, plus the round-off of t_bound so
        that steps of max_step never leave a sliver before it."""
        self._reach = self.max_step + 4 * math.ulp(self.t_bound)

    def _initial_step(self):
        """Hairer's starting step (Solving ODEs I, II.4); leaves f(t0, y0) in K[0]."""
        t, y, interval = self.t, self.y, self.t_bound - self.t
        if self.n == 0:            # no state: nothing but max_step limits the step
            return self.max_step
        K0 = self._K[0]
        K0[...] = self._fun(t, y)
        self._f0 = _F0_IN_K0
        scale = self.atol + self.rtol * np.abs(y)
        d0 = _rms(y / scale)
        d1 = _rms(K0 / scale)
        h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
        # a huge or infinite f(t0, y0) underflows h0: start from the smallest useful step
        # (the steps then fail with the round-off diagnosis instead of a division by zero)
        h0 = min(max(h0, 4 * math.ulp(max(abs(t), 1.0))), interval)
        f1 = self._fun(t + h0, y + h0 * K0)
        self.nfev += 2
        d2 = _rms((f1 - K0) / scale) / h0
        if max(d1, d2) <= 1e-15:
            h1 = max(1e-6, h0 * 1e-3)
        else:
            h1 = (0.01 / max(d1, d2)) ** (1.0 / (self.tableau.error_order + 1))
        return min(100 * h0, h1, interval, self.max_step)

    def _scale_of(self, y_new):
        """(atol + rtol max(|y|, |y_new|)) / rtol in the scale buffer (one multiply fewer;
        the norms divide by rtol); leaves |y_new| in _abs_new."""
        scale = self._scale
        np.abs(y_new, self._abs_new)
        np.maximum(self._abs_y, self._abs_new, out=scale)
        np.add(scale, self._atol_rtol, scale)
        return scale

    def _error_norm(self, h, y_new):
        """RMS norm of the scaled error estimate h Σ e_i k_i."""
        err = self._err
        np.dot(self.tableau.e, self._k_step, err)
        np.divide(err, self._scale_of(y_new), err)
        return h / self.rtol * math.sqrt(err.dot(err) * self._inv_n)

    def step(self):
        """Advance one accepted step toward t_bound (landing on it exactly)."""
        t, t_bound, y = self.t, self.t_bound, self.y
        if not t < t_bound:
            raise self._at_bound()
        fun = self._fun
        h = self._h
        if h is None:
            h = self._initial_step()
        min_step = 10.0 * math.ulp(t)
        if h < min_step:  # as scipy's: a step is tried from the round-off limit up (the
            h = min(min_step, self.max_step)  # first, 1e-6 at t = 1e10, failed untried);
            # only rejections take it below, which fails
        if self._f0 == _F0_IN_LAST:
            self._k0[...] = self._k_last
        elif self._f0 == _F0_UNKNOWN:
            self._k0[...] = fun(t, y)
            self.nfev += 1
        self._f0 = _F0_IN_K0
        y_new, max_step = self._y_new, self.max_step
        rejected = nonfinite = False
        while True:
            remaining = t_bound - t
            if remaining <= min(1.01 * h, self._reach):
                t_new, h_step = t_bound, remaining
            else:
                if h < min_step:
                    self._fail(t, h, nonfinite)
                t_new = t + h
                h_step = t_new - t
            self._stages(t, h_step, self._step_plan)
            np.dot(self._last_coef, self._before_last, y_new)
            self._k_last[...] = fun(t_new, y_new)
            self.nfev += 1
            err = self._error_norm(h_step, y_new)
            if err <= 1.0:
                break
            rejected = True
            self.nrejected += 1
            nonfinite = not err < math.inf
            factor = MIN_FACTOR if nonfinite else SAFETY * err ** self._exponent
            h = h_step * max(MIN_FACTOR, factor)
        factor = min(MAX_FACTOR, SAFETY * err ** self._exponent) if err > 0.0 else MAX_FACTOR
        if rejected:
            factor = min(1.0, factor)
        h_next = h_step * factor
        if t_new == t_bound and not rejected and h_next < h:
            h_next = h
        self._h = min(h_next, max_step)
        self._accept(t, t_new, h_step)
        self._abs_y, self._abs_new = self._abs_new, self._abs_y
        self._f0 = _F0_IN_LAST
        if self._stiff_count or self.nsteps % STIFF_TEST_EVERY == 0:
            self._test_stiffness(t_new, h_step)
            self._project(t_new)

    def stiffness_estimate(self):
        """|h·λ| of the last accepted step from two of its stages (see the module docs)."""
        den = np.dot(self._stiff_da, self._k_step)
        den = math.sqrt(den.dot(den))
        if den == 0.0:
            return 0.0
        num = self._stiff_kj - self._stiff_ki
        return math.sqrt(num.dot(num)) / den

    def _test_stiffness(self, t, h):
        """Count stiff steps; stop once stiff if the rest of the run is out of budget."""
        h_lambda = self.stiffness_estimate()
        if h_lambda > self._stiff_bound:
            self._stiff_count += 1
            self._nonstiff_count = 0
            if self._stiff_count >= STIFF_STEPS:
                needed = (self.t_final - t) / max(self._h, h)
                if self.nsteps + needed > self.max_steps:
                    raise self._stiff(t, h, h_lambda, needed)
        else:
            self._nonstiff_count += 1
            if self._nonstiff_count >= NONSTIFF_STEPS:
                self._stiff_count = self._nonstiff_count = 0

    def _stiff(self, t, h, h_lambda, needed):
        return StiffnessError(
            f"the system is stiff: {self.name}'s step ({h:.3g} s) is held by the method's "
            f"stability, not by accuracy (|h·λ| ≈ {h_lambda:.3g}), and reaching "
            f"t={self.t_final:g} would take about {needed:.3g} more steps (limit: "
            f"simulation.max_steps = {self.max_steps:,}); use an implicit solver: "
            "radau, bdf or lsoda (e.g. --solver radau)", time=t)

    def _fail(self, t, h, nonfinite):
        why = "; the derivative is not finite" if nonfinite else ""
        raise SolverError(f"{self.name}: step size {h:.3g} at t={t:.9g} is below the "
                          f"round-off limit{why}", time=t)

    def dense_degree(self):
        D = self.tableau.D
        return 3 + (0 if D is None else len(D))  # the Hermite cubic and the method's rows

    def _dense_coefficients(self):
        self._check_dense()
        T, h, K, S = self.tableau, self._h_last, self._K, self._S
        for s in range(S, len(T.c)):
            K[s] = self._fun(self.t_old + T.c[s] * h,
                             self._y_old + h * np.dot(T.A[s, :s], K[:s]))
            self.nfev += 1
        rows = 0 if T.D is None else len(T.D)
        F = self._hermite(self._k_last, rows)
        if rows:
            np.dot(T.D, K, F[3:])
            F[3:] *= h
        return F

    def restart(self, t, y, t_bound):
        """Continue from (t, y) up to t_bound, keeping the step size as the first guess."""
        super().restart(t, y, t_bound)
        np.abs(self.y, self._abs_y)
        self._f0 = _F0_UNKNOWN
        self._set_reach()


class Dop853(EmbeddedRK):
    """DOP853: the fifth- and third-order estimates combined as in Hairer's code,
    ``err = err5² / sqrt(err5² + 0.01 err3²)`` (in RMS terms)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._err3 = np.empty(self.n)

    def _error_norm(self, h, y_new):
        err5, err3 = self._err, self._err3
        scale = self._scale_of(y_new)
        np.dot(self.tableau.e, self._k_step, err5)
        np.dot(DOP853_E3, self._k_step, err3)
        np.divide(err5, scale, err5)
        np.divide(err3, scale, err3)
        s5, s3 = err5.dot(err5), err3.dot(err3)
        if s5 == 0.0:
            return 0.0
        return h / self.rtol * s5 / math.sqrt((s5 + 0.01 * s3) * self.n)


def _rms(x):
    return math.sqrt(x.dot(x) / x.size)
