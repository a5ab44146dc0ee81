"""Logical operators on the truth (non-zero) of signals, switching only at events."""
import numpy as np

from blocksim.accel.lowering import Lowering
from blocksim.block import EITHER, Block, In, Out
from blocksim.params import Param

from .math import _broadcast_inputs


# op -> (the ufunc combining the inputs' truths one after the other, negate the result);
# `not` is the negated `and` of its single input
_OPS = {
    "and": (np.logical_and, False),
    "or": (np.logical_or, False),
    "xor": (np.logical_xor, False),  # true for an odd number of true inputs
    "not": (np.logical_and, True),
    "nand": (np.logical_and, True),
    "nor": (np.logical_or, True),
}


class Logical(Block):
    """y = 1.0 or 0.0: and, or, xor, not, nand or nor of the inputs' truth (u != 0).

    xor is true for an odd number of true inputs. Inputs: u1..uN (N = inputs >= 1; `not` has
    the single input u), broadcast together element-wise. Output: y, the broadcast shape.
    Each input element's truth is a mode, re-derived at every event instant (so an input
    that jumps at another block's event switches the output right there) and at the located
    zero crossings of the input itself: between events the output is constant.
    """

    type = "logical"
    params = (
        Param("op", "choice", doc="the operator", choices=tuple(_OPS)),
        Param("inputs", "int", 2, "number of inputs (not: 1)", minimum=1),
    )

    def ports(self):
        if self.p.op == "not":
            return [In("u")], [Out("y")]
        return [In(f"u{i + 1}") for i in range(self.p.inputs)], [Out("y")]

    def infer(self, shapes):
        names = list(shapes)
        self._shape = _broadcast_inputs(names, shapes)
        self._sizes = [int(np.prod(shapes[n], dtype=int)) for n in names]
        return {"y": self._shape}

    def discrete_state(self):
        return np.zeros(sum(self._sizes))  # each input element's truth (1/0)

    def zero_crossings(self):
        return np.full(sum(self._sizes), EITHER)  # each input element through 0

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._flat = [ui.reshape(-1) for ui in u]
        bounds = np.cumsum([0] + self._sizes)
        self._z = [self.z[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        truths = [xd[a:b].reshape(np.shape(ui)) for a, b, ui in zip(bounds[:-1], bounds[1:], u)]
        self._first, *others = [np.broadcast_to(v, self._shape) for v in truths]
        self._others = tuple(others)
        self._combine, self._negate = _OPS[self.p.op]
        self._result = np.zeros(self._shape, bool)

    def output(self, t):
        result = self._result
        np.not_equal(self._first, 0.0, out=result)
        for truth in self._others:
            self._combine(result, truth, out=result)
        if self._negate:
            np.logical_not(result, out=result)
        np.copyto(self.y[0], result)

    def indicator(self, t):
        for z, u in zip(self._z, self._flat):
            np.copyto(z, u)

    def crossing(self, t, crossed):
        new = np.concatenate([u != 0 for u in self._flat]).astype(float)
        changed = not np.array_equal(new, self.xd)
        self.xd[:] = new
        return changed

    # compiled form: xd = the truths of every input's elements, input after input
    _C_OPS = {np.logical_and: "&&", np.logical_or: "||", np.logical_xor: "!="}

    def lower(self, c):
        names, starts = list(c.shape_in), np.cumsum([0] + self._sizes)
        # each input's truth at element i of y, paired as numpy broadcasting pairs them
        result = f" {self._C_OPS[self._combine]} ".join(
            f"(xd[{s} + {c.index(name)}] != 0.0)" for name, s in zip(names, starts))
        if self._negate:
            result = f"!({result})"

        def each_input(body):
            return "\n".join(c.loop(size, body.format(name=name, s=s))
                             for name, size, s in zip(names, self._sizes, starts))
        return Lowering({
            "output": c.loop(int(np.prod(self._shape, dtype=int)), f"out_y[i] = {result};"),
            "indicator": each_input("z[{s} + i] = in_{name}[i];"),
            "crossing": each_input("double now = in_{name}[i] != 0.0; "
                                   "if (now != xd[{s} + i]) changed = 1; xd[{s} + i] = now;")})
