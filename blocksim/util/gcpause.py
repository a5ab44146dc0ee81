"""Building a large diagram with the cyclic garbage collector paused.

Loading and compiling allocate many long-lived objects (a few dozen per block) and free
almost none. CPython's collector is triggered by the allocation count and each of its full
collections walks every live object, so with it running the time to build N blocks grows
faster than N (10,000 blocks: 30 % of the time; 40,000: 40 %). Nothing built there needs
the collector: it is paused for the duration and runs as before afterwards.
"""
import contextlib
import functools
import gc


@contextlib.contextmanager
def paused_gc():
    """Disable the cyclic collector inside the block (nesting-safe); restore it after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def without_gc(fn):
    """`fn` run with the collector paused (see the module docstring)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with paused_gc():
            return fn(*args, **kwargs)
    return wrapper
