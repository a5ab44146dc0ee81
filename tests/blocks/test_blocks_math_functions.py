"""The math block against numpy, and its domain errors (block, value and time named)."""
import math

import numpy as np
import pytest
from harness import Rig

import blocksim
from blocksim.errors import SimulationError
from blocks.math_functions import FUNCTIONS, Math

# numpy's name of each function, and inputs inside its domain
REFERENCE = {
    "exp": (np.exp, [-2.0, 0.0, 1.5]), "log": (np.log, [0.1, 1.0, 7.0]),
    "log10": (np.log10, [0.01, 1.0, 250.0]), "sqrt": (np.sqrt, [0.0, 2.0, 9.0]),
    "square": (np.square, [-3.0, 0.5, 4.0]), "reciprocal": (np.reciprocal, [-4.0, 0.5, 3.0]),
    "sin": (np.sin, [-1.0, 0.3, 2.0]), "cos": (np.cos, [-1.0, 0.3, 2.0]),
    "tan": (np.tan, [-1.0, 0.3, 1.2]), "asin": (np.arcsin, [-1.0, 0.3, 1.0]),
    "acos": (np.arccos, [-1.0, 0.3, 1.0]), "atan": (np.arctan, [-9.0, 0.3, 2.0]),
    "sinh": (np.sinh, [-2.0, 0.3, 2.0]), "cosh": (np.cosh, [-2.0, 0.3, 2.0]),
    "tanh": (np.tanh, [-2.0, 0.3, 2.0]),
}


def test_every_function_has_a_reference():
    assert set(REFERENCE) == set(FUNCTIONS)


@pytest.mark.parametrize("fn", sorted(REFERENCE))
def test_math_against_numpy(fn):
    f, u = REFERENCE[fn]
    rig = Rig(Math, {"fn": fn}, {"u": (3,)})
    np.testing.assert_allclose(rig.set(u=u).out(), f(np.array(u)), rtol=1e-15, atol=0)


@pytest.mark.parametrize("fn, bad", [("log", 0.0), ("log", -1.0), ("log10", -2.0),
                                     ("sqrt", -1e-9), ("reciprocal", 0.0), ("asin", 1.5),
                                     ("acos", -1.0001)])
def test_domain_errors_name_block_value_and_time(fn, bad):
    rig = Rig(Math, {"fn": fn}, {"u": (2,)}, name="M")
    with pytest.raises(SimulationError) as e:
        rig.set(u=[0.5, bad]).out(2.5)
    err = e.value
    assert (err.block, err.time) == ("M", 2.5)
    assert fn in str(err) and f"{bad:.6g}" in str(err)


LOG_OF_RAMP = """
blocksim: 1
blocks:
  R: {type: ramp, slope: -1, initial: 2}
  L: {type: math, fn: log}
wires: [R -> L]
simulation: {stop: 5, max_step: 0.05}
record: {y: L.y}
"""


def test_log_of_a_ramp_through_zero_fails_at_the_time_it_reaches_zero(tmp_path):
    path = tmp_path / "log.yaml"
    path.write_text(LOG_OF_RAMP)
    with pytest.raises(SimulationError) as e:
        blocksim.run(path)
    err = e.value
    assert err.block == "L" and "log" in str(err)
    # u = 2 - t reaches 0 at t = 2: the failing evaluation lies within one max_step after it
    assert 2.0 <= err.time <= 2.05 + 1e-9
    r = err.result  # the partial results are kept, and they are log(2 - t)
    assert not r.complete and r.t[-1] < 2.0
    np.testing.assert_allclose(r["y"], np.log(2 - r.t), rtol=1e-12)
    assert math.isfinite(r["y"][-1])
