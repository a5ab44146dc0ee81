"""Compiled code's linear algebra gives numpy's bits: numpy.matmul in each of its dispatch
cases (dot, plain sums, gemv, gemm with transposed operands, syrk for A @ A.T) and
numpy.linalg's solve, inv, pinv and lstsq (runtime/rt_linalg.c, calling numpy's own BLAS and
LAPACK with numpy's arguments). A test block computes one of them on time-varying matrices
in both modes; an integrator of its result lets the solver's steps depend on every bit. The
reference is numpy itself (normal mode)."""
import numpy as np
import pytest

import blocksim
from blocksim.accel.blas import numpy_blas, numpy_lapack
from blocksim.accel.lowering import Lowering, needs_lapack
from blocksim.accel.mode import simulate_model
from blocksim.block import Block, In, Out
from blocksim.engine.simulator import simulate
from blocksim.language import library
from blocksim.params import Param

pytestmark = pytest.mark.skipif(numpy_blas() is None or numpy_lapack() is None,
                                reason="numpy's BLAS/LAPACK not found: no bits to compare")


class LinalgProbe(Block):
    """y = one of numpy's products or numpy.linalg's functions of inputs A and B."""

    type = "linalg_probe"
    params = (Param("op", "choice", choices=("matmul", "t_matmul", "matmul_t", "gram",
                                            "gram_t", "solve", "inv", "pinv", "lstsq")),)

    def ports(self):
        return [In("A"), In("B")], [Out("y")]

    def infer(self, shapes):
        (m, n), B = shapes["A"], shapes["B"]
        op = self.p.op
        shape = {"matmul": (m,) + B[1:], "t_matmul": (n,) + B[1:], "matmul_t": (m, B[0]),
                 "gram": (m, m), "gram_t": (n, n), "solve": B, "inv": (m, m), "pinv": (n, m),
                 "lstsq": (n,)}[op]
        return {"y": shape}

    def output(self, t):
        A, B = self.u
        y = self.y[0]
        op = self.p.op
        if op == "matmul":
            np.matmul(A, B, out=y)
        elif op == "t_matmul":
            np.matmul(A.T, B, out=y)
        elif op == "matmul_t":
            np.matmul(A, B.T, out=y)
        elif op == "gram":
            np.matmul(A, A.T, out=y)
        elif op == "gram_t":
            np.matmul(A.T, A, out=y)
        elif op == "solve":
            np.copyto(y, np.linalg.solve(A, B))
        elif op == "inv":
            np.copyto(y, np.linalg.inv(A))
        elif op == "pinv":
            np.copyto(y, np.linalg.pinv(A))
        else:
            np.copyto(y, np.linalg.lstsq(A, B, rcond=None)[0])

    def lower(self, c):
        (m, n), B = c.shape_in["A"], c.shape_in["B"]
        b1 = B[1] if len(B) == 2 else 1
        op = self.p.op
        if op in ("solve", "inv", "pinv", "lstsq"):
            needs_lapack()
        code = {
            "matmul": f"rt_matmul_ex(in_A, {n}, 1, in_B, {b1}, 1, {m}, {n}, {b1}, out_y);",
            "t_matmul": f"rt_matmul_ex(in_A, 1, {n}, in_B, {b1}, 1, {n}, {m}, {b1}, out_y);",
            "matmul_t": f"rt_matmul_ex(in_A, {n}, 1, in_B, 1, {n}, {m}, {n}, {B[0]}, out_y);",
            "gram": f"rt_matmul_ex(in_A, {n}, 1, in_A, 1, {n}, {m}, {n}, {m}, out_y);",
            "gram_t": f"rt_matmul_ex(in_A, 1, {n}, in_A, {n}, 1, {n}, {m}, {n}, out_y);",
            "solve": f"rt_solve(in_A, {m}, in_B, {b1}, out_y);",
            "inv": f"rt_inv(in_A, {m}, out_y);",
            "pinv": f"double cond; rt_pinv(in_A, {m}, {n}, out_y, &cond);",
            "lstsq": f"rt_lstsq(in_A, {m}, {n}, in_B, out_y);",
        }[op]
        return Lowering({"output": code})


@pytest.fixture
def probe(monkeypatch):
    monkeypatch.setattr(library, "_registered", {})
    blocksim.register_block(LinalgProbe)


def _matrix(shape, seed):
    """A sine source of `shape`: a random well-conditioned bias, every element moving."""
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape))
    bias = rng.uniform(-1, 1, shape)
    if len(shape) == 2 and shape[0] == shape[1]:
        bias = bias + 3 * np.eye(shape[0])
    amplitude = rng.uniform(0.1, 0.5, size).reshape(shape)
    frequency = rng.uniform(0.5, 3, size).reshape(shape)
    return (f"{{type: sine, amplitude: {amplitude.tolist()}, frequency: {frequency.tolist()}, "
            f"bias: {bias.tolist()}}}")


def _write(tmp_path, op, a, b):
    """The diagram of the probe doing `op` on sines of shapes a and b; returns its path."""
    text = f"""blocksim: 1
blocks:
  A: {_matrix(a, 1)}
  B: {_matrix(b, 2)}
  P: {{type: linalg_probe, op: {op}}}
  I: {{type: integrator}}
wires: [A -> P.A, B -> P.B, P -> I]
simulation: {{stop: 2, solver: rk45, rtol: 1e-10, atol: 1e-12}}
record: {{y: P.y, i: I.y}}
"""
    path = tmp_path / f"{op}.yaml"
    path.write_text(text)
    return path


def _run(tmp_path, op, a, b):
    path = _write(tmp_path, op, a, b)
    fast = simulate_model(blocksim.load(path, ["simulation.mode=accelerated"]))
    assert fast[2]["mode"]["mode"] == "accelerated"
    return fast, simulate(blocksim.load(path))


CASES = [
    ("matmul", (1, 4), (4, 1)),     # row @ column: numpy's dot
    ("matmul", (3, 1), (1, 4)),     # column @ row: plain products
    ("matmul", (1, 4), (4, 3)),     # vector @ matrix: gemv
    ("matmul", (3, 4), (4,)),       # matrix @ vector: gemv
    ("matmul", (3, 4), (4, 5)),     # gemm
    ("t_matmul", (4, 3), (4, 5)),   # A.T @ B: gemm with A transposed
    ("matmul_t", (3, 4), (5, 4)),   # A @ B.T: gemm with B transposed
    ("gram", (3, 5), (1,)),         # A @ A.T: syrk, upper triangle mirrored
    ("gram_t", (5, 3), (1,)),       # A.T @ A: syrk transposed
    ("gram", (1, 5), (1,)),         # a row times itself: dot
    ("solve", (4, 4), (4,)),        # dgesv, one right-hand side
    ("solve", (4, 4), (4, 3)),      # dgesv, three
    ("inv", (5, 5), (1,)),          # dgesv with the identity
    ("pinv", (6, 4), (1,)),         # dgesdd, tall
    ("pinv", (3, 6), (1,)),         # dgesdd, wide
    ("lstsq", (8, 6), (8,)),        # dgelsd, overdetermined
]


@pytest.mark.parametrize("op, a, b", CASES, ids=[f"{op}-{a}-{b}" for op, a, b in CASES])
def test_compiled_linear_algebra_has_numpys_bits(probe, tmp_path, op, a, b):
    (t, data, info), (t0, data0, info0) = _run(tmp_path, op, a, b)
    assert info["stats"] == info0["stats"] and info0["error"] is None
    np.testing.assert_array_equal(t, t0)
    np.testing.assert_array_equal(data["y"], data0["y"])
    np.testing.assert_array_equal(data["i"], data0["i"])


@pytest.mark.parametrize("op, a, b", CASES[:10], ids=[f"{op}-{a}-{b}" for op, a, b in CASES[:10]])
def test_without_numpys_blas_compiled_code_sums_the_products(probe, tmp_path, monkeypatch, op,
                                                            a, b):
    """A machine where numpy's BLAS is not found: compiled code sums the products itself
    (rt_blas.c's b_gemv, b_gemm, rt_linalg.c's syrk fallback: OpenBLAS's x86-64 order for
    short dot products and up to 3 columns, in order elsewhere); numpy's kernels sum in
    theirs, so the two agree to rounding (fixed steps: the same rows)."""
    from blocksim.accel import build
    monkeypatch.setenv("BLOCKSIM_CACHE_DIR", str(tmp_path / "cache"))  # a library of its own
    monkeypatch.setattr(build, "_LOADED", {})
    monkeypatch.setattr(build, "numpy_blas", lambda: None)
    monkeypatch.setattr(build, "numpy_lapack", lambda: None)
    path = _write(tmp_path, op, a, b)
    fixed = ["simulation.solver=rk4", "simulation.step=0.01"]
    t, data, info = simulate_model(blocksim.load(path, fixed + ["simulation.mode=accelerated"]))
    t0, data0, _ = simulate(blocksim.load(path, fixed))
    assert info["mode"]["mode"] == "accelerated" and np.array_equal(t, t0)
    np.testing.assert_allclose(data["y"], data0["y"], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(data["i"], data0["i"], rtol=1e-13, atol=1e-15)


def test_without_numpys_blas_blocks_and_the_adaptive_stepper_sum_themselves(tmp_path,
                                                                             monkeypatch):
    """Without numpy's BLAS, the gain and matmul blocks (rt_matmul: gemv, gemm) and the
    embedded Runge-Kutta stepper's stage sums (rt_dot_vm, rt_dot_mm) take rt_blas.c's
    fallbacks: the run agrees with normal mode to its tolerance (the steps may differ in
    their last digits)."""
    from blocksim.accel import build
    monkeypatch.setenv("BLOCKSIM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(build, "_LOADED", {})
    monkeypatch.setattr(build, "numpy_blas", lambda: None)
    path = tmp_path / "products.yaml"
    path.write_text(f"""blocksim: 1
blocks:
  S: {{type: sine, amplitude: [1, 0.5, 0.2], frequency: [1, 2, 3]}}
  K: {{type: gain, K: [[1, 2, 3], [4, 5, 6], [7, 8, 10]]}}
  A: {_matrix((3, 4), 1)}
  B: {_matrix((4, 5), 2)}
  M: {{type: matmul}}
  I: {{type: integrator}}
  J: {{type: integrator}}
wires: [S -> K, K -> I, A -> M.u1, B -> M.u2, M -> J]
simulation: {{stop: 2, solver: rk45, rtol: 1e-10, atol: 1e-12}}
record: {{i: I.y, j: J.y, k: K.y}}
""")
    t, data, info = simulate_model(blocksim.load(path, ["simulation.mode=accelerated"]))
    t0, data0, _ = simulate(blocksim.load(path))
    assert info["mode"]["mode"] == "accelerated" and t[-1] == t0[-1] == 2
    for name in ("i", "j", "k"):
        np.testing.assert_allclose(data[name][-1], data0[name][-1], rtol=1e-8, atol=1e-10)
