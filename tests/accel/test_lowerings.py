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
