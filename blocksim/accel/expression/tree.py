"""An expression's syntax tree turned into C, operation by operation as numpy computes it.

`Lowerer` walks the tree the evaluator compiled (blocksim.language.expr), with every
sub-expression's value on sample inputs at hand (`expr.trace`): shapes, numpy scalar or
array and memory order are structure, the same for every input value, so each operation is
written for the operands numpy will hold. A sub-expression without inputs is the
evaluator's folded constant: a value, which goes into the block's numbers. Operators are
here, calls in `functions.py`.
"""
from __future__ import annotations

import ast

import numpy as np

from ..lowering import LoweringError
from .functions import lower_call
from .values import Val, c_strides, dense_strides, same_layout, strides_of

_ARITHMETIC = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
_COMPARE = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
            ast.NotEq: "!="}


class Lowerer:
    """The C of one expression: `value(node)` lowers a node (and what it needs) into
    `code` and returns where its value is. Nothing here recurses per term of a chain
    `a + b - c ...` (the evaluator takes some 2,000 terms): `dynamic` walks the tree with a
    stack, and `value` lowers a chain's partial results innermost first."""

    def __init__(self, code, source, values, inputs, functions, watch="", pointers=None):
        self.code = code
        self.source = source  # the expression's text, which the nodes' positions refer to
        self.values = values  # node -> numpy's value on the sample inputs
        self.inputs = inputs  # input name -> shape
        self.pointers = pointers or {}  # input name -> its C array, when not in_NAME
        self.direct = None  # (root node, C array its value is written to), or None
        self.functions = functions
        self.watch = watch  # C run after each inversion, with its condition number `cond`
        self._dynamic = {}
        self._chain = {}  # a chain's partial result (BinOp node) -> its value, once lowered
        self._children_end = 0

    def segment(self, node):
        """Node's text, cut at 40 characters (the evaluator's source is one line of ASCII:
        columns are characters)."""
        text = self.source[node.col_offset:node.end_col_offset]
        return text if len(text) <= 40 else text[:37] + "..."

    def refuse(self, node, why):
        return LoweringError(f"has no compiled form for '{self.segment(node)}': {why}")

    def dynamic(self, node):
        """Whether `node` depends on the inputs (else the evaluator folded it)."""
        found = self._dynamic.get(node)
        if found is None:
            order, stack = [], [node]  # parents before children
            while stack:
                n = stack.pop()
                if n not in self._dynamic:
                    order.append(n)
                    stack.extend(ast.iter_child_nodes(n))
            for n in reversed(order):  # children before parents
                self._dynamic[n] = (isinstance(n, ast.Name) and n.id in self.inputs) or any(
                    self._dynamic[child] for child in ast.iter_child_nodes(n))
            found = self._dynamic[node]
        return found

    def value(self, node):
        if node in self._chain:
            return self._chain[node]
        if not self.dynamic(node):
            return self.code.constant(self.values[node])
        if isinstance(node, ast.BinOp):  # a chain's partial results first, innermost first
            spine, left = [], node.left
            while isinstance(left, ast.BinOp) and left not in self._chain and \
                    self.dynamic(left):
                spine.append(left)
                left = left.left
            for inner in reversed(spine):
                self._chain[inner] = self.value(inner)
        method = getattr(self, "l_" + type(node).__name__, None)
        if method is None:
            raise self.refuse(node, "not an operation of the language")
        lines, start = self.code.lines, len(self.code.lines)
        val = method(node)
        own = max(start, self._children_end)  # where this operation's own code begins
        if len(lines) > own:  # named in the source by its sub-expression
            lines.insert(own, f"/* {self.segment(node).replace('*/', '* /')} */")
        self._children_end = len(lines)
        if node in self.values and not same_layout(val, self.values[node]):
            raise self.refuse(node, "its value would not be laid out as numpy's")
        return val

    def result(self, node):
        """A temporary for node's value, laid out as numpy lays it out; the target itself
        for the root's value when that is row-major (`direct`: the root, its target)."""
        value = self.values[node]
        if self.direct is not None and node is self.direct[0] and \
                dense_strides(value) == c_strides(np.shape(value)):
            root, target = self.direct
            return Val(target, np.shape(value), c_strides(np.shape(value)),
                       not isinstance(value, np.ndarray))
        return self.code.like(value)

    # -- names and operators --------------------------------------------------------------------
    def l_Name(self, node):
        shape = self.inputs[node.id]
        return Val(self.pointers.get(node.id, f"in_{node.id}"), shape, c_strides(shape))

    def l_BinOp(self, node):
        a, b = self.value(node.left), self.value(node.right)
        op = type(node.op)
        if op is ast.MatMult:
            return self.matmul(node, node.left, a, node.right, b)
        out = self.result(node)
        if op is ast.Pow and a.scalar and b.scalar:  # numpy's scalars: the C library's pow
            self.code.elementwise(out, [a, b], lambda x, y: f"pow({x}, {y})")
        elif op is ast.Pow:
            self.code.ufunc("power", out, [a, b])
        elif op is ast.Mod:
            self.code.need_ufunc("remainder")  # rt_mod
            self.code.elementwise(out, [a, b], lambda x, y: f"rt_mod({x}, {y})")
        else:
            sym = _ARITHMETIC[op]
            self.code.elementwise(out, [a, b], lambda x, y: f"{x} {sym} {y}")
        return out

    def l_UnaryOp(self, node):
        a = self.value(node.operand)
        out = self.result(node)
        form = {ast.USub: "-{}", ast.UAdd: "{}", ast.Not: "{} == 0.0 ? 1.0 : 0.0"}
        self.code.elementwise(out, [a], form[type(node.op)].format)
        return out

    def l_Compare(self, node):
        parts = [self.value(n) for n in (node.left, *node.comparators)]
        ops = [_COMPARE[type(op)] for op in node.ops]
        out = self.result(node)

        def truth(*x):
            tests = " && ".join(f"{x[k]} {op} {x[k + 1]}" for k, op in enumerate(ops))
            return f"({tests}) ? 1.0 : 0.0"
        self.code.elementwise(out, parts, truth)
        return out

    def l_BoolOp(self, node):
        parts = [self.value(n) for n in node.values]
        join = " && " if isinstance(node.op, ast.And) else " || "
        out = self.result(node)
        self.code.elementwise(out, parts, lambda *x: "(" + join.join(
            f"{v} != 0.0" for v in x) + ") ? 1.0 : 0.0")
        return out

    def l_List(self, node):
        items = [self.value(n) for n in node.elts]
        out = self.result(node)
        for k, item in enumerate(items):
            row = Val(f"{out.ptr} + {k * out.strides[0]}", out.shape[1:], out.strides[1:])
            self.code.copy(row, item)
        return out

    l_Tuple = l_List

    def l_Call(self, node):
        return lower_call(self, node)

    # -- indexing -------------------------------------------------------------------------------
    def l_Subscript(self, node):
        base = self.value(node.value)
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(parts) > base.ndim:
            raise self.refuse(node, "more indices than axes")
        shape, strides, offset, terms, checks = [], [], 0, [], []
        for d, part in enumerate(parts):
            n, s = base.shape[d], base.strides[d]
            if isinstance(part, ast.Slice):
                bounds = [None if b is None else self.whole(b, node) for b in
                          (part.lower, part.upper, part.step)]
                start, stop, step = slice(*bounds).indices(n)
                shape.append(len(range(start, stop, step)))
                strides.append(s * step)
                offset += start * s
            else:  # an index, a value (also a constant one: a number of the block's)
                k = self.index(part)
                checks.append((k, d, n))
                terms.append(f" + {k} * {s}")
        for k, d, n in checks:  # numpy's bounds checks, axis by axis, after the conversions
            self.code.emit(f"if ({k} < -{n} || {k} >= {n}) {{ "
                           + self.code.fail(f"IndexError: index %lld is out of bounds for axis {d} "
                                            f"with size {n}", k)
                           + f" }} if ({k} < 0) {k} += {n};")
        shape += base.shape[len(parts):]
        strides += base.strides[len(parts):]
        return Val(f"{base.ptr} + {offset}{''.join(terms)}", tuple(shape), tuple(strides),
                   not shape)

    def whole(self, node, subscript):
        """A slice bound (of `subscript`) as an int: it decides the slice's length, so it is
        a constant (structure)."""
        if self.dynamic(node):
            raise self.refuse(subscript, "a slice bound depending on the inputs gives a slice "
                                    "whose length changes with them")
        return int(np.asarray(self.values[node]))

    def index(self, node):
        """A C variable holding the index value of `node` (a scalar) converted as the
        evaluator converts it (a whole number, within int64)."""
        v = self.value(node)
        k = self.code.name("k")
        self.code.emit(
            f"double {k}v = {v.at([], ())}; long long {k} = 0; "
            f"if (!isfinite({k}v) || {k}v != trunc({k}v)) {{ "
            + self.code.fail("an index must be an integer, got %s", f"rt_pyg({k}v, msg_)")
            + f" }} if (fabs({k}v) >= 9223372036854775808.0) {{ "
            + self.code.fail("index %g is out of bounds", f"{k}v")
            + f" }} {k} = (long long){k}v;")
        return k

    # -- products -------------------------------------------------------------------------------
    def matmul(self, node, left, a, right, b):
        """numpy.matmul of a vector or matrix by a vector or matrix: numpy's BLAS call for
        numpy's strides (those of one-element axes included: they steer its choice)."""
        if not (1 <= a.ndim <= 2 and 1 <= b.ndim <= 2):
            raise self.refuse(node, "a product of arrays of more than two axes")
        sa, sb = self.np_strides(left, a), self.np_strides(right, b)
        m, a_m, a_n = (1, 0, sa[0]) if a.ndim == 1 else (a.shape[0], *sa)
        p, b_n, b_p = (1, sb[0], 0) if b.ndim == 1 else (b.shape[1], *sb)
        out = self.result(node)
        self.code.emit(f"rt_matmul_ex({a.ptr}, {a_m}, {a_n}, {b.ptr}, {b_n}, {b_p}, {m}, "
                       f"{a.shape[-1]}, {p}, {out.ptr});")
        return out

    def np_strides(self, node, val):
        """numpy's strides of node's value (`val`'s, and numpy's own along one-element axes,
        which address nothing but steer numpy's choice of BLAS call)."""
        if node in self.values and isinstance(self.values[node], np.ndarray):
            return strides_of(self.values[node])
        return val.strides
