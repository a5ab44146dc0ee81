"""Where to sample a step for the blocks that keep a history of their input (transport delay).

A history block rebuilds its input between samples as the polynomial of degree k through
k + 1 equally spaced samples, k the degree of the solver's dense output on the step: for an
input that is a linear function of the state that reproduces the dense output exactly. An
input that also depends on time by itself (a source: a chirp, a sine) is not a polynomial of
that degree, and over the long steps a source-driven diagram takes (no state steers them)
the piece could be far from it (1.9e-3 for a chirp through 0.2 s steps). So each piece is
checked at the midpoints between its samples against the input itself, and halved until it
reproduces them to a quarter of the solver's tolerance: the history is then accurate to the
tolerance whatever drives the input, and the solver's steps do not change.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

MAX_HALVINGS = 12  # a piece is at least 1/4096 of its step (the input may have a kink)
FLOOR = 1e-13  # relative rounding noise no tolerance asks to go below
# the share of the tolerance asked at the midpoints: between them, near a piece's ends, the
# error of an equally spaced interpolant grows to a few times its midpoint value
MARGIN = 0.25


def sample_times(value_at, t0, t1, k, rtol, atol):
    """[(t, last)] in (t0, t1]: the times at which to sample the step [t0, t1], in order, k
    per piece, `last` marking each piece's end (t1 ends the last one). value_at(t) -> the
    inputs at t, a flat array."""
    rtol, atol = MARGIN * max(rtol, FLOOR), MARGIN * atol
    times = []
    start = np.array([value_at(t0 + j * (t1 - t0) / k) for j in range(k + 1)])
    pending = [(t0, t1, start, 0)]
    while pending:  # depth first, left half first: the pieces come out in time order
        a, b, values, depth = pending.pop()
        h = (b - a) / k
        mids = np.array([value_at(a + (j + 0.5) * h) for j in range(k)])
        guess = midpoint_weights(k) @ values
        if depth == MAX_HALVINGS or np.all(np.abs(guess - mids)
                                           <= rtol * np.abs(mids) + atol):
            times += [(a + j * h if j < k else b, j == k) for j in range(1, k + 1)]
            continue
        both = np.empty((2 * k + 1,) + values.shape[1:])
        both[0::2], both[1::2] = values, mids
        middle = 0.5 * (a + b)  # sample k of the 2k + 1 (both ends' and the midpoints')
        pending.append((middle, b, both[k:], depth + 1))
        pending.append((a, middle, both[:k + 1], depth + 1))
    return times


@lru_cache(maxsize=None)
def midpoint_weights(k):
    """(k, k+1): row j gives the value at node j + 1/2 of the polynomial through the values
    at nodes 0..k (Lagrange's formula on equally spaced nodes)."""
    nodes = np.arange(k + 1, dtype=float)
    weights = np.ones((k, k + 1))
    for j in range(k):
        x = j + 0.5
        for i in range(k + 1):
            others = np.delete(nodes, i)
            weights[j, i] = math.prod((x - o) / (nodes[i] - o) for o in others)
    return weights
