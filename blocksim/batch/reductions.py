"""The metrics of a batch of runs at once, where their form allows it.

A metric such as `max(abs(e)) - 0.1`, `min(x)` or `final(x)` reduces each run's rows (their
largest or smallest element, the last row) after element-wise arithmetic of the signals
(+ - * /, abs, sqrt, sign, floor, ceil, trunc: each row's result depends on that row alone
and is exactly rounded), then combines the reductions with numbers (+ - * /). Evaluated on
the rows of every run of a batch laid end to end (one numpy call per operation for the whole
batch), reduced per run (`np.maximum.reduceat`, each run's last row) and combined, it gives
each run the number that evaluating it on that run alone gives: the same operations on the
same elements. Every other metric (time averages, sums, indexing, argmax, ...) is evaluated
run by run by `Metrics`, as is every metric of a run when one of these cannot be computed at
once (its message then is the one `Metrics` gives).
"""
from __future__ import annotations

import ast
import operator
import warnings

import numpy as np

from ..language.expr import ExprError, compile_expr
from .metrics import METRIC_FUNCTIONS, Metrics

ELEMENTWISE = ("abs", "sqrt", "sign", "floor", "ceil", "trunc")
REDUCTIONS = {"max": np.maximum, "min": np.minimum, "final": None}
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}


class _Reduced:
    """One metric as numbers and per-run reductions of element-wise expressions combined by
    + - * /; `of(text, inputs)` is None for a metric of another form."""

    def __init__(self, inputs):
        self.inputs = inputs
        self.parts = []  # (reducing ufunc or None for the last row, element-wise callable)
        self.reads = set()  # the inputs its parts read

    @classmethod
    def of(cls, text, inputs):
        try:
            tree = ast.parse(text.strip(), mode="eval").body
        except SyntaxError:
            return None
        reduced = cls(inputs)
        try:
            reduced.tree = reduced._outer(tree)
        except (_Other, ExprError):
            return None
        return reduced if reduced.parts else None

    def _outer(self, node):
        """The tree with each reduction replaced by its index in self.parts."""
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return (_OPS[type(node.op)], self._outer(node.left), self._outer(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return (_UNARY[type(node.op)], self._outer(node.operand))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in REDUCTIONS and node.func.id not in self.inputs and \
                len(node.args) == 1 and not node.keywords:
            return self._part(REDUCTIONS[node.func.id], node.args[0])
        if isinstance(node, ast.Subscript) and _is_last(node.slice):
            return self._part(None, node.value)
        raise _Other

    def _part(self, ufunc, node):
        self._elementwise(node)
        f = compile_expr(ast.unparse(node), self.inputs, {}, functions=METRIC_FUNCTIONS,
                         inputs_shadow=True)
        self.parts.append((ufunc, f))
        return _Part(len(self.parts) - 1)

    def _elementwise(self, node):
        if isinstance(node, ast.Name) and node.id in self.inputs:
            self.reads.add(node.id)
            return
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            self._elementwise(node.left)
            self._elementwise(node.right)
            return
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            self._elementwise(node.operand)
            return
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ELEMENTWISE and node.func.id not in self.inputs and \
                len(node.args) == 1 and not node.keywords:
            self._elementwise(node.args[0])
            return
        raise _Other

    def __call__(self, arrays, starts, ends):
        """The metric of every run: arrays hold the runs' rows end to end; run k's rows are
        starts[k]:ends[k]. ValueError when it cannot be computed at once."""
        total = len(arrays[0])
        values = []
        for ufunc, f in self.parts:
            v = np.asarray(f(*arrays), dtype=float)
            if v.ndim == 0 or v.shape[0] != total:
                raise ValueError("not one row per recorded time")
            if ufunc is None:
                if v.ndim != 1:
                    raise ValueError("the last row is not one number")
                values.append(v[ends - 1])
            else:
                r = ufunc.reduceat(v, starts, axis=0)
                values.append(ufunc.reduce(r.reshape(len(starts), -1), axis=1))
        return _combine(self.tree, values)


class _Other(Exception):
    """A metric not of the reducing form."""


class _Part:
    """The place of a reduction in a metric's tree: its index among the parts."""
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


def _is_last(index):
    value = index.value if isinstance(index, ast.Constant) else None
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub) and \
            isinstance(index.operand, ast.Constant):
        value = -index.operand.value
    return type(value) is int and value == -1


def _combine(tree, values):
    """The metric of every run from its tree: numbers, _Parts and (operator, operands)."""
    if isinstance(tree, tuple):
        op, *args = tree
        return op(*(_combine(a, values) for a in args))
    return values[tree.index] if isinstance(tree, _Part) else tree


class BatchMetrics:
    """A sweep's metrics over the runs of a batch: those of the reducing form at once
    (`of_batch`), the others run by run (`of_run`)."""

    def __init__(self, texts, names):
        inputs = ("t", *[n for n in names if n != "t"])
        self.names = inputs[1:]
        self.order = list(texts)
        self.reduced = {}
        for name, text in texts.items():
            reduced = _Reduced.of(text, inputs)
            if reduced is not None:
                self.reduced[name] = reduced
        self.rest = Metrics({n: t for n, t in texts.items() if n not in self.reduced}, names)
        self.full = Metrics(texts, names)
        # the recorded signals of_batch reads, when no metric is run by run (None: all)
        self.reads = None if self.rest.functions else \
            set().union(*(r.reads for r in self.reduced.values())) - {"t"}

    def of_batch(self, t, data, starts, ends):
        """{metric: array of one value per run, or None when it cannot be computed at once}
        over the runs' rows laid end to end (run k's are starts[k]:ends[k])."""
        arrays = (t, *[data.get(n) for n in self.names])  # those not read may be absent
        out = {}
        with np.errstate(all="ignore"), warnings.catch_warnings():  # as Metrics.evaluate
            warnings.simplefilter("ignore", RuntimeWarning)
            for name, reduced in self.reduced.items():
                try:
                    out[name] = reduced(arrays, starts, ends)
                except (ValueError, TypeError, IndexError, ArithmeticError):
                    out[name] = None
        return out

    def at_once(self, batch_values):
        """Whether `of_run` takes every metric from `batch_values` (no run's rows read)."""
        return not self.rest.functions and all(v is not None for v in batch_values.values())

    def of_run(self, batch_values, k, rows):
        """{metric: float} of run k of a batch (`batch_values` from `of_batch`), in the
        metrics' order; `rows()` gives its (t, data), asked only when a metric is computed
        run by run. ValueError naming a metric that cannot be computed."""
        if any(v is None for v in batch_values.values()):
            return self.full.evaluate(*rows())
        found = self.rest.evaluate(*rows()) if self.rest.functions else {}
        found.update((name, float(v[k])) for name, v in batch_values.items())
        return {name: found[name] for name in self.order}
