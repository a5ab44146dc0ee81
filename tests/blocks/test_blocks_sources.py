"""Source blocks: clock, ramp, sine, table (values derived by hand next to each check)."""
import math

import numpy as np
import pytest
from harness import Rig

from blocksim.params import ParamError
from blocks.sources import Clock, Ramp, Sine, Table


def test_clock_outputs_time():
    rig = Rig(Clock)
    assert rig.out_shapes == {"t": ()}
    assert rig.out(2.75) == 2.75


def test_ramp_before_and_after_start():
    rig = Rig(Ramp, {"slope": 2, "start": 1, "initial": 3}).start(0.0)
    assert rig.out(0.5) == 3.0  # before start: initial
    assert rig.block.events(0.0, 10.0) == (1.0,)
    assert rig.block.events(1.0, 10.0) == ()  # (start, stop] excludes 1
    rig.block.event(1.0)
    assert rig.out(1.0) == 3.0  # 3 + 2*0
    assert rig.out(2.5) == 6.0  # 3 + 2*(2.5 - 1)


def test_ramp_started_late_and_vector_slope():
    rig = Rig(Ramp, {"slope": [1, -1], "start": 1}).start(2.0)  # run starts after the kink
    assert rig.out_shapes == {"y": (2,)}
    np.testing.assert_array_equal(rig.out(3.0), [2.0, -2.0])  # +-1*(3 - 1)


def test_sine_equation():
    rig = Rig(Sine, {"amplitude": 2, "frequency": 3, "phase": 0.5, "bias": 1})
    assert rig.out(0.7) == pytest.approx(1 + 2 * math.sin(3 * 0.7 + 0.5), abs=1e-15)


def test_sine_defaults_and_vector_amplitude():
    rig = Rig(Sine, {"amplitude": [1, 2]})
    assert rig.out_shapes == {"y": (2,)}
    np.testing.assert_allclose(rig.out(math.pi / 2), [1.0, 2.0], atol=1e-15)  # sin(pi/2) = 1


TABLE = {"times": [0, 1, 3], "values": [0, 10, -10]}


@pytest.mark.parametrize("t, expected", [
    (-1.0, 0.0),  # before the first point: first value held
    (0.5, 5.0),   # halfway from 0 to 10
    (1.0, 10.0),  # on a point
    (2.0, 0.0),   # 10 + (-20)*(2 - 1)/(3 - 1)
    (5.0, -10.0),  # after the last point: last value held
])
def test_table_linear_with_time_input(t, expected):
    rig = Rig(Table, TABLE, {"t": ()}).set(t=t)
    assert rig.out(123.0) == pytest.approx(expected, abs=1e-14)  # the block's own time is ignored
    assert rig.block.events(-10.0, 10.0) == ()  # wired t: nothing to land on


def test_table_linear_reads_time_when_unwired_and_lands_on_kinks():
    rig = Rig(Table, TABLE).start(0.0)
    assert rig.out(2.0) == pytest.approx(0.0, abs=1e-14)
    assert rig.block.events(0.0, 3.0) == (1.0, 3.0)


def test_table_vector_values():
    rig = Rig(Table, {"times": [0, 1, 2], "values": [[0, 0], [1, 2], [3, 6]]})
    assert rig.out_shapes == {"y": (2,)}
    np.testing.assert_allclose(rig.out(1.5), [2.0, 4.0])  # halfway between [1, 2] and [3, 6]


def test_table_previous_switches_at_events():
    rig = Rig(Table, dict(TABLE, method="previous")).start(0.0)
    assert rig.out(0.0) == 0.0
    assert rig.block.events(0.0, 3.0) == (1.0, 3.0)
    assert rig.out(0.999999) == 0.0
    rig.block.event(1.0)
    assert rig.out(1.0) == 10.0  # right-continuous: the new value from t = 1 on
    assert rig.out(2.9999) == 10.0
    rig.block.event(3.0)
    assert rig.out(7.0) == -10.0  # held after the last point


def test_table_previous_initial_segment():
    rig = Rig(Table, dict(TABLE, method="previous")).start(2.0)  # run starts inside segment 1
    assert rig.out(2.0) == 10.0
    rig = Rig(Table, {"times": [1, 2], "values": [4, 5], "method": "previous"}).start(0.0)
    assert rig.out(0.0) == 4.0  # before the first point: first value held


def test_table_previous_with_time_input():
    rig = Rig(Table, dict(TABLE, method="previous"), {"t": ()})
    for t, expected in ((-1, 0.0), (0.5, 0.0), (1.0, 10.0), (2.5, 10.0), (3.0, -10.0), (9, -10.0)):
        assert rig.set(t=t).out(0.0) == expected


@pytest.mark.parametrize("params, bad", [
    ({"times": [0, 1, 1], "values": [0, 1, 2]}, "times"),  # not strictly increasing
    ({"times": [[0, 1]], "values": [0, 1]}, "times"),  # not a vector
    ({"times": [0, 1], "values": [0, 1, 2]}, "values"),  # 3 rows for 2 times
    # issue 35 item 5: numbers a double cannot hold. 1e308 - (-1e308) = inf: the slope was 0,
    # the output held instead of interpolated
    ({"times": [-1e308, 1e308], "values": [0, 1]}, "times"),
    ({"times": [-1e308, 1e308], "values": [0, 1], "method": "previous"}, "times"),
    # (1e308 - (-1e308)) / 1 and 1 / 5e-324 are inf: y = v + inf * 0 was NaN at the point
    ({"times": [0, 1], "values": [-1e308, 1e308]}, "values"),
    ({"times": [0, 5e-324], "values": [0, 1]}, "values"),
    ({"times": [0, 1, 2], "values": [[0, 0], [0, 1e308], [0, -1e308]]}, "values"),
])
def test_table_parameter_errors(params, bad):
    with pytest.raises(ParamError) as e:
        Rig(Table, params)
    assert e.value.param == bad
    if "1e308" in str(params) or "5e-324" in str(params):
        assert "is more than the largest number, 1.798e+308" in e.value.message


def test_a_steep_table_held_in_steps_is_fine():
    """With method previous the slopes are not used: a jump by 2e308 (beyond the largest
    double) within 5e-324 s is two held values."""
    rig = Rig(Table, {"times": [0, 5e-324, 1], "values": [-1e308, 1e308, 0],
                      "method": "previous"}).start(0.0)
    assert rig.out(0.0) == -1e308
    rig.block.event(5e-324)
    assert rig.out(0.5) == 1e308
