"""The quantizer: a staircase whose every step is a located event."""
import numpy as np

from blocksim.accel.lowering import Lowering
from blocksim.block import EITHER, Block, In, Out
from blocksim.language.behaviour import Behaviour
from blocksim.params import Param


def _round(v):
    """Round half away from zero (MATLAB's round), element-wise."""
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


class Quantizer(Block):
    """y = interval*round(u/interval), element-wise (round half away from zero, as MATLAB).

    Input: u, any shape. Output: y, u's shape. interval > 0. Each element's level
    k = round(u/interval) is a mode: y = k*interval is constant between events, and the level
    changes only at the located crossings of u through the thresholds (k +- 1/2)*interval,
    so every step of the staircase is an event the solver lands on.
    """

    type = "quantizer"
    params = (Param("interval", "scalar", doc="quantization interval, > 0", positive=True),)

    def ports(self):
        return [In("u")], [Out("y")]

    def infer(self, shapes):
        self._shape = shapes["u"]
        self._n = int(np.prod(self._shape, dtype=int))
        return {"y": self._shape}

    def declare(self, d):
        d.param("interval")

    def discrete_state(self):
        return np.zeros(self._n)  # the level k of each element

    def zero_crossings(self):
        return np.full(2 * self._n, EITHER)  # u - (k + 1/2) q, then u - (k - 1/2) q

    # xd: the level k of each element; the indicators u - (k + 1/2) q, u - (k - 1/2) q
    behaviour = Behaviour(outputs={"y": "xd * interval"},
                          indicator="[(xd + 0.5) * -interval + u, (xd - 0.5) * -interval + u]",
                          state="u")

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._u = u[0].reshape(-1)

    def crossing(self, t, crossed):
        n, q = self._n, self.v.interval
        level = _round(self._u / q)
        # at a threshold itself (u exactly (k +- 1/2) q) the crossing's direction decides
        up, down = crossed[:n] > 0, crossed[n:] < 0
        at = np.abs(self._u / q - level) == 0.5
        level = np.where(at & up, np.floor(self._u / q) + 1, level)
        level = np.where(at & down, np.floor(self._u / q), level)
        changed = not np.array_equal(level, self.xd)
        self.xd[:] = level
        return changed

    def lower(self, c):  # the handler; the output and the indicators are its behaviour
        n = self._n
        q = "P_interval[0]"
        return Lowering({
            "crossing": c.loop(n, (
                f"double v = in_u[i] / {q}, level = rt_sign(v) * floor(fabs(v) + 0.5); "
                "int at = fabs(v - level) == 0.5; "
                "if (at && crossed[i] > 0) level = floor(v) + 1; "
                f"if (at && crossed[{n} + i] < 0) level = floor(v); "
                "if (level != xd[i]) changed = 1; xd[i] = level;"))})
