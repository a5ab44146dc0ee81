"""A `function` block's expression in compiled code (accelerated mode).

The expression language is closed, so it lowers directly: `lower_expression` traces the
expression once on sample inputs (`expr.trace`: every sub-expression's shape, numpy scalar or
array, memory order), then writes C that computes each operation as numpy computes it on
such operands (`tree.py` operators and indexing, `functions.py` the functions, `writer.py`
the loops, constants and temporaries). Constants and parameters are values: they are the
block's numbers (its run data `P_constants`), never in the source, except where they decide
a shape (slice bounds, reshape sizes). What cannot be mirrored soundly is refused (LoweringError naming the
operation): the block then runs in normal mode.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...language import expr
from ..lowering import LoweringError
from .tree import Lowerer
from .values import Val, c_strides
from .writer import Code

# what evaluating an expression on sample inputs may raise (the evaluator's and numpy's)
_FAILURES = (expr.ExprError, ArithmeticError, LookupError, ValueError, TypeError)


@dataclass
class ExpressionCode:
    """C statements computing the expression into `out_y`, the numbers they read as
    `P_constants` and the size of the scratch `T` their temporaries use."""
    code: str
    constants: np.ndarray
    scratch: int


def lower_expression(text, inputs, shapes, names, *, functions, dotted=None, watch="",
                     pointers=None, target="out_y", constants="P_constants"):
    """The compiled form of expression `text` of the inputs `inputs` (names) of `shapes`,
    with parameters `names`; LoweringError where it has none. `watch`: C statements of a
    block that watches the matrices its expression inverts, run after each inv and pinv
    with `cond` the condition number of the matrix inverted (inv: kappa_1 from numpy's
    column sums; pinv: s_max / s_min). `pointers`: the C arrays of inputs not read as
    `in_NAME` (a block's run data P_NAME, its states); `target`: the C array the value is
    written to; `constants`: the C name of the array of its numbers."""
    rng = np.random.default_rng(0)  # the samples the function block's infer tries
    samples = ([np.zeros(s) for s in shapes],
               [np.asarray(rng.uniform(0.5, 1.5, s)) for s in shapes])
    for args in samples:
        try:
            root, values, source = expr.trace(text, inputs, names, args,
                                              functions=functions, dotted=dotted)
            break
        except _FAILURES:
            continue
    else:
        raise LoweringError("has an expression that fails on every sample input")
    code = Code(constants)
    lowerer = Lowerer(code, source, values, dict(zip(inputs, map(tuple, shapes))), functions,
                      watch, pointers or {})
    if target not in lowerer.pointers.values():  # nothing the expression reads: written
        lowerer.direct = root, target            # by the last operation itself
    value = lowerer.value(root)
    out_shape = np.shape(values[root])
    if value.ptr != target:
        code.copy(Val(target, out_shape, c_strides(out_shape)), value)
    constants = np.concatenate(code.params) if code.params else np.zeros(0)
    return ExpressionCode("\n".join(["char msg_[32]; (void)msg_;", *code.lines]), constants,
                          code.nwork)
