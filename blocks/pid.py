"""The PID controller, continuous or discrete, with output limits and anti-windup."""
import numpy as np

from blocksim.accel.lowering import Lowering
from blocksim.block import EITHER, Block, In, Jacobian, Out, Sample
from blocksim.params import Param
from blocksim.rundata import evaluated

# _METHODS: the integration rules of discrete_integrator (its output y[n] = x[n] + T*a*w[n],
# its state x[n+1] = y[n] + T*c*w[n]), for the discrete PID's I and D
from .discrete import SAMPLE_OFFSET
from .discrete_systems import _METHODS
from .linearisation import mode_words
from .param_checks import LIMITED, check_fits, check_ordered, fitted, ordered

_GAINS = ("Kp", "Ki", "Kd", "N", "lower", "upper", "Kb", "x0")
_WORK = ("d", "w", "i", "f")  # the discrete integrators' inputs and outputs (compiled)


# the facts that decide the structure: direct feedthrough (Kp or Kd non-zero), a finite limit
_FACTS = {"direct": "max(abs(Kp)) != 0 or max(abs(Kd)) != 0",
          "limited": LIMITED}


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
    so no solver step contains a kink. Clamping has a third way to be at a limit: where
    u_raw reaches it while the integral, clamped, would let it fall back and, integrating,
    would push it out, u_raw stays at the limit (sliding: the integral moves at the rate
    r = -d(Kp*e + D)/dt that holds it, which clamping allows while 0 < r/(Ki*e) <= 1) until r
    leaves (0, Ki*e] (a located crossing of r - Ki*e or r; r from the rate of e, so this
    mode watches e's rate); the integral is then xi = limit - Kp*e - D. Without it the modes
    linear and clamped would chatter (a PI on a first-order plant starting saturated).
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
        self._direct, self._limited = (bool(evaluated(_FACTS[k], p)) for k in _FACTS)
        # sliding along a limit needs e's rate (clamping, continuous, with a finite limit)
        self.rates = ("e",) if self._clamping and not self.discrete and self._limited else ()
        if self.rates:
            self.advance = self._hold_at_limit

    def ports(self):
        return [In("e")], [Out("u", feedthrough=("e",) if self._direct else ())]

    def infer(self, shapes):
        shape = shapes["e"]
        self._shape, self._n = shape, int(np.prod(shape, dtype=int))
        check_fits(_GAINS, self.p, shape, port="e")
        return {"u": shape}

    # run data: every gain, limit and x0 broadcast to e's shape; the filter's rate Nf (0
    # where Kd = 0: unused); discrete: the method's T*a, T*c (Ta, Tc) and the filter's gain
    # after the first hit, d = dgain*(Kd*e - xf). Texts: the exported C computes them again
    def declare(self, d):
        for name in _GAINS:
            d.param(name, self._shape)
        d.check(*ordered("lower", "upper"))
        d.derived("Nf", self._shape, "where(Kd != 0, N, 0)")
        if self.discrete:
            a, c = _METHODS[self.p.method]
            d.sample("period", "offset")
            d.derived("Ta", (), f"period * {a!r}")
            d.derived("Tc", (), f"period * {c!r}")
            d.derived("dgain", self._shape, "N / (1 + N * Ta)")
            for name in _WORK:
                d.work(name, self._n)
        d.fact(**_FACTS)

    def initial_shapes(self):
        return {"u": np.broadcast_shapes(*(getattr(self.p, n).shape for n in _GAINS))}

    def continuous_state(self):
        if self.discrete:
            return None
        (x0,) = fitted(self.p, ("x0",), self._shape, port="e")
        return np.concatenate([x0, np.zeros(self._n)])  # xi, xf

    def discrete_state(self):
        n = self._n
        if self.discrete:  # xi, xf, then 0 until the first hit's update
            (x0,) = fitted(self.p, ("x0",), self._shape, port="e")
            return np.concatenate([x0, np.zeros(n), [0.0]])
        # linear (1/0), held (the limit while saturated, else 0), integrating (1/0),
        # sliding (+1 / -1 along the upper / lower limit, else 0); then, while sliding, the
        # integral that holds u_raw at the limit, the P and D terms it was computed from and
        # the time it was
        return np.concatenate([np.ones(n), np.zeros(n), np.ones(n), np.zeros(6 * n)])

    def zero_crossings(self):
        if self.discrete or not self._limited:
            return None
        k = 5 if self._clamping else 2
        # u_raw - upper, u_raw - lower; clamping: Ki*e, and while sliding r - Ki*e, r
        return np.full(k * self._n, EITHER)

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        n = self._n
        for name in _GAINS + ("Nf", "dgain"):  # flat views of the run's values
            if hasattr(self.v, name):
                setattr(self, "_" + name, getattr(self.v, name).reshape(-1))
        if self.discrete:
            self._Ta, self._Tc = self.v.Ta, self.v.Tc
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
        (self._linear, self._held, self._integrating, self._sliding, self._hold, self._hold_pd,
         self._hold_t) = (xd[k * n:(k + 1) * n] for k in range(7))
        self.values_changed()
        self._still = np.zeros(n, bool)  # not sliding: the sliding indicators mean nothing
        self._de = self.du[0].reshape(-1) if self.rates else None

    def values_changed(self):
        """Which limits are finite follows the values: a set can make an infinite element
        finite and leave the block limited (no new structure, no new binding)."""
        if not self.discrete:
            self._finite_up = np.isfinite(self.v.upper).reshape(-1)
            self._finite_lo = np.isfinite(self.v.lower).reshape(-1)

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
            w, r = z[2 * n:3 * n], z[4 * n:]
            np.multiply(self._Ki, self._e, out=w)
            self._hold_rate(r)
            np.subtract(r, w, out=z[3 * n:4 * n])
            np.equal(self._sliding, 0.0, out=self._still)
            np.copyto(z[3 * n:], 1.0, where=np.tile(self._still, 2))
            # while sliding, u_raw computed from the frozen integral means nothing
            np.copyto(z[:2 * n], 1.0, where=np.tile(~self._still, 2))

    def _hold_rate(self, out):
        """r = -d(Kp*e + Kd*N*(e - xf))/dt, the integral's rate that holds u_raw still."""
        np.subtract(self._e, self._xf, out=out)
        out *= self._Nf
        out *= self._Kd * self._N
        out -= (self._Kp + self._Kd * self._N) * self._de

    def crossing(self, t, crossed):
        if self._clamping and self.rates:
            return self._clamping_crossing(t, crossed)
        n, raw = self._n, self._raw_output()
        up = (raw > self._upper) | ((raw == self._upper) & (crossed[:n] > 0))
        lo = ~up & ((raw < self._lower) | ((raw == self._lower) & (crossed[n:2 * n] < 0)))
        held = np.where(up, self._upper, np.where(lo, self._lower, 0.0))
        linear = (~(up | lo)).astype(float)
        return self._set_modes(linear, held, np.ones(n), np.zeros(n))

    def _set_modes(self, linear, held, integrating, sliding):
        changed = not (np.array_equal(linear, self._linear) and np.array_equal(held, self._held)
                       and np.array_equal(integrating, self._integrating)
                       and np.array_equal(sliding, self._sliding))
        self._linear[:], self._held[:], self._integrating[:] = linear, held, integrating
        self._sliding[:] = sliding
        return changed

    def _hold_at_limit(self, t, where=None):
        """While sliding, the integral that holds u_raw at the limit, xi = limit - (P + D),
        as of time t (after every accepted step: at a time event, e may jump before the
        handler runs, and the integral must not jump with it)."""
        where = self._sliding != 0 if where is None else where
        if where.any():
            pd = self._raw_output() - self._xi
            limit = np.where(self._sliding > 0, self._upper, self._lower)
            np.copyto(self._hold, limit - pd, where=where)
            np.copyto(self._hold_pd, pd, where=where)
            np.copyto(self._hold_t, t, where=where)

    def _clamping_crossing(self, t, crossed):
        """Clamping's modes per element, from the side s = +1 (upper) or -1 (lower) of a
        limit, w = s*Ki*e (> 0: the integral pushes out) and r = s*(the rate that holds
        u_raw still): clamped while u_raw is beyond the limit and w > 0; at the limit
        clamped if r <= 0 (u_raw rises even frozen), sliding if 0 < r <= w, saturated and
        integrating if w <= 0 < w - r, else linear. A sliding element first gets the
        integral that held u_raw at the limit (as of the last step, or now); it is still at
        the limit when P + D did not jump since; crossings decide ties."""
        n, sliding = self._n, self._sliding
        was = sliding != 0
        self._hold_at_limit(t, was & (self._hold_t != t))
        np.copyto(self._xi, self._hold, where=was)
        raw, r = self._raw_output(), np.zeros(n)
        pd = raw - self._xi
        self._hold_rate(r)
        w_abs = self._Ki * self._e
        linear, held, integrating, new = np.ones(n), np.zeros(n), np.ones(n), np.zeros(n)
        for k in range(n):
            on = was[k] and pd[k] == self._hold_pd[k]  # still sliding along the limit
            side = ("at", sliding[k]) if on else self._side(k, raw[k], crossed)
            if side == 0:
                continue
            s = float(side[1])
            w, rk = s * w_abs[k], s * r[k]
            if side[0] == "beyond":
                mode = "clamped" if w > 0 else "integrating"
            elif on:  # it leaves where r leaves [0, w]
                leave_linear = crossed[3 * n + k] * s > 0 or rk - w > 0
                leave_clamped = crossed[4 * n + k] * s < 0 or rk < 0
                mode = "linear" if leave_linear else "clamped" if leave_clamped else "sliding"
            elif w > 0:
                mode = "clamped" if rk <= 0 else "sliding" if rk <= w else "linear"
            else:
                mode = "integrating" if w - rk > 0 else "linear"
            if mode == "linear":
                continue
            linear[k], held[k] = 0.0, self._upper[k] if s > 0 else self._lower[k]
            integrating[k] = 1.0 if mode == "integrating" else 0.0
            new[k] = s if mode == "sliding" else 0.0
        changed = self._set_modes(linear, held, integrating, new)
        entered = (new != 0) & ~was
        np.copyto(self._hold, self._xi, where=entered)  # the integral as it reached the limit
        np.copyto(self._hold_pd, pd, where=entered)
        np.copyto(self._hold_t, t, where=entered)
        return changed

    def _side(self, k, raw, crossed):
        """("beyond" | "at", s) for element k beyond or at the limit on side s (u_raw
        reached it along the solution, a located crossing, or equals it), or 0 inside."""
        n = self._n
        for s, limit, z in ((1, self._upper[k], crossed[k]), (-1, self._lower[k], crossed[n + k])):
            if abs(z) == 1 or raw == limit:  # reached continuously (a jump goes beyond)
                return ("at", s)
            if s * (raw - limit) > 0:
                return ("beyond", s)
        return 0

    # ---- compiled form. Continuous: x = [xi, xf], xd = [linear, held, integrating,
    # sliding, hold, hold_pd, hold_t]; discrete: xd = [xi, xf, started], and a workspace of
    # the integrators' inputs and outputs from output to update (d, w, i, f)
    def lower(self, c):
        n = self._n
        P = {name: f"P_{name}[i]" for name in _GAINS + ("Nf", "dgain")}
        return self._lower_discrete(n, P, c) if self.discrete else \
            self._lower_continuous(n, P, c)

    def _lower_continuous(self, n, P, c):
        raw = f"{P['Kp']} * in_e[i] + x[i] + (in_e[i] - x[{n} + i]) * {P['Kd']} * {P['N']}"
        code = {
            "output": c.loop(n, f"out_u[i] = ({raw}) * xd[i] + xd[{n} + i];"),
            "derivative": c.loop(n, f"dx[{n} + i] = (in_e[i] - x[{n} + i]) * {P['Nf']}; "
                                    f"dx[i] = {P['Ki']} * in_e[i] * xd[{2 * n} + i];"
                                 + (f" dx[i] += (out_u[i] - ({raw})) * {P['Kb']};"
                                    if self._back_calculation else "")),
            "initialize": ""}
        limits = (f"z[i] = isfinite({P['upper']}) ? raw - {P['upper']} : -1.0; "
                  f"z[{n} + i] = isfinite({P['lower']}) ? raw - {P['lower']} : 1.0;")
        if self.rates:  # clamping with a limit: sliding along it
            return self._lower_sliding(n, P, c, raw, limits, code)
        if self.zero_crossings() is not None:
            code["indicator"] = c.loop(n, f"double raw = {raw}; {limits}")
            code["crossing"] = c.loop(n, (
                f"double raw = {raw}; "
                f"int up = raw > {P['upper']} || (raw == {P['upper']} && crossed[i] > 0); "
                f"int lo = !up && (raw < {P['lower']} || (raw == {P['lower']} && "
                f"crossed[{n} + i] < 0)); "
                f"double held = up ? {P['upper']} : lo ? {P['lower']} : 0.0, "
                "linear = !(up || lo), integrating = 1.0; " +
                f"if (linear != xd[i] || held != xd[{n} + i] || integrating != xd[{2 * n} + i]) "
                f"changed = 1; xd[i] = linear; xd[{n} + i] = held; xd[{2 * n} + i] = integrating;"))
        return Lowering(code)

    def _lower_sliding(self, n, P, c, raw, limits, code):
        """Clamping's modes (_clamping_crossing, _side, _hold_at_limit) per element."""
        linear, held, integrating, sliding, hold, hold_pd, hold_t = (
            f"xd[{k * n} + i]" for k in range(7))
        kdn = f"{P['Kd']} * {P['N']}"
        rate = (f"double r = (in_e[i] - x[{n} + i]) * {P['Nf']} * ({kdn}) "
                f"- ({P['Kp']} + {kdn}) * du_e[i];")  # _hold_rate
        limit = f"({sliding} > 0 ? {P['upper']} : {P['lower']})"
        hold_at_limit = (f"{{ double pd = ({raw}) - x[i]; {hold} = {limit} - pd; "
                         f"{hold_pd} = pd; {hold_t} = t; }}")
        code["indicator"] = c.loop(n, (
            f"double raw = {raw}; {limits} {rate} double w = {P['Ki']} * in_e[i]; "
            f"int still = {sliding} == 0.0; z[{2 * n} + i] = w; "
            f"z[{3 * n} + i] = still ? 1.0 : r - w; z[{4 * n} + i] = still ? 1.0 : r; "
            f"if (!still) {{ z[i] = 1.0; z[{n} + i] = 1.0; }}"))
        code["advance"] = c.loop(n, f"if ({sliding} != 0) {hold_at_limit}")
        # side: +-1 at (reached along the solution, or equal), +-2 beyond a limit, 0 inside
        side = (f"int side = 0; "
                f"if (abs(crossed[i]) == 1 || raw == {P['upper']}) side = 1; "
                f"else if (raw - {P['upper']} > 0) side = 2; "
                f"else if (abs(crossed[{n} + i]) == 1 || raw == {P['lower']}) side = -1; "
                f"else if (-(raw - {P['lower']}) > 0) side = -2;")
        code["crossing"] = c.loop(n, (
            f"int was = {sliding} != 0; "
            f"if (was && {hold_t} != t) {hold_at_limit} "
            f"if (was) x[i] = {hold}; "
            f"double raw = {raw}, pd = raw - x[i]; {rate} double w_abs = {P['Ki']} * in_e[i]; "
            f"int on = was && pd == {hold_pd}; "
            f"{side} if (on) side = {sliding} > 0 ? 1 : -1; "
            "double lin = 1.0, hel = 0.0, integ = 1.0, now = 0.0; "
            "if (side != 0) { double s = side > 0 ? 1.0 : -1.0, w = s * w_abs, rk = s * r; "
            "int mode; /* 0 linear, 1 clamped, 2 integrating, 3 sliding */ "
            "if (abs(side) == 2) mode = w > 0 ? 1 : 2; "
            f"else if (on) mode = crossed[{3 * n} + i] * s > 0 || rk - w > 0 ? 0 : "
            f"crossed[{4 * n} + i] * s < 0 || rk < 0 ? 1 : 3; "
            "else if (w > 0) mode = rk <= 0 ? 1 : rk <= w ? 3 : 0; "
            "else mode = w - rk > 0 ? 2 : 0; "
            f"if (mode != 0) {{ lin = 0.0; hel = s > 0 ? {P['upper']} : {P['lower']}; "
            "integ = mode == 2 ? 1.0 : 0.0; now = mode == 3 ? s : 0.0; } } "
            f"if (lin != {linear} || hel != {held} || integ != {integrating} || "
            f"now != {sliding}) changed = 1; "
            f"{linear} = lin; {held} = hel; {integrating} = integ; {sliding} = now; "
            f"if (now != 0 && !was) {{ {hold} = x[i]; {hold_pd} = pd; {hold_t} = t; }}"))
        return Lowering(code)

    def _lower_discrete(self, n, P, c):
        """_discrete_output and _discrete_update element by element; a block-wide branch of
        numpy's (outside.any()) is a flag over the elements."""
        Ta, Tc = "P_Ta[0]", "P_Tc[0]"
        wd, ww, wi, wf = (f"W_{name}[i]" for name in _WORK)
        clip = f"rt_clip({{}}, {P['lower']}, {P['upper']})"
        output = [
            f"double started = xd[{2 * n}], Ta = {Ta} * started; int any = 0; "
            f"double raw[{n}], u[{n}];",
            c.loop(n, (
                f"{wd} = ({P['Kd']} * in_e[i] - xd[{n} + i]) * "
                f"(started != 0 ? {P['dgain']} : {P['N']}); "
                f"{wf} = Ta * {wd} + xd[{n} + i]; {ww} = {P['Ki']} * in_e[i]; "
                f"{wi} = Ta * {ww} + xd[i]; raw[i] = {P['Kp']} * in_e[i] + {wd} + {wi}; "
                f"u[i] = {clip.format('raw[i]')}; if (raw[i] != u[i]) any = 1;"))]
        if self._clamping:
            output.append(c.loop(n, (
                f"if (raw[i] != u[i] && ((raw[i] > u[i] && {ww} > 0) || (raw[i] < u[i] && "
                f"{ww} < 0))) {{ raw[i] -= {wi} - xd[i]; {wi} = xd[i]; {ww} = 0.0; "
                f"u[i] = {clip.format('raw[i]')}; }}")))
        elif self._back_calculation:
            output.append("if (any) " + c.loop(n, (
                f"double k = Ta * {P['Kb']}; "
                "if (raw[i] != u[i]) raw[i] = (raw[i] + k * u[i]) / (1.0 + k); "
                f"{ww} += {P['Kb']} * (u[i] - raw[i]); {wi} = Ta * {ww} + xd[i];")))
        output.append(c.loop(n, "out_u[i] = u[i];") + " (void)any;")
        return Lowering({
            "initialize": c.loop(n, f"out_u[i] = {clip.format('xd[i]')};"),
            "output": "\n".join(output),
            "update": c.loop(n, f"xd[i] = {wi} + {Tc} * {ww}; xd[{n} + i] = {wf} + {Tc} * {wd};")
                      + f"\nxd[{2 * n}] = 1.0;"})

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

    # ---- linearisation -------------------------------------------------------------------
    def jacobian(self, pade=None):
        """In the modes at the current values: the states xi and, where Kd != 0, xf (without
        a derivative term xf never moves); a saturated output has gain 0."""
        n = self._n
        keep = np.r_[np.arange(n), n + np.flatnonzero(self._Kd != 0.0)]
        A, B, C, D = self._discrete_jacobian() if self.discrete else self._continuous_jacobian()
        return Jacobian(A[np.ix_(keep, keep)], B[keep], C[:, keep], D,
                        states=tuple(int(k) for k in keep))

    def _continuous_jacobian(self):
        """u = L*(Kp*e + xi + KdN*(e - xf)) + held, dxf/dt = Nf*(e - xf),
        dxi/dt = integrating*Ki*e (+ Kb*(u - raw) with back-calculation); L = linear mode."""
        L, integrating = self._linear, self._integrating
        KdN = self._Kd * self._N
        raw = np.stack([np.ones(self._n), -KdN, self._Kp + KdN])  # d raw / d(xi, xf, e)
        drive = integrating * self._Ki  # dxi/dt per unit e
        back = self._Kb * (L - 1.0) if self._back_calculation else np.zeros(self._n)
        rows_i = back * raw + np.stack([0 * drive, 0 * drive, drive])
        rows_f = np.stack([0 * KdN, -self._Nf, self._Nf])
        return _assembled(rows_i, rows_f, L * raw)

    def _discrete_jacobian(self):
        """After the first hit (see the class docstring): d = g*(Kd*e - xf), g = N/(1 + N*Ta),
        raw = Kp*e + d + xi + Ta*w, w = Ki*e (+ aw); xi[k+1] = xi + T*w, xf[k+1] = xf + T*d;
        u = raw inside [lower, upper], the limit (gain 0) outside."""
        T, Ta, g = self.p.period, self._Ta, self._dgain
        e, xi, xf = self._e, self._xi, self._xf
        d_raw = np.stack([np.ones(self._n), -g, self._Kp + g * self._Kd + Ta * self._Ki])
        raw = self._Kp * e + g * (self._Kd * e - xf) + xi + Ta * self._Ki * e
        out = np.clip(raw, self._lower, self._upper)
        outside = raw != out
        d_w = np.stack([0 * g, 0 * g, self._Ki])  # d w / d(xi, xf, e)
        gain = np.where(outside, 0.0, 1.0)
        if self._clamping:  # the integrator's input is dropped while it pushes outwards
            clamp = outside & (((raw > out) & (self._Ki * e > 0)) | ((raw < out) & (self._Ki * e < 0)))
            inside = clamp & (np.clip(raw - Ta * self._Ki * e, self._lower, self._upper)
                              == raw - Ta * self._Ki * e)
            d_raw = d_raw - np.where(inside, Ta, 0.0) * d_w
            gain = np.where(inside, 1.0, gain)
            d_w = np.where(clamp, 0.0, d_w)
        elif self._back_calculation:  # raw = (raw0 + c*u)/(1 + c), w += Kb*(u - raw)
            c = Ta * self._Kb
            d_w = d_w - np.where(outside, self._Kb / (1.0 + c), 0.0) * d_raw
        rows_i = np.stack([np.ones(self._n), 0 * g, 0 * g]) + T * d_w
        rows_f = np.stack([0 * g, 1.0 - T * g, T * g * self._Kd])
        return _assembled(rows_i, rows_f, gain * d_raw)

    def mode_text(self):
        if self.discrete or self.z is None:
            return None
        saturated = np.where(self._held == self._upper, 1.0, -1.0)
        return mode_words(np.where(self._linear == 0.0, saturated, 0.0),
                          {0.0: "linear", 1.0: "saturated at upper (gain 0)",
                           -1.0: "saturated at lower (gain 0)"})


def _assembled(rows_i, rows_f, rows_u):
    """(A, B, C, D) over the states (xi, xf) and the input e from per-element partial
    derivatives: each argument stacks d/d(xi), d/d(xf), d/d(e) of one quantity (3, n)."""
    A = np.block([[np.diag(rows_i[0]), np.diag(rows_i[1])],
                  [np.diag(rows_f[0]), np.diag(rows_f[1])]])
    B = np.vstack([np.diag(rows_i[2]), np.diag(rows_f[2])])
    C = np.hstack([np.diag(rows_u[0]), np.diag(rows_u[1])])
    return A, B, C, np.diag(rows_u[2])
