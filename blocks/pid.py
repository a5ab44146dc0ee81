"""The PID controller, continuous or discrete, with output limits and anti-windup."""
import numpy as np

from blocksim.accel.lowering import Lowering, flat
from blocksim.block import EITHER, Block, In, Out, Sample
from blocksim.params import Param

# _METHODS: the integration rules of discrete_integrator (its output y[n] = x[n] + T*a*w[n],
# its state x[n+1] = y[n] + T*c*w[n]), for the discrete PID's I and D
from .discrete import SAMPLE_OFFSET
from .discrete_systems import _METHODS
from .param_checks import check_ordered, fitted

_GAINS = ("Kp", "Ki", "Kd", "N", "lower", "upper", "Kb", "x0")


class Pid(Block):
    """PID controller u = (Kp + Ki/s + Kd*N*s/(s + N)) e, limited to [lower, upper].

    Continuous (no `period`): with the integral state xi (xi(0) = x0, in units of u) and the
    derivative filter state xf (xf(0) = 0),
        u_raw = Kp*e + xi + Kd*N*(e - xf),   dxf/dt = N*(e - xf),   u = clip(u_raw)
    (where Kd = 0 the filter is left out, xf = 0: a PI controller adds no fast mode N that
    would limit an explicit solver's step),
        dxi/dt = Ki*e                         anti_windup: none
                 0 while saturated and Ki*e pushes further out, else Ki*e    (clamping)
                 Ki*e + Kb*(u - u_raw)       (back_calculation)
    The limit is a saturation with modes (lower / linear / upper, and clamped or not) switched
    only at located zero crossings of u_raw - upper, u_raw - lower (and Ki*e when clamping),
    so no solver step contains a kink.
    Discrete (`period` T): Simulink's discrete PID at the hits offset + k*T, held between them:
    the integral and the filter are discrete-time integrators of the chosen method (forward
    Euler T/(z-1), backward Euler T*z/(z-1), trapezoidal T/2*(z+1)/(z-1)), initial outputs x0
    and 0,
        u = Kp*e + I(z)*(Ki*e + aw) + Kd*N/(1 + N*alpha(z))*e,   alpha = the method's 1/s,
    limited to [lower, upper] at each hit. Clamping drops the integrator input Ki*e at a hit
    where the output would be saturated and Ki*e pushes further out; back-calculation adds
    aw = Kb*(u - u_raw), solved exactly where the method makes it implicit.
    Input: e (any shape). Output: u, e's shape; every parameter broadcasts to it (a gain per
    joint, say). Direct feedthrough unless Kp = Kd = 0. N > 0 (rad/s), lower <= upper.
    """

    type = "pid"
    params = (
        Param("Kp", "value", 1.0, "proportional gain"),
        Param("Ki", "value", 0.0, "integral gain (1/s)"),
        Param("Kd", "value", 0.0, "derivative gain (s)"),
        Param("N", "value", 100.0, "derivative filter coefficient (rad/s), > 0", positive=True),
        Param("lower", "value", -np.inf, "lower output limit", allow_inf=True),
        Param("upper", "value", np.inf, "upper output limit", allow_inf=True),
        Param("anti_windup", "choice", "none", "integrator handling while saturated",
              choices=("none", "clamping", "back_calculation")),
        Param("Kb", "value", 1.0, "back-calculation gain (1/s)", minimum=0.0),
        Param("x0", "value", 0.0, "initial value of the integral term (units of u)"),
        Param("period", "scalar", None, "sample period (s); absent: continuous", positive=True),
        SAMPLE_OFFSET,
        Param("method", "choice", "forward_euler", "discrete integration rule for I and D",
              choices=tuple(_METHODS)),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        p = self.p
        check_ordered(p, "lower", "upper")
        self.discrete = p.period is not None
        self._clamping = p.anti_windup == "clamping"
        self._back_calculation = p.anti_windup == "back_calculation"
        if self.discrete:
            self.sample = Sample(p.period, p.offset)
            self.output, self.update = self._discrete_output, self._discrete_update
            a, c = _METHODS[p.method]
            self._Ta, self._Tc = p.period * a, p.period * c
        self._direct = bool(np.any(p.Kp != 0) or np.any(p.Kd != 0))

    def ports(self):
        return [In("e")], [Out("u", feedthrough=("e",) if self._direct else ())]

    def infer(self, shapes):
        shape = shapes["e"]
        self._shape, self._n = shape, int(np.prod(shape, dtype=int))
        for name, value in zip(_GAINS, fitted(self.p, _GAINS, shape, port="e")):
            setattr(self, "_" + name, value)
        self._Nf = np.where(self._Kd != 0.0, self._N, 0.0)  # the filter's rate, 0 unused
        if self.discrete:  # the filter's gain d = gain*(Kd*e - xf) after the first hit
            self._dgain = self._N / (1.0 + self._N * self._Ta)
        return {"u": shape}

    def initial_shapes(self):
        return {"u": np.broadcast_shapes(*(getattr(self.p, n).shape for n in _GAINS))}

    def continuous_state(self):
        if self.discrete:
            return None
        return np.concatenate([self._x0, np.zeros(self._n)])  # xi, xf

    def discrete_state(self):
        n = self._n
        if self.discrete:  # xi, xf, then 0 until the first hit's update
            return np.concatenate([self._x0, np.zeros(n), [0.0]])
        # linear (1/0), held (the limit while saturated, else 0), integrating (1/0)
        return np.concatenate([np.ones(n), np.zeros(n), np.ones(n)])

    def zero_crossings(self):
        if self.discrete or not np.isfinite(np.r_[self._lower, self._upper]).any():
            return None
        k = 3 if self._clamping else 2
        return np.full(k * self._n, EITHER)  # u_raw - upper, u_raw - lower, Ki*e

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        n = self._n
        self._e = u[0].reshape(-1)
        self._u = y[0].reshape(-1)
        self._raw = np.zeros(n)
        self._tmp = np.zeros(n)
        if self.discrete:
            self._xi, self._xf, self._started = xd[:n], xd[n:2 * n], xd[2 * n:]
            self._d, self._w, self._i, self._f = (np.zeros(n) for _ in range(4))
            self._outside = np.zeros(n, bool)
            return
        self._xi, self._xf = x[:n], x[n:]
        self._dxi, self._dxf = dx[:n], dx[n:]
        self._linear, self._held, self._integrating = xd[:n], xd[n:2 * n], xd[2 * n:]
        self._finite_up = np.isfinite(self._upper)
        self._finite_lo = np.isfinite(self._lower)

    # ---- continuous --------------------------------------------------------------------------
    def _raw_output(self):
        """u_raw = Kp*e + xi + Kd*N*(e - xf) into self._raw."""
        raw, tmp = self._raw, self._tmp
        np.subtract(self._e, self._xf, out=tmp)
        tmp *= self._Kd
        tmp *= self._N
        np.multiply(self._Kp, self._e, out=raw)
        raw += self._xi
        raw += tmp
        return raw

    def output(self, t):
        np.multiply(self._raw_output(), self._linear, out=self._u)
        self._u += self._held

    def derivative(self, t):
        np.subtract(self._e, self._xf, out=self._dxf)
        self._dxf *= self._Nf
        dxi = self._dxi
        np.multiply(self._Ki, self._e, out=dxi)
        dxi *= self._integrating
        if self._back_calculation:
            np.subtract(self._u, self._raw_output(), out=self._tmp)
            self._tmp *= self._Kb
            dxi += self._tmp

    def indicator(self, t):
        n, z, raw = self._n, self.z, self._raw_output()
        np.subtract(raw, self._upper, out=z[:n])
        np.copyto(z[:n], -1.0, where=~self._finite_up)
        np.subtract(raw, self._lower, out=z[n:2 * n])
        np.copyto(z[n:2 * n], 1.0, where=~self._finite_lo)
        if z.size > 2 * n:
            np.multiply(self._Ki, self._e, out=z[2 * n:])

    def crossing(self, t, crossed):
        n, raw = self._n, self._raw_output()
        up = (raw > self._upper) | ((raw == self._upper) & (crossed[:n] > 0))
        lo = ~up & ((raw < self._lower) | ((raw == self._lower) & (crossed[n:2 * n] < 0)))
        held = np.where(up, self._upper, np.where(lo, self._lower, 0.0))
        linear = (~(up | lo)).astype(float)
        integrating = np.ones(n)
        if self._clamping:
            push = self._Ki * self._e
            integrating[(up & (push > 0)) | (lo & (push < 0))] = 0.0
        changed = not (np.array_equal(linear, self._linear) and np.array_equal(held, self._held)
                       and np.array_equal(integrating, self._integrating))
        self._linear[:], self._held[:], self._integrating[:] = linear, held, integrating
        return changed

    # ---- compiled form (continuous): P = [Kp, Ki, Kd, N, lower, upper, Kb, x0, Nf], n each;
    # x = [xi, xf], xd = [linear, held, integrating]
    def lower(self, c):
        if self.discrete:
            return None
        n = self._n
        P = {name: f"P[{k * n} + i]" for k, name in enumerate(_GAINS + ("Nf",))}
        raw = (f"{P['Kp']} * in_e[i] + x[i] + (in_e[i] - x[{n} + i]) * {P['Kd']} * {P['N']}")
        code = {
            "output": c.loop(n, f"out_u[i] = ({raw}) * xd[i] + xd[{n} + i];"),
            "derivative": c.loop(n, f"dx[{n} + i] = (in_e[i] - x[{n} + i]) * {P['Nf']}; "
                                    f"dx[i] = {P['Ki']} * in_e[i] * xd[{2 * n} + i];"
                                 + (f" dx[i] += (out_u[i] - ({raw})) * {P['Kb']};"
                                    if self._back_calculation else "")),
            "initialize": ""}
        if self.zero_crossings() is not None:
            clamp = (f"double push = {P['Ki']} * in_e[i]; "
                     "if ((up && push > 0) || (lo && push < 0)) integrating = 0.0; "
                     if self._clamping else "")
            code["indicator"] = c.loop(n, (
                f"double raw = {raw}; "
                f"z[i] = isfinite({P['upper']}) ? raw - {P['upper']} : -1.0; "
                f"z[{n} + i] = isfinite({P['lower']}) ? raw - {P['lower']} : 1.0;"
                + (f" z[{2 * n} + i] = {P['Ki']} * in_e[i];" if self._clamping else "")))
            code["crossing"] = c.loop(n, (
                f"double raw = {raw}; "
                f"int up = raw > {P['upper']} || (raw == {P['upper']} && crossed[i] > 0); "
                f"int lo = !up && (raw < {P['lower']} || (raw == {P['lower']} && "
                f"crossed[{n} + i] < 0)); "
                f"double held = up ? {P['upper']} : lo ? {P['lower']} : 0.0, "
                "linear = !(up || lo), integrating = 1.0; " + clamp +
                f"if (linear != xd[i] || held != xd[{n} + i] || integrating != xd[{2 * n} + i]) "
                f"changed = 1; xd[i] = linear; xd[{n} + i] = held; xd[{2 * n} + i] = integrating;"))
        return Lowering(code)

    def pack(self):
        return flat(*(getattr(self, "_" + name) for name in _GAINS), self._Nf)

    # ---- discrete ----------------------------------------------------------------------------
    def _discrete_output(self, t):
        """u at a hit; leaves the integrators' inputs (w, d) and outputs (i, f) for update."""
        started = self._started[0]
        Ta = self._Ta * started  # the first hit outputs the initial values
        e, d, w, i, f, raw = self._e, self._d, self._w, self._i, self._f, self._raw
        # filter: f = xf + Ta*d, d = N*(Kd*e - f)  =>  d = N*(Kd*e - xf)/(1 + N*Ta)
        np.multiply(self._Kd, e, out=d)
        d -= self._xf
        d *= self._dgain if started else self._N
        np.multiply(Ta, d, out=f)
        f += self._xf
        np.multiply(self._Ki, e, out=w)
        np.multiply(Ta, w, out=i)
        i += self._xi
        np.multiply(self._Kp, e, out=raw)
        raw += d
        raw += i
        u = self._u
        np.clip(raw, self._lower, self._upper, out=u)
        outside = self._outside
        np.not_equal(raw, u, out=outside)
        if self._clamping and outside.any():
            clamp = outside & (((raw > u) & (w > 0)) | ((raw < u) & (w < 0)))
            raw -= np.where(clamp, i - self._xi, 0.0)
            np.copyto(i, self._xi, where=clamp)
            np.copyto(w, 0.0, where=clamp)
            np.clip(raw, self._lower, self._upper, out=u)
        elif self._back_calculation and outside.any():
            # raw = raw0 + Ta*Kb*(u - raw) with u the limit: raw = (raw0 + c*u)/(1 + c)
            c = Ta * self._Kb
            np.copyto(raw, (raw + c * u) / (1.0 + c), where=outside)
            w += self._Kb * (u - raw)
            np.multiply(Ta, w, out=i)
            i += self._xi

    def _discrete_update(self, t):
        np.multiply(self._Tc, self._w, out=self._tmp)
        np.add(self._i, self._tmp, out=self._xi)
        np.multiply(self._Tc, self._d, out=self._tmp)
        np.add(self._f, self._tmp, out=self._xf)
        self._started[0] = 1.0

    def initialize(self, t):
        if self.discrete:  # before the first hit: the initial integral, no P or D
            np.clip(self._xi, self._lower, self._upper, out=self._u)
