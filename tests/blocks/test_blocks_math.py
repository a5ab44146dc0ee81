"""Math blocks: sum, product, matmul, function, saturation (values derived by hand)."""
import numpy as np
import pytest
from harness import Rig

from blocksim.block import PortError
from blocksim.params import ParamError
from blocks.discontinuities import Saturation
from blocks.math import Function, MatMul, Product, Sum


def test_sum_default_two_inputs():
    rig = Rig(Sum, {}, {"u1": (3,), "u2": (3,)})
    assert [p.name for p in rig.block.ports()[0]] == ["u1", "u2"]
    rig.set(u1=[1, 2, 3], u2=[0.5, 0.5, 0.5])
    np.testing.assert_array_equal(rig.out(), [1.5, 2.5, 3.5])


def test_sum_signs_bar_ignored_and_scalar_broadcast():
    rig = Rig(Sum, {"signs": "|-+-"}, {"u1": (), "u2": (2,), "u3": (2,)})
    assert rig.out_shapes == {"y": (2,)}
    rig.set(u1=2, u2=[1, 2], u3=[10, 20])
    np.testing.assert_array_equal(rig.out(), [-11, -20])  # -2 + [1, 2] - [10, 20]


def test_sum_single_negated_input():
    rig = Rig(Sum, {"signs": "-"}, {"u1": (2, 2)}).set(u1=[[1, -2], [3, 0]])
    np.testing.assert_array_equal(rig.out(), [[-1, 2], [-3, 0]])


@pytest.mark.parametrize("signs", ["", "|", "+*"])
def test_sum_bad_signs(signs):
    with pytest.raises(ParamError) as e:
        Rig(Sum, {"signs": signs}, {})
    assert e.value.param == "signs"


def test_sum_shapes_that_do_not_broadcast():
    with pytest.raises(PortError) as e:
        Rig(Sum, {"signs": "++"}, {"u1": (2,), "u2": (3,)})
    assert e.value.port == "u2"


def test_product_multiply_and_divide():
    rig = Rig(Product, {"ops": "*/"}, {"u1": (2,), "u2": (2,)}).set(u1=[6, 8], u2=[2, 4])
    np.testing.assert_array_equal(rig.out(), [3, 2])  # [6/2, 8/4]


def test_product_leading_divide_is_reciprocal():
    rig = Rig(Product, {"ops": "/"}, {"u1": ()}).set(u1=4)
    assert rig.out() == 0.25


def test_product_matrix_times_scalar_elementwise():
    rig = Rig(Product, {}, {"u1": (2, 2), "u2": ()}).set(u1=[[1, 2], [3, 4]], u2=2)
    np.testing.assert_array_equal(rig.out(), [[2, 4], [6, 8]])  # element-wise, not matmul


def test_product_errors():
    with pytest.raises(ParamError):
        Rig(Product, {"ops": "*+"}, {})
    with pytest.raises(PortError) as e:
        Rig(Product, {}, {"u1": (2, 3), "u2": (3, 2)})
    assert e.value.port == "u2"


def test_matmul_matrix_by_vector_and_matrix():
    a = [[1, 2, 3], [4, 5, 6]]
    rig = Rig(MatMul, {}, {"u1": (2, 3), "u2": (3,)}).set(u1=a, u2=[1, 0, -1])
    np.testing.assert_array_equal(rig.out(), [-2, -2])  # [1 - 3, 4 - 6]
    rig = Rig(MatMul, {}, {"u1": (2, 3), "u2": (3, 2)}).set(u1=a, u2=[[1, 0], [0, 1], [1, 1]])
    np.testing.assert_array_equal(rig.out(), [[4, 5], [10, 11]])  # rows [1+3, 2+3], [4+6, 5+6]


@pytest.mark.parametrize("u1, u2, port", [
    ((2, 3), (2,), "u2"),  # inner dimensions 3 and 2
    ((), (3,), "u1"),  # a scalar is not a matrix
    ((2, 2), (2, 2, 2), "u2"),
])
def test_matmul_shape_errors(u1, u2, port):
    with pytest.raises(PortError) as e:
        Rig(MatMul, {}, {"u1": u1, "u2": u2})
    assert e.value.port == port


def test_saturation_clips():
    rig = Rig(Saturation, {"lower": -1, "upper": 2}, {"u": (3,)}).set(u=[-3, 0.5, 5])
    np.testing.assert_array_equal(rig.event()["y"], [-1, 0.5, 2])


def test_saturation_one_sided_and_per_element():
    rig = Rig(Saturation, {"lower": -np.inf, "upper": 0}, {"u": (3,)}).set(u=[-3, 0.5, 5])
    np.testing.assert_array_equal(rig.event()["y"], [-3, 0, 0])
    rig = Rig(Saturation, {"lower": [0, -1], "upper": [1, 1]}, {"u": (2,)}).set(u=[-0.5, -0.5])
    np.testing.assert_array_equal(rig.event()["y"], [0, -0.5])


def test_saturation_mode_is_frozen_between_events():
    """Between events the output follows the mode, not the value: in linear mode u passes
    through even beyond the limit (the engine locates u = upper and switches there), and the
    indicators u - upper, u - lower change sign exactly at the limits."""
    rig = Rig(Saturation, {"lower": -1, "upper": 2}, {"u": ()}).set(u=0.5)
    assert rig.event()["y"] == 0.5
    rig.set(u=2.5)
    assert rig.out() == 2.5                       # still linear: no event yet
    np.testing.assert_array_equal(rig.indicators(), [0.5, 3.5])
    assert rig.event(crossed=[1, 0])["y"] == 2.0  # the located crossing: upper mode
    rig.set(u=1.5)
    assert rig.out() == 2.0                       # frozen in upper mode
    rig.set(u=2.0)                                # exactly at the limit, crossed falling
    assert rig.event(crossed=[-1, 0])["y"] == 2.0  # linear again (y = u = 2)
    rig.set(u=1.0)
    assert rig.out() == 1.0


def test_saturation_errors():
    with pytest.raises(ParamError):
        Rig(Saturation, {"lower": 1, "upper": 0}, {"u": ()})
    with pytest.raises(ParamError):
        Rig(Saturation, {"lower": np.nan, "upper": 0}, {"u": ()})
    with pytest.raises(PortError) as e:
        Rig(Saturation, {"lower": [0, 0], "upper": 1}, {"u": (3,)})
    assert e.value.port == "u"
    with pytest.raises(PortError):  # limits of shape (2,) would turn a scalar into a vector
        Rig(Saturation, {"lower": [0, 0], "upper": 1}, {"u": ()})


def test_function_of_two_inputs_and_a_constant():
    rig = Rig(Function, {"expr": "K @ u + v", "inputs": ["u", "v"]}, {"u": (2,), "v": ()},
              names={"K": 2 * np.eye(2)})
    assert [p.name for p in rig.block.ports()[0]] == ["u", "v"]
    assert rig.out_shapes == {"y": (2,)}
    rig.set(u=[1, 2], v=3)
    np.testing.assert_array_equal(rig.out(), [5, 7])  # 2*[1, 2] + 3


def test_function_default_input_and_matrix_functions():
    rig = Rig(Function, {"expr": "inv(u)"}, {"u": (2, 2)})  # inv(0) fails: inferred otherwise
    assert rig.out_shapes == {"y": (2, 2)}
    rig.set(u=[[2, 0], [0, 4]])
    np.testing.assert_allclose(rig.out(), [[0.5, 0], [0, 0.25]])


def test_function_errors():
    with pytest.raises(ParamError) as e:
        Rig(Function, {"expr": "u +"}, {"u": ()})
    assert e.value.param == "expr"
    with pytest.raises(ParamError) as e:
        Rig(Function, {"expr": "__import__('os')"}, {"u": ()})
    assert e.value.param == "expr"
    with pytest.raises(ParamError) as e:
        Rig(Function, {"expr": "pi*2", "inputs": ["pi"]}, {"pi": ()})
    assert e.value.param == "inputs"
    with pytest.raises(PortError):
        Rig(Function, {"expr": "u @ v", "inputs": ["u", "v"]}, {"u": (2,), "v": (3,)})
