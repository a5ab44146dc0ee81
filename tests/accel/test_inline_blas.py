"""rt_blas.c's summation kernels in place of numpy's BLAS calls: a check against the loaded
BLAS, made once per process, decides for which sizes (a ddot's length, a transposed dgemv's
number of values) the kernels give its bits; those sizes skip the call, the others call the
BLAS as before. The reference is numpy's np.dot (its BLAS) and normal mode."""
import ctypes
import subprocess

import numpy as np
import pytest

import blocksim
from blocksim.accel import blas, build
from blocksim.accel.blas import numpy_blas
from blocksim.accel.codegen import RUNTIME
from blocksim.accel.mode import simulate_model
from blocksim.accel.toolchain import compiler

ROOT = RUNTIME.parents[2]
pytestmark = pytest.mark.skipif(numpy_blas() is None, reason="numpy's BLAS not found")

DDOT = range(1, 16)  # rt_blas_agree's bits 1..15
GEMV = range(1, 4)   # its bits 17..19 (16 + values)
WRAPPER = """#include <math.h>
#include <string.h>
#define RT_API
#include "rt_blas.c"
double t_ddot(long long n, const double *x, const double *y) { return k_ddot(n, x, 1, y, 1); }
void t_gemv(long long M, long long N, const double *A, const double *x, double *y)
{ k_gemv_t(M, N, A, N, x, 1, y, 1); }
"""


def _corename():
    """The CPU core whose kernels numpy's OpenBLAS runs (openblas_get_corename), or None."""
    for path in blas._candidates():
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_get_corename64_", "openblas_get_corename64_",
                     "scipy_openblas_get_corename", "openblas_get_corename"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return fn().decode()
    return None


def _build(folder, kind):
    """rt_blas.c compiled with accelerated mode's flags as a library of this process (its
    kernels' FMA copies) or as an exported diagram (RT_STANDALONE: C99's fma calls), the
    kernels reachable from Python, numpy's BLAS handed over."""
    (folder / "k.c").write_text(WRAPPER)
    standalone = ["-DRT_STANDALONE"] if kind == "export" else []
    command, _ = compiler()
    subprocess.run([*command, *build.FLAGS, *standalone, "-I", str(RUNTIME), "-o",
                    str(folder / "k.so"), str(folder / "k.c"), "-lm"], check=True)
    lib = ctypes.CDLL(str(folder / "k.so"))
    P, LL = ctypes.c_void_p, ctypes.c_longlong
    lib.t_ddot.argtypes, lib.t_ddot.restype = [LL, P, P], ctypes.c_double
    lib.t_gemv.argtypes, lib.t_gemv.restype = [LL, LL, P, P, P], None
    ilp64, fns = numpy_blas()
    lib.rt_set_blas.argtypes = [ctypes.c_int, P, P, P, P]
    lib.rt_set_blas(ilp64, *fns)
    return lib


@pytest.fixture(scope="module")
def verdict(tmp_path_factory):
    """rt_blas_agree's verdict on numpy's BLAS: (ddot lengths, dgemv value counts) agreeing."""
    lib = _build(tmp_path_factory.mktemp("library"), "library")
    lib.rt_blas_agree.restype = ctypes.c_ulonglong
    bits = lib.rt_blas_agree()
    return {n for n in DDOT if bits >> n & 1}, {v for v in GEMV if bits >> (16 + v) & 1}


def test_the_check_finds_openblas_skylakex_order(verdict):
    """On OpenBLAS's SkylakeX kernels (this machine's; export_c's adaptive rows were matched
    to them over 1,000 random cases per size): a ddot of 1..15 terms is one fused chain and a
    transposed dgemv into 2 or 3 values sums in fused pairs, as the kernels do; into one value
    its one-row tail adds each four products as one chain, fma(a3, x3, fma(a2, x2, fma(a0, x0,
    a1 x1))) (matched on 32,000 random cases here), which the kernel does not, so that size
    keeps the BLAS call."""
    core = _corename()
    if core != "SkylakeX":
        pytest.skip(f"numpy's OpenBLAS runs {core}'s kernels, whose order was not read")
    assert verdict == (set(DDOT), {2, 3})


@pytest.mark.parametrize("kind", ["library", "export"])
def test_the_kernels_give_numpys_bits_where_the_check_agrees(verdict, kind, tmp_path):
    """The sizes the check passed, on other random inputs (another seed; normal values spread
    over 16 binary orders of magnitude): each kernel equals np.dot bit for bit, as a library
    builds it (FMA instructions) and as an export does (C99's fma): one source, any build."""
    lib = _build(tmp_path, kind)
    ddot, gemv = verdict
    assert ddot and gemv or _corename() != "SkylakeX"
    rng = np.random.default_rng(39)

    def values(*shape):
        return rng.standard_normal(shape) * 2.0 ** rng.integers(-8, 8, shape)

    for n in ddot:
        for _ in range(200):
            x, y = values(n), values(n)
            got = lib.t_ddot(n, x.ctypes.data, y.ctypes.data)
            assert np.float64(got).tobytes() == np.dot(x, y).tobytes(), (n, x, y)
    out = np.empty(3)
    for v in gemv:
        for m in range(1, 17):
            for _ in range(20):
                A, x = values(m, v), values(m)
                lib.t_gemv(m, v, A.ctypes.data, x.ctypes.data, out.ctypes.data)
                assert out[:v].tobytes() == np.dot(x, A).tobytes(), (m, v, A, x)


def _counting_blas():
    """numpy's BLAS with its dgemv counted: (the numpy_blas answer to hand over, the list
    each call appends to, what must live as long as it is used)."""
    ilp64, (ddot, dgemv, daxpy, dgemm) = numpy_blas()
    I = ctypes.c_longlong if ilp64 else ctypes.c_int
    P, D, E = ctypes.c_void_p, ctypes.c_double, ctypes.c_int
    kind = ctypes.CFUNCTYPE(None, E, E, I, I, D, P, I, P, I, D, P, I)
    real, calls = kind(dgemv), []

    def counted(*args):
        calls.append(args[2:4])
        real(*args)

    hook = kind(counted)
    found = (ilp64, (ddot, ctypes.cast(hook, P).value, daxpy, dgemm))
    return found, calls, (real, hook)


@pytest.mark.parametrize("forced", [False, True], ids=["checked", "forced_to_disagree"])
def test_a_size_the_check_refuses_calls_the_blas_and_keeps_the_bits(fresh_cache, monkeypatch,
                                                                   forced):
    """msd (2 states, rk45): its stage sums are transposed dgemvs into 2 values. Where the
    check agrees (this machine) the run calls no dgemv; with every size marked disagreeing
    (the path a CPU with other kernels takes) each stage calls the BLAS. Either way the
    run equals normal mode's (np.dot) bit for bit."""
    found, calls, keep = _counting_blas()
    monkeypatch.setattr(build, "numpy_blas", lambda: found)
    monkeypatch.setattr(blas, "_AGREED", {})
    if forced:
        monkeypatch.setattr(build, "inline_sizes", lambda lib, found: 0)
    path = ROOT / "diagrams" / "msd.yaml"
    model = blocksim.load(path, ["simulation.mode=accelerated"])
    simulate_model(model)  # binds the library: the check's own calls, once
    calls.clear()
    t, data, info = simulate_model(model)
    assert info["mode"]["mode"] == "accelerated"
    if forced:
        # rk45's stage arguments (2..7 terms) and error estimate (7), into 2 values each
        assert len(calls) > 6 * info["stats"]["nsteps"]
        assert set(calls) == {(m, 2) for m in range(2, 8)}
    elif _corename() == "SkylakeX":
        assert calls == []
    t0, data0, info0 = simulate_model(blocksim.load(path, ["simulation.mode=normal"]))
    assert info["stats"] == info0["stats"]
    np.testing.assert_array_equal(t, t0)
    for channel, values in data0.items():
        np.testing.assert_array_equal(data[channel], values, err_msg=channel)
    del keep
