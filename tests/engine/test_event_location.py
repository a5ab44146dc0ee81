"""The root finder that locates zero crossings (events.illinois), on indicators given in
closed form: the located bracket holds the true root and is no wider than the tolerance, and
an indicator that starts exactly at 0 (a ball leaving the floor) is not crept along.

Evaluation counts are deterministic (no timing): bisection alone from a 0.25 s bracket to
1e-10 needs log2(0.25/1e-10) = 32 evaluations; the secant methods need far fewer.
"""
import math

import numpy as np
import pytest

from blocksim.engine.events import illinois

G = 9.81
TOL = 1e-10


class Indicator:
    """One indicator z(t) in closed form and its direction; counts the evaluations."""

    def __init__(self, z, direction):
        self.z_of, self.zdirs, self.calls = z, np.array([direction], dtype=np.int8), 0

    def z_at(self, t):
        self.calls += 1
        return np.array([self.z_of(t)])

    def locate(self, a, b):
        lo, hi, _, _ = illinois(self.z_at, 0, a, b, np.array([self.z_of(a)]),
                                np.array([self.z_of(b)]), self.zdirs, TOL)
        return lo, hi


@pytest.mark.parametrize("v0, step", [(3.0, 1.0), (1.0, 0.25), (0.5, 0.25), (0.2, 0.25),
                                      (0.05, 0.25)])
def test_ball_leaving_the_floor_lands_at_2v0_over_g(v0, step):
    """Height after a bounce at t = 0 with upward speed v0: z = v0 t - g t^2/2, exactly 0 at
    the start (the old sign of a falling crossing), positive in flight, 0 again at t = 2 v0/g.
    The first probe (tol/2 after the start) stays on the old side; the secant through that
    point would then advance in tiny steps (18 to 41 evaluations before the fix)."""
    landing = 2 * v0 / G
    ind = Indicator(lambda t: v0 * t - 0.5 * G * t * t, -1)
    lo, hi = ind.locate(0.0, step)
    assert lo <= landing <= hi and hi - lo <= TOL
    assert ind.calls <= 16


def test_indicator_crossing_at_once_closes_in_one_evaluation():
    """z = -t starts at 0 and is negative at once: the probe tol/2 after the start closes the
    bracket."""
    ind = Indicator(lambda t: -t, -1)
    lo, hi = ind.locate(0.0, 1.0)
    assert lo == 0.0 and hi - lo <= TOL and ind.calls == 1


@pytest.mark.parametrize("direction", [-1, 0])
def test_smooth_root_is_bracketed(direction):
    """cos t - 1/2 falls through 0 at t = pi/3."""
    ind = Indicator(lambda t: math.cos(t) - 0.5, direction)
    lo, hi = ind.locate(0.0, 2.0)
    assert lo <= math.pi / 3 <= hi and hi - lo <= TOL
    assert ind.calls <= 12
