"""The linear algebra of a function block's expression in C (inv, solve, pinv, det, cond):
numpy.linalg's LAPACK calls as numpy makes them (runtime/rt_linalg.c), on the operand's
values (numpy copies them into LAPACK's layout whatever their own), and numpy's errors."""
from __future__ import annotations

import math

from ..lowering import fits_stack, needs_lapack

SINGULAR = "LinAlgError: Singular matrix"
NO_SVD = "LinAlgError: SVD did not converge"


def _operand(lw, val):
    """A matrix (a lowered value) as numpy.linalg hands it to LAPACK (its values, whatever
    its layout)."""
    needs_lapack()
    # rt_linalg.c's copies of it and LAPACK's work arrays: at most about 8 of its size
    fits_stack(8 * math.prod(val.shape), "the linear algebra of a "
               f"{'x'.join(map(str, val.shape))} matrix")
    return lw.code.contiguous(val)


def _checked(lw, node, call, error):
    """node's value from `call` (C with `{out}` for its place) that returns LAPACK's info,
    failing with numpy's `error` where it is not 0."""
    out = lw.result(node)
    lw.code.emit(f"if ({call.format(out=out.ptr)} != 0) {{ {lw.code.fail(error)} }}")
    return out


def _watched(lw, cond):
    """The block's watch of the inversion whose condition number is the C `cond`."""
    if lw.watch:
        lw.code.emit(f"{{ double cond = {cond}; {lw.watch} }}")


def _inv(lw, node, A):
    held = lw.value(A)
    A = _operand(lw, held)
    out = _checked(lw, node, f"rt_inv({A.ptr}, {A.shape[0]}, {{out}})", SINGULAR)
    n = A.shape[0]
    # kappa_1 = max column sum of |A| times that of |A^-1|, numpy's reductions of them
    s0, s1 = held.strides
    _watched(lw, f"rt_norm1({held.ptr}, {n}, {n}, {s0}, {s1}, {int(n >= 8 and abs(s0) < abs(s1))})"
                 f" * rt_norm1({out.ptr}, {n}, {n}, {n}, 1, 0)")
    return out


def _solve(lw, node, A, b):
    A, b = _operand(lw, lw.value(A)), lw.code.contiguous(lw.value(b))
    fits_stack(8 * math.prod(A.shape) + math.prod(b.shape), "solve's right-hand side")
    nrhs = 1 if b.ndim == 1 else b.shape[1]
    return _checked(lw, node, f"rt_solve({A.ptr}, {A.shape[0]}, {b.ptr}, {nrhs}, {{out}})",
                    SINGULAR)


def _pinv(lw, node, A):
    A, cond = _operand(lw, lw.value(A)), lw.code.name("cond")
    lw.code.emit(f"double {cond};")
    out = _checked(lw, node, f"rt_pinv({A.ptr}, {A.shape[0]}, {A.shape[1]}, {{out}}, &{cond})",
                   NO_SVD)
    _watched(lw, cond)
    return out


def _cond(lw, node, A):
    A = _operand(lw, lw.value(A))
    return _checked(lw, node, f"rt_cond({A.ptr}, {A.shape[0]}, {A.shape[1]}, {{out}})", NO_SVD)


def _det(lw, node, A):
    A = _operand(lw, lw.value(A))
    out = lw.result(node)
    lw.code.emit(f"({out.ptr})[0] = rt_det({A.ptr}, {A.shape[0]});")
    return out


HANDLERS = {"inv": _inv, "solve": _solve, "pinv": _pinv, "det": _det, "cond": _cond}
