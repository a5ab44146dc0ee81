"""Events: the sample clock, zero-crossing tests and their location, and the Zeno guard.

Zero crossings: an indicator crosses rising when z_prev <= 0 < z, falling when
z_prev >= 0 > z (in its declared direction). After a step in which one crossed, `locate`
finds the earliest crossing on the solver's dense output to the event tolerance (Illinois
regula falsi, bracketed); the simulator cuts the step there.
"""
from __future__ import annotations

import math

import numpy as np

from ..block import exact_time
from ..errors import SimulationError


class SampleClock:
    """Discrete sample hits on exact fractions: hit j of a sample is offset + j*period."""

    def __init__(self, samples, start):
        self.next = {}
        for s in samples:
            p, o = exact_time(s.period), exact_time(s.offset)
            st = exact_time(start)
            j = 0 if st <= o else math.ceil((st - o) / p)
            self.next[s] = (o + j * p, j, p, o)

    def next_time(self):
        return min((v[0] for v in self.next.values()), default=None)

    def due(self, t):
        """Samples whose next hit is at float time t (exact fraction equality via float)."""
        return frozenset(s for s, v in self.next.items() if float(v[0]) == t)

    def advance(self, samples):
        for s in samples:
            _, j, p, o = self.next[s]
            self.next[s] = (o + (j + 1) * p, j + 1, p, o)


def crossings(z_prev, z, dirs):
    """int8 per indicator: +1 where it crossed rising (z_prev <= 0 < z), -1 falling
    (z_prev >= 0 > z), 0 elsewhere or against its direction (dirs: +1, -1, 0 = either)."""
    up = (z_prev <= 0.0) & (z > 0.0) & (dirs >= 0)
    down = (z_prev >= 0.0) & (z < 0.0) & (dirs <= 0)
    return up.astype(np.int8) - down.astype(np.int8)


def _crossed(z_prev, z, direction):
    """crossings() of one indicator, on floats: the root finder's test, 0.1 µs instead of the
    arrays' 5 to 20 µs."""
    return (direction >= 0 and z_prev <= 0.0 < z) or (direction <= 0 and z_prev >= 0.0 > z)


def locate(z_at, t_lo, z_lo, t_hi, z_hi, dirs, tolerance):
    """The earliest crossing in (t_lo, t_hi], whose end values z_hi crossed from z_lo:
    returns (t*, z*) with t* the right end of a bracket of width <= tolerance(t) around it,
    where the crossing indicators have their new sign. `z_at(t)` gives the indicators at t
    (a copy), modes frozen."""
    while True:
        idx = np.flatnonzero(crossings(z_lo, z_hi, dirs))
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = z_lo[idx] / (z_lo[idx] - z_hi[idx])
        i = idx[int(np.nanargmin(frac))] if np.isfinite(frac).any() else idx[0]
        a, b, za, zb = illinois(z_at, i, t_lo, t_hi, z_lo, z_hi, dirs, tolerance(t_hi))
        if a > t_lo and crossings(z_lo, za, dirs).any():
            t_hi, z_hi = a, za  # another indicator crossed before: look there
            continue
        return b, zb


def illinois(z_at, i, a, b, z_a, z_b, dirs, tol):
    """Shrink [a, b] around the crossing of indicator i (its old sign at a, new at b) to
    width tol; returns (a, b, z(a), z(b))."""
    z0, d = float(z_a[i]), int(dirs[i])
    fa, fb = z0, float(z_b[i])
    side = 0
    # an end last moved by a failed probe (below): its value says nothing about where the
    # root is, so the secant through it creeps; bisect until it moves again
    stale_a = stale_b = False
    for k in range(200):
        if b - a <= tol:
            break
        secant = fb != fa and k % 8 != 7 and not (stale_a or stale_b)
        c = b - fb * (b - a) / (fb - fa) if secant else 0.5 * (a + b)
        if not a <= c <= b or not math.isfinite(c):
            c = 0.5 * (a + b)
        # never closer than tol/2 to an end (as Brent's method): a root found almost
        # exactly, or an indicator starting at 0 and crossing at once, then closes the
        # bracket in one step. That probe fails for an indicator starting at 0 that turns
        # back first (a ball leaving the floor): the end it moves is stale.
        probe = not a + 0.5 * tol < c < b - 0.5 * tol
        c = min(max(c, a + 0.5 * tol), b - 0.5 * tol)
        zc = z_at(c)
        fc = float(zc[i])
        if _crossed(z0, fc, d):
            b, fb, z_b, stale_b = c, fc, zc, probe
            if side == -1:
                fa *= 0.5
            side = -1
        else:
            a, fa, z_a, stale_a = c, fc, zc, probe
            if side == 1:
                fb *= 0.5
            side = 1
    return a, b, z_a, z_b


MAX_ROUNDS = 100  # event iterations at one instant before giving up


def unsettled(names, t):
    """The error of an event iteration that did not settle at t (blocks `names`)."""
    return SimulationError(f"the event iteration did not settle after {MAX_ROUNDS} rounds "
                           f"(blocks {', '.join(names)} keep switching each other)", time=t)


class ZenoGuard:
    """A SimulationError after more than max_consecutive_events events each closer than
    10*event_tol to the one before (chattering, or a Zeno accumulation of events)."""

    def __init__(self, settings, hybrid, tolerance):
        self.limit = settings.max_consecutive_events
        self.hybrid, self.tolerance = hybrid, tolerance
        self.chain = 0  # consecutive events closer than 10 * event_tol
        self.blocks = set()  # the blocks (indices into hybrid) involved in them
        self.last = -math.inf

    def __call__(self, t, involved):
        if t - self.last < 10 * self.tolerance(t):
            self.chain += 1
            self.blocks |= involved
            if self.chain > self.limit:
                raise self.error(t)
        else:
            self.chain, self.blocks = 0, set(involved)
        self.last = t

    def error(self, t):
        """The error at t for the chain of events of `self.blocks`."""
        names = ", ".join(self.hybrid[k][0].name for k in sorted(self.blocks))
        return SimulationError(
            f"more than {self.limit} consecutive events closer together than "
            f"{10 * self.tolerance(t):.3g} s (chattering or a Zeno behaviour) in "
            f"block(s) {names}; simulation.max_consecutive_events sets the limit",
            block=self.hybrid[min(self.blocks)][0].name, time=t)
