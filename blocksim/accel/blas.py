"""The BLAS numpy calls for dot and matmul, and the LAPACK numpy.linalg calls, found so
compiled code can call the same ones.

numpy hands small dot products and matrix products to its BLAS (OpenBLAS in the wheels),
whose kernels sum in their own order with fused multiply-adds. Compiled code that sums
in another order differs in the last bits, and an adaptive solver's error control turns
that into step sizes differing in their 12th digit. Calling numpy's own BLAS (runtime/
rt_blas.c mirrors numpy's choice of function) keeps the bits equal. The library is the one
loaded into this process from numpy's installation (Linux: /proc/self/maps; else the
libraries shipped inside numpy's package folders). numpy's wheels carry LAPACK in the same
library (dgesv for solve and inv, dgesdd for svd, pinv and cond, dgelsd for lstsq, dgetrf
for det): runtime/rt_linalg.c calls them as numpy/linalg/umath_linalg.cpp does.

A BLAS call costs more than a short sum (argument checks, dispatch, zeroing the output), so
rt_blas.c carries OpenBLAS's x86-64 summation order for a ddot of fewer than 16 terms and a
transposed dgemv into fewer than 4 values, and takes them instead of the call for the sizes
where a check against the loaded BLAS gives the same bits (`inline_sizes`).
"""
from __future__ import annotations

import ctypes
import functools
import os
from pathlib import Path

import numpy as np

_NAMES = ("ddot", "dgemv", "daxpy", "dgemm")
_LAPACK = ("dgesv", "dgesdd", "dgelsd", "dgetrf")


@functools.lru_cache(maxsize=None)
def numpy_blas():
    """(ilp64, (ddot, dgemv, daxpy, dgemm) addresses) of numpy's BLAS, or None."""
    return _find(lambda prefix, suffix: [f"{prefix}cblas_{name}{suffix}" for name in _NAMES])


@functools.lru_cache(maxsize=None)
def numpy_lapack():
    """(ilp64, (cblas_dsyrk, dgesv, dgesdd, dgelsd, dgetrf) addresses) of numpy's library, or
    None (a numpy built against another LAPACK: compiled code then has no linear algebra)."""
    return _find(lambda prefix, suffix: [f"{prefix}cblas_dsyrk{suffix}"]
                 + [f"{prefix}{name}_{suffix}" for name in _LAPACK])


_AGREED = {}  # numpy_blas()'s answer -> rt_blas_agree's verdict on it


def inline_sizes(lib, found):
    """The sizes for which rt_blas.c's kernels give the bits of the BLAS `found` (numpy_blas's
    answer, already handed to `lib` by rt_set_blas): rt_blas_agree's bit mask, checked by the
    first library bound in this process. The kernels are one C source whose fma calls and
    unfused products round the same under any compiler (-ffp-contract=off), so the verdict
    is the BLAS's and the CPU's, not the library's."""
    if found not in _AGREED:
        _AGREED[found] = lib.rt_blas_agree()
    return _AGREED[found]


def _find(symbols):
    """(ilp64, addresses) of the functions `symbols(prefix, suffix)` names, from the first
    candidate library that has them all (scipy_ prefixed or not, 64_ suffixed or not)."""
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix in ("scipy_", ""):
            for suffix, ilp64 in (("64_", 1), ("", 0)):
                try:
                    fns = [getattr(lib, name) for name in symbols(prefix, suffix)]
                except AttributeError:
                    continue
                return ilp64, tuple(ctypes.cast(f, ctypes.c_void_p).value for f in fns)
    return None


def _candidates():
    """The BLAS libraries to look in: numpy's own (those its wheel ships, then those loaded
    from numpy's folders; another package's BLAS, scipy's, may be loaded too: not that)."""
    root = Path(np.__file__).resolve().parent
    shipped = [str(p) for folder in (root.parent / "numpy.libs", root / ".dylibs")
               if folder.is_dir() for p in sorted(folder.iterdir()) if "blas" in p.name.lower()]
    yield from shipped
    # the maps are read only when the shipped ones lack the functions (each tried once)
    yield from (p for p in _loaded_blas() if "numpy" in p and p not in shipped)


@functools.lru_cache(maxsize=None)
def _loaded_blas():
    """The BLAS libraries loaded into this process (Linux: /proc/self/maps), in map order."""
    maps = Path("/proc/self/maps")
    loaded = []
    if maps.is_file():
        for line in maps.read_text().splitlines():
            path = line.split()[-1] if "/" in line else ""
            if "blas" in os.path.basename(path).lower() and path not in loaded:
                loaded.append(path)
    return loaded
