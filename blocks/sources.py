"""Source blocks: signals that depend only on time and parameters."""
import numpy as np

from blocksim.block import ALL, CONSTANT, Block, Out
from blocksim.params import Param


class Constant(Block):
    """y = value (any shape; the value's shape is the signal's shape)."""

    type = "constant"
    params = (Param("value", doc="the constant (number, vector or matrix)"),)

    def __init__(self, name, params):
        super().__init__(name, params)
        self.sample = CONSTANT

    def ports(self):
        return [], [Out("y", shape=self.p.value.shape, feedthrough=())]

    def output(self, t):
        self.y[0][...] = self.p.value


class Step(Block):
    """y = before for t < time, after from t = time on.

    The switch is a source discontinuity: the solver lands exactly on `time`; integration up
    to it uses `before`, from it `after`. The mode lives in the discrete state (0 before, 1
    after) and is switched by `event`, so the output never depends on round-off in t.
    """

    type = "step"
    time_dependent = True
    params = (
        Param("time", "scalar", 1.0, "switch time (s)"),
        Param("before", "value", 0.0, "value for t < time"),
        Param("after", "value", 1.0, "value from t = time"),
    )

    def ports(self):
        shape = np.broadcast_shapes(self.p.before.shape, self.p.after.shape)
        self._before = np.broadcast_to(self.p.before, shape).copy()
        self._after = np.broadcast_to(self.p.after, shape).copy()
        return [], [Out("y", shape=shape, feedthrough=())]

    def discrete_state(self):
        return np.zeros(1)

    def events(self, start, stop):
        return (self.p.time,) if start < self.p.time <= stop else ()

    def initialize(self, t):
        self.xd[0] = 1.0 if t >= self.p.time else 0.0

    def event(self, t):
        self.xd[0] = 1.0

    def output(self, t):
        self.y[0][...] = self._after if self.xd[0] else self._before
