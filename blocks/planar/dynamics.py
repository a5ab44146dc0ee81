"""Dynamics of the planar n-R arm in the vertical plane (seed 001, section 2.2, eqs. 9-13).

Model (eq. 12):  tau = H(q) qdd + h(q, qd) + g(q),  with h = Coriolis/centrifugal + B qd.

Link data (all (n,), SI units): L lengths (m), Lc distance joint -> COM along the link (m),
m link masses (kg), ml point masses at the link tips (kg), I link inertias about the COM
(kg m^2), B viscous friction (N m s/rad); gravity g0 (m/s^2) acts along -y. Joint angles q
are relative, phi = cumsum(q) are the absolute link angles (eq. 2).

Formulation. Instead of summing m_i J_L^(i)T J_L^(i) over links (eq. 12, O(n^3)), write the
energies in the absolute angles phi = S q (S lower-triangular ones). Every point of the arm
moves with velocity sum_a r_a phid_a (-sin phi_a, cos phi_a), so

    T = 1/2 phid^T M(phi) phid,  M_ab = l_min(a,b) beta_max(a,b) cos(phi_a - phi_b)  (a != b),
    M_aa = I_a + m_a lc_a^2 + l_a^2 mu_a,
    V = g0 sum_a beta_a sin(phi_a),

with mu_a = sum_{k>a} m_k + sum_{k>=a} ml_k (mass carried beyond link a's COM) and
beta_a = m_a lc_a + l_a mu_a (first moment about joint a of everything link a carries).
Then, with H = S^T M S (so H_ij = sum_{a>=i, b>=j} M_ab):

    g_i = g0 sum_{a>=i} beta_a cos(phi_a)                                        (eq. 13*)
    h_i = sum_{a>=i} c_a + B_i qd_i,  c_a = sum_b l_min beta_max sin(phi_a - phi_b) phid_b^2

(*eq. 13 as printed uses sum m_k l_k; the correct factor is beta_i, see the errata in
spec/blocks.md). Because cos(phi_a - phi_b) = cos phi_a cos phi_b + sin phi_a sin phi_b
separates, every entry of H and Hd follows from prefix/suffix sums in O(1), so H and Hd cost
O(n^2) (their size) and h, g cost O(n).
"""
from __future__ import annotations

import numpy as np

from ..robot._jit import jit
from ..robot._linalg import cholesky_solve
from .kinematics import _angles, _kin_fill, _vectors

__all__ = ["dynmodel", "inertia_rate", "forward_dynamics"]


@jit
def _first_moments(L, Lc, m, ml):
    """beta (n,) in kg m, the first moment about joint a of all that link a carries, and
    mu (n,) in kg, the mass carried beyond link a's COM (see the module doc)."""
    n = L.shape[0]
    beta = np.empty(n)
    mu = np.empty(n)
    out = 0.0
    for k in range(n - 1, -1, -1):
        out += ml[k]
        mu[k] = out
        beta[k] = m[k] * Lc[k] + L[k] * out
        out += m[k]
    return beta, mu


@jit
def _suffix(v):
    """Suffix sums with a trailing zero: out[j] = sum_{k>=j} v[k], shape (n+1,)."""
    n = v.shape[0]
    out = np.zeros(n + 1)
    for k in range(n - 1, -1, -1):
        out[k] = out[k + 1] + v[k]
    return out


@jit
def _inertia(L, c, s, beta, diag, H):
    """Fill H (n, n) = S^T M S: diagonal by recursion, row i right of it by accumulation.

    diag (n,) is M's diagonal I_a + m_a lc_a^2 + l_a^2 mu_a in kg m^2.
    """
    n = L.shape[0]
    C = _suffix(beta * c)
    Sn = _suffix(beta * s)
    hjj = 0.0
    for j in range(n - 1, -1, -1):
        hjj += diag[j] + 2.0 * L[j] * (c[j] * C[j + 1] + s[j] * Sn[j + 1])
        H[j, j] = hjj
    for i in range(n):
        ac = 0.0
        as_ = 0.0
        for j in range(i + 1, n):
            ac += L[j - 1] * c[j - 1]
            as_ += L[j - 1] * s[j - 1]
            H[i, j] = H[j, j] + ac * C[j] + as_ * Sn[j]
            H[j, i] = H[i, j]


@jit
def _inertia_rate(L, c, s, w, beta, Hd):
    """Fill Hd (n, n) = dH/dt = S^T (dM/dt) S, the time derivative of ``_inertia``'s terms."""
    n = L.shape[0]
    C = _suffix(beta * c)
    Sn = _suffix(beta * s)
    Cw = _suffix(beta * c * w)    # d/dt of Sn
    Sw = _suffix(beta * s * w)    # -d/dt of C
    hjj = 0.0
    for j in range(n - 1, -1, -1):
        hjj += 2.0 * L[j] * (w[j] * (c[j] * Sn[j + 1] - s[j] * C[j + 1])
                             + s[j] * Cw[j + 1] - c[j] * Sw[j + 1])
        Hd[j, j] = hjj
    for i in range(n):
        ac = 0.0
        as_ = 0.0
        acw = 0.0
        asw = 0.0
        for j in range(i + 1, n):
            lc = L[j - 1] * c[j - 1]
            ls = L[j - 1] * s[j - 1]
            ac += lc
            as_ += ls
            acw += lc * w[j - 1]
            asw += ls * w[j - 1]
            Hd[i, j] = Hd[j, j] + acw * Sn[j] - asw * C[j] + as_ * Cw[j] - ac * Sw[j]
            Hd[j, i] = Hd[i, j]


@jit
def _bias(qd, L, B, g0, c, s, w, beta, h, g):
    """Fill Coriolis/centrifugal + viscous h (n,) and gravity g (n,), both O(n)."""
    n = L.shape[0]
    w2 = w * w
    Cw2 = _suffix(beta * c * w2)
    Sw2 = _suffix(beta * s * w2)
    cphi = np.empty(n)
    pc = 0.0    # sum_{b<a} l_b cos(phi_b) phid_b^2
    ps = 0.0
    for a in range(n):
        cphi[a] = (L[a] * (s[a] * Cw2[a + 1] - c[a] * Sw2[a + 1])
                   + beta[a] * (s[a] * pc - c[a] * ps))
        pc += L[a] * c[a] * w2[a]
        ps += L[a] * s[a] * w2[a]
    hs = 0.0
    gs = 0.0
    for i in range(n - 1, -1, -1):
        hs += cphi[i]
        gs += g0 * beta[i] * c[i]
        h[i] = hs + B[i] * qd[i]
        g[i] = gs


@jit
def _dynmodel(q, qd, L, Lc, m, ml, I, B, g0):
    """Kernel of ``dynmodel``: x, J, Jd, H, Hd, h, g packed in one flat buffer, in order."""
    n = q.shape[0]
    buf = np.empty(2 + 6 * n + 2 * n * n)
    k = 2 + 4 * n
    nn = n * n
    c, s, w = _angles(q, qd)
    _kin_fill(L, c, s, w, buf[:2], buf[2:2 + 2 * n].reshape((2, n)),
              buf[2 + 2 * n:k].reshape((2, n)))
    beta, mu = _first_moments(L, Lc, m, ml)
    diag = I + m * Lc * Lc + L * L * mu
    _inertia(L, c, s, beta, diag, buf[k:k + nn].reshape((n, n)))
    _inertia_rate(L, c, s, w, beta, buf[k + nn:k + 2 * nn].reshape((n, n)))
    k += 2 * nn
    _bias(qd, L, B, g0, c, s, w, beta, buf[k:k + n], buf[k + n:])
    return buf


@jit
def _forward_dynamics(q, qd, tau, L, Lc, m, ml, I, B, g0):
    """Kernel of ``forward_dynamics``: H qdd = tau - h - g by Cholesky (H = L L^T)."""
    n = q.shape[0]
    c, s, w = _angles(q, qd)
    beta, mu = _first_moments(L, Lc, m, ml)
    diag = I + m * Lc * Lc + L * L * mu
    H = np.empty((n, n))
    _inertia(L, c, s, beta, diag, H)
    h = np.empty(n)
    g = np.empty(n)
    _bias(qd, L, B, g0, c, s, w, beta, h, g)
    y = tau - h - g
    if not cholesky_solve(H, y):
        raise ValueError("inertia matrix is not positive definite (check the link data)")
    return y


_NAMES = ("q", "qd", "L", "Lc", "m", "ml", "I", "B", "tau")


def dynmodel(q, qd, L, Lc, m, ml, I, B, g0=9.81):
    """Complete model of the planar n-R arm (the paper's ``dynmodel``), eq. (12):
    ``x, J, Jd, H, h, g = dynmodel(q, qd, L, Lc, m, ml, I, B)``, the paper's six values in
    its order, so a script written for the paper ports line for line.

    q (rad), qd (rad/s) and the link data L, Lc, m, ml, I, B are (n,) (see module doc);
    g0 in m/s^2 along -y.
    Returns x (2,) m, J (2, n), Jd (2, n) as ``kinmodel``; H (n, n) kg m^2, the inertia
    matrix; h (n,) N m, Coriolis/centrifugal + B qd; g (n,) N m, gravity torques (eq. 13
    corrected). dH/dt is ``inertia_rate``.
    """
    b, n = _model(q, qd, L, Lc, m, ml, I, B, g0)
    k = 2 + 4 * n
    return (b[:2], b[2:2 + 2 * n].reshape(2, n), b[2 + 2 * n:k].reshape(2, n),
            b[k:k + n * n].reshape(n, n), b[-2 * n:-n], b[-n:])


def inertia_rate(q, qd, L, Lc, m, ml, I, B, g0=9.81):
    """Hd (n, n) = dH/dt in kg m^2/s along the motion (arguments as ``dynmodel``): with it
    the power balance reads qd^T (h - B qd) = 1/2 qd^T Hd qd. (The ``planar_model`` block
    outputs it as Hd.)"""
    b, n = _model(q, qd, L, Lc, m, ml, I, B, g0)
    k = 2 + 4 * n + n * n
    return b[k:k + n * n].reshape(n, n)


def _model(q, qd, L, Lc, m, ml, I, B, g0):
    """The flat buffer of ``_dynmodel`` (x, J, Jd, H, Hd, h, g) and n."""
    args = _vectors(_NAMES, q, qd, L, Lc, m, ml, I, B)
    return _dynmodel(*args, float(g0)), args[0].shape[0]


def forward_dynamics(q, qd, tau, L, Lc, m, ml, I, B, g0=9.81):
    """Joint accelerations qdd (n,) in rad/s^2 solving H qdd = tau - h - g (eq. 12).

    Arguments as ``dynmodel``, plus the joint torques tau (n,) in N m. H is factored by
    Cholesky (it is symmetric positive definite for positive masses and inertias).
    """
    q, qd, L, Lc, m, ml, I, B, tau = _vectors(_NAMES, q, qd, L, Lc, m, ml, I, B, tau)
    return _forward_dynamics(q, qd, tau, L, Lc, m, ml, I, B, float(g0))
