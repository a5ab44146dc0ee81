"""A run's values, apart from the structure that computes with them (Drake's Context).

A compiled Model is structure: blocks, wiring, buffers, and where each block's declared run
data lies (`Slots`, from `Block.declare`, blocksim/rundata.py). A `Context` holds the values
one run reads: P, every block's declared parameters and derived arrays in one flat vector,
the initial states x0 and xd0, the settings and the time events the blocks announce.
Normal mode's views (`block.v`) are bound into the model's Context once; compiled code
reads the same arrays, so a change of values (`Model.set`, a sweep's run: the one route,
compiler/revalue.py) writes them in place and rebuilds nothing. `version` counts the
changes: what compiled runs compute from the values (series of sample times, data arrays)
is made again when it moved on. A number written straight into P (the route's direct way:
one no Python reads) computes nothing anew and leaves it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from ..block import overrides
from ..rundata import RunData, values_of


@dataclass
class Slots:
    """Where a block's run data lies: its declaration, the offsets of its arrays in P and
    of its workspace in W, and the facts its values were compiled with."""
    data: RunData
    p0: int
    w0: int
    facts: dict = field(default_factory=dict)

    def offsets(self):
        """{array name: (offset in P, shape)}."""
        out, k = {}, self.p0
        for a in self.data.arrays:
            out[a.name] = (k, a.shape)
            k += a.size
        return out

    def work_offsets(self):
        """{work name: (offset in W, size)}."""
        out, k = {}, self.w0
        for name, initial in self.data.work_arrays:
            out[name] = (k, initial.size)
            k += initial.size
        return out


@dataclass
class Context:
    """The values of a run (see the module docstring)."""
    P: np.ndarray
    x0: np.ndarray = None
    xd0: np.ndarray = None
    settings: object = None  # engine Settings
    events: list = field(default_factory=list)  # sorted (time, block)
    version: int = 0


def declared(block):
    """Whether `block` declares its run data (Block.declare)."""
    return overrides(block, "declare")


def lay_out_run_data(blocks, refused=None):
    """Every declaring block's Slots ({name: block} in order), and the Context holding their
    values; each block's `v` bound to views into it. What a block's `declare` or `derive`
    raises (a ParamError: a value it refuses; anything else: a fault of its type) is given
    to `refused(name, error, method)`, or raised."""
    slots, values, np_, nw = {}, {}, 0, 0  # offsets in P and in the workspace
    for name, block in blocks.items():
        if not declared(block):
            continue
        data, method = RunData(), "declare"
        try:
            block.declare(data)
            data.fixed(block.p)
            method = "derive"
            values[name], facts = values_of(block, data, block.p)
        except Exception as e:  # noqa: BLE001 - reported as the block's (refused says how)
            if refused is None:
                raise
            refused(name, e, method)
            continue
        slots[name] = Slots(data, np_, nw, facts)
        np_ += data.size
        nw += sum(initial.size for _, initial in data.work_arrays)
    context = Context(np.zeros(np_))
    for name, s in slots.items():
        write(context, s, values[name])
        bind_views(blocks[name], context, s)
    return slots, context


def write(context, slots, values):
    """A block's array values ({name: array}) into the Context's P."""
    for name, (k, shape) in slots.offsets().items():
        n = values[name].size
        context.P[k:k + n] = values[name].ravel()


def bind_views(block, context, slots):
    """`block.v`: a view of the Context's P per declared array, of its declared shape."""
    block.v = SimpleNamespace(**{
        name: context.P[k:k + int(np.prod(shape, dtype=int))].reshape(shape)
        for name, (k, shape) in slots.offsets().items()})
