"""Pieces of the blocks' compiled forms checked on their own: numpy's loops as compiled code
calls them, and what a lowering refuses."""
import ctypes
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.accel import ufuncs
from blocksim.accel.codegen import generate
from blocksim.accel.compilable import NotCompilable

CORPUS = Path(__file__).parent / "corpus"
_LOOP = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_ssize_t),
                         ctypes.POINTER(ctypes.c_ssize_t), ctypes.c_void_p)


def _call(name, *operands, strides=None):
    """out = f(*operands) through the loop address ufuncs.loop found, called as rt_ufunc1
    and rt_ufunc2 call it (element strides, 0 repeating an element)."""
    function, data = ufuncs.loop(name)
    operands = [np.ascontiguousarray(u, dtype=float) for u in operands]
    n = max(u.size for u in operands)
    strides = strides or [1] * len(operands)
    out = np.empty(n)
    args = (ctypes.c_void_p * (len(operands) + 1))(*[u.ctypes.data for u in operands],
                                                      out.ctypes.data)
    steps = (ctypes.c_ssize_t * (len(operands) + 1))(*[8 * s for s in strides], 8)
    _LOOP(function)(args, (ctypes.c_ssize_t * 1)(n), steps, data)
    return out


# each function's domain, sampled (and -3..3 for the others)
_DOMAINS = {"log": (1e-3, 10), "log10": (1e-3, 10), "log2": (1e-3, 10), "arcsin": (-1, 1),
            "arccos": (-1, 1), "arctanh": (-1, 1), "arccosh": (1, 5), "power": (1e-3, 3)}


@pytest.mark.parametrize("name", ufuncs.NAMES)
def test_the_loops_compiled_code_calls_give_numpys_bits(name):
    """The second algorithm is numpy itself, on arrays of 1, 7 and 1000 elements and on the
    0-d arrays a scalar signal is (the domain of each function sampled); a function of two
    arguments also with its second repeated (stride 0: numpy's power takes x * x for an
    exponent of 2 then, and its own kernel for an array of 2s)."""
    low, high = _DOMAINS.get(name, (-3, 3))
    rng = np.random.default_rng(7)
    u, v = rng.uniform(low, high, 1000), rng.uniform(-3, 3, 1000)
    f = getattr(np, name)
    if f.nin == 1:
        for part in (u[:1], u[:7], u):
            assert np.array_equal(_call(name, part), f(part))
        assert all(_call(name, x.reshape(1))[0] == f(x.reshape(())) for x in u[:200])
        return
    for part, other in ((u[:1], v[:1]), (u[:7], v[:7]), (u, v)):
        assert np.array_equal(_call(name, part, other), f(part, other))
    for exponent in (2.0, 0.5, -1.0, 3.0, 2.5):
        repeated = _call(name, u, np.array([exponent]), strides=[1, 0])
        assert np.array_equal(repeated, f(u, exponent))
    assert all(_call(name, x.reshape(1), y.reshape(1), strides=[0, 0])[0]
               == f(x.reshape(()), y.reshape(())) for x, y in zip(u[:200], v[:200]))


def test_a_ufunc_of_another_layout_is_not_read():
    assert ufuncs.loop("divmod") is None  # two outputs: not the loop of a function
    assert ufuncs.loop("isnan") is None  # a boolean result


def test_without_numpys_loop_the_math_block_has_no_compiled_form(monkeypatch):
    monkeypatch.setattr(ufuncs, "loop", lambda name: None)
    model = blocksim.load(CORPUS / "fault_log.yaml")
    with pytest.raises(NotCompilable) as e:
        generate(model)
    assert [(name, kind) for name, kind, _ in e.value.blocks] == [("Log", "math")]
    assert "log10 loop was not found" in e.value.blocks[0][2]


@pytest.mark.parametrize("expression, missing", [("u % 2", "remainder"),
                                                 ("mod(u, 2)", "remainder"),
                                                 ("trotz(u)[0, 1]", "sin")])
def test_without_numpys_loop_an_expression_has_no_compiled_form(monkeypatch, tmp_path,
                                                                expression, missing):
    # '%', mod() and the rotations call numpy's loops from C too: without the loop the call
    # went through a NULL slot (a crash) instead of leaving the block to normal mode
    found = ufuncs.loop
    monkeypatch.setattr(ufuncs, "loop", lambda name: None if name == missing else found(name))
    path = tmp_path / "f.yaml"
    path.write_text("blocksim: 1\nblocks:\n  C: {type: constant, value: 0.3}\n"
                    f"  F: {{type: function, expr: '{expression}', inputs: [u]}}\n"
                    "  I: {type: integrator}\nwires: [C -> F, F -> I]\n"
                    "simulation: {stop: 1}\n")
    with pytest.raises(NotCompilable) as e:
        generate(blocksim.load(path))
    assert [(name, kind) for name, kind, _ in e.value.blocks] == [("F", "function")]
    assert e.value.blocks[0][2] == f"needs numpy's {missing} loop, which was not found"


@pytest.mark.parametrize("block, need", [
    ("{type: function, expr: 'inv(u + 2 * eye(200))', inputs: [u]}", "320,000 numbers"),
    ("{type: transport_delay, delay: 0.1, x0: 'zeros([200, 200])'}", "360,000 numbers")])
def test_work_space_too_large_for_the_stack_has_no_compiled_form(tmp_path, block, need):
    # the C keeps these work copies on the stack: a 700 x 700 inv or a delay of 110,000
    # elements overflowed it (a crash, and a sweep's rows with it); such blocks run normal
    path = tmp_path / "big.yaml"
    path.write_text("blocksim: 1\nblocks:\n  C: {type: constant, value: 'zeros([200, 200])'}\n"
                    f"  B: {block}\n  S: {{type: terminator}}\nwires: [C -> B, B -> S]\n"
                    "simulation: {stop: 1}\n")
    with pytest.raises(NotCompilable) as e:
        generate(blocksim.load(path))
    [(name, _, why)] = e.value.blocks
    assert name == "B" and why.startswith(f"needs {need} of work space")


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
    subprocess.run([*command, *build.FLAGS, "-o", str(library), str(source), "-lm"], check=True)
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
