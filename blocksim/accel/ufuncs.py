"""numpy's own inner loops of elementary functions, found so compiled code can call them.

numpy computes exp, log, tan, the inverse and the hyperbolic functions with its own
vectorised kernels (chosen for the CPU at import), which differ from the C library's in the
last bit for a few percent of arguments; an adaptive solver's error control turns such a
difference into different steps. Compiled code therefore calls the very loop numpy calls
(runtime/rt_ufunc.c): the float64 loop of the ufunc, read from the ufunc object
(`PyUFuncObject.functions` and `.data`, numpy/_core/include/numpy/ufuncobject.h). The layout
is checked against what Python says about the ufunc (its name, its number of loops and their
types); when it does not match, `loop` gives None and the blocks that need it have no compiled
form on this installation (normal mode runs them).
"""
from __future__ import annotations

import ctypes
import functools

import numpy as np

# the functions compiled code may call, in the order of their RT_UF_<NAME> indices: one
# argument, then two (power, arctan2, ...: rt_ufunc2); each with the C function that computes
# it where numpy's loop is not at hand (an exported diagram runs without numpy: the same
# function, its last bit the C library's; runtime/rt_ufunc.c)
FUNCTIONS = (("exp", "exp"), ("log", "log"), ("log10", "log10"), ("tan", "tan"),
             ("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"), ("sinh", "sinh"),
             ("cosh", "cosh"), ("tanh", "tanh"), ("sin", "sin"), ("cos", "cos"),
             ("exp2", "exp2"), ("log2", "log2"), ("arcsinh", "asinh"), ("arccosh", "acosh"),
             ("arctanh", "atanh"),
             ("power", "pow"), ("arctan2", "atan2"), ("hypot", "hypot"),
             ("remainder", "rt_np_remainder"), ("fmod", "fmod"))
NAMES = tuple(name for name, _ in FUNCTIONS)
UNARY = sum(getattr(np, name).nin == 1 for name in NAMES)  # the first UNARY take one argument


def c_defines():
    """The C `#define`s of the functions' indices and of their C stand-ins' lists."""
    c = [fn for _, fn in FUNCTIONS]
    return [f"#define RT_NUFUNC {len(NAMES)}", f"#define RT_NUFUNC1 {UNARY}",
            *(f"#define RT_UF_{name.upper()} {k}" for k, name in enumerate(NAMES)),
            f"#define RT_UF_C1_LIST {', '.join(c[:UNARY])}",
            f"#define RT_UF_C2_LIST {', '.join(c[UNARY:])}"]
_DOUBLE = 12  # NPY_DOUBLE


class _UFunc(ctypes.Structure):
    """The head of numpy's PyUFuncObject, up to its type signatures."""
    _fields_ = [("ob_refcnt", ctypes.c_ssize_t), ("ob_type", ctypes.c_void_p),
                ("nin", ctypes.c_int), ("nout", ctypes.c_int), ("nargs", ctypes.c_int),
                ("identity", ctypes.c_int), ("functions", ctypes.POINTER(ctypes.c_void_p)),
                ("data", ctypes.POINTER(ctypes.c_void_p)), ("ntypes", ctypes.c_int),
                ("reserved1", ctypes.c_int), ("name", ctypes.c_char_p),
                ("types", ctypes.POINTER(ctypes.c_ubyte))]


@functools.lru_cache(maxsize=None)
def loop(name):
    """(loop, data) addresses of numpy's float64 loop of the ufunc `name` (one of NAMES), or
    None when the ufunc's layout is not the one this module reads."""
    ufunc = getattr(np, name)
    if not isinstance(ufunc, np.ufunc) or ufunc.nin not in (1, 2) or ufunc.nout != 1:
        return None
    nargs = ufunc.nin + 1
    signature = "d" * ufunc.nin + "->d"
    if signature not in ufunc.types:
        return None
    k = ufunc.types.index(signature)  # the loop numpy's type resolution picks for doubles
    head = _UFunc.from_address(id(ufunc))
    if (head.nin, head.nout, head.nargs, head.ntypes) != (ufunc.nin, 1, nargs, ufunc.ntypes) \
            or head.name is None or head.name.decode() != ufunc.__name__ \
            or any(head.types[nargs * k + i] != _DOUBLE for i in range(nargs)) \
            or not head.functions or not head.functions[k]:
        return None
    return head.functions[k], head.data[k] if head.data else None


def loops():
    """(loops, data): the addresses of every function of NAMES (0 where not found)."""
    found = [loop(name) or (0, 0) for name in NAMES]
    return [f or 0 for f, _ in found], [d or 0 for _, d in found]
