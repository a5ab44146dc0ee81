"""Lookup tables: y(u) from a 1-D table and z(u1, u2) from a 2-D table, element-wise."""
import numpy as np

from blocksim.accel.lowering import Lowering, flat
from blocksim.block import Block, In, Out
from blocksim.params import Param, ParamError

from .math import _broadcast_inputs

SMOOTH = ("linear", "pchip", "spline", "cubic spline")  # methods with a slope at the ends


def _breakpoints(param, x, at_least=1):
    """A table's breakpoints: a strictly increasing vector of at least `at_least` values."""
    if x.ndim > 1:
        raise ParamError(param, f"expected a vector of breakpoints, got shape {x.shape}")
    x = x.reshape(-1)
    if x.size < at_least:
        raise ParamError(param, "the table is empty" if x.size == 0 else
                         f"expected at least {at_least} breakpoints, got {x.size}")
    bad = np.flatnonzero(np.diff(x) <= 0)
    if bad.size:
        k = int(bad[0])
        raise ParamError(param, f"breakpoints must be strictly increasing: {param}[{k}] = "
                                f"{x[k]:g}, {param}[{k + 1}] = {x[k + 1]:g}")
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
        p = self.p
        cubic = p.method in ("pchip", "spline", "cubic spline")
        x = _breakpoints("x", p.x, 2 if cubic else 1)
        y = p.y.reshape(-1) if p.y.ndim <= 1 else p.y
        if y.shape != x.shape:
            raise ParamError("y", f"expected {x.size} values (one per breakpoint), got shape "
                                  f"{p.y.shape}")
        if p.extrapolation == "linear" and p.method not in SMOOTH:
            raise ParamError("extrapolation", f"linear extrapolation needs a method with a "
                                              f"slope (linear, pchip, spline), not {p.method}")
        self._x, self._y = x, y
        self._extrapolate = p.extrapolation == "linear"
        self._midpoints = 0.5 * (x[1:] + x[:-1])
        steps = {"nearest": self._nearest, "previous": self._previous, "next": self._next}
        if p.method in steps:
            self.output = steps[p.method]
            return
        # Pieces y = c0 + c1 d + c2 d^2 + c3 d^3, d = u - x[i], on [x[i], x[i+1]], and a
        # constant last piece y[-1] from x[-1] on (the end value exact, not rounded).
        if cubic:
            from scipy.interpolate import CubicSpline, PchipInterpolator
            f = PchipInterpolator(x, y) if p.method == "pchip" else CubicSpline(x, y)
            inner = f.c[::-1]  # scipy stores the highest power first
            self._slopes = (float(f(x[0], 1)), float(f(x[-1], 1)))
        else:
            inner = np.vstack([y[:-1], np.diff(y) / np.diff(x)])
            self._slopes = (inner[1, 0], inner[1, -1]) if x.size > 1 else (0.0, 0.0)
        self._c = np.zeros((inner.shape[0], x.size))
        self._c[:, :-1] = inner
        self._c[0, -1] = y[-1]
        self.output = self._pieces

    def ports(self):
        return [In("u")], [Out("y")]

    def infer(self, shapes):
        self._shape = shapes["u"]
        return {"y": self._shape}

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._d = np.zeros(self._shape)

    def _pieces(self, t):
        u, y, x, c = self.u[0], self.y[0], self._x, self._c
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
            d *= self._slopes[0]
            y += d
            np.subtract(u, x[-1], out=d)
            np.maximum(d, 0.0, out=d)
            d *= self._slopes[1]
            y += d

    def _nearest(self, t):
        self.y[0][...] = self._y[np.searchsorted(self._midpoints, self.u[0], side="right")]

    def _previous(self, t):
        i = np.searchsorted(self._x, self.u[0], side="right") - 1
        self.y[0][...] = self._y[np.maximum(i, 0)]

    def _next(self, t):
        i = np.searchsorted(self._x, self.u[0], side="left")
        self.y[0][...] = self._y[np.minimum(i, self._x.size - 1)]

    # ---- compiled form. pieces: P = [x (N), c (m rows of N), slope at x[0], at x[-1]];
    # nearest: P = [midpoints (N - 1), y (N)]; previous, next: P = [x (N), y (N)]
    def lower(self, c):
        n, N = c.n_out["y"], self._x.size
        if self.output == self._nearest:
            value = f"P[{N - 1} + rt_search_right(P, {N - 1}, in_u[i])]"
        elif self.output == self._previous:
            value = f"P[{N} + PYMAX(rt_search_right(P, {N}, in_u[i]) - 1, 0)]"
        elif self.output == self._next:
            value = f"P[{N} + PYMIN(rt_search_left(P, {N}, in_u[i]), {N - 1})]"
        if self.output != self._pieces:
            return Lowering({"output": c.loop(n, f"out_y[i] = {value};")})
        m = self._c.shape[0]
        coef = lambda k: f"P[{N * (1 + k)} + j]"  # noqa: E731  c[k, j], j the piece
        horner = [f"double y = {coef(m - 1)} * d;"]
        for k in range(m - 2, -1, -1):
            horner.append(f"y += {coef(k)};" + (" y *= d;" if k else ""))
        ends = N * (1 + m)
        if self._extrapolate:
            horner.append(f"y += rt_minimum(in_u[i] - P[0], 0.0) * P[{ends}]; "
                          f"y += rt_maximum(in_u[i] - P[{N - 1}], 0.0) * P[{ends + 1}];")
        return Lowering({"output": c.loop(n, (
            f"double d = rt_clip(in_u[i], P[0], P[{N - 1}]); "
            f"int j = rt_search_right(P, {N}, d) - 1; d -= P[j]; "
            + " ".join(horner) + " out_y[i] = y;"))})

    def pack(self):
        if self.output == self._nearest:
            return flat(self._midpoints, self._y)
        if self.output != self._pieces:
            return flat(self._x, self._y)
        return flat(self._x, self._c, self._slopes)


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
        p = self.p
        self._x = _breakpoints("x", p.x, 2)
        self._y = _breakpoints("y", p.y, 2)
        if p.z.shape != (self._x.size, self._y.size):
            raise ParamError("z", f"expected shape ({self._x.size}, {self._y.size}) (len x, "
                                  f"len y), got {p.z.shape}")
        self._xmid = 0.5 * (self._x[1:] + self._x[:-1])
        self._ymid = 0.5 * (self._y[1:] + self._y[:-1])
        if p.method == "nearest":
            self.output = self._nearest

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
        z = self.p.z
        i, s = self._cell(self._x, self.u[0])
        j, r = self._cell(self._y, self.u[1])
        self.y[0][...] = ((1 - s) * ((1 - r) * z[i, j] + r * z[i, j + 1])
                          + s * ((1 - r) * z[i + 1, j] + r * z[i + 1, j + 1]))

    def _nearest(self, t):
        i = np.searchsorted(self._xmid, self.u[0], side="right")
        j = np.searchsorted(self._ymid, self.u[1], side="right")
        self.y[0][...] = self.p.z[i, j]

    # compiled form: P = [x (nx), y (ny), z (nx rows of ny), x midpoints, y midpoints]
    def lower(self, c):
        nx, ny = self._x.size, self._y.size
        z, xmid, ymid = nx + ny, nx + ny + nx * ny, nx + ny + nx * ny + nx - 1
        u1, u2 = c.elem("u1"), c.elem("u2")
        if self.output == self._nearest:
            value = (f"P[{z} + rt_search_right(P + {xmid}, {nx - 1}, {u1}) * {ny} "
                     f"+ rt_search_right(P + {ymid}, {ny - 1}, {u2})]")
            return Lowering({"output": c.loop(c.n_out["y"], f"out_y[i] = {value};")})
        cell = ("double {v} = rt_clip({u}, P[{b}], P[{b} + {n} - 1]); "
                "int {k} = rt_search_right(P + {b}, {n}, {v}) - 1; "
                "{k} = {k} < 0 ? 0 : {k} > {n} - 2 ? {n} - 2 : {k}; "
                "{f} = ({v} - P[{b} + {k}]) / (P[{b} + {k} + 1] - P[{b} + {k}]);")
        Z = lambda di, dj: f"P[{z} + (ix + {di}) * {ny} + iy + {dj}]"  # noqa: E731
        return Lowering({"output": c.loop(c.n_out["y"], (
            "double s, r; " + cell.format(v="a", u=u1, b=0, n=nx, k="ix", f="s") + " "
            + cell.format(v="b", u=u2, b=nx, n=ny, k="iy", f="r")
            + f" out_y[i] = (1 - s) * ((1 - r) * {Z(0, 0)} + r * {Z(0, 1)}) "
              f"+ s * ((1 - r) * {Z(1, 0)} + r * {Z(1, 1)});"))})

    def pack(self):
        return flat(self._x, self._y, self.p.z, self._xmid, self._ymid)
