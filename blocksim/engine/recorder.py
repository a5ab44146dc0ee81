"""Recording signals into preallocated arrays that grow in chunks (never per-row concatenation)."""
from __future__ import annotations

import numpy as np


class Recorder:
    """Copies a fixed set of signal views into row-per-time arrays.

    `channels` maps a name to a numpy view read at every `sample(t)`. Capacity doubles when
    full; `arrays()` returns trimmed copies. At most `MAX_PREALLOCATED` rows are allocated
    up front, whatever the expected count: a run that fails early costs little memory.
    """

    MAX_PREALLOCATED = 1 << 16

    def __init__(self, channels, capacity=256):
        self.names = list(channels)
        self.views = [channels[n] for n in self.names]
        capacity = min(max(int(capacity), 2), self.MAX_PREALLOCATED)
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
        cap = 2 * self.t.shape[0]
        self.t = _resized(self.t, cap)
        self.data = [_resized(b, cap) for b in self.data]

    def arrays(self):
        """(t, {name: array}) trimmed to the recorded rows."""
        return self.t[:self.n].copy(), {n: b[:self.n].copy() for n, b in zip(self.names, self.data)}


def _resized(a, rows):
    out = np.empty((rows,) + a.shape[1:])
    out[:a.shape[0]] = a
    return out
