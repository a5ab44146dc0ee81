"""Load-time checks of a block's parameters against each other and against the shape of the
signal they apply to; the error names the parameter (ParamError) or the input (PortError)."""
import numpy as np

from blocksim.block import EITHER, FALLING, RISING, PortError
from blocksim.params import ParamError

# a `direction` (or `reset`) choice -> the direction of the zero-crossing indicator
DIRECTIONS = {"rising": RISING, "falling": FALLING, "either": EITHER}

# the fact "a limit is finite" of limits lower, upper (a declared text, rundata.py)
LIMITED = "max(isfinite(lower)) != 0 or max(isfinite(upper)) != 0"


def fits(value, shape):
    """True when `value` broadcasts to `shape` without changing it."""
    own = np.shape(value)
    if own == () or own == shape:  # the usual cases, without numpy's general rule
        return True
    try:
        return np.broadcast_shapes(own, shape) == shape
    except ValueError:
        return False


def check_fits(names, p, shape, port="u"):
    """PortError on `port` unless each named parameter of `p` fits the signal's shape."""
    for name in names:
        value = getattr(p, name)
        if not fits(value, shape):
            raise PortError(port, f"{name} of shape {value.shape} does not fit a signal of "
                                  f"shape {shape}")


def fitted(p, names, shape, port="u"):
    """The named parameters of `p` broadcast to the signal's shape, as flat copies
    (a PortError on `port` names the first that does not fit)."""
    check_fits(names, p, shape, port)
    return [np.broadcast_to(getattr(p, name), shape).ravel().copy() for name in names]


def check_ordered(p, low, high):
    """ParamError unless parameter `low` <= parameter `high` element-wise (broadcast)."""
    try:
        ok = np.all(getattr(p, low) <= getattr(p, high))
    except ValueError:
        raise ParamError(high, f"shape {getattr(p, high).shape} does not broadcast with "
                               f"{low}'s shape {getattr(p, low).shape}") from None
    if not ok:
        raise ParamError(*ordered(low, high)[1:])


def ordered(low, high):
    """check_ordered's condition as a declared check (text, parameter, message) of the run
    data (RunData.check): the values set later are checked by it, in Python and in C."""
    return f"min({low} <= {high})", high, f"{high} must be >= {low}"
