"""Optional numba compilation for the robot kernels.

``jit(fn)`` returns ``numba.njit(cache=True)(fn)`` when numba imports, the environment
variable ``BLOCKSIM_NO_JIT`` is unset (or empty) and ``BLOCKSIM_KERNELS`` is not ``python``;
otherwise it returns ``fn`` itself, so the same source runs as plain Python and gives the same
numbers, only slower.

This module imports numba on first use of ``jit``. The robot kernels do not go through
it when the C extension is in use (``backend``), so robot diagrams then never import numba.
"""

import os

_NUMBA = None  # the numba module, False when unavailable or disabled, None before the first call


def enabled():
    """True when kernels are compiled with numba (numba importable, BLOCKSIM_NO_JIT unset and
    BLOCKSIM_KERNELS not 'python')."""
    global _NUMBA
    if _NUMBA is None:
        _NUMBA = False
        if not os.environ.get("BLOCKSIM_NO_JIT") \
                and os.environ.get("BLOCKSIM_KERNELS", "").strip().lower() != "python":
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
