"""The machine's side of accelerated mode: its C compiler and the cache of compiled diagrams.

Kept apart from build.py (which compiles and loads) so that deciding a run's mode can ask
whether a compiler exists, and a short run begun in normal mode whether anything is cached,
without importing the code generator: a run that stays in normal mode costs a `stat`, not
a generated source.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

_COMPILERS = {}  # (compiler command, PATH) -> its identity (see _identity), or None


class CompilerMissing(Exception):
    """No working C compiler: accelerated mode is not available on this machine."""


def cache_dir():
    """Where compiled diagrams are kept: BLOCKSIM_CACHE_DIR, else $XDG_CACHE_HOME/blocksim,
    else ~/.cache/blocksim (under `accel/`)."""
    explicit = os.environ.get("BLOCKSIM_CACHE_DIR")
    if explicit:
        return Path(explicit) / "accel"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "blocksim" / "accel"


def compiler():
    """(command, identity) of the C compiler; CompilerMissing when there is none."""
    command = os.environ.get("CC") or "cc"
    where = (command, os.environ.get("PATH"))  # the same name may be found elsewhere later
    if where not in _COMPILERS:
        _COMPILERS[where] = _identity(command)
    identity = _COMPILERS[where]
    if identity is None:
        raise CompilerMissing(f"no C compiler found (CC={command}): install one, e.g. "
                              "`apt-get install gcc` or Xcode's command line tools, or set CC")
    return command, identity


def _identity(command):
    """The compiler's resolved path, size and modification time (a new compiler is a new
    identity), without running it; None when there is no such program."""
    path = shutil.which(command)
    if path is None:
        return None
    real = os.path.realpath(path)
    stat = os.stat(real)
    return f"{real} {stat.st_size} {stat.st_mtime_ns}"


def holds_libraries():
    """Whether the cache holds any compiled diagram (False: none can be this one's)."""
    try:
        with os.scandir(cache_dir()) as entries:
            return any(e.name.endswith(".so") for e in entries)
    except OSError:
        return False
