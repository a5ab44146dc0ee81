"""Rates of change of the inputs hybrid blocks watch (`Block.rates`): the derivative of an
input in time, for indicators whose zero is an extremum of the input (a backlash turning
back, a controller's integrator that must slide along a limit).

A signal is a function of time and of the state, u(t) = g(t, x(t)), and x(t) is known as a
smooth curve: inside a step the solver's dense output, and at an event instant the tangent
x + (s - t) f(t, x) with the modes after the event (whose derivative at t is the right
derivative of u). du/dt is the central difference of u along that curve, on seven points
t + k h (k = -3..3, sixth order, error h^6 u^(7)/140), with h a sixteenth of the step the
curve describes (at most of max_step or step): a turning point is located to well within
the event tolerance for inputs the solver resolves.
"""
from __future__ import annotations

import numpy as np

# the seven-point central difference, written on the differences d_k = u(t + kh) - u(t - kh)
# (exactly 0 for an input that does not move): u'(t) ~ (45 d_1 - 9 d_2 + d_3) / (60 h)
WEIGHTS = np.array([45.0, -9.0, 1.0]) / 60.0
SPAN_POINTS = 16  # h = span / 16: the stencil's outer points lie 3/16 of a span from t


class InputRates:
    """Writes du/dt of every watched input into the blocks' `du` buffers.

    pairs: (input view, du array) per watched input, du C-contiguous; outputs:
    callable(t, x) evaluating the continuous outputs at (t, x); longest: the longest span
    the spacing is taken from (max_step or step)."""

    def __init__(self, pairs, outputs, longest):
        self.pairs = tuple((view, du.reshape(-1)) for view, du in pairs)
        self.outputs = outputs
        self.longest = float(longest)
        self.samples = [np.zeros((2, len(WEIGHTS), view.size)) for view, _ in pairs]

    def along(self, t, curve, span):
        """du/dt at t along the state curve `curve(s)` (dense output, tangent), `span` the
        length of time it describes; leaves the outputs evaluated at (t, curve(t))."""
        h = min(span, self.longest) / SPAN_POINTS
        for side in (0, 1):
            for k in range(len(WEIGHTS)):
                s = t + (k + 1) * h if side == 0 else t - (k + 1) * h
                self.outputs(s, curve(s))
                for (view, _), sample in zip(self.pairs, self.samples):
                    sample[side, k] = view.reshape(-1)
        for (_, du), sample in zip(self.pairs, self.samples):
            np.subtract(sample[0], sample[1], out=sample[0])
            np.dot(WEIGHTS, sample[0], out=du)
            du /= h
        self.outputs(t, curve(t))

    def tangent(self, t, x, derivative, span):
        """du/dt at an event instant t from the state x (a copy is taken) and its derivative
        function f(t, x) under the current modes: the right derivative."""
        x = np.array(x, dtype=float)
        dx = np.array(derivative(t, x), dtype=float)
        self.along(t, lambda s: x + (s - t) * dx, span)
