"""The n-D lookup table: y = T(u1, ..., un) from a table on a grid, inline or read from a file,
as MATLAB's interpn and Simulink's n-D Lookup Table."""
import math
from pathlib import Path

import numpy as np

from blocksim.accel.lowering import Lowering, fits_stack
from blocksim.block import Block, In, Out
from blocksim.engine import csvio
from blocksim.params import Param, ParamError

from .files import read_npz
from .lookup import _breakpoints
from .math import _broadcast_inputs

MAX_COEFFICIENTS = 10_000_000  # a cubic table's polynomial coefficients (4^n per cell)


class LookupND(Block):
    """y = T(u1, ..., un) interpolated in an n-D table on a grid of breakpoints, element-wise.

    breakpoints: one strictly increasing list per dimension, at least 2 values each (4 for
    cubic); n is their number and the table's shape is their lengths (N1, ..., Nn).
    table: the values, T[i1, ..., in] at (bp1[i1], ..., bpn[in]): inline (nested lists,
    expressions allowed) or a file name relative to the diagram: a CSV file of numbers holds
    the table with rows along the first dimension (N1 rows of N2*...*Nn values, the other
    dimensions row-major; lines starting with # are comments), an NPZ file one n-D array (or
    several, one of them named `table`).
    method:
      linear   multilinear: the weighted mean of the 2^n corners of the cell holding u
               (bilinear for n = 2: as lookup_2d)
      nearest  the value at the nearest breakpoint in each dimension (half way: the upper)
      cubic    the tensor-product cubic spline through the table with not-a-knot ends
               (scipy's RegularGridInterpolator method 'cubic', MATLAB's interpn 'spline')
    extrapolation, for u outside the breakpoints' box:
      clip     u is clipped into the box (the edge values held)
      linear   linear: the edge cells' multilinear form continued (as interpn's
               extrapolation); cubic: the tangent plane at the nearest point of the box,
               y(c) + sum_k dy/du_k(c) (u_k - c_k) with c the clipped u
    Inputs: u1..un, broadcast together. Output: y, their common shape. The table is read and
    checked (sizes, monotonic breakpoints, finite values) when the diagram is loaded; the
    cubic's polynomial coefficients (4^n per cell) are computed then too.
    """

    type = "lookup_nd"
    params = (
        Param("breakpoints", "vectors", doc="one strictly increasing list per dimension"),
        Param("table", "array_or_file", doc="values (N1, ..., Nn), or a .csv / .npz file"),
        Param("method", "choice", "linear", "interpolation",
              choices=("linear", "nearest", "cubic")),
        Param("extrapolation", "choice", "clip", "outside the breakpoints",
              choices=("clip", "linear")),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        if self.p.extrapolation == "linear" and self.p.method == "nearest":
            raise ParamError("extrapolation", "linear extrapolation needs a method with a "
                                              "slope (linear, cubic), not nearest")
        self._loaded = self._arrays(self.p)  # read and computed once: derive hands them on
        self._shapes = {name: a.shape for name, a in self._loaded.items()}
        self._n = len(self.p.breakpoints)
        self._shape = tuple(self._shapes[f"bp{k}"][0] for k in range(self._n))
        self.output = {"linear": self._linear, "nearest": self._nearest,
                       "cubic": self._cubic}[self.p.method]

    @staticmethod
    def _grid_table(p):
        """The breakpoints (checked) and the table (read and checked) of the values `p`."""
        least = 4 if p.method == "cubic" else 2
        grid = tuple(_breakpoints("breakpoints", g, least, f"breakpoints[{k}]")
                     for k, g in enumerate(p.breakpoints))
        return grid, _table(p.table, tuple(g.size for g in grid))

    @classmethod
    def _arrays(cls, p):
        """The run data: the breakpoints bp0, bp1, ... and the table (linear, nearest), its
        cells' polynomial coefficients coef (cubic), the midpoints between breakpoints mid0,
        mid1, ... (nearest)."""
        grid, table = cls._grid_table(p)
        out = {f"bp{k}": g for k, g in enumerate(grid)}
        if p.method == "cubic":
            n, cells = len(grid), math.prod(g.size - 1 for g in grid)
            if cells * 4 ** n > MAX_COEFFICIENTS:
                raise ParamError("breakpoints", f"a cubic table of shape {table.shape} needs "
                                                f"{cells * 4 ** n:,} coefficients (4^n "
                                                f"per cell), more than {MAX_COEFFICIENTS:,}")
            return {**out, "coef": _cubic_coefficients(grid, table)}
        out["table"] = table
        if p.method == "nearest":
            out.update({f"mid{k}": 0.5 * (g[1:] + g[:-1]) for k, g in enumerate(grid)})
        return out

    def declare(self, d):
        for name, shape in self._shapes.items():
            d.derived(name, shape)
        d.value("breakpoints", "table")

    def derive(self, p):
        loaded, self._loaded = self._loaded, None
        return loaded if loaded is not None and p is self.p else self._arrays(p)

    def ports(self):
        return [In(f"u{k + 1}") for k in range(len(self.p.breakpoints))], [Out("y")]

    def describe(self):
        """Lines for `blocksim check`: the table's shape and source, its range, the method,
        and each input's breakpoints."""
        p = self.p
        grid, table = self._grid_table(p)
        source = p.table.name if isinstance(p.table, Path) else "inline"
        lines = [f"table {' x '.join(map(str, table.shape))} ({source}), values "
                 f"{table.min():g} .. {table.max():g}; {p.method}, "
                 f"{p.extrapolation} outside the breakpoints"]
        return lines + [f"u{k + 1}: {g.size} breakpoints, {g[0]:g} .. {g[-1]:g}"
                        for k, g in enumerate(grid)]

    def infer(self, shapes):
        self._out = _broadcast_inputs(tuple(shapes), shapes)
        return {"y": self._out}

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        shape = self._out
        self._u = tuple(np.broadcast_to(v, shape) for v in u)  # views: they follow the inputs
        self._c = tuple(np.zeros(shape) for _ in u)  # u clipped into the box
        self._f = tuple(np.zeros(shape) for _ in u)  # the fraction (linear) or offset (cubic)
        self._w = np.zeros(shape)
        # views of the run data (self.v: bound before the block is, valid for the model)
        v = vars(self.v)
        self._grid = tuple(v[f"bp{k}"] for k in range(self._n))
        self._mid = tuple(v.get(f"mid{k}") for k in range(self._n))
        self._table, self._coef = v.get("table"), v.get("coef")
        # once, not per evaluation: the mode, the cells' grid, the corners in C's order
        self._clip = self.p.extrapolation == "clip"
        self._cell_grid = tuple(n - 1 for n in self._shape)
        self._corners = tuple(np.ndindex(*(2,) * self._n))

    # ---- interpreted --------------------------------------------------------------------
    def _cells(self, clip_u):
        """Per dimension: the cell index i (into 0..N-2) of each element and, in self._f,
        the offset u - bp[i] (u clipped into the box when `clip_u`, else as it is)."""
        cells = []
        for g, u, c, f in zip(self._grid, self._u, self._c, self._f):
            np.clip(u, g[0], g[-1], out=c)
            i = np.clip(np.searchsorted(g, c, side="right") - 1, 0, g.size - 2)
            np.subtract(c if clip_u else u, g[i], out=f)
            cells.append(i)
        return cells

    def _linear(self, t):
        cells = self._cells(self._clip)
        for g, i, f in zip(self._grid, cells, self._f):
            f /= g[i + 1] - g[i]  # the fraction s of the cell
        y, w, T = self.y[0], self._w, self._table
        y[...] = 0.0
        for corner in self._corners:  # sum over corners, in C's order
            w[...] = 1.0
            for bit, f in zip(corner, self._f):
                w *= f if bit else 1.0 - f
            y += w * T[tuple(i + bit for i, bit in zip(cells, corner))]

    def _nearest(self, t):
        index = tuple(np.searchsorted(m, u, side="right") for m, u in zip(self._mid, self._u))
        self.y[0][...] = self._table[index]

    def _cubic(self, t):
        cells = self._cells(True)
        cell = np.ravel_multi_index(cells, self._cell_grid)
        coef = self._coef[cell]  # (*shape, 4^n)
        y = self.y[0]
        y[...] = _horner(coef, self._f, None)
        if not self._clip:
            for k, (u, c) in enumerate(zip(self._u, self._c)):
                np.subtract(u, c, out=self._w)
                self._w *= _horner(coef, self._f, k)
                y += self._w

    # ---- compiled form: the run data P_bp0, ..., P_table or P_coef, P_mid0, ...
    def lower(self, c):
        n, N = self._n, self._shape
        u = [c.elem(f"u{k + 1}") for k in range(n)]
        if self.p.method == "nearest":
            index = " + ".join(
                f"rt_search_right(P_mid{k}, {N[k] - 1}, {u[k]}) * {_stride(N, k)}"
                for k in range(n))
            return Lowering({"output": c.loop(c.n_out["y"], f"out_y[i] = P_table[{index}];")})
        clip = self.p.extrapolation == "clip"
        cubic = self.p.method == "cubic"
        lines = [f"double c[{n}], f[{n}]; int cell[{n}];"]
        for k in range(n):  # _cells: the clipped u, the cell index, the offset in it
            b = f"P_bp{k}"
            lines.append(
                f"c[{k}] = rt_clip({u[k]}, {b}[0], {b}[{N[k] - 1}]); "
                f"cell[{k}] = rt_search_right({b}, {N[k]}, c[{k}]) - 1; "
                f"cell[{k}] = cell[{k}] < 0 ? 0 : cell[{k}] > {N[k] - 2} ? {N[k] - 2} : cell[{k}]; "
                f"f[{k}] = {f'c[{k}]' if clip or cubic else u[k]} - {b}[cell[{k}]];"
                + ("" if cubic else f" f[{k}] /= {b}[cell[{k}] + 1] - {b}[cell[{k}]];"))
        if cubic:
            lines += self._lower_cubic(c, u)
        else:
            lines.append("double acc = 0.0;")
            for corner in np.ndindex(*(2,) * n):
                w = " ".join(f"w *= {'f' if bit else '1.0 - f'}[{k}];" if k else
                             f"double w = 1.0; w *= {'f' if bit else '1.0 - f'}[0];"
                             for k, bit in enumerate(corner))
                at = " + ".join(f"(cell[{k}] + {bit}) * {_stride(N, k)}"
                                for k, bit in enumerate(corner))
                lines.append(f"{{ {w} acc += w * P_table[{at}]; }}")
            lines.append("out_y[i] = acc;")
        return Lowering({"output": c.loop(c.n_out["y"], " ".join(lines))})

    def _lower_cubic(self, c, u):
        n, N = self._n, self._shape
        size = 4 ** n
        fits_stack(size, "a cubic table's coefficients")
        cells = tuple(m - 1 for m in N)
        at = " + ".join(f"cell[{k}] * {_stride(cells, k)}" for k in range(n))
        lines = [f"const double *coef = P_coef + ({at}) * {size};", f"double v[{size}];",
                 *_c_horner(n, None), "double y = v[0];"]
        if self.p.extrapolation == "linear":
            for k in range(n):
                lines += [*_c_horner(n, k), f"{{ double w = {u[k]} - c[{k}]; w *= v[0]; "
                                            "y += w; }"]
        return lines + ["out_y[i] = y;"]


def _stride(shape, k):
    """The flat (row-major) stride of dimension k of an array of `shape`."""
    return math.prod(shape[k + 1:])


def _table(value, shape):
    """The table as an array of `shape`: the inline value, or read from its CSV / NPZ file."""
    if isinstance(value, Path):
        value = _read_table(value, shape)
    table = np.asarray(value, dtype=float)
    if table.shape != shape:
        if table.size == math.prod(shape) and table.ndim <= 1 and len(shape) > 1:
            hint = " (written flat: nest the lists, one level per dimension)"
        else:
            hint = ""
        raise ParamError("table", f"the table has shape {table.shape}, the breakpoints give "
                                  f"{shape} (one value per combination of breakpoints){hint}")
    if not np.isfinite(table).all():
        where = np.argwhere(~np.isfinite(table))[0]
        raise ParamError("table", f"table{list(map(int, where))} is not a finite number")
    return table


def _read_table(path, shape):
    if not path.is_file():
        raise ParamError("table", f"no such file: {path}")
    suffix = path.suffix.lower()
    if suffix == ".npz":
        arrays = read_npz(path, "table")
        if len(arrays) != 1 and "table" not in arrays:
            raise ParamError("table", f"{path.name} holds {len(arrays)} arrays "
                                      f"({', '.join(arrays) or 'none'}): name the table's "
                                      "array 'table'")
        return arrays["table"] if "table" in arrays else next(iter(arrays.values()))
    try:
        values, lines = csvio.read_numbers(path)
    except ValueError as e:
        raise ParamError("table", f"{path.name}: {e}") from None
    except UnicodeDecodeError:
        raise ParamError("table", f"{path.name}: not a text (CSV) file") from None
    rest = math.prod(shape[1:])
    if values.shape != (shape[0], rest):
        raise ParamError("table", f"{path.name} holds {values.shape[0]} row(s) of "
                                  f"{values.shape[1]} value(s); the breakpoints give "
                                  f"{shape[0]} row(s) (the first dimension) of {rest} "
                                  f"(the others, row-major)")
    bad = np.argwhere(~np.isfinite(values))
    if bad.size:
        raise ParamError("table", f"{path.name} line {lines[bad[0][0]]}: a value is not a "
                                  "finite number")
    return values.reshape(shape)


def _cubic_coefficients(grid, table):
    """The tensor-product not-a-knot cubic spline through `table` as polynomials, one per
    cell: (cells, 4^n), row-major over the cells; entry (a_1 .. a_n) (base-4 digits) is the
    coefficient of prod_k (u_k - bp_k[i_k])^a_k. Along each axis the 1-D spline is linear in
    the data (scipy's CubicSpline of the identity gives its matrix), so the tensor product
    applies them axis by axis."""
    from scipy.interpolate import CubicSpline
    n = len(grid)
    coef = table
    for k, g in enumerate(grid):
        m = CubicSpline(g, np.eye(g.size)).c[::-1].transpose(1, 0, 2)  # (cells, power, data)
        coef = np.tensordot(m, coef, axes=([2], [2 * k]))  # (cell_k, power_k, ...the rest)
        coef = np.moveaxis(coef, (0, 1), (2 * k, 2 * k + 1))
    order = [2 * k for k in range(n)] + [2 * k + 1 for k in range(n)]
    cells = math.prod(g.size - 1 for g in grid)
    return np.ascontiguousarray(coef.transpose(order).reshape(cells, 4 ** n))


def _horner(coef, offsets, derivative):
    """The cells' polynomials (..., 4^n) at the offsets (one array per dimension), reduced
    dimension by dimension from the last; in dimension `derivative` (or none) the
    derivative's polynomial 3 c3 d^2 + 2 c2 d + c1. As the C of _c_horner, operation for
    operation."""
    v = coef
    for k in range(len(offsets) - 1, -1, -1):
        v = v.reshape(v.shape[:-1] + (-1, 4))
        d = offsets[k][..., None]
        if k == derivative:
            v = (3.0 * v[..., 3] * d + 2.0 * v[..., 2]) * d + v[..., 1]
        else:
            v = ((v[..., 3] * d + v[..., 2]) * d + v[..., 1]) * d + v[..., 0]
    return v[..., 0]


def _c_horner(n, derivative):
    """C statements for _horner of one element: the cell's coefficients `coef` copied into
    v (4^n), reduced in place from the last dimension (offsets f[k]) into v[0]."""
    lines = ["memcpy(v, coef, sizeof v);"]
    for k in range(n - 1, -1, -1):
        step = ("(3.0 * v[4 * p + 3] * f[{k}] + 2.0 * v[4 * p + 2]) * f[{k}] + v[4 * p + 1]"
                if k == derivative else
                "((v[4 * p + 3] * f[{k}] + v[4 * p + 2]) * f[{k}] + v[4 * p + 1]) * f[{k}]"
                " + v[4 * p]").format(k=k)
        lines.append(f"for (int p = 0; p < {4 ** k}; p++) v[p] = {step};")
    return lines
