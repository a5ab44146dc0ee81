"""An expression of the language as a fixed program of numpy calls writing into arrays given
once: the interpreted form of a block's declared behaviour (blocksim/language/behaviour.py).

`compile_inplace(text, arrays, out)` traces the expression once on the arrays' current values
(`expr.trace`: every sub-expression's shape and kind) and returns `run()`, which computes it
into `out` with one numpy call per operation, each writing into a temporary made here (or
into `out` for the last). The arrays are read where they lie (views: a port, a parameter in
the run's values), so `run` does no parsing, no lookups and no allocation. Each operation is
the one the evaluator performs (its ufunc, its order of operations), so the values are the
evaluator's to the bit, and those of the expression's compiled form (accel/expression/),
which mirrors the evaluator on the same trace.

It takes the element-wise part of the language: + - * / ** % @, comparisons, and, or, not,
lists of values (stacked), the element-wise functions (numpy's ufuncs: sin ... hypot, abs, sign, floor ...), min and max
of two arguments, clip, where and sum; anything else is an ExprError (a block's behaviour
that needs more keeps hand-written methods).
"""
from __future__ import annotations

import ast
import functools
import operator

import numpy as np

from . import expr

FUNCTIONS = expr.FUNCTIONS | expr.MATRIX_FUNCTIONS

_BINARY = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.divide,
           ast.Pow: np.power, ast.Mod: np.remainder, ast.MatMult: np.matmul}
_UNARY = {ast.USub: np.negative, ast.UAdd: np.positive}
_COMPARE = {ast.Lt: np.less, ast.LtE: np.less_equal, ast.Gt: np.greater,
            ast.GtE: np.greater_equal, ast.Eq: np.equal, ast.NotEq: np.not_equal}
_CALLS = {"min": np.minimum, "max": np.maximum}  # of two arguments (one: a reduction)


def compile_inplace(text, arrays, out):
    """`run()` computing expression `text` of the named `arrays` (name -> ndarray, read at
    every call) into `out` (an array of the expression's size; reshaped to its shape).
    Raises ExprError for what it does not take."""
    names = tuple(arrays)
    root, values, _ = expr.trace(text, names, {}, [arrays[n] for n in names],
                                 functions=FUNCTIONS)
    program = _Program(values, arrays)
    shape = np.shape(values[root])
    if np.size(out) != np.prod(shape, dtype=int):
        raise expr.ExprError(f"'{text}' has shape {shape}, for {np.shape(out)}")
    target = out.reshape(shape)
    if not np.shares_memory(target, out):
        raise expr.ExprError(f"'{text}': its target cannot take shape {shape} in place")
    program.into(root, target)
    return program.run()


class _Program:
    """The steps (partials of numpy calls) of one expression, in the order they run."""

    def __init__(self, values, arrays):
        self.values, self.arrays = values, arrays
        self.steps = []

    def run(self):
        """The program as a function of the time (which it does not read): the block's
        method itself."""
        if len(self.steps) == 1:
            return _direct(*self.steps[0])
        steps = tuple(functools.partial(fn, *args, **kwargs) for fn, args, kwargs in self.steps)

        def run(t):
            for step in steps:
                step()
        return run

    def dynamic(self, node):
        return any(isinstance(n, ast.Name) and n.id in self.arrays for n in ast.walk(node))

    def operand(self, node):
        """Where node's value is: a named array, a constant, or a temporary the steps fill."""
        if isinstance(node, ast.Name) and node.id in self.arrays:
            return self.arrays[node.id]
        if not self.dynamic(node):
            return self.values[node]
        temp = np.empty(np.shape(self.values[node]))
        self.into(node, temp)
        return temp

    def step(self, fn, *args, **kwargs):
        self.steps.append((fn, args, kwargs))

    def into(self, node, out):
        """The steps writing node's value into `out`."""
        kind = type(node)
        if not self.dynamic(node) or (kind is ast.Name):
            self.step(np.copyto, out, self.operand(node))
        elif kind is ast.BinOp:
            self.binary(node, out)
        elif kind is ast.UnaryOp:
            a = self.operand(node.operand)
            if isinstance(node.op, ast.Not):
                self.step(np.equal, a, 0.0, out=out)
            else:
                self.step(_UNARY[type(node.op)], a, out=out)
        elif kind is ast.Compare:
            parts = [self.operand(n) for n in (node.left, *node.comparators)]
            tests = [(_COMPARE[type(op)], a, b) for op, a, b in zip(node.ops, parts, parts[1:])]
            self.joined(tests, np.logical_and, out)
        elif kind is ast.BoolOp:
            parts = [self.operand(n) for n in node.values]
            join = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
            self.joined([(np.not_equal, p, 0.0) for p in parts], join, out)
        elif kind is ast.Call:
            self.call(node, out)
        elif kind in (ast.List, ast.Tuple):  # items stacked along a new first axis
            for k, item in enumerate(node.elts):
                self.into(item, out[k, ...])
        else:
            raise expr.ExprError(f"'{ast.unparse(node)}' has no in-place form")

    def binary(self, node, out):
        a, b = self.operand(node.left), self.operand(node.right)
        op = type(node.op)
        if op is ast.Pow and not isinstance(self.values[node.left], np.ndarray) and \
                not isinstance(self.values[node.right], np.ndarray):
            # numpy's scalars: their own power (the C library's), as the evaluator's
            self.step(_scalar_power, a, b, out)
        else:
            self.step(_BINARY[op], a, b, out=out)

    def joined(self, tests, join, out):
        """Truth values (1.0 / 0.0) of `tests` ((ufunc, a, b) each) joined by `join`."""
        if len(tests) == 1:
            self.step(*tests[0], out=out)
            return
        temps = [np.empty(out.shape) for _ in tests]
        for test, temp in zip(tests, temps):
            self.step(*test, out=temp)
        self.step(join, temps[0], temps[1], out=out)
        for temp in temps[2:]:
            self.step(join, out, temp, out=out)

    def call(self, node, out):
        name = node.func.id
        fn = FUNCTIONS[name].fn
        args = [self.operand(a) for a in node.args]
        if isinstance(fn, np.ufunc):
            self.step(fn, *args, out=out)
        elif name in _CALLS and len(args) == 2:
            self.step(_CALLS[name], *args, out=out)
        elif name == "clip":
            self.step(np.clip, *args, out=out)
        elif name == "sum":
            self.step(np.sum, args[0], out=out)
        elif name == "where":
            mask = np.empty(np.shape(args[0]), dtype=bool)
            self.step(np.not_equal, args[0], 0.0, out=mask)
            self.step(np.copyto, out, args[2])
            self.step(np.copyto, out, args[1], where=mask)
        else:
            raise expr.ExprError(f"{name}() has no in-place form")


def _direct(fn, args, kwargs):
    """One call as a function of the time, its operands held by the closure (the commonest
    programs: a gain, a sum of two)."""
    out = kwargs.get("out")
    if set(kwargs) == {"out"} and len(args) == 1:
        a, = args
        return lambda t: fn(a, out=out)
    if set(kwargs) == {"out"} and len(args) == 2:
        a, b = args
        return lambda t: fn(a, b, out=out)
    step = functools.partial(fn, *args, **kwargs)
    return lambda t: step()


def _scalar_power(a, b, out):
    out[...] = operator.pow(a[()], b[()])
