"""Discrete-time systems (Simulink semantics): LTI in state-space and transfer-function form, and
the discrete-time integrator. They act at their hits offset + k*period: outputs first (in dataflow
order), then the state update; between hits outputs hold; before the first hit (a run that
does not start on one) the output is the one the initial state gives with u = 0. The LTI
blocks leave out their period inside a triggered subsystem: its trigger's edges are their hits.
"""
from dataclasses import replace

import numpy as np

from blocksim.accel.lowering import Lowering
from blocksim.block import In, Jacobian, Out, Sample
from blocksim.params import Param, ParamError

from .continuous import _LinearOutput, lti_matrices, polynomial, tf_realisation
from .discrete import PERIOD, SAMPLE_OFFSET, _Discrete, sample_time
from .param_checks import check_fits, check_ordered


class _DiscreteLTI(_LinearOutput):
    """x[k+1] = A x[k] + B u[k], y[k] = C x[k] + D u[k] with x the discrete state.
    Subclasses call `_set` in __init__."""

    _state, _next = "xd", "update"

    def _set(self):
        super()._set()
        self.sample = sample_time(self.p)
        # before the first hit: y = C x0 (the input is not sampled yet)
        self.behaviour = replace(self.behaviour, initialize={"y": "C @ xd"})

    def declare(self, d):
        super().declare(d)
        d.sample("period", "offset")

    def discrete_state(self):
        return self._initial()


_PERIOD = Param("period", "scalar", doc="sample period T (s)", positive=True)


class DiscreteStateSpace(_DiscreteLTI):
    """x[k+1] = A x[k] + B u[k], y[k] = C x[k] + D u[k]: discrete LTI at the hits offset + k*period.

    Outputs are held between the hits; x[0] = x0. Input: u (m,), m = columns of B. Output: y (p,), p = rows of C; direct feedthrough (at the
    hits) only when D != 0. A (n, n), B (n, m), C (p, n), D (p, m); a scalar A, a vector B (one
    input) or C (one output), a scalar D and a scalar x0 are accepted and broadcast, and a
    scalar u drives a one-input system (a scalar y for one output), as in state_space. Before
    the first hit y = C x0.
    """

    type = "discrete_state_space"
    params = (
        Param("A", doc="state matrix (n, n)"),
        Param("B", doc="input matrix (n, m)"),
        Param("C", doc="output matrix (p, n)"),
        Param("D", doc="feedthrough matrix (p, m); a scalar broadcasts"),
        PERIOD,
        SAMPLE_OFFSET,
        Param("x0", "value", 0.0, "initial state (n,)"),
    )
    _values = ("A", "B", "C", "D", "x0")

    def __init__(self, name, params):
        super().__init__(name, params)
        self._set()

    def _matrices(self, p):
        return lti_matrices(p)


class DiscreteTransferFunction(_DiscreteLTI):
    """Y(z)/U(z) = num(z)/den(z) at the hits t_k = offset + k*period, held between them.

    Input: u, scalar. Output: y, scalar. num, den: coefficients in descending powers of z
    (MATLAB's tf(num, den, T)); den[0] != 0 and deg num <= deg den. With den monic
    z^n + a1 z^(n-1) + ... + an and num right-aligned b0 z^n + ... + bn the difference equation
    is y[k] = b0 u[k] + ... + bn u[k-n] - a1 y[k-1] - ... - an y[k-n], realised in direct form
    II (controllable canonical form, as scipy.signal.tf2ss): x (n,) holds the delayed values of
    w[k] = u[k] - a1 w[k-1] - ... - an w[k-n], newest first; x0 is its initial value (scalar
    broadcasts). Direct feedthrough only when deg num = deg den (b0 != 0).
    """

    type = "discrete_transfer_function"
    params = (
        Param("num", doc="numerator coefficients, highest power of z first"),
        Param("den", doc="denominator coefficients, highest power of z first; den[0] != 0"),
        PERIOD,
        SAMPLE_OFFSET,
        Param("x0", "value", 0.0, "initial state of the direct-form realisation (n,)"),
    )
    _values = ("num", "den", "x0")

    def __init__(self, name, params):
        super().__init__(name, params)
        self._set()

    def _matrices(self, p):
        den = p.den.reshape(-1) if p.den.ndim <= 1 else p.den
        if den.ndim == 1 and den.size and den[0] == 0:
            raise ParamError("den", f"the leading coefficient of den must not be zero, got "
                                    f"{den.tolist()}: remove leading zeros")
        num, den = polynomial("num", p.num), polynomial("den", p.den)
        A, B, C, D = tf_realisation(num, den)
        n = A.shape[0]
        x0 = p.x0.reshape(-1)
        if x0.size == 1:
            x0 = np.full(n, x0[0])
        if x0.shape != (n,):
            raise ParamError("x0", f"x0 must be a scalar or have {n} elements (deg den), got "
                                   f"shape {p.x0.shape}")
        return A, B, C, D, x0

    def ports(self):
        return [In("u", shape=())], [Out("y", shape=(), feedthrough=self._feedthrough)]


# method -> (a, c): y[n] = clip(x[n] + K*T*a*u[n]), x[n+1] = y[n] + K*T*c*u[n]
_METHODS = {"forward_euler": (0.0, 1.0), "backward_euler": (1.0, 0.0), "trapezoidal": (0.5, 0.5)}


class DiscreteIntegrator(_Discrete):
    """Simulink's discrete-time integrator with output limits, at the hits t_n = offset + n*period.

        y[0] = clip(x0),   y[n] = clip(y[n-1] + K*T*(a*u[n] + c*u[n-1]))   (n >= 1)

    with (a, c) = (0, 1) forward Euler (1/s ~ T/(z - 1)), (1, 0) backward Euler
    (T*z/(z - 1)), (1/2, 1/2) trapezoidal (T/2*(z + 1)/(z - 1)); clip to [lower, upper].
    Input: u, any shape. Output: y, u's shape (a non-scalar x0 fixes it); K, lower and upper
    broadcast to it. Direct feedthrough (at the hits) for backward Euler and trapezoidal only.
    The first hit outputs x0 whatever the method (Simulink's "initial output"). Units: y in
    units of K*u*s.
    """

    type = "discrete_integrator"
    slots = 1
    params = (
        Param("K", "value", 1.0, "gain applied to the input"),
        _PERIOD,
        SAMPLE_OFFSET,
        Param("method", "choice", "forward_euler", "integration rule", choices=tuple(_METHODS)),
        Param("x0", "value", 0.0, "initial output"),
        Param("lower", "value", -np.inf, "lower limit of the output", allow_inf=True),
        Param("upper", "value", np.inf, "upper limit of the output", allow_inf=True),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        p = self.p
        check_ordered(p, "lower", "upper")
        self.sample = Sample(p.period, p.offset)

    def ports(self):
        return self._x0_ports(feedthrough=() if self.p.method == "forward_euler" else ("u",))

    def infer(self, shapes):
        check_fits(("K", "lower", "upper"), self.p, shapes["u"])
        return super().infer(shapes)

    def discrete_state(self):
        # the state x, then a flag: 0 until the first hit's update (y[0] = x0 ignores u)
        return np.append(super().discrete_state(), 0.0)

    # run data: the gains K*T*a (now) and K*T*c (next) and the limits, broadcast to the signal
    def declare(self, d):
        super().declare(d)
        d.derived("now", self._shape)
        d.derived("next", self._shape)
        d.param("lower", self._shape)
        d.param("upper", self._shape)
        d.value("K")

    def derive(self, p):
        check_ordered(p, "lower", "upper")
        a, c = _METHODS[p.method]
        return {"now": p.K * (p.period * a), "next": p.K * (p.period * c)}

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        size = xd.size - 1
        self._x = xd[:size].reshape(self._shape, copy=False)
        self._started = xd[size:]
        self._scratch = np.zeros(self._shape)

    def initialize(self, t):
        np.clip(self._x, self.v.lower, self.v.upper, out=self.y[0])

    def output(self, t):
        y, v = self.y[0], self.v
        np.multiply(v.now, self.u[0], out=y)
        y *= self._started[0]
        y += self._x
        np.clip(y, v.lower, v.upper, out=y)

    def update(self, t):
        np.multiply(self.v.next, self.u[0], out=self._scratch)
        np.add(self.y[0], self._scratch, out=self._x)
        self._started[0] = 1.0

    # compiled form: xd = [x (n), started]
    def lower(self, c):
        n = c.n_out["y"]
        clip = "rt_clip({}, P_lower[i], P_upper[i])"
        return Lowering({
            "initialize": c.loop(n, f"out_y[i] = {clip.format('xd[i]')};"),
            "output": c.loop(n, f"out_y[i] = {clip.format(f'P_now[i] * in_u[i] * xd[{n}] + xd[i]')};"),
            "update": c.loop(n, "xd[i] = out_y[i] + P_next[i] * in_u[i];") + f"\nxd[{n}] = 1.0;"})

    def jacobian(self, pade=None):
        """After the first hit, per element: y = x + K*T*a*u and x[k+1] = y + K*T*c*u, or
        y = the limit (gain 0) where x + K*T*a*u lies outside [lower, upper]."""
        v = self.v
        now, after, lower, upper = (a.ravel() for a in (v.now, v.next, v.lower, v.upper))
        raw = self._x.ravel() + now * self.u[0].ravel()
        g = ((raw >= lower) & (raw <= upper)).astype(float)
        return Jacobian(np.diag(g), np.diag(g * now + after), np.diag(g), np.diag(g * now),
                        states=tuple(range(g.size)))
