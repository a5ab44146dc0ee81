"""Signal routing: mux, demux, selector, reshape (values derived by hand)."""
import numpy as np
import pytest
from harness import Rig

from blocksim.block import PortError
from blocksim.params import ParamError
from blocks.signals import Demux, Mux, Reshape, Selector


def test_mux_default_two_inputs():
    rig = Rig(Mux, {}, {"u1": (2,), "u2": ()})
    assert rig.out_shapes == {"y": (3,)}
    np.testing.assert_array_equal(rig.set(u1=[1, 2], u2=3).out(), [1, 2, 3])


def test_mux_flattens_row_major():
    rig = Rig(Mux, {"inputs": 3}, {"u1": (2, 2), "u2": (), "u3": (1,)})
    rig.set(u1=[[1, 2], [3, 4]], u2=5, u3=[6])
    np.testing.assert_array_equal(rig.out(), [1, 2, 3, 4, 5, 6])


def test_mux_needs_an_input():
    with pytest.raises(ParamError):
        Rig(Mux, {"inputs": 0})


def test_demux_splits():
    rig = Rig(Demux, {"sizes": [2, 1]}, {"u": (3,)}).set(u=[7, 8, 9])
    assert rig.out_shapes == {"y1": (2,), "y2": (1,)}
    out = rig.outputs()
    np.testing.assert_array_equal(out["y1"], [7, 8])
    np.testing.assert_array_equal(out["y2"], [9])


def test_demux_of_a_matrix_is_row_major():
    rig = Rig(Demux, {"sizes": [3, 1]}, {"u": (2, 2)}).set(u=[[1, 2], [3, 4]])
    out = rig.outputs()
    np.testing.assert_array_equal(out["y1"], [1, 2, 3])
    np.testing.assert_array_equal(out["y2"], [4])


@pytest.mark.parametrize("sizes", [[2, 0], [-1], [1.5, 1.5], []])
def test_demux_bad_sizes(sizes):
    with pytest.raises(ParamError) as e:
        Rig(Demux, {"sizes": sizes}, {"u": (3,)})
    assert e.value.param == "sizes"


def test_demux_sizes_must_add_up():
    with pytest.raises(PortError) as e:
        Rig(Demux, {"sizes": [2, 2]}, {"u": (3,)})
    assert e.value.port == "u"


def test_selector_list_scalar_and_negative_indices():
    rig = Rig(Selector, {"indices": [2, 0]}, {"u": (3,)}).set(u=[10, 20, 30])
    np.testing.assert_array_equal(rig.out(), [30, 10])
    rig = Rig(Selector, {"indices": -1}, {"u": (3,)}).set(u=[10, 20, 30])
    assert rig.out_shapes == {"y": ()}
    assert rig.out() == 30


def test_selector_rows_of_a_matrix():
    rig = Rig(Selector, {"indices": [1]}, {"u": (3, 2)}).set(u=[[1, 2], [3, 4], [5, 6]])
    assert rig.out_shapes == {"y": (1, 2)}
    np.testing.assert_array_equal(rig.out(), [[3, 4]])


def test_selector_errors():
    for indices in (3, [0, -4]):  # valid indices for length 3 are -3..2
        with pytest.raises(PortError):
            Rig(Selector, {"indices": indices}, {"u": (3,)})
    with pytest.raises(PortError):
        Rig(Selector, {"indices": 0}, {"u": ()})
    with pytest.raises(ParamError):
        Rig(Selector, {"indices": 0.5}, {"u": (3,)})


def test_reshape_c_and_f_order():
    u = np.arange(6.0)
    rig = Rig(Reshape, {"shape": [2, 3]}, {"u": (6,)}).set(u=u)
    np.testing.assert_array_equal(rig.out(), [[0, 1, 2], [3, 4, 5]])
    rig = Rig(Reshape, {"shape": [2, 3], "order": "F"}, {"u": (6,)}).set(u=u)
    np.testing.assert_array_equal(rig.out(), [[0, 2, 4], [1, 3, 5]])  # MATLAB reshape(0:5, 2, 3)


def test_reshape_matrix_column_major():
    # (2, 3) read by columns: 0 3 1 4 2 5, written by columns into (3, 2).
    rig = Rig(Reshape, {"shape": [3, 2], "order": "F"}, {"u": (2, 3)})
    rig.set(u=[[0, 1, 2], [3, 4, 5]])
    np.testing.assert_array_equal(rig.out(), [[0, 4], [3, 2], [1, 5]])


def test_reshape_inferred_dimension_and_scalar():
    assert Rig(Reshape, {"shape": [-1, 2]}, {"u": (6,)}).out_shapes == {"y": (3, 2)}
    rig = Rig(Reshape, {"shape": []}, {"u": (1,)}).set(u=[4])
    assert rig.out_shapes == {"y": ()}
    assert rig.out() == 4


def test_reshape_errors():
    with pytest.raises(PortError):
        Rig(Reshape, {"shape": [4, 2]}, {"u": (6,)})
    for shape in ([0, 6], [-1, -1], [2.5]):
        with pytest.raises(ParamError):
            Rig(Reshape, {"shape": shape}, {"u": (6,)})
