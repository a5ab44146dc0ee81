"""One writer at a time in a directory: an advisory lock file naming its holder.

`hold(directory, name)` takes an exclusive `flock` on `directory/name` for the block it
guards, writes the holder there (pid, host, start time) and removes the file at the end.
Another process asking meanwhile gets `Busy` with that holder's description. The lock
belongs to the open file, so the system releases it when its process ends in any way (a
kill leaves the file, not the lock: the next writer takes it over). Where `fcntl` is
missing (Windows), or the file system does not lock (some network mounts), nothing is
locked.
"""
from __future__ import annotations

import contextlib
import datetime
import errno
import json
import os
import socket

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None


class Busy(Exception):
    """The directory is held by another process: `holder` says which (its text)."""

    def __init__(self, holder):
        super().__init__(holder)
        self.holder = holder


@contextlib.contextmanager
def hold(directory, name):
    path = os.path.join(directory, name)
    fd = None if fcntl is None else _locked(path)
    if fd is None:  # no locks here (no fcntl, or a file system without them)
        yield
        return
    try:
        holder = {"pid": os.getpid(), "host": socket.gethostname(),
                  "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(holder).encode())
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
        os.close(fd)


def _locked(path):
    """A descriptor of `path` holding its lock, or None where the file system cannot lock;
    raises Busy when another process holds it. A holder removes the file as it finishes: a
    lock taken on a file removed meanwhile is no lock, so then the new file is opened and
    locked again."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            busy = e.errno in (errno.EWOULDBLOCK, errno.EAGAIN)
            text = os.read(fd, 4096).decode(errors="replace") if busy else ""
            os.close(fd)
            if busy:
                raise Busy(describe(text)) from None
            return None  # ENOLCK, EOPNOTSUPP, ...: no lock to take
        try:
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)


def describe(text):
    """'pid 123 on host, started 2024-...' from a lock file's content (or what it holds)."""
    try:
        h = json.loads(text)
        return f"pid {h['pid']} on {h['host']}, started {h['started']}"
    except (ValueError, TypeError, KeyError):
        return "a process that has not said which yet"
