"""Exact derivatives of expressions (blocksim/language/derivatives.py): every function of the
language has a rule; each rule against a second algorithm, central differences of the
evaluator itself, at points away from kinks; closed forms worked by hand; what has no rule
says so."""
import numpy as np
import pytest

from blocksim.language import derivatives
from blocksim.language.expr import FUNCTIONS, MATRIX_FUNCTIONS, Function, compile_expr

ALL = {**FUNCTIONS, **MATRIX_FUNCTIONS}
NAMES = {"K": np.array([[1.0, 2.0], [3.0, 4.0]]), "c": np.float64(0.3)}
M2, V2 = [[2, 1], [0.5, 3]], [1, 2]
N23 = [[2, 1, 0.3], [0.5, 3, -1]]
X3 = [0.3, -1.2, 1.7]

CASES = [  # (expression, its inputs, their values): every function and operator
    ("sin(x)*x**2 + exp(-x)/(1 + x) - x", ["x"], [0.7]),
    ("tan(x) + asin(x/3) + acos(x/3) + atan(x) + sinh(x) + cosh(x) + tanh(x) + asinh(x)"
     " + acosh(x + 3) + atanh(x/3) + sqrt(x + 2) + log(x + 2) + exp2(x) + log2(x + 2)"
     " + log10(x + 2) + deg2rad(x) + rad2deg(x) + array(x)", ["x"], [[0.3, -1.2]]),
    ("[x[0]*x[1], atan2(x[1], x[0]), hypot(x[0], x[1])]", ["x"], [[0.3, -1.2]]),
    ("x ** y + y ** 2 + 2 ** x", ["x", "y"], [1.3, 0.7]),
    ("K @ u + c*u", ["u"], [[0.5, -0.4]]),
    ("u @ K @ u + (K @ K)[1, 0] * u", ["u"], [[0.5, -0.4]]),
    ("inv(M) @ v", ["M", "v"], [M2, V2]),
    ("det(M) + cond(M)", ["M"], [M2]),
    ("pinv(N)", ["N"], [N23]),
    ("solve(M, v)", ["M", "v"], [M2, V2]),
    ("solve(M, W)", ["M", "W"], [M2, [[1, 2], [3, 4]]]),
    ("transpose(N) @ N", ["N"], [N23]),
    ("reshape(N, 3, 2)[1:, 0]", ["N"], [N23]),
    ("sum(x**2) + prod(x) + mean(x) + norm(x) + cumsum(x)[1] + dot(x, x)", ["x"], [X3]),
    ("cross(x, y)", ["x", "y"], [X3, [1, 2, 0.5]]),
    ("diag(x) @ x + diag(diag(x))", ["x"], [X3]),
    ("min(x) + max(x) + min(x, y) + max(x, 0.5*y)", ["x", "y"], [X3, [1, 2, 0.5]]),
    ("clip(x, -1, 1) + where(x > 0, x**2, -x) + abs(x) + sign(x) + floor(x) + ceil(x)"
     " + round(x) + trunc(x) + isfinite(x)", ["x"], [X3]),
    ("mod(x, 0.7) + rem(x, 0.7) + x % 0.9", ["x"], [X3]),
    ("linspace(a, b, 5) + sum(eye(2)) + sum(zeros(2)) + sum(ones(3))", ["a", "b"], [0.3, 2.0]),
    ("rotx(t) @ roty(t) @ rotz(2*t)", ["t"], [0.4]),
    ("trotx(t) @ troty(t) @ trotz(t) @ transl(t, 2*t, 1) @ transl([t, 1, 0])", ["t"], [0.4]),
    ("rpy2tr(a, b, d) + eul2tr([a, b, d])", ["a", "b", "d"], [0.4, -0.2, 0.9]),
    ("t2r(r2t(R)) @ R + rt2tr(R, v)[0:3, 3]", ["R", "v"],
     [[[1, 0.1, 0], [0.2, 1, 0], [0, 0.3, 1]], [1, 2, 3]]),
    ("x[0] + x[1]*x[0] - x[1] + x[0]*2 - 3 + x[-1:][0]", ["x"], [[0.3, -1.2]]),
    ("-x + +x + (not x) * x + (x > 0) * x + (x > 0 and x < 1) * x", ["x"], [[0.3, -1.2]]),
]


def differences(text, inputs, args):
    """The second algorithm: central differences of the evaluator's own function."""
    f = compile_expr(text, inputs, NAMES)
    args = [np.array(a, dtype=float) for a in args]
    columns = []
    for i, a in enumerate(args):
        for k in range(a.size):
            h = 1e-6 * max(1.0, abs(a.flat[k]))
            up, down = [b.copy() for b in args], [b.copy() for b in args]
            up[i].flat[k] += h
            down[i].flat[k] -= h
            columns.append((np.ravel(f(*up)) - np.ravel(f(*down))) / (2 * h))
    return np.array(columns).T


def test_every_function_of_the_language_has_a_rule():
    assert set(derivatives._CALLS) == set(ALL)
    called = {name for text, _, _ in CASES for name in ALL if f"{name}(" in text}
    assert called == set(ALL)


@pytest.mark.parametrize("text, inputs, args", CASES, ids=[c[0][:30] for c in CASES])
def test_each_rule_equals_central_differences_of_the_evaluator(text, inputs, args):
    J = derivatives.jacobian(text, inputs, NAMES, args, functions=ALL)
    want = differences(text, inputs, args)
    assert J.shape == want.shape
    np.testing.assert_allclose(J, want, rtol=1e-7, atol=1e-7 * max(1.0, np.abs(want).max()))


def test_closed_forms_worked_by_hand():
    x = 0.7  # d/dx sin(x) x^2 = cos(x) x^2 + 2 x sin(x)
    J = derivatives.jacobian("sin(x)*x**2", ["x"], {}, [x], functions=ALL)
    assert J == [[pytest.approx(np.cos(x) * x**2 + 2 * x * np.sin(x), rel=1e-15)]]
    # d det([[a, b], [c, d]]) / d(a, b, c, d) = (d, -c, -b, a), also where it is singular,
    # where det * inv(A) (the adjugate's usual form) is not defined
    J = derivatives.jacobian("det(M)", ["M"], {}, [[[1, 2], [2, 4]]], functions=ALL)
    np.testing.assert_allclose(J, [[4, -2, -2, 1]], rtol=1e-14, atol=1e-14)
    # d inv(A) = -inv(A) dA inv(A): for A = 2 I, d inv/dA_00 = -E_00 / 4
    J = derivatives.jacobian("inv(M)", ["M"], {}, [[[2, 0], [0, 2]]], functions=ALL)
    assert J[:, 0].tolist() == [-0.25, 0, 0, 0]
    # a chain of 1,500 terms (the evaluator's loop) is no deeper for the derivative
    J = derivatives.jacobian(" + ".join(["x"] * 1500), ["x"], {}, [1.0], functions=ALL)
    assert J == [[1500.0]]
    # a value that does not depend on the inputs has a zero derivative
    J = derivatives.jacobian("c * 2 + 0 * x", ["x"], NAMES, [[1.0, 2.0]], functions=ALL)
    np.testing.assert_array_equal(J, np.zeros((2, 2)))


def test_a_function_without_a_rule_says_so():
    robot = Function(lambda r, q: np.sin(q), 2, 2, subject="robots", entries={"arm": object()})
    with pytest.raises(derivatives.NoDerivative, match=r"fk\(\) has no derivative rule"):
        derivatives.jacobian("fk(arm, q) * 2", ["q"], {}, [[0.1, 0.2]],
                             functions={**ALL, "fk": robot.bound({"arm": object()})})
    with pytest.raises(derivatives.NoDerivative, match="det.. of a stack of matrices"):
        derivatives.jacobian("det(M)", ["M"], {}, [np.ones((2, 2, 2))], functions=ALL)
