"""The math block: one elementary function applied element-wise, with its domain checked."""
import numpy as np

from blocksim.accel import ufuncs
from blocksim.accel.lowering import Lowering, LoweringError
from blocksim.block import Block, In, Out
from blocksim.errors import SimulationError
from blocksim.language.behaviour import Behaviour
from blocksim.params import Param


def _square(u, out):
    return np.multiply(u, u, out=out)


def _reciprocal(u, out):
    return np.divide(1.0, u, out=out)


def _unit_interval(u):
    return -1.0 <= u.min() and u.max() <= 1.0


# fn -> (ufunc(u, out), check that every element of u is in the domain (or None), the domain)
FUNCTIONS = {
    "exp": (np.exp, None, ""),
    "log": (np.log, lambda u: u.min() > 0, "u > 0"),
    "log10": (np.log10, lambda u: u.min() > 0, "u > 0"),
    "sqrt": (np.sqrt, lambda u: u.min() >= 0, "u >= 0"),
    "square": (_square, None, ""),
    "reciprocal": (_reciprocal, lambda u: u.all(), "u != 0"),
    "sin": (np.sin, None, ""),
    "cos": (np.cos, None, ""),
    "tan": (np.tan, None, ""),
    "asin": (np.arcsin, _unit_interval, "-1 <= u <= 1"),
    "acos": (np.arccos, _unit_interval, "-1 <= u <= 1"),
    "atan": (np.arctan, None, ""),
    "sinh": (np.sinh, None, ""),
    "cosh": (np.cosh, None, ""),
    "tanh": (np.tanh, None, ""),
}


# the functions defined everywhere are the block's behaviour (blocksim/language/behaviour.py):
# fn(u) in the expression language, or this text
BEHAVIOURS = {"square": "u * u"}

# fn -> its C expression of u and the C test that u is in its domain: the C library's sqrt is
# numpy's to the bit (correctly rounded); the others are numpy's own vectorised loops, called
# from compiled code (blocksim.accel.ufuncs)
C_FUNCTIONS = {"sqrt": ("sqrt(u)", "u >= 0"), "reciprocal": ("1.0 / u", "u != 0")}
C_DOMAINS = {"log": "u > 0", "log10": "u > 0", "asin": "-1 <= u && u <= 1",
             "acos": "-1 <= u && u <= 1"}


class Math(Block):
    """y = fn(u), element-wise.

    fn: exp, log (natural), log10, sqrt, square (u^2), reciprocal (1/u), sin, cos, tan, asin,
    acos, atan, sinh, cosh, tanh; angles in radians. Input: u, any shape. Output: y, u's
    shape. An input outside fn's domain (log and log10: u > 0; sqrt: u >= 0; reciprocal:
    u != 0; asin and acos: -1 <= u <= 1) stops the run with a SimulationError naming the
    block, the offending value and the time (exit 3), rather than a NaN or inf found later.
    """

    type = "math"
    params = (Param("fn", "choice", doc="the function", choices=tuple(FUNCTIONS)),)

    def __init__(self, name, params):
        super().__init__(name, params)
        self._f, self._allowed, self._domain = FUNCTIONS[self.p.fn]
        if self._allowed is None:  # defined everywhere: its behaviour, written once
            self.behaviour = Behaviour(outputs={"y": BEHAVIOURS.get(self.p.fn, f"{self.p.fn}(u)")})
        else:
            self.output = self._checked

    def ports(self):
        return [In("u")], [Out("y")]

    def output(self, t):
        self._f(self.u[0], out=self.y[0])

    def _checked(self, t):
        u = self.u[0]
        if not self._allowed(u):
            bad = next(v for v in np.asarray(u).reshape(-1) if not self._allowed(v))
            raise SimulationError(f"{self.p.fn} of u = {bad:.6g} is undefined (domain: "
                                  f"{self._domain})", block=self.name, port="y", time=t)
        self._f(u, out=self.y[0])

    def lower(self, c):  # the functions with a domain: a value outside stops the run
        n = c.n_out["y"]
        if self.behaviour is not None:
            return Lowering({})
        if self.p.fn in C_FUNCTIONS:
            value, allowed = C_FUNCTIONS[self.p.fn]
            compute = c.loop(n, f"double u = in_u[i]; out_y[i] = {value};")
        else:
            ufunc = self._f.__name__
            if ufuncs.loop(ufunc) is None:
                raise LoweringError(f"has no compiled form for fn: {self.p.fn} with this numpy "
                                    f"(its {ufunc} loop was not found)")
            allowed = C_DOMAINS[self.p.fn]
            compute = f"rt_ufunc(RT_UF_{ufunc.upper()}, in_u, out_y, {n});"
        # NaN fails every domain test, as it fails u.min() > 0 in _checked
        check = c.loop(n, (
            f"double u = in_u[i]; if (!({allowed})) {{ FAIL(\"{self.p.fn} of u = %.6g is "
            f"undefined (domain: {self._domain})\", u); return; }}")) + "\n"
        return Lowering({"output": check + compute})
