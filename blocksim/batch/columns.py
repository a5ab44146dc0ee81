"""A sweep's varied values written straight into its runs' parameter vectors, a batch at once.

Most sweeps vary a block's number: `blocks.Spring.K`. When that number is stored in the
run's parameter vector P as given (the block declares it `d.param`, of shape (), with no
derived arrays, facts or checks to compute from it) and no Python of the block reads it
(rundata.direct_param: its sample time, initial states, events, run data, exact times and
values_changed), the route of new values (engine/compiler/revalue.py) would do exactly this
for a run: check the value by its `Param`'s rules and write it into P at the block's
offset. `direct(model, key)` finds such a path, `Param.refused(values)` applies its rules
(params.Rule) to a whole column of values at once (numpy), and a batch's P rows are the
model's P with the columns written in (batches._Direct). The values it refuses, and every
path of another kind, take the route run by run as before, which reports them with its own
messages.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..rundata import direct_param

_NUMBERS = (int, float)


@dataclass(frozen=True)
class Direct:
    """A varied path whose value is one number of P, at `offset`, checked by `param`."""
    key: str
    param: object  # params.Param
    offset: int


def direct(model, key):
    """The Direct of the varied path `key` in the compiled `model`, or None when its value
    may reach anything but its own place in P."""
    parts = key.split(".")
    if len(parts) != 3 or parts[0] != "blocks" or model is None:
        return None
    name, q = parts[1], parts[2]
    slots = model.slots.get(name)
    block = next((b for b in model.blocks if b.name == name), None)
    if slots is None or block is None:
        return None
    param = direct_param(block, slots.data, q, model.settings.start, model.settings.stop)
    return None if param is None else Direct(key, param, slots.offsets()[q][0])


def numbers(values):
    """`values` (a grid's listed items) as a float array, or None when one is not a plain
    number (a string, a list, a bool: the route reads those)."""
    if not all(type(v) in _NUMBERS for v in values):
        return None
    return np.asarray(values, dtype=float)


def all_direct(model, keys):
    """[Direct] of every varied path `keys`, or None when one is not direct."""
    found = [direct(model, key) for key in keys]
    return None if any(d is None for d in found) else found
