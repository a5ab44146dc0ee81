"""The compiled form of a block's declared behaviour (blocksim/language/behaviour.py): each
of its expressions lowered as a function block's is (accel/expression/), reading the block's
inputs as `in_NAME`, its run data as `P_NAME` and its states as `x` and `xd`, and writing its
output port, `dx` or `xd`. The numbers written in the texts are structure (a value of the
block is run data, read by name), so they go into the code, each text's in a table of its
own."""
from __future__ import annotations

import functools
import math

import numpy as np

from ..language.behaviour import PORT_METHODS
from ..language.inplace import FUNCTIONS
from .expression import lower_expression
from .lowering import Lowering, double_table


def lower_behaviour(block, c):
    """The block's Lowering, from its behaviour's texts; LoweringError where one has no
    compiled form."""
    behaviour = block.behaviour
    shapes = {name: (math.prod(shape),) if name in behaviour.flat else tuple(shape)
              for name, shape in c.shape_in.items()}
    pointers = {}
    for name, view in (vars(block.v).items() if block.v is not None else ()):
        shapes[name], pointers[name] = np.shape(view), f"P_{name}"
    ports = {**c.shape_out, **c.shape_in}
    state = ports.get(behaviour.state) if behaviour.state else None
    for name, n in (("x", c.nx), ("xd", c.nxd)):
        if n or (state is None and name not in shapes):  # as language/behaviour.py's
            shapes[name] = tuple(state) if state is not None else (n,)
            pointers[name] = name
    arrays = tuple((name, shape, pointers.get(name)) for name, shape in shapes.items())
    code, scratch = {}, 0
    for method, target, text in behaviour.texts():
        # an output port's C array, else the state's own (dx, xd, z)
        c_code, need = _lowered(text, arrays, f"out_{target}" if method in PORT_METHODS
                                else target)
        code[method] = code.get(method, "") + c_code
        scratch = max(scratch, need)
    return Lowering(code, scratch=scratch, doc="; ".join(
        f"{target} = {text}" for _, target, text in behaviour.texts()))


@functools.lru_cache(maxsize=1024)
def _lowered(text, arrays, target):
    """(C statements, scratch) of `text` of `arrays` ((name, shape, C array or None for
    in_NAME) each) written into `target`: made once per text and shapes (a diagram's many
    gains share one)."""
    names = tuple(name for name, _, _ in arrays)
    low = lower_expression(text, names, [shape for _, shape, _ in arrays], {},
                           functions=FUNCTIONS, target=target, constants="K_",
                           pointers={name: c for name, _, c in arrays if c is not None})
    table = double_table("K_", low.constants) + "\n" if low.constants.size else ""
    return f"{{\n{table}{low.code}\n}}\n", low.scratch

