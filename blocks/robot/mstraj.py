"""Multi-segment joint trajectory through via points, as ``mstraj`` of the Robotics Toolbox.

The motion follows straight lines in joint space from q0 through the via points p1 .. pm,
at constant velocity on each segment, and rounds every corner with a blend of duration
tacc centred on the instant the straight-line path would reach the via point (the path
approaches a via point, it does not pass through it, unless tacc = 0). It starts at rest at
q0 and ends at rest on the last via point, which it reaches exactly.

Timing. Segment k (from p_{k-1} to p_k, p_0 = q0, k = 1..m) lasts T_k: the given
``tsegment[k]``, or with joint speed limits ``qdmax`` the time the slowest joint needs at its
limit, T_k = max_j |p_kj - p_(k-1)j| / qdmax_j. The corner instants are c_0 = h_0 (the start
blend) and c_k = c_(k-1) + T_k, with h_k = tacc_k / 2, and the motion ends at c_m + h_m.
With qdmax a segment too short for the blends at its ends (T_k < h_(k-1) + h_k) is
lengthened to fit them; with tsegment that is an error.

Velocities: v_k = (p_k - p_(k-1)) / T_k on segment k, v_0 = v_(m+1) = 0 (rest). Blend k
runs over [c_k - h_k, c_k + h_k] (duration D = tacc_k) from the segment velocity v_k to
v_(k+1); with s the time into the blend and d = v_(k+1) - v_k:

    q  = q_s + v_k s + d (s^3 / D^2 - s^4 / (2 D^3))
    qd = v_k + d (3 (s/D)^2 - 2 (s/D)^3)          (a smooth step between v_k and v_(k+1))
    qdd = 6 d (s/D - (s/D)^2) / D                   (zero at both ends, peak 1.5 |d| / D)

This is the quintic release 7 of the toolbox fits through each interior blend (jtraj from
the line at c_k - h_k to the line at c_k + h_k with velocities v_k, v_(k+1)): it passes
3 tacc |d| / 32 from the via point at c_k. Each joint's velocity stays between its segment
velocities, so a joint never exceeds its qdmax. Unlike release 7 the start and end blends
are the same law (release 7 blends over tacc/2 there, which overshoots the segment
velocity by half) and a segment's time is not padded by tacc.
"""
from __future__ import annotations

import numpy as np

__all__ = ["mstraj", "ViaPointTrajectory", "ViaPointError"]

LONGEST_BLEND = np.finfo(float).max ** 0.25  # 1.16e77 s: a blend's q takes s^4 up to it


class ViaPointError(ValueError):
    """A bad argument of the multi-segment trajectory; ``param`` names it."""

    def __init__(self, param, message):
        super().__init__(message)
        self.param = param


def _via_points(via, q0):
    """(q0 (n,), via (m, n)) as float arrays; via (n,) is one via point."""
    q0 = np.atleast_1d(np.array(q0, dtype=float))
    if q0.ndim != 1:
        raise ViaPointError("q0", f"q0 must be a joint vector, got shape {q0.shape}")
    n = q0.size
    via = np.array(via, dtype=float)
    if via.ndim == 2 and via.shape[1] == n or via.ndim == 1 and n == 1:
        via = via.reshape(-1, n)
    elif via.ndim == 1 and via.size == n:
        via = via.reshape(1, n)
    else:
        raise ViaPointError("via", f"via must hold one row of {n} joint values per via point (m, {n}), "
                         f"got shape {via.shape}")
    if not len(via):
        raise ViaPointError("via", "via needs at least one via point")
    return q0, via


def _segment_times(d, h, qdmax, tsegment):
    """T (m,) of the segments d (m, n) with half blend times h (m + 1,) (module docstring)."""
    m, n = d.shape
    need = h[:-1] + h[1:]
    if (qdmax is None) == (tsegment is None):
        raise ViaPointError("qdmax", "give exactly one of qdmax (joint speed limits) and tsegment "
                         "(segment durations)")
    if qdmax is not None:
        limit = np.broadcast_to(np.asarray(qdmax, dtype=float), (n,)) if np.size(qdmax) in (1, n) \
            else None
        if limit is None or not (limit > 0).all():
            raise ViaPointError("qdmax", f"qdmax must be one speed > 0 or one per joint ({n}), got {qdmax!r}")
        with np.errstate(over="ignore"):  # a time beyond the largest number is refused later
            return np.maximum(np.max(np.abs(d) / limit, axis=1), need)
    T = np.broadcast_to(np.asarray(tsegment, dtype=float), (m,)) if np.size(tsegment) in (1, m) \
        else None
    if T is None or not (T > 0).all():
        raise ViaPointError("tsegment", f"tsegment must be one duration > 0 per segment ({m}), got {tsegment!r}")
    short = np.flatnonzero(T < need * (1 - 1e-12))
    if short.size:
        k = int(short[0])
        raise ViaPointError("tsegment", f"segment {k + 1} lasts {T[k]:g} s, shorter than the blends at its "
                         f"ends ({need[k]:g} s = half of tacc at each): lengthen it or "
                         f"shorten tacc")
    return T.astype(float)


class ViaPointTrajectory:
    """Evaluator of the multi-segment trajectory of the module docstring over [0, tf].

    q0 (n,) start; via (m, n) via points (the last is the end); tacc >= 0 one blend time or
    one per corner (m + 1: start, each via point, end); exactly one of qdmax (one or n joint
    speeds > 0) and tsegment (m durations, s). Attributes: ``tf`` (end of the motion),
    ``corners`` (m + 1,) the corner instants c_k, ``bounds`` (the instants where the law
    changes, strictly increasing, from 0 to tf), ``velocities`` (m, n) segment velocities.
    ``into(piece, t, out)`` writes [q; qd; qdd] (3n,) for t in piece ``piece`` =
    ``np.searchsorted(bounds, t, 'right')``; t before 0 holds q0, after tf the end point.
    """

    def __init__(self, q0, via, tacc=0.0, qdmax=None, tsegment=None):
        q0, via = _via_points(via, q0)
        m, n = via.shape
        points = np.vstack([q0, via])
        d = np.diff(points, axis=0)
        tacc = np.asarray(tacc, dtype=float)
        if tacc.size not in (1, m + 1) or not (tacc >= 0).all():
            raise ViaPointError("tacc", f"tacc must be one time >= 0 or one per corner (start, {m} via "
                             f"point(s): {m + 1}), got {tacc.tolist()!r}")
        if (tacc > LONGEST_BLEND).any():
            raise ViaPointError("tacc", f"tacc {tacc.max():g} s is longer than a blend can be "
                                f"({LONGEST_BLEND:.3g} s: its quartic in time, s^4, must stay "
                                "below the largest number)")
        h = np.broadcast_to(tacc.ravel(), (m + 1,)) / 2
        T = _segment_times(d, h, qdmax, tsegment)
        with np.errstate(over="ignore"):
            end = h[0] + T.sum() + h[-1]
        if not np.isfinite(T).all() or not np.isfinite(end):
            raise ViaPointError("tsegment" if tsegment is not None else "qdmax",
                                "the motion would last more than the largest number of "
                                "seconds: shorter segments" + (" or faster joints" if
                                                               tsegment is None else ""))
        v = np.zeros((m + 2, n))
        moving = T > 0
        v[1:-1][moving] = d[moving] / T[moving, None]
        self.velocities = v[1:-1].copy()
        self.corners = h[0] + np.concatenate([[0.0], np.cumsum(T)])
        self._n = n
        pieces = [(0.0, points[0], np.zeros(n), np.zeros(n), np.zeros(n))]  # before the start
        starts, t = [], 0.0
        for k in range(m + 1):
            D = 2 * h[k]
            jump = v[k + 1] - v[k]
            if D > 0:
                q_start = points[k] - h[k] * v[k]
                pieces.append((t, q_start, v[k], jump / D ** 2, -jump / (2 * D ** 3)))
                starts.append(t)
                t += D
            if k < m:
                line = T[k] - h[k] - h[k + 1]
                if line > 1e-12 * T[k]:
                    pieces.append((t, points[k] + h[k] * v[k + 1], v[k + 1], 0.0, 0.0))
                    starts.append(t)
                    t += line
        pieces.append((t, points[-1], np.zeros(n), 0.0, 0.0))  # after the end
        starts.append(t)
        self.tf = t
        self.bounds = np.array(starts)  # piece i + 1 starts at bounds[i]; bounds[0] = 0
        self._origins = np.array([p[0] for p in pieces])
        self._M = np.array([self._matrix(*p[1:]) for p in pieces])
        self._powers = np.ones(5)

    def _matrix(self, q, v, a3, a4):
        """[q; qd; qdd] (3n, 5) = M @ [1, s, s^2, s^3, s^4] of q + v s + a3 s^3 + a4 s^4."""
        n = self._n
        M = np.zeros((3 * n, 5))
        M[:n, 0], M[:n, 1], M[:n, 3], M[:n, 4] = q, v, a3, a4
        M[n:2 * n, 0], M[n:2 * n, 2], M[n:2 * n, 3] = v, 3 * np.asarray(a3), 4 * np.asarray(a4)
        M[2 * n:, 1], M[2 * n:, 2] = 6 * np.asarray(a3), 12 * np.asarray(a4)
        return M

    def piece(self, t):
        """The index of the piece in force at time t (the later one at a bound)."""
        return int(np.searchsorted(self.bounds, t, side="right"))

    def into(self, piece, t, out):
        """Write [q; qd; qdd] at time t of piece `piece` into out (3n,), no temporaries."""
        p = self._powers
        s = t - self._origins[piece]
        p[1] = s
        p[2] = s * s
        p[3] = p[2] * s
        p[4] = p[2] * p[2]
        np.matmul(self._M[piece], p, out=out)

    def at(self, t):
        """(q, qd, qdd) at time t, each (n,)."""
        out = np.empty(3 * self._n)
        self.into(self.piece(t), t, out)
        n = self._n
        return out[:n], out[n:2 * n], out[2 * n:]


def mstraj(via, qdmax, tsegment, q0, dt, tacc=0.0):
    """Sampled multi-segment trajectory: (q (k, n), t (k,)) at t = 0, dt, 2 dt, ... up to the
    first sample at or after the end of the motion; arguments in the order of the toolbox's
    ``mstraj(segments, qdmax, tsegment, q0, dt, tacc)`` (one of qdmax, tsegment is None).
    The law is ``ViaPointTrajectory``'s."""
    traj = ViaPointTrajectory(q0, via, tacc, qdmax, tsegment)
    if not dt > 0:
        raise ValueError(f"dt must be > 0, got {dt!r}")
    t = np.arange(int(np.ceil(traj.tf / dt - 1e-9)) + 1) * dt
    return np.array([traj.at(ti)[0] for ti in t]), t
