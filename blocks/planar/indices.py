"""Redundancy-resolution indices of the planar n-R arm and their gradients (seed 001, sec. 3).

With J = [[-y_j], [x_j]] (eq. 5; x_j, y_j the tip seen from joint j, eq. 3) the entries of
A = J J^T are suffix sums (the recursion after eq. 19):

    a11 = sum_j y_j^2,   a22 = sum_j x_j^2,   a12 = -sum_j x_j y_j,

and with a^{..}_j the same sums over i >= j and Px_j = sum_{k<j} x_k, Py_j = sum_{k<j} y_k,
using dx_i/dq_j = -y_max(i,j), dy_i/dq_j = x_max(i,j) (eq. 4):

    d a11/dq_j = 2 (x_j Py_j - a12_j)
    d a22/dq_j = 2 (-y_j Px_j + a12_j)      (the paper prints -a12_j: sign error)
    d a12/dq_j = -x_j Px_j + y_j Py_j + a11_j - a22_j

so every gradient below costs O(n). Units: lengths in m, angles in rad.
"""
from __future__ import annotations

import math

import numpy as np

from ..robot._jit import jit
from .dynamics import _first_moments
from .kinematics import _vectors

__all__ = ["idxman", "idxcn", "idxgrav"]


@jit
def _gram(q, L):
    """a11, a22, a12 (m^2) packed as out[0:3], their gradients (n,) as out[3:3+3n]."""
    n = q.shape[0]
    X = np.empty(n)
    Y = np.empty(n)
    phi = 0.0
    for k in range(n):
        phi += q[k]
        X[k] = L[k] * math.cos(phi)
        Y[k] = L[k] * math.sin(phi)
    a11 = np.empty(n)
    a22 = np.empty(n)
    a12 = np.empty(n)
    x = 0.0
    y = 0.0
    s11 = 0.0
    s22 = 0.0
    s12 = 0.0
    for k in range(n - 1, -1, -1):
        x += X[k]
        y += Y[k]
        X[k] = x
        Y[k] = y
        s11 += y * y
        s22 += x * x
        s12 -= x * y
        a11[k] = s11
        a22[k] = s22
        a12[k] = s12
    out = np.empty(3 + 3 * n)
    out[0] = s11
    out[1] = s22
    out[2] = s12
    px = 0.0
    py = 0.0
    for j in range(n):
        out[3 + j] = 2.0 * (X[j] * py - a12[j])
        out[3 + n + j] = 2.0 * (-Y[j] * px + a12[j])
        out[3 + 2 * n + j] = -X[j] * px + Y[j] * py + a11[j] - a22[j]
        px += X[j]
        py += Y[j]
    return out


@jit
def _idxman(q, L):
    """[w, dw/dq_0 .. dw/dq_{n-1}] (n+1,), eqs. (19) and (21)."""
    n = q.shape[0]
    A = _gram(q, L)
    a11 = A[0]
    a22 = A[1]
    a12 = A[2]
    w = math.sqrt(max(a11 * a22 - a12 * a12, 0.0))
    if w == 0.0:
        raise ValueError("manipulability gradient undefined at a singular configuration")
    out = np.empty(n + 1)
    out[0] = w
    for j in range(n):
        ddet = a11 * A[3 + n + j] + a22 * A[3 + j] - 2.0 * a12 * A[3 + 2 * n + j]
        out[1 + j] = ddet / (2.0 * w)
    return out


@jit
def _idxcn(q, L):
    """[rho, d rho/dq_0 ..] (n+1,) with rho = s1/s2 = s1^2/det(A), eqs. (17), (18), (20)."""
    n = q.shape[0]
    A = _gram(q, L)
    a11 = A[0]
    a22 = A[1]
    a12 = A[2]
    d = a11 - a22
    r = math.sqrt(d * d + 4.0 * a12 * a12)
    det = a11 * a22 - a12 * a12
    if det <= 0.0 or r == 0.0:
        raise ValueError("condition-number gradient undefined (singular or isotropic J)")
    s1 = 0.5 * (a11 + a22 + r)
    out = np.empty(n + 1)
    out[0] = s1 * s1 / det
    for j in range(n):
        g11 = A[3 + j]
        g22 = A[3 + n + j]
        g12 = A[3 + 2 * n + j]
        ds1 = 0.5 * (g11 + g22 + (d * (g11 - g22) + 4.0 * a12 * g12) / r)
        ddet = a11 * g22 + a22 * g11 - 2.0 * a12 * g12
        out[1 + j] = s1 * (2.0 * det * ds1 - s1 * ddet) / (det * det)
    return out


@jit
def _idxgrav(q, L, Lc, m, ml, g0, W):
    """[p, dp/dq_0 ..] (n+1,) with p = g^T W g, eqs. (22)-(24); W (n, n) symmetric."""
    n = q.shape[0]
    beta, mu = _first_moments(L, Lc, m, ml)
    g = np.empty(n)
    sg = np.empty(n)    # sg_i = g0 sum_{a>=i} beta_a sin(phi_a), so dg_i/dq_j = -sg_max(i,j)
    phi = 0.0
    for k in range(n):
        phi += q[k]
        g[k] = g0 * beta[k] * math.cos(phi)
        sg[k] = g0 * beta[k] * math.sin(phi)
    for k in range(n - 2, -1, -1):
        g[k] += g[k + 1]
        sg[k] += sg[k + 1]
    u = np.zeros(n)
    p = 0.0
    for i in range(n):
        for k in range(n):
            u[i] += W[i, k] * g[k]
        p += g[i] * u[i]
    out = np.empty(n + 1)
    out[0] = p
    tail = 0.0
    for j in range(n - 1, -1, -1):
        tail += sg[j] * u[j]
        out[1 + j] = tail
    head = 0.0
    for j in range(n):
        out[1 + j] = -2.0 * (sg[j] * head + out[1 + j])
        head += u[j]
    return out


def idxman(q, L):
    """Manipulability w = sqrt(det(J J^T)) = sqrt(a11 a22 - a12^2) (eqs. 16, 19), in m^2,
    and its gradient dw/dq (n,) in m^2/rad (eq. 21 corrected: the numerator is
    a11 grad a22 + a22 grad a11 - 2 a12 grad a12).

    q, L: (n,) joint angles (rad) and link lengths (m). Raises ValueError where w = 0
    (the gradient of the square root does not exist there).
    """
    out = _idxman(*_vectors(("q", "L"), q, L))
    return float(out[0]), out[1:]


def idxcn(q, L):
    """Condition number as defined by the paper, rho = s_max/s_min of J J^T (eqs. 15, 18),
    which is cond(J)^2 (not cond(J)), dimensionless, and its gradient (n,) in 1/rad
    (eq. 20: (s2 grad s1 - s1 grad s2)/s2^2).

    Computed as rho = s1^2/det(J J^T) to keep precision near singularities. q, L: (n,).
    Raises ValueError at a singular J (rho infinite) or an isotropic one (s1 = s2, where rho
    has its minimum 1 and no gradient).
    """
    out = _idxcn(*_vectors(("q", "L"), q, L))
    return float(out[0]), out[1:]


def idxgrav(q, L, Lc, m, ml, W=None, g0=9.81):
    """Weighted gravity-torque norm p = g^T W g (eq. 22), in N^2 m^2, and its gradient (n,)
    dp/dq = 2 (dg/dq)^T W g (eq. 23) with dg_i/dq_j = -g0 sum_{a>=max(i,j)} beta_a sin(phi_a)
    (eq. 24; g is ``dynmodel``'s gravity vector, eq. 13 corrected).

    q, L, Lc, m, ml: (n,) as in ``dynmodel``; W: None (identity), (n,) diagonal weights or an
    (n, n) matrix (only its symmetric part matters, and is used); g0 in m/s^2 along -y.
    """
    q, L, Lc, m, ml = _vectors(("q", "L", "Lc", "m", "ml"), q, L, Lc, m, ml)
    out = _idxgrav(q, L, Lc, m, ml, float(g0), gravity_weight(W, q.shape[0]))
    return float(out[0]), out[1:]


def gravity_weight(W, n):
    """The weight idxgrav uses for W: the identity (None), diag(W) ((n,)) or the symmetric
    part of W ((n, n)); ValueError for another shape."""
    if W is None:
        return np.eye(n)
    W = np.asarray(W, dtype=np.float64)
    if W.shape == (n,):
        return np.diag(W)
    if W.shape == (n, n):
        return 0.5 * (W + W.T)
    raise ValueError(f"W must have shape ({n},) or ({n}, {n}), got {W.shape}")
