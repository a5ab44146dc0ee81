"""The linear algebra of a function block's expression in C (inv, solve, pinv, det, cond):
numpy.linalg's LAPACK calls as numpy makes them (runtime/rt_linalg.c), on the operand's
values (numpy copies them into LAPACK's layout whatever their own), and numpy's errors."""
from __future__ import annotations

from ..lowering import needs_lapack

SINGULAR = "LinAlgError: Singular matrix"
NO_SVD = "LinAlgError: SVD did not converge"


def _operand(lw, A):
    """A matrix as numpy.linalg hands it to LAPACK (its values, whatever its layout)."""
    needs_lapack()
    return lw.code.contiguous(lw.value(A))


def _checked(lw, node, call, error):
    """node's value from `call` (C with `{out}` for its place) that returns LAPACK's info,
    failing with numpy's `error` where it is not 0."""
    out = lw.result(node)
    lw.code.emit(f"if ({call.format(out=out.ptr)} != 0) {{ {lw.code.fail(error)} }}")
    return out


def _inv(lw, node, A):
    A = _operand(lw, A)
    return _checked(lw, node, f"rt_inv({A.ptr}, {A.shape[0]}, {{out}})", SINGULAR)


def _solve(lw, node, A, b):
    A, b = _operand(lw, A), lw.code.contiguous(lw.value(b))
    nrhs = 1 if b.ndim == 1 else b.shape[1]
    return _checked(lw, node, f"rt_solve({A.ptr}, {A.shape[0]}, {b.ptr}, {nrhs}, {{out}})",
                    SINGULAR)


def _pinv(lw, node, A):
    A, cond = _operand(lw, A), lw.code.name("cond")
    lw.code.emit(f"double {cond};")
    return _checked(lw, node, f"rt_pinv({A.ptr}, {A.shape[0]}, {A.shape[1]}, {{out}}, &{cond})",
                    NO_SVD)


def _cond(lw, node, A):
    A = _operand(lw, A)
    return _checked(lw, node, f"rt_cond({A.ptr}, {A.shape[0]}, {A.shape[1]}, {{out}})", NO_SVD)


def _det(lw, node, A):
    A = _operand(lw, A)
    out = lw.result(node)
    lw.code.emit(f"({out.ptr})[0] = rt_det({A.ptr}, {A.shape[0]});")
    return out


HANDLERS = {"inv": _inv, "solve": _solve, "pinv": _pinv, "det": _det, "cond": _cond}
