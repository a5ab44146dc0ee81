"""Discrete blocks: zoh and unit_delay across several sample hits (Simulink semantics: at a
hit, outputs in dataflow order, then updates; outputs hold between hits)."""
import numpy as np
import pytest
from harness import Rig

from blocksim.block import Sample
from blocksim.params import ParamError
from blocks.discrete import UnitDelay, ZeroOrderHold
from blocks.math import Sum


def test_zoh_holds_samples_and_starts_at_x0():
    rig = Rig(ZeroOrderHold, {"period": 0.1, "offset": 0.05, "x0": [7, 8]})
    assert rig.block.sample == Sample(0.1, 0.05)
    assert rig.block.ports()[0][0].shape == (2,)  # a non-scalar x0 fixes the signal's shape
    assert rig.block.ports()[1][0].feedthrough == ("u",)
    rig.set(u=[1, 2]).start(0.0, hit=False)  # t = 0 is before the first hit (0.05)
    np.testing.assert_array_equal(rig.y["y"], [7, 8])
    np.testing.assert_array_equal(rig.hit(0.05), [1, 2])  # sampled at the hit
    rig.set(u=[3, 4])  # the input moves between hits: the output holds
    np.testing.assert_array_equal(rig.y["y"], [1, 2])
    np.testing.assert_array_equal(rig.set(u=[5, 6]).hit(0.15), [5, 6])
    np.testing.assert_array_equal(rig.set(u=[9, 9]).hit(0.25), [9, 9])


def test_zoh_starting_on_a_hit_outputs_the_sample():
    rig = Rig(ZeroOrderHold, {"period": 1, "x0": 9}, {"u": ()}).set(u=3).start(0.0)
    assert rig.y["y"] == 3.0  # the hit at t = 0 samples u, x0 is never seen
    rig.block.update(0.0)
    assert rig.set(u=4).hit(1.0) == 4.0


def test_zoh_scalar_x0_broadcasts():
    rig = Rig(ZeroOrderHold, {"period": 1, "offset": 0.5, "x0": 1.5}, {"u": (3,)})
    rig.start(0.0, hit=False)
    np.testing.assert_array_equal(rig.y["y"], [1.5, 1.5, 1.5])


@pytest.mark.parametrize("params, bad", [
    ({"period": 0}, "period"),
    ({"period": 1, "offset": -1}, "offset"),
])
def test_zoh_parameter_errors(params, bad):
    with pytest.raises(ParamError) as e:
        Rig(ZeroOrderHold, params, {"u": ()})
    assert e.value.param == bad


def test_unit_delay_sequence():
    rig = Rig(UnitDelay, {"period": 1, "x0": 0.5}, {"u": ()})
    assert rig.block.sample == Sample(1.0, 0.0)
    assert rig.block.ports()[1][0].feedthrough == ()
    rig.set(u=1).start(0.0)  # hit at t = 0: y[0] = x0
    assert rig.y["y"] == 0.5
    rig.block.update(0.0)  # stores u[0] = 1 ...
    assert rig.y["y"] == 0.5  # ... without changing the output before the next hit
    for k, u in enumerate([2, 3, 4], start=1):
        assert rig.set(u=u).hit(float(k)) == u - 1  # y[k] = u[k-1]
        assert rig.y["y"] == u - 1  # held after the update


def test_unit_delay_before_its_first_hit_outputs_x0():
    rig = Rig(UnitDelay, {"period": 1, "x0": [1, 2]}).set(u=[5, 5]).start(0.5, hit=False)
    np.testing.assert_array_equal(rig.y["y"], [1, 2])
    np.testing.assert_array_equal(rig.hit(1.0), [1, 2])  # y at the first hit: still x0
    np.testing.assert_array_equal(rig.hit(2.0), [5, 5])


def test_unit_delay_in_a_discrete_accumulator():
    # y[k] = y[k-1] + 1 with y[-1] = x0 = 10: sum(delay.y, 1) -> delay.u. Within a hit the sum
    # must see the delay's new output (one sample late, not two): s[k] = 10 + (k + 1).
    delay = Rig(UnitDelay, {"period": 0.5, "x0": 10}, {"u": ()})
    add = Rig(Sum, {}, {"u1": (), "u2": ()}).set(u2=1)
    sums = []
    for k in range(4):
        t = 0.5 * k
        delay.out(t)
        if k == 0:
            delay.block.initialize(t)
        sums.append(add.set(u1=delay.y["y"]).out(t))
        delay.set(u=add.y["y"]).block.update(t)
    assert sums == [11, 12, 13, 14]
