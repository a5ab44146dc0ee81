"""Pieces of the blocks' compiled forms checked on their own: numpy's loops as compiled code
calls them, and what a lowering refuses."""
import ctypes
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.accel import ufuncs
from blocksim.accel.codegen import NotCompilable, generate

CORPUS = Path(__file__).parent / "corpus"
_LOOP = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_ssize_t),
                         ctypes.POINTER(ctypes.c_ssize_t), ctypes.c_void_p)


def _call(name, u):
    """out = f(u) through the loop address ufuncs.loop found, called as rt_ufunc calls it."""
    function, data = ufuncs.loop(name)
    u = np.ascontiguousarray(u, dtype=float)
    out = np.empty_like(u)
    args = (ctypes.c_void_p * 2)(u.ctypes.data, out.ctypes.data)
    _LOOP(function)(args, (ctypes.c_ssize_t * 1)(u.size), (ctypes.c_ssize_t * 2)(8, 8), data)
    return out


@pytest.mark.parametrize("name", ufuncs.NAMES)
def test_the_loops_compiled_code_calls_give_numpys_bits(name):
    """The second algorithm is numpy itself, on arrays of 1, 7 and 1000 elements and on the
    0-d arrays a scalar signal is (the domain of each function sampled)."""
    low, high = {"log": (1e-3, 10), "log10": (1e-3, 10), "arcsin": (-1, 1),
                 "arccos": (-1, 1)}.get(name, (-3, 3))
    u = np.random.default_rng(7).uniform(low, high, 1000)
    f = getattr(np, name)
    for part in (u[:1], u[:7], u):
        assert np.array_equal(_call(name, part), f(part))
    assert all(_call(name, v.reshape(1))[0] == f(v.reshape(())) for v in u[:200])


def test_a_ufunc_of_another_layout_is_not_read():
    assert ufuncs.loop("add") is None  # two inputs: not an elementary function's loop


def test_without_numpys_loop_the_math_block_has_no_compiled_form(monkeypatch):
    monkeypatch.setattr(ufuncs, "loop", lambda name: None)
    model = blocksim.load(CORPUS / "fault_log.yaml")
    with pytest.raises(NotCompilable) as e:
        generate(model)
    assert [(name, kind) for name, kind, _ in e.value.blocks] == [("Log", "math")]
    assert "log10 loop was not found" in e.value.blocks[0][2]


@pytest.fixture(scope="module")
def exact_times(tmp_path_factory):
    """runtime/rt_exact.c compiled alone, with a function for a transport delay's t + delay."""
    from blocksim.accel import build
    from blocksim.accel.codegen import RUNTIME
    import subprocess
    folder = tmp_path_factory.mktemp("exact")
    source = folder / "exact.c"
    source.write_text(
        "#include <math.h>\ntypedef __int128 i128;\n"
        "typedef struct { i128 A, C; long long L; int E; } RtSeries;\n"
        f'#include "{RUNTIME / "rt_exact.c"}"\n'
        "double later(double t, double hi, double lo, double d, double e) {\n"
        "    RtExact delay = {(i128)hi * ((i128)1 << 32) + (i128)lo, (long long)d, (int)e};\n"
        "    return rt_exact_sum(rt_exact_time(t), delay); }\n")
    library = folder / "exact.so"
    command, _ = build.compiler()
    subprocess.run([command, *build.FLAGS, "-o", str(library), str(source), "-lm"], check=True)
    lib = ctypes.CDLL(str(library))
    lib.later.restype = ctypes.c_double
    lib.later.argtypes = [ctypes.c_double] * 5
    return lib


@pytest.mark.parametrize("delay", [0.5, 0.1, 1 / 3, 0.1 + 0.2, 1e-7, 12345.678, 2.0 ** -40, 7e6])
def test_compiled_t_plus_delay_is_the_exact_sum_python_rounds(exact_times, delay):
    """float(exact_time(t) + exact_time(delay)) (TransportDelay.later, Python's fractions) at
    the times events happen: decimal times, sample hits k*0.1, located crossings (any float),
    tiny and negative ones."""
    from blocksim.block import exact_time
    from blocks.delay import exact_parts
    rng = np.random.default_rng(5)
    times = np.concatenate([np.arange(0, 50) * 0.1, np.arange(1, 40) / 3.0,
                            rng.uniform(0, 10, 300), rng.uniform(0, 1e-6, 50),
                            10.0 ** rng.uniform(-15, 6, 100), -rng.uniform(0, 5, 50),
                            [0.0, 1e-300, 2.0 ** -33, 3.0 ** 30]])
    parts = exact_parts(delay)
    for t in times:
        expected = float(exact_time(float(t)) + exact_time(delay))
        assert exact_times.later(float(t), *parts) == expected, t
