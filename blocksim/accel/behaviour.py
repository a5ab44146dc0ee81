"""The compiled form of a block's declared behaviour (blocksim/language/behaviour.py): each
of its expressions lowered as a function block's is (accel/expression/), reading the block's
inputs as `in_NAME`, its run data as `P_NAME` and its states as `x` and `xd`, and writing its
output port, `dx` or `xd`. The numbers written in the texts are structure (a value of the
block is run data, read by name), so they go into the code, each text's in a table of its
own."""
from __future__ import annotations

import math

import numpy as np

from ..language.inplace import FUNCTIONS
from .expression import lower_expression
from .lowering import Lowering

TARGETS = {"dx": "dx", "xd": "xd", "z": "z"}  # a target that is not an output port -> its C array


def lower_behaviour(block, c):
    """The block's Lowering, from its behaviour's texts; LoweringError where one has no
    compiled form."""
    behaviour = block.behaviour
    shapes = {name: tuple(shape) for name, shape in c.shape_in.items()}
    pointers = {}
    for name, view in (vars(block.v).items() if block.v is not None else ()):
        shapes[name], pointers[name] = np.shape(view), f"P_{name}"
    ports = {**c.shape_out, **c.shape_in}
    state = ports.get(behaviour.state) if behaviour.state else None
    for name, n in (("x", c.nx), ("xd", c.nxd)):
        if n:
            shapes[name] = tuple(state) if state is not None else (n,)
            pointers[name] = name
    names = tuple(shapes)
    code, scratch = {}, 0
    for method, target, text in behaviour.texts():
        low = lower_expression(text, names, [shapes[n] for n in names], {},
                               functions=FUNCTIONS, pointers=pointers,
                               target=TARGETS.get(target, f"out_{target}"), constants="K_")
        table = (f"static const double K_[{low.constants.size}] = "
                 f"{{{', '.join(map(_literal, low.constants))}}};\n"
                 if low.constants.size else "")
        code[method] = code.get(method, "") + f"{{\n{table}{low.code}\n}}\n"
        scratch = max(scratch, low.scratch)
    return Lowering(code, scratch=scratch, doc="; ".join(
        f"{target} = {text}" for _, target, text in behaviour.texts()))


def _literal(x):
    """A double as a C literal that reads back to its bits."""
    x = float(x)
    if math.isnan(x):
        return "NAN"
    if math.isinf(x):
        return "INFINITY" if x > 0 else "-INFINITY"
    return x.hex()
