"""Signal routing: concatenate, split, select and reshape signals (copies, no arithmetic).

Flattening is row-major (C order) throughout, as numpy's, unless a block says otherwise.
"""
import numpy as np

from blocksim.accel.lowering import Lowering
from blocksim.block import Block, In, Out, PortError
from blocksim.params import Param, ParamError

from .linearisation import routing


def _int_vector(param, value, *, scalar_ok=False):
    """A parameter that must hold integers: returned as an int array (a scalar stays 0-d only
    when scalar_ok, otherwise it becomes a 1-vector)."""
    ints = value.astype(int)
    if not np.array_equal(ints, value):
        raise ParamError(param, f"expected integers, got {value.tolist()}")
    if ints.ndim > 1 or (ints.ndim == 0 and not scalar_ok):
        ints = ints.reshape(-1)
    if ints.size == 0:
        raise ParamError(param, "expected at least one value")
    return ints


class Mux(Block):
    """y = [u1.ravel(), ..., uN.ravel()]: the inputs flattened (row-major) and concatenated.

    Inputs: u1..uN (N = inputs), any shapes. Output: y, a vector of length sum(ui.size).
    """

    type = "mux"
    params = (Param("inputs", "int", 2, "number of inputs", minimum=1),)

    def ports(self):
        return [In(f"u{i + 1}") for i in range(self.p.inputs)], [Out("y")]

    def infer(self, shapes):
        self._shapes = [shapes[f"u{i + 1}"] for i in range(self.p.inputs)]
        return {"y": (sum(int(np.prod(s, dtype=int)) for s in self._shapes),)}

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        parts, start = [], 0
        for ui, shape in zip(u, self._shapes):
            size = int(np.prod(shape, dtype=int))
            parts.append((y[0][start:start + size].reshape(shape, copy=False), ui))
            start += size
        self._parts = tuple(parts)

    def output(self, t):
        for part, ui in self._parts:
            np.copyto(part, ui)

    def lower(self, c):
        code, start = [], 0
        for i, shape in enumerate(self._shapes):
            size = int(np.prod(shape, dtype=int))
            code.append(c.loop(size, f"out_y[{start} + i] = in_u{i + 1}[i];"))
            start += size
        return Lowering({"output": "\n".join(code)})

    def jacobian(self, pade=None):
        return routing(self, np.arange(self.y[0].size))


class Demux(Block):
    """y_i = u[s_i : s_i + sizes[i]], s_i = sizes[0] + ... + sizes[i-1]: consecutive pieces.

    Input: u, a vector (a matrix is flattened row-major) of size sum(sizes).
    Outputs: y1..yN, y_i a vector of length sizes[i] (positive integers).
    """

    type = "demux"
    params = (Param("sizes", "value", doc="lengths of the pieces, e.g. [3, 3]"),)

    def __init__(self, name, params):
        super().__init__(name, params)
        self._sizes = _int_vector("sizes", self.p.sizes)
        if np.any(self._sizes <= 0):
            raise ParamError("sizes", f"sizes must be positive, got {self._sizes.tolist()}")

    def ports(self):
        return [In("u")], [Out(f"y{i + 1}", shape=(int(n),)) for i, n in enumerate(self._sizes)]

    def infer(self, shapes):
        size = int(np.prod(shapes["u"], dtype=int))
        total = int(self._sizes.sum())
        if size != total:
            raise PortError("u", f"sizes add up to {total} but the input has {size} elements "
                                 f"(shape {shapes['u']})")
        return {}

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        flat = u[0].reshape(-1, copy=False)
        ends = np.cumsum(self._sizes)
        self._parts = tuple((yi, flat[end - n:end]) for yi, n, end in zip(y, self._sizes, ends))

    def output(self, t):
        for yi, piece in self._parts:
            np.copyto(yi, piece)

    def lower(self, c):
        code, start = [], 0
        for i, n in enumerate(self._sizes):
            code.append(c.loop(int(n), f"out_y{i + 1}[i] = in_u[{start} + i];"))
            start += int(n)
        return Lowering({"output": "\n".join(code)})

    def jacobian(self, pade=None):
        return routing(self, np.arange(self.u[0].size))


class Selector(Block):
    """y = u[indices]: elements of a vector (rows of a matrix), 0-based.

    Input: u, a vector (or matrix) of length n. Output: y, a scalar (a row) for a scalar index,
    a vector (matrix) for a list, in the listed order. -n <= index < n; negative indices count
    from the end.
    """

    type = "selector"
    params = (Param("indices", "value", doc="0-based index or list of indices"),)

    def __init__(self, name, params):
        super().__init__(name, params)
        self._indices = _int_vector("indices", self.p.indices, scalar_ok=True)

    def ports(self):
        return [In("u")], [Out("y")]

    def infer(self, shapes):
        u = shapes["u"]
        if len(u) == 0:
            raise PortError("u", "cannot select from a scalar")
        n = u[0]
        bad = self._indices[(self._indices < -n) | (self._indices >= n)]
        if bad.size:
            raise PortError("u", f"index {int(bad.flat[0])} is out of range for an input of "
                                 f"length {n}")
        self._take = self._indices % n  # non-negative, so np.take needs no bounds check
        return {"y": self._indices.shape + u[1:]}

    def declare(self, d):  # the rows taken (0 <= take[k] < n; the indices are structure)
        d.derived("take", self._take.shape)

    def derive(self, p):
        return {"take": self._take}

    def output(self, t):
        np.take(self.u[0], self._take, axis=0, out=self.y[0], mode="clip")

    def lower(self, c):
        row = int(np.prod(c.shape_in["u"][1:], dtype=int))
        take = c.loop(row, f"out_y[k * {row} + i] = in_u[(int)P_take[k] * {row} + i];")
        return Lowering({"output": c.loop(self._take.size, take, var="k")})

    def jacobian(self, pade=None):
        u = self.u[0]
        return routing(self, np.arange(u.size).reshape(u.shape)[self._take])


class Reshape(Block):
    """y = numpy.reshape(u, shape, order): the same elements in a new shape.

    Input: u, any shape. Output: y of the given shape (positive integers, one entry may be -1;
    [] for a scalar). order C reads and writes row-major, F column-major (MATLAB's reshape).
    """

    type = "reshape"
    params = (
        Param("shape", "value", doc="output shape, e.g. [3, 2]"),
        Param("order", "choice", "C", "element order", choices=("C", "F")),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        shape = self.p.shape
        if shape.ndim > 1:
            raise ParamError("shape", f"expected a list of dimensions, got shape {shape.shape}")
        dims = shape.reshape(-1).astype(int)
        if not np.array_equal(dims, shape.reshape(-1)):
            raise ParamError("shape", f"expected integers, got {shape.tolist()}")
        if np.any((dims <= 0) & (dims != -1)) or np.sum(dims == -1) > 1:
            raise ParamError("shape", f"dimensions must be positive (at most one -1), "
                                      f"got {dims.tolist()}")
        self._dims = tuple(int(d) for d in dims)

    def ports(self):
        return [In("u")], [Out("y")]

    def infer(self, shapes):
        u = shapes["u"]
        size = int(np.prod(u, dtype=int))
        try:
            index = np.arange(size).reshape(u)
            # y.flat[j] = u.flat[perm.flat[j]]: the reshape applied to u's flat indices.
            self._perm = np.reshape(index, self._dims, order=self.p.order)
        except ValueError:
            raise PortError("u", f"cannot reshape an input of shape {u} ({size} elements) "
                                 f"into {list(self._dims)}") from None
        return {"y": self._perm.shape}

    def output(self, t):
        np.take(self.u[0], self._perm, out=self.y[0], mode="clip")

    def lower(self, c):
        perm = self._perm.ravel()
        if np.array_equal(perm, np.arange(perm.size)):
            return Lowering({"output": c.loop(perm.size, "out_y[i] = in_u[i];")})
        table = c.table("perm", perm)  # the order is structure: code, not P
        return Lowering({"output": c.loop(perm.size, f"out_y[i] = in_u[{table}[i]];")})

    def jacobian(self, pade=None):
        return routing(self, self._perm)
