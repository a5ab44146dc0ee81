"""The safe expression evaluator and the `function` block compiler."""
import ast
import math

import numpy as np
import pytest

from blocksim.language.expr import (CONSTANTS, FUNCTIONS, MATRIX_FUNCTIONS, ExprError, check_not_reserved,
                           compile_expr, evaluate)

NAMES = {"Kp": 100.0, "x": np.array([10.0, 20.0, 30.0, 40.0]),
         "M": np.array([[1.0, 2.0], [3.0, 4.0]]), "n": 2.0}
POSES = {"p560": {"qz": np.zeros(6), "qr": np.array([0, np.pi / 2, -np.pi / 2, 0, 0, 0])}}


def ev(text, names=NAMES, **kw):
    return evaluate(text, names, dotted=POSES, **kw)


# ---- values and arithmetic -------------------------------------------------------------------
@pytest.mark.parametrize("text, expected", [
    ("1 + 2 * 3", 7.0),             # * before +
    ("(1 + 2) * 3", 9.0),
    ("1 - 2 - 3", -4.0),            # left-associative
    ("2 * 3 / 4", 1.5),
    ("7 / 2", 3.5),                 # true division, also of integer literals
    ("2 ** 3 ** 2", 512.0),         # right-associative: 2 ** 9
    ("-2 ** 2", -4.0),              # unary minus binds looser than **
    ("+3 - -2", 5.0),
    ("2 * pi", 2 * math.pi),
    ("e", math.e),
    ("-inf", -math.inf),
    ("1e-3 * Kp", 0.1),
    ("Kp / 4 + n", 27.0),
    ("  3 +\n 4", 7.0),             # YAML block scalars may carry newlines
])
def test_arithmetic(text, expected):
    value = ev(text)
    assert isinstance(value, np.ndarray) and value.shape == () and value.dtype == np.float64
    assert value == pytest.approx(expected, rel=1e-15)


def test_yaml_values():
    assert evaluate(True, {}) is True and evaluate(False, {}) is False
    five = evaluate(5, {})
    assert isinstance(five, np.ndarray) and five.shape == () and five == 5.0
    assert evaluate(float("inf"), {}) == np.inf
    # A list of numbers and expression strings; nested lists are matrices row by row.
    assert np.array_equal(ev([1, "pi/2", "2*Kp"]), [1.0, math.pi / 2, 200.0])
    assert np.array_equal(ev([[1, "2"], ["n + 1", 4]]), [[1, 2], [3, 4]])
    assert ev([]).shape == (0,)
    # An element may itself be a vector: two rows of 6.
    assert ev(["p560.qz", "p560.qr"]).shape == (2, 6)
    # A numpy array (a Python caller's override) is a value too: a float64 copy.
    given = np.array([[1, 2], [3, 4]])
    value = evaluate(given, {})
    assert value.dtype == np.float64 and np.array_equal(value, given) and value is not given


def test_results_are_new_arrays():
    names = {"v": np.array([1.0, 2.0])}
    out = evaluate("v", names)
    out[0] = 99.0
    assert names["v"][0] == 1.0


def test_matmul():
    assert np.array_equal(ev("M @ [5, 6]"), [17.0, 39.0])            # [1*5+2*6, 3*5+4*6]
    assert np.array_equal(ev("M @ M"), [[7.0, 10.0], [15.0, 22.0]])
    assert ev("[1, 2, 3] @ [4, 5, 6]") == 32.0                        # 4 + 10 + 18
    np.testing.assert_allclose(ev("rotz(pi/2) @ [1, 0, 0]"), [0.0, 1.0, 0.0], atol=1e-15)


@pytest.mark.parametrize("text, expected", [
    ("x[0]", 10.0), ("x[-1]", 40.0), ("x[n - 1]", 20.0),
    ("x[1:3]", [20.0, 30.0]), ("x[::2]", [10.0, 30.0]), ("x[::-1]", [40.0, 30.0, 20.0, 10.0]),
    ("x[:n]", [10.0, 20.0]), ("M[1, 0]", 3.0), ("M[:, 1]", [2.0, 4.0]), ("M[0][1]", 2.0),
    ("[[1, 2], [3, 4]][1]", [3.0, 4.0]), ("p560.qr[1]", math.pi / 2),
])
def test_indexing_and_slicing(text, expected):
    assert np.array_equal(ev(text), expected)


def test_lists_and_tuples_are_arrays():
    assert np.array_equal(ev("[1, 2, 3]"), [1, 2, 3])
    assert np.array_equal(ev("(1, 2)"), [1, 2])
    assert np.array_equal(ev("[[1, 2], [3, 4]]"), NAMES["M"])
    assert np.array_equal(ev("[x[0], Kp]"), [10, 100])


def test_min_max():
    assert ev("min([3, 1, 2])") == 1.0 and ev("max(M)") == 4.0       # one argument: reduce
    assert np.array_equal(ev("min([3, 1, 2], [2, 2, 2])"), [2, 1, 2])  # two: element-wise
    assert np.array_equal(ev("max([1, 5], [4, 2])"), [4, 5])
    assert np.array_equal(ev("max(x, 25)"), [25, 25, 30, 40])


V = np.array([0.3, -0.7, 0.2])
A = np.array([[4.0, 1.0], [2.0, 3.0]])
FUNCTION_CASES = {
    "sin": ("sin([0.3, -0.7, 0.2])", np.sin(V)),
    "cos": ("cos([0.3, -0.7, 0.2])", np.cos(V)),
    "tan": ("tan([0.3, -0.7, 0.2])", np.tan(V)),
    "asin": ("asin([0.3, -0.7, 0.2])", np.arcsin(V)),
    "acos": ("acos([0.3, -0.7, 0.2])", np.arccos(V)),
    "atan": ("atan([0.3, -0.7, 0.2])", np.arctan(V)),
    "atan2": ("atan2([1, -1], [-1, -1])", np.arctan2([1, -1], [-1, -1])),
    "sqrt": ("sqrt([4, 2])", [2.0, np.sqrt(2)]),
    "exp": ("exp([0, 1])", [1.0, np.e]),
    "log": ("log([1, e])", [0.0, 1.0]),
    "abs": ("abs([0.3, -0.7, 0.2])", np.abs(V)),
    "sign": ("sign([0.3, -0.7, 0])", [1.0, -1.0, 0.0]),
    "min": ("min([0.3, -0.7, 0.2])", -0.7),
    "max": ("max([0.3, -0.7, 0.2])", 0.3),
    "sum": ("sum([[1, 2], [3, 4]])", 10.0),                    # numpy: all elements
    "prod": ("prod([[1, 2], [3, 4]])", 24.0),                  # 1*2*3*4
    "mean": ("mean([[1, 2], [3, 6]])", 3.0),                   # 12 / 4
    "cumsum": ("cumsum([1, 2, 3, 4])", [1.0, 3.0, 6.0, 10.0]),
    "dot": ("dot([1, 2, 3], [4, 5, 6])", 32.0),                # 4 + 10 + 18
    "cross": ("cross([1, 2, 3], [4, 5, 6])", [-3.0, 6.0, -3.0]),  # (2*6-3*5, 3*4-1*6, 1*5-2*4)
    "sinh": ("sinh([0.3, -0.7])", [(math.e**0.3 - math.e**-0.3) / 2,
                                   (math.e**-0.7 - math.e**0.7) / 2]),
    "cosh": ("cosh([0.3, -0.7])", [(math.e**0.3 + math.e**-0.3) / 2,
                                   (math.e**-0.7 + math.e**0.7) / 2]),
    "tanh": ("tanh([0.3, -0.7])", [(math.e**0.6 - 1) / (math.e**0.6 + 1),
                                   (math.e**-1.4 - 1) / (math.e**-1.4 + 1)]),
    "asinh": ("asinh([0.3, -0.7])", [math.log(0.3 + math.sqrt(1.09)),
                                     math.log(-0.7 + math.sqrt(1.49))]),
    "acosh": ("acosh([1, 2])", [0.0, math.log(2 + math.sqrt(3))]),
    "atanh": ("atanh([0.5, -0.2])", [0.5 * math.log(3), 0.5 * math.log(0.8 / 1.2)]),
    "log10": ("log10([1000, 0.01])", [3.0, -2.0]),
    "log2": ("log2([8, 0.5])", [3.0, -1.0]),
    "exp2": ("exp2([3, -1])", [8.0, 0.5]),
    "hypot": ("hypot([3, 5], [4, 12])", [5.0, 13.0]),
    "floor": ("floor([2.5, -2.5, 3])", [2.0, -3.0, 3.0]),
    "ceil": ("ceil([2.5, -2.5, 3])", [3.0, -2.0, 3.0]),
    "round": ("round([2.5, -2.5, 1.4, -0.6, 0.49999999999999994])",  # half away from zero,
              [3.0, -3.0, 1.0, -1.0, 0.0]),                            # as MATLAB
    "trunc": ("trunc([2.7, -2.7])", [2.0, -2.0]),
    "mod": ("mod([7, -7, 7, -7, 5], [3, 3, -3, -3, 0])", [1.0, 2.0, -2.0, -1.0, 5.0]),  # MATLAB
    "rem": ("rem([7, -7, 7, -7], [3, 3, -3, -3])", [1.0, -1.0, 1.0, -1.0]),            # MATLAB
    "clip": ("clip([-2, 0.5, 3], 0, 1)", [0.0, 0.5, 1.0]),
    "where": ("where([1, 0, -2], [10, 20, 30], 5)", [10.0, 5.0, 30.0]),
    "isfinite": ("isfinite([1, inf, -inf])", [1.0, 0.0, 0.0]),
    "norm": ("norm([3, 4])", 5.0),
    "diag": ("diag([1, 2])", [[1.0, 0.0], [0.0, 2.0]]),
    "eye": ("eye(2, 3)", np.eye(2, 3)),
    "zeros": ("zeros(2, 3)", np.zeros((2, 3))),
    "ones": ("ones((3,))", np.ones(3)),
    "array": ("array([1, 2])", [1.0, 2.0]),
    "linspace": ("linspace(0, 1, 5)", [0.0, 0.25, 0.5, 0.75, 1.0]),
    "deg2rad": ("deg2rad(180)", np.pi),
    "rad2deg": ("rad2deg(pi / 2)", 90.0),
    "rotx": ("rotx(pi / 2)", [[1, 0, 0], [0, 0, -1], [0, 1, 0]]),
    "roty": ("roty(pi / 2)", [[0, 0, 1], [0, 1, 0], [-1, 0, 0]]),
    "rotz": ("rotz(pi / 2)", [[0, -1, 0], [1, 0, 0], [0, 0, 1]]),
    "transl": ("transl(1, 2, 3)", [[1, 0, 0, 1], [0, 1, 0, 2], [0, 0, 1, 3], [0, 0, 0, 1]]),
    "trotx": ("trotx(pi / 2)", [[1, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]]),
    "troty": ("troty(pi / 2)", [[0, 0, 1, 0], [0, 1, 0, 0], [-1, 0, 0, 0], [0, 0, 0, 1]]),
    "trotz": ("trotz(pi / 2)", [[0, -1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]),
    "r2t": ("r2t([[0, -1, 0], [1, 0, 0], [0, 0, 1]])",
            [[0, -1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]),
    "t2r": ("t2r([[0, -1, 0, 4], [1, 0, 0, 5], [0, 0, 1, 6], [0, 0, 0, 1]])",
            [[0, -1, 0], [1, 0, 0], [0, 0, 1]]),
    "rt2tr": ("rt2tr([[0, -1, 0], [1, 0, 0], [0, 0, 1]], [4, 5, 6])",
              [[0, -1, 0, 4], [1, 0, 0, 5], [0, 0, 1, 6], [0, 0, 0, 1]]),
    # RVC (Corke, 2011), section 2.2.1.2: eul2r(0.1, 0.2, 0.3), printed to 4 decimals
    "eul2tr": ("eul2tr(0.1, 0.2, 0.3)", [[0.9021, -0.3836, 0.1977, 0], [0.3875, 0.9216, 0.0198, 0],
                                         [-0.1898, 0.0587, 0.9801, 0], [0, 0, 0, 1]]),
    # release 7 (seed 000): rpy2tr(r, p, y) = Rz(r) Ry(p) Rx(y); Rz(0.3) Ry(0.2) Rx(0.1) is
    # also the later toolboxes' rpy2r(0.1, 0.2, 0.3) (roll about x), printed to 4 decimals
    "rpy2tr": ("rpy2tr(0.3, 0.2, 0.1)", [[0.9363, -0.2751, 0.2184, 0], [0.2896, 0.9564, -0.0370, 0],
                                         [-0.1987, 0.0978, 0.9752, 0], [0, 0, 0, 1]]),
    "inv": ("inv([[4, 1], [2, 3]])", np.linalg.inv(A)),
    "pinv": ("pinv([[1, 2], [2, 4], [3, 6]])", np.linalg.pinv([[1, 2], [2, 4], [3, 6]])),
    "det": ("det([[4, 1], [2, 3]])", 10.0),                     # 4*3 - 1*2
    "cond": ("cond([[2, 0], [0, 8]])", 4.0),                    # 8 / 2
    "solve": ("solve([[4, 1], [2, 3]], [1, 2])", [0.1, 0.6]),   # 4a+b=1, 2a+3b=2
    "transpose": ("transpose([[1, 2, 3]])", [[1], [2], [3]]),
    "reshape": ("reshape([1, 2, 3, 4, 5, 6], (2, 3))", [[1, 2, 3], [4, 5, 6]]),
}


def test_every_function_is_covered():
    assert set(FUNCTION_CASES) == set(FUNCTIONS) | set(MATRIX_FUNCTIONS)
    assert set(CONSTANTS) == {"pi", "e", "inf", "eps"}
    assert CONSTANTS["eps"] == 2.0 ** -52  # the spacing of doubles at 1, as MATLAB's eps


@pytest.mark.parametrize("name", sorted(FUNCTION_CASES))
def test_function_table(name):
    text, expected = FUNCTION_CASES[name]
    functions = FUNCTIONS | MATRIX_FUNCTIONS
    value = evaluate(text, {}, functions=functions)
    printed = name in ("eul2tr", "rpy2tr")  # published to 4 decimals
    np.testing.assert_allclose(value, expected, rtol=0 if printed else 1e-12,
                               atol=5e-5 if printed else 1e-15)


def test_transforms():
    c, s = math.cos(0.3), math.sin(0.3)
    np.testing.assert_allclose(ev("rotx(0.3)"), [[1, 0, 0], [0, c, -s], [0, s, c]], atol=1e-15)
    np.testing.assert_allclose(ev("roty(0.3)"), [[c, 0, s], [0, 1, 0], [-s, 0, c]], atol=1e-15)
    np.testing.assert_allclose(ev("rotz(0.3)"), [[c, -s, 0], [s, c, 0], [0, 0, 1]], atol=1e-15)
    assert np.array_equal(ev("transl([1, 2, 3])"), ev("transl(1, 2, 3)"))
    # A rotation is orthonormal with determinant +1.
    r = ev("rotx(0.4) @ roty(-1.1) @ rotz(2.5)")
    np.testing.assert_allclose(r @ r.T, np.eye(3), atol=1e-15)
    assert np.linalg.det(r) == pytest.approx(1.0)


def test_homogeneous_transforms():
    """The 4x4 forms against the rotation formulas, the toolbox's composition rules and the
    robot library's (independent) implementations of the same functions."""
    from blocks.robot import transforms as rt

    c, s = math.cos(0.3), math.sin(0.3)
    np.testing.assert_allclose(ev("trotx(0.3)"), [[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0],
                                                  [0, 0, 0, 1]], atol=1e-15)
    for axis in "xyz":
        np.testing.assert_allclose(ev(f"t2r(trot{axis}(0.3))"), ev(f"rot{axis}(0.3)"), atol=0)
        np.testing.assert_allclose(ev(f"trot{axis}(-1.2)"), getattr(rt, f"trot{axis}")(-1.2),
                                   atol=1e-15)
    # the toolbox's demo: transl(0.5, 0, 0) * troty(pi/2) * trotz(-pi/2), worked by hand
    np.testing.assert_allclose(ev("transl(0.5, 0, 0) @ troty(pi/2) @ trotz(-pi/2)"),
                               [[0, 0, 1, 0.5], [-1, 0, 0, 0], [0, -1, 0, 0], [0, 0, 0, 1]],
                               atol=1e-15)
    # rt2tr(R, t) = transl(t) r2t(R)
    np.testing.assert_allclose(ev("rt2tr(rotx(0.4) @ roty(1.1), [1, -2, 3])"),
                               ev("transl(1, -2, 3) @ r2t(rotx(0.4) @ roty(1.1))"), atol=1e-15)
    # Euler ZYZ and roll/pitch/yaw as the products the toolbox defines, and as the library's
    # rpy2tr and eul2tr (the blocks' implementation); the vector form equals the three angles
    a = [0.7, -1.3, 2.1]
    np.testing.assert_allclose(ev("eul2tr(0.7, -1.3, 2.1)"),
                               ev("trotz(0.7) @ troty(-1.3) @ trotz(2.1)"), atol=1e-15)
    np.testing.assert_allclose(ev("rpy2tr(0.7, -1.3, 2.1)"),
                               ev("trotz(0.7) @ troty(-1.3) @ trotx(2.1)"), atol=1e-15)
    np.testing.assert_allclose(ev("eul2tr([0.7, -1.3, 2.1])"), rt.eul2tr(a), atol=1e-15)
    np.testing.assert_allclose(ev("rpy2tr([0.7, -1.3, 2.1])"), rt.rpy2tr(a), atol=1e-15)
    np.testing.assert_allclose(rt.tr2rpy(ev("rpy2tr(0.7, -1.3, 2.1)")), a, atol=1e-12)


def test_unknown_transform_names_suggest_4x4_ones():
    """trotz exists now; a misspelt 4x4 name suggests the 4x4 function, not a 3x3 rotation."""
    with pytest.raises(ExprError, match="did you mean 'trotz'"):
        ev("trtoz(1)")


def test_robot_poses():
    assert np.array_equal(ev("p560.qz"), np.zeros(6))
    assert np.array_equal(ev("p560.qr + 1"), POSES["p560"]["qr"] + 1)
    with pytest.raises(ExprError, match="robot 'p560' has no pose 'qzz' \\(did you mean 'qz'\\?\\) "
                                        "\\(its poses: qz, qr\\)"):
        ev("p560.qzz")
    with pytest.raises(ExprError, match="has no pose 'home' \\(its poses: qz, qr\\)"):
        ev("p560.home")
    with pytest.raises(ExprError, match="robot 'arm' has no pose 'qz' \\(it has no named poses\\)"):
        evaluate("arm.qz", {}, dotted={"arm": {}})
    with pytest.raises(ExprError, match="is a robot"):
        ev("p560")


# ---- rejections ------------------------------------------------------------------------------
@pytest.mark.parametrize("text, message", [
    ("().__class__", "names beginning with '__'"),
    ("x.__class__.__bases__", "names beginning with '__'"),
    ("__import__('os')", "names beginning with '__'"),
    ("__builtins__", "names beginning with '__'"),
    ("x.T", "attribute access is not allowed"),
    ("M.shape[0]", "attribute access is not allowed"),
    ("np.sin(1)", "only the built-in functions can be called"),
    ("lambda: 1", "lambda functions are not allowed"),
    ("(lambda: 1)()", "only the built-in functions"),
    ("[i for i in x]", "comprehensions are not allowed"),
    ("sum(i for i in x)", "comprehensions are not allowed"),
    ("'abc'", "string literals are not allowed"),
    ("f'{Kp}'", "string literals are not allowed"),
    ("sin(x=1)", "keyword arguments are not allowed"),
    ("open(1)", "unknown function 'open'"),
    ("sinn(1)", "unknown function 'sinn' \\(did you mean 'sin'\\?\\)"),
    ("Kp(1)", "'Kp' is not a function"),
    ("inv(M)", "only available in a function block"),
    ("sin", "'sin' is a function"),
    ("Kpp + 1", "unknown name 'Kpp' \\(did you mean 'Kp'\\?\\)"),
    ("zzz", "unknown name 'zzz'$"),
    ("1 if Kp else 2", "conditional expressions are not allowed; use where"),
    ("x in x", "'in' and 'is' are not allowed"),
    ("Kp & 1", "operator '&' is not allowed; for a logical and use and"),
    ("rem(1, 0)", "domain error"),
    ("dot([1, 2], [1, 2, 3])", "dot\\(\\) needs two vectors of the same length"),
    ("cross([1, 2], [3, 4])", "cross\\(\\) needs two 3-vectors"),
    ("where([1, 0], [1, 2, 3], 0)", "do not match"),
    ("{1: 2}", "dictionaries are not allowed"),
    ("(y := 1)", "assignments are not allowed"),
    ("[*x]", "unpacking with \\* is not allowed"),
    ("2 ^ 3", "operator '\\^' is not allowed; for a power use \\*\\*"),
    ("7 // 2", "operator '//' is not allowed; use floor"),
    ("~1", "operator '~' is not allowed; for a logical not use not"),
    ("True", "'True' is not allowed"),
    ("None", "'None' is not allowed"),
    ("1j", "complex numbers are not allowed"),
    ("1 # comment", "'#' is not allowed"),
    ("1 + * 2", "syntax error at column 5"),
    ("sin(1", "syntax error at column 4"),
    ("", "empty expression"),
    ("1e400", "too large for a float64"),
    ("sin(1, 2)", "sin\\(\\) takes 1 argument, got 2"),
    ("linspace(1)", "linspace\\(\\) takes 2 to 3 arguments, got 1"),
    ("x[1.5]", "an index must be an integer, got 1.5"),
    ("x[[0, 1]]", "an index must be a single integer"),
    ("x[7]", "out of bounds"),
    ("[[1, 2], [3]]", "same shape"),
    ("[1, 2] + [1, 2, 3]", "do not match"),
    ("rotx([1, 2])", "rotx\\(\\) angle must be a single number"),
    ("transl(1, 2)", "transl\\(\\) takes x, y, z or one 3-vector"),
    ("r2t(eye(4))", "r2t\\(\\) argument must have shape \\(3, 3\\), got \\(4, 4\\)"),
    ("t2r(rotx(1))", "t2r\\(\\) argument must have shape \\(4, 4\\)"),
    ("rt2tr(eye(3), [1, 2])", "rt2tr\\(\\) translation needs 3 coordinates"),
    ("rpy2tr(1, 2)", "rpy2tr\\(\\) takes three angles or one 3-vector, got 2 arguments"),
    ("eul2tr([1, 2])", "eul2tr\\(\\) takes three angles or one 3-vector, got shape \\(2,\\)"),
    ("trotx([1, 2])", "rotx\\(\\) angle must be a single number"),
    # look-alikes: Python reads the mathematical italic 𝑝𝑖 as pi (NFKC) and a Greek capital
    # kappa as a name unlike K; an expression is ASCII, the message shows the character
    ("2 * \U0001d45d\U0001d456", "character '\U0001d45d' \\(U\\+1D45D, column 5\\) is not allowed"),
    ("\u039ap", "character '\u039a' \\(U\\+039A, column 1\\)"),
    ("\uff11 + 1", "U\\+FF11"),  # a full-width digit one
])
def test_rejections(text, message):
    with pytest.raises(ExprError, match=message):
        ev(text)


def test_rejected_yaml_values():
    for value, message in [(None, "got nothing"), ({"a": 1}, "got a mapping"),
                           ([1, True], "not True"), ([[1, 2], [3]], "same shape"),
                           (10**400, "too large"), (np.array(["a"]), "got a ndarray")]:
        with pytest.raises(ExprError, match=message):
            evaluate(value, {})


@pytest.mark.parametrize("text, message", [
    ("1 / 0", "division by zero in '1 / 0'"),
    ("Kp / (n - 2)", "division by zero"),
    ("sqrt(-1)", "domain error"),
    ("log(-1)", "domain error"),
    ("asin(2)", "domain error"),
    ("(-8) ** (1/3)", "domain error"),
    ("inf - inf", "domain error"),
    ("log(0)", "infinite result"),
    ("2 ** 100000", "overflow"),
    ("10 ** 10 ** 10", "overflow"),
    ("exp(1000)", "overflow"),
    ("inv([[1, 2], [2, 4]])", "Singular matrix"),
])
def test_arithmetic_failures(text, message):
    with pytest.raises(ExprError, match=message):
        evaluate(text, NAMES, functions=FUNCTIONS | MATRIX_FUNCTIONS)


def test_underflow_is_not_an_error():
    assert ev("exp(-1000)") == 0.0


@pytest.mark.parametrize("text", [
    "zeros(1e12)", "ones(1e6, 1e6)", "eye(1e5)", "linspace(0, 1, 1e9)",
    "diag(zeros(1e7))",                        # a 1e7 vector is fine, its 1e14 matrix is not
    "reshape(zeros(1e7), (1e7, 1)) @ reshape(zeros(1e7), (1, 1e7))",
    "reshape(zeros(4e6), (4e6, 1)) + zeros(4e6)",
    "[zeros(5e6), zeros(5e6), zeros(5e6)]",
])
def test_array_size_limit(text):
    with pytest.raises(ExprError, match="more than the limit of 10,000,000"):
        evaluate(text, {}, functions=FUNCTIONS | MATRIX_FUNCTIONS)


def test_size_arguments_must_be_whole_and_non_negative():
    with pytest.raises(ExprError, match="must not be negative"):
        ev("zeros(-1)")
    with pytest.raises(ExprError, match="must be an integer"):
        ev("eye(2.5)")
    with pytest.raises(ExprError, match="must be an integer"):
        ev("zeros(inf)")


def test_nesting_and_length_limits():
    ok = "(" * 100 + "1" + ")" * 100
    assert ev(ok) == 1.0
    for text in ["(" * 101 + "1" + ")" * 101,           # brackets
                 "[" * 150 + "1" + "]" * 150,
                 "sin(" * 101 + "0" + ")" * 101,          # calls
                 "-" * 101 + "1",                          # unary operators
                 "-" * 5000 + "1",                         # deeper than the parser itself allows
                 "2 **" * 150 + "1"]:                     # ** is right-associative: nested
        with pytest.raises(ExprError, match="nested deeper than 100 levels"):
            ev(text)
    # A flat chain a + b - c ... is one level however long it is.
    assert ev(" + ".join(["1"] * 800)) == 800.0
    assert ev(" - ".join(["x"] * 300)).tolist() == [-2980.0, -5960.0, -8940.0, -11920.0]
    with pytest.raises(ExprError, match="longer than 10,000 characters"):
        ev("1" + " + 1" * 2500)


def test_check_not_reserved():
    for name in ("pi", "e", "inf"):
        with pytest.raises(ExprError, match="may not reuse a constant's name"):
            check_not_reserved(name)
    for name in ("sin", "transl", "inv"):
        with pytest.raises(ExprError, match="function"):
            check_not_reserved(name)
    with pytest.raises(ExprError, match="__"):
        check_not_reserved("__x")
    check_not_reserved("Kp")


# ---- compile_expr ----------------------------------------------------------------------------
COMPILED = [
    ("Kp * (x[:2] - u) + sin(u[0])", ("u",), ([0.5, -1.0],)),
    ("M @ u + [1, 2]", ("u",), ([0.5, -1.0],)),
    ("inv(M) @ u", ("u",), ([1.0, 2.0],)),
    ("solve(M, u) - transpose(M) @ u", ("u",), ([1.0, 2.0],)),
    ("reshape(a, (4,)) * b", ("a", "b"), ([[1.0, 2.0], [3.0, 4.0]], 2.0)),
    ("atan2(a, b) + max(a, b) + min(a)", ("a", "b"), ([1.0, -2.0], [0.5, 0.5])),
    ("a - b - 1 - a * 2 + b / 4", ("a", "b"), (3.0, 8.0)),
    ("a[k] + a[k:][0] + a[:, 1][0]", ("a", "k"), ([[1.0, 2.0], [3.0, 4.0]], 1.0)),
    ("[a, 2 * a, Kp]", ("a",), (0.25,)),
    ("transl(a) @ [0, 0, 0, 1]", ("a",), ([1.0, 2.0, 3.0],)),
    ("-a + +a ** 2", ("a",), (3.0,)),
    ("pi * Kp", ("a",), (1.0,)),
]


@pytest.mark.parametrize("text, inputs, values", COMPILED)
def test_compiled_matches_evaluate(text, inputs, values):
    f = compile_expr(text, inputs, NAMES)
    arrays = [np.asarray(v, dtype=float) for v in values]
    expected = evaluate(text, NAMES | dict(zip(inputs, arrays)),
                        functions=FUNCTIONS | MATRIX_FUNCTIONS)
    np.testing.assert_array_equal(f(*arrays), expected)
    # Called again with other values: nothing is cached between calls.
    negated = [-a for a in arrays]
    expected = evaluate(text, NAMES | dict(zip(inputs, negated)),
                        functions=FUNCTIONS | MATRIX_FUNCTIONS)
    np.testing.assert_array_equal(f(*negated), expected)


def test_compiled_names_used():
    f = compile_expr("Kp * u + p560.qz[0] + pi", ("u", "v"), NAMES, dotted=POSES)
    assert f.names == {"Kp", "u", "p560"}
    assert compile_expr("1", ("u",), {}).names == frozenset()


def test_compiled_is_checked_once(monkeypatch):
    f = compile_expr("Kp * sin(u) + x[0]", ("u",), NAMES)
    names = dict(NAMES)
    # After compiling, the text is never parsed again and parameters are captured values.
    monkeypatch.setattr(ast, "parse", lambda *a, **k: pytest.fail("parsed again"))
    names["Kp"] = -1.0
    assert f(0.5) == pytest.approx(100 * math.sin(0.5) + 10)


def test_compiled_constant_parts_are_computed_and_checked_at_compile_time():
    with pytest.raises(ExprError, match="division by zero"):
        compile_expr("u + 1 / 0", ("u",), {})
    with pytest.raises(ExprError, match="more than the limit"):
        compile_expr("u + sum(zeros(1e12))", ("u",), {})
    f = compile_expr("2 * 3 + 1", ("u",), {})
    assert f(0.0) == 7.0


def test_compiled_hot_path_installs_no_errstate():
    f = compile_expr("1 / u", ("u",), {})
    with np.errstate(divide="ignore"):
        assert f(np.float64(0.0)) == np.inf          # non-finite results are the engine's job
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        f(np.float64(0.0))


@pytest.mark.parametrize("text, inputs, message", [
    ("u + w", ("u",), "unknown name 'w'"),
    ("u + uu", ("u", "ux"), "did you mean"),
    ("u.T", ("u",), "attribute access is not allowed"),
    ("u", ("pi",), "may not reuse a constant's name"),
    ("u", ("sin",), "function"),
    ("u", ("u", "u"), "distinct"),
    ("u", ("1u",), "not a valid input name"),
    ("u(1)", ("u",), "'u' is not a function"),
    ("sin(u", ("u",), "syntax error"),
    (3, ("u",), "expected an expression string"),
])
def test_compile_rejections(text, inputs, message):
    with pytest.raises(ExprError, match=message):
        compile_expr(text, inputs, NAMES)


def test_input_shadows_parameter():
    f = compile_expr("Kp + 1", ("Kp",), NAMES)
    assert f(1.0) == 2.0 and f.names == {"Kp"}


# ---- logic: comparisons, and / or / not, where, % -----------------------------------------------
@pytest.mark.parametrize("text, expected", [
    ("1 < 2", 1.0), ("2 < 1", 0.0), ("2 <= 2", 1.0), ("3 > 3", 0.0), ("3 >= 3", 1.0),
    ("1 == 1.0", 1.0), ("1 != 1", 0.0),
    ("1 < 2 < 3", 1.0), ("1 < 3 < 2", 0.0),          # a chain is (1 < 3) and (3 < 2)
    ("x > 15", [0.0, 1.0, 1.0, 1.0]), ("x[0] < x", [0.0, 1.0, 1.0, 1.0]),
    ("10 < x <= 30", [0.0, 1.0, 1.0, 0.0]),
    ("not 0", 1.0), ("not 2.5", 0.0), ("not [0, -1]", [1.0, 0.0]),
    ("[1, 1, 0, 0] and [1, 0, 1, 0]", [1.0, 0.0, 0.0, 0.0]),
    ("[1, 1, 0, 0] or [1, 0, 1, 0]", [1.0, 1.0, 1.0, 0.0]),
    ("0 or 0 or 3", 1.0), ("1 and 2 and 0", 0.0),
    ("not 1 == 2", 1.0),                              # Python precedence: not (1 == 2)
    ("(x > 15) * x", [0.0, 20.0, 30.0, 40.0]),        # truth values are numbers
    ("-7 % 3", 2.0), ("7 % -3", -2.0), ("7.5 % 2", 1.5),   # floored, as mod
])
def test_logic_is_elementwise_with_truth_values_one_and_zero(text, expected):
    value = ev(text)
    assert value.dtype == np.float64
    assert np.array_equal(value, expected)


def test_logic_in_a_function_block_expression():
    # a deadband of half-width 0.5 and a sign switch, each one expression
    deadband = compile_expr("where(abs(u) <= 0.5, 0, u - 0.5 * sign(u))", ["u"], {})
    u = np.array([-2.0, -0.5, 0.2, 0.5, 1.75])
    assert np.array_equal(deadband(u), [-1.5, 0.0, 0.0, 0.0, 1.25])
    assert deadband(np.float64(-0.3)) == 0.0
    switch = compile_expr("(u >= 0 and v < k) * u + (u < 0 or v >= k) * -u", ["u", "v"],
                          {"k": 1.0})
    assert switch(np.float64(2.0), np.float64(0.0)) == 2.0     # both conditions hold
    assert switch(np.float64(2.0), np.float64(1.0)) == -2.0    # v >= k
    assert switch(np.float64(-3.0), np.float64(0.0)) == 3.0    # u < 0
    cond = compile_expr("u % 2 == 1", ["u"], {})
    assert np.array_equal(cond(np.array([1.0, 2.0, -1.0, 3.0])), [1.0, 0.0, 1.0, 1.0])


def test_round_of_infinity_is_infinity():
    # MATLAB's round(Inf) is Inf; the half-away-from-zero rule computed inf - inf, a domain
    # error when a parameter was checked
    assert ev("round(inf)") == math.inf and ev("round(-inf)") == -math.inf
    assert ev("round([-inf, 2.5, -2.5, 0.4])").tolist() == [-math.inf, 3.0, -3.0, 0.0]


def test_messages_do_not_print_huge_numbers():
    with pytest.raises(ExprError, match=r"would have about 1e\+300 elements") as e:
        ev("zeros(1e300)")
    assert len(str(e.value)) < 120
    with pytest.raises(ExprError, match=r"the number 100000000000\.\.\. \(4001 digits\)") as e:
        evaluate(10 ** 4000, {})  # a YAML integer of 4001 digits
    assert len(str(e.value)) < 120


def test_a_chain_too_long_for_the_parser_says_so():
    # Python's parser refuses a + b + ... of a few thousand terms (its recursion limit) even
    # within 10,000 characters: the message says so rather than only 'nested deeper'
    with pytest.raises(ExprError, match="chain of more operators than Python's parser takes"):
        ev("+".join(["1"] * 4500))


def test_keywords_cannot_be_parameter_names():
    # a parameter `lambda: 0.1` could never be used: 'lambda' in an expression is syntax
    for name in ("lambda", "if", "None", "True"):
        with pytest.raises(ExprError, match="is a Python keyword"):
            check_not_reserved(name)
    check_not_reserved("eval")  # not a keyword, and nothing in the evaluator: a fine name


def test_mean_of_nothing_is_an_error_without_a_warning(recwarn):
    # numpy warns 'Mean of empty slice' (printed on stderr) and gives NaN
    with pytest.raises(ExprError, match=r"mean\(\) of an empty array"):
        ev("mean([])")
    assert not recwarn.list
    assert ev("mean([1, 2, 4])") == pytest.approx(7 / 3, rel=1e-15)


def test_an_index_beyond_int64_is_out_of_bounds():
    # numpy said "only integers, slices (`:`)... are valid indices" of the integer 10**30
    with pytest.raises(ExprError, match=r"index 1e\+30 is out of bounds"):
        ev("x[1e30]")
    assert ev("x[1:1e30]").tolist() == [20.0, 30.0, 40.0]  # a slice bound clips, as numpy's
