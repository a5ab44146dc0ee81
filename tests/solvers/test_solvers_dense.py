"""Dense output: local order of the interpolant, agreement with the step end points, and
accuracy between steps of a whole run."""
import math

import numpy as np
import pytest
from stepping import Oscillator, run

from blocksim.engine.solvers import FIXED_STEP, SOLVERS, make_stepper

# Local error order of the interpolant after one step from the exact value, at interior θ:
# cubic Hermite through end points with local error O(h^(p+1)) gives O(h^min(p+1, 4))
# (Euler 2, Heun 3, RK4 4, Bogacki–Shampine 4); Dormand–Prince's continuous extension is
# fourth order (5); DOP853's is seventh order (8); Radau IIA's collocation cubic gives 4.
LOCAL_ORDER = {"euler": 2, "rk2": 3, "rk4": 4, "rk23": 4, "rk45": 5, "dop853": 8, "radau": 4}
# Step pairs in the asymptotic range, and small enough that the first adaptive step (Hairer's
# estimate, at most 0.125 here) is the whole interval.
STEPS = {"rk23": 0.1, "rk45": 0.1, "dop853": 0.12, "radau": 0.1}


def one_step_dense_error(name, h):
    """Max error of the dense output at θ = 0.3, 0.7 of a single step of size h from the exact
    initial value of the oscillator (huge tolerances: the step is accepted as it is)."""
    p = Oscillator()
    stepper = make_stepper(name, p, 0.0, p.y0, h, rtol=1e3, atol=1e3, step=h)
    stepper.step()
    assert (stepper.t_old, stepper.t, stepper.nsteps) == (0.0, h, 1)
    return max(np.abs(stepper.dense(x * h) - p.exact(x * h)).max() for x in (0.3, 0.7))


@pytest.mark.parametrize("name", sorted(LOCAL_ORDER))
def test_local_order_of_the_interpolant(name):
    h = STEPS.get(name, 0.05)
    coarse, fine = one_step_dense_error(name, h), one_step_dense_error(name, h / 2)
    measured = math.log2(coarse / fine)
    assert abs(measured - LOCAL_ORDER[name]) < 0.2, (coarse, fine, measured)


@pytest.mark.parametrize("name", SOLVERS)
def test_dense_matches_the_step_end_points(name):
    p = Oscillator()
    stepper = make_stepper(name, p, 0.0, p.y0, 1.0, step=0.1)
    for _ in range(3):
        y_old = stepper.y.copy()
        stepper.step()
        np.testing.assert_allclose(stepper.dense(stepper.t_old), y_old, rtol=1e-14,
                                   atol=1e-14)
        np.testing.assert_allclose(stepper.dense(stepper.t), stepper.y, rtol=1e-14,
                                   atol=1e-14)


@pytest.mark.parametrize("name", [s for s in SOLVERS if s not in FIXED_STEP])
def test_dense_between_steps_is_as_accurate_as_the_steps(name):
    """Oscillator on [0, 3] at rtol = atol = 1e-8: the interpolant at three interior points
    of every step is within a small multiple of the error at the steps themselves, or within
    the tolerance (Radau's cubic interpolant is far less accurate than its fifth-order steps;
    DOP853's seventh-order one three times less than its eighth-order steps)."""
    p = Oscillator()
    stepper = make_stepper(name, p, 0.0, p.y0, 3.0, rtol=1e-8, atol=1e-8)
    at_steps = between = 0.0
    while stepper.t < 3.0:
        stepper.step()
        at_steps = max(at_steps, np.abs(stepper.y - p.exact(stepper.t)).max())
        for x in (0.25, 0.5, 0.75):
            t = stepper.t_old + x * (stepper.t - stepper.t_old)
            between = max(between, np.abs(stepper.dense(t) - p.exact(t)).max())
    assert between < 5 * at_steps + 1e-8, (between, at_steps)


def test_dense_needs_a_step_since_the_restart():
    p = Oscillator()
    for name in ("rk4", "rk45", "bdf"):
        stepper = make_stepper(name, p, 0.0, p.y0, 1.0, step=0.1)
        with pytest.raises(RuntimeError, match="dense"):
            stepper.dense(0.0)
        ts, ys = run(stepper)
        stepper.restart(1.0, ys[-1], 2.0)
        with pytest.raises(RuntimeError, match="dense"):
            stepper.dense(1.0)
