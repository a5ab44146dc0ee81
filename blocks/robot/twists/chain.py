"""Product-of-exponentials kinematics and Lagrangian dynamics of an open chain (seed 004
§3.4–3.5): forward kinematics, spatial and body manipulator Jacobians, the link body
Jacobians, the mass matrix M(θ) (``dyn_getM``) and the Christoffel symbols Γ_ijk
(``dyn_getF``) with C(θ, θ̇).

These are the reference formulas, written for one configuration; ``TwistRobot`` uses the
equivalent recursive kernels (``_kernels``). ``twists`` (n, 6) rows ξ_i = (v_i, ω_i) in the
spatial frame at θ = 0; ``theta`` (n,) joint values (rad, m); frames are 4x4 transforms;
``inertias`` (n, 6, 6) generalized inertias of the links in their frames (``generalized_inertia``).
Joints indexed from 0.
"""
from __future__ import annotations

import numpy as np

from .lie import Ad, ad, exp_twist, inverse, skew

__all__ = ["poe", "spatial_jacobian", "body_jacobian", "link_body_jacobian",
           "generalized_inertia", "mass_matrix", "mass_matrix_derivatives", "christoffel",
           "coriolis_matrix"]


def _chain(twists, theta):
    twists = np.asarray(twists, dtype=float).reshape(-1, 6)
    theta = np.asarray(theta, dtype=float).reshape(-1)
    if theta.shape[0] != twists.shape[0]:
        raise ValueError(f"{twists.shape[0]} twists but {theta.shape[0]} joint values")
    return twists, theta


def poe(twists, theta, gst0=None):
    """g_st(θ) = e^{ξ1^θ1}·…·e^{ξn^θn}·g_st(0) (3-29), (4, 4); gst0 None is the identity."""
    twists, theta = _chain(twists, theta)
    g = np.eye(4)
    for xi, th in zip(twists, theta):
        g = g @ exp_twist(xi, th)
    return g if gst0 is None else g @ np.asarray(gst0, dtype=float)


def spatial_jacobian(twists, theta):
    """J^s_st(θ) = [ξ1, ξ2', …, ξn'] with ξi' = Ad_{e^{ξ1^θ1}…e^{ξ(i−1)^θ(i−1)}}·ξi (3-30),
    (6, n): V^s_st = J^s·θ̇ (3-31)."""
    twists, theta = _chain(twists, theta)
    J = np.empty((6, len(theta)))
    g = np.eye(4)
    for i, (xi, th) in enumerate(zip(twists, theta)):
        J[:, i] = Ad(g) @ xi
        g = g @ exp_twist(xi, th)
    return J


def link_body_jacobian(twists, theta, frame0, i):
    """Body Jacobian of the frame carried by link i (3-34), (6, n):
    [ξ0†, …, ξi†, 0, …, 0] with ξj† = Ad⁻¹_{e^{ξj^θj}…e^{ξi^θi}·g_sl(0)}·ξj, where frame0 is
    the link frame g_sl(0) at θ = 0. Its body velocity is V^b = J·θ̇."""
    twists, theta = _chain(twists, theta)
    J = np.zeros((6, len(theta)))
    g = np.asarray(frame0, dtype=float)
    for j in range(i, -1, -1):
        g = exp_twist(twists[j], theta[j]) @ g
        J[:, j] = Ad(inverse(g)) @ twists[j]
    return J


def body_jacobian(twists, theta, gst0):
    """J^b_st(θ) = [ξ1†, …, ξn†], ξi† = Ad⁻¹_{e^{ξi^θi}…e^{ξn^θn}·g_st(0)}·ξi (3-32), (6, n):
    V^b_st = J^b·θ̇ (3-33); J^s = Ad_{g_st}·J^b (3-26)."""
    twists, theta = _chain(twists, theta)
    return link_body_jacobian(twists, theta, gst0, len(theta) - 1)


def generalized_inertia(m, r=(0.0, 0.0, 0.0), I=np.zeros((3, 3))):
    """6x6 generalized inertia of a body in a frame B, for twists (v, ω) of B:
    [[m·1, −m·r^], [m·r^, I − m·r^·r^]] (kinetic energy ½VᵀMV), with m (kg), r (3,) the
    centre of mass in B (m) and I (3, 3) the inertia about the centre of mass in B's axes
    (kg·m²). With r = 0 it is the seed's diag(m, m, m, Ix, Iy, Iz) for principal axes."""
    r = np.asarray(r, dtype=float)
    S = skew(r)
    G = np.zeros((6, 6))
    G[:3, :3] = m * np.eye(3)
    G[:3, 3:] = -m * S
    G[3:, :3] = m * S
    G[3:, 3:] = np.asarray(I, dtype=float) - m * (S @ S)
    return G


def mass_matrix(twists, frames, inertias, theta):
    """M(θ) = Σ_i J_iᵀ·M_i·J_i (3-37, ``dyn_getM``), (n, n) kg·m² (kg for prismatic rows):
    J_i the body Jacobian of link i's frame (frames[i] = g_sl_i(0)) and M_i = inertias[i]
    its generalized inertia in that frame."""
    twists, theta = _chain(twists, theta)
    M = np.zeros((len(theta),) * 2)
    for i, (g0, Mi) in enumerate(zip(frames, inertias)):
        J = link_body_jacobian(twists, theta, g0, i)
        M += J.T @ np.asarray(Mi, dtype=float) @ J
    return M


def mass_matrix_derivatives(twists, frames, inertias, theta):
    """∂M/∂θ_k for every k, (n, n, n) indexed [k, i, j].

    From the link body Jacobians J_i: ∂ξj†/∂θk = ad_{ξj†}·ξk† for j < k ≤ i and 0 otherwise
    (differentiating the adjoint of the exponential), so
    ∂M/∂θk = Σ_i (∂J_iᵀ·M_i·J_i + J_iᵀ·M_i·∂J_i)."""
    twists, theta = _chain(twists, theta)
    n = len(theta)
    dM = np.zeros((n, n, n))
    for i, (g0, Mi) in enumerate(zip(frames, inertias)):
        J = link_body_jacobian(twists, theta, g0, i)
        for k in range(1, i + 1):
            dJ = np.zeros((6, n))
            for j in range(k):
                dJ[:, j] = ad(J[:, j]) @ J[:, k]
            P = dJ.T @ np.asarray(Mi, dtype=float) @ J
            dM[k] += P + P.T
    return dM


def christoffel(twists, frames, inertias, theta):
    """Christoffel symbols (``dyn_getF``), (n, n, n) indexed [i, j, k]:
    Γ_ijk = ½·(∂M_ij/∂θk + ∂M_ik/∂θj − ∂M_kj/∂θi) (seed 004 §3.5)."""
    dM = mass_matrix_derivatives(twists, frames, inertias, theta)   # [k, i, j]
    return 0.5 * (np.transpose(dM, (1, 2, 0)) + np.transpose(dM, (1, 0, 2))
                  - np.transpose(dM, (0, 2, 1)))


def coriolis_matrix(gamma, theta_dot):
    """C_ij(θ, θ̇) = Σ_k Γ_ijk·θ̇_k, (n, n), from the Christoffel symbols gamma (n, n, n);
    C·θ̇ is the Coriolis and centripetal torque and Ṁ − 2C is skew-symmetric."""
    return np.asarray(gamma, dtype=float) @ np.asarray(theta_dot, dtype=float)
