"""Continuous-time blocks with state: integrator, derivative, rate limiter, LTI systems."""
import numpy as np

from blocksim.block import Block, In, Out, PortError
from blocksim.params import Param


class Integrator(Block):
    """dy/dt = u, y(0) = x0. The shape of x0 sets the signal's shape (scalar x0: scalar)."""

    type = "integrator"
    params = (Param("x0", "value", 0.0, "initial value; its shape is the signal's shape"),)

    def ports(self):
        shape = self.p.x0.shape
        return [In("u", shape=shape)], [Out("y", shape=shape, state=True)]

    def continuous_state(self):
        return self.p.x0.ravel()

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._dx = dx.reshape(self.p.x0.shape)

    def derivative(self, t):
        np.copyto(self._dx, self.u[0])
