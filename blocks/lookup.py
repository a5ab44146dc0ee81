"""Lookup tables: y(u) from a 1-D table and z(u1, u2) from a 2-D table, element-wise."""
import numpy as np

from blocksim.accel.lowering import Lowering
from blocksim.block import Block, In, Out
from blocksim.params import Param, ParamError

from .math import _broadcast_inputs

SMOOTH = ("linear", "pchip", "spline", "cubic spline")  # methods with a slope at the ends


def _breakpoints(param, x, at_least=1, label=None):
    """A table's breakpoints: a strictly increasing vector of at least `at_least` values;
    `label` names them in messages (default: the parameter)."""
    label = label or param
    if x.ndim > 1:
        raise ParamError(param, f"expected a vector of breakpoints, got shape {x.shape}")
    x = x.reshape(-1)
    if x.size < at_least:
        raise ParamError(param, f"{label} is empty" if x.size == 0 else
                         f"expected at least {at_least} breakpoints in {label}, got {x.size}")
    bad = np.flatnonzero(np.diff(x) <= 0)
    if bad.size:
        k = int(bad[0])
        raise ParamError(param, f"breakpoints must be strictly increasing: {label}[{k}] = "
                                f"{x[k]:g}, {label}[{k + 1}] = {x[k + 1]:g}")
    return x


class Lookup(Block):
    """y = f(u), f the 1-D table through the points (x[i], y[i]), element-wise for any u.

    method:
      linear    straight lines between the points (numpy.interp)
      nearest   y of the nearest x (half way: the upper one, as MATLAB's interp1)
      previous  y[i] for x[i] <= u < x[i+1];  next: y[i+1] for x[i] < u <= x[i+1]
      pchip     shape-preserving piecewise cubic Hermite (scipy's PchipInterpolator)
      spline    cubic spline, not-a-knot ends (scipy's CubicSpline); also `cubic spline`
    extrapolation outside [x[0], x[-1]]:
      clip      the end values held
      linear    the tangent line at the end point (linear, pchip, spline only)
    Input: u, any shape. Output: y, u's shape. x (N,) strictly increasing, y (N,); pchip and
    spline need N >= 2. The cubics' coefficients are computed once, at load time.
    """

    type = "lookup"
    params = (
        Param("x", doc="breakpoints (N,), strictly increasing"),
        Param("y", doc="table values (N,), y[i] at x[i]"),
        Param("method", "choice", "linear", "interpolation",
              choices=("linear", "nearest", "previous", "next", "pchip", "spline",
                       "cubic spline")),
        Param("extrapolation", "choice", "clip", "outside the breakpoints",
              choices=("clip", "linear")),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        tables = self._tables(self.p)
        self._shapes = {name: a.shape for name, a in tables.items()}
        self._extrapolate = self.p.extrapolation == "linear"
        steps = {"nearest": self._nearest, "previous": self._previous, "next": self._next}
        self.output = steps.get(self.p.method, self._pieces)

    @staticmethod
    def _tables(p):
        """The arrays the method looks up (the run data), checked: nearest: the midpoints
        between the breakpoints and y; previous, next: x and y; the others: x, the pieces'
        coefficients c and the slopes at both ends."""
        cubic = p.method in ("pchip", "spline", "cubic spline")
        x = _breakpoints("x", p.x, 2 if cubic else 1)
        y = p.y.reshape(-1) if p.y.ndim <= 1 else p.y
        if y.shape != x.shape:
            raise ParamError("y", f"expected {x.size} values (one per breakpoint), got shape "
                                  f"{p.y.shape}")
        if p.extrapolation == "linear" and p.method not in SMOOTH:
            raise ParamError("extrapolation", f"linear extrapolation needs a method with a "
                                              f"slope (linear, pchip, spline), not {p.method}")
        if p.method == "nearest":
            return {"midpoints": 0.5 * (x[1:] + x[:-1]), "y": y}
        if p.method in ("previous", "next"):
            return {"x": x, "y": y}
        # Pieces y = c0 + c1 d + c2 d^2 + c3 d^3, d = u - x[i], on [x[i], x[i+1]], and a
        # constant last piece y[-1] from x[-1] on (the end value exact, not rounded).
        if cubic:
            from scipy.interpolate import CubicSpline, PchipInterpolator
            f = PchipInterpolator(x, y) if p.method == "pchip" else CubicSpline(x, y)
            inner = f.c[::-1]  # scipy stores the highest power first
            slopes = (float(f(x[0], 1)), float(f(x[-1], 1)))
        else:
            inner = np.vstack([y[:-1], np.diff(y) / np.diff(x)])
            slopes = (inner[1, 0], inner[1, -1]) if x.size > 1 else (0.0, 0.0)
        c = np.zeros((inner.shape[0], x.size))
        c[:, :-1] = inner
        c[0, -1] = y[-1]
        return {"x": x, "c": c, "slopes": np.array(slopes)}

    def declare(self, d):
        for name, shape in self._shapes.items():
            d.derived(name, shape)
        d.value("x", "y")

    def derive(self, p):
        return self._tables(p)

    def ports(self):
        return [In("u")], [Out("y")]

    def infer(self, shapes):
        self._shape = shapes["u"]
        return {"y": self._shape}

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._d = np.zeros(self._shape)

    def _pieces(self, t):
        v = self.v
        u, y, x, c = self.u[0], self.y[0], v.x, v.c
        d = self._d
        np.clip(u, x[0], x[-1], out=d)
        i = np.searchsorted(x, d, side="right") - 1
        d -= x[i]
        np.multiply(c[-1, i], d, out=y)
        for k in range(c.shape[0] - 2, -1, -1):  # Horner
            y += c[k, i]
            if k:
                y *= d
        if self._extrapolate:
            np.subtract(u, x[0], out=d)
            np.minimum(d, 0.0, out=d)
            d *= v.slopes[0]
            y += d
            np.subtract(u, x[-1], out=d)
            np.maximum(d, 0.0, out=d)
            d *= v.slopes[1]
            y += d

    def _nearest(self, t):
        v = self.v
        self.y[0][...] = v.y[np.searchsorted(v.midpoints, self.u[0], side="right")]

    def _previous(self, t):
        v = self.v
        i = np.searchsorted(v.x, self.u[0], side="right") - 1
        self.y[0][...] = v.y[np.maximum(i, 0)]

    def _next(self, t):
        v = self.v
        i = np.searchsorted(v.x, self.u[0], side="left")
        self.y[0][...] = v.y[np.minimum(i, v.x.size - 1)]

    # ---- compiled form
    def lower(self, c):
        n = c.n_out["y"]
        N = self._shapes["y" if "y" in self._shapes else "x"][0]
        if self.output == self._nearest:
            value = f"P_y[rt_search_right(P_midpoints, {N - 1}, in_u[i])]"
        elif self.output == self._previous:
            value = f"P_y[PYMAX(rt_search_right(P_x, {N}, in_u[i]) - 1, 0)]"
        elif self.output == self._next:
            value = f"P_y[PYMIN(rt_search_left(P_x, {N}, in_u[i]), {N - 1})]"
        if self.output != self._pieces:
            return Lowering({"output": c.loop(n, f"out_y[i] = {value};")})
        m = self._shapes["c"][0]
        coef = lambda k: f"P_c[{N * k} + j]"  # noqa: E731  c[k, j], j the piece
        horner = [f"double y = {coef(m - 1)} * d;"]
        for k in range(m - 2, -1, -1):
            horner.append(f"y += {coef(k)};" + (" y *= d;" if k else ""))
        if self._extrapolate:
            horner.append(f"y += rt_minimum(in_u[i] - P_x[0], 0.0) * P_slopes[0]; "
                          f"y += rt_maximum(in_u[i] - P_x[{N - 1}], 0.0) * P_slopes[1];")
        return Lowering({"output": c.loop(n, (
            f"double d = rt_clip(in_u[i], P_x[0], P_x[{N - 1}]); "
            f"int j = rt_search_right(P_x, {N}, d) - 1; d -= P_x[j]; "
            + " ".join(horner) + " out_y[i] = y;"))})


class Lookup2D(Block):
    """y = z(u1, u2) from the table z[i, j] at (x[i], y[j]), clipped at the table's edges.

    method:
      linear   bilinear: with s = (u1 - x[i])/(x[i+1] - x[i]) and r = (u2 - y[j])/(y[j+1] - y[j]),
               z = (1-s)(1-r) z[i,j] + s(1-r) z[i+1,j] + (1-s) r z[i,j+1] + s r z[i+1,j+1]
      nearest  z at the nearest breakpoint on each axis (half way: the upper one)
    Inputs: u1, u2, broadcast together (element-wise). Output: y, their common shape.
    x (nx,), y (ny,) strictly increasing, each with at least 2 breakpoints; z (nx, ny).
    """

    type = "lookup_2d"
    params = (
        Param("x", doc="breakpoints of u1 (nx,), strictly increasing"),
        Param("y", doc="breakpoints of u2 (ny,), strictly increasing"),
        Param("z", doc="table (nx, ny): z[i, j] at (x[i], y[j])"),
        Param("method", "choice", "linear", "interpolation", choices=("linear", "nearest")),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        x, y = self._tables(self.p)[:2]
        self._nx, self._ny = x.size, y.size
        if self.p.method == "nearest":
            self.output = self._nearest

    @staticmethod
    def _tables(p):
        """The breakpoints (checked), the table and the midpoints between breakpoints."""
        x, y = _breakpoints("x", p.x, 2), _breakpoints("y", p.y, 2)
        if p.z.shape != (x.size, y.size):
            raise ParamError("z", f"expected shape ({x.size}, {y.size}) (len x, "
                                  f"len y), got {p.z.shape}")
        return x, y, p.z, 0.5 * (x[1:] + x[:-1]), 0.5 * (y[1:] + y[:-1])

    _NAMES = ("x", "y", "z", "xmid", "ymid")

    def declare(self, d):
        nx, ny = self._nx, self._ny
        for name, shape in zip(self._NAMES, [(nx,), (ny,), (nx, ny), (nx - 1,), (ny - 1,)]):
            d.derived(name, shape)
        d.value("x", "y", "z")

    def derive(self, p):
        return dict(zip(self._NAMES, self._tables(p)))

    def ports(self):
        return [In("u1"), In("u2")], [Out("y")]

    def infer(self, shapes):
        return {"y": _broadcast_inputs(("u1", "u2"), shapes)}

    @staticmethod
    def _cell(breaks, u):
        """Index i of the cell [b[i], b[i+1]] holding the clipped u, and the fraction in it."""
        u = np.clip(u, breaks[0], breaks[-1])
        i = np.clip(np.searchsorted(breaks, u, side="right") - 1, 0, breaks.size - 2)
        return i, (u - breaks[i]) / (breaks[i + 1] - breaks[i])

    def output(self, t):
        v = self.v
        z = v.z
        i, s = self._cell(v.x, self.u[0])
        j, r = self._cell(v.y, self.u[1])
        self.y[0][...] = ((1 - s) * ((1 - r) * z[i, j] + r * z[i, j + 1])
                          + s * ((1 - r) * z[i + 1, j] + r * z[i + 1, j + 1]))

    def _nearest(self, t):
        v = self.v
        i = np.searchsorted(v.xmid, self.u[0], side="right")
        j = np.searchsorted(v.ymid, self.u[1], side="right")
        self.y[0][...] = v.z[i, j]

    def lower(self, c):
        nx, ny = self._nx, self._ny
        u1, u2 = c.elem("u1"), c.elem("u2")
        if self.output == self._nearest:
            value = (f"P_z[rt_search_right(P_xmid, {nx - 1}, {u1}) * {ny} "
                     f"+ rt_search_right(P_ymid, {ny - 1}, {u2})]")
            return Lowering({"output": c.loop(c.n_out["y"], f"out_y[i] = {value};")})
        cell = ("double {v} = rt_clip({u}, {b}[0], {b}[{n} - 1]); "
                "int {k} = rt_search_right({b}, {n}, {v}) - 1; "
                "{k} = {k} < 0 ? 0 : {k} > {n} - 2 ? {n} - 2 : {k}; "
                "{f} = ({v} - {b}[{k}]) / ({b}[{k} + 1] - {b}[{k}]);")
        Z = lambda di, dj: f"P_z[(ix + {di}) * {ny} + iy + {dj}]"  # noqa: E731
        return Lowering({"output": c.loop(c.n_out["y"], (
            "double s, r; " + cell.format(v="a", u=u1, b="P_x", n=nx, k="ix", f="s") + " "
            + cell.format(v="b", u=u2, b="P_y", n=ny, k="iy", f="r")
            + f" out_y[i] = (1 - s) * ((1 - r) * {Z(0, 0)} + r * {Z(0, 1)}) "
              f"+ s * ((1 - r) * {Z(1, 0)} + r * {Z(1, 1)});"))})
