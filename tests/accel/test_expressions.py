"""A function block's expression in compiled code (blocksim/accel/expression/) computes what
the evaluator computes, bit for bit: every operator and function of the language
(docs/language.md's tables) on random inputs of the shapes the operations take (scalars,
vectors, matrices, transposed and sliced views), the function blocks of demo5, demo6 and
planar7r on random inputs of their shapes, and the faults the evaluator raises (an index out
of range or not whole, a singular matrix) with its messages. The second algorithm is normal
mode itself: numpy evaluating the same expression on the same inputs. What cannot be
compiled is refused, naming the block and the operation."""
from pathlib import Path

import numpy as np
import pytest
import yaml

import blocksim
from blocksim.accel.build import build
from blocksim.accel.codegen import generate
from blocksim.accel.compilable import NotCompilable
from blocksim.accel.expression import lower_expression
from blocksim.accel.mode import simulate_model
from blocksim.accel.runner import bind
from blocksim.cli import main
from blocksim.errors import DiagramError
from blocksim.language import expr

ROOT = Path(__file__).resolve().parents[2]
S, V, M, W = (), (3,), (3, 3), (2, 4)


class Compiled:
    """Function blocks F0, F1, ... of `cases` [(expression, {input: shape})], each fed by
    integrators (whose states are its inputs), compiled together; `both(k, inputs)` gives
    block k's output interpreted and compiled for its inputs' values."""

    def __init__(self, folder, cases, parameters=None, robots=None):
        blocks, wires = {}, []
        for k, (expression, shapes) in enumerate(cases):
            blocks[f"F{k}"] = {"type": "function", "expr": expression, "inputs": list(shapes)}
            for name, shape in shapes.items():
                zeros = np.zeros(shape).tolist()
                blocks[f"I{k}_{name}"] = {"type": "integrator", "x0": zeros}
                blocks[f"Z{k}_{name}"] = {"type": "constant", "value": zeros}
                wires += [f"I{k}_{name} -> F{k}.{name}", f"Z{k}_{name} -> I{k}_{name}"]
        doc = {"blocksim": 1, "name": "expressions", "parameters": parameters or {},
               "blocks": blocks, "wires": wires, "simulation": {"stop": 1}}
        if robots:
            doc["robots"] = robots
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "expressions.yaml").write_text(yaml.safe_dump(doc))
        self.model = m = blocksim.load(folder / "expressions.yaml")
        self.generated = generate(m)
        self.lib = build(self.generated.source).library
        self.blocks = {b.name: b for b in m.blocks}
        self.slices = [[m.state_slices[f"I{k}_{name}"][0] for name in shapes]
                       for k, (_, shapes) in enumerate(cases)]
        self.state = np.zeros(m.xbuf.size)  # the inputs of the blocks not under test

    def size(self, k):
        return sum(part.stop - part.start for part in self.slices[k])

    def both(self, k, inputs, work=None):
        """(interpreted, compiled) of block k for its inputs' values (flat, in the order of
        its inputs): each the output, or the error message of the run. `work`: a list that
        gets the block's compiled workspace after the evaluation."""
        m, F = self.model, self.blocks[f"F{k}"]
        y, start = self.state.copy(), 0
        for part in self.slices[k]:
            y[part] = inputs[start:start + part.stop - part.start]
            start += part.stop - part.start
        m.xbuf[:] = y
        try:
            with np.errstate(all="ignore"):
                F.output(0.0)
            interpreted = F.y[0].copy()
        except Exception as e:  # noqa: BLE001 - the message normal mode reports
            what = "" if isinstance(e, expr.ExprError) else f"{type(e).__name__}: "
            interpreted = f"{what}{e}"
        F.y[0][...] = np.nan
        rt, keep = bind(self.lib, m, self.generated)
        try:
            self.lib.rt_eval_outputs(rt, 0.0, np.ascontiguousarray(y).ctypes.data)
            if work is not None:
                start = self.generated.offsets[f"F{k}"][1]
                work.append(keep[0][5][start:].copy())
            text = self.lib.rt_error_text(rt).decode()
            return interpreted, (text or F.y[0].copy())
        finally:
            self.lib.rt_free(rt)
            del keep


def same_bits(a, b):
    return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape \
        and a.tobytes() == b.tobytes()


# (expression, {input: shape}, (low, high) of the random inputs)
CASES = [
    ("u + v * 2 - u / v + (s - t) * u", dict(u=V, v=V, s=S, t=S), (-2, 2)),
    ("-u + +v - -s", dict(u=V, v=V, s=S), (-2, 2)),
    ("u ** 2 + u ** 3 + u ** 0.5 + u ** -1 + u ** 0 + u ** 1 + u ** v", dict(u=V, v=V), (0.1, 2)),
    ("s ** 2 + s ** 3 + s ** t + 2 ** s + (s / 2) ** 3 + (s * 1) ** (t * 1)", dict(s=S, t=S),
     (0.1, 2)),
    ("M ** u + M ** 2 + transpose(M) ** u + transpose(M) ** reshape(u, (3, 1)) + M ** 2.5",
     dict(M=M, u=V), (0.1, 2)),
    ("u % v + s % 2 + mod(u, 0.7) + mod(u, 0) + rem(u, v) + rem(s, 0.3)", dict(u=V, v=V, s=S),
     (-2, 2)),
    ("sin(u) + cos(u) + tan(u) + atan(u) + sinh(u) + cosh(u) + tanh(u) + asinh(u)",
     dict(u=V), (-2, 2)),
    ("asin(u / 3) + acos(u / 3) + atanh(u / 3) + acosh(u * u + 1) + atan2(u, v) + atan2(s, u)",
     dict(u=V, v=V, s=S), (-2, 2)),
    ("exp(u) + exp2(u) + log(u) + log2(u) + log10(u) + sqrt(u) + hypot(u, v)", dict(u=V, v=V),
     (0.01, 3)),
    ("abs(u) + sign(u) + floor(u) + ceil(u) + trunc(u) + round(u * 3) + round(s)",
     dict(u=V, s=S), (-2, 2)),
    ("deg2rad(M) + rad2deg(M) + isfinite(1 / u) + isfinite(u)", dict(M=M, u=V), (-2, 2)),
    ("clip(u, -1, 1) + clip(s, v, 1) + where(u > 0, u, -u) + where(s, 1, u)",
     dict(u=V, v=V, s=S), (-2, 2)),
    ("min(u, v) + max(u, 0.5) + min(s, t) + max(M, 0)[0]", dict(u=V, v=V, s=S, t=S, M=M),
     (-2, 2)),
    ("sum(u) + prod(u) + mean(u) + min(u) + max(u) + sum(s) + prod(s)", dict(u=V, s=S), (-2, 2)),
    ("sum(M) + prod(M) + mean(M) + min(M) + max(M)", dict(M=(7, 9)), (0.5, 1.5)),
    ("sum(x) + prod(x) + mean(x) + min(x) + max(x) + sum(x[::3]) + norm(x)", dict(x=(1000,)),
     (0.99, 1.01)),
    ("sum(transpose(M)) + mean(M[:, 1:]) + sum(M[::2, ::-1]) + sum(M[1:, :3])", dict(M=(7, 9)),
     (-2, 2)),
    ("cumsum(M) + cumsum(transpose(M))[0] + cumsum(s)", dict(M=M, s=S), (-2, 2)),
    ("dot(u, v) + dot(M[:, 0], M[1]) + dot(u[::-1], v)", dict(u=V, v=V, M=M), (-2, 2)),
    ("norm(u) + norm(M) + norm(transpose(M)) + norm(M[:, 0]) + norm(M[::2, 1:]) + norm(s)",
     dict(u=V, M=M, s=S), (-2, 2)),
    ("cross(u, v) + cross(M[0], M[:, 1])", dict(u=V, v=V, M=M), (-2, 2)),
    ("M @ u + u @ M + (u @ v) * u + M @ M[:, 0] + M[0] @ M", dict(M=M, u=V, v=V), (-2, 2)),
    ("M @ N + transpose(N) @ transpose(M)", dict(M=W, N=(4, 2)), (-2, 2)),
    ("transpose(M) @ M + (M @ transpose(M))[0, 1]", dict(M=W), (-2, 2)),
    ("K @ u + u @ K + transpose(K) @ u", dict(u=V), (-2, 2)),
    ("[u[0], v[1], s] + (s, s, s) + sum([[s, 1], [2, s]] @ [s, s] * 2)", dict(u=V, v=V, s=S),
     (-2, 2)),
    ("u[1:] + u[:2] + u[::-1][1:] + u[-1] + M[1, 2] + M[-1, 0] + M[0][1]", dict(u=V, M=M),
     (-2, 2)),
    ("M[:, -1] + sum(M[1:, 1:] @ M[:2, 0]) + M[::-1, ::2][0, 1] + M[2]", dict(M=M), (-2, 2)),
    ("u > v and not (u == v) or u <= 0", dict(u=V, v=V), (-2, 2)),
    ("(0 < u < 1) + (u >= s) + (u != v) + (s < t)", dict(u=V, v=V, s=S, t=S), (-2, 2)),
    ("diag(u) + diag(M) + diag(transpose(M)) + diag(M[:2])[1]", dict(u=V, M=M), (-2, 2)),
    ("reshape(M, (9,)) + reshape(transpose(M), 9) + reshape(M[:, :2], (2, 3))[0, 0]",
     dict(M=M), (-2, 2)),
    ("reshape(M, (3, -1)) + array(M) + transpose(u) + transpose(M)[0] + array(s)",
     dict(M=M, u=V, s=S), (-2, 2)),
    ("linspace(s, t, 5) + linspace(s, s, 5)[0] + linspace(t, s)[-1] + linspace(s, t, 1)",
     dict(s=S, t=S), (-2, 2)),
    ("rotx(s) @ roty(t) @ rotz(s) + trotx(s)[:3, :3] + troty(t)[1:, 1:] + trotz(s)[0, :3]",
     dict(s=S, t=S), (-4, 4)),
    ("transl(s, t, s) + transl(u) + r2t(rotz(s)) + rt2tr(roty(t), u) + transl(M[0])",
     dict(s=S, t=S, u=V, M=M), (-4, 4)),
    ("rpy2tr(s, t, s) + rpy2tr(u) + eul2tr(u) + eul2tr(t, s, t) + t2r(transl(u) @ trotz(s))[0, 0]",
     dict(s=S, t=S, u=V), (-4, 4)),
    ("inv(M + 3 * eye(3)) + inv(transpose(M) + eye(3)) @ M", dict(M=M), (-1, 1)),
    ("solve(M + 3 * eye(3), u) + solve(M + 3 * eye(3), M)[0] + solve(transpose(M), u)",
     dict(M=M, u=V), (-1, 1)),
    ("pinv(M) + transpose(pinv(transpose(M)))", dict(M=W), (-1, 1)),
    ("det(M) + det(transpose(M)) + det(M[:2, :2]) + cond(M) + cond(N) + cond(transpose(N))",
     dict(M=(5, 5), N=W), (-1, 1)),
    ("det(M - M) + cond(M - M) + det(zeros((2, 2)) + s)", dict(M=M, s=S), (-1, 1)),
    ("pi * e * s + eps * s + inf * (s > 10) + 1 + 2 + s - 2 * K[0, 0]", dict(s=S), (0, 1)),
    ("zeros(3) + ones((2, 3))[1] + eye(3)[2] + eye(3, 4)[0, :3] + linspace(0, 1, 3) + u",
     dict(u=V), (-1, 1)),
    ("p560.qz + array(p560.qr) + fkine(p560, p560.qz)[0, :] @ q[:4]", dict(q=(6,)), (-1, 1)),
]
# parameters every case may use (K a matrix, whose slices are strided constants)
PARAMETERS = {"K": [[1, 2, 3], [4, 5, 6], [7, 8, 9.5]]}


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    """Every case's block, compiled once (one diagram); the blocks not under test get
    inputs of their own range."""
    compiled = Compiled(tmp_path_factory.mktemp("cases"), [c[:2] for c in CASES], PARAMETERS,
                        {"p560": {"model": "puma560"}})
    rng = np.random.default_rng(1)
    for k, (_, _, bounds) in enumerate(CASES):
        for part in compiled.slices[k]:
            compiled.state[part] = rng.uniform(*bounds, part.stop - part.start)
    return compiled


@pytest.mark.parametrize("k", range(len(CASES)), ids=[c[0][:50] for c in CASES])
def test_every_operator_and_function_gives_numpys_bits(cases, k):
    rng = np.random.default_rng(k)
    for _ in range(25):
        interpreted, result = cases.both(k, rng.uniform(*CASES[k][2], cases.size(k)))
        assert same_bits(result, interpreted), (interpreted, result)


def test_the_cases_cover_the_language():
    """Every function of the language and every operator is in a case above (eye, zeros, ones
    and linspace of constant sizes: their values reach the code as the block's numbers)."""
    import ast
    called, operators = set(), set()
    for expression, _, _ in CASES:
        for node in ast.walk(ast.parse(expression, mode="eval")):
            if isinstance(node, ast.Call):
                called.add(node.func.id)
            elif isinstance(node, (ast.BinOp, ast.UnaryOp, ast.BoolOp)):
                operators.add(type(node.op).__name__)
            elif isinstance(node, ast.Compare):
                operators.update(type(op).__name__ for op in node.ops)
            elif isinstance(node, (ast.Subscript, ast.Slice, ast.List, ast.Tuple, ast.Attribute)):
                operators.add(type(node).__name__)
    assert set(expr.FUNCTIONS) | set(expr.MATRIX_FUNCTIONS) <= called
    assert {"Add", "Sub", "Mult", "Div", "Mod", "Pow", "MatMult", "USub", "UAdd", "Not", "And",
            "Or", "Lt", "LtE", "Gt", "GtE", "Eq", "NotEq", "Subscript", "Slice", "List",
            "Tuple", "Attribute"} <= operators


@pytest.mark.parametrize("demo", ["demo5.yaml", "demo6.yaml", "planar7r.yaml"])
def test_the_function_blocks_of_the_demos_give_numpys_bits(tmp_path, demo):
    """Each function block of the demo, with the demo's parameters and its inputs' shapes,
    on random inputs (planar7r's inverses of random matrices included)."""
    path = ROOT / "diagrams" / demo
    raw = yaml.safe_load(path.read_text())
    functions = [b for b in blocksim.load(path).blocks if b.type == "function"]
    compiled = Compiled(tmp_path, [(b.p.expr, {name: np.shape(u) for name, u in
                                               zip(b.p.inputs, b.u)}) for b in functions],
                        raw.get("parameters"), raw.get("robots"))
    rng = np.random.default_rng(3)
    compiled.state[:] = rng.uniform(-1, 1, compiled.state.size)
    for k, block in enumerate(functions):
        for _ in range(10):
            interpreted, result = compiled.both(k, rng.uniform(-1, 1, compiled.size(k)))
            assert same_bits(result, interpreted), (block.name, interpreted, result)


def test_a_long_sum_compiles_without_recursing_per_term(tmp_path, capsys):
    """A sum of 350 terms c_k sin(m_k u), 5,300 characters (under the evaluator's 10,000):
    the lowering recursed per term (RecursionError in `check`, in auto and accelerated
    runs). It compiles, `check` says accelerated, and it gives the bits of the sum written
    out term by term, left to right (floats add in the chain's order); a chain of 2,500
    terms lowers too."""
    coefficients = [(k % 10 + 1.5, k % 7 + 1) for k in range(350)]
    expression = " + ".join(f"{c} * sin(u * {m})" for c, m in coefficients)
    assert 5000 < len(expression) < expr.MAX_TEXT
    compiled = Compiled(tmp_path, [(expression, dict(u=S))])
    for u in (0.37, -1.9):
        reference = np.float64(0.0)
        for c, m in coefficients:
            reference = reference + np.float64(c) * np.sin(np.float64(u) * m)
        interpreted, result = compiled.both(0, np.array([u]))
        assert same_bits(result, interpreted) and result == reference
    assert main(["check", str(tmp_path / "expressions.yaml"), "--mode", "accelerated"]) == 0
    assert "accelerated" in capsys.readouterr().out
    assert lower_expression("+".join(["u"] * 2500), ("u",), [()], {},
                            functions=expr.FUNCTIONS).code.count(" + (in_u)[0];") == 2499


def test_the_watch_of_each_inversion_has_normal_modes_condition_numbers(tmp_path):
    """A function block watches the condition number of every matrix its expression inverts
    (blocks/conditioning.py): inv's kappa_1 from numpy's column sums of |A| and |A^-1| (for a
    9 x 9 transpose numpy sums each column as a contiguous vector, pairwise), pinv's s_max /
    s_min from its SVD. The compiled watch (ConditionWatch.WORK's numbers, leading the
    block's workspace) holds the worst of them, equal to normal mode's to the bit."""
    cases = [("inv(M)", dict(M=M)), ("inv(B)", dict(B=(9, 9))),
             ("inv(transpose(B))", dict(B=(9, 9))),
             ("inv(B[::2, ::2])", dict(B=(9, 9))), ("pinv(N) @ v", dict(N=W, v=(2,))),
             ("inv(M) @ pinv(M) @ u", dict(M=M, u=V))]
    compiled = Compiled(tmp_path, cases)
    rng = np.random.default_rng(5)
    compiled.state[:] = rng.uniform(-1, 1, compiled.state.size)  # the other blocks' inputs
    for k in range(len(cases)):
        watch = compiled.blocks[f"F{k}"]._watch
        for _ in range(10):
            watch.reset()
            work = []
            interpreted, result = compiled.both(k, rng.uniform(-1, 1, compiled.size(k)), work)
            assert same_bits(result, interpreted)
            assert watch.worst > 1.0 and work[0][0] == watch.worst and work[0][1] == 0.0


# (expression, {input: shape}, inputs that fault, inputs that do not, normal mode's message)
FAULTS = [
    ("u[k]", dict(u=V, k=S), [1, 2, 3, 3], [1, 2, 3, 0],
     "IndexError: index 3 is out of bounds for axis 0 with size 3"),
    ("M[1, k]", dict(M=M, k=S), [0] * 9 + [-4], [0] * 10,
     "IndexError: index -4 is out of bounds for axis 1 with size 3"),
    ("u[k]", dict(u=V, k=S), [1, 2, 3, 0.5], [0] * 4, "an index must be an integer, got 0.5"),
    ("u[k]", dict(u=V, k=S), [1, 2, 3, np.nan], [0] * 4, "an index must be an integer, got nan"),
    ("u[k]", dict(u=V, k=S), [1, 2, 3, -np.inf], [0] * 4,
     "an index must be an integer, got -inf"),
    ("u[k]", dict(u=V, k=S), [1, 2, 3, 1e300], [0] * 4, "index 1e+300 is out of bounds"),
    ("inv(M)", dict(M=M), [1, 2, 3, 2, 4, 6, 0, 0, 1], np.eye(3).ravel(),
     "LinAlgError: Singular matrix"),
    ("solve(M, u)", dict(M=M, u=V), [0] * 9 + [1, 2, 3], [*np.eye(3).ravel(), 0, 0, 0],
     "LinAlgError: Singular matrix"),
    ("pinv(M)", dict(M=M), [np.nan] + [1] * 8, [0] * 9, "LinAlgError: SVD did not converge"),
    ("cond(M)", dict(M=M), [np.nan] + [1] * 8, np.eye(3).ravel(),
     "LinAlgError: SVD did not converge"),
]


@pytest.fixture(scope="module")
def faults(tmp_path_factory):
    """Every fault's block, compiled once; the blocks not under test get inputs that do not
    fault."""
    compiled = Compiled(tmp_path_factory.mktemp("faults"), [f[:2] for f in FAULTS])
    for k, fault in enumerate(FAULTS):
        start = 0
        for part in compiled.slices[k]:
            compiled.state[part] = fault[3][start:start + part.stop - part.start]
            start += part.stop - part.start
    return compiled


@pytest.mark.parametrize("k", range(len(FAULTS)), ids=[f[4] for f in FAULTS])
def test_a_fault_is_reported_with_normal_modes_message(faults, k):
    message = FAULTS[k][4]
    assert faults.both(k, np.array(FAULTS[k][2], dtype=float)) == (message, message)


@pytest.mark.parametrize("expression, shapes, robots, refused", [
    ("fkine(p560, q)", dict(q=(6,)), {"p560": {"model": "puma560"}}, "fkine() of a robot"),
    ("zeros(floor(s) + 1)", dict(s=S), None, "its size would depend on the inputs"),
    ("u[:floor(s)]", dict(u=V, s=S), None, "a slice bound depending on the inputs"),
])
def test_what_cannot_be_compiled_is_refused_naming_block_and_operation(tmp_path, expression,
                                                                       shapes, robots, refused):
    with pytest.raises(NotCompilable) as e:
        Compiled(tmp_path, [(expression, shapes)], robots=robots)
    [(name, kind, why)] = e.value.blocks
    assert (name, kind) == ("F0", "function") and refused in why
    assert why.startswith(f"has no compiled form for '{expression}'")


def test_a_refused_expression_runs_in_normal_mode_under_auto_and_is_refused_accelerated(
        tmp_path, capsys):
    path = tmp_path / "refused.yaml"
    path.write_text(yaml.safe_dump({
        "blocksim": 1, "name": "refused", "robots": {"p560": {"model": "puma560"}},
        "blocks": {"Q": {"type": "constant", "value": [0.1] * 6},
                   "F": {"type": "function", "expr": "fkine(p560, q)[0, 3]", "inputs": ["q"]},
                   "I": {"type": "integrator"}},
        "wires": ["Q -> F", "F -> I"], "simulation": {"stop": 1}, "record": {"i": "I.y"}}))
    with pytest.raises(DiagramError) as e:
        simulate_model(blocksim.load(path, ["simulation.mode=accelerated"]))
    assert "block type 'function' has no compiled form for 'fkine(p560, q)'" in str(e.value)
    assert e.value.block == "F"
    out = tmp_path / "run"
    assert main(["run", str(path), "--mode", "auto", "--no-plots", "--out", str(out)]) == 0
    assert "normal mode: no compiled form for F (function)" in capsys.readouterr().err


def test_a_parameter_of_the_expression_is_a_number_of_the_compiled_code(tmp_path):
    """Changing a parameter the expression reads (a sweep, --set) changes the block's
    numbers, not the source: the same compiled code gives the new value's results."""
    case = [("K @ u + c * sin(u) + u[j]", dict(u=V))]
    first = Compiled(tmp_path / "a", case, {"K": "eye(3)", "c": 1, "j": 0})
    other = Compiled(tmp_path / "b", case, {"K": "2 * eye(3) + 1", "c": 3, "j": -1})
    assert first.generated.source == other.generated.source
    assert not np.array_equal(first.model.context.P, other.model.context.P)
    y = np.array([0.3, -0.2, 0.9])
    interpreted, result = other.both(0, y)
    assert same_bits(result, interpreted)
    np.testing.assert_allclose(result, (2 * np.eye(3) + 1) @ y + 3 * np.sin(y) + 0.9,
                               rtol=1e-15)
