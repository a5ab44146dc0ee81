"""The machine's side of accelerated mode: its C compiler and the cache of compiled diagrams.

Kept apart from build.py (which compiles and loads) so that deciding a run's mode can ask
whether a compiler exists, and a short run begun in normal mode whether anything is cached,
without importing the code generator: a run that stays in normal mode costs a `stat`, not
a generated source.
"""
from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

_COMPILERS = {}  # (CC, PATH) -> (command, identity), or why there is none
COMPILE_LIMIT = 300.0  # seconds a compile may take, unless BLOCKSIM_COMPILE_TIMEOUT says


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
    """(command, identity) of the C compiler: the command a tuple of the program and its
    arguments, CC split as a shell splits it (CC="gcc -O1", as make and setuptools take
    it; default cc), and its identity for the cache key. CompilerMissing when there is
    none."""
    text = os.environ.get("CC") or "cc"
    where = (text, os.environ.get("PATH"))  # the same name may be found elsewhere later
    if where not in _COMPILERS:
        _COMPILERS[where] = _found(text)
    found = _COMPILERS[where]
    if isinstance(found, str):
        raise CompilerMissing(found)
    return found


def _found(text):
    """(command, identity) of CC `text`, or why there is none."""
    try:
        command = tuple(shlex.split(text))
    except ValueError as e:  # an unclosed quote
        return (f"CC={text} cannot be read as a command ({e}): set CC to a C compiler, e.g. "
                "CC=gcc or CC=\"gcc -O1\"")
    identity = _identity(command[0]) if command else None
    if identity is None:
        return (f"no C compiler found (CC={text}): install one, e.g. `apt-get install gcc` "
                "or Xcode's command line tools, or set CC")
    return command, f"{identity} {shlex.join(command[1:])}" if command[1:] else identity


def _identity(program):
    """The program's resolved path, size and modification time (a new compiler is a new
    identity), without running it; None when there is no such program."""
    path = shutil.which(program)
    if path is None:
        return None
    real = os.path.realpath(path)
    stat = os.stat(real)
    return f"{real} {stat.st_size} {stat.st_mtime_ns}"


def compile_limit():
    """How long a compile may take before its compiler is stopped: BLOCKSIM_COMPILE_TIMEOUT
    (seconds), else COMPILE_LIMIT; ValueError saying what is wrong with the variable."""
    text = os.environ.get("BLOCKSIM_COMPILE_TIMEOUT")
    if not text:
        return COMPILE_LIMIT
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError(f"BLOCKSIM_COMPILE_TIMEOUT={text}: expected a positive number of "
                         "seconds")
    return seconds


def holds_libraries():
    """Whether the cache holds any compiled diagram (False: none can be this one's)."""
    try:
        with os.scandir(cache_dir()) as entries:
            return any(e.name.endswith(".so") for e in entries)
    except OSError:
        return False
