"""How much memory this machine can give a run, for refusing what cannot fit up front."""
from __future__ import annotations

import os


def available():
    """Bytes of memory available to a new allocation (without swapping): psutil's
    `available` where psutil is installed (it comes with Dask), else the free pages."""
    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil comes with distributed
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return psutil.virtual_memory().available


def size_text(nbytes):
    """1.6 TB, 28.9 GB, 512 MB: a size for people (powers of 1000)."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:.0f} bytes"
