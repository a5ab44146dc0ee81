"""Atomic file writing: a reader never sees a half-written file."""
import contextlib
import errno
import os
import tempfile
from pathlib import Path


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _temporary(path):
    """A new empty file beside `path`, with the same suffix, readable like an ordinary file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private; results are ordinary files
    return Path(tmp)


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path beside `path`; on success rename it onto `path`, on failure
    remove it. The temporary name keeps the suffix so writers that infer the format from it
    (matplotlib, numpy) still work."""
    with atomic_paths(path) as (tmp,):
        yield tmp


@contextlib.contextmanager
def atomic_paths(*paths):
    """Several files written together: yield a temporary path beside each; when the block
    succeeds they are all renamed onto their paths, when it fails (a full disk, say) they are
    all removed, so files written earlier under those names stay as they were, as a set."""
    paths = [Path(p) for p in paths]
    tmps = []
    try:
        for path in paths:
            tmps.append(_temporary(path))
        yield tmps
        for tmp, path in zip(tmps, paths):
            os.replace(tmp, path)
    except BaseException:
        for tmp in tmps:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise


def check_writable_dir(path):
    """Create directory `path` if needed and make sure a file can be written in it; raises
    OSError (with a filename) when that is impossible: `path` is a file or lies under one,
    the file system is read-only, permission is missing."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "exists and is not a directory", str(path))
    path.mkdir(parents=True, exist_ok=True)
    probe = _temporary(path / "write-test")
    try:
        probe.write_bytes(b"blocksim\n")
    finally:
        with contextlib.suppress(OSError):
            os.unlink(probe)
