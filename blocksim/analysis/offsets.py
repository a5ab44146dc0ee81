"""Constants added to signals of a compiled model: the free inputs of a trim, the inputs of an
operating point (`run --op`, `linearize --op`). Each is one extra computation, y = u + value,
placed in the model's execution order right after the signal's own, and the inputs it
perturbs are bound to its output instead: a model without offsets runs exactly as compiled.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..block import Block
from ..engine.compiler import Node
from ..engine.compiler.layout import indexed
from ..errors import DiagramError
from ..language.diagram import Loc, parse_endpoint, through_outputs
from .signals import consumers


class Offset(Block):
    """y = u + value, u the signal it reads (not a block of the diagram)."""

    type = "offset"

    def __init__(self, name, source, value):
        super().__init__(name, {})
        self.source = source
        self.value = value
        self.buffer = np.array(source, dtype=float)

    def output(self, t):
        np.add(self.source, self.value, out=self.buffer)


def add_offset(model, signal):
    """Perturb `signal` (an analysis.signals.Signal) of `model` in place by a constant; returns
    the array of the whole port signal's shape to write the constant into (zeros now; only
    the elements `signal` selects may be set). The model then runs in normal mode: the
    offsets have no compiled form (DiagramError when accelerated mode is asked for)."""
    if model.settings.mode == "accelerated":
        raise DiagramError(f"'{signal.text}' gets a constant added (an operating point's "
                           "input), which runs in normal mode only", file="--op",
                           hint="give --mode normal (or auto)")
    model.settings = dataclasses.replace(model.settings, mode="normal")
    if signal.output:
        (block, port), = signal.ends
        source = model.outputs[(block, port)]
        value = np.zeros(source.shape)
        offset = _insert(model, signal.text, source, value, block, port)
        for dst, dport, index in consumers(model, block, port):
            _rebind(model, dst, dport, indexed(offset.buffer, index))
        _rerecord(model, block, port, offset.buffer)
        return value
    value = None
    for block, port in signal.ends:
        owner = _block(model, block)
        source = owner.u[list(model.ports[block][0]).index(port)]
        value = np.zeros(np.shape(source)) if value is None else value
        driver = model.drivers.get((block, port))
        offset = _insert(model, signal.text, source, value, *(driver[:2] if driver else ("", "")))
        _rebind(model, block, port, offset.buffer)
    return value


def _insert(model, text, source, value, block, port):
    """A new Offset whose computation follows the one of block.port (first when none
    computes it: a state, an unwired input's default)."""
    offset = Offset(f"{text} (offset)", source, value)
    node = Node(offset, "output", [], ())
    at = next((k + 1 for k, n in enumerate(model.nodes)
               if n.block.name == block and port in n.ports), 0)
    while at < len(model.nodes) and isinstance(model.nodes[at].block, Offset):
        at += 1  # after the offsets of the same signal, which this one may read
    model.nodes.insert(at, node)
    return offset


def _block(model, name):
    return next(b for b in model.blocks if b.name == name)


def _rebind(model, name, port, view):
    """Bind input `port` of block `name` to `view` (its other views unchanged), and refresh
    the model's lists of sink and stop inputs, which hold the views bound before."""
    block = _block(model, name)
    u = list(block.u)
    u[list(model.ports[name][0]).index(port)] = view
    block.bind(tuple(u), block.y, block.x, block.dx, block.xd)
    model.sinks = [(b, list(b.u)) for b, _ in model.sinks]
    model.stops = [b.u[0] for b in model.blocks if b.stops]


def _rerecord(model, block, port, buffer):
    """Records of an output that is perturbed record the perturbed signal."""
    for name, (view, text) in list(model.record.items()):
        ep = through_outputs(model.spec.subsystems, parse_endpoint(text, Loc(f"record {name}")))
        lone = ep.port or next(iter(model.ports[ep.block][1]))
        if (ep.block, lone) == (block, port):
            model.record[name] = (indexed(buffer, ep.index), text)
