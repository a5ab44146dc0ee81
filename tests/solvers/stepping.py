"""Test problems with closed-form solutions, and a driver that records every accepted step.

The right-hand sides return the same buffer on every call, as the engine's derivative
function does, so every test also checks that the steppers copy what they keep.
"""
import numpy as np

from blocksim.engine.solvers import make_stepper


class Decay:
    """y' = λ y with λ = (-1, -3), y(0) = (1, 0.5): y(t) = y(0) exp(λ t)."""
    lam = np.array([-1.0, -3.0])
    y0 = np.array([1.0, 0.5])

    def __init__(self):
        self.out = np.empty(2)

    def __call__(self, t, y):
        return np.multiply(self.lam, y, self.out)

    def exact(self, t, t0=0.0, y0=None):
        y0 = self.y0 if y0 is None else y0
        return y0 * np.exp(self.lam * (t - t0))


class Oscillator:
    """x'' = -ω² x with ω = 2, y = (x, x'), y(0) = (1, 0): y(t) = (cos ωt, -ω sin ωt)."""
    omega = 2.0
    y0 = np.array([1.0, 0.0])

    def __init__(self):
        self.out = np.empty(2)

    def __call__(self, t, y):
        self.out[0] = y[1]
        self.out[1] = -self.omega ** 2 * y[0]
        return self.out

    def exact(self, t, t0=0.0, y0=None):
        """The solution through y0 at t0: rotation of the phase plane by ω (t - t0)."""
        y0 = self.y0 if y0 is None else y0
        w, a = self.omega, self.omega * (t - t0)
        return np.array([y0[0] * np.cos(a) + y0[1] / w * np.sin(a),
                         -w * y0[0] * np.sin(a) + y0[1] * np.cos(a)])


PROBLEMS = {"decay": Decay, "oscillator": Oscillator}


def run(stepper):
    """Step to t_bound; the times and (copied) states of every accepted step, start included."""
    ts, ys = [stepper.t], [stepper.y.copy()]
    while stepper.t < stepper.t_bound:
        stepper.step()
        ts.append(stepper.t)
        ys.append(stepper.y.copy())
    return np.array(ts), np.array(ys)


def solve(name, problem, t_end, **options):
    """Integrate `problem` from 0 to t_end with solver `name`; returns (stepper, ts, ys)."""
    stepper = make_stepper(name, problem, 0.0, problem.y0, t_end, **options)
    ts, ys = run(stepper)
    return stepper, ts, ys
