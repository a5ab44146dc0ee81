"""Adaptive methods: global error against closed forms, agreement with scipy's implementations
of the same published pairs, max_step, exact landing, failures."""
import numpy as np
import pytest
from stepping import PROBLEMS, Decay, run, solve

from blocksim.errors import SimulationError
from blocksim.engine.solvers import FIXED_STEP, SOLVERS, SolverError, make_stepper

ADAPTIVE = tuple(name for name in SOLVERS if name not in FIXED_STEP)
# Largest observed (global error / tol) on [0, 5] with margin. The oscillator's error grows
# with the number of periods; scipy's BDF is known to lose proportionality at tight tol.
ERROR_BOUND = {"rk23": 100, "rk45": 30, "dop853": 10, "radau": 5, "bdf": 700, "lsoda": 130}


def test_solver_names():
    assert SOLVERS == ("euler", "rk2", "rk4", "rk23", "rk45", "dop853", "radau", "bdf", "lsoda")
    assert FIXED_STEP == ("euler", "rk2", "rk4")
    with pytest.raises(ValueError, match="unknown solver"):
        make_stepper("ode45", Decay(), 0.0, [1.0, 1.0], 1.0)


@pytest.mark.parametrize("problem", sorted(PROBLEMS))
@pytest.mark.parametrize("name", ADAPTIVE)
def test_global_error_follows_the_tolerance(name, problem):
    """Max error over all steps on [0, 5] against the closed form, rtol = atol = tol: within
    a small multiple of tol, and shrinking with tol."""
    errors = []
    for tol in (1e-3, 1e-6, 1e-9):
        p = PROBLEMS[problem]()
        stepper, ts, ys = solve(name, p, 5.0, rtol=tol, atol=tol)
        err = max(np.abs(y - p.exact(t)).max() for t, y in zip(ts, ys))
        assert err < ERROR_BOUND[name] * tol, (tol, err)
        errors.append(err)
    assert errors[0] > 10 * errors[1] > 100 * errors[2]


def van_der_pol(t, y, mu=5.0):
    """x'' = mu (1 - x²) x' - x: fast transitions, so the controller rejects steps."""
    return np.array([y[1], mu * (1.0 - y[0] ** 2) * y[1] - y[0]])


@pytest.mark.parametrize("name,scipy_name,steps,rel", [("rk23", "RK23", 1500, 1e-9),
                                                       ("rk45", "RK45", 400, 1e-8),
                                                       ("dop853", "DOP853", 30, 1e-6)])
def test_same_steps_as_scipy(name, scipy_name, steps, rel):
    """scipy.integrate implements the same published pairs with the same controller (Hairer's
    initial step, safety 0.9, factors 0.2..10, no growth after a rejection): the accepted and
    rejected steps must be the same, the values equal up to round-off. DOP853's error
    estimate cancels heavily, so there round-off differences grow to ~1e-9 within 30 steps."""
    import scipy.integrate
    ours = make_stepper(name, van_der_pol, 0.0, [2.0, 0.0], 100.0, rtol=1e-6, atol=1e-9)
    theirs = getattr(scipy.integrate, scipy_name)(van_der_pol, 0.0, [2.0, 0.0], 100.0,
                                                  rtol=1e-6, atol=1e-9)
    for _ in range(steps):
        ours.step()
        theirs.step()
        assert ours.t == pytest.approx(theirs.t, rel=rel)
        np.testing.assert_allclose(ours.y, theirs.y, rtol=rel, atol=rel)
    assert ours.nfev == theirs.nfev
    assert ours.nrejected >= 3


@pytest.mark.parametrize("name", ADAPTIVE)
def test_max_step_and_exact_landing(name):
    """No step longer than max_step; the last step ends exactly on t_bound = 3*0.1
    (0.30000000000000004), not on a sum of step sizes."""
    stepper, ts, _ = solve(name, Decay(), 3 * 0.1, rtol=1e-3, atol=1e-6, max_step=0.02)
    assert np.diff(ts).max() <= 0.02 * (1 + 1e-12)
    assert ts[-1] == 3 * 0.1
    assert stepper.nsteps == len(ts) - 1
    with pytest.raises(RuntimeError, match="restart"):
        stepper.step()


def test_zero_derivative_grows_the_step_to_max_step():
    """y' = 0: the error estimate is 0, so the step grows by the maximum factor up to max_step."""
    stepper = make_stepper("rk45", lambda t, y: np.zeros(1), 0.0, [1.0], 10.0, max_step=0.5)
    ts, ys = run(stepper)
    np.testing.assert_allclose(np.diff(ts)[-6:-1], 0.5, rtol=1e-14)
    assert (ys == 1.0).all()


@pytest.mark.parametrize("name,scipy_name", [("rk23", "RK23"), ("rk45", "RK45"),
                                              ("dop853", "DOP853")])
def test_a_start_far_from_zero_takes_the_steps_scipy_takes(name, scipy_name):
    """y' = 0 from t = 1e10: the first step Hairer's rule gives, 1e-6, is below the round-off
    limit there (10 spacings of floats, 1.9e-5), and the run failed before trying it (exit
    3 at the start: issue 35 item 5's late transport delays). scipy starts each step at that
    limit at least; only rejections take it below: the same steps as scipy's, to the end."""
    import scipy.integrate
    t0, t1 = 1e10, 1e10 + 1
    ours = make_stepper(name, lambda t, y: np.zeros(1), t0, [1.0], t1, max_step=0.25)
    theirs = getattr(scipy.integrate, scipy_name)(lambda t, y: np.zeros(1), t0, [1.0], t1,
                                                  max_step=0.25)
    ts = []
    while theirs.status == "running":
        ours.step()
        theirs.step()
        assert ours.t == theirs.t
        ts.append(ours.t)
    assert ts[0] - t0 == 10 * np.spacing(t0) and ts[-1] == t1 and ours.y == [1.0]


def blow_up(t, y):
    """y' = y², y(0) = 1: y = 1/(1 - t), infinite at t = 1."""
    return y * y


@pytest.mark.parametrize("name", SOLVERS)
def test_blow_up_raises_solver_error(name):
    """Integrating y' = y² past its blow-up at t = 1 must fail with SolverError near t = 1
    (explicit fixed-step methods lag behind the blow-up, so allow up to t = 2)."""
    stepper = make_stepper(name, blow_up, 0.0, [1.0], 2.0, rtol=1e-6, atol=1e-9, step=0.01)
    with np.errstate(all="ignore"), pytest.raises(SolverError) as info:
        run(stepper)
    assert isinstance(info.value, SimulationError)
    assert name in str(info.value)
    lower = 0.99 if name in FIXED_STEP else 0.999
    assert lower < info.value.time <= 2.0


@pytest.mark.parametrize("name", ("rk23", "rk45", "dop853"))
def test_non_finite_derivative_is_reported(name):
    """A derivative that turns NaN at t > 0.5 cannot be fixed by smaller steps."""
    def fun(t, y):
        return -y if t <= 0.5 else np.full_like(y, np.nan)
    stepper = make_stepper(name, fun, 0.0, [1.0], 2.0)
    with pytest.raises(SolverError, match="not finite") as info:
        run(stepper)
    assert info.value.time == pytest.approx(0.5, abs=1e-9)


def test_tolerances_are_validated():
    for bad in (dict(rtol=0.0), dict(atol=-1.0), dict(max_step=0.0)):
        with pytest.raises(ValueError):
            make_stepper("rk45", Decay(), 0.0, [1.0, 1.0], 1.0, **bad)
    with pytest.raises(ValueError, match="forward"):
        make_stepper("rk45", Decay(), 1.0, [1.0, 1.0], 0.0)
