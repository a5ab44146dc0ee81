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
lists of values (stacked), the element-wise functions (numpy's ufuncs: sin ... hypot, abs,
sign, floor ...), min and max of two arguments, clip, where and sum; anything else is an
ExprError (a block's behaviour that needs more keeps hand-written methods).
"""
from __future__ import annotations

import ast
import functools
import math
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
    """`run(t)` computing expression `text` of the named `arrays` (name -> ndarray, read at
    every call) into `out` (an array of the expression's size; reshaped to its shape).
    Raises ExprError for what it does not take."""
    plan = _plan(text, tuple((name, a.shape) for name, a in arrays.items()))
    if out.size != plan.size:
        raise expr.ExprError(f"its value has shape {plan.shape}, its target {np.shape(out)}")
    target = out if out.shape == plan.shape else out.reshape(plan.shape)
    if target is not out and not np.may_share_memory(target, out):
        raise expr.ExprError(f"its target {np.shape(out)} cannot take shape {plan.shape} "
                             "in place")
    return plan.bind(arrays, target, plan.reads_after_write(
        {name for name, a in arrays.items() if np.may_share_memory(target, a)}))


@functools.lru_cache(maxsize=1024)
def _plan(text, shapes):
    """The program of `text` for arrays of these (name, shape): made once per text and
    shapes (a diagram's many gains share one), bound to each block's arrays after."""
    names = tuple(name for name, _ in shapes)
    rng = np.random.default_rng(0)  # zeros, else the samples a function block's infer tries
    for args in ([np.zeros(s) for _, s in shapes],
                 [np.asarray(rng.uniform(0.5, 1.5, s)) for _, s in shapes]):
        try:
            root, values, _ = expr.trace(text, names, {}, args, functions=FUNCTIONS)
            break
        except (ArithmeticError, LookupError, ValueError, TypeError) as e:
            failure = e
    else:
        raise expr.ExprError(f"fails on every sample: {failure}")
    plan = _Plan(values, set(names), np.shape(values[root]))
    plan.into(root, _OUT)
    return plan


# the operands of a plan's steps: ("in", name) a named array, _OUT the target, ("temp", k)
# a temporary, ("item", operand, k) an item of a stacked one, ("value", v) a constant
_OUT = ("out",)


class _Plan:
    """The steps of one expression, in the order they run: (numpy function, operands,
    keyword operands), operands symbolic until `bind`."""

    def __init__(self, values, names, shape):
        self.values, self.names, self.shape = values, names, shape
        self.size = math.prod(shape)
        self.steps = []
        self.temps = []  # (shape, dtype) of each temporary

    def bind(self, arrays, target, read):
        """The plan as a function of the time (which it does not read) on these arrays:
        the block's method itself. `read`: steps read the target (as one of the arrays: a
        discrete state's update) after writing it, so the value is made apart and copied
        into it at the end."""
        temps = [np.empty(shape, dtype) for shape, dtype in self.temps]
        out = np.empty(self.shape) if read else target

        def real(operand):
            if not isinstance(operand, tuple):  # a number of the step itself (0.0)
                return operand
            kind = operand[0]
            if kind == "in":
                return arrays[operand[1]]
            if kind == "out":
                return out
            if kind == "temp":
                return temps[operand[1]]
            if kind == "item":  # item k of a stacked value: a view
                return real(operand[1])[operand[2], ...]
            return operand[1]  # a value
        steps = [_call(fn, tuple(map(real, args)), {k: real(v) for k, v in kwargs.items()})
                 for fn, args, kwargs in self.steps]
        if read:
            steps.append(_call(np.copyto, (target, out), {}))
        return _sequence(steps)

    def reads_after_write(self, names):
        """Whether a step from the first that writes the target on reads one of the arrays
        `names` (they share the target's memory: a discrete state's update). A value read
        only before (x[k+1] = A @ x + B @ u: both products made first) needs no copy."""
        written = False
        for fn, args, kwargs in self.steps:
            operands = list(_operands((*args, *kwargs.values())))
            written = written or any(op is _OUT for op in operands)
            if written and any(op[0] == "in" and op[1] in names for op in operands):
                return True
        return False

    def dynamic(self, node):
        return any(isinstance(n, ast.Name) and n.id in self.names for n in ast.walk(node))

    def temp(self, shape, dtype=float):
        self.temps.append((shape, dtype))
        return ("temp", len(self.temps) - 1)

    def operand(self, node):
        """Where node's value is: a named array, a constant, or a temporary the steps fill."""
        if isinstance(node, ast.Name) and node.id in self.names:
            return ("in", node.id)
        if not self.dynamic(node):
            return ("value", self.values[node])
        temp = self.temp(np.shape(self.values[node]))
        self.into(node, temp)
        return temp

    def step(self, fn, *args, **kwargs):
        self.steps.append((fn, args, kwargs))

    def into(self, node, out):
        """The steps writing node's value into `out` (an operand)."""
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
            self.joined(tests, np.logical_and, out, node)
        elif kind is ast.BoolOp:
            parts = [self.operand(n) for n in node.values]
            join = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
            self.joined([(np.not_equal, p, 0.0) for p in parts], join, out, node)
        elif kind is ast.Call:
            self.call(node, out)
        elif kind in (ast.List, ast.Tuple):  # items stacked along a new first axis
            for k, item in enumerate(node.elts):
                self.into(item, ("item", out, k))
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

    def joined(self, tests, join, out, node):
        """Truth values (1.0 / 0.0) of `tests` ((ufunc, a, b) each) joined by `join`."""
        if len(tests) == 1:
            self.step(*tests[0], out=out)
            return
        temps = [self.temp(np.shape(self.values[node])) for _ in tests]
        for test, temp in zip(tests, temps):
            self.step(*test, out=temp)
        self.step(join, temps[0], temps[1], out=out)
        for temp in temps[2:]:
            self.step(join, out, temp, out=out)

    def call(self, node, out):
        name = node.func.id
        fn = FUNCTIONS[name].fn
        args = [] if name == "where" else [self.operand(a) for a in node.args]
        if isinstance(fn, np.ufunc):
            self.step(fn, *args, out=out)
        elif name in _CALLS and len(args) == 2:
            self.step(_CALLS[name], *args, out=out)
        elif name == "clip":
            self.step(np.clip, *args, out=out)
        elif name == "sum":
            self.step(np.sum, args[0], out=out)
        elif name == "where":  # the else-branch written into out last of the operands
            cond, a, b = node.args
            mask = self.temp(np.shape(self.values[cond]), bool)
            if isinstance(cond, ast.Compare) and len(cond.ops) == 1 and self.dynamic(cond):
                left, right = self.operand(cond.left), self.operand(cond.comparators[0])
                self.step(_COMPARE[type(cond.ops[0])], left, right, out=mask)
            else:
                self.step(np.not_equal, self.operand(cond), 0.0, out=mask)
            a = self.operand(a)
            if np.shape(self.values[b]) == np.shape(self.values[node]):
                self.into(b, out)
            else:  # a smaller else-branch: made, then broadcast
                self.step(np.copyto, out, self.operand(b))
            self.step(np.copyto, out, a, where=mask)
        else:
            raise expr.ExprError(f"{name}() has no in-place form")


def _operands(operands):
    """The symbolic operands among `operands`, those an item is taken of included."""
    for operand in operands:
        while isinstance(operand, tuple):
            yield operand
            operand = operand[1] if operand[0] == "item" else None


def _call(fn, args, kwargs):
    """One numpy call as a function of nothing, its operands held by the closure (a
    partial's keywords would be copied at every call)."""
    if set(kwargs) == {"out"}:
        out = kwargs["out"]
        if len(args) == 1:
            a, = args
            return lambda: fn(a, out=out)
        if len(args) == 2:
            a, b = args
            return lambda: fn(a, b, out=out)
    if fn is np.copyto and set(kwargs) == {"where"}:
        (dst, src), where = args, kwargs["where"]
        return lambda: fn(dst, src, where=where)
    return functools.partial(fn, *args, **kwargs)


def _sequence(steps):
    """The calls one after the other as a function of the time (the block's method)."""
    if len(steps) == 1:
        s0, = steps
        return lambda t: s0()
    if len(steps) == 2:
        s0, s1 = steps

        def run(t):
            s0()
            s1()
        return run
    steps = tuple(steps)

    def run(t):
        for step in steps:
            step()
    return run


def _scalar_power(a, b, out):
    out[...] = operator.pow(a[()], b[()])
