"""The rotations and transforms of the expression language in C (rotx ... eul2tr): the
evaluator's own formulas (blocksim/language/expr.py), with numpy's cos and sin of the angle
and numpy's matrix products where the evaluator multiplies rotations."""
from __future__ import annotations

from .values import Val


def _cos_sin(lw, angle):
    """C variables (c, s): numpy's cos and sin of a one-element value (the evaluator's
    _cos_sin: the angle as a numpy scalar, numpy's loops)."""
    lw.code.need_ufunc("cos", "sin")
    c, s = lw.code.name("c"), lw.code.name("s")
    lw.code.emit(f"double {c}, {s}; rt_ufunc1(RT_UF_COS, {angle.ptr}, 0, &{c}, 0, 1); "
                 f"rt_ufunc1(RT_UF_SIN, {angle.ptr}, 0, &{s}, 0, 1);")
    return c, s


def _rotation(axis, c, s):
    """The 9 C expressions of the 3 x 3 rotation about `axis` (the evaluator's rotx...)."""
    return {"x": ("1.0", "0.0", "0.0", "0.0", c, f"-{s}", "0.0", s, c),
            "y": (c, "0.0", s, "0.0", "1.0", "0.0", f"-{s}", "0.0", c),
            "z": (c, f"-{s}", "0.0", s, c, "0.0", "0.0", "0.0", "1.0")}[axis]


_IDENTITY = ("1.0", "0.0", "0.0", "0.0", "1.0", "0.0", "0.0", "0.0", "1.0")


def _fill(lw, out, items):
    for k, item in enumerate(items):
        lw.code.emit(f"({out.ptr})[{k}] = {item};")


def _homogeneous(lw, node, rotation, translation=("0.0", "0.0", "0.0")):
    """node's 4 x 4 [[R, t], [0, 0, 0, 1]]; rotation: 9 C expressions, row by row."""
    out = lw.result(node)
    r, t = list(rotation), list(translation)
    _fill(lw, out, r[0:3] + [t[0]] + r[3:6] + [t[1]] + r[6:9] + [t[2]]
          + ["0.0", "0.0", "0.0", "1.0"])
    return out


def _rot(axis, homogeneous):
    def lower(lw, node, theta):
        c, s = _cos_sin(lw, lw.value(theta))
        rotation = _rotation(axis, c, s)
        if homogeneous:
            return _homogeneous(lw, node, rotation)
        out = lw.result(node)
        _fill(lw, out, rotation)
        return out
    return lower


def _block(val, rows, cols):
    """The C expressions of the elements of a matrix's leading rows x cols block, row by
    row."""
    return [val.at([str(i), str(j)], val.shape) for i in range(rows) for j in range(cols)]


def _transl(lw, node, *args):
    if len(args) == 1:  # transl(p): p's three elements, row-major
        p = lw.code.contiguous(lw.value(args[0]))
        values = [f"({p.ptr})[{k}]" for k in range(3)]
    else:
        values = [f"({lw.value(a).ptr})[0]" for a in args]
    return _homogeneous(lw, node, _IDENTITY, values)


def _r2t(lw, node, R):
    return _homogeneous(lw, node, _block(lw.value(R), 3, 3))


def _t2r(lw, node, T):
    out = lw.result(node)
    _fill(lw, out, _block(lw.value(T), 3, 3))
    return out


def _rt2tr(lw, node, R, t):
    t = lw.code.contiguous(lw.value(t))
    return _homogeneous(lw, node, _block(lw.value(R), 3, 3),
                        [f"({t.ptr})[{k}]" for k in range(3)])


def _three_rotations(axes):
    """rpy2tr (z, y, x) and eul2tr (z, y, z): (R1 @ R2) @ R3 with numpy's matmul, in the
    homogeneous transform (the evaluator's _rpy2tr, _eul2tr)."""
    def lower(lw, node, *args):
        if len(args) == 1:
            v = lw.code.contiguous(lw.value(args[0]))
            angles = [Val(f"{v.ptr} + {k}", (), ()) for k in range(3)]
        else:
            angles = [lw.value(a) for a in args]
        mats = []
        for axis, angle in zip(axes, angles):
            m = lw.code.temp((3, 3))
            _fill(lw, m, _rotation(axis, *_cos_sin(lw, angle)))
            mats.append(m)
        first, product = lw.code.temp((3, 3)), lw.code.temp((3, 3))
        for a, b, out in ((mats[0], mats[1], first), (first, mats[2], product)):
            lw.code.emit(f"rt_matmul_ex({a.ptr}, 3, 1, {b.ptr}, 3, 1, 3, 3, 3, {out.ptr});")
        return _homogeneous(lw, node, [f"({product.ptr})[{k}]" for k in range(9)])
    return lower


HANDLERS = {
    "rotx": _rot("x", False), "roty": _rot("y", False), "rotz": _rot("z", False),
    "trotx": _rot("x", True), "troty": _rot("y", True), "trotz": _rot("z", True),
    "transl": _transl, "r2t": _r2t, "t2r": _t2r, "rt2tr": _rt2tr,
    "rpy2tr": _three_rotations("zyx"), "eul2tr": _three_rotations("zyz"),
}
