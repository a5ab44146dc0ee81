"""The project's own safe expression evaluator: parameter values and the `function` block.

User text is parsed by `ast.parse(mode="eval")`, checked node by node against a whitelist and
compiled into nested closures over numpy functions; Python's eval/exec never sees it. The
grammar: numbers, `+ - * / % ** @` (`%` is the floored `mod`), unary `-`/`+`, comparisons
`< <= > >= == !=` (chains allowed) and `and or not`, all element-wise with the truth values 1.0
and 0.0 (non-zero is true), parentheses, list and tuple displays (both give arrays; nested
displays are matrices row by row), indexing and slicing (0-based, numpy semantics; indices
must be whole numbers), names (parameters, the constants `pi e inf eps`, the inputs of a
`function` block), `ROBOT.pose` (the only attribute form) and calls of the whitelisted
functions with positional arguments.

Numbers are float64 throughout (integer literals too), so `2**100000` overflows instead of
building a huge int. Subexpressions that do not depend on a `function` block's inputs are
computed once, when the expression is compiled, under `np.errstate(all="raise")`: division by
zero, domain errors and overflow are `ExprError`s then (underflow to 0 is fine). Resource
guards: at most 10,000 characters, nesting at most 100 levels (a chain `a + b - c + ...` counts
as one level; Python's parser takes about 2,000 terms of it), arrays of at most 10 million
elements (checked before anything is allocated), and at most a billion elementary operations
for one evaluation (a matrix product costs
m·k·n, a matrix inverse or solve n³, anything else the elements it reads and writes; checked
before each operation), so an expression cannot hang while every array in it stays small.
Inside `shared_budget()` (the compiler opens one per diagram) all evaluations share those
billion operations, and the values `evaluate` returns hold at most MAX_TOTAL_ELEMENTS
elements together: a file of many expressions is bounded as a whole, not only each of them.
A `function` block's expression is compiled twice: the fast form for the simulation, and a
checked form (`f.checked`) that applies the same guards to every operation, which the block
uses once to find its output shape.
"""
from __future__ import annotations

import ast
import contextlib
import contextvars
import difflib
import functools
import keyword
import math
import operator

import numpy as np

MAX_TEXT = 10_000
MAX_DEPTH = 100
MAX_ELEMENTS = 10_000_000
MAX_WORK = 1_000_000_000
MAX_TOTAL_ELEMENTS = 3 * MAX_ELEMENTS  # the values of one shared budget together (see Budget)


class ExprError(Exception):
    """An invalid or failing expression; the caller adds FILE:LINE, the block and parameter."""


class LimitError(ExprError):
    """An expression that would exceed a resource guard (elements, operations)."""


class Unavailable(ExprError):
    """An expression names a parameter whose own value failed (`FAILED`): that failure is
    reported at the parameter, so the caller stays silent about this one."""


FAILED = object()  # the value of a parameter whose expression failed, in a names mapping


class Budget:
    """Operations and result elements spent by the evaluations that share it. Inside
    `shared_budget()` every evaluation draws on one Budget (the compiler opens one per
    diagram), so a file of many expressions, or a list of many, is bounded as a whole and
    not only each expression: MAX_WORK operations in all, and MAX_TOTAL_ELEMENTS elements
    in the values `evaluate` returns (they are kept: block parameters, parameters)."""
    __slots__ = ("work", "elements")

    def __init__(self):
        self.work = 0
        self.elements = 0


_SHARED = contextvars.ContextVar("blocksim_expr_budget", default=None)


@contextlib.contextmanager
def shared_budget():
    """Let the evaluations in this context (this thread's) share one Budget."""
    token = _SHARED.set(Budget())
    try:
        yield
    finally:
        _SHARED.reset(token)


def _budget():
    """The shared Budget of the current context, or a fresh one."""
    return _SHARED.get() or Budget()


CONSTANTS = {"pi": np.float64(np.pi), "e": np.float64(np.e), "inf": np.float64(np.inf),
             "eps": np.float64(np.finfo(float).eps)}  # eps: as MATLAB's, 2.2e-16


class Function:
    """A whitelisted function: the callable and how many positional arguments it takes
    (`max_args=None`: any number). `elementwise` functions broadcast their arguments, so the
    size of their result is checked before they are called on constants.

    A function of the block library may take an entry of a diagram section as its first
    argument, written as the entry's name (`fkine(p560, q)` with p560 of `robots:`): its
    `subject` is the section's name, and `bound(entries)` gives the function that accepts
    the names of `entries` (name -> object) there and calls `fn(object, ...)`.

    A function whose value at stand-in arguments is an error (ikine of a pose no arm
    reaches) has a `probe`: fn's checks of its arguments and a result of fn's shape, which a
    function block finds its output's shape with (`probing()`)."""
    __slots__ = ("fn", "min_args", "max_args", "elementwise", "subject", "entries", "probe")

    def __init__(self, fn, min_args=1, max_args=1, *, elementwise=False, subject=None,
                 entries=None, probe=None):
        self.fn = fn
        self.min_args = min_args
        self.max_args = max_args
        self.elementwise = elementwise
        self.subject = subject
        self.entries = entries
        self.probe = probe

    def bound(self, entries):
        """This function taking its first argument from `entries` (name -> object)."""
        return Function(self.fn, self.min_args, self.max_args, elementwise=self.elementwise,
                        subject=self.subject, entries=dict(entries), probe=self.probe)

    def probing(self):
        """This function with its probe in place of fn (itself when it has none)."""
        if self.probe is None:
            return self
        return Function(self.probe, self.min_args, self.max_args, elementwise=self.elementwise,
                        subject=self.subject, entries=self.entries)


# ---- argument helpers ------------------------------------------------------------------------
def _check_count(n):
    if n > MAX_ELEMENTS:
        count = f"{n:,}" if n < 10**15 else f"about {float(n):.2g}"  # not 300 digits
        raise LimitError(f"the result would have {count} elements, more than the limit of "
                        f"{MAX_ELEMENTS:,}")


def _scalar(x, what):
    """A one-element argument as a float."""
    a = np.asarray(x, dtype=np.float64)
    if a.size != 1:
        raise ExprError(f"{what} must be a single number, got shape {a.shape}")
    return float(a.reshape(()))


def _whole(x, what):
    """A scalar argument that must be a whole number (a size, a count, an index) as an int."""
    a = np.asarray(x)
    if a.ndim != 0:
        raise ExprError(f"{what} must be a single integer, got shape {a.shape}")
    v = float(a)
    if not math.isfinite(v) or v != int(v):
        raise ExprError(f"{what} must be an integer, got {v:g}")
    return int(v)


def _dims(args, what):
    """Shape arguments: `f(n)`, `f(r, c, ...)` or `f((r, c))` -> a tuple of ints."""
    if len(args) == 1 and np.ndim(args[0]) == 1:
        return tuple(_whole(d, what) for d in args[0])
    return tuple(_whole(d, what) for d in args)


def _new_shape(args, what):
    shape = _dims(args, f"{what}() size")
    if any(d < 0 for d in shape):
        raise ExprError(f"{what}() size must not be negative, got {shape}")
    _check_count(math.prod(shape))
    return shape


# ---- the function table ----------------------------------------------------------------------
def _zeros(*args):
    return np.zeros(_new_shape(args, "zeros"))


def _ones(*args):
    return np.ones(_new_shape(args, "ones"))


def _eye(n, m=None):
    """n x n identity, or n x m with ones on the diagonal."""
    return np.eye(*_new_shape((n, n if m is None else m), "eye"))


def _linspace(start, stop, n=50):
    """n evenly spaced numbers from start to stop inclusive (numpy's default n = 50)."""
    count = _new_shape((n,), "linspace")[0]
    return np.linspace(_scalar(start, "linspace start"), _scalar(stop, "linspace stop"), count)


def _array(x):
    return np.array(x, dtype=np.float64)


def _diag(v):
    """A vector -> the square matrix with it on the diagonal; a matrix -> its diagonal."""
    a = np.asarray(v)
    if a.ndim == 1:
        _check_count(a.size * a.size)
    elif a.ndim != 2:
        raise ExprError(f"diag() expects a vector or a matrix, got shape {a.shape}")
    return np.diag(a)


def _min(a, b=None):
    """min(x): smallest element; min(a, b): element-wise minimum."""
    return np.min(a) if b is None else np.minimum(a, b)


def _max(a, b=None):
    """max(x): largest element; max(a, b): element-wise maximum."""
    return np.max(a) if b is None else np.maximum(a, b)


def _rotx(theta):
    """3x3 rotation about x by theta [rad]: [[1,0,0],[0,c,-s],[0,s,c]]."""
    c, s = _cos_sin(theta, "rotx")
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _roty(theta):
    """3x3 rotation about y by theta [rad]: [[c,0,s],[0,1,0],[-s,0,c]]."""
    c, s = _cos_sin(theta, "roty")
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def _rotz(theta):
    """3x3 rotation about z by theta [rad]: [[c,-s,0],[s,c,0],[0,0,1]]."""
    c, s = _cos_sin(theta, "rotz")
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _cos_sin(theta, what):
    t = np.float64(_scalar(theta, f"{what}() angle"))
    return np.cos(t), np.sin(t)


def _transl(*args):
    """4x4 homogeneous transform of a pure translation: transl(x, y, z) or transl([x, y, z])."""
    if len(args) == 2:
        raise ExprError("transl() takes x, y, z or one 3-vector, got 2 arguments")
    p = np.asarray(args[0] if len(args) == 1 else [_scalar(a, "transl()") for a in args],
                   dtype=np.float64)
    if p.size != 3:
        raise ExprError(f"transl() needs 3 coordinates, got shape {p.shape}")
    t = np.eye(4)
    t[:3, 3] = p.reshape(3)
    return t


def _homogeneous(R, t=(0.0, 0.0, 0.0)):
    """The 4x4 transform [[R, t], [0, 0, 0, 1]]."""
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = t
    return T


def _shaped(x, shape, what):
    """An argument that must have exactly `shape` (a rotation, a transform) as float64."""
    a = np.asarray(x, dtype=np.float64)
    if a.shape != shape:
        raise ExprError(f"{what} must have shape {shape}, got {a.shape}")
    return a


def _trotx(theta):
    """4x4 transform of a rotation about x by theta [rad] (the toolbox's trotx)."""
    return _homogeneous(_rotx(theta))


def _troty(theta):
    """4x4 transform of a rotation about y by theta [rad]."""
    return _homogeneous(_roty(theta))


def _trotz(theta):
    """4x4 transform of a rotation about z by theta [rad]."""
    return _homogeneous(_rotz(theta))


def _r2t(R):
    """3x3 rotation -> 4x4 transform with zero translation."""
    return _homogeneous(_shaped(R, (3, 3), "r2t() argument"))


def _t2r(T):
    """4x4 transform -> its 3x3 rotation."""
    return _shaped(T, (4, 4), "t2r() argument")[:3, :3].copy()


def _rt2tr(R, t):
    """3x3 rotation and translation 3-vector -> 4x4 transform."""
    t = np.asarray(t, dtype=np.float64)
    if t.size != 3:
        raise ExprError(f"rt2tr() translation needs 3 coordinates, got shape {t.shape}")
    return _homogeneous(_shaped(R, (3, 3), "rt2tr() rotation"), t.reshape(3))


def _angles(args, what):
    """Three angles given as a, b, c or as one 3-vector [a, b, c]."""
    if len(args) == 1:
        v = np.asarray(args[0], dtype=np.float64)
        if v.size != 3:
            raise ExprError(f"{what}() takes three angles or one 3-vector, got shape {v.shape}")
        return v.reshape(3)
    if len(args) == 3:
        return [_scalar(a, f"{what}() angle") for a in args]
    raise ExprError(f"{what}() takes three angles or one 3-vector, got {len(args)} arguments")


def _rpy2tr(*args):
    """Roll/pitch/yaw -> 4x4 transform Rz(roll) Ry(pitch) Rx(yaw) (release 7's rpy2tr)."""
    roll, pitch, yaw = _angles(args, "rpy2tr")
    return _homogeneous(_rotz(roll) @ _roty(pitch) @ _rotx(yaw))


def _eul2tr(*args):
    """ZYZ Euler angles -> 4x4 transform Rz(phi) Ry(theta) Rz(psi) (the toolbox's eul2tr)."""
    phi, theta, psi = _angles(args, "eul2tr")
    return _homogeneous(_rotz(phi) @ _roty(theta) @ _rotz(psi))


def _truth(x):
    """A boolean result as the float 1.0 / 0.0 (array or numpy scalar)."""
    return np.asarray(x, dtype=np.float64) if np.ndim(x) else np.float64(x)


def _where(cond, a, b):
    """where(c, a, b): a where c is non-zero, else b, element-wise (broadcast)."""
    return np.where(np.not_equal(cond, 0.0), a, b).astype(np.float64, copy=False)


def _mod(x, y):
    """Floored remainder x - floor(x/y)*y, the sign of y (MATLAB's mod); mod(x, 0) = x."""
    zero = np.equal(y, 0.0)
    return np.where(zero, x, np.mod(x, np.where(zero, 1.0, y)))


def _round(x):
    """Round half away from zero (MATLAB's and C's round: round(2.5) = 3, round(-2.5) = -3),
    not numpy's half-to-even."""
    t = np.trunc(x)
    with np.errstate(invalid="ignore"):  # inf - inf: round(+-inf) is +-inf, as in MATLAB
        return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t) + 0.0


def _mean(x):
    """Mean of all elements; of none, an error (numpy warns and gives NaN)."""
    if np.size(x) == 0:
        raise ValueError("mean() of an empty array")
    return np.mean(x)


def _isfinite(x):
    return _truth(np.isfinite(x))


def _vectors(a, b, what, length=None):
    sa, sb = np.shape(a), np.shape(b)
    if len(sa) != 1 or sa != sb or (length is not None and sa != (length,)):
        need = f"two {length}-vectors" if length else "two vectors of the same length"
        raise ValueError(f"{what}() needs {need}, got shapes {sa} and {sb}")


def _dot(a, b):
    """Scalar product of two vectors of the same length."""
    _vectors(a, b, "dot")
    return np.float64(np.dot(a, b))


def _cross(a, b):
    """Cross product of two 3-vectors."""
    _vectors(a, b, "cross", 3)
    return np.cross(a, b)


def _reshape(x, *shape):
    """Row-major reshape: reshape(x, (r, c)) or reshape(x, r, c); one size may be -1."""
    return np.reshape(x, _dims(shape, "reshape() size"))


FUNCTIONS = {
    "sin": Function(np.sin), "cos": Function(np.cos), "tan": Function(np.tan),
    "asin": Function(np.arcsin), "acos": Function(np.arccos), "atan": Function(np.arctan),
    "atan2": Function(np.arctan2, 2, 2, elementwise=True),
    "sinh": Function(np.sinh), "cosh": Function(np.cosh), "tanh": Function(np.tanh),
    "asinh": Function(np.arcsinh), "acosh": Function(np.arccosh),
    "atanh": Function(np.arctanh),
    "sqrt": Function(np.sqrt), "exp": Function(np.exp), "log": Function(np.log),
    "exp2": Function(np.exp2), "log2": Function(np.log2), "log10": Function(np.log10),
    "hypot": Function(np.hypot, 2, 2, elementwise=True),
    "abs": Function(np.abs), "sign": Function(np.sign),
    "floor": Function(np.floor), "ceil": Function(np.ceil), "round": Function(_round),
    "trunc": Function(np.trunc),
    "mod": Function(_mod, 2, 2, elementwise=True), "rem": Function(np.fmod, 2, 2, elementwise=True),
    "clip": Function(np.clip, 3, 3, elementwise=True),
    "where": Function(_where, 3, 3, elementwise=True), "isfinite": Function(_isfinite),
    "min": Function(_min, 1, 2, elementwise=True), "max": Function(_max, 1, 2, elementwise=True),
    "sum": Function(np.sum), "prod": Function(np.prod), "mean": Function(_mean),
    "cumsum": Function(np.cumsum), "dot": Function(_dot, 2, 2), "cross": Function(_cross, 2, 2),
    "norm": Function(np.linalg.norm), "diag": Function(_diag),
    "eye": Function(_eye, 1, 2), "zeros": Function(_zeros, 1, None),
    "ones": Function(_ones, 1, None), "array": Function(_array),
    "linspace": Function(_linspace, 2, 3),
    "deg2rad": Function(np.deg2rad), "rad2deg": Function(np.rad2deg),
    "rotx": Function(_rotx), "roty": Function(_roty), "rotz": Function(_rotz),
    "transl": Function(_transl, 1, 3),
    "trotx": Function(_trotx), "troty": Function(_troty), "trotz": Function(_trotz),
    "r2t": Function(_r2t), "t2r": Function(_t2r), "rt2tr": Function(_rt2tr, 2, 2),
    "rpy2tr": Function(_rpy2tr, 1, 3), "eul2tr": Function(_eul2tr, 1, 3),
}

MATRIX_FUNCTIONS = {
    "inv": Function(np.linalg.inv), "pinv": Function(np.linalg.pinv),
    "det": Function(np.linalg.det), "cond": Function(np.linalg.cond),
    "solve": Function(np.linalg.solve, 2, 2), "transpose": Function(np.transpose),
    "reshape": Function(_reshape, 2, None),
}


def check_not_reserved(name):
    """Raise ExprError if a parameter or function input called `name` would shadow a
    constant or a function, or could never be referred to (a dunder name)."""
    if name in CONSTANTS:
        raise ExprError(f"'{name}' is a built-in constant; a parameter or function input may "
                        "not reuse a constant's name")
    if name in FUNCTIONS or name in MATRIX_FUNCTIONS:
        raise ExprError(f"'{name}' is a built-in function; a parameter or function input may "
                        "not reuse a function's name")
    if name.startswith("__"):
        raise ExprError(f"'{name}': names beginning with '__' are not allowed")
    if keyword.iskeyword(name):
        raise ExprError(f"'{name}' is a Python keyword, which an expression cannot use as a name")


# ---- public entry points ---------------------------------------------------------------------
def evaluate(value, names, *, dotted=None, functions=FUNCTIONS):
    """Evaluate a raw YAML parameter value.

    value: a number, a bool (returned as a bool), an expression string, a numeric numpy
    array (the Python API's overrides), or a (nested) list of numbers / expression strings /
    lists. Numbers, expressions, arrays and lists give a new float64 ndarray (0-d for a
    scalar); nested lists are stacked row by row and must not be ragged.
    names: parameter name -> value (float or array); dotted: robot name -> {pose: value},
    enabling `ROBOT.pose`. Raises ExprError.
    """
    budget = _budget()
    if budget.elements <= MAX_TOTAL_ELEMENTS:  # else refused at once, as the last one was
        with np.errstate(all="raise", under="ignore"):
            result = _evaluate(value, names, dotted, functions, 0, budget)
        budget.elements += np.size(result)
    if budget.elements > MAX_TOTAL_ELEMENTS:
        raise LimitError(f"the diagram's values together would hold more than "
                         f"{MAX_TOTAL_ELEMENTS:,} elements (the limit)")
    return result


def compile_expr(text, inputs, names, *, functions=FUNCTIONS | MATRIX_FUNCTIONS, dotted=None,
                 inputs_shadow=False):
    """Check `text` once and return a fast callable `f(*input_values)` for the simulation loop.

    Every free name must be one of `inputs` (positional, in this order; an input shadows a
    parameter of the same name), a parameter in `names`, a constant, or `ROBOT.pose` with
    `dotted`. Everything that does not depend on the inputs (parameters included, captured by
    value) is computed here, once. The callable does no checking and sets no errstate:
    numpy's own exceptions (shape mismatch, singular matrix) propagate and non-finite results
    come back as they are.
    `inputs_shadow=True` lets inputs reuse the names of constants and functions (a sweep's
    metrics see recorded signals by their record names, and a signal may be called `e`):
    such a name is then the input, and a call `f(x)` still calls the function.
    `f.names` is the frozenset of inputs, parameters and robots the expression uses.
    Raises ExprError.
    """
    inputs = tuple(inputs)
    for name in inputs:
        if not isinstance(name, str) or not name.isidentifier():
            raise ExprError(f"{name!r} is not a valid input name")
        if not inputs_shadow or name.startswith("__"):
            check_not_reserved(name)
    if len(set(inputs)) != len(inputs):
        raise ExprError("input names must be distinct")
    with np.errstate(all="raise", under="ignore"):
        root, used, _ = _compile(text, names, dotted, functions, inputs, budget=_budget())
        # the same constants again: not counted twice
        checked_root, _, checker = _compile(text, names, dotted, functions, inputs,
                                            checked=True, budget=Budget())
    if isinstance(root, _Const):
        value = root.value

        def f(*args):
            return value
    else:
        def f(*args):
            return root(args)

    def checked(*args):
        """f(*args) with the size and work guards applied to every operation (LimitError);
        floating-point exceptions give inf / nan as in the fast form."""
        if isinstance(checked_root, _Const):
            return checked_root.value
        checker.budget = _budget()
        checker.spent = checker.budget.work
        with np.errstate(all="ignore"):
            return checked_root(args)
    f.names = frozenset(used)
    f.checked = checked
    return f


def names_in(value, depth=0):
    """The names a raw parameter value (a number, an expression, a list or mapping of them,
    a chart's actions: statements) refers to: its expressions' identifiers, read off the
    syntax without evaluating anything (none for text that would not parse: evaluating it
    reports why). For ordering parameters by what they use, and for the values route
    (engine/compiler/revalue.py) to find the blocks a changed name reaches."""
    if isinstance(value, dict) and depth < MAX_DEPTH:
        value = list(value.values())
    if isinstance(value, (list, tuple)) and depth < MAX_DEPTH:
        return set().union(*(names_in(v, depth + 1) for v in value))
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        return set()
    return set(_text_names(value))


@functools.lru_cache(maxsize=4096)
def _text_names(value):
    """names_in of one text (parsed once: a sweep's runs order the same parameters)."""
    level = deepest = 0
    for ch in value:
        level += (ch in "([{") - (ch in ")]}")
        deepest = max(deepest, level)
    if deepest > MAX_DEPTH:
        return frozenset()
    expression = value.replace("\r", " ").replace("\n", " ").replace("\t", " ").strip()
    statements = "\n".join(line.strip() for line in value.replace("\r", "\n").split("\n"))
    for text, mode in ((expression, "eval"), (statements.strip(), "exec")):
        try:
            tree = ast.parse(text, mode=mode)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        return frozenset(node.id for node in ast.walk(tree) if isinstance(node, ast.Name))
    return frozenset()


def trace(text, inputs, names, args, *, functions=FUNCTIONS | MATRIX_FUNCTIONS, dotted=None):
    """The value of every sub-expression of `text` on the input values `args`: (the syntax
    tree's root node, {node: value}, the text the nodes' positions refer to). For compilers
    of the language (accelerated mode), which mirror each operation on operands as numpy
    holds them (shapes, numpy scalar or array, memory order). Constant parts hold their
    folded values; in a left-associated chain `a + b - c` each partial result is held at its
    own node. Raises ExprError, and what the evaluation raises on `args`."""
    with np.errstate(all="raise", under="ignore"):
        root, _, compiler = _compile(text, names, dotted, functions, tuple(inputs),
                                     budget=Budget(), trace={})
    if not isinstance(root, _Const):
        with np.errstate(all="ignore"):
            root(tuple(args))
    return compiler.root, compiler.trace, compiler.source


def _evaluate(value, names, dotted, functions, depth, budget):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        try:
            return np.array(float(value))
        except OverflowError:
            digits = str(value)
            shown = digits if len(digits) <= 30 else f"{digits[:12]}... ({len(digits)} digits)"
            raise ExprError(f"the number {shown} is too large for a float64") from None
    if isinstance(value, str):
        if value in names and value not in CONSTANTS and names[value] is not FAILED:
            # a parameter's name alone (the commonest value): what compiling it gives
            return np.array(_number(names[value], f"parameter '{value}'"), dtype=np.float64)
        root, _, _ = _compile(value, names, dotted, functions, (), budget=budget)
        return np.array(root.value, dtype=np.float64)
    if isinstance(value, np.ndarray) and value.dtype.kind in "iuf":  # from Python callers
        _check_count(value.size)
        return np.array(value, dtype=np.float64)
    if isinstance(value, (list, tuple)):
        if depth >= MAX_DEPTH:
            raise ExprError(f"lists nested deeper than {MAX_DEPTH} levels")
        items = []
        for item in value:
            if isinstance(item, (bool, np.bool_)):
                raise ExprError(f"a list may hold numbers and expressions, not {item}")
            items.append(_evaluate(item, names, dotted, functions, depth + 1, budget))
        return _stack(*items)
    kind = ("nothing (null)" if value is None else "a mapping" if isinstance(value, dict)
            else f"a {type(value).__name__}")
    raise ExprError(f"expected a number, a list or an expression, got {kind}")


def _stack(*items):
    """Equal-shaped items -> one array with a new leading axis (a list display, a YAML list)."""
    if not items:
        return np.zeros(0)
    shape = np.shape(items[0])
    for i, item in enumerate(items):
        if np.shape(item) != shape:
            raise ExprError(f"the items of a list must have the same shape: item 0 has shape "
                            f"{shape}, item {i} has shape {np.shape(item)}")
    _check_count(len(items) * math.prod(shape))
    return np.array(items, dtype=np.float64)


# ---- parsing and compiling -------------------------------------------------------------------
class _Const:
    """A compiled subexpression whose value is already known."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _compile(text, names, dotted, functions, inputs, checked=False, budget=None, trace=None):
    """Parse, check and compile `text`: (a _Const or a closure over the inputs tuple, names
    used, the compiler). Must run under np.errstate(all='raise') since constant parts are
    computed here. `checked`: the closures apply the guards too (see the module docs).
    `budget`: the Budget the operations are counted in (default: a fresh one). `trace`: a
    dict the closures fill with every node's value (see `trace`)."""
    if not isinstance(text, str):
        raise ExprError(f"expected an expression string, got {type(text).__name__}")
    if len(text) > MAX_TEXT:
        raise ExprError(f"the expression is longer than {MAX_TEXT:,} characters")
    flat = text.replace("\r", " ").replace("\n", " ").replace("\t", " ")
    source = flat.lstrip()
    lead = len(flat) - len(source)
    if not source.strip():
        raise ExprError("empty expression")
    if not source.isascii():  # Python would read 𝑝𝑖 as pi (NFKC) and Κ (Greek) as a new name
        i, ch = next((i, ch) for i, ch in enumerate(source) if not ch.isascii())
        raise ExprError(f"character '{ch}' (U+{ord(ch):04X}, column {lead + i + 1}) is not "
                        "allowed: expressions are ASCII (names use A-Z, a-z, 0-9 and _)")
    level = 0
    for i, ch in enumerate(source):
        if ch == "#":
            raise ExprError(f"'#' is not allowed in an expression (column {lead + i + 1})")
        if ch in "([{":
            level += 1
            if level > MAX_DEPTH:
                raise ExprError(f"the expression is nested deeper than {MAX_DEPTH} levels")
        elif ch in ")]}":
            level -= 1
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as e:  # offset 0: the text ended too early
        raise ExprError(f"syntax error at column {lead + (e.offset or len(source) + 1)}: "
                        f"{e.msg}") from None
    except (MemoryError, RecursionError):  # brackets are within the limit (checked above):
        # a chain a + b + c ... or - - - ... longer than the parser's own recursion limit
        raise ExprError(f"the expression is nested deeper than {MAX_DEPTH} levels, or is a "
                        "chain of more operators than Python's parser takes (a + b + ... of "
                        "about 2,000 terms at most: split it into parameters)") from None
    compiler = _Compiler(source, lead, names, dotted or {}, functions, inputs, checked,
                         budget or Budget(), trace)
    compiler.root = tree.body
    return compiler.compile(tree.body, 0), compiler.used, compiler


_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.Pow: operator.pow, ast.MatMult: operator.matmul,
           ast.Mod: _mod}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}
_COMPARE = {ast.Lt: np.less, ast.LtE: np.less_equal, ast.Gt: np.greater,
            ast.GtE: np.greater_equal, ast.Eq: np.equal, ast.NotEq: np.not_equal}
_REJECTED = {
    ast.Lambda: "lambda functions are", ast.ListComp: "comprehensions are",
    ast.SetComp: "comprehensions are", ast.DictComp: "comprehensions are",
    ast.GeneratorExp: "comprehensions are",
    ast.Dict: "dictionaries are", ast.Set: "sets are", ast.JoinedStr: "string literals are",
    ast.NamedExpr: "assignments are", ast.Starred: "unpacking with * is",
}


class _Compiler:
    """Checks an expression tree and turns it into _Const values and closures `g(inputs)`."""

    def __init__(self, source, lead, names, dotted, functions, inputs, checked, budget,
                 trace=None):
        self.source = source
        self.lead = lead
        self.names = names
        self.dotted = dotted
        self.functions = functions
        self.inputs = {name: i for i, name in enumerate(inputs)}
        self.used = set()
        self.checked = checked
        self.budget = budget  # where `fold` counts the operations (see MAX_WORK)
        self.spent = budget.work  # what others had spent when this expression began
        self.trace = trace  # node -> value, when tracing

    # -- messages
    def segment(self, node):
        text = ast.get_source_segment(self.source, node) or ""
        return text if len(text) <= 40 else text[:37] + "..."

    def fail(self, message, node):
        column = len(self.source.encode()[:node.col_offset].decode("utf-8", "ignore"))
        return ExprError(f"{message} (column {self.lead + column + 1})")

    def fold(self, node, fn, *args):
        """Compute fn(*args) now (constant arguments, or any arguments in checked mode)
        within the work budget; arithmetic failures are ExprErrors."""
        budget = self.budget
        budget.work += _cost(fn, args)
        if budget.work > MAX_WORK:
            shared = " together with the diagram's other values" if self.spent else ""
            raise LimitError(f"evaluating '{self.segment(node)}' takes more than "
                            f"{MAX_WORK:.0e} operations{shared} (the limit; a matrix product "
                            "costs rows x inner x columns)")
        try:
            return fn(*args)
        except FloatingPointError as e:
            raise ExprError(f"{_arithmetic(str(e))} in '{self.segment(node)}'") from None
        except ZeroDivisionError:
            raise ExprError(f"division by zero in '{self.segment(node)}'") from None
        except OverflowError:
            raise ExprError(f"overflow in '{self.segment(node)}'") from None
        except (ValueError, TypeError, IndexError, np.linalg.LinAlgError) as e:
            raise ExprError(f"{e} in '{self.segment(node)}'") from None

    # -- dispatch
    def runtime(self, node, fn, guarded=None):
        """`fn` for an operation on run-time values: as it is, or in checked mode computed
        through `fold` (by `guarded`, which also checks the result's size, if given)."""
        if not self.checked:
            return fn
        if guarded is not None:
            return lambda *args: self.fold(node, guarded, fn, *args)
        return lambda *args: self.fold(node, fn, *args)

    def compile(self, node, depth):
        if depth >= MAX_DEPTH:
            raise ExprError(f"the expression is nested deeper than {MAX_DEPTH} levels")
        method = getattr(self, "c_" + type(node).__name__, None)
        if method is None:
            what = _REJECTED.get(type(node))
            if what is None:
                raise self.fail(f"'{self.segment(node)}' is not allowed in an expression", node)
            raise self.fail(f"{what} not allowed in an expression", node)
        part = method(node, depth + 1)
        return part if self.trace is None else self.traced(node, part)

    def traced(self, node, part):
        """`part` (of `node`) recording its value in the trace."""
        values = self.trace
        if isinstance(part, _Const):
            values[node] = part.value
            return part

        def run(a):
            values[node] = value = part(a)
            return value
        return run

    def c_Constant(self, node, depth):
        v = node.value
        if type(v) is int or type(v) is float:
            try:
                x = np.float64(v)
            except OverflowError:
                x = np.float64(np.inf)
            if not math.isfinite(x):
                raise self.fail(f"the number {self.segment(node)} is too large for a float64",
                                node)
            return _Const(x)
        if isinstance(v, (str, bytes)):
            raise self.fail("string literals are not allowed in an expression", node)
        if isinstance(v, complex):
            raise self.fail("complex numbers are not allowed", node)
        raise self.fail(f"'{self.segment(node)}' is not allowed in an expression", node)

    def c_Name(self, node, depth):
        name = node.id
        if name.startswith("__"):
            raise self.fail(f"'{name}': names beginning with '__' are not allowed", node)
        if name in self.inputs:
            self.used.add(name)
            return operator.itemgetter(self.inputs[name])
        if name in CONSTANTS:
            return _Const(CONSTANTS[name])
        if name in self.names:
            self.used.add(name)
            if self.names[name] is FAILED:
                raise Unavailable(f"parameter '{name}' has no value (see its own error)")
            return _Const(_number(self.names[name], f"parameter '{name}'"))
        if name in self.functions:
            raise self.fail(f"'{name}' is a function; call it, e.g. {name}(x)", node)
        if name in self.dotted:
            raise self.fail(f"'{name}' is a robot; use one of its poses, e.g. {name}.qz", node)
        owners = [robot for robot, poses in self.dotted.items() if name in poses]
        if owners:
            raise ExprError(f"unknown name '{name}': {_pose_owners(name, owners, self.dotted)}")
        known = [*self.inputs, *self.names, *CONSTANTS]
        raise ExprError(f"unknown name '{name}'{_suggest(name, known)}")

    def c_Attribute(self, node, depth):
        base = node.value
        if node.attr.startswith("__"):
            raise self.fail(f"'{node.attr}': names beginning with '__' are not allowed", node)
        if not (isinstance(base, ast.Name) and base.id in self.dotted):
            raise self.fail(f"attribute access is not allowed: '{self.segment(node)}' (the "
                            "only dotted form is ROBOT.pose, e.g. p560.qz)", node)
        poses = self.dotted[base.id]
        if node.attr not in poses:
            listed = f"its poses: {', '.join(poses)}" if poses else "it has no named poses"
            raise self.fail(f"robot '{base.id}' has no pose '{node.attr}'"
                            f"{_suggest(node.attr, poses)} ({listed})", node)
        self.used.add(base.id)
        return _Const(_number(poses[node.attr], f"pose {base.id}.{node.attr}"))

    def c_UnaryOp(self, node, depth):
        op = _not if isinstance(node.op, ast.Not) else _UNARY.get(type(node.op))
        if op is None:
            raise self.fail("operator '~' is not allowed; for a logical not use not", node)
        operand = self.compile(node.operand, depth)
        if isinstance(operand, _Const):
            return _Const(self.fold(node, op, operand.value))
        op = self.runtime(node, op)
        return lambda a: op(operand(a))

    def c_BinOp(self, node, depth):
        # A left-associated chain a + b - c * d ... is compiled as one level (and one loop),
        # so long sums neither hit the depth limit nor recurse at run time.
        spine = []
        while isinstance(node, ast.BinOp):
            spine.append(node)
            node = node.left
        acc = self.compile(node, depth)
        steps = []
        for b in reversed(spine):
            op = _BINOPS.get(type(b.op))
            if op is None:
                symbol = type(b.op).__name__
                text, hint = _OPERATOR_TEXT.get(symbol, (symbol, ""))
                raise self.fail(f"operator {text} is not allowed{hint}", b)
            right = self.compile(b.right, depth)
            if not steps and isinstance(acc, _Const) and isinstance(right, _Const):
                acc = _Const(self.fold(b, _checked_binop, op, acc.value, right.value))
                if self.trace is not None:
                    self.trace[b] = acc.value
            else:
                steps.append((self.runtime(b, op, _checked_binop), right, b))
        if not steps:
            return acc
        if self.trace is not None:
            return self.traced_chain(acc, steps)
        steps = [step[:2] for step in steps]
        if len(steps) == 1:
            return _binary(steps[0][0], acc, steps[0][1])
        start = _dynamic(acc)
        chain = tuple((op, _dynamic(g)) for op, g in steps)

        def run_chain(a):
            v = start(a)
            for op, g in chain:
                v = op(v, g(a))
            return v
        return run_chain

    def traced_chain(self, acc, steps):
        """A chain of (op, right, node) steps after `acc` recording each partial result."""
        values, start = self.trace, _dynamic(acc)
        chain = tuple((op, _dynamic(g), node) for op, g, node in steps)

        def run_chain(a):
            v = start(a)
            for op, g, node in chain:
                values[node] = v = op(v, g(a))
            return v
        return run_chain

    def c_IfExp(self, node, depth):
        raise self.fail("conditional expressions are not allowed; use where(condition, a, b)",
                        node)

    def c_Compare(self, node, depth):
        # a < b <= c means (a < b) and (b <= c), element-wise; each operand is compiled once
        parts = [self.compile(x, depth) for x in (node.left, *node.comparators)]
        tests = []
        for i, op_node in enumerate(node.ops):
            op = _COMPARE.get(type(op_node))
            if op is None:
                raise self.fail("'in' and 'is' are not allowed; compare values with == or !=",
                                node)
            tests.append((op, parts[i], parts[i + 1]))
        return self.combine(node, [self.apply(node, lambda x, y, op=op: _truth(op(x, y)), a, b)
                                   for op, a, b in tests], np.logical_and)

    def c_BoolOp(self, node, depth):
        values = [self.compile(v, depth) for v in node.values]
        logical = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
        return self.combine(node, [self.apply(node, _nonzero, v) for v in values], logical)

    def apply(self, node, fn, *parts):
        """fn of compiled parts: folded now when they are all constants, else a closure."""
        if all(isinstance(p, _Const) for p in parts):
            if len(parts) > 1:
                self.fold(node, _check_broadcast, *[p.value for p in parts])
            return _Const(self.fold(node, fn, *[p.value for p in parts]))
        gs = [_dynamic(p) for p in parts]
        fn = self.runtime(node, fn, _checked_call if len(gs) > 1 else None)
        if len(gs) == 1:
            g0 = gs[0]
            return lambda a: fn(g0(a))
        g0, g1 = gs
        return lambda a: fn(g0(a), g1(a))

    def combine(self, node, parts, logical):
        """Truth values (1.0 / 0.0) of parts joined element-wise by np.logical_and / _or."""
        def join(*values):
            out = values[0]
            for v in values[1:]:
                out = logical(out, v)
            return _truth(out)
        if len(parts) == 1:
            return parts[0]
        if all(isinstance(p, _Const) for p in parts):
            self.fold(node, _check_broadcast, *[p.value for p in parts])
            return _Const(self.fold(node, join, *[p.value for p in parts]))
        gs = [_dynamic(p) for p in parts]
        join = self.runtime(node, join, _checked_call)
        return lambda a: join(*[g(a) for g in gs])

    def c_Call(self, node, depth):
        func = node.func
        if not isinstance(func, ast.Name):
            raise self.fail(f"only the built-in functions can be called, not "
                            f"'{self.segment(func)}'", node)
        name = func.id
        if name.startswith("__"):
            raise self.fail(f"'{name}': names beginning with '__' are not allowed", node)
        spec = self.functions.get(name)
        if spec is None:
            if name in self.inputs or name in self.names or name in CONSTANTS:
                raise self.fail(f"'{name}' is not a function", node)
            if name in MATRIX_FUNCTIONS:
                raise self.fail(f"{name}() is only available in a function block", node)
            raise self.fail(f"unknown function '{name}'{_suggest(name, self.functions)}", node)
        if node.keywords:
            raise self.fail(f"keyword arguments are not allowed ({name}() takes positional "
                            "arguments)", node)
        n = len(node.args)
        if n < spec.min_args or (spec.max_args is not None and n > spec.max_args):
            raise self.fail(f"{name}() takes {_arity(spec)}, got {n}", node)
        args = [self.compile(arg, depth) for arg in node.args[1 if spec.subject else 0:]]
        if spec.subject:
            args.insert(0, self.entry(name, spec, node.args[0]))
        fn = spec.fn
        if all(isinstance(arg, _Const) for arg in args):
            values = [arg.value for arg in args]
            if spec.elementwise and n > 1:
                self.fold(node, _check_broadcast, *values)
            return _Const(self.fold(node, fn, *values))
        if self.checked and spec.elementwise and n > 1:
            fn = self.runtime(node, fn, _checked_call)
        else:
            fn = self.runtime(node, fn)
        if n == 1:
            g = args[0]
            return lambda a: fn(g(a))
        gs = [_dynamic(arg) for arg in args]
        if n == 2:
            g0, g1 = gs
            return lambda a: fn(g0(a), g1(a))
        return lambda a: fn(*[g(a) for g in gs])

    def entry(self, name, spec, node):
        """The first argument of a function of a section's entries: the named entry."""
        entries = spec.entries or {}
        if isinstance(node, ast.Name) and node.id in entries:
            self.used.add(node.id)
            return _Const(entries[node.id])
        what = f"'{self.segment(node)}' is not" if isinstance(node, ast.Name) else "it needs"
        listed = ", ".join(entries) or "the diagram has none"
        raise self.fail(f"{name}() takes an entry of the diagram's '{spec.subject}' section "
                        f"first, by its name: {what} one of them ({listed})", node)

    def c_List(self, node, depth):
        items = [self.compile(item, depth) for item in node.elts]
        if all(isinstance(item, _Const) for item in items):
            return _Const(self.fold(node, _stack, *[item.value for item in items]))
        gs = [_dynamic(item) for item in items]
        if self.checked:
            stack = self.runtime(node, _stack)
            return lambda a: stack(*[g(a) for g in gs])
        return lambda a: np.array([g(a) for g in gs], dtype=np.float64)

    c_Tuple = c_List

    def c_Subscript(self, node, depth):
        base = self.compile(node.value, depth)
        index = node.slice
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        compiled = [self.index_part(part, depth) for part in parts]
        if all(isinstance(part, _Const) for part in compiled):
            key = tuple(part.value for part in compiled)
            key = key[0] if len(key) == 1 else key
            if isinstance(base, _Const):
                return _Const(self.fold(node, operator.getitem, base.value, key))
            if self.checked:
                getitem = self.runtime(node, operator.getitem)
                return lambda a: getitem(base(a), key)
            return lambda a: base(a)[key]
        base_fn = _dynamic(base)
        fns = [_dynamic(part) for part in compiled]
        if self.checked:
            getitem = self.runtime(node, operator.getitem)
            return lambda a: getitem(base_fn(a), tuple(f(a) for f in fns) if len(fns) > 1
                                     else fns[0](a))
        if len(fns) == 1:
            f0 = fns[0]
            return lambda a: base_fn(a)[f0(a)]
        return lambda a: base_fn(a)[tuple(f(a) for f in fns)]

    def index_part(self, part, depth):
        """One component of an index: an int or a slice, as a _Const or a closure."""
        if not isinstance(part, ast.Slice):
            value = self.compile(part, depth)
            if isinstance(value, _Const):
                return _Const(self.fold(part, _element, value.value))
            return lambda a: _element(value(a))
        bounds = [None if b is None else self.compile(b, depth)
                  for b in (part.lower, part.upper, part.step)]
        if all(b is None or isinstance(b, _Const) for b in bounds):
            return _Const(slice(*[None if b is None else self.fold(part, _index, b.value)
                                  for b in bounds]))
        fns = [(lambda a: None) if b is None else _dynamic(b) for b in bounds]
        return lambda a: slice(*[None if (v := f(a)) is None else _index(v) for f in fns])


_OPERATOR_TEXT = {"FloorDiv": ("'//'", "; use floor(a / b)"), "LShift": ("'<<'", ""),
                  "RShift": ("'>>'", ""), "BitOr": ("'|'", "; for a logical or use or"),
                  "BitAnd": ("'&'", "; for a logical and use and"),
                  "BitXor": ("'^'", "; for a power use **")}


def _nonzero(x):
    return _truth(np.not_equal(x, 0.0))


def _not(x):
    return _truth(np.equal(x, 0.0))


def _index(x):
    """An index value (a float64 scalar) -> int; numpy would refuse a float."""
    return _whole(x, "an index")


def _element(x):
    """An element's index -> int, one beyond int64 out of bounds (numpy's message for it
    says that only integers are valid indices). Slice bounds may be any size: they clip."""
    i = _index(x)
    if abs(i) >= 2**63:
        raise ExprError(f"index {float(i):g} is out of bounds")
    return i


def _binary(op, left, right):
    """A closure for `left op right`, with constant operands captured as values."""
    if isinstance(left, _Const):
        c = left.value
        return lambda a: op(c, right(a))
    if isinstance(right, _Const):
        c = right.value
        return lambda a: op(left(a), c)
    return lambda a: op(left(a), right(a))


def _dynamic(part):
    """A compiled part as a closure, even when it is a constant."""
    if isinstance(part, _Const):
        value = part.value
        return lambda a: value
    return part


def _checked_binop(op, x, y):
    """op(x, y) once the result size is known to be within the limit."""
    sx, sy = np.shape(x), np.shape(y)
    if op is operator.matmul:
        # (..., n, k) @ (..., k, m): at most prod(sx[:-1]) * prod(sy[:-2]) * m elements
        _check_count(math.prod(sx[:-1]) * (math.prod(sy[:-2]) * sy[-1] if len(sy) > 1 else 1))
    else:
        _check_broadcast(x, y)
    return op(x, y)


def _checked_call(fn, *values):
    """fn(*values) for an element-wise function, once the broadcast size is within limits."""
    _check_broadcast(*values)
    return fn(*values)


_CUBIC = {np.linalg.inv, np.linalg.pinv, np.linalg.det, np.linalg.cond, np.linalg.solve}


def _cost(fn, args):
    """Operations fn(*args) takes, estimated before calling it: m·k·n for a matrix product,
    n³ (per matrix of a stack) for inverse, pseudo-inverse, determinant, condition number
    and solve, the elements read for anything else."""
    if fn is _checked_binop and args[0] is operator.matmul:
        sx, sy = np.shape(args[1]), np.shape(args[2])
        if not sx or not sy:
            return 1
        rows = math.prod(sx[:-1])
        columns = sy[-1] * math.prod(sy[:-2]) if len(sy) > 1 else 1
        _check_count(rows * columns)  # a too large result is the clearer message
        return max(1, rows * sx[-1] * columns)
    shapes = [np.shape(a) for a in args if isinstance(a, (np.ndarray, np.generic, float, int))]
    if (fn in _CUBIC or getattr(fn, "__wrapped__", None) in _CUBIC) and shapes:  # or wrapped
        shape = shapes[0]
        n = max(shape[-2:], default=1)
        return max(1, math.prod(shape[:-2]) * n ** 3)
    return max(1, sum(math.prod(s) for s in shapes))


def _check_broadcast(*values):
    try:
        shape = np.broadcast_shapes(*(np.shape(v) for v in values))
    except ValueError:
        raise ExprError("shapes " + " and ".join(str(np.shape(v)) for v in values)
                        + " do not match (numpy broadcasting)") from None
    _check_count(math.prod(shape))


def _number(value, what):
    """A parameter or pose value as float64: a numpy scalar for one number, else an array."""
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ExprError(f"{what} is not a number") from None
    return a[()] if a.ndim == 0 else a


def _arity(spec):
    lo, hi = spec.min_args, spec.max_args
    if hi == lo:
        return f"{lo} argument{'s' if lo != 1 else ''}"
    if hi is None:
        return f"at least {lo} argument{'s' if lo != 1 else ''}"
    return f"{lo} to {hi} arguments"


def _arithmetic(message):
    """numpy's floating-point error text -> a user-facing one."""
    if "divide by zero" in message:
        return "division by zero" if message.endswith("divide") else \
            f"infinite result ({message})"
    if "overflow" in message:
        return f"overflow: the result is too large for a float64 ({message})"
    if "invalid value" in message:
        return f"domain error ({message})"
    return message


def _pose_owners(pose, owners, dotted):
    """Why a pose name alone is not a value (it is one only when every robot has that pose,
    with one value) and how to write it instead."""
    listed = " and ".join([", ".join(owners[:-1]), owners[-1]] if len(owners) > 1 else owners)
    why = (f"robots {listed} have different poses '{pose}'" if len(owners) == len(dotted)
           else f"only robot{'s' if len(owners) > 1 else ''} {listed} "
                f"ha{'ve' if len(owners) > 1 else 's'} a pose '{pose}'")
    return f"{why}; write {' or '.join(f'{robot}.{pose}' for robot in owners)}"


def _suggest(word, options):
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""
