"""The transport delay: y(t) = u(t - delay), from a history of u kept from the solver's steps."""
import numpy as np

from blocksim.block import Block, In, Out
from blocksim.params import Param


class History:
    """u(t) for past t, from samples the simulator takes after every accepted step.

    Each step [t0, t0 + h] contributes u at t0 + h/3, t0 + 2h/3 and t0 + h (u at t0 is the
    previous sample): the cubic through those four points, read off the solver's dense
    output, is the step's piece of u, accurate to the dense output's order (not a straight
    line between accepted steps). Pieces are kept in Newton's forward-difference form in
    r = 3(t - t0)/h: u = f0 + r*d1 + r(r-1)/2*d2 + r(r-1)(r-2)/6*d3, well conditioned for any
    step size. The pieces fall into segments separated by breakpoints (times at which u jumps,
    at events): a lookup never mixes two segments, so a jump stays a jump.
    """

    GROW = 256

    def __init__(self, size):
        self.size = size
        self.clear()

    def clear(self):
        n = self.GROW
        self.t0 = np.zeros(n)
        self.h = np.zeros(n)
        self.end = np.zeros(n)  # t0 + h
        self.coef = np.zeros((n, 4, self.size))  # f0, d1, d2, d3
        self.count = 0  # pieces stored
        self.base = 0  # absolute index of piece 0 (older pieces were dropped)
        self.seg_first = []  # absolute index of each segment's first piece
        self.seg_start = []  # (time, value) where each segment starts
        self.last_t = None
        self.last_u = None
        self._pending = []  # samples of the step being added
        self._drop = 0  # pieces at the start that no lookup needs any more

    # ---- building ------------------------------------------------------------------------
    def start_segment(self, t, u):
        self.seg_first.append(self.base + self.count)
        self.seg_start.append((t, np.array(u, dtype=float).reshape(self.size)))
        self.last_t, self.last_u = t, self.seg_start[-1][1]
        self._pending = []

    def add_step_sample(self, t, u):
        """The samples of a step arrive in order: t0 + h/3, t0 + 2h/3, t0 + h."""
        self._pending.append(np.array(u, dtype=float).reshape(self.size))
        if len(self._pending) < 3:
            return
        f0, f1, f2, f3 = self.last_u, *self._pending
        d1 = f1 - f0
        d2 = f2 - 2 * f1 + f0
        d3 = f3 - 3 * f2 + 3 * f1 - f0
        if self.count == self.t0.size:
            self._grow()
        k = self.count
        self.t0[k], self.h[k], self.end[k] = self.last_t, t - self.last_t, t
        self.coef[k] = (f0, d1, d2, d3)
        self.count = k + 1
        self.last_t, self.last_u = t, f3
        self._pending = []

    def forget_before(self, t):
        """Lookups from now on are at times >= t: the pieces ending before t may go."""
        self._drop = int(np.searchsorted(self.end[:self.count], t))

    def _grow(self):
        """Room for more pieces: drop the ones no lookup needs any more when they are at least
        half of them, else double the arrays."""
        keep = self._drop
        if keep >= self.count // 2:
            for a in (self.t0, self.h, self.end, self.coef):
                a[:self.count - keep] = a[keep:self.count]
            self.count -= keep
            self.base += keep
            self._drop = 0
            return
        n = 2 * self.t0.size
        self.t0, self.h, self.end = (np.resize(a, n) for a in (self.t0, self.h, self.end))
        coef = np.zeros((n, 4, self.size))
        coef[:self.count] = self.coef[:self.count]
        self.coef = coef

    # ---- lookup --------------------------------------------------------------------------
    def value(self, s, tau, out):
        """u(tau) within segment s into `out` (flat, size): the piece holding tau, the first
        or last piece of the segment extrapolated when tau lies outside it."""
        first = max(self.seg_first[s] - self.base, 0)
        last = (self.seg_first[s + 1] - self.base if s + 1 < len(self.seg_first)
                else self.count) - 1
        if last < first:  # no step yet in this segment: its starting value
            out[:] = self.seg_start[s][1]
            return
        k = int(np.searchsorted(self.end[first:last + 1], tau)) + first
        k = min(k, last)
        r = 3.0 * (tau - self.t0[k]) / self.h[k]
        c = self.coef[k]
        # f0 + r*(d1 + (r-1)/2*(d2 + (r-2)/3*d3))
        np.multiply(c[3], (r - 2.0) / 3.0, out=out)
        out += c[2]
        out *= (r - 1.0) / 2.0
        out += c[1]
        out *= r
        out += c[0]


class TransportDelay(Block):
    """y(t) = u(t - delay) from t = start + delay on, x0 before: a pure time delay.

    The past of u comes from the solver's dense output: after every accepted step the
    simulator hands the block u at a third, two thirds and the end of the step, and the cubic
    through those and the step's start value reproduces u to the dense output's accuracy (not
    to a straight line between accepted steps). The breakpoints of u -- a jump at a source
    switch, a sample hit or a zero-crossing event -- reappear exactly `delay` later: the block
    announces each as a time event the solver lands on, and the output jumps there. The same
    holds for the jump from x0 to u(start) at start + delay.
    Input: u, any shape. Output: y, u's shape (x0, scalar or that shape), no direct
    feedthrough, so a loop through a transport delay is not algebraic. delay > 0 (s). Keep
    the solver's steps (max_step, or step for fixed-step solvers) at most `delay`: a step
    longer than the delay needs u beyond what is known and extrapolates the last piece.
    """

    type = "transport_delay"
    time_dependent = True
    keeps_history = True
    params = (
        Param("delay", "scalar", doc="the delay (s), > 0", positive=True),
        Param("x0", "value", 0.0, "output for t < start + delay"),
    )

    def ports(self):
        shape = self.p.x0.shape or None
        return [In("u", shape=shape)], [Out("y", shape=shape, feedthrough=())]

    def infer(self, shapes):
        self._shape = shapes["u"]
        return {"y": self._shape}

    def initial_shapes(self):
        return {"y": self.p.x0.shape}

    def discrete_state(self):
        return np.array([-1.0])  # the segment of the history the output reads; -1: x0

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        size = int(np.prod(self._shape, dtype=int))
        self._history = History(size)
        self._x0 = np.broadcast_to(self.p.x0, self._shape).reshape(size).copy()
        self._y = y[0].reshape(size, copy=False)

    def events(self, start, stop):
        first = start + self.p.delay
        return (first,) if first <= stop else ()

    def initialize(self, t):
        self._history.clear()

    def event(self, t):
        self.xd[0] += 1.0  # a delayed breakpoint (or the first one, at start + delay)

    def remember(self, t):
        """u at time t, after an accepted step (or at an event instant, after the event).
        Returns the times at which the solver must land: t + delay when u jumped at t."""
        h = self._history
        u = self.u[0].reshape(-1)
        if h.last_t is None:
            h.start_segment(t, u)
            return ()
        h.forget_before(t - self.p.delay)
        if t == h.last_t:  # the value after an event at t
            if np.array_equal(u, h.last_u):
                return ()
            h.start_segment(t, u)
            return (t + self.p.delay,)
        h.add_step_sample(t, u)
        return ()

    def output(self, t):
        s = int(self.xd[0])
        if s < 0:
            self._y[:] = self._x0
            return
        self._history.value(s, t - self.p.delay, self._y)

