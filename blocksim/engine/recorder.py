"""Recording signals into preallocated arrays that grow in chunks (never per-row concatenation)."""
from __future__ import annotations

import math

import numpy as np

from .solvers import FIXED_STEP


def planned_rows(s):
    """The rows a run with settings `s` records besides those of events: at most the output
    grid's (start + k * output_interval, then stop), else at least one per fixed step or
    max_step (times simulation.refine). Recordings grow to this count before they grow past
    it (`next_capacity`), and compile time's memory check counts it."""
    span = s.stop - s.start
    if s.output_interval:
        return math.floor(span / s.output_interval + 1e-9) + 2
    rows = math.floor(span / (s.step if s.solver in FIXED_STEP else s.max_step) + 1e-9) + 1
    return rows * max(int(s.refine), 1)


def next_capacity(capacity, planned):
    """The rows a full recording of `capacity` rows grows to: twice as many (or 256 at
    first), but no more than `planned` when that lies between, so that a run recording its
    planned rows holds no more than those (doubling past them held up to twice the results,
    which the memory check at compile time did not count). rt_loop.c's rows_add grows as
    this does."""
    grown = 2 * capacity if capacity else 256
    return planned if capacity < planned < grown else grown


class Recorder:
    """Copies a fixed set of signal views into row-per-time arrays.

    `channels` maps a name to a numpy view read at every `sample(t)`; `planned` is the count
    of rows expected (`planned_rows`). Capacity grows by `next_capacity`; `arrays()` returns
    trimmed copies. At most `MAX_PREALLOCATED` rows are allocated up front, whatever the
    planned count: a run that fails early costs little memory.
    """

    MAX_PREALLOCATED = 1 << 16

    def __init__(self, channels, planned=0):
        self.names = list(channels)
        self.views = [channels[n] for n in self.names]
        self.planned = planned
        capacity = min(max(planned, 2), self.MAX_PREALLOCATED)
        self.t = np.empty(capacity)
        self.data = [np.empty((capacity,) + v.shape) for v in self.views]
        self.n = 0

    def sample(self, t):
        if self.n == self.t.shape[0]:
            self._grow()
        k = self.n
        self.t[k] = t
        for buf, view in zip(self.data, self.views):
            buf[k] = view
        self.n = k + 1

    def _grow(self):
        cap = next_capacity(self.t.shape[0], self.planned)
        self.t = _resized(self.t, cap)
        self.data = [_resized(b, cap) for b in self.data]

    def arrays(self):
        """(t, {name: array}) trimmed to the recorded rows."""
        return self.t[:self.n].copy(), {n: b[:self.n].copy() for n, b in zip(self.names, self.data)}


def _resized(a, rows):
    out = np.empty((rows,) + a.shape[1:])
    out[:a.shape[0]] = a
    return out
