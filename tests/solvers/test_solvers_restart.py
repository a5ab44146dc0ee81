"""restart(): a right-hand side that jumps at an event, cumulative statistics, the step size
kept as a hint, frequent sample hits, and an empty state."""
import math
import subprocess
import sys

import numpy as np
import pytest
from stepping import Decay, run

from blocksim.engine.solvers import SOLVERS, make_stepper


class Switched:
    """y' = -y before the event at t_e, y' = 2 - y after (a mode the simulator switches at the
    event). y(0) = 1: y(t_e) = exp(-t_e), then y(t) = 2 + (exp(-t_e) - 2) exp(-(t - t_e))."""

    def __init__(self):
        self.mode = 0.0
        self.out = np.empty(1)

    def __call__(self, t, y):
        return np.subtract(2.0 * self.mode, y, self.out)

    @staticmethod
    def exact(t, t_e):
        return 2.0 + (math.exp(-t_e) - 2.0) * math.exp(-(t - t_e))


# Error allowed at t = 3: fixed step 0.01 (Euler's global error ~ h/2 max|t e^-t| ~ 2e-3,
# Heun's ~ h²/6, RK4's ~ h^4/120); adaptive solvers at rtol = atol = 1e-8.
TOLERANCE = {"euler": 5e-3, "rk2": 5e-5, "rk4": 1e-9, "bdf": 1e-6}


@pytest.mark.parametrize("t_event", [1.0, 1.005])
@pytest.mark.parametrize("name", SOLVERS)
def test_jump_at_an_event(name, t_event):
    """Integrate to the event, switch the right-hand side, restart and compare with the
    closed form. Dense output is asked for after every step, so derivative values cached for
    it (and the FSAL stage) exist at the event and must be discarded by restart."""
    fun = Switched()
    stepper = make_stepper(name, fun, 0.0, [1.0], t_event, rtol=1e-8, atol=1e-8, step=0.01)
    while stepper.t < t_event:
        stepper.step()
        stepper.dense(stepper.t)
    assert stepper.y[0] == pytest.approx(math.exp(-t_event), abs=TOLERANCE.get(name, 1e-7))
    steps, nfev = stepper.nsteps, stepper.nfev
    fun.mode = 1.0
    stepper.restart(t_event, stepper.y, 3.0)
    while stepper.t < 3.0:
        stepper.step()
        stepper.dense(stepper.t)
    assert stepper.t == 3.0
    assert abs(stepper.y[0] - Switched.exact(3.0, t_event)) < TOLERANCE.get(name, 1e-7)
    assert stepper.nsteps > steps and stepper.nfev > nfev


@pytest.mark.parametrize("name", ["rk23", "rk45", "dop853", "radau"])
def test_restart_keeps_the_step_size(name):
    """y' = -0.01 y at rtol 1e-6 takes steps of several time units; Hairer's initial estimate
    would start again at ~0.06 (h0 = 0.01 |y|/|f| = 1, h1 = (0.01/1e4)^(1/5) = 0.063). After a
    restart without any jump the first step is as long as the one before. (BDF and LSODA are
    multistep: a restart begins again at order 1, whose error estimate forces short steps.)"""
    def slow(t, y):
        return -0.01 * y
    stepper = make_stepper(name, slow, 0.0, [1.0], 1e4, rtol=1e-6, atol=1e-9)
    while stepper.t < 50.0:
        stepper.step()
    h_before = stepper.t - stepper.t_old
    assert h_before > 1.0
    stepper.restart(stepper.t, stepper.y, 1e4)
    stepper.step()
    assert stepper.t - stepper.t_old > 0.5 * h_before


def test_frequent_sample_hits_cost_one_step_each():
    """rk45 restarted every 0.01 (a 100 Hz sample hit) on y' = -y: one step per interval; the
    first costs Hairer's estimate (2 evaluations) and 6 stages, every later one f at the
    restart point plus 6 stages. The result still matches exp(-t)."""
    p = Decay()
    stepper = make_stepper("rk45", p, 0.0, p.y0, 0.01, rtol=1e-6, atol=1e-9)
    for k in range(1, 101):
        run(stepper)
        assert stepper.t == k * 0.01 or k == 100 and stepper.t == 1.0
        if k < 100:
            stepper.restart(stepper.t, stepper.y, (k + 1) * 0.01)
    assert stepper.nsteps == 100
    assert stepper.nfev == 2 + 6 + 99 * 7
    np.testing.assert_allclose(stepper.y, p.exact(stepper.t), rtol=1e-6)


@pytest.mark.parametrize("name", ["rk23", "rk45", "dop853", "radau"])
def test_a_sliver_interval_does_not_reset_the_step_size(name):
    """An event 1e-7 before a sample hit at 0.5 makes a 1e-7 step; the interval after the hit
    must not start from a step grown only tenfold from that sliver: [0.5, 1] takes as many
    steps as without the extra event."""
    def steps_after_half(events):
        p = Decay()
        stepper = make_stepper(name, p, 0.0, p.y0, events[0], rtol=1e-6, atol=1e-9)
        for start, stop in zip(events, events[1:] + [1.0]):
            run(stepper)
            stepper.restart(start, stepper.y, stop)
        before = stepper.nsteps
        run(stepper)
        return stepper.nsteps - before
    assert steps_after_half([0.5 - 1e-7, 0.5]) == steps_after_half([0.5])


@pytest.mark.parametrize("name", SOLVERS)
def test_empty_state(name):
    """A diagram without continuous states: steps still reach t_bound exactly, no step is
    longer than max_step (adaptive) or the grid step (fixed), and the adaptive ones end up
    taking max_step."""
    def nothing(t, y):
        return np.empty(0)
    stepper = make_stepper(name, nothing, 0.0, np.empty(0), 1.0, max_step=0.1, step=0.1)
    ts, ys = run(stepper)
    assert ts[-1] == 1.0 and ys.shape == (len(ts), 0)
    steps = np.diff(ts)
    assert steps.max() <= 0.1 * (1 + 1e-12)
    np.testing.assert_allclose(steps[-3:], 0.1, rtol=1e-12)
    assert stepper.dense(0.95).shape == (0,)
    stepper.restart(1.0, np.empty(0), 1.25)
    ts, _ = run(stepper)
    assert ts[-1] == 1.25


def test_own_methods_do_not_import_scipy():
    """Process start-up time: the explicit RK steppers never import scipy."""
    code = (
        "import sys, numpy as np\n"
        "import blocksim.engine.solvers as s\n"
        "before = 'scipy' in sys.modules\n"
        "for name in ('euler', 'rk2', 'rk4', 'rk23', 'rk45', 'dop853'):\n"
        "    st = s.make_stepper(name, lambda t, y: -y, 0.0, [1.0], 1.0, step=0.1)\n"
        "    st.step(); st.dense(st.t)\n"
        "print(before, 'scipy' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    if out[0] == "True":
        pytest.skip("importing blocksim itself already imports scipy")
    assert out == ["False", "False"]
