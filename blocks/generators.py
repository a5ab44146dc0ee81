"""Signal generators: a rectangular pulse train and a linear chirp."""
import math

import numpy as np

from blocksim.accel.lowering import Lowering
from blocksim.block import Block, Out, exact_time
from blocksim.params import Param, ParamError


class Pulse(Block):
    """A rectangular pulse train whose edges the solver lands on exactly.

    y = amplitude during the first width*period of every period from `delay` on, 0 otherwise
    (and 0 before `delay`). Edges: rising at delay + k*period, falling at delay + (k + width)*period (k = 0, 1, ...),
    each computed by multiplication (no drift over long runs) in the fractions the sample hits
    are counted in, so an edge and a sample hit that coincide are the same float (a zoh of
    period 0.1 sees the edge at 0.3 of a pulse of period 0.2). They are source switches: the
    solver lands on every edge exactly, integration up to an edge uses the value before it,
    from the edge the value after it, so the area of every pulse, amplitude*width*period, is
    exact. Output: y, amplitude's shape. period > 0 (s), 0 < width < 1 (fraction of the
    period), delay >= 0 (s).
    """

    type = "pulse"
    time_dependent = True
    params = (
        Param("amplitude", "value", 1.0, "value while the pulse is high"),
        Param("period", "scalar", 1.0, "period of the train (s)", positive=True),
        Param("width", "scalar", 0.5, "high time as a fraction of the period, 0 < width < 1",
              positive=True),
        Param("delay", "scalar", 0.0, "time of the first rising edge (s)", minimum=0.0),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        self.derive(self.p)
        self._exact_of = None

    def ports(self):
        return [], [Out("y", shape=self.p.amplitude.shape, feedthrough=())]

    def declare(self, d):
        for name in ("delay", "period", "amplitude"):
            d.param(name)
        d.value("width")

    def derive(self, p):
        if not p.width < 1.0:
            raise ParamError("width", f"must be < 1 (a fraction of the period), got "
                                      f"{p.width:g}")
        return {}

    def discrete_state(self):
        return np.zeros(1)  # 1 while high, 0 while low

    def _exact(self):
        """(delay, period, high time) as exact times, made once per set of values."""
        p = self.p
        if self._exact_of != (p.delay, p.period, p.width):
            period = exact_time(p.period)
            self._times = exact_time(p.delay), period, exact_time(p.width) * period
            self._exact_of = (p.delay, p.period, p.width)
        return self._times

    def edge(self, j):
        """Time of edge j: even j rising, odd j falling."""
        delay, period, high = self._exact()
        return float(delay + j // 2 * period + (high if j % 2 else 0))

    def _edges_up_to(self, t):
        """The number of edges at or before t."""
        p = self.p
        if t < p.delay:
            return 0
        j = 2 * int((t - p.delay) // p.period)
        while self.edge(j) <= t:  # the floor above may be one period off by round-off
            j += 1
        while j > 0 and self.edge(j - 1) > t:
            j -= 1
        return j

    def events(self, start, stop):
        first = self.edge(self._edges_up_to(start))
        return (first,) if first <= stop else ()

    def reschedule(self, t):
        return (self.edge(self._edges_up_to(t)),)  # the next edge: no list of them all

    def initialize(self, t):
        self.xd[0] = self._edges_up_to(t) % 2

    def event(self, t):
        self.xd[0] = self._edges_up_to(t) % 2

    def output(self, t):
        np.multiply(self.v.amplitude, self.xd[0], out=self.y[0])

    # ---- compiled form: series 0 the rising edges, 1 the falling ones (edge j is series
    # j % 2 at j // 2)
    def exact_times(self):
        delay, period, high = self._exact()
        return [(delay, period), (delay + high, period)]

    def lower(self, c):
        # the number of edges at or before t, as _edges_up_to (the floor is only a guess)
        count = ("long long j = 0; if (t >= P_delay[0]) { "
                 "j = 2 * (long long)floor((t - P_delay[0]) / P_period[0]); "
                 "while (SERIES(j % 2, j / 2) <= t) j++; "
                 "while (j > 0 && SERIES((j - 1) % 2, (j - 1) / 2) > t) j--; }")
        switch = f"{{ {count} xd[0] = (double)(j % 2); }}"
        return Lowering({
            "output": c.loop(c.n_out["y"], "out_y[i] = P_amplitude[i] * xd[0];"),
            "initialize": switch, "event": switch,
            "reschedule": f"{{ {count} SCHEDULE(SERIES(j % 2, j / 2)); }}"}, series=2)


class Chirp(Block):
    """A sine whose frequency sweeps linearly from f0 at t = 0 to f1 at t = t1 (a linear chirp).

    y = amplitude*sin(2*pi*(f0*t + (f1 - f0)*t^2/(2*t1))); the sweep goes on at the same rate
    after t1. The instantaneous frequency is f0 + (f1 - f0)*t/t1 (Hz). Output: y, amplitude's shape.
    f0, f1 in Hz (>= 0), t1 > 0 (s).
    """

    type = "chirp"
    time_dependent = True
    params = (
        Param("amplitude", "value", 1.0, "peak amplitude"),
        Param("f0", "scalar", 0.1, "frequency at t = 0 (Hz)", minimum=0.0),
        Param("f1", "scalar", 10.0, "frequency at t = t1 (Hz)", minimum=0.0),
        Param("t1", "scalar", 10.0, "time at which the frequency reaches f1 (s)", positive=True),
    )

    def ports(self):
        return [], [Out("y", shape=self.p.amplitude.shape, feedthrough=())]

    def declare(self, d):  # y = amplitude*sin(t*(a + b*t))
        d.derived("a", ())
        d.derived("b", ())
        d.param("amplitude")
        d.value("f0", "f1", "t1")

    def derive(self, p):
        return {"a": 2.0 * math.pi * p.f0, "b": math.pi * (p.f1 - p.f0) / p.t1}

    def output(self, t):
        v = self.v
        np.multiply(v.amplitude, math.sin(t * (v.a + v.b * t)), out=self.y[0])

    def lower(self, c):
        return Lowering({"output": c.loop(c.n_out["y"], "out_y[i] = P_amplitude[i] * "
                                                        "sin(t * (P_a[0] + P_b[0] * t));")})
