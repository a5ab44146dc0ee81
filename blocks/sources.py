"""Source blocks: signals that depend only on time and parameters."""
import sys

import numpy as np

from blocksim.accel.lowering import Lowering
from blocksim.block import CONSTANT, Block, In, Out
from blocksim.params import Param, ParamError


class Constant(Block):
    """y = value (any shape; the value's shape is the signal's shape)."""

    type = "constant"
    params = (Param("value", doc="the constant (number, vector or matrix)"),)

    def __init__(self, name, params):
        super().__init__(name, params)
        self.sample = CONSTANT

    def ports(self):
        return [], [Out("y", shape=self.p.value.shape, feedthrough=())]

    def declare(self, d):
        d.param("value")

    def output(self, t):
        self.y[0][...] = self.v.value

    def lower(self, c):
        return Lowering({"output": c.loop(self.p.value.size, "out_y[i] = P_value[i];")})


class _SwitchOnce(Block):
    """A source that changes once, at the time `_switch()` gives: the instant is an event the
    solver lands on, and the mode (0 before, 1 from then on) lives in the discrete state, so
    the output never depends on round-off in t."""

    time_dependent = True

    def _switch(self):
        raise NotImplementedError

    def discrete_state(self):
        return np.zeros(1)

    def events(self, start, stop):
        at = self._switch()
        return (at,) if start < at <= stop else ()

    def initialize(self, t):
        self.xd[0] = 1.0 if t >= self._switch() else 0.0

    def event(self, t):
        self.xd[0] = 1.0

    def _lower_switch(self, output, switch):
        """The lowering of a source whose switch time is the parameter `switch`: the mode in
        xd[0]."""
        return Lowering({"output": output,
                         "initialize": f"xd[0] = t >= P_{switch}[0] ? 1.0 : 0.0;",
                         "event": "xd[0] = 1.0;"})


class Step(_SwitchOnce):
    """y = before for t < time, after from t = time on.

    The switch is a source discontinuity: the solver lands exactly on `time`; integration up
    to it uses `before`, from it `after`. The mode lives in the discrete state (0 before, 1
    after) and is switched by `event`, so the output never depends on round-off in t.
    """

    type = "step"
    params = (
        Param("time", "scalar", 1.0, "switch time (s)"),
        Param("before", "value", 0.0, "value for t < time"),
        Param("after", "value", 1.0, "value from t = time"),
    )

    def _switch(self):
        return self.p.time

    def ports(self):
        self._shape = np.broadcast_shapes(self.p.before.shape, self.p.after.shape)
        return [], [Out("y", shape=self._shape, feedthrough=())]

    def declare(self, d):
        d.param("time")
        d.param("before", self._shape)
        d.param("after", self._shape)

    def output(self, t):
        self.y[0][...] = self.v.after if self.xd[0] else self.v.before

    def lower(self, c):
        return self._lower_switch(c.loop(c.n_out["y"], "out_y[i] = xd[0] != 0.0 ? P_after[i] "
                                                       ": P_before[i];"), "time")


class Clock(Block):
    """t = simulation time (s).

    Output: t, a scalar.
    """

    type = "clock"
    time_dependent = True

    def ports(self):
        return [], [Out("t", shape=(), feedthrough=())]

    def output(self, t):
        self.y[0][...] = t

    def lower(self, c):
        return Lowering({"output": "out_t[0] = t;"})


class Ramp(_SwitchOnce):
    """y = initial + slope*max(0, t - start).

    Output: y, the broadcast shape of slope and initial (a vector slope gives a vector ramp).
    The kink at `start` is announced as an event so the solver lands on it; the mode (0 before,
    1 after) lives in the discrete state, as a step's.
    """

    type = "ramp"
    params = (
        Param("slope", "value", 1.0, "rate of change after start (units/s)"),
        Param("start", "scalar", 0.0, "time the ramp starts (s)"),
        Param("initial", "value", 0.0, "value up to start"),
    )

    def _switch(self):
        return self.p.start

    def ports(self):
        self._shape = np.broadcast_shapes(self.p.slope.shape, self.p.initial.shape)
        return [], [Out("y", shape=self._shape, feedthrough=())]

    def declare(self, d):
        d.param("start")
        d.param("slope", self._shape)
        d.param("initial", self._shape)

    def output(self, t):
        y, v = self.y[0], self.v
        np.multiply(v.slope, self.xd[0] * (t - v.start), out=y)
        y += v.initial

    def lower(self, c):
        return self._lower_switch(c.loop(
            c.n_out["y"], "out_y[i] = P_slope[i] * (xd[0] * (t - P_start[0])) + P_initial[i];"),
            "start")


class Sine(Block):
    """y = bias + amplitude*sin(frequency*t + phase), frequency in rad/s.

    Output: y, the broadcast shape of the four parameters.
    """

    type = "sine"
    time_dependent = True
    params = (
        Param("amplitude", "value", 1.0, "peak amplitude"),
        Param("frequency", "value", 1.0, "angular frequency (rad/s)"),
        Param("phase", "value", 0.0, "phase at t = 0 (rad)"),
        Param("bias", "value", 0.0, "offset added to the sine"),
    )

    def ports(self):
        p = self.p
        self._shape = np.broadcast_shapes(p.amplitude.shape, p.frequency.shape, p.phase.shape,
                                          p.bias.shape)
        return [], [Out("y", shape=self._shape, feedthrough=())]

    def declare(self, d):
        for name in ("frequency", "phase", "amplitude", "bias"):
            d.param(name, self._shape)

    def output(self, t):
        v, y = self.v, self.y[0]
        np.multiply(v.frequency, t, out=y)
        y += v.phase
        np.sin(y, out=y)
        y *= v.amplitude
        y += v.bias

    def lower(self, c):
        return Lowering({"output": c.loop(
            c.n_out["y"], "out_y[i] = sin(P_frequency[i] * t + P_phase[i]) * P_amplitude[i] "
                          "+ P_bias[i];")})


class TimeSeries(Block):
    """Shared by table and from_file: y(t) looked up in time points (N,) and values (N, ...),
    linear or previous, the end values held outside. Subclasses give `_arrays(p)` (times,
    values, slopes: `series`), call `_series` in __init__ and `_bind_series(clock)` in bind
    (clock: the lookup variable is the simulation time). The arrays are the run data
    (P_times, P_values, P_slopes)."""

    time_dependent = True
    _values = ()  # the parameters the arrays come from (a change of them is a value)

    def _arrays(self, p):
        raise NotImplementedError

    def _series(self):
        times, values, _ = self._arrays(self.p)
        self._n, self._row = times.size, values.shape[1:]

    def declare(self, d):
        d.derived("times", (self._n,))
        d.derived("values", (self._n, *self._row))
        d.derived("slopes", (self._n, *self._row))
        d.value(*self._values)

    def derive(self, p):
        return dict(zip(("times", "values", "slopes"), self._arrays(p)))

    def discrete_state(self):
        return np.zeros(1) if self.p.method == "previous" else None

    def _bind_series(self, clock):
        self._clock = clock
        if self.p.method == "linear":
            self._calc = self._linear
        else:
            self._calc = self._held if self._clock else self._previous

    def events(self, start, stop):
        if not self._clock:
            return ()
        times = self.v.times
        return tuple(float(s) for s in times[(times > start) & (times <= stop)])

    def _segment(self, t):
        """Index k of the last time point <= t, 0 before the first."""
        return max(int(np.searchsorted(self.v.times, t, side="right")) - 1, 0)

    def initialize(self, t):
        if self.xd.size:
            self.xd[0] = self._segment(t)

    def event(self, t):
        if self.xd.size:
            self.xd[0] = self._segment(t)

    def output(self, t):
        self._calc(t)

    def _held(self, t):
        np.copyto(self.y[0], self.v.values[int(self.xd[0])])

    def _previous(self, t):
        np.copyto(self.y[0], self.v.values[self._segment(self.u[0])])

    def _linear(self, t):
        v = self.v
        tau = max(t if self._clock else float(self.u[0]), v.times[0])
        k = self._segment(tau)
        y = self.y[0]
        np.multiply(v.slopes[k], tau - v.times[k], out=y)
        y += v.values[k]

    # ---- compiled form: xd[0] the segment (previous)
    def lower(self, c):
        n, w = self._n, c.n_out["y"]
        segment = "int k = rt_search_right(P_times, {n}, {v}) - 1; if (k < 0) k = 0;"
        previous = self.p.method == "previous"
        if not previous:
            output = (f"double tau = PYMAX({'t' if self._clock else 'in_t[0]'}, P_times[0]); "
                      + segment.format(n=n, v="tau") + " "
                      + c.loop(w, f"out_y[i] = P_slopes[k * {w} + i] * (tau - P_times[k]) "
                                  f"+ P_values[k * {w} + i];"))
        else:
            output = (("int k = (int)xd[0]; " if self._clock else
                       segment.format(n=n, v="in_t[0]") + " ")
                      + c.loop(w, f"out_y[i] = P_values[k * {w} + i];"))
        switch = segment.format(n=n, v="t") + " xd[0] = k;" if previous else ""
        return Lowering({"output": output, "initialize": switch, "event": switch})


def series(times, values, times_param="times", values_param="values",
           where=lambda k: f"times[{k}]", linear=True):
    """(times, values, slopes) of a time series, checked: times (N,) strictly increasing,
    values (N, ...); linear interpolation y = v[k] + slope[k]*(t - t[k]), the slope of the
    last row 0 (hold). `where(k)` names time point k in messages; a slope beyond the largest
    number is refused when the interpolation is `linear`."""
    if times.ndim != 1 or times.size < 1:
        raise ParamError(times_param, f"expected a non-empty vector of times, got shape "
                                      f"{times.shape}")
    with np.errstate(all="ignore"):  # overflows are reported below
        steps = np.diff(times)
        if np.any(steps <= 0):
            raise ParamError(times_param, "times must be strictly increasing")
        if values.ndim < 1 or values.shape[0] != times.size:
            raise ParamError(values_param, f"expected {times.size} rows (one per time "
                                           f"point), got shape {values.shape}")
        # Each time step and slope must be a number, or y is NaN or misses a row.
        slopes = np.zeros_like(values)
        slopes[:-1] = np.diff(values, axis=0) / steps.reshape((-1,) + (1,) * (values.ndim - 1))
    far = np.flatnonzero(np.isinf(steps))
    if far.size:
        k = int(far[0]) + 1
        raise ParamError(times_param, f"{where(k)}: the time step from {times[k - 1]:g} to "
                                      f"{times[k]:g} is more than the largest number, "
                                      f"{sys.float_info.max:.4g}")
    steep = np.flatnonzero(~np.isfinite(slopes.reshape(times.size, -1)).all(axis=1))
    if linear and steep.size:
        k = int(steep[0]) + 1
        raise ParamError(values_param, f"{where(k)}: the slope from the time point before "
                                       f"(over {steps[k - 1]:g} s) is more than the "
                                       f"largest number, {sys.float_info.max:.4g}: linear "
                                       "interpolation cannot follow it (use method: "
                                       "previous, or time points further apart)")
    return times, values, slopes


class Table(TimeSeries):
    """y = the time series (times, values) looked up at t, end values held outside.

    Input: t (optional, scalar): the lookup variable; unwired, the simulation time, and the
    solver then lands on every time point (the jumps of `previous`, the kinks of `linear`).
    Output: y of shape values.shape[1:].
    times (N,) strictly increasing; values (N, ...), row k the value at times[k]; the time
    steps and (linear) slopes must be numbers a double holds (below 1.8e308).
    linear:   y = v[k] + (v[k+1] - v[k])*(t - t[k])/(t[k+1] - t[k]) for t[k] <= t <= t[k+1].
    previous: y = v[k] for t[k] <= t < t[k+1] (right-continuous steps); on the simulation time
    the segment k lives in the discrete state, switched by `event`, so the output never depends
    on round-off in t.
    """

    type = "table"
    params = (
        Param("times", "value", doc="time points (N,), strictly increasing (s)"),
        Param("values", "value", doc="values (N, ...): row k is the value at times[k]"),
        Param("method", "choice", "linear", "interpolation", choices=("linear", "previous")),
    )

    _values = ("times", "values")

    def __init__(self, name, params):
        super().__init__(name, params)
        self._series()

    def _arrays(self, p):
        return series(p.times, p.values, linear=p.method == "linear")

    def ports(self):
        shape = self._row
        return ([In("t", shape=(), optional=True, default=None,
                    doc="lookup variable (default: the simulation time)")],
                [Out("y", shape=shape, feedthrough=("t",))])

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._bind_series(u[0] is None)
