"""Statements and conditions on top of the expression language (a chart's actions and guards).

An action is assignments separated by `;` or line breaks: `name = expr`, `name[index] =
expr` (indices as in expressions: integers, or slices with constant bounds), and the
shorthands `+=`, `-=`, `*=`, `/=`. Nothing else: no calls for their effect, no control flow.
The right-hand sides are expressions, compiled later by `expr.compile_expr`, so an action
is read with Python's parser and checked node by node like an expression; nothing is
executed here.

A condition is an expression. `comparisons(text)` splits one made of comparisons joined by
`and`, `or`, `not` into its comparisons, each with the two sides whose difference is its
zero-crossing indicator (positive where the comparison holds) and the direction in which
that indicator makes the condition true, so that a continuous chart can locate the instant
the condition becomes true.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from .expr import MAX_TEXT, ExprError

RISING, FALLING = 1, -1  # as blocksim.block's directions

_AUGMENTED = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
_ORIENTED = {ast.Gt: False, ast.GtE: False, ast.Lt: True, ast.LtE: True}  # True: right - left


@dataclass(frozen=True)
class Assignment:
    """`target[index] = value`: `index` is () or one entry per axis, each an expression's
    text or a slice as a triple of texts (None where a bound is left out)."""
    target: str
    index: tuple
    value: str
    text: str  # the statement as written


@dataclass(frozen=True)
class Comparison:
    """One comparison of a condition: `left op right` holds where `indicator` > 0 (or >= 0),
    the indicator being `plus - minus`; `direction` is RISING when the condition becomes
    true as the comparison becomes true, FALLING when it does as the comparison fails
    (under a `not`)."""
    plus: str
    minus: str
    op: str
    direction: int
    text: str


def _source(text, what):
    """`text` checked as the expression language checks its text, lines stripped."""
    if not isinstance(text, str):
        raise ExprError(f"{what} must be a string, got {type(text).__name__}")
    if len(text) > MAX_TEXT:
        raise ExprError(f"the {what} is longer than {MAX_TEXT:,} characters")
    if not text.isascii():
        ch = next(ch for ch in text if not ch.isascii())
        raise ExprError(f"character '{ch}' (U+{ord(ch):04X}) is not allowed: {what}s are ASCII")
    if "#" in text:
        raise ExprError(f"'#' is not allowed in an {what}")
    source = "\n".join(line.strip() for line in text.replace("\r", "\n").split("\n"))
    if not source.strip():
        raise ExprError(f"empty {what}")
    return source


def _segment(source, node):
    return ast.get_source_segment(source, node) or ""


def parse_action(text):
    """The assignments of an action, in order (ExprError naming the statement at fault)."""
    source = _source(text, "action")
    try:
        tree = ast.parse(source, mode="exec")
    except SyntaxError as e:
        raise ExprError(f"syntax error in the action at line {e.lineno or 1}, column "
                        f"{e.offset or 1}: {e.msg}") from None
    except (MemoryError, RecursionError):
        raise ExprError("the action is nested too deeply") from None
    return [_assignment(source, node) for node in tree.body]


def _assignment(source, node):
    text = _segment(source, node)
    if isinstance(node, ast.Assign):
        if len(node.targets) != 1:
            raise ExprError(f"'{text}': one target per assignment (a = b = c is not allowed)")
        target, value = node.targets[0], _segment(source, node.value)
    elif isinstance(node, ast.AugAssign) and type(node.op) in _AUGMENTED:
        target = node.target
        value = f"{_segment(source, target)} {_AUGMENTED[type(node.op)]} ({_segment(source, node.value)})"
    else:
        raise ExprError(f"'{text}' is not an assignment: an action is statements "
                        "`name = expression` separated by ';'")
    if isinstance(target, ast.Name):
        return Assignment(target.id, (), value, text)
    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
        parts = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
        index = tuple(tuple(None if b is None else _segment(source, b)
                            for b in (p.lower, p.upper, p.step))
                      if isinstance(p, ast.Slice) else _segment(source, p) for p in parts)
        return Assignment(target.value.id, index, value, text)
    raise ExprError(f"'{text}': the target of an assignment is a name or an indexed name "
                    "(u, q[0], M[1, 0:2])")


def comparisons(text):
    """The comparisons of condition `text`, made of comparisons joined by and/or/not
    (ExprError for any other part: a value whose truth could not be located in time)."""
    source = _source(text, "condition")
    try:
        tree = ast.parse(source.replace("\n", " "), mode="eval")
    except SyntaxError as e:
        raise ExprError(f"syntax error at column {e.offset or 1}: {e.msg}") from None
    except (MemoryError, RecursionError):
        raise ExprError("the condition is nested too deeply") from None
    found = []
    _walk(source.replace("\n", " "), tree.body, RISING, found, 0)
    return found


def _walk(source, node, direction, found, depth):
    if depth > 100:
        raise ExprError("the condition is nested too deeply")
    if isinstance(node, ast.BoolOp):
        for value in node.values:
            _walk(source, value, direction, found, depth + 1)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        _walk(source, node.operand, -direction, found, depth + 1)
    elif isinstance(node, ast.Compare):
        sides = [node.left, *node.comparators]
        for k, op in enumerate(node.ops):
            left, right = _segment(source, sides[k]), _segment(source, sides[k + 1])
            if type(op) not in _ORIENTED:
                raise ExprError(f"'{_segment(source, node)}': == and != hold only at isolated "
                                "instants, which a continuous chart cannot locate; compare "
                                "with <, <=, > or >= (or give the chart a sample time)")
            swap = _ORIENTED[type(op)]
            symbol = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<="}[type(op)]
            found.append(Comparison(left if not swap else right, right if not swap else left,
                                    symbol, direction, f"{left} {symbol} {right}"))
    else:
        raise ExprError(f"'{_segment(source, node)}' is not a comparison: a condition of a "
                        "continuous chart is comparisons (<, <=, >, >=) joined by and, or, "
                        "not, so that the instant it becomes true can be located (write "
                        "go > 0.5, not go)")
