"""Kinematics of the planar n-R arm (seed 001, section 2.1, eqs. 2-8).

Joint angles ``q`` (rad) are relative; the absolute angle of link i is the cumulative sum
phi_i = phi_{i-1} + q_i (eq. 2). The tip position measured from joint i is

    x_i = sum_{k>=i} l_k cos(phi_k),   y_i = sum_{k>=i} l_k sin(phi_k)      (eq. 3)

and since d(phi_k)/dq_j = 1 for k >= j, the Jacobian columns are J[:, j] = (-y_j, x_j)
(eqs. 4-5). Differentiating in time instead of through the Hessian of eq. (7)-(8) gives

    Jd[:, j] = (-sum_{k>=j} l_k cos(phi_k) phid_k,  -sum_{k>=j} l_k sin(phi_k) phid_k),

which equals eq. (8) (sum_k -x_max(j,k) qd_k, ...) but costs O(n) instead of O(n^2):
one forward pass for the angles, one backward pass for the suffix sums.
Lengths in m, angles in rad, velocities in rad/s and m/s. Indices 0-based.
"""
from __future__ import annotations

import math

import numpy as np

from ..robot._jit import jit

__all__ = ["kinmodel", "kin_link"]


@jit
def _angles(q, qd):
    """Absolute link angles and rates (eq. 2): cos(phi), sin(phi), phid, each (n,)."""
    n = q.shape[0]
    c = np.empty(n)
    s = np.empty(n)
    w = np.empty(n)
    phi = 0.0
    phid = 0.0
    for k in range(n):
        phi += q[k]
        phid += qd[k]
        c[k] = math.cos(phi)
        s[k] = math.sin(phi)
        w[k] = phid
    return c, s, w


@jit
def _kin_fill(L, c, s, w, x, J, Jd):
    """Backward pass of eq. (3) and its time derivative into x (2,), J (2, n), Jd (2, n)."""
    X = 0.0
    Y = 0.0
    Xd = 0.0
    Yd = 0.0
    for k in range(L.shape[0] - 1, -1, -1):
        lc = L[k] * c[k]
        ls = L[k] * s[k]
        X += lc
        Y += ls
        Xd -= ls * w[k]
        Yd += lc * w[k]
        J[0, k] = -Y
        J[1, k] = X
        Jd[0, k] = -Yd
        Jd[1, k] = Xd
    x[0] = X
    x[1] = Y


@jit
def _kinmodel(q, qd, L):
    """Kernel of ``kinmodel``: x, J, Jd in one flat buffer (2 + 4n,), split by ``kinmodel``.

    One buffer instead of a tuple: handing each array back to Python costs more than the
    arithmetic for small n.
    """
    n = q.shape[0]
    buf = np.empty(2 + 4 * n)
    c, s, w = _angles(q, qd)
    _kin_fill(L, c, s, w, buf[:2], buf[2:2 + 2 * n].reshape((2, n)),
              buf[2 + 2 * n:].reshape((2, n)))
    return buf


@jit
def _kin_link(q, L):
    """Kernel of ``kin_link`` on float64 arrays."""
    n = q.shape[0]
    P = np.zeros((n + 1, 2))
    phi = 0.0
    for k in range(n):
        phi += q[k]
        P[k + 1, 0] = P[k, 0] + L[k] * math.cos(phi)
        P[k + 1, 1] = P[k, 1] + L[k] * math.sin(phi)
    return P


def _vectors(names, *arrays):
    """The arrays as contiguous float64 (n,) arrays, all of one length n (no copy if they are).

    The compiled kernels do no bounds checks, so the lengths are checked here.
    """
    out = [np.ascontiguousarray(v, dtype=np.float64) for v in arrays]
    shape = out[0].shape
    for name, v in zip(names, out):
        if v.shape != shape or len(shape) != 1:
            raise ValueError(f"{name} must have shape (n,) with n = len(q), got {v.shape} "
                             f"(q: {shape})")
    return out


def kinmodel(q, qd, L):
    """Tip position, Jacobian and its time derivative of the planar n-R arm.

    x = (x_1, y_1) (eq. 3), J = [[-y_j], [x_j]] (eq. 5), Jd = dJ/dt (eq. 8, summed in O(n)).

    q, qd, L: (n,) joint angles (rad), joint rates (rad/s), link lengths (m).
    Returns x (2,) in m, J (2, n) in m/rad, Jd (2, n) in m/(rad s).
    """
    buf = _kinmodel(*_vectors(("q", "qd", "L"), q, qd, L))
    n = (buf.shape[0] - 2) // 4
    return buf[:2], buf[2:2 + 2 * n].reshape(2, n), buf[2 + 2 * n:].reshape(2, n)


def kin_link(q, L):
    """Positions of all joints and the tip, base first: shape (n+1, 2), rows (x, y) in m.

    Row 0 is the base origin (0, 0); row k (k >= 1) is sum_{a<k} l_a (cos phi_a, sin phi_a),
    the position of joint k (0-based, the end of link k-1); row n is the tip. (The paper's
    MATLAB ``kin_link`` returns the transpose, 2 x (n+1).)
    """
    return _kin_link(*_vectors(("q", "L"), q, L))
