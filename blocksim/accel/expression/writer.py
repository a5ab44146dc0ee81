"""The C an expression's compiled form is written in: statements, its numbers (the constants,
its block's run data `P_constants`) and its scratch (the temporaries, `T`: Lowering.scratch).

`Code` hands out values (`values.Val`): constants laid out in `P_constants` as numpy holds them,
temporaries in `T` laid out as numpy lays out the result they hold, and writes the loops
that fill them: element-wise C over broadcast operands, numpy's own loops (`rt_ufunc1`,
`rt_ufunc2`) called over the axis numpy runs innermost with the strides numpy passes,
copies, and numpy's pairwise sum.
"""
from __future__ import annotations

import numpy as np

from .. import ufuncs
from ..lowering import LoweringError
from .values import Val, c_strides, dense_strides, inner_axis, k_order, strides_of


class Code:
    """The statements of one expression, its numbers and its scratch."""

    def __init__(self, constants="P_constants"):
        self.constants = constants  # the C name of the array of its numbers
        self.lines = []
        self.params = []  # arrays, in the order of P_constants
        self.nparams = 0
        self.nwork = 0  # the temporaries' size
        self.names = 0

    def emit(self, *lines):
        self.lines.extend(lines)

    def name(self, prefix):
        """A fresh C variable name."""
        self.names += 1
        return f"{prefix}{self.names}"

    # -- values ---------------------------------------------------------------------------------
    def constant(self, value):
        """A constant as numpy holds it: its memory in P_constants (a view of another array, such as
        a slice of a parameter, with that array's memory and the view's strides)."""
        scalar = not isinstance(value, np.ndarray)
        a = np.asarray(value, dtype=np.float64)
        base = a
        while isinstance(base.base, np.ndarray):
            base = base.base
        if a.ndim == 0 or a.flags.c_contiguous or a.flags.f_contiguous:
            base = a
        if not (base.flags.c_contiguous or base.flags.f_contiguous) or base.dtype != a.dtype:
            base = a = np.ascontiguousarray(a)
        memory = base.ravel(order="K")
        if not np.shares_memory(memory, base) and base.size > 1:
            raise LoweringError("cannot lay out a constant of the expression as numpy does")
        shift = (a.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // 8
        start = self.nparams
        self.params.append(memory.copy())
        self.nparams += memory.size
        return Val(f"{self.constants} + {start + shift}", tuple(a.shape), strides_of(a), scalar)

    def temp(self, shape, strides=None, scalar=False):
        """A temporary in T of `shape` (row-major unless `strides` are given: numpy's layout
        of the result it holds)."""
        start = self.nwork
        self.nwork += max(int(np.prod(shape, dtype=int)), 1)
        return Val(f"T + {start}", tuple(shape), tuple(strides or c_strides(shape)), scalar)

    def like(self, value):
        """A temporary laid out as numpy laid out `value` (a traced result)."""
        return self.temp(np.shape(value), dense_strides(value),
                         not isinstance(value, np.ndarray))

    # -- loops ----------------------------------------------------------------------------------
    def loops(self, shape, body, axes=None):
        """`body(index)` (index: one C variable per axis of `shape`) inside loops over the
        axes `axes` (default: all, outermost first); variables of other axes are 0."""
        axes = range(len(shape)) if axes is None else axes
        index = ["0"] * len(shape)
        opened = []
        for d in axes:
            if shape[d] == 1:
                continue
            v = self.name("i")
            index[d] = v
            opened.append(f"for (long {v} = 0; {v} < {shape[d]}; {v}++) {{")
        self.emit(" ".join(opened + [body(index)] + ["}"] * len(opened)))

    def elementwise(self, out, operands, expression):
        """out = expression(elements of operands) element by element, operands broadcast."""
        self.loops(out.shape, lambda i: f"{out.at(i, out.shape)} = "
                                        f"{expression(*[v.at(i, out.shape) for v in operands])};")

    def need_ufunc(self, *names):
        """LoweringError (the block runs in normal mode) unless numpy's loops of the ufuncs
        `names` were found: the C calls them through a table whose missing slot is NULL."""
        for name in names:
            if ufuncs.loop(name) is None:
                raise LoweringError(f"needs numpy's {name} loop, which was not found")

    def ufunc(self, name, out, operands):
        """out = numpy's loop of ufunc `name` on the operands, called over the axis numpy runs
        innermost with the strides numpy passes (0 for a repeated element)."""
        self.need_ufunc(name)
        which = f"RT_UF_{name.upper()}"
        shape = out.shape
        axis = inner_axis(shape, out.strides)
        n = shape[axis] if shape else 1
        outer = [d for d in range(len(shape)) if d != axis]

        def call(index):
            parts = [f"({v.ptr}) + {v.offset(index, shape, skip=axis)}, "
                     f"{v.stride(axis, shape) if shape else 0}" for v in operands + [out]]
            fn = "rt_ufunc1" if len(operands) == 1 else "rt_ufunc2"
            return f"{fn}({which}, {', '.join(parts)}, {n});"
        self.loops(shape, call, outer)

    def copy(self, out, src):
        """out = src element by element (src broadcast to out's shape)."""
        self.elementwise(out, [src], lambda x: x)

    def contiguous(self, val):
        """`val` itself when it is row-major contiguous, else a row-major copy of it."""
        if val.strides == c_strides(val.shape) or val.size <= 1:
            return val
        out = self.temp(val.shape)
        self.copy(out, val)
        return out

    def flat_k(self, val):
        """(pointer, n, stride) of `val`'s elements in the order numpy's reductions visit
        them (axes by decreasing stride, each in its own direction); a copy in that order
        when they are not equally spaced in memory."""
        if val.ndim == 0:
            return val.ptr, 1, 1
        order = k_order(val.shape, val.strides)
        axes = [d for d in order if val.shape[d] > 1]
        if len(axes) <= 1:
            d = axes[0] if axes else 0
            return val.ptr, val.size, val.strides[d] or 1
        step = val.strides[axes[-1]]
        if all(val.strides[a] == val.strides[b] * val.shape[b] for a, b in zip(axes, axes[1:])):
            return val.ptr, val.size, step
        out = self.temp((val.size,))
        k = self.name("k")
        self.emit(f"long {k} = 0;")
        self.loops(val.shape, lambda i: f"({out.ptr})[{k}++] = {val.at(i, val.shape)};", order)
        return out.ptr, val.size, 1

    @staticmethod
    def fail(message, *values):
        """C that ends the run with the block's error `message` (a printf format of the C
        `values`): numpy's or the evaluator's message, as normal mode reports it."""
        args = "".join(f", {v}" for v in values)
        return f'FAIL("{message}"{args}); return;'
