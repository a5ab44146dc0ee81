"""Compiling generated C into a shared library, cached on disk per structure, loaded by ctypes.

The compiler is the system's C compiler (`CC`, a command with its arguments, default `cc`),
the one that builds the robot kernels. Flags keep IEEE semantics equal to numpy's: -O2
-ffp-contract=off (no fused multiply-add), no -ffast-math. The cache key is a hash of the
generated source, the runtime's files, the compiler's identity, the flags and blocksim's
version: a new version or a new compiler never reuses old code. Where the cache lives and
which compiler runs: toolchain.py.

Writes are atomic: each process compiles to a temporary name in the cache directory and
renames it into place, so two processes compiling one structure both succeed and nobody
loads half a file. A library ends with the SHA-256 of its bytes, checked before it is
loaded (loading a damaged library can crash the process), and carries its key (`rt_key()`),
checked after: an entry that fails either (damaged, cut short, another structure's) is
compiled again.

A compile has a time limit (toolchain.compile_limit, BLOCKSIM_COMPILE_TIMEOUT): past it, or
on Ctrl-C, the compiler's whole process group (its cc1, as and ld too) is killed. A
temporary's name says which process made it (`.KEY.HOST-PID.*`): one a process killed
outright left behind (kill -9) is removed by the next compile on its host once that process
is gone; those of live processes, compiling at the same time, are left alone.

A compiler that failed or took too long is not run again on the same source in the process
(with the same time limit): it would fail the same way, and each of a sweep's runs waited
for it again (the whole time limit for one that hangs). Another compiler, or CC with other
arguments, is another key and is tried; a library another process put in the cache since
is loaded.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import os
import platform
import re
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from . import ufuncs
from .blas import inline_sizes, numpy_blas, numpy_lapack
from .codegen import RUNTIME, RUNTIME_FILES
from .toolchain import cache_dir, compile_limit, compiler

FLAGS = ("-O2", "-ffp-contract=off", "-fPIC", "-shared", "-std=gnu99", "-pthread")
TRAILER = b"blocksim-sha256:"  # then the digest of the bytes before it (a loader ignores it)
_LOADED = {}  # key -> Library, for this process
_FAILED = {}  # (key, time limit) -> why the compiler failed on it, in this process
_HOST = hashlib.sha256(platform.node().encode()).hexdigest()[:8]  # in temporaries' names
_TEMPORARY = re.compile(r"\.[0-9a-f]{32}\.([0-9a-f]{8})-([0-9]+)\..+\.(c|so)")


class CompileFailed(Exception):
    """No compiled code: the compiler failed (a fault in a block's lowering, a broken
    compiler) or took too long, or the cache cannot be used (the reason, as the message)."""


@functools.lru_cache(maxsize=None)
def _runtime_text():
    return "".join((RUNTIME / name).read_text() for name in RUNTIME_FILES)


def key_of(source):
    """The cache key of a generated source (see the module docstring)."""
    from .. import __version__
    _, identity = compiler()
    h = hashlib.sha256()
    for part in (__version__, identity, " ".join(FLAGS), _runtime_text(), source):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def is_cached(key):
    """Whether the library of `key` is loaded in this process or in the disk cache (False
    when the cache cannot be looked into: `build` says why)."""
    if key in _LOADED:
        return True
    try:
        return (cache_dir() / f"{key}.so").is_file()
    except OSError:  # a name too long, a folder that cannot be entered
        return False


@dataclass
class Built:
    library: object  # the loaded Library
    key: str
    seconds: float  # compiling (0 when cached)
    cached: bool


def build(source, key=None):
    """The loaded library of `source` (whose `key_of` is `key`, when known): from this
    process, from the disk cache, or compiled now. Raises CompilerMissing, CompileFailed (also
    when the cache cannot be written)."""
    key = key or key_of(source)
    if key in _LOADED:
        return Built(_LOADED[key], key, 0.0, True)
    directory = cache_dir()
    path = directory / f"{key}.so"
    try:
        library = _load(path, key) if path.is_file() else None
    except OSError as e:  # a name too long, a folder that cannot be entered
        raise CompileFailed(f"cannot read the compiled-code cache {directory}: "
                            f"{e.strerror or e}") from None
    cached = library is not None
    started = time.perf_counter()
    if library is None:
        try:
            _compile(source, key, directory, path)
        except OSError as e:  # a cache folder that is a file, read-only, full
            raise CompileFailed(f"cannot write the compiled-code cache {directory}: "
                                f"{e.strerror or e}") from None
        library = _load_new(path, key)
        if library is None:
            raise CompileFailed(f"the compiled library {path} does not load")
    _LOADED[key] = library
    return Built(library, key, 0.0 if cached else time.perf_counter() - started, cached)


def _compile(source, key, directory, path):
    command, _ = compiler()
    try:
        limit = compile_limit()
    except ValueError as e:
        raise CompileFailed(str(e)) from None
    if (key, limit) in _FAILED:
        raise CompileFailed(_FAILED[key, limit])
    directory.mkdir(parents=True, exist_ok=True)
    _remove_stale(directory)
    text = source + f'\nconst char *rt_key(void) {{ return "{key}"; }}\n'
    fd, tmp_c = tempfile.mkstemp(prefix=f".{key}.{_owner()}.", suffix=".c", dir=directory)
    tmp_so = tmp_c[:-2] + ".so"
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        cc = os.environ.get("CC") or "cc"
        try:
            code, stderr = _run(cc, [*command, *FLAGS, "-I", str(RUNTIME), "-o", tmp_so,
                                     tmp_c, "-lm"], limit)
            if code != 0:
                raise CompileFailed(_failure(cc, code, stderr))
        except CompileFailed as e:
            _FAILED[key, limit] = str(e)
            raise
        with open(tmp_so, "ab") as f:
            f.write(TRAILER + hashlib.sha256(Path(tmp_so).read_bytes()).digest())
        os.replace(tmp_so, path)  # atomic: a reader sees the old file or the new one
    finally:
        for name in (tmp_c, tmp_so):
            with contextlib.suppress(OSError):
                os.unlink(name)


def _run(cc, argv, limit):
    """(exit status, what it printed on stderr) of the compiler `cc` run as `argv`, in a
    process group of its own, killed whole past `limit` seconds (CompileFailed) or when this
    process is interrupted (the interruption goes on)."""
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, errors="replace",
                                start_new_session=True)
    except OSError as e:  # a script whose interpreter is missing
        raise CompileFailed(f"{cc} cannot be run: {e.strerror or e}") from None
    try:
        _, stderr = proc.communicate(timeout=limit)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
        if isinstance(e, subprocess.TimeoutExpired):
            raise CompileFailed(f"{cc} did not finish within {limit:g} s, the time a compile "
                                "may take (BLOCKSIM_COMPILE_TIMEOUT sets it)") from None
        raise
    return proc.returncode, stderr


def _failure(cc, code, stderr):
    """Why the compiler `cc` failed: its first error line, else its exit status."""
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"{cc} was killed by {signal.Signals(-code).name} while compiling"
    if stderr.strip():
        return f"{cc} failed on the generated code: {_first_error(stderr)}"
    return f"{cc} failed on the generated code: it exited with status {code} and printed nothing"


def _owner():
    """This process, as temporaries name it: HOST-PID."""
    return f"{_HOST}-{os.getpid()}"


def _remove_stale(directory):
    """Remove the temporaries in `directory` that processes of this host left when they
    were killed (kill -9 during a compile): theirs whose process is gone."""
    with contextlib.suppress(OSError), os.scandir(directory) as entries:
        for entry in entries:
            found = _TEMPORARY.fullmatch(entry.name)
            if found and found[1] == _HOST and not _alive(int(found[2])):
                with contextlib.suppress(OSError):  # another compile removed it first
                    os.unlink(entry.path)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):  # another user's process, a number no process has
        return True
    return True


def _first_error(stderr):
    lines = [line for line in stderr.splitlines() if "error" in line]
    return (lines[0] if lines else stderr.strip().splitlines()[-1])[:500]


def _intact(path):
    """Whether the file at `path` ends with the digest of the bytes before it."""
    try:
        data = path.read_bytes()
    except OSError:
        return False
    body, tail = data[:-48], data[-48:]
    return tail[:16] == TRAILER and hashlib.sha256(body).digest() == tail[16:]


def _load_new(path, key):
    """_load of a library just compiled to `path`, through a name of its own: the process
    may hold a damaged library loaded under `path`'s name, which the loader would return."""
    link = path.with_name(f".{path.stem}.{_owner()}.{time.monotonic_ns()}.so")
    try:
        os.link(path, link)
    except OSError:
        return _load(path, key)
    try:
        return _load(link, key)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(link)


def _load(path, key):
    """The library at `path` if it is intact, loads and carries `key`, else None."""
    if not _intact(path):
        return None
    try:
        lib = ctypes.CDLL(str(path))
        lib.rt_key.restype = ctypes.c_char_p
        if lib.rt_key().decode() != key:
            return None
    except (OSError, AttributeError, UnicodeDecodeError):
        return None
    return _declare(lib)


def _declare(lib):
    """Argument and result types of the runtime's entry points (rt_api.c)."""
    P, D, I, LL = ctypes.c_void_p, ctypes.c_double, ctypes.c_int, ctypes.c_longlong
    signatures = {
        "rt_create": ([], P), "rt_free": ([P], None), "rt_reset": ([P], None),
        "rt_bind": ([P, P, P, P], None),
        "rt_configure": ([P, P, P, P, P, P, LL], None),
        "rt_again": ([P, P, P, P, P, P, P, P, P, LL], None),
        "rt_run": ([P, D], I), "rt_rows": ([P, I, ctypes.POINTER(P)], LL),
        "rt_info": ([P, P, P], None), "rt_blocks": ([P, I, P], None),
        "rt_error_text": ([P], ctypes.c_char_p), "rt_error_method": ([P], ctypes.c_char_p),
        "rt_eval_f": ([P, D, P, P], I), "rt_eval_outputs": ([P, D, P], I),
        "rt_eval_indicators": ([P, D], I), "rt_eval_remember": ([P, D, I], I),
        "rt_set_blas": ([I, P, P, P, P], None),
        "rt_blas_agree": ([], ctypes.c_ulonglong), "rt_set_inline": ([ctypes.c_ulonglong], None),
        "rt_set_ufuncs": ([P, P], None),
        "rt_batch_new": ([LL, LL], P), "rt_batch_free": ([P], None),
        "rt_batch_setup": ([P, LL, P, P, P, P, P, P, P], None),
        "rt_batch_start": ([P, I], I), "rt_batch_limit": ([P, D], None),
        "rt_batch_wait": ([P, D], I), "rt_batch_stop": ([P], None),
        "rt_batch_outcomes": ([P, P], None), "rt_batch_columns": ([P, I, P, LL, P], None),
        "rt_batch_run": ([P, LL], P),
        "rt_set_lapack": ([I, P, P, P, P, P], None),
    }
    for name, (args, result) in signatures.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, result
    found = numpy_blas()
    if found is not None:
        lib.rt_set_blas(found[0], *found[1])
        lib.rt_set_inline(inline_sizes(lib, found))
    found = numpy_lapack()
    if found is not None:
        lib.rt_set_lapack(found[0], *found[1])
    loops, data = ufuncs.loops()  # the library copies them
    pointers = ctypes.c_void_p * len(loops)
    lib.rt_set_ufuncs(pointers(*loops), pointers(*data))
    return lib
