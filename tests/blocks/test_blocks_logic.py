"""relational and logical against their truth tables (Python's own operators as the second
implementation), the quantizer against interval*round(u/interval), and both switching only
at located events in a run."""
import itertools
import math
import operator

import numpy as np
import pytest
from harness import Rig

import blocksim
from blocksim.params import ParamError
from blocks.logic import Logical
from blocks.quantizer import Quantizer
from blocks.switching import Relational

VALUES = [-2.0, -0.0, 0.0, 0.5, 3.0]  # negative, both zeros, positive


@pytest.mark.parametrize("op, fn", [("<", operator.lt), ("<=", operator.le), (">", operator.gt),
                                    (">=", operator.ge), ("==", operator.eq),
                                    ("!=", operator.ne)])
def test_relational_truth_table(op, fn):
    rig = Rig(Relational, {"op": op}, {"u1": (), "u2": ()})
    for a, b in itertools.product(VALUES, VALUES):
        assert rig.set(u1=a, u2=b).event()["y"] == float(fn(a, b)), (a, op, b)


REFERENCE = {
    "and": all, "or": any,
    "xor": lambda bits: sum(bits) % 2 == 1,
    "nand": lambda bits: not all(bits), "nor": lambda bits: not any(bits),
}


@pytest.mark.parametrize("op", sorted(REFERENCE))
@pytest.mark.parametrize("n", [2, 3])
def test_logical_truth_tables(op, n):
    rig = Rig(Logical, {"op": op, "inputs": n}, {f"u{i + 1}": () for i in range(n)})
    for values in itertools.product([0.0, -1.5, 2.0], repeat=n):  # 0 is false, any other true
        y = rig.set(**{f"u{i + 1}": v for i, v in enumerate(values)}).event()["y"]
        assert y == float(REFERENCE[op]([v != 0 for v in values])), (op, values)


def test_logical_not_and_broadcasting():
    rig = Rig(Logical, {"op": "not"}, {"u": (3,)})
    assert [p.name for p in rig.block.ports()[0]] == ["u"]
    np.testing.assert_array_equal(rig.set(u=[0.0, 2.0, -1e-300]).event()["y"], [1, 0, 0])
    rig = Rig(Logical, {"op": "and"}, {"u1": (3,), "u2": ()})
    np.testing.assert_array_equal(rig.set(u1=[0, 1, 1], u2=1).event()["y"], [0, 1, 1])
    np.testing.assert_array_equal(rig.set(u2=0).event()["y"], [0, 0, 0])


def test_logical_output_is_frozen_between_events():
    rig = Rig(Logical, {"op": "or"}, {"u1": (), "u2": ()})
    assert rig.set(u1=0, u2=0).event()["y"] == 0.0
    rig.set(u1=5.0)  # inside a step, before the engine located the change
    assert rig.out() == 0.0
    assert rig.indicators()[0] == 5.0  # u1's indicator left 0: the engine finds the event
    assert rig.event(crossed=[1, 0])["y"] == 1.0


@pytest.mark.parametrize("interval", [0.5, 0.1, 3.0])
def test_quantizer_against_round_half_away_from_zero(interval):
    rig = Rig(Quantizer, {"interval": interval}, {"u": (41,)})
    u = np.linspace(-7, 7, 41) * interval / 2.3
    u[:4] = [0.5 * interval, -0.5 * interval, 1.5 * interval, -2.5 * interval]  # ties
    expected = [interval * math.copysign(math.floor(abs(v) / interval + 0.5), v) for v in u]
    np.testing.assert_allclose(rig.set(u=u).event()["y"], expected, rtol=1e-15, atol=0)


def test_quantizer_indicators_bracket_the_level():
    rig = Rig(Quantizer, {"interval": 0.5}, {"u": ()})
    rig.set(u=1.1).event()  # level 2: y = 1.0; thresholds 1.25 and 0.75
    np.testing.assert_allclose(rig.indicators(), [1.1 - 1.25, 1.1 - 0.75])
    assert Rig(Quantizer, {"interval": 1}, {"u": ()}).block.ports()[1][0].feedthrough == "all"


def test_quantizer_interval_must_be_positive():
    with pytest.raises(ParamError) as e:
        Rig(Quantizer, {"interval": 0}, {"u": ()})
    assert e.value.param == "interval"


STAIRS = """
blocksim: 1
blocks:
  S: {type: sine, amplitude: 1, frequency: 2}
  Q: {type: quantizer, interval: 0.25}
  C: {type: sine, frequency: 3, phase: pi/2}
  A: {type: constant, value: 0.3}
  Z: {type: constant, value: 0}
  R1: {type: relational, op: ">"}
  R2: {type: relational, op: "<"}
  L: {type: logical, op: and}
  I: {type: integrator}
wires: [S -> Q, S -> R1.u1, A -> R1.u2, C -> R2.u1, Z -> R2.u2, R1 -> L.u1, R2 -> L.u2,
        L -> I]
simulation: {stop: 6, max_step: 0.5}
record: {q: Q.y, l: L.y, on_time: I.y}
"""


@pytest.mark.parametrize("solver", ["rk45", "rk4", "bdf"])
def test_staircase_and_logic_switch_at_located_events(tmp_path, solver):
    path = tmp_path / "stairs.yaml"
    path.write_text(STAIRS)
    r = blocksim.run(path, overrides={"simulation.solver": solver, "simulation.step": 0.01})
    t, s = r.t, np.sin(2 * r.t)
    # Q = 0.25 round(sin 2t / 0.25), except on a row at a step itself (the new level there)
    expected = 0.25 * np.sign(s) * np.floor(np.abs(s) / 0.25 + 0.5)
    at_step = np.abs(np.abs(s) / 0.25 % 1 - 0.5) < 1e-7
    np.testing.assert_array_equal(r["q"][~at_step], expected[~at_step])
    # every step of the staircase is an event where sin 2t = c, c = +-0.125, +-0.375, ...:
    # t = (asin c + 2 pi k)/2 or (pi - asin c + 2 pi k)/2, located to the event tolerance
    c = np.array([-0.875, -0.625, -0.375, -0.125, 0.125, 0.375, 0.625, 0.875])
    k = np.arange(-1, 3)[:, None]
    exact = np.concatenate([((np.arcsin(c) + 2 * np.pi * k) / 2).ravel(),
                            ((np.pi - np.arcsin(c) + 2 * np.pi * k) / 2).ravel()])
    exact = np.sort(exact[(exact > 0) & (exact < 6)])
    steps = r.events_t[r.events_block == r.meta["event_blocks"].index("Q")]
    np.testing.assert_allclose(steps, exact, atol=1e-9)
    # L = (sin 2t > 0.3) and (cos 3t < 0): its integral is the measure of that set, here by
    # fine sampling of the closed forms
    fine = np.linspace(0, 6, 2_000_001)
    both = (np.sin(2 * fine) > 0.3) & (np.cos(3 * fine) < 0)
    assert r["on_time"][-1] == pytest.approx(both.mean() * 6, abs=1e-5)
    np.testing.assert_array_equal(np.unique(r["l"]), [0.0, 1.0])
