"""Optional numba compilation of the planar kernels.

``jit(fn)`` returns ``numba.njit(cache=True)(fn)`` when numba imports and the environment
variable ``BLOCKSIM_NO_JIT`` is unset or empty; otherwise it returns ``fn`` unchanged. The
kernels are written as scalar loops over ``math.sin``/``math.cos`` with a fixed summation
order, so the compiled and the plain-Python paths give the same numbers.
"""
from __future__ import annotations

import os


def jit(fn):
    """Compile ``fn`` with numba (cached on disk) if available and allowed, else return it."""
    if os.environ.get("BLOCKSIM_NO_JIT"):
        return fn
    try:
        import numba
    except ImportError:
        return fn
    return numba.njit(cache=True)(fn)
