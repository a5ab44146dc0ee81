"""Continuous-time blocks with state: integrator, derivative, rate limiter, LTI systems."""
import math

import numpy as np

from blocksim.accel.lowering import Lowering
from blocksim.block import FALLING, RISING, Block, In, Jacobian, Out, PortError
from blocksim.language.behaviour import Behaviour
from blocksim.params import Param, ParamError
from blocksim.rundata import evaluated

from .linearisation import mode_words, size
from .param_checks import DIRECTIONS, LIMITED, check_fits, check_ordered, fits, ordered


class Integrator(Block):
    """dy/dt = u, y(0) = x0; optionally limited to [lower, upper] and reset from outside.

    Input: u. Output: y (state, no feedthrough), u's shape. A non-scalar x0 fixes the shape,
    a scalar x0 broadcasts to it; in a loop that nothing else fixes (a scalar feedback loop),
    x0's own shape is the signal's.
    Limits (lower <= upper, broadcast to the signal; +-inf: none): y is held at a limit
    (dy/dt = 0) from the instant it reaches it until u points back inside; both instants are
    located zero crossings (y - lower falling, y - upper rising, then u through 0), so y never
    overshoots a limit.
    reset (none / rising / falling / either) adds an input `reset` (a scalar, or one per
    element): when it crosses 0 in that direction, y jumps to x0 — the parameter, or with
    x0_source: port the input `x0` read at that instant (e.g. -e*v for a bouncing ball). With
    x0_source: port the initial value is that input at the start, too.
    Edges are Simulink's trigger edges, judged against the value before the instant: rising
    from negative to zero or above, or from zero to positive; falling the mirror image (so a
    0/1 pulse rises at 0 -> 1 and falls at 1 -> 0); either both; at most one reset per element
    and instant. Crossings inside a step are located (the indicator is the reset input).
    """

    type = "integrator"
    params = (
        Param("x0", "value", 0.0, "initial value (a scalar broadcasts to u's shape)"),
        Param("lower", "value", -np.inf, "lower limit (-inf: none)", allow_inf=True),
        Param("upper", "value", np.inf, "upper limit (inf: none)", allow_inf=True),
        Param("reset", "choice", "none", "external reset on the `reset` input crossing 0",
              choices=("none", "rising", "falling", "either")),
        Param("x0_source", "choice", "internal", "where a reset takes x0 from: the parameter or "
              "the `x0` input", choices=("internal", "port")),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        p = self.p
        check_ordered(p, "lower", "upper")
        self._limited = bool(evaluated(LIMITED, p))
        self._port_x0 = p.x0_source == "port"
        # dx/dt = u; held at a limit (xd = -1 lower, +1 upper): 0
        self.behaviour = Behaviour(derivative="where(xd, 0, u)" if self._limited else "u",
                                   state="u")
        if p.reset != "none":
            self.advance = self._advance_reset
        self._rises, self._falls = p.reset in ("rising", "either"), p.reset in ("falling", "either")

    def ports(self):
        shape = self.p.x0.shape or None
        ins = [In("u", shape=shape, doc="rate of change")]
        if self.p.reset != "none":
            ins.append(In("reset", doc="resets y when it crosses 0 (scalar or per element)"))
        if self._port_x0:
            ins.append(In("x0", doc="value y takes at a reset and at the start"))
        return ins, [Out("y", shape=shape, state=True)]

    def infer(self, shapes):
        shape = self._shape = shapes["u"]
        for port in ("reset", "x0"):
            if port in shapes and shapes[port] not in ((), shape):
                raise PortError(port, f"expected a scalar or the signal's shape {shape}, got "
                                      f"{shapes[port]}")
        for name in ("x0", "lower", "upper"):
            if not fits(getattr(self.p, name), shape):
                raise ParamError(name, f"{name} of shape {getattr(self.p, name).shape} does not "
                                       f"fit the signal's shape {shape}")
        self._n = math.prod(shape)
        _check_x0(self.p)
        self._resets = math.prod(shapes["reset"]) if "reset" in shapes else 0
        return {"y": shape}

    # run data: x0 and the limits broadcast to the signal (P_x0, P_lower, P_upper); compiled
    # resets keep the reset input last seen, its value before the instant and the elements
    # reset at it (one per reset element) and the instant of the last check (NaN: none yet)
    def declare(self, d):
        for name in ("x0", "lower", "upper"):
            d.param(name, self._shape)
        d.check(*ordered("lower", "upper"))
        d.check(*_X0_WITHIN)
        d.fact(limited=LIMITED)
        r = self._resets
        if r:
            d.work("seen", r)
            d.work("before", r)
            d.work("done", r)
            d.work("instant", [np.nan])

    def initial_shapes(self):
        return {"y": self.p.x0.shape}

    def continuous_state(self):
        return np.broadcast_to(self.p.x0, self._shape).ravel()

    def discrete_state(self):
        # per element: -1 held at lower, 0 free, +1 held at upper
        return np.zeros(self._n) if self._limited else None

    def zero_crossings(self):
        n = self._n
        dirs = []
        if self._limited:  # y - lower, y - upper, then "u points back inside"
            dirs += [FALLING] * n + [RISING] * n + [RISING] * n
        if self._resets:
            dirs += [DIRECTIONS[self.p.reset]] * self._resets
        return dirs or None

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._u = u[0].reshape(-1)
        self._x0 = self.v.x0.reshape(-1)  # flat views of the run's values
        self._lower, self._upper = self.v.lower.reshape(-1), self.v.upper.reshape(-1)
        names = [port.name for port in self.ports()[0]]
        self._reset_in = u[names.index("reset")].reshape(-1) if "reset" in names else None
        self._x0_in = u[names.index("x0")].reshape(-1) if "x0" in names else None
        self._free = np.zeros(self._n, bool)
        if self._reset_in is not None:
            # the reset input last seen (after an accepted step or an event call), its value
            # before the current event instant, and the elements reset at that instant
            self._reset_seen = self._reset_in.copy()
            self._reset_before = self._reset_in.copy()
            self._reset_done = np.zeros(self._resets, bool)
            self._instant = None

    def initialize(self, t):
        if self._port_x0:
            self.x[:] = np.clip(self._x0_in, self._lower, self._upper)
        if self._reset_in is not None:
            np.copyto(self._reset_seen, self._reset_in)
            self._instant = None

    def _advance_reset(self, t):
        np.copyto(self._reset_seen, self._reset_in)

    def _reset_edges(self, t):
        """The reset elements that see an edge in their direction at instant t (each once)."""
        if t != self._instant:
            self._instant = t
            np.copyto(self._reset_before, self._reset_seen)
            self._reset_done[:] = False
        before, now = self._reset_before, self._reset_in
        edge = np.zeros(self._resets, bool)
        if self._rises:
            edge |= ((before < 0) & (now >= 0)) | ((before <= 0) & (now > 0))
        if self._falls:
            edge |= ((before > 0) & (now <= 0)) | ((before >= 0) & (now < 0))
        edge &= ~self._reset_done
        self._reset_done |= edge
        np.copyto(self._reset_seen, now)
        return edge

    def indicator(self, t):
        z, n = self.z, self._n
        if self._limited:
            np.subtract(self.x, self._lower, out=z[:n])
            np.subtract(self.x, self._upper, out=z[n:2 * n])
            leave = z[2 * n:3 * n]  # held at lower: u rising through 0; at upper: -u
            np.multiply(self._u, self.xd, out=leave)
            np.negative(leave, out=leave)
            np.equal(self.xd, 0.0, out=self._free)
            np.copyto(leave, 1.0, where=self._free)
        if self._resets:
            z[z.size - self._resets:] = self._reset_in

    def crossing(self, t, crossed):
        changed = False
        n = self._n
        if self._resets:
            fired = self._reset_edges(t)
            if fired.any():
                mask = fired if self._resets == n else np.full(n, True)
                source = self._x0_in if self._port_x0 else self._x0
                target = np.broadcast_to(source, (n,))
                self.x[mask] = np.clip(target, self._lower, self._upper)[mask]
                changed = True
        if self._limited:
            x, u = self.x, self._u
            outside = (x < self._lower) | (x > self._upper)
            if outside.any():  # reached a limit: the located crossing lies just beyond it
                np.clip(x, self._lower, self._upper, out=x)
                changed = True
            mode = np.where((x <= self._lower) & (u < 0), -1.0,
                            np.where((x >= self._upper) & (u > 0), 1.0, 0.0))
            changed |= not np.array_equal(mode, self.xd)
            self.xd[:] = mode
        return changed

    # ---- compiled form
    def lower(self, c):
        n, r = self._n, self._resets
        x0 = "in_x0[{}]".format("0" if c.n_in.get("x0") == 1 else "i") if self._port_x0 \
            else "P_x0[i]"
        clip = "rt_clip({}, P_lower[i], P_upper[i])"
        code = {"initialize": c.loop(n, f"x[i] = {clip.format(x0)};") if self._port_x0 else ""}
        indicator, crossing = [], []
        if self._limited:
            indicator.append(c.loop(n, f"z[i] = x[i] - P_lower[i]; z[{n} + i] = x[i] - P_upper[i]; "
                                       f"z[{2 * n} + i] = xd[i] == 0.0 ? 1.0 : -(in_u[i] * xd[i]);"))
        if r:
            indicator.append(c.loop(r, f"z[{c.nz - r} + i] = in_reset[i];"))
            edge = []
            if self._rises:
                edge.append("(b < 0 && now >= 0) || (b <= 0 && now > 0)")
            if self._falls:
                edge.append("(b > 0 && now <= 0) || (b >= 0 && now < 0)")
            crossing.append(
                "if (t != W_instant[0]) { W_instant[0] = t; "
                + c.loop(r, "W_before[i] = W_seen[i]; W_done[i] = 0.0;") + " }\n"
                f"char fired[{r}]; int any = 0;\n"
                + c.loop(r, f"double b = W_before[i], now = in_reset[i]; "
                            f"int e = ({' || '.join(edge)}) && W_done[i] == 0.0; "
                            "if (e) W_done[i] = 1.0; W_seen[i] = now; fired[i] = (char)e; any |= e;")
                + "\nif (any) { "
                + c.loop(n, f"if ({'fired[i]' if r == n else '1'}) x[i] = {clip.format(x0)};")
                + " changed = 1; }")
            code["advance"] = c.loop(r, "W_seen[i] = in_reset[i];")
            code["initialize"] += "\n" + c.loop(r, "W_seen[i] = in_reset[i];") + "\nW_instant[0] = NAN;"
        if self._limited:
            crossing.append(
                "int outside = 0;\n"
                + c.loop(n, "if (x[i] < P_lower[i] || x[i] > P_upper[i]) outside = 1;")
                + "\nif (outside) { " + c.loop(n, f"x[i] = {clip.format('x[i]')};")
                + " changed = 1; }\n"
                + c.loop(n, "double mode = x[i] <= P_lower[i] && in_u[i] < 0 ? -1.0 : "
                            "x[i] >= P_upper[i] && in_u[i] > 0 ? 1.0 : 0.0; "
                            "if (mode != xd[i]) changed = 1; xd[i] = mode;"))
        if indicator:
            code["indicator"], code["crossing"] = "\n".join(indicator), "\n".join(crossing)
        return Lowering(code)

    def jacobian(self, pade=None):
        """dx/dt = u (0 for an element held at a limit), y = x; reset and x0 inputs act only
        at events: no gain."""
        n = self._n
        free = np.ones(n) if not self._limited else (self.xd == 0.0).astype(float)
        others = sum(size(u) for u in self.u[1:])
        return Jacobian(np.zeros((n, n)), np.hstack([np.diag(free), np.zeros((n, others))]),
                        np.eye(n), np.zeros((n, n + others)))

    def mode_text(self):
        if not self._limited:
            return None
        return mode_words(self.xd, {-1.0: "held at lower", 0.0: "free", 1.0: "held at upper"})


# an integrator's x0 within its limits (a declared check, rundata.py)
_X0_WITHIN = ("min(x0 >= lower) != 0 and min(x0 <= upper) != 0", "x0",
              "x0 must lie within [lower, upper]")


def _check_x0(p):
    if not evaluated(_X0_WITHIN[0], p):
        raise ParamError(*_X0_WITHIN[1:])


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

    def declare(self, d):
        d.derived("rate", ())  # 1/tau: (u - x)/tau is computed (u - x) * rate
        d.value("tau")

    def derive(self, p):
        return {"rate": 1.0 / p.tau}

    def _lowering(self, c, code):
        """The compiled form: x = u at the start, then `code` ({method: body of a loop over
        the elements i})."""
        n = c.n_in["u"]
        return Lowering({"initialize": c.loop(n, "x[i] = in_u[i];"),
                         **{method: c.loop(n, body) for method, body in code.items()}})


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
        _check_falling(self.p)

    def ports(self):
        return [In("u")], [Out("y", feedthrough=(), state=True)]

    def infer(self, shapes):
        u = shapes["u"]
        check_fits(("rising", "falling"), self.p, u)
        self._shape = u
        return {"y": u}

    def declare(self, d):
        super().declare(d)
        d.param("rising", self._shape)
        d.param("falling", self._shape)

    def derive(self, p):
        _check_falling(p)
        return super().derive(p)

    def derivative(self, t):
        dx, v = self._dx, self.v
        np.subtract(self.u[0], self._x, out=dx)
        dx *= v.rate
        np.minimum(dx, v.rising, out=dx)
        np.maximum(dx, v.falling, out=dx)

    def lower(self, c):
        return self._lowering(c, {"derivative": (
            "dx[i] = rt_maximum(rt_minimum((in_u[i] - x[i]) * P_rate[0], P_rising[i]), "
            "P_falling[i]);")})


def _check_falling(p):
    if np.any(p.falling > 0):
        raise ParamError("falling", f"must be <= 0, got {p.falling.tolist()}")


class Derivative(_InputShapedState):
    """y = (u - x)/tau, dx/dt = (u - x)/tau, x(0) = u(0): the derivative filtered by s/(tau*s + 1).

    Input: u, any shape. Output: y, u's shape, direct feedthrough. tau > 0 (s) is the filter's
    time constant; solver-independent, unlike a finite difference. The output multiplies the
    solver's error in x by 1/tau (1000 for the default): with a small tau use tight
    tolerances or a stiff solver (radau) when y itself matters, not just its effect.
    """

    type = "derivative"
    params = (Param("tau", "scalar", 1e-3, "filter time constant (s), > 0", positive=True),)

    def ports(self):
        return [In("u")], [Out("y")]

    def infer(self, shapes):
        self._shape = shapes["u"]
        return {"y": self._shape}

    def output(self, t):
        y = self.y[0]
        np.subtract(self.u[0], self._x, out=y)
        y *= self.v.rate

    def derivative(self, t):
        dx = self._dx
        np.subtract(self.u[0], self._x, out=dx)
        dx *= self.v.rate

    def lower(self, c):
        return self._lowering(c, {"output": "out_y[i] = (in_u[i] - x[i]) * P_rate[0];",
                                  "derivative": "dx[i] = (in_u[i] - x[i]) * P_rate[0];"})

    def jacobian(self, pade=None):
        """dx/dt = (u - x)/tau, y = (u - x)/tau."""
        r = float(self.v.rate) * np.eye(int(np.prod(self._shape, dtype=int)))
        return Jacobian(-r, r, -r, r)


class _LinearOutput(Block):
    """y = C s + D u and s' = A s + B u, with s the block's state: the continuous LTI blocks
    (s = x, s' its derivative) and their discrete twins (s = the discrete state, s' its
    next value), declared as a Behaviour (both modes and the Jacobian from its texts; a
    scalar u is read as one element). Subclasses give `_matrices(p)`, (A, B, C, D, x0) of
    parameters p (checked), and call `_set` in __init__; the ports are u (m,) and y (p,),
    m = columns of B, p = rows of C (SISO subclasses declare scalar ones). A, B, C and D are
    the block's run data (P_A ... P_D, self.v.A ...), from its parameters `_values`."""

    _values = ()
    _state = "x"  # the state s in the texts
    _next = "derivative"  # the Behaviour field s' is

    def _matrices(self, p):
        raise NotImplementedError

    def _set(self):
        A, B, C, D, _ = self._matrices(self.p)
        self._shapes = {"A": A.shape, "B": B.shape, "C": C.shape, "D": D.shape}
        # y = C s only (no feedthrough) when D == 0: such a block breaks algebraic loops.
        direct = bool(D.any())
        self._feedthrough = ("u",) if direct else ()
        s = self._state  # (a pure gain's is empty: C @ s is 0)
        self.behaviour = Behaviour(outputs={"y": f"C @ {s} + D @ u" if direct else f"C @ {s}"},
                                   flat=("u",), **{self._next: f"A @ {s} + B @ u"})

    def declare(self, d):
        for name, shape in self._shapes.items():
            d.derived(name, shape)
        d.value(*self._values)
        d.fact("direct")

    def derive(self, p):
        A, B, C, D, _ = self._matrices(p)
        return {"A": A, "B": B, "C": C, "D": D, "direct": bool(D.any())}

    def _initial(self):
        return self._matrices(self.p)[4]

    def ports(self):
        m, q = self._shapes["B"][1], self._shapes["C"][0]
        # one input: a scalar or (1,) (Simulink expands scalars); then one output follows
        # the input's form (scalar in, scalar out)
        return ([In("u", shape=(m,) if m > 1 else None)],
                [Out("y", shape=(q,) if m > 1 or q > 1 else None,
                     feedthrough=self._feedthrough)])

    def infer(self, shapes):
        u = shapes["u"]
        if self._shapes["B"][1] > 1:
            return {}  # declared: u (m,), y (p,)
        if u not in ((), (1,)):
            raise PortError("u", f"a system with one input (B has one column) takes a scalar "
                                 f"or a (1,) vector, got shape {u}")
        return {} if self._shapes["C"][0] > 1 else {"y": u}

    def initial_shapes(self):
        """In a loop nothing else shapes, a single-input single-output system's signal is a
        scalar."""
        return {"y": ()} if self._shapes["B"][1] == 1 and self._shapes["C"][0] == 1 else None


class _LTI(_LinearOutput):
    """dx/dt = A x + B u, y = C x + D u with x(0) = x0."""

    def continuous_state(self):
        return self._initial()


class StateSpace(_LTI):
    """dx/dt = A x + B u, y = C x + D u, x(0) = x0: continuous LTI.

    Input: u (m,), m = columns of B. Output: y (p,), p = rows of C; no feedthrough when D == 0.
    A (n, n), B (n, m), C (p, n), D (p, m); a scalar A, a vector B (one input) or C (one output),
    a scalar D (e.g. 0) and a scalar x0 are accepted and broadcast. With one input u may be a
    scalar (as in Simulink); with one input and one output y is then a scalar too.
    """

    type = "state_space"
    params = (
        Param("A", doc="state matrix (n, n)"),
        Param("B", doc="input matrix (n, m)"),
        Param("C", doc="output matrix (p, n)"),
        Param("D", doc="feedthrough matrix (p, m); a scalar broadcasts"),
        Param("x0", "value", 0.0, "initial state (n,)"),
    )
    _values = ("A", "B", "C", "D", "x0")

    def __init__(self, name, params):
        super().__init__(name, params)
        self._set()

    def _matrices(self, p):
        return lti_matrices(p)


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
    _values = ("num", "den")

    def __init__(self, name, params):
        super().__init__(name, params)
        self._set()

    def _matrices(self, p):
        num, den = polynomial("num", p.num), polynomial("den", p.den)
        with np.errstate(over="ignore", invalid="ignore"):  # the declared texts refuse those
            return (*tf_realisation(num, den), np.zeros(len(den) - 1))

    def _initial(self):
        return np.zeros(self._shapes["A"][0])

    def ports(self):
        return [In("u", shape=())], [Out("y", shape=(), feedthrough=self._feedthrough)]

    def declare(self, d):
        """num and den as given; the realisation, the orders and the feedthrough as texts
        over them (the exported C computes them again: num and den are tunable)."""
        texts = tf_texts(self.p.num, self.p.den)
        if texts is None:
            return super().declare(d)
        d.param("num")
        d.param("den")
        d.check("max(abs(den)) != 0", "den", "the denominator is zero")
        for name, text in texts.pop("arrays").items():
            d.derived(name, self._shapes[name], text)
        d.fact(**texts)


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


def tf_texts(num, den):
    """tf_realisation as expression texts over the coefficients `num` and `den` as given
    (leading zeros and all): {"arrays": {A, B, C, D: text}, fact: text} with the facts that
    keep the realisation's shapes (the orders after leading zeros, the feedthrough); None
    when there is nothing to realise (no state) or the given values are refused."""
    try:
        stripped = [len(polynomial(k, v)) for k, v in (("num", num), ("den", den))]
    except ParamError:
        return None
    given = [np.size(num), np.size(den)]
    if stripped[1] < 2 or stripped[0] > stripped[1] or min(np.ndim(num), np.ndim(den)) < 1:
        return None
    (nn, nd), (kn, kd), n = stripped, (given[0] - stripped[0], given[1] - stripped[1]), \
        stripped[1] - 1
    lead = f"den[{kd}]"
    a = [f"(den[{kd + 1 + i}] / {lead})" for i in range(n)]
    b = [f"(0 / {lead})" if j < nd - nn else f"(num[{kn + j - nd + nn}] / {lead})"
         for j in range(n + 1)]
    rows = [[f"-{a[i]}" for i in range(n)]]
    rows += [["1" if j == r - 1 else "0" for j in range(n)] for r in range(1, n)]
    table = lambda rows: "[" + ", ".join("[" + ", ".join(r) + "]" for r in rows) + "]"
    texts = {"arrays": {"A": table(rows), "B": table([["1"]] + [["0"]] * (n - 1)),
                        "C": table([[f"{b[i + 1]} - {a[i]} * {b[0]}" for i in range(n)]]),
                        "D": table([[b[0]]])}}
    for name, k, length in (("num", kn, given[0]), ("den", kd, given[1])):
        terms = [f"max(abs({name}[:{k}])) == 0"] if k else []
        terms += [f"{name}[{k}] != 0"] if k < length - 1 else []
        if terms:
            texts[f"{name}_order"] = " and ".join(terms)
    texts["direct"] = f"{b[0]} != 0"
    return texts


def polynomial(param, value):
    """Coefficients as a vector with leading zeros removed (all zeros: [0])."""
    if value.ndim > 1:
        raise ParamError(param, f"expected a vector of coefficients, got shape {value.shape}")
    c = value.reshape(-1)
    if c.size == 0:
        raise ParamError(param, "expected at least one coefficient")
    nonzero = np.flatnonzero(c)
    return c[nonzero[0]:] if nonzero.size else c[-1:]
