"""The twist functions check their arguments' shapes: a ValueError naming the expected shape,
never numpy's IndexError or an answer built from part of a wrong-sized argument."""
import numpy as np
import pytest

from blocks.robot.twists import (Ad, ad, exp_rot, exp_twist, inverse, log_rot, log_twist, screw,
                                 translation, vee, wedge)


@pytest.mark.parametrize("fn, arg, expected", [
    (wedge, np.ones(5), r"\(\.\.\., 6\), got \(5,\)"),
    (wedge, np.ones(7), r"\(\.\.\., 6\), got \(7,\)"),
    (ad, np.ones(5), r"\(\.\.\., 6\), got \(5,\)"),
    (ad, np.ones(7), r"\(\.\.\., 6\), got \(7,\)"),
    (exp_twist, np.ones(5), r"must have shape \(6,\), got \(5,\)"),
    (exp_twist, np.ones(7), r"must have shape \(6,\), got \(7,\)"),
    (exp_twist, np.ones((2, 6)), r"must have shape \(6,\), got \(2, 6\)"),
    (exp_rot, np.ones(2), r"axis w must have shape \(3,\), got \(2,\)"),
    (exp_rot, np.ones(4), r"axis w must have shape \(3,\), got \(4,\)"),
    (translation, np.ones(2), r"\(3,\), got \(2,\)"),
    (vee, np.eye(3), r"\(\.\.\., 4, 4\), got \(3, 3\)"),
    (Ad, np.eye(3), r"\(\.\.\., 4, 4\), got \(3, 3\)"),
    (inverse, np.ones(4), r"\(\.\.\., 4, 4\), got \(4,\)"),
    (log_rot, np.eye(4), r"\(3, 3\), got \(4, 4\)"),
    (log_twist, np.eye(3), r"\(4, 4\), got \(3, 3\)"),
])
def test_wrong_shapes_are_value_errors_naming_the_shape(fn, arg, expected):
    with pytest.raises(ValueError, match=expected):
        fn(arg)


def test_scalars_and_stacks_are_checked_too():
    with pytest.raises(ValueError, match="theta must be a scalar"):
        exp_rot([0, 0, 1], [1.0, 2.0])
    with pytest.raises(ValueError, match="pitch h must be a scalar"):
        screw([0, 0, 1], [0, 0, 0], h=[1, 2])
    with pytest.raises(ValueError, match=r"the point q must have shape \(3,\)"):
        screw([0, 0, 1], [0, 0])
    # stacks of the right shape still work: wedge of 2 twists is 2 matrices, vee undoes it
    xi = np.arange(12.0).reshape(2, 6)
    np.testing.assert_array_equal(vee(wedge(xi)), xi)
    assert ad(xi).shape == (2, 6, 6)
