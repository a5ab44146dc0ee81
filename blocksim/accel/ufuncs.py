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
# argument, then two (power, arctan2, ...: rt_ufunc2)
NAMES = ("exp", "log", "log10", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
         "sin", "cos", "exp2", "log2", "arcsinh", "arccosh", "arctanh",
         "power", "arctan2", "hypot", "remainder", "fmod")
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
