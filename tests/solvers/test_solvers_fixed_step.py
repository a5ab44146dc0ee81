"""Fixed-step methods: convergence order, Euler's exact recursion, the grid, lazy dense slope."""
import math

import numpy as np
import pytest
from stepping import PROBLEMS, Decay, run, solve

from blocksim.engine.solvers import make_stepper

ORDERS = {"euler": 1, "rk2": 2, "rk4": 4}
# step sizes giving errors well above round-off and well inside the asymptotic range
STEPS = {"euler": 0.01, "rk2": 0.02, "rk4": 0.05}


@pytest.mark.parametrize("problem", sorted(PROBLEMS))
@pytest.mark.parametrize("name", sorted(ORDERS))
def test_global_convergence_order(name, problem):
    """Global error at t = 2 against the closed form shrinks as h^p: p = log2(e(h)/e(h/2))."""
    errors = []
    for h in (STEPS[name], STEPS[name] / 2):
        p = PROBLEMS[problem]()
        stepper, ts, ys = solve(name, p, 2.0, step=h)
        assert ts[-1] == 2.0
        errors.append(np.abs(ys[-1] - p.exact(2.0)).max())
    measured = math.log2(errors[0] / errors[1])
    assert abs(measured - ORDERS[name]) < 0.15, (errors, measured)


def test_euler_is_exactly_the_recursion():
    """y_{k+1} = y_k + h f(t_k, y_k), bit for bit, with h = t_{k+1} - t_k on the grid k*step;
    for y' = λy that is y_k = (1 + hλ)^k y0 (the solution of the linear recurrence)."""
    p, step = Decay(), 0.1
    stepper, ts, ys = solve("euler", p, 3.0, step=step)
    np.testing.assert_array_equal(ts[:-1], np.arange(30) * step)
    y = p.y0.copy()
    for k in range(30):
        y = y + (ts[k + 1] - ts[k]) * (p.lam * y)
        np.testing.assert_array_equal(ys[k + 1], y)
    k = np.arange(31)[:, None]
    np.testing.assert_allclose(ys, (1 + step * p.lam) ** k * p.y0, rtol=1e-13)


def test_lands_exactly_on_t_bound_off_and_on_grid():
    """0.35 is between grid points: the last step is shortened. 0.7 != 7*0.1 in floating point
    (7*0.1 = 0.7000000000000001): the step lands on t_bound, not on the grid value."""
    for t_end, expected in ((0.35, [0.1, 0.2, 0.30000000000000004, 0.35]),
                            (0.7, [k * 0.1 for k in range(1, 7)] + [0.7])):
        stepper, ts, _ = solve("rk4", Decay(), t_end, step=0.1)
        assert ts[1:].tolist() == expected


def test_grid_stays_anchored_at_origin_after_an_off_grid_event():
    """Origin 0, step 0.1, start at 0.02: steps go to the grid points k*0.1 (computed by
    multiplication); an event at 0.25 shortens one step, and after the restart the next step
    goes to 0.3 = 3*0.1 again."""
    p = Decay()
    stepper = make_stepper("rk2", p, 0.02, p.y0, 0.25, step=0.1, origin=0.0)
    ts, ys = run(stepper)
    assert ts.tolist() == [0.02, 0.1, 0.2, 0.25]
    stepper.restart(0.25, ys[-1], 0.6)
    ts, _ = run(stepper)
    assert ts.tolist() == [0.25] + [k * 0.1 for k in range(3, 6)] + [0.6]
    assert stepper.origin == 0.0


def test_event_equal_to_a_grid_point_up_to_round_off_makes_no_sliver_step():
    """An event at 0.3 while the grid value is 3*0.1 = 0.30000000000000004: the step lands on
    0.3 and the next one goes to 4*0.1, not to 3*0.1 (a 5e-17 step)."""
    p = Decay()
    stepper = make_stepper("euler", p, 0.0, p.y0, 0.3, step=0.1)
    ts, ys = run(stepper)
    assert ts.tolist() == [0.0, 0.1, 0.2, 0.3]
    stepper.restart(0.3, ys[-1], 1.0)
    stepper.step()
    assert (stepper.t_old, stepper.t) == (0.3, 4 * 0.1)


def test_dense_slope_is_evaluated_lazily_and_reused():
    """Dense output needs f at the new point: it is evaluated only when asked for and then
    serves as the next step's first stage, so Euler with dense output after every step costs
    N + 1 evaluations and gives bit-identical steps."""
    p = Decay()
    plain, ts, ys = solve("euler", p, 1.0, step=0.1)
    assert plain.nfev == plain.nsteps == 10
    stepper = make_stepper("euler", p, 0.0, p.y0, 1.0, step=0.1)
    for k in range(10):
        stepper.step()
        stepper.dense(stepper.t - 0.05)
        np.testing.assert_array_equal(stepper.y, ys[k + 1])
    assert stepper.nfev == 11


def test_step_is_required():
    with pytest.raises(ValueError, match="step"):
        make_stepper("rk4", Decay(), 0.0, [1.0, 1.0], 1.0)
    with pytest.raises(ValueError, match="step"):
        make_stepper("euler", Decay(), 0.0, [1.0, 1.0], 1.0, step=0.0)


def test_rk4_is_the_classical_formula_summed_left_to_right():
    """k1..k4 of the classical RK4 (Kutta 1901) and y1 = y + (h/6 k1 + h/3 k2 + h/3 k3 +
    h/6 k4), written out here in scalar floats with the products added left to right,
    bit for bit: the order the compiled stepper repeats. A pendulum, so the stages differ."""
    class Pendulum:
        y0 = np.array([1.2, -0.4])

        def __call__(self, t, y):
            return np.array([y[1], -9.81 * math.sin(y[0]) - 0.3 * y[1] + math.cos(t)])
    f = Pendulum()
    stepper, ts, ys = solve("rk4", f, 1.0, step=0.05)
    assert len(ts) == 21
    y = [float(v) for v in f.y0]
    for k in range(len(ts) - 1):
        t, h = ts[k], ts[k + 1] - ts[k]
        k1 = f(t, np.array(y))
        k2 = f(t + 0.5 * h, np.array([y[i] + k1[i] * (h * 0.5) for i in range(2)]))
        k3 = f(t + 0.5 * h, np.array([y[i] + k2[i] * (h * 0.5) for i in range(2)]))
        k4 = f(t + 1.0 * h, np.array([y[i] + k3[i] * (h * 1.0) for i in range(2)]))
        y = [y[i] + (((k1[i] * (h * (1 / 6)) + k2[i] * (h * (1 / 3))) + k3[i] * (h * (1 / 3)))
                     + k4[i] * (h * (1 / 6))) for i in range(2)]
        np.testing.assert_array_equal(ys[k + 1], y)
