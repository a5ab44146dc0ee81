"""Atomic file writing: a reader never sees a half-written file."""
import contextlib
import os
import tempfile
from pathlib import Path


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path beside `path`; on success rename it onto `path`, on failure
    remove it. The temporary name keeps the suffix so writers that infer the format from it
    (matplotlib, numpy) still work."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
