"""Twists and rigid motions after Murray, Li & Sastry (seed 004 §3.1–3.3).

Twist coordinates ξ = (v, ω) ∈ R⁶, linear part first (seed 004 eq. 3-13), with the wedge
ξ^ = [[ω^, v], [0, 0]] ∈ se(3) (3-12); a rigid motion g ∈ SE(3) is a 4x4 homogeneous
transform [[R, p], [0, 1]] (3-15). Wrenches F = (f, τ) pair with twists as Fᵀ·V (power).
Angles in radians, lengths in metres; a revolute twist has |ω| = 1, a translation ω = 0.
"""
from __future__ import annotations

import numpy as np

from ..transforms import skew

__all__ = ["skew", "unskew", "wedge", "vee", "exp_rot", "exp_twist", "screw", "translation",
           "log_rot", "log_twist", "Ad", "ad", "inverse"]


def _shaped(x, shape, name, stacked=False):
    """x as a float array of `shape` (after any leading stack dimensions when `stacked`);
    anything else is a ValueError naming the expected shape."""
    a = np.asarray(x, dtype=float)
    k = len(shape)
    if a.shape[a.ndim - k:] != shape or a.ndim < k or (not stacked and a.ndim != k):
        want = "(..., " + ", ".join(map(str, shape)) + ")" if stacked else str(shape)
        raise ValueError(f"{name} must have shape {want}, got {a.shape}")
    return a


def _angle(theta, name="theta"):
    if np.ndim(theta) != 0:
        raise ValueError(f"{name} must be a scalar, got shape {np.shape(theta)}")
    return float(theta)


def unskew(S):
    """ω from ω^ (3-2): the vector of the antisymmetric part of S, (..., 3, 3) -> (..., 3)."""
    S = _shaped(S, (3, 3), "S", stacked=True)
    return 0.5 * np.stack([S[..., 2, 1] - S[..., 1, 2], S[..., 0, 2] - S[..., 2, 0],
                           S[..., 1, 0] - S[..., 0, 1]], axis=-1)


def wedge(xi):
    """ξ^ = [[ω^, v], [0, 0]] (3-14) of twist coordinates (..., 6) -> (..., 4, 4)."""
    xi = _shaped(xi, (6,), "a twist xi = (v, w)", stacked=True)
    X = np.zeros(xi.shape[:-1] + (4, 4))
    X[..., :3, :3] = skew(xi[..., 3:])
    X[..., :3, 3] = xi[..., :3]
    return X


def vee(X):
    """(v, ω) of ξ^ ∈ se(3) (3-13): (..., 4, 4) -> (..., 6)."""
    X = _shaped(X, (4, 4), "X", stacked=True)
    return np.concatenate([X[..., :3, 3], unskew(X[..., :3, :3])], axis=-1)


def exp_rot(w, theta=1.0):
    """Rodrigues' formula (3-6): e^{ω^θ} = I + ω^/|ω|·sin(|ω|θ) + ω^²/|ω|²·(1 − cos(|ω|θ)).

    w (3,), theta a scalar (rad when |ω| = 1) -> R (3, 3); ω = 0 gives I. With the default
    theta = 1, w is a rotation vector (axis times angle)."""
    w = _shaped(w, (3,), "the axis w")
    theta = _angle(theta)
    s = float(np.linalg.norm(w))
    if s == 0.0:
        return np.eye(3)
    K = skew(w / s)
    a = s * theta
    return np.eye(3) + np.sin(a) * K + (1.0 - np.cos(a)) * (K @ K)


def exp_twist(xi, theta=1.0):
    """e^{ξ^θ} (4, 4) of twist coordinates ξ = (v, ω) (6,) and a scalar theta.

    ω = 0 (3-19): [[I, v·θ], [0, 1]]. ω ≠ 0 (3-20, stated for |ω| = 1; a general ω is first
    scaled to ω/|ω|, v/|ω|, θ·|ω|): [[e^{ω^θ}, (I − e^{ω^θ})(ω × v) + ω·ωᵀ·v·θ], [0, 1]].
    """
    xi = _shaped(xi, (6,), "a twist xi = (v, w)")
    theta = _angle(theta)
    v, w = xi[:3], xi[3:]
    g = np.eye(4)
    s = float(np.linalg.norm(w))
    if s == 0.0:
        g[:3, 3] = v * theta
        return g
    w, v, theta = w / s, v / s, theta * s
    R = exp_rot(w, theta)
    g[:3, :3] = R
    g[:3, 3] = (np.eye(3) - R) @ np.cross(w, v) + w * (w @ v) * theta
    return g


def screw(w, q, h=0.0):
    """Twist of a screw motion about the axis ω through the point q with pitch h (m/rad):
    ξ = (−ω × q + h·ω, ω); h = 0 is the revolute joint of 3-27. w, q (3,) -> (6,)."""
    w = _shaped(w, (3,), "the axis w")
    q = _shaped(q, (3,), "the point q")
    return np.concatenate([-np.cross(w, q) + _angle(h, "the pitch h") * w, w])


def translation(v):
    """Twist of a pure translation along v (3-28): ξ = (v, 0). v (3,) -> (6,)."""
    return np.concatenate([_shaped(v, (3,), "the direction v"), np.zeros(3)])


def log_rot(R):
    """Rotation vector r = ω·θ (3,), θ ∈ [0, π], with exp_rot(r) = R (3, 3).

    θ = atan2(|a|, (tr R − 1)/2) with a = (R − Rᵀ)^∨/2 = ω·sin θ. For θ < π/2, r = a·θ/sin θ;
    otherwise ω·ωᵀ = ((R + Rᵀ)/2 − cos θ·I)/(1 − cos θ) gives the axis (its largest column),
    signed by a (either sign at θ = π)."""
    R = _shaped(R, (3, 3), "R")
    a = unskew(R)
    s = float(np.linalg.norm(a))
    c = (np.trace(R) - 1.0) / 2.0
    theta = np.arctan2(s, c)
    if c > 0.0:
        return a * (theta / s if s > 1e-12 else 1.0 + s * s / 6.0)
    B = ((R + R.T) / 2.0 - c * np.eye(3)) / (1.0 - c)
    k = int(np.argmax(np.diag(B)))
    w = B[:, k] / np.sqrt(B[k, k])
    if w @ a < 0.0:
        w = -w
    return w * theta


def log_twist(g):
    """Exponential coordinates ξ·θ (6,) of a rigid motion g (4, 4): exp_twist(ξθ) = g with
    θ = |ω θ| ∈ [0, π].

    The rotation part is log_rot(R) = r; the translation p = V(r)·u gives u = v·θ, with
    V(r) = I + (1 − cos θ)/θ²·r^ + (θ − sin θ)/θ³·r^² (equal to 3-20 for |ω| = 1)."""
    g = _shaped(g, (4, 4), "g")
    r = log_rot(g[:3, :3])
    theta = float(np.linalg.norm(r))
    if theta < 1e-6:            # series of the two coefficients
        b, c = 0.5 - theta ** 2 / 24.0, 1.0 / 6.0 - theta ** 2 / 120.0
    else:
        b = (1.0 - np.cos(theta)) / theta ** 2
        c = (theta - np.sin(theta)) / theta ** 3
    K = skew(r)
    V = np.eye(3) + b * K + c * (K @ K)
    return np.concatenate([np.linalg.solve(V, g[:3, 3]), r])


def Ad(g):
    """Adjoint of g = (p, R) (3-25): Ad_g = [[R, p^·R], [0, R]], (..., 4, 4) -> (..., 6, 6).
    It maps body to spatial twist coordinates, V^s = Ad_g·V^b (3-26)."""
    g = _shaped(g, (4, 4), "g", stacked=True)
    R = g[..., :3, :3]
    A = np.zeros(g.shape[:-2] + (6, 6))
    A[..., :3, :3] = R
    A[..., 3:, 3:] = R
    A[..., :3, 3:] = skew(g[..., :3, 3]) @ R
    return A


def ad(xi):
    """Lie bracket matrix of ξ = (v, ω): ad_ξ = [[ω^, v^], [0, ω^]] (6, 6), with
    ad_ξ·η = (ξ^η^ − η^ξ^)^∨ and d/dθ Ad_{e^{ξ^θ}} = ad_ξ·Ad_{e^{ξ^θ}}."""
    xi = _shaped(xi, (6,), "a twist xi = (v, w)", stacked=True)
    A = np.zeros(xi.shape[:-1] + (6, 6))
    W = skew(xi[..., 3:])
    A[..., :3, :3] = W
    A[..., 3:, 3:] = W
    A[..., :3, 3:] = skew(xi[..., :3])
    return A


def inverse(g):
    """g⁻¹ = [[Rᵀ, −Rᵀ·p], [0, 1]] of a rigid motion (..., 4, 4)."""
    g = _shaped(g, (4, 4), "g", stacked=True)
    h = np.zeros_like(g)
    Rt = np.swapaxes(g[..., :3, :3], -1, -2)
    h[..., :3, :3] = Rt
    h[..., :3, 3] = -(Rt @ g[..., :3, 3, None])[..., 0]
    h[..., 3, 3] = 1.0
    return h
