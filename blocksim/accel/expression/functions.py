"""The functions of the expression language in C, each as numpy (or the evaluator) computes
it: numpy's own loops for the elementary functions, numpy's order of sums, its BLAS and
LAPACK for products and linear algebra, the evaluator's own formulas for the rest (its
round, mod, the rotations and transforms).

Refused (no compiled form; normal mode runs the block): a function of a diagram's section
(a robot function such as fkine(p560, q)) on values that depend on the inputs, and the
functions whose result's shape would depend on an input value (eye, zeros, ones of an
input-dependent size).
"""
from __future__ import annotations

import numpy as np

from . import linalg, transforms
from .values import Val

# the language's name -> numpy's ufunc, for the functions compiled code takes from numpy's
# own loops (numpy's last bits differ from the C library's)
UFUNCS = {"sin": "sin", "cos": "cos", "tan": "tan", "asin": "arcsin", "acos": "arccos",
          "atan": "arctan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
          "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh", "exp": "exp",
          "log": "log", "exp2": "exp2", "log2": "log2", "log10": "log10",
          "atan2": "arctan2", "hypot": "hypot", "rem": "fmod"}

# the functions whose C is exact (correctly rounded, or plain IEEE arithmetic), as a format
# of the elements of their arguments
ELEMENTWISE = {"sqrt": "sqrt({})", "abs": "fabs({})", "sign": "rt_sign({})",
               "floor": "floor({})", "ceil": "ceil({})", "trunc": "trunc({})",
               "round": "rt_round({})", "isfinite": "isfinite({}) ? 1.0 : 0.0",
               "deg2rad": "{} * (RT_PI / 180.0)", "rad2deg": "{} * (180.0 / RT_PI)",
               "mod": "rt_mod({}, {})", "where": "{} != 0.0 ? {} : {}",
               "clip": "rt_clip_np({}, {}, {})"}


def lower_call(lw, node):
    name = node.func.id
    spec = lw.functions[name]
    if spec.subject:
        raise lw.refuse(node, f"{name}() of a {spec.subject[:-1]} on values that depend on "
                              "the inputs is computed in normal mode only")
    args = node.args
    if name in UFUNCS:
        out = lw.result(node)
        lw.code.ufunc(UFUNCS[name], out, [lw.value(a) for a in args])
        return out
    if name in ELEMENTWISE or (name in ("min", "max") and len(args) == 2):
        form = ELEMENTWISE.get(name) or f"rt_{name}imum({{}}, {{}})"
        if name == "mod":
            lw.code.need_ufunc("remainder")  # rt_mod
        out = lw.result(node)
        lw.code.elementwise(out, [lw.value(a) for a in args], form.format)
        return out
    handler = HANDLERS.get(name)
    if handler is None:
        raise lw.refuse(node, f"{name}() has no compiled form")
    return handler(lw, node, *args)


# -- reductions -------------------------------------------------------------------------------
def _sum(lw, node, x, divide=False):
    ptr, n, step = lw.code.flat_k(lw.value(x))
    out = lw.result(node)
    total = f"0.0 + rt_pairwise_sum({ptr}, {n}, {step})"
    lw.code.emit(f"({out.ptr})[0] = {total}{f' / {float(n)!r}' if divide else ''};")
    return out


def _mean(lw, node, x):
    return _sum(lw, node, x, divide=True)


def _fold(lw, node, x, step):
    """A reduction in order, from the first element (numpy's multiply, minimum and maximum
    reductions): r = step(r, element)."""
    ptr, n, stride = lw.code.flat_k(lw.value(x))
    out = lw.result(node)
    element = f"({ptr})[k * {stride}]"
    lw.code.emit(f"{{ double r = ({ptr})[0]; for (long k = 1; k < {n}; k++) "
                 f"r = {step.format('r', element)}; ({out.ptr})[0] = r; }}")
    return out


def _prod(lw, node, x):
    return _fold(lw, node, x, "{} * {}")


def _extreme(which):
    return lambda lw, node, x: _fold(lw, node, x, f"rt_{which}imum({{}}, {{}})")


def _cumsum(lw, node, x):
    x = lw.value(x)
    out = lw.result(node)
    k = lw.code.name("k")
    lw.code.emit(f"long {k} = 0;")
    lw.code.loops(x.shape, lambda i: f"({out.ptr})[{k}] = {k} ? ({out.ptr})[{k} - 1] + "
                                     f"{x.at(i, x.shape)} : {x.at(i, x.shape)}; {k}++;")
    return out


# -- products ---------------------------------------------------------------------------------
def _positive(lw, val):
    """`val`, or a row-major copy of it when a stride is negative (numpy's dot copies such
    a vector before calling BLAS)."""
    return lw.code.contiguous(val) if any(s < 0 for s in val.strides) else val


def _dot(lw, node, a, b):
    a, b = _positive(lw, lw.value(a)), _positive(lw, lw.value(b))
    out = lw.result(node)
    lw.code.emit(f"({out.ptr})[0] = rt_dot_strided({a.ptr}, {a.strides[0]}, {b.ptr}, "
                 f"{b.strides[0]}, {a.shape[0]});")
    return out


def _cross(lw, node, a, b):
    a, b = lw.value(a), lw.value(b)
    out = lw.result(node)
    x = [a.at([str(k)], (3,)) for k in range(3)]
    y = [b.at([str(k)], (3,)) for k in range(3)]
    o = [out.at([str(k)], (3,)) for k in range(3)]
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        lw.code.emit(f"{o[i]} = {x[j]} * {y[k]} - {x[k]} * {y[j]};")
    return out


def _norm(lw, node, x):
    """numpy.linalg.norm: sqrt(dot(r, r)) of r = x.ravel(order='K'), which is x's memory in
    the order it lies (a view) when x is packed, else a copy in that order."""
    x = lw.value(x)
    shift = "".join(f" + {(n - 1) * s}" for n, s in zip(x.shape, x.strides) if s < 0)
    mem = Val(x.ptr + shift, x.shape, tuple(abs(s) for s in x.strides), x.scalar)
    dense = sorted((s, n) for s, n in zip(mem.strides, mem.shape) if n > 1)
    if any(s != (dense[k - 1][0] * dense[k - 1][1] if k else 1) for k, (s, n) in
           enumerate(dense)):  # numpy's ravel copies it, in memory order
        copy = lw.code.temp((x.size,))
        k = lw.code.name("k")
        lw.code.emit(f"long {k} = 0;")
        order = sorted(range(x.ndim), key=lambda d: (-mem.strides[d], d))
        lw.code.loops(x.shape, lambda i: f"({copy.ptr})[{k}++] = {mem.at(i, x.shape)};", order)
        mem = copy
    out = lw.result(node)
    lw.code.emit(f"({out.ptr})[0] = sqrt(rt_dot({mem.ptr}, {mem.ptr}, {x.size}));")
    return out


# -- shapes and views -------------------------------------------------------------------------
def _transpose(lw, node, x):
    x = lw.value(x)
    return Val(x.ptr, x.shape[::-1], x.strides[::-1], not isinstance(lw.values[node], np.ndarray))


def _view_or_copy(lw, node, x):
    """numpy's result of node, a view of x's value when numpy's is one (its place and
    strides read off the traced values), else a row-major copy of x's elements."""
    val, before, after = lw.value(x), lw.values[x], lw.values[node]
    if isinstance(after, np.ndarray) and isinstance(before, np.ndarray) and \
            np.shares_memory(before, after):
        shift = (after.__array_interface__["data"][0]
                 - before.__array_interface__["data"][0]) // 8
        strides = tuple(s // 8 for s in after.strides)
        return Val(f"{val.ptr} + {shift}", after.shape, strides)
    out = lw.result(node)
    k = lw.code.name("k")
    lw.code.emit(f"long {k} = 0;")
    lw.code.loops(val.shape, lambda i: f"({out.ptr})[{k}++] = {val.at(i, val.shape)};")
    return out


def _reshape(lw, node, x, *shape):
    return _view_or_copy(lw, node, x)


def _diag(lw, node, v):
    if np.ndim(lw.values[v]) == 2:
        return _view_or_copy(lw, node, v)
    v = lw.value(v)
    out = lw.result(node)
    n = v.size
    lw.code.emit(f"for (long k = 0; k < {n * n}; k++) ({out.ptr})[k] = 0.0;")
    lw.code.loops(v.shape, lambda i: f"({out.ptr})[{i[0]} * {n + 1}] = {v.at(i, v.shape)};")
    return out


def _array(lw, node, x):
    out = lw.result(node)
    lw.code.copy(out, lw.value(x))
    return out


def _linspace(lw, node, start, stop, count=None):
    n = len(lw.values[node])
    a, b = lw.value(start), lw.value(stop)
    out = lw.result(node)
    div = n - 1
    lw.code.emit(
        f"{{ double a = ({a.ptr})[0], b = ({b.ptr})[0], delta = b - a, "
        f"step = {'delta / ' + repr(float(div)) if div > 0 else 'NAN'}; "
        f"for (long k = 0; k < {n}; k++) {{ double y = (double)k; "
        + (f"if (step == 0.0) y = (y / {float(div)!r}) * delta; else y = y * step; "
           if div > 0 else "y = y * delta; ")
        + f"({out.ptr})[k] = y + a; }} "
        + (f"({out.ptr})[{n - 1}] = b; " if n > 1 else "") + "}")
    return out


def _shaped_only(lw, node, *args):
    raise lw.refuse(node, "its size would depend on the inputs")


HANDLERS = {
    "sum": _sum, "mean": _mean, "prod": _prod, "min": _extreme("min"), "max": _extreme("max"),
    "cumsum": _cumsum, "dot": _dot, "cross": _cross, "norm": _norm,
    "transpose": _transpose, "reshape": _reshape, "diag": _diag, "array": _array,
    "linspace": _linspace, "eye": _shaped_only, "zeros": _shaped_only, "ones": _shaped_only,
    **transforms.HANDLERS, **linalg.HANDLERS,
}
