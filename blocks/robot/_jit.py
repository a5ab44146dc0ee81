"""Optional numba compilation for the robot kernels.

``jit(fn)`` returns ``numba.njit(cache=True)(fn)`` when numba imports and the environment
variable ``BLOCKSIM_NO_JIT`` is unset (or empty); otherwise it returns ``fn`` itself, so the
same source runs as plain Python and gives the same numbers, only slower.

This module imports numba on first use of ``jit``; ``_kernels`` (the only caller) is imported
when the first ``SerialLink`` is built, so importing ``blocks.robot`` stays cheap.
"""

import os

_NUMBA = None  # the numba module, False when unavailable or disabled, None before the first call


def enabled():
    """True when kernels are compiled with numba (numba importable and BLOCKSIM_NO_JIT unset)."""
    global _NUMBA
    if _NUMBA is None:
        _NUMBA = False
        if not os.environ.get("BLOCKSIM_NO_JIT"):
            try:
                import numba
                _NUMBA = numba
            except ImportError:
                pass
    return _NUMBA is not False


def jit(fn):
    """Compile ``fn`` with ``numba.njit(cache=True)`` when enabled, else return it unchanged."""
    if enabled():
        return _NUMBA.njit(cache=True)(fn)
    return fn
