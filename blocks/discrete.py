"""Discrete-time blocks (Simulink semantics): they act at their sample hits offset + k*period
(inside a triggered subsystem, given no period, at the trigger's edges).

At a hit the simulator calls the blocks' output calcs in dataflow order, then `update(t)`;
between hits outputs hold. Each block keeps the output it holds in its discrete state, and
`initialize` writes it (x0) into the output at the start, so that the output is x0 before the
first hit whether or not the run starts on one.
"""
import numpy as np

from blocksim.accel.lowering import Lowering
from blocksim.block import TRIGGERED, Block, In, Jacobian, Out, Sample
from blocksim.language.behaviour import Behaviour
from blocksim.params import Param

from .linearisation import static


class ShapedByX0(Block):
    """One input u and one output y of u's shape: a scalar x0 broadcasts to it, a non-scalar
    x0 fixes it, and in a loop that nothing else fixes x0's shape is the signal's (the
    discrete blocks here, the transport delay)."""

    def _x0_ports(self, feedthrough):
        shape = self.p.x0.shape or None
        return [In("u", shape=shape)], [Out("y", shape=shape, feedthrough=feedthrough)]

    def infer(self, shapes):
        self._shape = shapes["u"]
        return {"y": self._shape}

    def initial_shapes(self):
        return {"y": self.p.x0.shape}


class _Discrete(ShapedByX0):
    """The discrete state holds `slots` copies of the signal, each initially x0."""

    slots = 1

    def declare(self, d):
        d.value("x0")
        d.sample("period", "offset")

    def discrete_state(self):
        return np.tile(np.broadcast_to(self.p.x0, self._shape).ravel(), self.slots)

    def _slot(self, k):
        size = self.xd.size // self.slots
        return self.xd[k * size:(k + 1) * size].reshape(self._shape, copy=False)


# the sample offset every discrete block takes (Simulink's sample time [period, offset])
SAMPLE_OFFSET = Param("offset", "scalar", 0.0, "time of the first hit (s), >= 0", minimum=0.0)
# the sample period of a discrete block that can run inside a triggered subsystem: there it
# is left out (Simulink's inherited sample time, -1), and the trigger's edges are its hits
PERIOD = Param("period", "scalar", None, "sample period (s); left out only inside a "
               "triggered subsystem, whose trigger is then its hits", positive=True)


def sample_time(p):
    """The Sample of a discrete block's `period` and `offset`, or TRIGGERED without a period."""
    return TRIGGERED if p.period is None else Sample(p.period, p.offset)


class ZeroOrderHold(_Discrete):
    """y(t) = u(t_k) for t_k <= t < t_k+1, t_k = offset + k*period; x0 before the first hit.

    Input: u. Output: y, u's shape; a non-scalar x0 fixes it, a scalar x0 broadcasts. At a hit
    the output is the input sampled then (direct feedthrough at its hits: a loop through a zoh
    alone is algebraic), then held. period > 0, offset >= 0 (s). Inside a triggered
    subsystem the period is left out: the trigger's edges are the hits.
    """

    type = "zoh"
    params = (
        PERIOD,
        SAMPLE_OFFSET,
        Param("x0", "value", 0.0, "output before the first hit"),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        self.sample = sample_time(self.p)

    def ports(self):
        return self._x0_ports(feedthrough=("u",))

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._held = self._slot(0)

    behaviour = Behaviour(outputs={"y": "u"})  # at its hits; held by its state between

    def initialize(self, t):
        np.copyto(self.y[0], self._held)

    def update(self, t):
        np.copyto(self._held, self.y[0])

    def lower(self, c):  # the held value (initialize, update); the output is its behaviour
        n = c.n_out["y"]
        return Lowering({"initialize": c.loop(n, "out_y[i] = xd[i];"),
                         "update": c.loop(n, "xd[i] = out_y[i];")})

    def jacobian(self, pade=None):
        """At its hits y = u: a gain of 1, no state (the held copy only repeats y)."""
        return static(np.eye(self.u[0].size))


class UnitDelay(_Discrete):
    """y[k] = u[k-1] at the hits t_k = offset + k*period, held in between; y[0] = x0.

    Input: u. Output: y, u's shape (a non-scalar x0 fixes it, a scalar x0 broadcasts), no
    feedthrough: it breaks algebraic loops. The discrete state keeps the held output and the
    stored input apart, so storing u(t_k) does not change y before the next hit. period > 0 (s);
    left out inside a triggered subsystem, whose trigger's edges are then the hits.
    """

    type = "unit_delay"
    slots = 2
    params = (
        PERIOD,
        SAMPLE_OFFSET,
        Param("x0", "value", 0.0, "initial output"),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        self.sample = sample_time(self.p)

    def ports(self):
        return self._x0_ports(feedthrough=())

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._held, self._stored = self._slot(0), self._slot(1)

    def initialize(self, t):
        np.copyto(self.y[0], self._held)

    def output(self, t):
        np.copyto(self.y[0], self._stored)

    def update(self, t):
        np.copyto(self._held, self._stored)
        np.copyto(self._stored, self.u[0])

    def lower(self, c):  # xd = [held, stored]
        n = c.n_out["y"]
        return Lowering({"initialize": c.loop(n, "out_y[i] = xd[i];"),
                         "output": c.loop(n, f"out_y[i] = xd[{n} + i];"),
                         "update": c.loop(n, f"xd[i] = xd[{n} + i]; xd[{n} + i] = in_u[i];")})

    def jacobian(self, pade=None):
        """s[k+1] = u[k], y[k] = s[k] with s the stored input (the held output copies it)."""
        n = self.u[0].size
        zero, one = np.zeros((n, n)), np.eye(n)
        return Jacobian(zero, one, one, zero, states=tuple(range(n, 2 * n)))
