"""Joint-space and Cartesian trajectories (release-7 ``jtraj``, ``ctraj``, ``trinterp``).

The joint-space law is the quintic through given positions and velocities with zero
accelerations at both ends. In normalised time tau = t / T in [0, 1], with the boundary
velocities expressed per unit tau (w0 = qd0 T, w1 = qdf T) and D = qf - q0:

    q(tau) = A tau^5 + B tau^4 + C tau^3 + w0 tau + q0
    A = 6 D - 3 (w0 + w1),  B = -15 D + 8 w0 + 7 w1,  C = 10 D - 6 w0 - 4 w1

so that q(0) = q0, q(1) = qf, dq/dtau = w0, w1 and d2q/dtau2 = 0 at both ends; the time
derivatives are dq/dt = (dq/dtau) / T and d2q/dt2 = (d2q/dtau2) / T^2.
(Seed 000's jtraj page says "7th order"; six boundary conditions fix a quintic, which is
what release 7 computes.)

``QuinticTrajectory`` and ``CartesianTrajectory`` are evaluators for the diagram blocks:
coefficients are computed once and ``at(t)`` does no validation.
"""
from __future__ import annotations

import math

import numpy as np

from .quaternion import Quaternion, arc_sign, quat_from_rot, quat_to_rot, slerp
from .transforms import skew

__all__ = ["jtraj", "ctraj", "trinterp", "QuinticTrajectory", "CartesianTrajectory"]


def _quintic_coeffs(q0, qf, w0, w1):
    """(A, B, C) of the normalised quintic above; w0, w1 are velocities per unit tau."""
    D = qf - q0
    return 6 * D - 3 * (w0 + w1), -15 * D + 8 * w0 + 7 * w1, 10 * D - 6 * w0 - 4 * w1


def _joint_vector(q, name):
    q = np.atleast_1d(np.array(q, dtype=float))
    if q.ndim != 1:
        raise ValueError(f"{name} must be a vector of joint values, got shape {q.shape}")
    return q


def jtraj(q0, qf, t_or_n, qd0=None, qdf=None):
    """Quintic joint trajectory from q0 to qf: (q, qd, qdd), each (m, n).

    t_or_n an integer m >= 2: m points equally spaced in normalised time, T = 1, so qd0, qdf,
    qd and qdd are per unit of normalised time (release 7, seed 000 jtraj).
    t_or_n a time vector (m,) in seconds, 0 <= t <= max(t): T = max(t), the polynomial is
    evaluated at t / T and qd0, qdf, qd, qdd are per second and per second^2.
    qd0, qdf: boundary velocities (n,), default zero; boundary accelerations are zero.
    """
    q0 = _joint_vector(q0, "q0")
    qf = _joint_vector(qf, "qf")
    if q0.shape != qf.shape:
        raise ValueError(f"q0 {q0.shape} and qf {qf.shape} differ in length")
    if np.ndim(t_or_n) == 0:
        m = int(t_or_n)
        if m != t_or_n or m < 2:
            raise ValueError(f"jtraj needs an integer number of points >= 2, got {t_or_n!r}")
        T = 1.0
        tau = np.linspace(0.0, 1.0, m)
    else:
        t = np.asarray(t_or_n, dtype=float)
        if t.ndim != 1 or t.size < 2 or t.min() < 0.0 or t.max() <= 0.0:
            raise ValueError("jtraj needs a time vector of >= 2 values in [0, tf] with tf > 0")
        T = float(t.max())
        tau = t / T
    qd0 = np.zeros_like(q0) if qd0 is None else _joint_vector(qd0, "qd0") * np.ones_like(q0)
    qdf = np.zeros_like(q0) if qdf is None else _joint_vector(qdf, "qdf") * np.ones_like(q0)
    w0 = qd0 * T
    A, B, C = _quintic_coeffs(q0, qf, w0, qdf * T)
    tau = tau[:, None]
    tau2 = tau * tau
    q = q0 + tau * (w0 + tau2 * (C + tau * (B + tau * A)))
    qd = (w0 + tau2 * (3 * C + tau * (4 * B + tau * 5 * A))) / T
    qdd = tau * (6 * C + tau * (12 * B + tau * 20 * A)) / (T * T)
    return q, qd, qdd


def trinterp(T0, T1, r):
    """Interpolate transforms: translation p0 + r (p1 - p0), rotation by quaternion slerp
    along the shorter arc (a half turn: the arc ``quaternion.arc_sign`` chooses).

    r = 0 gives T0, r = 1 gives T1 (seed 000, trinterp). r scalar -> (4, 4); (m,) -> (m, 4, 4).
    """
    T0 = np.asarray(T0, dtype=float)
    T1 = np.asarray(T1, dtype=float)
    if T0.shape != (4, 4) or T1.shape != (4, 4):
        raise ValueError("trinterp needs two 4x4 homogeneous transforms")
    r = np.asarray(r, dtype=float)
    d = slerp(quat_from_rot(T0[:3, :3]), quat_from_rot(T1[:3, :3]), r)
    T = np.zeros(r.shape + (4, 4))
    T[..., :3, :3] = quat_to_rot(d)
    T[..., :3, 3] = T0[:3, 3] + r[..., None] * (T1[:3, 3] - T0[:3, 3])
    T[..., 3, 3] = 1.0
    return T


def ctraj(T0, T1, n_or_s):
    """Cartesian straight-line trajectory from T0 to T1: (m, 4, 4) = trinterp(T0, T1, s).

    n_or_s an integer m >= 2: s follows the quintic time law s = 10 tau^3 - 15 tau^4 + 6 tau^5
    at m equally spaced tau in [0, 1] (rest to rest, zero acceleration at both ends; release 7
    spaced s itself evenly, its manual suggests building s with jtraj as done here).
    n_or_s an array (m,): the path fractions s in [0, 1] are used as given (release 7).
    """
    if np.ndim(n_or_s) == 0:
        s = jtraj(0.0, 1.0, n_or_s)[0][:, 0]
    else:
        s = np.asarray(n_or_s, dtype=float)
    return trinterp(T0, T1, s)


class QuinticTrajectory:
    """Evaluator of the quintic from q0 to qf over [0, tf] seconds, as ``jtraj`` with a time vector.

    ``at(t)`` returns (q, qd, qdd), each (n,): the exact polynomial for 0 <= t <= tf, q0 with
    zero rates for t < 0 and qf with zero rates for t > tf. q0, qf (n,) or scalars; qd0, qdf
    boundary velocities per second; tf > 0 seconds. Returned hold values are read-only arrays.
    """

    def __init__(self, q0, qf, tf, qd0=0.0, qdf=0.0):
        q0 = _joint_vector(q0, "q0")
        qf = _joint_vector(qf, "qf") * np.ones_like(q0)
        tf = float(tf)
        if not tf > 0.0:
            raise ValueError(f"trajectory duration tf must be > 0, got {tf}")
        self.tf = tf
        w0 = _joint_vector(qd0, "qd0") * np.ones_like(q0) * tf
        A, B, C = _quintic_coeffs(q0, qf, w0, _joint_vector(qdf, "qdf") * np.ones_like(q0) * tf)
        self._inv_tf = 1.0 / tf
        self._n = q0.size
        # [q; qd; qdd] = M @ [1, tau, tau^2, tau^3, tau^4, tau^5], rates per second
        zero = np.zeros_like(q0)
        self._M = np.vstack([
            np.column_stack([q0, w0, zero, C, B, A]),
            np.column_stack([w0, zero, 3 * C, 4 * B, 5 * A, zero]) / tf,
            np.column_stack([zero, 6 * C, 12 * B, 20 * A, zero, zero]) / tf ** 2,
        ])
        for a in (q0, qf, zero):
            a.flags.writeable = False
        self._before = (q0, zero, zero)
        self._after = (qf, zero, zero)
        self._powers = np.ones(6)
        self._held = {False: np.concatenate(self._before), True: np.concatenate(self._after)}

    def at(self, t):
        """(q, qd, qdd) at time t (seconds)."""
        if t < 0.0:
            return self._before
        if t > self.tf:
            return self._after
        tau = t * self._inv_tf
        tau2 = tau * tau
        y = self._M @ np.array([1.0, tau, tau2, tau2 * tau, tau2 * tau2, tau2 * tau2 * tau])
        n = self._n
        return y[:n], y[n:2 * n], y[2 * n:]


    def into(self, t, out):
        """Write [q; qd; qdd] at time t into `out` (3n,) with one matrix product and no
        temporaries: the form the jtraj block uses on every evaluation."""
        if t < 0.0 or t > self.tf:
            out[:] = self._held[t > self.tf]
            return
        p = self._powers
        tau = t * self._inv_tf
        p[1] = tau
        p[2] = tau * tau
        p[3] = p[2] * tau
        p[4] = p[2] * p[2]
        p[5] = p[4] * tau
        np.matmul(self._M, p, out=out)


class CartesianTrajectory:
    """Evaluator of the straight-line motion from T0 to T1 over [0, tf] seconds.

    ``at(t)`` returns T (4, 4) with path fraction s = 10 tau^3 - 15 tau^4 + 6 tau^5,
    tau = t / tf: translation p0 + s (p1 - p0) and rotation R0 Rot(u, s phi), where u, phi
    (phi <= pi) are the axis and angle of R0^T R1 taken from its quaternion, so the rotation
    follows the shorter arc (a half turn: the arc ``arc_sign`` chooses) at a rate
    proportional to ds/dt (the same path as ``ctraj``'s slerp). Rodrigues: Rot(u, a) = I + sin(a) K + (1 - cos(a)) K^2, K = Sk(u).
    T0 for t < 0, T1 for t > tf (read-only arrays).

    ``into(t, T, v)`` also writes the spatial velocity v (6,) = [dp/dt; omega] in the world
    frame, the rows of a world-frame Jacobian: dp/dt = ds/dt (p1 - p0) and omega =
    ds/dt phi R0 u (the angular velocity of R0 Rot(u, s phi)), ds/dt = 30 tau^2 (1 - tau)^2
    / tf; zero outside [0, tf]. ``set_poses(T0, T1)`` changes the end poses (the ctraj block
    with poses from its inputs).
    """

    def __init__(self, T0, T1, tf):
        T0 = np.array(T0, dtype=float)
        T1 = np.array(T1, dtype=float)
        if T0.shape != (4, 4) or T1.shape != (4, 4):
            raise ValueError("CartesianTrajectory needs two 4x4 homogeneous transforms")
        tf = float(tf)
        if not tf > 0.0:
            raise ValueError(f"trajectory duration tf must be > 0, got {tf}")
        self.tf = tf
        self._sin_term = np.zeros((4, 4))
        self._cos_term = np.zeros((4, 4))
        self._dp = np.zeros((4, 4))
        self.set_poses(T0, T1)
        self._T0.flags.writeable = False
        self._T1.flags.writeable = False

    def set_poses(self, T0, T1):
        """Take the motion from T0 to T1 (4, 4) (copied)."""
        q0, q1 = Quaternion(T0[:3, :3]), Quaternion(T1[:3, :3])
        rel = q0.inv() * q1 * arc_sign(q0.d, q1.d)
        sin_half = float(np.linalg.norm(rel.v))
        self._phi = 2.0 * math.atan2(sin_half, rel.s)
        axis = rel.v / sin_half if sin_half > 0.0 else np.zeros(3)
        K = skew(axis)
        R0 = T0[:3, :3]
        self._sin_term[:3, :3] = R0 @ K
        self._cos_term[:3, :3] = self._sin_term[:3, :3] @ K
        self._dp[:3, 3] = T1[:3, 3] - T0[:3, 3]
        self._spin = self._phi * (R0 @ axis)     # omega per unit ds/dt
        self._T0, self._T1 = np.array(T0, dtype=float), np.array(T1, dtype=float)

    def at(self, t):
        """Pose T (4, 4) at time t (seconds)."""
        if t < 0.0:
            return self._T0
        if t > self.tf:
            return self._T1
        tau = t / self.tf
        s = tau * tau * tau * (10.0 + tau * (-15.0 + 6.0 * tau))
        a = s * self._phi
        return (self._T0 + math.sin(a) * self._sin_term + (1.0 - math.cos(a)) * self._cos_term
                + s * self._dp)

    def into(self, t, T, v):
        """Write the pose at time t into T (4, 4) and its spatial velocity into v (6,)."""
        T[...] = self.at(t)
        if t <= 0.0 or t >= self.tf:
            v[:] = 0.0
            return
        tau = t / self.tf
        rate = 30.0 * tau * tau * (1.0 - tau) ** 2 / self.tf
        np.multiply(self._dp[:3, 3], rate, out=v[:3])
        np.multiply(self._spin, rate, out=v[3:])
