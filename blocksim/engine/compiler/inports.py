"""Pass 2b, inports: the shapes of the diagram's own inputs (top-level `inputs:`).

The loader makes a block of type `inport` for each input, named by it and wired to the block
inputs it feeds (`NAME.y -> target`); pass 2 builds it as any block. An exported diagram
(blocksim export) reads an inport's value from its caller; a diagram run on its own reads
the value its entry gives (`{to: ..., value: ...}`, or `--set inputs.NAME=...`), else zeros
of the shape the inputs it feeds declare (a scalar 0 when none declares one): this pass
rebuilds those inports with that shape.

Input: the DiagramSpec, the `Values` of pass 1, `Built` of pass 2, the problems list.
Output: `Built`, its unvalued inports shaped.
"""
from __future__ import annotations

import numpy as np

from ...block import Block, Out
from ...errors import DiagramError
from ...language.diagram import BlockSpec, Value, through_inputs
from ...params import Param
from .blocks import Reported, build_block


class Inport(Block):
    """One of the diagram's own inputs: y = the value set from outside the diagram.

    Its output shape is its value's. It reads the time (`time_dependent`): whatever it
    feeds is computed at every evaluation, never folded into a constant, so that a value
    set between evaluations (an FMU's input, the exported C library's set_input) is seen.
    """

    type = "inport"
    time_dependent = True
    params = (Param("value", "value", 0.0, "the value it reads when the diagram runs alone"),)

    def ports(self):
        return [], [Out("y", shape=self.p.value.shape, feedthrough=())]

    def declare(self, d):
        d.param("value")

    def output(self, t):
        self.y[0][...] = self.v.value

    # compiled form: P_value, which an exported diagram's caller overwrites
    def lower(self, c):
        from ...accel.lowering import Lowering  # the layer above: only when compiling
        return Lowering({"output": c.loop(self.p.value.size, "out_y[i] = P_value[i];")})


def shape_inports(spec, values, built, problems):
    """Rebuild each inport without a written value as zeros of its declared shape."""
    for name, targets in spec.inputs.items():
        bspec = spec.blocks.get(name)
        if bspec is None or "value" in bspec.params or name not in built.blocks:
            continue
        shape = _declared_shape(spec, built, targets)
        if not shape:
            continue
        zeros = BlockSpec(name, bspec.type, {"value": Value(np.zeros(shape).tolist(),
                                                                bspec.loc)},
                          bspec.loc, bspec.scope)
        try:
            block = build_block(Inport, zeros, spec, values, problems)
        except Reported:
            continue
        built.blocks[name] = block
        built.ports[name] = ({}, {p.name: p for p in block.ports()[1]})
    return built


def _declared_shape(spec, built, targets):
    """The shape the first of the block inputs `targets` feed (through subsystems) that
    declares one, else ()."""
    for target in targets:
        try:
            inner = through_inputs(spec.subsystems, target)
        except DiagramError:  # a port the subsystem lacks: the loader reported it
            continue
        for ep in inner:
            ins = built.ports.get(ep.block, ({}, {}))[0]
            port = ins.get(ep.port) if ep.port is not None else \
                (next(iter(ins.values())) if len(ins) == 1 else None)
            if port is not None and port.shape is not None:
                return tuple(port.shape)
    return ()
