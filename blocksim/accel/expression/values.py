"""The values an expression's compiled form works on: arrays laid out as numpy lays them out.

A `Val` is the address of a value's first element (a C expression into an input, the block's
numbers `P` or its workspace `W`), its shape, its strides in elements and whether numpy holds
it as a scalar (np.float64) rather than an array. Strides are numpy's own, so a transpose or
a slice is a view as in numpy, an element-wise result has numpy's memory order (numpy's
'K' order: a function of a transposed matrix is Fortran-ordered), and a matrix product or a
sum sees the memory order numpy's sees: BLAS kernels and numpy's pairwise sums give
results that depend on it. Scalar or array decides one of numpy's paths: a power of two
scalars is the C library's pow, of arrays numpy's own loop.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Val:
    ptr: str  # C expression: the address of element (0, ..., 0)
    shape: tuple
    strides: tuple  # in elements; 0 where numpy repeats an element
    scalar: bool = False  # numpy holds it as np.float64, not as an ndarray

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    def offset(self, index, shape, skip=None):
        """The C offset of the element paired with the index variables `index` (one per
        axis of `shape`, which this value broadcasts to, numpy's rules), leaving out axis
        `skip` of `shape`."""
        lead = len(shape) - self.ndim
        terms = []
        for d, (n, s) in enumerate(zip(self.shape, self.strides)):
            if n == 1 or s == 0 or lead + d == skip:
                continue
            terms.append(index[lead + d] if s == 1 else f"{index[lead + d]} * {s}")
        return " + ".join(terms) or "0"

    def at(self, index, shape):
        """The C expression of the element paired with `index` of `shape`."""
        return f"({self.ptr})[{self.offset(index, shape)}]"

    def stride(self, axis, shape):
        """The stride numpy's loop over axis `axis` of `shape` passes for this value: 0
        where it repeats the element (a 0-d value, or broadcast along that axis)."""
        d = axis - (len(shape) - self.ndim)
        if d < 0 or self.shape[d] != shape[axis]:
            return 0
        return self.strides[d] if shape[axis] > 1 else (self.strides[d] or 1)


def c_strides(shape):
    """Row-major strides (elements) of `shape`."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def strides_of(array):
    """numpy's strides of `array` in elements."""
    return tuple(s // 8 for s in np.asarray(array).strides)


def dense_strides(value):
    """The strides of a fresh array laid out as numpy laid out `value` (its axes in the order
    of its strides, packed); row-major where numpy's value is not packed."""
    a = np.asarray(value)
    if a.ndim < 2 or a.flags.c_contiguous:
        return c_strides(a.shape)
    order = sorted(range(a.ndim), key=lambda d: (abs(a.strides[d]), -d))
    strides, step = [0] * a.ndim, 1
    for d in order:
        strides[d] = step
        step *= max(a.shape[d], 1)
    packed = all(a.shape[d] == 1 or abs(a.strides[d]) // 8 == strides[d] for d in order)
    return tuple(strides) if packed and all(s > 0 for s in a.strides) else c_strides(a.shape)


def same_layout(val, value):
    """Whether `val` has the shape, kind and strides numpy gave `value` (strides compared
    only along axes of more than one element)."""
    a = np.asarray(value)
    if tuple(a.shape) != tuple(val.shape) or val.scalar != (not isinstance(value, np.ndarray)):
        return False
    return all(n <= 1 or s == t for n, s, t in zip(a.shape, val.strides, strides_of(a)))


def inner_axis(shape, strides):
    """The axis numpy's iterator runs innermost over an array of `shape` and `strides`: the
    one of smallest stride (the last on a tie) among those of more than one element."""
    axes = [d for d in range(len(shape)) if shape[d] > 1]
    if not axes:
        return len(shape) - 1 if shape else None
    return min(axes, key=lambda d: (abs(strides[d]), -d))


def k_order(shape, strides):
    """The axes of an array from outermost to innermost as numpy's iterator visits them for
    a reduction (by decreasing |stride|, each axis in its own direction)."""
    return sorted(range(len(shape)), key=lambda d: (-abs(strides[d]), d))
