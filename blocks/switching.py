"""Element-wise blocks that select or compare, with zero crossings (hybrid.md): sign, abs,
min_max, relational, switch.

Their output is a different smooth function of the inputs on each side of a threshold; the
side (the mode) is kept in the discrete state and changes only at a located crossing or at
another event, where the block re-derives it from its inputs.
"""
import numpy as np

from blocksim.accel.lowering import Lowering
from blocksim.block import EITHER, FALLING, Block, In, Out, PortError
from blocksim.language.behaviour import Behaviour
from blocksim.params import Param, ParamError

from .linearisation import broadcast, mode_words, static
from .math import _broadcast_inputs


class _Signed(Block):
    """Modes -1 / 0 / +1 per element from the sign of u, crossing at u = 0."""

    def ports(self):
        return [In("u")], [Out("y")]

    def infer(self, shapes):
        self._n = int(np.prod(shapes["u"], dtype=int))
        return {"y": shapes["u"]}

    def discrete_state(self):
        return np.zeros(self._n)

    def zero_crossings(self):
        return np.full(self._n, EITHER)

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._u = u[0].reshape(-1)

    def crossing(self, t, crossed):
        u = self._u
        mode = np.where((u > 0) | ((u == 0) & (crossed > 0)), 1.0,
                        np.where((u < 0) | ((u == 0) & (crossed < 0)), -1.0, self._at_zero))
        changed = not np.array_equal(mode, self.xd)
        self.xd[:] = mode
        return changed

    def lower(self, c):  # the handler; the output and the indicator are its behaviour
        return Lowering({
            "crossing": c.loop(self._n, (
                "double u = in_u[i], mode = u > 0 || (u == 0 && crossed[i] > 0) ? 1.0 : "
                f"u < 0 || (u == 0 && crossed[i] < 0) ? -1.0 : {self._at_zero!r}; "
                "if (mode != xd[i]) changed = 1; xd[i] = mode;"))})


class Sign(_Signed):
    """y = sign(u) element-wise: -1, 0 or 1.

    Input: u, any shape. Output: y, u's shape. The sign is a mode that changes at the
    located crossings of u through 0 (and is 0 only while u stays exactly 0).
    """

    type = "sign"
    _at_zero = 0.0
    behaviour = Behaviour(outputs={"y": "xd"}, indicator="u", state="u")  # xd: the sign


class Abs(_Signed):
    """y = |u| element-wise.

    Input: u, any shape. Output: y, u's shape. Computed as s*u with the sign s a mode that
    changes at the located crossings of u through 0, so y has no kink inside a step.
    """

    type = "abs"
    _at_zero = 1.0
    behaviour = Behaviour(outputs={"y": "xd * u"}, indicator="u", state="u")


class MinMax(Block):
    """y = min(u1, ..., uN) (or max) element-wise; with one input, the min (max) of its elements.

    Inputs: u1..uN (N = inputs >= 2) broadcast together; output y, the broadcast shape. With
    inputs: 1 (Simulink's MinMax with one input) y is the scalar min (max) over the elements
    of u. Which input (element) is selected is a mode, changed at the located crossings where
    another one passes the selected one (indicator s*(u_j - y), s = +1 for min, -1 for max);
    ties keep the selected one.
    """

    type = "min_max"
    params = (
        Param("fn", "choice", "min", "the function", choices=("min", "max")),
        Param("inputs", "int", 2, "number of inputs (1: over the elements of u)", minimum=1),
    )

    def ports(self):
        return [In(f"u{i + 1}") for i in range(self.p.inputs)], [Out("y")]

    def infer(self, shapes):
        self._reduce = self.p.inputs == 1
        if self._reduce:  # candidates: the elements of u; one mode
            self._shape, self._n = (), 1
            self._candidates = int(np.prod(shapes["u1"], dtype=int))
            return {"y": ()}
        self._shape = _broadcast_inputs([f"u{i + 1}" for i in range(self.p.inputs)], shapes)
        self._n = int(np.prod(self._shape, dtype=int))
        self._candidates = self.p.inputs
        return {"y": self._shape}

    def discrete_state(self):
        return np.zeros(self._n)  # index of the selected input (element) per element of y

    def zero_crossings(self):
        return np.full(self._candidates * self._n, FALLING)

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._mode = xd.reshape(self._shape)
        self._s = 1.0 if self.p.fn == "min" else -1.0
        if self._reduce:
            self._flat = u[0].reshape(-1)
            self._values = np.empty(self._candidates)
            self.output, self.indicator, self.crossing = (self._reduced_output,
                                                          self._reduced_indicator,
                                                          self._reduced_crossing)
            return
        self._pick = np.zeros(self._shape, bool)
        self._zs = tuple(self.z[k * self._n:(k + 1) * self._n].reshape(self._shape)
                         for k in range(self.p.inputs))

    def output(self, t):
        y = self.y[0]
        for k, uk in enumerate(self.u):
            np.equal(self._mode, k, out=self._pick)
            np.copyto(y, uk, where=self._pick)

    def indicator(self, t):
        y = self.y[0]
        for uk, zk in zip(self.u, self._zs):
            np.subtract(uk, y, out=zk)
            zk *= self._s

    def crossing(self, t, crossed):
        values = self._s * np.stack([np.broadcast_to(uk, self._shape) for uk in self.u])
        return self._select(values)

    def _select(self, values):
        """The new modes from the candidates' signed values (candidates along axis 0)."""
        best = values.min(axis=0)
        current = np.take_along_axis(values, self._mode.astype(int)[None], axis=0)[0]
        keep = current <= best  # ties keep the selected input
        new = np.where(keep, self._mode, values.argmin(axis=0))
        changed = not np.array_equal(new, self._mode)
        self._mode[...] = new
        return changed

    def _reduced_output(self, t):
        self.y[0][...] = self._flat[int(self._mode)]

    def _reduced_indicator(self, t):
        np.subtract(self._flat, self.y[0], out=self.z)
        self.z *= self._s

    def _reduced_crossing(self, t, crossed):
        np.multiply(self._s, self._flat, out=self._values)
        return self._select(self._values)

    # ---- compiled form: the sign s in the code (fn is structure); xd = the selected input
    # (element) per element of y
    def lower(self, c):
        s, m, n = repr(self._s), self._candidates, self._n
        if self._reduce:  # one element of y, the candidates are u1's elements
            terms = [f"in_u1[{k}]" for k in range(m)]
            output = "out_y[i] = in_u1[(int)xd[i]];"
        else:
            terms = [c.elem(f"u{k + 1}") for k in range(m)]
            output = " ".join(f"if (xd[i] == {k}) out_y[i] = {u};" for k, u in enumerate(terms))
        indicator = " ".join(f"z[{k * n} + i] = ({u} - out_y[i]) * {s};"
                             for k, u in enumerate(terms))
        # _select: np.min and np.argmin over the candidates (a NaN wins, else the first least)
        values = " ".join(f"v[{k}] = {s} * {u};" for k, u in enumerate(terms))
        select = (f"double v[{m}]; {values} double best = v[0]; int arg = 0; "
                  f"for (int k = 1; k < {m} && !isnan(best); k++) "
                  "if (isnan(v[k]) || v[k] < best) { best = v[k]; arg = k; } "
                  "double mode = v[(int)xd[i]] <= best ? xd[i] : arg; "
                  "if (mode != xd[i]) changed = 1; xd[i] = mode;")
        return Lowering({"output": c.loop(n, output), "indicator": c.loop(n, indicator),
                         "crossing": c.loop(n, select)})


_RELATIONS = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
              "==": np.equal, "!=": np.not_equal}


class Relational(Block):
    """y = 1.0 where (u1 op u2) holds, else 0.0, element-wise; op one of < <= > >= == !=.

    Inputs: u1, u2 broadcast together. Output: y, the broadcast shape. The truth is a mode
    that changes at the located crossings of u1 - u2 through 0 (== holds, and != fails, only
    while u1 - u2 stays exactly 0).
    """

    type = "relational"
    params = (Param("op", "choice", doc="the relation", choices=tuple(_RELATIONS)),)

    def ports(self):
        return [In("u1"), In("u2")], [Out("y")]

    def infer(self, shapes):
        self._shape = _broadcast_inputs(["u1", "u2"], shapes)
        self._n = int(np.prod(self._shape, dtype=int))
        self._op = _RELATIONS[self.p.op]
        return {"y": self._shape}

    def discrete_state(self):
        return np.zeros(self._n)

    def zero_crossings(self):
        return np.full(self._n, EITHER)

    # xd: the truth per element of y, which is y itself
    behaviour = Behaviour(outputs={"y": "xd"}, indicator="u1 - u2", state="y")

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._truth = xd.reshape(self._shape)

    def crossing(self, t, crossed):
        new = self._op(*self.u).astype(float)
        changed = not np.array_equal(new, self._truth)
        self._truth[...] = new
        return changed

    def lower(self, c):
        a, b = c.elem("u1"), c.elem("u2")
        return Lowering({
            "crossing": c.loop(self._n, f"double now = {a} {self.p.op} {b}; "
                                        "if (now != xd[i]) changed = 1; xd[i] = now;")})


_CRITERIA = (">=", ">", "!=0")


class Switch(Block):
    """y = u1 where criterion(u2, threshold) holds, else u3 (Simulink's layout: u2 controls).

    criterion: ">=" (u2 >= threshold), ">" (u2 > threshold) or "!=0" (u2 != 0). Inputs u1, u3
    broadcast together to y's shape; u2 is a scalar (one switch for all) or of y's shape (one
    per element). Which input passes is a mode, changed at the located crossings of
    u2 - threshold (u2 for "!=0") and at other events.
    """

    type = "switch"
    params = (
        Param("threshold", "scalar", 0.0, "threshold the control input u2 is compared with"),
        Param("criterion", "choice", ">=", "when u1 passes", choices=_CRITERIA),
    )

    def ports(self):
        return [In("u1"), In("u2", doc="control"), In("u3")], [Out("y")]

    def infer(self, shapes):
        shape = _broadcast_inputs(["u1", "u3"], shapes)
        if shapes["u2"] not in ((), shape):
            raise PortError("u2", f"the control input must be a scalar or of the output's "
                                  f"shape {shape}, got {shapes['u2']}")
        self._shape, self._m = shape, int(np.prod(shapes["u2"], dtype=int))
        self.derive(self.p)
        return {"y": shape}

    def declare(self, d):
        d.param("threshold")

    def derive(self, p):
        if p.criterion == "!=0" and p.threshold != 0:
            raise ParamError("threshold", "criterion '!=0' compares u2 with 0: leave threshold 0")
        return {}

    def discrete_state(self):
        return np.zeros(self._m)  # 1: u1 passes

    def zero_crossings(self):
        return np.full(self._m, EITHER)

    # xd: 1 where u1 passes, one per element of the control u2
    behaviour = Behaviour(outputs={"y": "where(xd, u1, u3)"}, indicator="u2 - threshold",
                          state="u2")

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._control = u[1].reshape(-1)

    def crossing(self, t, crossed):
        c, th = self._control, self.v.threshold
        criterion = self.p.criterion
        if criterion == ">=":
            holds = (c > th) | ((c == th) & (crossed >= 0))
        elif criterion == ">":
            holds = (c > th)
        else:
            holds = c != 0
        new = holds.astype(float)
        changed = not np.array_equal(new, self.xd)
        self.xd[:] = new
        return changed

    # compiled form: one mode per element of u2
    _C_CRITERIA = {">=": "in_u2[i] > P_threshold[0] || (in_u2[i] == P_threshold[0] "
                         "&& crossed[i] >= 0)",
                   ">": "in_u2[i] > P_threshold[0]", "!=0": "in_u2[i] != 0"}

    def lower(self, c):  # the handler; the output and the indicator are its behaviour
        return Lowering({
            "crossing": c.loop(self._m, f"double now = {self._C_CRITERIA[self.p.criterion]}; "
                                        "if (now != xd[i]) changed = 1; xd[i] = now;")})

    def jacobian(self, pade=None):
        """y = u1 where u1 passes, else u3: gain 1 from the input that passes, 0 from the
        other and from the control input u2."""
        mode = self.xd.reshape(self._shape) if self._m > 1 else self.xd[0]
        passes = np.broadcast_to(mode != 0.0, self._shape).ravel()[:, None]
        u1, u2, u3 = self.u
        return static(np.hstack([passes * broadcast(u1.shape, self._shape),
                                 np.zeros((passes.size, u2.size)),
                                 ~passes * broadcast(u3.shape, self._shape)]))

    def mode_text(self):
        return mode_words(self.xd, {0.0: "u3 passes", 1.0: "u1 passes"})
