"""Discontinuous blocks with zero crossings (hybrid.md): saturation, dead zone, relay, hit
crossing, backlash.

Each element of the signal has a mode kept in the block's discrete state. Between events the
output is a smooth function of the input in that mode (a saturation in its upper mode outputs
`upper` even if u wanders below it inside a step); the mode changes only at an event, where
the handler re-derives it from the input, so no solver step contains a kink and every switch
happens exactly at a located crossing.
"""
import math

import numpy as np

from blocksim.accel.lowering import Lowering
from blocksim.block import EITHER, FALLING, RISING, Block, In, Out
from blocksim.language.behaviour import Behaviour
from blocksim.params import Param

from .linearisation import mode_words, static
from .param_checks import DIRECTIONS, check_fits, check_ordered, fitted, ordered


class _Band(Block):
    """A piecewise map with two thresholds lo <= hi per element: mode -1 (u below lo),
    0 (between), +1 (above hi). Crossings at u = hi and u = lo. Subclasses name the
    thresholds' parameters (`bounds`) and declare y in each mode and the indicators u - hi,
    u - lo as their behaviour."""

    bounds = ("", "")
    modes = {}  # mode -> (its name, the gain dy/du in it)

    def __init__(self, name, params):
        super().__init__(name, params)
        check_ordered(self.p, *self.bounds)

    def ports(self):
        return [In("u")], [Out("y")]

    def infer(self, shapes):
        u = self._shape = shapes["u"]
        check_fits(self.bounds, self.p, u)
        self._n = math.prod(u)
        return {"y": u}

    def declare(self, d):  # the thresholds broadcast to the signal, ordered
        for name in self.bounds:
            d.param(name, self._shape)
        d.check(*ordered(*self.bounds))

    def discrete_state(self):
        return np.zeros(self._n)

    def zero_crossings(self):
        return np.full(2 * self._n, EITHER)  # u - hi, then u - lo

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._u = u[0].reshape(-1)
        self._lo, self._hi = (getattr(self.v, name).reshape(-1) for name in self.bounds)

    def crossing(self, t, crossed):
        n = self._n
        above, below = self._u - self._hi, self._u - self._lo
        mode = np.where((above > 0) | ((above == 0) & (crossed[:n] > 0)), 1.0,
                        np.where((below < 0) | ((below == 0) & (crossed[n:] < 0)), -1.0, 0.0))
        changed = not np.array_equal(mode, self.xd)
        self.xd[:] = mode
        return changed

    def lower(self, c):  # the handler; the output and the indicators are its behaviour
        n = self._n
        lo, hi = (f"P_{name}[i]" for name in self.bounds)
        return Lowering({
            "crossing": c.loop(n, f"double above = in_u[i] - {hi}, below = in_u[i] - {lo}; "
                                  "double mode = above > 0 || (above == 0 && crossed[i] > 0) ? "
                                  "1.0 : below < 0 || (below == 0 && "
                                  f"crossed[{n} + i] < 0) ? -1.0 : 0.0; "
                                  "if (mode != xd[i]) changed = 1; xd[i] = mode;")})

    def jacobian(self, pade=None):
        return static(np.diag([self.modes[float(m)][1] for m in self.xd]))

    def mode_text(self):
        return mode_words(self.xd, {m: f"{name} (gain {gain:g})"
                                    for m, (name, gain) in self.modes.items()})


class Saturation(_Band):
    """y = min(max(u, lower), upper), element-wise.

    Input: u, any shape. Output: y, u's shape. lower <= upper: scalars or arrays that
    broadcast to u's shape; -inf / inf give a one-sided limit.
    Modes lower / linear / upper per element, switched at the located crossings u = lower and
    u = upper: between events y is u or a constant, so no solver step contains the kink.
    """

    type = "saturation"
    params = (
        Param("lower", "value", doc="lower limit (-inf: none)", allow_inf=True),
        Param("upper", "value", doc="upper limit (inf: none)", allow_inf=True),
    )
    bounds = ("lower", "upper")
    # xd: the mode per element (+1 upper, -1 lower, 0 linear); z: u - upper, then u - lower
    behaviour = Behaviour(outputs={"y": "where(xd > 0, upper, where(xd < 0, lower, u))"},
                          indicator="[u - upper, u - lower]", state="u")

    modes = {-1.0: ("lower", 0.0), 0.0: ("linear", 1.0), 1.0: ("upper", 0.0)}


class DeadZone(_Band):
    """y = 0 for start <= u <= end, u - end above, u - start below, element-wise.

    Input: u, any shape. Output: y, u's shape. start <= end: scalars or arrays that broadcast
    to u's shape. Modes below / inside / above per element, switched at the located crossings
    u = start and u = end.
    """

    type = "dead_zone"
    params = (
        Param("start", "value", doc="lower end of the zone (y = 0 from here)"),
        Param("end", "value", doc="upper end of the zone (y = 0 up to here)"),
    )
    bounds = ("start", "end")
    behaviour = Behaviour(outputs={"y": "where(xd > 0, u - end, where(xd < 0, u - start, 0))"},
                          indicator="[u - end, u - start]", state="u")

    modes = {-1.0: ("below", 1.0), 0.0: ("inside", 0.0), 1.0: ("above", 1.0)}


class Relay(Block):
    """y = on_value while on, off_value while off, element-wise, with hysteresis.

    Input: u, any shape. Output: y, u's shape. An element switches on when u rises to `on`
    (u >= on) and off when it falls to `off` (u <= off), off <= on; in between it keeps its
    state, initially x0 (off or on; at the start an input already past a switching point
    switches it). on, off, on_value, off_value broadcast to u's shape. Each switch is a located
    crossing (u - on rising, u - off falling).
    """

    type = "relay"
    params = (
        Param("on", "value", float(np.finfo(float).eps), "switch-on point"),
        Param("off", "value", float(np.finfo(float).eps), "switch-off point (<= on)"),
        Param("on_value", "value", 1.0, "output while on"),
        Param("off_value", "value", 0.0, "output while off"),
        Param("x0", "choice", "off", "initial state", choices=("off", "on")),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        check_ordered(self.p, "off", "on")

    def ports(self):
        return [In("u")], [Out("y")]

    _LEVELS = ("on", "off", "on_value", "off_value")

    def infer(self, shapes):
        u = self._shape = shapes["u"]
        check_fits(self._LEVELS, self.p, u)
        self._n = math.prod(u)
        return {"y": u}

    def declare(self, d):  # the levels broadcast to the signal
        for name in self._LEVELS:
            d.param(name, self._shape)
        d.value("x0")
        d.check(*ordered("off", "on"))

    def discrete_state(self):
        return np.full(self._n, 1.0 if self.p.x0 == "on" else 0.0)

    def zero_crossings(self):
        n = self._n
        return [RISING] * n + [FALLING] * n  # u - on (while off), u - off (while on)

    # xd: 1 while on; the indicators u - on while off, u - off while on (else 1: nothing to
    # switch)
    behaviour = Behaviour(outputs={"y": "where(xd, on_value, off_value)"},
                          indicator="[where(xd, 1, u - on), where(xd, u - off, 1)]", state="u")

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._u = u[0].reshape(-1)
        self._on, self._off = self.v.on.reshape(-1), self.v.off.reshape(-1)

    def crossing(self, t, crossed):
        u, on = self._u, self.xd != 0.0
        new = np.where(on, u > self._off, u >= self._on).astype(float)
        changed = not np.array_equal(new, self.xd)
        self.xd[:] = new
        return changed

    def lower(self, c):
        n = self._n
        return Lowering({  # the handler; the output and the indicators are its behaviour
            "crossing": c.loop(n, "double now = xd[i] != 0.0 ? in_u[i] > P_off[i] : "
                                  "in_u[i] >= P_on[i]; if (now != xd[i]) changed = 1; "
                                  "xd[i] = now;")})

    def jacobian(self, pade=None):
        """The output depends on the mode alone: gain 0."""
        return static(np.zeros((self.xd.size, self.xd.size)))

    def mode_text(self):
        return mode_words(self.xd, {0.0: "off (gain 0)", 1.0: "on (gain 0)"})


class HitCrossing(Block):
    """n = the number of times u has crossed `offset` so far, element-wise (a staircase).

    Input: u, any shape. Output: n, u's shape (held between events: no feedthrough). A crossing is
    a change of side of u - offset (an input that starts exactly at the offset and leaves it
    has not crossed it); direction (rising / falling / either) selects the ones counted. Each
    counted one is a located event, so its time is in results.npz `events_t`; the side u is on
    is followed after every accepted step, so crossings in the other direction are not events
    but are not missed either.
    """

    type = "hit_crossing"
    params = (
        Param("offset", "value", 0.0, "the level whose crossings are counted"),
        Param("direction", "choice", "either", "crossings counted",
              choices=("either", "rising", "falling")),
    )

    def ports(self):
        return [In("u")], [Out("n", feedthrough=())]

    def infer(self, shapes):
        u = self._shape = shapes["u"]
        check_fits(("offset",), self.p, u)
        self._n = math.prod(u)
        self._direction = DIRECTIONS[self.p.direction]
        return {"n": u}

    def declare(self, d):
        d.param("offset", self._shape)

    def discrete_state(self):
        return np.zeros(2 * self._n)  # the counts, then the side of the offset u is on

    def zero_crossings(self):
        return np.full(self._n, self._direction)

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        n = self._n
        self._offset = self.v.offset.reshape(-1)
        self._u, self._count, self._side = u[0].reshape(-1), xd[:n], xd[n:]
        self._d, self._moved = np.zeros(n), np.zeros(n, bool)

    def output(self, t):
        np.copyto(self.y[0].reshape(-1), self._count)

    def advance(self, t):
        """After an accepted step without a counted crossing: the side u is on now (a
        crossing in the direction not counted raises no event but changes the side)."""
        d = self._d
        np.subtract(self._u, self._offset, out=d)
        np.sign(d, out=d)
        np.not_equal(d, 0.0, out=self._moved)
        np.copyto(self._side, d, where=self._moved)

    def indicator(self, t):
        np.subtract(self._u, self._offset, out=self.z)

    def crossing(self, t, crossed):
        d = self._u - self._offset
        side = np.where((d > 0) | ((d == 0) & (crossed > 0)), 1.0,
                        np.where((d < 0) | ((d == 0) & (crossed < 0)), -1.0, self._side))
        turned = (side * self._side < 0) & (self._direction * side >= 0)
        self._count += turned
        changed = bool(turned.any())
        self._side[:] = side
        return changed

    # compiled form: xd = [counts (n), sides (n)]; the direction in the code
    def lower(self, c):
        n = self._n
        return Lowering({
            "output": c.loop(n, "out_n[i] = xd[i];"),
            "advance": c.loop(n, f"double d = rt_sign(in_u[i] - P_offset[i]); "
                                 f"if (d != 0.0) xd[{n} + i] = d;"),
            "indicator": c.loop(n, "z[i] = in_u[i] - P_offset[i];"),
            "crossing": c.loop(n, (
                f"double d = in_u[i] - P_offset[i], old = xd[{n} + i]; "
                "double side = d > 0 || (d == 0 && crossed[i] > 0) ? 1.0 : "
                "d < 0 || (d == 0 && crossed[i] < 0) ? -1.0 : old; "
                f"int turned = side * old < 0 && {self._direction} * side >= 0; "
                f"xd[i] += turned; if (turned) changed = 1; xd[{n} + i] = side;"))})


class Backlash(Block):
    """Mechanical play of total width `width` between input u and output y, element-wise.

    Input: u, any shape. Output: y, u's shape. While the play is open y holds its value
    (Simulink's Backlash: disengaged, the output stays constant); once u reaches an edge of
    the play (u - y = width/2 or -width/2, a located crossing) y is pushed along,
    y = u - width/2 (or u + width/2), until u turns back: the turning point, an extremum of
    u, is a located event (its indicator is du/dt), where the play opens again holding
    y = u(turn) -+ width/2 until u has travelled the full width the other way. y(0) = x0, or
    u(0) -+ width/2 when u(0) lies outside the play. y follows u at the instant it is pushed,
    so the output has direct feedthrough (as Simulink's block).
    """

    type = "backlash"
    params = (
        Param("width", "value", doc="total width of the play (>= 0)", minimum=0.0),
        Param("x0", "value", 0.0, "initial output"),
    )
    rates = ("u",)

    def ports(self):
        return [In("u")], [Out("y")]

    def infer(self, shapes):
        u = self._shape = shapes["u"]
        check_fits(("width", "x0"), self.p, u)
        self._n = math.prod(u)
        return {"y": u}

    def declare(self, d):  # the play's width and its half, broadcast to the signal
        d.derived("half", self._shape)
        d.param("width", self._shape)
        d.value("x0")

    def derive(self, p):
        return {"half": np.broadcast_to(p.width, self._shape) / 2}

    def discrete_state(self):
        # per element: mode (0 open, +1 pushed up, -1 pushed down), the held y and, while
        # open, the play's edges lo = y - width/2 and hi = y + width/2 (set from u itself
        # at a turn, so that u - hi is exactly 0 there)
        x0, width = fitted(self.p, ("x0", "width"), self._shape)
        half = width / 2
        return np.concatenate([np.zeros(self._n), x0, x0 - half, x0 + half])

    def zero_crossings(self):
        n = self._n
        # open: u reaches the upper edge, the lower edge; pushed up (down): u turns back,
        # du/dt falling (rising) through 0
        return [RISING] * n + [FALLING] * n + [FALLING] * n + [RISING] * n

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        n = self._n
        self._half, self._width = self.v.half.reshape(-1), self.v.width.reshape(-1)
        self._u, self._y, self._du = u[0].reshape(-1), y[0].reshape(-1), self.du[0].reshape(-1)
        self._mode, self._held, self._lo, self._hi = (xd[k * n:(k + 1) * n] for k in range(4))
        self._up, self._down, self._engaged, self._not_up, self._not_down = (
            np.zeros(n, bool) for _ in range(5))
        z = self.z
        # indicator k: (its value, where it means nothing)
        self._edges = ((z[:n], self._hi, self._engaged), (z[n:2 * n], self._lo, self._engaged))
        self._turns = ((z[2 * n:3 * n], self._not_up), (z[3 * n:], self._not_down))

    def output(self, t):
        y, mode = self._y, self._mode
        np.greater(mode, 0.0, out=self._up)
        np.less(mode, 0.0, out=self._down)
        np.copyto(y, self._held)
        np.subtract(self._u, self._half, out=y, where=self._up)
        np.add(self._u, self._half, out=y, where=self._down)

    def indicator(self, t):
        mode = self._mode
        np.not_equal(mode, 0.0, out=self._engaged)
        np.less_equal(mode, 0.0, out=self._not_up)
        np.greater_equal(mode, 0.0, out=self._not_down)
        for zk, edge, idle in self._edges:
            np.subtract(self._u, edge, out=zk)
            np.copyto(zk, 1.0, where=idle)
        for zk, idle in self._turns:
            np.copyto(zk, self._du)
            np.copyto(zk, 1.0, where=idle)

    def crossing(self, t, crossed):
        n = self._n
        u, du, mode, half = self._u, self._du, self._mode, self._half
        old = mode.copy()
        # pushed: stays pushed while u moves on (a turn is a crossing of du, or du already
        # pointing back after a time event)
        up = (old > 0) & ~(crossed[2 * n:3 * n] < 0) & (du >= 0)
        down = (old < 0) & ~(crossed[3 * n:] > 0) & (du <= 0)
        turned_up, turned_down = (old > 0) & ~up, (old < 0) & ~down
        # open: u at or beyond an edge pushes y there (it jumps when u jumped past it);
        # pushed on only when u keeps moving outwards
        top = (old == 0) & ((u > self._hi) | (crossed[:n] > 0))
        bottom = (old == 0) & ~top & ((u < self._lo) | (crossed[n:2 * n] < 0))
        up |= top & (du > 0)
        down |= bottom & (du < 0)
        mode[:] = np.where(up, 1.0, np.where(down, -1.0, 0.0))
        at_top = turned_up | (top & ~up)
        at_bottom = turned_down | (bottom & ~down)
        np.copyto(self._held, u - half, where=at_top | up)
        np.copyto(self._held, u + half, where=at_bottom | down)
        np.copyto(self._hi, u, where=at_top)
        np.copyto(self._lo, u - self._width, where=at_top)
        np.copyto(self._lo, u, where=at_bottom)
        np.copyto(self._hi, u + self._width, where=at_bottom)
        return bool((at_top | at_bottom).any() or not np.array_equal(mode, old))

    # compiled form: xd = [mode, held, lo, hi]; du_u the rate of u the engine computes
    def lower(self, c):
        n = self._n
        mode, held, lo, hi = "xd[i]", f"xd[{n} + i]", f"xd[{2 * n} + i]", f"xd[{3 * n} + i]"
        return Lowering({
            "output": c.loop(n, f"out_y[i] = {mode} > 0 ? in_u[i] - P_half[i] : {mode} < 0 ? "
                                f"in_u[i] + P_half[i] : {held};"),
            "indicator": c.loop(n, (
                f"double m = {mode}; z[i] = m != 0 ? 1.0 : in_u[i] - {hi}; "
                f"z[{n} + i] = m != 0 ? 1.0 : in_u[i] - {lo}; "
                f"z[{2 * n} + i] = m <= 0 ? 1.0 : du_u[i]; "
                f"z[{3 * n} + i] = m >= 0 ? 1.0 : du_u[i];")),
            "crossing": c.loop(n, (
                f"double u = in_u[i], du = du_u[i], old = {mode}; "
                f"int up = old > 0 && !(crossed[{2 * n} + i] < 0) && du >= 0; "
                f"int down = old < 0 && !(crossed[{3 * n} + i] > 0) && du <= 0; "
                "int turned_up = old > 0 && !up, turned_down = old < 0 && !down; "
                f"int top = old == 0 && (u > {hi} || crossed[i] > 0); "
                f"int bottom = old == 0 && !top && (u < {lo} || crossed[{n} + i] < 0); "
                "up = up || (top && du > 0); down = down || (bottom && du < 0); "
                "double now = up ? 1.0 : down ? -1.0 : 0.0; "
                "int at_top = turned_up || (top && !up); "
                "int at_bottom = turned_down || (bottom && !down); "
                f"if (at_top || up) {held} = u - P_half[i]; "
                f"if (at_bottom || down) {held} = u + P_half[i]; "
                f"if (at_top) {{ {hi} = u; {lo} = u - P_width[i]; }} "
                f"if (at_bottom) {{ {lo} = u; {hi} = u + P_width[i]; }} "
                f"if (at_top || at_bottom || now != old) changed = 1; {mode} = now;"))})
