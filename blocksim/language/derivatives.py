"""Exact derivatives of an expression of the language with respect to its inputs, by forward
differentiation: the expression is traced on the input values (`expr.trace`: every
sub-expression's value), then each operation's derivative rule carries the tangents of its
operands to its own, in the same tree. A tangent has the shape (directions,) + the value's
shape, one direction per element of the inputs; None is a tangent of zero (a constant, a
comparison, a rounding: piecewise constant).

Where a function is not differentiable (abs, norm at 0, min and max at a tie, a `where`
switching) the rule takes the one-sided derivative the value took, as a linearisation at
a mode does. A function without a rule (one of a diagram section, a robot's fkine) raises
NoDerivative: the caller differences the expression instead.
"""
from __future__ import annotations

import ast
import math

import numpy as np

from . import expr


class NoDerivative(expr.ExprError):
    """The expression calls a function, on values depending on the inputs, that has no
    derivative rule."""


def jacobian(text, inputs, names, args, *, functions, dotted=None):
    """d(value)/d(inputs) of expression `text` at the input values `args`: a matrix
    (value's size, the inputs' sizes together), rows and columns flattened row-major.
    Raises ExprError (NoDerivative: no rule for a function it calls)."""
    args = [np.asarray(a, dtype=float) for a in args]
    root, values, _ = expr.trace(text, inputs, names, args, functions=functions,
                                 dotted=dotted)
    forward = _Forward(values, dict(zip(inputs, args)), functions)
    size = int(np.size(values[root]))
    with np.errstate(all="ignore"):
        tangent = forward.tangent(root)
    if tangent is None:
        return np.zeros((size, forward.k))
    return np.asarray(tangent, dtype=float).reshape(forward.k, size).T.copy()


class _Forward:
    """The tangents of a traced expression's nodes (see the module docstring)."""

    def __init__(self, values, inputs, functions):
        self.values, self.functions = values, functions
        self.k = sum(a.size for a in inputs.values())
        self.seeds, start = {}, 0
        for name, a in inputs.items():
            seed = np.zeros((self.k, a.size))
            seed[start:start + a.size] = np.eye(a.size)
            self.seeds[name] = seed.reshape((self.k,) + a.shape)
            start += a.size
        self._dynamic = {}

    def dynamic(self, node):
        """Whether `node` depends on the inputs (else the evaluator folded it)."""
        found = self._dynamic.get(node)
        if found is None:
            todo, seen = [node], []
            while todo:  # iteratively: a chain a + b + ... may be thousands of nodes deep
                n = todo.pop()
                seen.append(n)
                todo.extend(ast.iter_child_nodes(n))
            for n in reversed(seen):
                self._dynamic[n] = (isinstance(n, ast.Name) and n.id in self.seeds) or any(
                    self._dynamic[c] for c in ast.iter_child_nodes(n))
            found = self._dynamic[node]
        return found

    def tangent(self, node):
        if not self.dynamic(node):
            return None
        method = getattr(self, "t_" + type(node).__name__, None)
        if method is None:
            raise NoDerivative(f"no derivative of '{ast.unparse(node)[:40]}'")
        return method(node)

    def shape(self, node):
        return np.shape(self.values[node])

    # -- names and operators
    def t_Name(self, node):
        return self.seeds[node.id]

    def t_UnaryOp(self, node):
        t = self.tangent(node.operand)
        if t is None or isinstance(node.op, ast.Not):
            return None
        return -t if isinstance(node.op, ast.USub) else t

    def t_BinOp(self, node):
        spine = []  # a left-associated chain, as the evaluator compiles it: iteratively
        while isinstance(node, ast.BinOp):
            spine.append(node)
            node = node.left
        t = self.tangent(node)
        for b in reversed(spine):
            a, c, v = self.values[b.left], self.values[b.right], self.values[b]
            t = _BINARY[type(b.op)](self, a, c, v, t, self.tangent(b.right))
        return t

    def t_Compare(self, node):
        return None

    t_BoolOp = t_Compare

    def t_List(self, node):
        tangents = [self.tangent(item) for item in node.elts]
        if all(t is None for t in tangents):
            return None
        shape = self.shape(node.elts[0])
        return np.stack([self.lift(t, shape) for t in tangents], axis=1)

    t_Tuple = t_List

    def t_Subscript(self, node):
        t = self.tangent(node.value)
        if t is None:
            return None
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        key = tuple(self.index(part) for part in parts)
        return t[(slice(None),) + key]

    def index(self, part):
        """An index component as the evaluator used it: an int or a slice."""
        if isinstance(part, ast.Slice):
            return slice(*[None if b is None else int(self.values[b])
                           for b in (part.lower, part.upper, part.step)])
        return int(self.values[part])

    def t_Call(self, node):
        name = node.func.id
        spec = self.functions[name]
        rule = _CALLS.get(name)
        if rule is None or spec.subject:
            raise NoDerivative(f"{name}() has no derivative rule")
        args = [self.values[a] for a in node.args]
        tangents = [self.tangent(a) for a in node.args]
        if all(t is None for t in tangents):
            return None
        return rule(self, args, tangents, self.values[node])

    # -- helpers for the rules
    def lift(self, t, shape):
        """Tangent t (None: zero) broadcast to the tangent of a value of `shape`."""
        if t is None:
            return np.zeros((self.k,) + tuple(shape))
        extra = len(shape) - (t.ndim - 1)
        t = t.reshape((self.k,) + (1,) * extra + t.shape[1:])
        return np.broadcast_to(t, (self.k,) + tuple(shape))

    def scale(self, g, t, shape):
        """g * t element-wise, g broadcast over the directions."""
        return None if t is None else np.asarray(g)[None] * self.lift(t, shape)

    def scalar(self, t):
        """The tangent of a one-element argument taken as a number (directions,)."""
        return np.zeros(self.k) if t is None else t.reshape(self.k)


def _add(*terms):
    present = [t for t in terms if t is not None]
    if not present:
        return None
    total = present[0]
    for t in present[1:]:
        total = total + t
    return total


# ---- operators: f(forward, a, b, value, ta, tb) -------------------------------------------
def _plus(f, a, b, v, ta, tb):
    return _add(f.scale(1.0, ta, np.shape(v)), f.scale(1.0, tb, np.shape(v)))


def _minus(f, a, b, v, ta, tb):
    return _add(f.scale(1.0, ta, np.shape(v)), f.scale(-1.0, tb, np.shape(v)))


def _times(f, a, b, v, ta, tb):
    return _add(f.scale(b, ta, np.shape(v)), f.scale(a, tb, np.shape(v)))


def _divide(f, a, b, v, ta, tb):
    return _add(f.scale(1 / b, ta, np.shape(v)), f.scale(-v / b, tb, np.shape(v)))


def _power(f, a, b, v, ta, tb):
    return _add(f.scale(b * np.power(a, b - 1.0), ta, np.shape(v)),
                None if tb is None else f.scale(v * np.log(a), tb, np.shape(v)))


def _modulo(f, a, b, v, ta, tb, rounding=np.floor):
    """a - q b with q = rounding(a / b) constant nearby; where b = 0 mod gives a."""
    zero = np.equal(b, 0.0)
    q = np.where(zero, 0.0, rounding(a / np.where(zero, 1.0, b)))
    return _add(f.scale(1.0, ta, np.shape(v)), f.scale(-q, tb, np.shape(v)))


def _matmul(f, a, b, v, ta, tb):
    terms = []
    if ta is not None:
        terms.append(ta @ b)
    if tb is not None:  # a @ tb over the directions (a vector b: tb's directions last)
        terms.append(a @ tb if np.ndim(b) > 1 else np.moveaxis(a @ np.moveaxis(tb, 0, -1), -1, 0))
    return _add(*terms)


_BINARY = {ast.Add: _plus, ast.Sub: _minus, ast.Mult: _times, ast.Div: _divide,
           ast.Pow: _power, ast.Mod: _modulo, ast.MatMult: _matmul}


# ---- calls: rule(forward, args, tangents, value) ------------------------------------------
def _elementwise(derivative):
    """The rule of f(x) whose derivative is derivative(x, value)."""
    def rule(f, args, ts, v):
        return f.scale(derivative(args[0], v), ts[0], np.shape(v))
    return rule


def _flat(f, t, shape):
    return f.lift(t, shape).reshape(f.k, -1)


def _extreme(pick):
    """min(x) / max(x) (the element it picked) and min(a, b) / max(a, b) (the operand)."""
    def rule(f, args, ts, v):
        if len(args) == 1:
            x = np.asarray(args[0])
            return _flat(f, ts[0], x.shape)[:, int(pick(x.ravel()))]
        a, b = args
        first = np.less_equal(a, b) if pick is np.argmin else np.greater_equal(a, b)
        return np.where(first[None], f.lift(ts[0], np.shape(v)), f.lift(ts[1], np.shape(v)))
    return rule


def _prod(f, args, ts, v):
    x = np.asarray(args[0], dtype=float).ravel()
    before = np.concatenate([[1.0], np.cumprod(x)[:-1]])
    after = np.concatenate([np.cumprod(x[::-1])[:-1][::-1], [1.0]])
    return _flat(f, ts[0], np.shape(args[0])) @ (before * after)


def _norm(f, args, ts, v):
    x = np.asarray(args[0])
    if v == 0:
        return np.zeros(f.k)
    return _flat(f, ts[0], x.shape) @ x.ravel() / v


def _clip(f, args, ts, v):
    """min(max(x, lo), hi), as numpy: hi where max(x, lo) > hi, else lo where x < lo."""
    x, lo, hi = args
    shape = np.shape(v)
    at_hi, at_lo = np.maximum(x, lo) > hi, np.less(x, lo)
    return np.where(at_hi[None], f.lift(ts[2], shape),
                    np.where(at_lo[None], f.lift(ts[1], shape), f.lift(ts[0], shape)))


def _where(f, args, ts, v):
    choose = np.not_equal(args[0], 0.0)
    return np.where(choose[None], f.lift(ts[1], np.shape(v)), f.lift(ts[2], np.shape(v)))


def _atan2(f, args, ts, v):
    y, x = args
    r2 = x * x + y * y
    return _add(f.scale(x / r2, ts[0], np.shape(v)), f.scale(-y / r2, ts[1], np.shape(v)))


def _hypot(f, args, ts, v):
    a, b = args
    safe = np.where(v == 0, 1.0, v)
    return _add(f.scale(np.where(v == 0, 0.0, a / safe), ts[0], np.shape(v)),
                f.scale(np.where(v == 0, 0.0, b / safe), ts[1], np.shape(v)))


def _dot(f, args, ts, v):
    a, b = args
    return _add(None if ts[0] is None else ts[0] @ b, None if ts[1] is None else ts[1] @ a)


def _cross(f, args, ts, v):
    a, b = args
    return _add(None if ts[0] is None else np.cross(ts[0], b),
                None if ts[1] is None else np.cross(a, ts[1]))


def _diag(f, args, ts, v):
    x = np.asarray(args[0])
    t = f.lift(ts[0], x.shape)
    if x.ndim == 2:
        return np.diagonal(t, axis1=1, axis2=2).copy()
    out = np.zeros((f.k,) + np.shape(v))
    out[:, np.arange(x.size), np.arange(x.size)] = t
    return out


def _linspace(f, args, ts, v):
    n = np.size(v)
    s = np.linspace(0.0, 1.0, n) if n > 1 else np.zeros(n)
    return (np.outer(f.scalar(ts[0]), 1 - s) + np.outer(f.scalar(ts[1]), s))


def _rotation_derivatives(axis, theta):
    """(R, dR/dtheta) of the rotation about `axis` by theta (expr's rotx/roty/rotz)."""
    c, s = np.cos(theta), np.sin(theta)
    R = expr.FUNCTIONS[f"rot{axis}"].fn(theta)
    d = {"x": [[0, 0, 0], [0, -s, -c], [0, c, -s]], "y": [[-s, 0, c], [0, 0, 0], [-c, 0, -s]],
         "z": [[-s, -c, 0], [c, -s, 0], [0, 0, 0]]}[axis]
    return R, np.array(d, dtype=float)


def _rotation(axis, homogeneous):
    def rule(f, args, ts, v):
        _, dR = _rotation_derivatives(axis, float(np.reshape(args[0], -1)[0]))
        t = f.scalar(ts[0])[:, None, None] * dR[None]
        return _embed(f, t, None) if homogeneous else t
    return rule


def _embed(f, rotation, translation):
    """A 4x4 transform's tangent from its rotation's and translation's (None: zero)."""
    out = np.zeros((f.k, 4, 4))
    if rotation is not None:
        out[:, :3, :3] = rotation
    if translation is not None:
        out[:, :3, 3] = translation
    return out


def _three(f, args, ts):
    """Three angles or coordinates given as a, b, c or one 3-vector: values, tangents."""
    if len(args) == 1:
        return list(np.reshape(args[0], 3)), list(_flat(f, ts[0], np.shape(args[0])).T)
    return [float(np.reshape(a, -1)[0]) for a in args], [f.scalar(t) for t in ts]


def _transl(f, args, ts, v):
    _, tangents = _three(f, args, ts)
    return _embed(f, None, np.stack(tangents, axis=1))


def _composed(axes):
    """rpy2tr (Rz Ry Rx) and eul2tr (Rz Ry Rz): the product rule over the three rotations."""
    def rule(f, args, ts, v):
        angles, tangents = _three(f, args, ts)
        pairs = [_rotation_derivatives(axis, a) for axis, a in zip(axes, angles)]
        total = np.zeros((f.k, 3, 3))
        for i, t in enumerate(tangents):
            factors = [dR if j == i else R for j, (R, dR) in enumerate(pairs)]
            total += np.asarray(t)[:, None, None] * (factors[0] @ factors[1] @ factors[2])[None]
        return _embed(f, total, None)
    return rule


def _r2t(f, args, ts, v):
    return _embed(f, f.lift(ts[0], (3, 3)), None)


def _t2r(f, args, ts, v):
    return f.lift(ts[0], (4, 4))[:, :3, :3].copy()


def _rt2tr(f, args, ts, v):
    return _embed(f, None if ts[0] is None else f.lift(ts[0], (3, 3)),
                  None if ts[1] is None else _flat(f, ts[1], np.shape(args[1])))


def _matrix(A, name):
    """A matrix argument (a stack of them has no rule here)."""
    A = np.asarray(A)
    if A.ndim != 2:
        raise NoDerivative(f"{name}() of a stack of matrices has no derivative rule")
    return A


def _inv(f, args, ts, v):
    return -(v @ f.lift(ts[0], np.shape(args[0])) @ v)


def _pinv(f, args, ts, v):
    """d pinv(A) at constant rank (Golub and Pereyra): -P dA P + P P' dA' (I - A P)
    + (I - P A) dA' P' P."""
    A, P = _matrix(args[0], "pinv"), v
    dA = f.lift(ts[0], A.shape)
    dAt = np.swapaxes(dA, -1, -2)
    return (-P @ dA @ P + P @ P.T @ dAt @ (np.eye(A.shape[0]) - A @ P)
            + (np.eye(A.shape[1]) - P @ A) @ dAt @ P.T @ P)


def _det(f, args, ts, v):
    """d det(A) = trace(adj(A) dA); adj(A) from the singular value decomposition
    A = U S V' (adj(A) = det(V) det(U) V adj(S) U'), so a singular A has one too."""
    A = _matrix(args[0], "det")
    U, s, Vt = np.linalg.svd(A)
    others = np.array([np.prod(np.delete(s, i)) for i in range(len(s))])
    adj = np.linalg.det(Vt) * np.linalg.det(U) * (Vt.T * others) @ U.T
    return np.einsum("ji,kij->k", adj, f.lift(ts[0], A.shape))


def _cond(f, args, ts, v):
    """cond = s_max / s_min; d s_i = u_i' dA v_i."""
    A = _matrix(args[0], "cond")
    U, s, Vt = np.linalg.svd(A)
    dA = f.lift(ts[0], A.shape)
    ds = [np.einsum("i,kij,j->k", U[:, i], dA, Vt[i]) for i in (0, len(s) - 1)]
    return (ds[0] * s[-1] - s[0] * ds[1]) / s[-1] ** 2


def _solve(f, args, ts, v):
    """x = A^-1 b: dx = A^-1 (db - dA x)."""
    A, b = _matrix(args[0], "solve"), args[1]
    rhs = _add(None if ts[1] is None else f.lift(ts[1], np.shape(b)),
               None if ts[0] is None else -(f.lift(ts[0], np.shape(A)) @ v))
    if np.ndim(b) == 1:
        return np.linalg.solve(A, rhs.T).T
    return np.linalg.solve(A, rhs)


def _transpose(f, args, ts, v):
    t = f.lift(ts[0], np.shape(args[0]))
    return np.transpose(t, (0,) + tuple(range(t.ndim - 1, 0, -1)))


def _reshape(f, args, ts, v):
    return f.lift(ts[0], np.shape(args[0])).reshape((f.k,) + np.shape(v))


def _constant(f, args, ts, v):
    return None


_LN2, _LN10 = math.log(2.0), math.log(10.0)
_CALLS = {
    "sin": _elementwise(lambda x, v: np.cos(x)), "cos": _elementwise(lambda x, v: -np.sin(x)),
    "tan": _elementwise(lambda x, v: 1 + v * v),
    "asin": _elementwise(lambda x, v: 1 / np.sqrt(1 - x * x)),
    "acos": _elementwise(lambda x, v: -1 / np.sqrt(1 - x * x)),
    "atan": _elementwise(lambda x, v: 1 / (1 + x * x)),
    "sinh": _elementwise(lambda x, v: np.cosh(x)), "cosh": _elementwise(lambda x, v: np.sinh(x)),
    "tanh": _elementwise(lambda x, v: 1 - v * v),
    "asinh": _elementwise(lambda x, v: 1 / np.sqrt(x * x + 1)),
    "acosh": _elementwise(lambda x, v: 1 / np.sqrt(x * x - 1)),
    "atanh": _elementwise(lambda x, v: 1 / (1 - x * x)),
    "sqrt": _elementwise(lambda x, v: 0.5 / v), "exp": _elementwise(lambda x, v: v),
    "log": _elementwise(lambda x, v: 1 / x), "exp2": _elementwise(lambda x, v: v * _LN2),
    "log2": _elementwise(lambda x, v: 1 / (x * _LN2)),
    "log10": _elementwise(lambda x, v: 1 / (x * _LN10)),
    "abs": _elementwise(lambda x, v: np.sign(x)),
    "deg2rad": _elementwise(lambda x, v: np.pi / 180),
    "rad2deg": _elementwise(lambda x, v: 180 / np.pi),
    "array": _elementwise(lambda x, v: 1.0),
    "atan2": _atan2, "hypot": _hypot,
    "mod": lambda f, a, t, v: _modulo(f, a[0], a[1], v, t[0], t[1]),
    "rem": lambda f, a, t, v: _modulo(f, a[0], a[1], v, t[0], t[1], rounding=np.trunc),
    "clip": _clip, "where": _where, "min": _extreme(np.argmin), "max": _extreme(np.argmax),
    "sum": lambda f, a, t, v: _flat(f, t[0], np.shape(a[0])).sum(axis=1),
    "mean": lambda f, a, t, v: _flat(f, t[0], np.shape(a[0])).mean(axis=1),
    "cumsum": lambda f, a, t, v: _flat(f, t[0], np.shape(a[0])).cumsum(axis=1),
    "prod": _prod, "dot": _dot, "cross": _cross, "norm": _norm, "diag": _diag,
    "linspace": _linspace,
    "rotx": _rotation("x", False), "roty": _rotation("y", False), "rotz": _rotation("z", False),
    "trotx": _rotation("x", True), "troty": _rotation("y", True), "trotz": _rotation("z", True),
    "transl": _transl, "rpy2tr": _composed("zyx"), "eul2tr": _composed("zyz"),
    "r2t": _r2t, "t2r": _t2r, "rt2tr": _rt2tr,
    "inv": _inv, "pinv": _pinv, "det": _det, "cond": _cond, "solve": _solve,
    "transpose": _transpose, "reshape": _reshape,
    # piecewise constant, or a value whose inputs decide only its shape
    **{name: _constant for name in ("sign", "floor", "ceil", "round", "trunc", "isfinite",
                                    "eye", "zeros", "ones")},
}
