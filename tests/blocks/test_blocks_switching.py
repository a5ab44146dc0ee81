"""dead_zone, sign, abs, min_max, switch and backlash against closed forms: their outputs on
sin t and cos t written out by hand, and their switching instants (where sin t and cos t
reach the thresholds) located as events."""
import math

import numpy as np
import pytest
from harness import Rig

import blocksim
from blocks.discontinuities import Backlash, DeadZone
from blocks.switching import Abs, MinMax, Sign, Switch

SHAPES = """
blocksim: 1
name: shapes
blocks:
  S: {type: sine}
  C: {type: sine, phase: 1.5707963267948966}
  Dead: {type: dead_zone, start: -0.25, end: 0.5}
  Sign: {type: sign}
  Abs: {type: abs}
  Max: {type: max_block}
  Pick: {type: switch, threshold: 0.5}
  NegC: {type: gain, K: -1}
wires: [S -> Dead, S -> Sign, S -> Abs, S -> Max.u1, C -> Max.u2, C -> Pick.u1, S -> Pick.u2,
        C -> NegC, NegC -> Pick.u3]
simulation: {stop: 7, rtol: 1e-10, atol: 1e-12}
record: {dead: Dead.y, sign: Sign.y, abs: Abs.y, max: Max.y, pick: Pick.y}
""".replace("max_block", "min_max, fn: max")


def events_of(r, name):
    return r.events_t[r.events_block == r.meta["event_blocks"].index(name)]


def test_element_wise_switching_blocks_on_a_sine(tmp_path):
    """u = sin t, c = cos t on (0, 7]. dead_zone [-0.25, 0.5]: 0 inside, u - 0.5 above, u + 0.25
    below, switching where sin t = 0.5 (pi/6, 5pi/6, 13pi/6) and sin t = -0.25
    (pi + asin 0.25, 2pi - asin 0.25); sign and abs switch at pi and 2pi, and sign also as u
    leaves 0 at the start (abs does not change there); max(u, c) where sin t = cos t (pi/4,
    5pi/4); the switch passes c while sin t >= 0.5, else -c, switching where sin t = 0.5."""
    path = tmp_path / "shapes.yaml"
    path.write_text(SHAPES)
    r = blocksim.run(str(path))
    t, u, c = r.t, np.sin(r.t), np.cos(r.t)
    a = math.asin(0.25)
    half = np.pi * np.array([1, 5, 13]) / 6
    expected_events = {
        "Dead": np.sort(np.r_[half, np.pi + a, 2 * np.pi - a]),
        "Sign": [0.0, np.pi, 2 * np.pi], "Abs": [np.pi, 2 * np.pi],
        "Max": [np.pi / 4, 5 * np.pi / 4], "Pick": half,
    }
    for name, times in expected_events.items():
        np.testing.assert_allclose(events_of(r, name), times, rtol=0, atol=1e-9, err_msg=name)
    # away from the switching instants (where the closed forms' own rounding decides a side)
    away = np.min(np.abs(t[:, None] - np.r_[0.0, *expected_events["Dead"], np.pi, 2 * np.pi]),
                  axis=1) > 1e-8
    np.testing.assert_allclose(r["dead"], np.where(u > 0.5, u - 0.5, np.where(u < -0.25,
                                                                             u + 0.25, 0.0)),
                               rtol=0, atol=1e-12)
    np.testing.assert_array_equal(r["sign"][away], np.sign(u[away]))
    assert r["sign"][0] == 0.0  # sin 0 = 0 exactly
    np.testing.assert_allclose(r["abs"], np.abs(u), rtol=0, atol=1e-15)
    np.testing.assert_allclose(r["max"], np.maximum(u, c), rtol=0, atol=1e-15)
    np.testing.assert_allclose(r["pick"][away], np.where(u >= 0.5, c, -c)[away], rtol=0,
                               atol=1e-15)


@pytest.mark.parametrize("u0, rate, y0, pushed", [
    (1.0, 0.0, 0.7, 0.0),    # u outside the play at rest: y pushed to u - 0.3, play open
    (1.0, 2.0, 0.7, 1.0),    # ... moving on outwards: pushed along
    (1.0, -2.0, 0.7, 0.0),   # ... moving back in: open, holding
    (-1.0, -2.0, -0.7, -1.0),
    (0.2, 5.0, 0.0, 0.0),    # inside the play: y = x0 whatever u does
])
def test_backlash_at_an_event_instant(u0, rate, y0, pushed):
    """The handler at an event instant (the start, a jump of u) with u and du/dt given: y is
    pushed to the edge u -+ 0.3 when u lies outside the play, and the block stays pushed only
    while du/dt points outwards (width 0.6, x0 = 0)."""
    rig = Rig(Backlash, {"width": 0.6}, {"u": ()})
    y = rig.set(u=u0).slope(u=rate).event()["y"]
    assert y == pytest.approx(y0, abs=1e-15)
    assert rig.xd[0] == pushed  # the mode: +1 / -1 pushed, 0 open
    # the play then holds y until u has moved the full width back, or follows u when pushed
    moved = u0 + 0.1 * np.sign(rate) if rate else u0 - 0.1
    expected = moved - 0.3 * pushed if pushed else y0
    assert rig.set(u=moved).out() == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize("criterion, at_threshold", [(">=", 1.0), (">", 3.0), ("!=0", 3.0)])
def test_switch_criteria_at_the_threshold(criterion, at_threshold):
    """u2 exactly at the threshold (0): >= passes u1, > and !=0 pass u3; either side of it
    the criterion decides as written."""
    rig = Rig(Switch, {"criterion": criterion}, {"u1": (), "u2": (), "u3": ()})
    rig.set(u1=1.0, u3=3.0)
    assert rig.set(u2=0.0).event()["y"] == at_threshold
    assert rig.set(u2=0.2).event()["y"] == 1.0
    assert rig.set(u2=-0.2).event()["y"] == (1.0 if criterion == "!=0" else 3.0)


def test_element_wise_blocks_on_vectors_against_numpy():
    u = np.array([-2.0, -0.25, -0.1, 0.0, 0.3, 0.5, 4.0])
    rig = Rig(DeadZone, {"start": -0.25, "end": 0.5}, {"u": u.shape})
    np.testing.assert_array_equal(rig.set(u=u).event()["y"],
                                  np.where(u > 0.5, u - 0.5, np.where(u < -0.25, u + 0.25, 0)))
    np.testing.assert_array_equal(Rig(Sign, {}, {"u": u.shape}).set(u=u).event()["y"],
                                  np.sign(u))
    np.testing.assert_array_equal(Rig(Abs, {}, {"u": u.shape}).set(u=u).event()["y"], np.abs(u))
    rig = Rig(MinMax, {"fn": "min", "inputs": 3}, {"u1": u.shape, "u2": (), "u3": u.shape})
    v = u[::-1].copy()
    np.testing.assert_array_equal(rig.set(u1=u, u2=0.1, u3=v).event()["y"],
                                  np.minimum(np.minimum(u, 0.1), v))


REDUCE = """
blocksim: 1
name: reduce
blocks:
  S: {type: sine}
  C: {type: sine, phase: 1.5707963267948966}
  Half: {type: constant, value: -0.5}
  M: {type: mux, inputs: 3}
  Least: {type: min_max, inputs: 1}
  Most: {type: min_max, fn: max, inputs: 1}
wires: [S -> M.u1, C -> M.u2, Half -> M.u3, M -> Least, M -> Most]
simulation: {stop: 7, rtol: 1e-10, atol: 1e-12}
record: {least: Least.y, most: Most.y}
"""


def test_min_max_of_one_input_reduces_over_its_elements(tmp_path):
    """Simulink's MinMax with one input: y = min (max) over the elements of u = [sin t, cos t,
    -0.5]. By hand on (0, 7]: the min is -0.5 until cos t = -0.5 (2pi/3), then cos t until
    sin t = cos t (5pi/4), then sin t until sin t = -0.5 rising (11pi/6), then -0.5; the max is
    cos t until sin t = cos t (pi/4), sin t until it falls to -0.5 (7pi/6; cos t is below
    -0.5 there), -0.5 until cos t rises through -0.5 (4pi/3), then cos t."""
    path = tmp_path / "reduce.yaml"
    path.write_text(REDUCE)
    r = blocksim.run(str(path))
    u = np.stack([np.sin(r.t), np.cos(r.t), np.full_like(r.t, -0.5)])
    assert r["least"].shape == r.t.shape  # a scalar signal
    np.testing.assert_allclose(r["least"], u.min(axis=0), rtol=0, atol=1e-15)
    np.testing.assert_allclose(r["most"], u.max(axis=0), rtol=0, atol=1e-15)
    np.testing.assert_allclose(events_of(r, "Least"), np.pi * np.array([2 / 3, 5 / 4, 11 / 6]),
                               rtol=0, atol=1e-9)
    np.testing.assert_allclose(events_of(r, "Most"), np.pi * np.array([1 / 4, 7 / 6, 4 / 3]),
                               rtol=0, atol=1e-9)
