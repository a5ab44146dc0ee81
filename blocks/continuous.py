"""Continuous-time blocks with state: integrator, derivative, rate limiter, LTI systems."""
import numpy as np

from blocksim.block import Block, In, Out, PortError
from blocksim.params import Param, ParamError


class Integrator(Block):
    """dy/dt = u, y(0) = x0: the integral of the input.

    Input: u. Output: y (state, no feedthrough), u's shape. A non-scalar x0 fixes the
    shape, a scalar x0 broadcasts to it; in a loop that nothing else fixes (a scalar
    feedback loop), x0's own shape is the signal's.
    """

    type = "integrator"
    params = (Param("x0", "value", 0.0, "initial value (a scalar broadcasts to u's shape)"),)

    def ports(self):
        shape = self.p.x0.shape or None
        return [In("u", shape=shape)], [Out("y", shape=shape, state=True)]

    def infer(self, shapes):
        self._shape = shapes["u"]
        return {"y": self._shape}

    def initial_shapes(self):
        return {"y": self.p.x0.shape}

    def continuous_state(self):
        return np.broadcast_to(self.p.x0, self._shape).ravel()

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._dx = dx.reshape(self._shape)

    def derivative(self, t):
        np.copyto(self._dx, self.u[0])


class _InputShapedState(Block):
    """A continuous state with the input's shape, set to u(0) at the start (rate limiter,
    filtered derivative); subclasses set `_shape` in infer and use `_x`, `_dx`."""

    def continuous_state(self):
        return np.zeros(self._shape)

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._x = x.reshape(self._shape, copy=False)
        self._dx = dx.reshape(self._shape, copy=False)

    def initialize(self, t):
        np.copyto(self._x, self.u[0])


class RateLimiter(_InputShapedState):
    """dy/dt = clip((u - y)/tau, falling, rising), y(0) = u(0).

    Input: u, any shape. Output: y (state, no feedthrough), u's shape. A ramp at the slew limit
    while u is far away, then a first-order approach with time constant tau (s). rising >= 0 and
    falling <= 0 (units/s; +-inf: no limit) broadcast to u's shape.
    """

    type = "rate_limiter"
    params = (
        Param("rising", "value", doc="largest rate of increase (units/s, >= 0)", allow_inf=True,
              minimum=0.0),
        Param("falling", "value", doc="most negative rate of decrease (units/s, <= 0)",
              allow_inf=True),
        Param("tau", "scalar", 1e-3, "time constant of the final approach (s)", positive=True),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        if np.any(self.p.falling > 0):
            raise ParamError("falling", f"must be <= 0, got {self.p.falling.tolist()}")
        self._rate = 1.0 / self.p.tau

    def ports(self):
        return [In("u")], [Out("y", feedthrough=(), state=True)]

    def infer(self, shapes):
        u = shapes["u"]
        _check_fits(("rising", "falling"), self.p, u)
        self._shape = u
        return {"y": u}

    def derivative(self, t):
        dx = self._dx
        np.subtract(self.u[0], self._x, out=dx)
        dx *= self._rate
        np.minimum(dx, self.p.rising, out=dx)
        np.maximum(dx, self.p.falling, out=dx)


class Derivative(_InputShapedState):
    """y = (u - x)/tau, dx/dt = (u - x)/tau, x(0) = u(0): the derivative filtered by s/(tau*s + 1).

    Input: u, any shape. Output: y, u's shape, direct feedthrough. tau > 0 (s) is the filter's
    time constant; solver-independent, unlike a finite difference. The output multiplies the
    solver's error in x by 1/tau (1000 for the default): with a small tau use tight
    tolerances or a stiff solver (radau) when y itself matters, not just its effect.
    """

    type = "derivative"
    params = (Param("tau", "scalar", 1e-3, "filter time constant (s), > 0", positive=True),)

    def __init__(self, name, params):
        super().__init__(name, params)
        self._rate = 1.0 / self.p.tau

    def ports(self):
        return [In("u")], [Out("y")]

    def infer(self, shapes):
        self._shape = shapes["u"]
        return {"y": self._shape}

    def output(self, t):
        y = self.y[0]
        np.subtract(self.u[0], self._x, out=y)
        y *= self._rate

    def derivative(self, t):
        dx = self._dx
        np.subtract(self.u[0], self._x, out=dx)
        dx *= self._rate


def _check_fits(names, p, shape):
    """PortError unless each named parameter broadcasts to the input's shape unchanged."""
    for name in names:
        value = getattr(p, name).shape
        try:
            ok = np.broadcast_shapes(value, shape) == shape
        except ValueError:
            ok = False
        if not ok:
            raise PortError("u", f"{name} of shape {value} does not fit a signal of shape {shape}")


class _LTI(Block):
    """dx/dt = A x + B u, y = C x + D u with x(0) = x0, on flat views u (m,), y (p,), x (n,).
    Subclasses call `_set` in __init__ and declare the ports with `_feedthrough`."""

    def _set(self, A, B, C, D, x0):
        self._A, self._B, self._C, self._D, self._x0 = A, B, C, D, x0
        self._direct = bool(D.any())
        # y = C x only (no feedthrough) when D == 0: such an LTI block breaks algebraic loops.
        self._feedthrough = ("u",) if self._direct else ()

    def continuous_state(self):
        return self._x0

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._u = u[0].reshape(-1, copy=False)
        self._y = y[0].reshape(-1, copy=False)
        self._Bu = np.zeros_like(x)
        self._Du = np.zeros_like(self._y)

    def output(self, t):
        np.matmul(self._C, self.x, out=self._y)
        if self._direct:
            np.matmul(self._D, self._u, out=self._Du)
            self._y += self._Du

    def derivative(self, t):
        np.matmul(self._A, self.x, out=self.dx)
        np.matmul(self._B, self._u, out=self._Bu)
        self.dx += self._Bu


class StateSpace(_LTI):
    """dx/dt = A x + B u, y = C x + D u, x(0) = x0: continuous LTI.

    Input: u (m,), m = columns of B. Output: y (p,), p = rows of C; no feedthrough when D == 0.
    A (n, n), B (n, m), C (p, n), D (p, m); a scalar A, a vector B (one input) or C (one output),
    a scalar D (e.g. 0) and a scalar x0 are accepted and broadcast.
    """

    type = "state_space"
    params = (
        Param("A", doc="state matrix (n, n)"),
        Param("B", doc="input matrix (n, m)"),
        Param("C", doc="output matrix (p, n)"),
        Param("D", doc="feedthrough matrix (p, m); a scalar broadcasts"),
        Param("x0", "value", 0.0, "initial state (n,)"),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        self._set(*lti_matrices(self.p))

    def ports(self):
        m, q = self._B.shape[1], self._C.shape[0]
        return ([In("u", shape=(m,))],
                [Out("y", shape=(q,), feedthrough=self._feedthrough)])


class TransferFunction(_LTI):
    """Y(s)/U(s) = num(s)/den(s): SISO continuous LTI from rest.

    Input: u, scalar. Output: y, scalar; no feedthrough when strictly proper.
    num, den: coefficients in descending powers of s (as MATLAB's tf); proper (deg num <= deg
    den). Realised in controllable canonical form: with den monic s^n + a1 s^(n-1) + ... + an
    and num = b0 s^n + ... + bn, A = [[-a1 ... -an], [I 0]], B = e1,
    C = [b1 - a1 b0, ..., bn - an b0], D = b0.
    """

    type = "transfer_function"
    params = (
        Param("num", doc="numerator coefficients, highest power first"),
        Param("den", doc="denominator coefficients, highest power first"),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        num, den = polynomial("num", self.p.num), polynomial("den", self.p.den)
        self._set(*tf_realisation(num, den), np.zeros(len(den) - 1))

    def ports(self):
        return [In("u", shape=())], [Out("y", shape=(), feedthrough=self._feedthrough)]


def lti_matrices(p):
    """(A, B, C, D, x0) of a state-space block's parameters `p` (A, B, C, D, x0), shapes
    checked and the documented shorthands broadcast: a scalar A, a vector B (one input) or C
    (one output), a scalar D and a scalar x0."""
    A = np.atleast_2d(p.A)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] == 0:
        raise ParamError("A", f"A must be a non-empty square matrix, got shape {p.A.shape}")
    n = A.shape[0]
    B = p.B.reshape(n, 1) if p.B.ndim < 2 and p.B.size == n else p.B
    if B.ndim != 2 or B.shape[0] != n or B.shape[1] == 0:
        raise ParamError("B", f"B must have {n} rows (one per state), got shape {p.B.shape}")
    C = p.C.reshape(1, n) if p.C.ndim < 2 and p.C.size == n else p.C
    if C.ndim != 2 or C.shape[1] != n or C.shape[0] == 0:
        raise ParamError("C", f"C must have {n} columns (one per state), got shape "
                              f"{p.C.shape}")
    shape = (C.shape[0], B.shape[1])
    D = p.D
    if D.size == 1:
        D = np.full(shape, float(D.reshape(())))
    elif D.ndim == 1 and 1 in shape and D.size == shape[0] * shape[1]:
        D = D.reshape(shape)
    if D.shape != shape:
        raise ParamError("D", f"D must have shape {shape} (rows of C, columns of B), "
                              f"got {p.D.shape}")
    x0 = p.x0
    if x0.size == 1:
        x0 = np.full(n, float(x0.reshape(())))
    if x0.shape != (n,):
        raise ParamError("x0", f"x0 must be a scalar or have shape ({n},), got {p.x0.shape}")
    return A, B, C, D, x0


def tf_realisation(num, den):
    """(A, B, C, D) of num/den (descending powers, leading zeros removed) in controllable
    canonical form: with den monic s^n + a1 s^(n-1) + ... + an and num = b0 s^n + ... + bn,
    A = [[-a1 ... -an], [I 0]], B = e1, C = [b1 - a1 b0, ..., bn - an b0], D = b0. The same
    matrices realise a discrete num(z)/den(z) (direct form II)."""
    if not den.any():
        raise ParamError("den", "the denominator is zero")
    if len(num) > len(den):
        raise ParamError("num", f"improper transfer function: numerator degree "
                                f"{len(num) - 1} > denominator degree {len(den) - 1}")
    n = len(den) - 1
    a = den[1:] / den[0]
    b = np.concatenate([np.zeros(len(den) - len(num)), num]) / den[0]
    A = np.eye(n, k=-1)
    B = np.zeros((n, 1))
    if n:
        A[0] = -a
        B[0, 0] = 1.0
    C = (b[1:] - a * b[0]).reshape(1, n)
    return A, B, C, b[:1].reshape(1, 1)


def polynomial(param, value):
    """Coefficients as a vector with leading zeros removed (all zeros: [0])."""
    if value.ndim > 1:
        raise ParamError(param, f"expected a vector of coefficients, got shape {value.shape}")
    c = value.reshape(-1)
    if c.size == 0:
        raise ParamError(param, "expected at least one coefficient")
    nonzero = np.flatnonzero(c)
    return c[nonzero[0]:] if nonzero.size else c[-1:]
