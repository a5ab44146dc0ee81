"""Memoryless math blocks: y is a function of the inputs at the same instant."""
import numpy as np

from blocksim.block import Block, In, Out, PortError
from blocksim.params import Param


class Gain(Block):
    """y = K*u for a scalar or vector K (element-wise, numpy broadcasting); y = K @ u for a
    matrix K."""

    type = "gain"
    params = (Param("K", doc="gain: scalar, vector (element-wise) or matrix (K @ u)"),)

    def ports(self):
        return [In("u")], [Out("y")]

    def infer(self, shapes):
        u, K = shapes["u"], self.p.K.shape
        if len(K) == 2:
            if len(u) not in (1, 2) or u[0] != K[1]:
                raise PortError("u", f"matrix gain of shape {K} cannot multiply a signal of shape {u}")
            self._calc = self._matmul
            return {"y": (K[0],) + tuple(u[1:])}
        try:
            y = np.broadcast_shapes(K, u)
        except ValueError:
            raise PortError("u", f"gain of shape {K} does not broadcast with a signal of shape {u}") from None
        if y != u:
            raise PortError("u", f"gain of shape {K} would change the signal's shape {u} to {y}")
        self._calc = self._elementwise
        return {"y": y}

    def output(self, t):
        self._calc()

    def _elementwise(self):
        np.multiply(self.p.K, self.u[0], out=self.y[0])

    def _matmul(self):
        np.matmul(self.p.K, self.u[0], out=self.y[0])
