"""Which implementation runs the robot kernels: the C extension, numba, or plain Python.

All three have the names, packed arrays and results of ``_kernels`` (the reference source):

- ``"c"``: ``_ckernels``, compiled at install time from ``_ckernels.c`` (optional: absent
  when the machine had no compiler). Loads in milliseconds and never imports numba.
- ``"numba"``: ``_kernels`` compiled by ``numba.njit(cache=True)`` (see ``_jit``); about
  1 s per process to import numba and load the cached machine code, ~14 s on a fresh cache.
- ``"python"``: ``_kernels`` as plain Python; the same numbers, ~100x slower per call.

The environment variable ``BLOCKSIM_KERNELS`` picks one; unset or empty means the first
available of c, numba, python. A requested backend that is not available falls back down the
same list with a warning. ``BLOCKSIM_NO_JIT=1`` (and ``BLOCKSIM_KERNELS=python``) means plain
Python everywhere, also for the other numba-decorated code (see ``_jit``). The choice is made
once per process, when the first robot is built.
"""

import os
import warnings

from . import _jit

CHOICES = ("c", "numba", "python")
_NAME = None


def requested():
    """The backend named by BLOCKSIM_KERNELS / BLOCKSIM_NO_JIT, or None for the default."""
    if os.environ.get("BLOCKSIM_NO_JIT"):
        return "python"
    want = os.environ.get("BLOCKSIM_KERNELS", "").strip().lower() or None
    if want is not None and want not in CHOICES:
        raise ValueError(f"BLOCKSIM_KERNELS must be one of {', '.join(CHOICES)}, got {want!r}")
    return want


def _c_module():
    try:
        from . import _ckernels
    except ImportError:
        return None
    return _ckernels


def name():
    """The backend in use: 'c', 'numba' or 'python' (chosen on the first call)."""
    global _NAME
    if _NAME is None:
        want = requested()
        if want in (None, "c") and _c_module() is not None:
            _NAME = "c"
        elif want != "python" and _jit.enabled():
            _NAME = "numba"
        else:
            _NAME = "python"
        if want is not None and want != _NAME:
            warnings.warn(f"BLOCKSIM_KERNELS={want} is not available here; using {_NAME}",
                          RuntimeWarning, stacklevel=2)
    return _NAME


def describe():
    """One line for `blocksim check`: which implementation runs the robot kernels, and why."""
    chosen = name()
    if chosen == "c":
        return "robot kernels: C extension (compiled when blocksim was installed)"
    if requested() == chosen:
        why = "chosen by BLOCKSIM_KERNELS" + (" / BLOCKSIM_NO_JIT" if chosen == "python" else "")
    elif chosen == "numba":
        why = "the C extension was not built: no compiler at install time"
    else:
        why = "neither the C extension nor numba is available; about 100x slower"
    return f"robot kernels: {'numba' if chosen == 'numba' else 'plain Python'} ({why})"


def kernels():
    """The kernel module of the chosen backend (``_ckernels`` or ``_kernels``)."""
    if name() == "c":
        return _c_module()
    from . import _kernels
    return _kernels
