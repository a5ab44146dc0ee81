"""A declared behaviour's interpreted form (blocksim/language/inplace.py) against a second
algorithm: the expression evaluator itself (expr.compile_expr), which a function block runs.
The programs must give its values to the bit, read their arrays where they lie (a new input
value is seen without binding again) and write into the target given."""
import numpy as np
import pytest

from blocksim.language import expr
from blocksim.language.inplace import FUNCTIONS, _plan, compile_inplace

ARRAYS = {"u": np.array([0.3, -1.7, 2.5]), "v": np.array(0.8),
          "K": np.array([[1.5, -2.0, 0.25], [0.5, 3.0, -1.0]])}

TEXTS = ["u * v", "-u + v - u", "1.0 / u * v", "K @ u", "u ** 2 + v ** u",
         "(v * 1.5) ** (v * 2)", "where(u > 0, sin(u), exp(u))", "clip(u, -1, v)",
         "min(u, v) + max(u, 0)", "u > 0 and u < 2", "not (u > 0) or v == 0.8",
         "0 < u <= 2.5", "sum(u * u) + hypot(v, 2)", "abs(u) % 0.7 + sign(u)", "u"]


@pytest.mark.parametrize("text", TEXTS)
def test_the_program_computes_the_evaluators_values_to_the_bit(text):
    names = tuple(ARRAYS)
    f = expr.compile_expr(text, names, {}, functions=FUNCTIONS)
    arrays = {k: a.copy() for k, a in ARRAYS.items()}
    out = np.full(np.shape(f(*arrays.values())), np.nan)
    run = compile_inplace(text, arrays, out)
    run(0.0)
    np.testing.assert_array_equal(out, f(*arrays.values()))
    arrays["u"][:] = [-0.4, 1.1, 0.9]  # read where it lies: the new value, no new program
    arrays["v"][...] = 0.5
    run(1.0)
    np.testing.assert_array_equal(out, f(*arrays.values()))


def test_a_target_of_another_shape_but_the_size_is_written_in_place():
    dx = np.zeros(3)
    compile_inplace("(u - x) * v", {"u": ARRAYS["u"], "x": np.ones(3), "v": ARRAYS["v"]},
                    dx)(0.0)
    np.testing.assert_array_equal(dx, (ARRAYS["u"] - 1.0) * 0.8)  # by hand: (u - 1) * 0.8


def test_what_it_cannot_write_in_place_is_an_error():
    with pytest.raises(expr.ExprError, match="in-place"):
        compile_inplace("inv(K[:, 0:2])", ARRAYS, np.zeros((2, 2)))
    with pytest.raises(expr.ExprError, match="shape"):
        compile_inplace("u", ARRAYS, np.zeros(2))


def test_a_target_the_expression_reads_gets_the_value_computed_before():
    """An update writes the state it reads: nested where's must not see it half written."""
    x = np.array([0.5, -2.0, -0.5])
    text = "where(x > 0, x * 2, where(x < -1, x - 1, x + 10))"
    expected = expr.compile_expr(text, ("x",), {}, functions=FUNCTIONS)(x.copy())
    compile_inplace(text, {"x": x}, x)(0.0)
    np.testing.assert_array_equal(x, expected)  # by hand: [1.0, -3.0, 9.5]
    np.testing.assert_array_equal(x, [1.0, -3.0, 9.5])


def test_an_update_copies_only_when_it_reads_its_state_after_writing_it():
    """x[k+1] = A @ x + B @ u reads x only for the products made before the sum that writes
    it: written in place, no copy. A list whose second item reads x after the first is
    written takes the value made apart. Both to the bit of numpy by hand."""
    A, B, u = np.array([[0.9, 0.13], [-0.21, 0.7]]), np.array([[1.1], [0.37]]), np.array([0.83])
    x = np.array([-0.43, 0.97])
    expected = np.matmul(A, x) + np.matmul(B, u)
    text = "A @ x + B @ u"
    compile_inplace(text, {"A": A, "x": x, "B": B, "u": u}, x)(0.0)
    assert x.tobytes() == expected.tobytes()
    shapes = (("A", (2, 2)), ("x", (2,)), ("B", (2, 1)), ("u", (1,)))
    assert not _plan(text, shapes).reads_after_write({"x"})
    text = "[sum(x), sum(x) * 2]"
    assert _plan(text, (("x", (2,)),)).reads_after_write({"x"})
    compile_inplace(text, {"x": x}, x)(0.0)
    total = expected[0] + expected[1]
    np.testing.assert_array_equal(x, [total, total * 2])  # by hand: from x before the update
