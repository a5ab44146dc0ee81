"""Rotations and homogeneous transforms with the Robotics Toolbox release-7 names (seed 000).

Conventions: angles in radians; a rotation matrix R is (3, 3), a homogeneous transform
T = [[R, p], [0, 0, 0, 1]] is (4, 4) and maps coordinates in the moving frame to the
reference frame. Functions vectorise over leading axes: an angle array of shape (m,) gives
(m, 3, 3) or (m, 4, 4); a stack of transforms (m, 4, 4) gives stacked results.

Release 7 names its 4x4 rotations ``rotx``; here ``rotx``/``roty``/``rotz`` give the 3x3
rotation and ``trotx``/``troty``/``trotz`` the 4x4 transform.
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "rotx", "roty", "rotz", "trotx", "troty", "trotz", "transl", "tr2rot", "rot2tr",
    "rotvec", "eul2tr", "tr2eul", "rpy2tr", "tr2rpy", "oa2tr", "trnorm", "tr2diff",
    "diff2tr", "tr2jac", "ishomog", "skew",
]

_EPS = np.finfo(float).eps


def _axis_rotation(theta, axis):
    """Elementary rotation about coordinate axis 0, 1 or 2: shape theta.shape + (3, 3)."""
    theta = np.asarray(theta, dtype=float)
    c, s = np.cos(theta), np.sin(theta)
    R = np.zeros(theta.shape + (3, 3))
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    R[..., axis, axis] = 1.0
    R[..., i, i] = c
    R[..., j, j] = c
    R[..., i, j] = -s
    R[..., j, i] = s
    return R


def rotx(theta):
    """Rotation about X: [[1, 0, 0], [0, c, -s], [0, s, c]]; (3, 3), or (m, 3, 3) for (m,) angles."""
    return _axis_rotation(theta, 0)


def roty(theta):
    """Rotation about Y: [[c, 0, s], [0, 1, 0], [-s, 0, c]]; (3, 3), or (m, 3, 3) for (m,) angles."""
    return _axis_rotation(theta, 1)


def rotz(theta):
    """Rotation about Z: [[c, -s, 0], [s, c, 0], [0, 0, 1]]; (3, 3), or (m, 3, 3) for (m,) angles."""
    return _axis_rotation(theta, 2)


def trotx(theta):
    """Homogeneous transform of a rotation about X (release 7 ``rotx``); (4, 4) or (m, 4, 4)."""
    return rot2tr(rotx(theta))


def troty(theta):
    """Homogeneous transform of a rotation about Y (release 7 ``roty``); (4, 4) or (m, 4, 4)."""
    return rot2tr(roty(theta))


def trotz(theta):
    """Homogeneous transform of a rotation about Z (release 7 ``rotz``); (4, 4) or (m, 4, 4)."""
    return rot2tr(rotz(theta))


def rot2tr(R):
    """Transform with rotation R and zero translation: (..., 3, 3) -> (..., 4, 4)."""
    R = np.asarray(R, dtype=float)
    if R.shape[-2:] != (3, 3):
        raise ValueError(f"rot2tr expects (..., 3, 3) rotation matrices, got shape {R.shape}")
    T = np.zeros(R.shape[:-2] + (4, 4))
    T[..., :3, :3] = R
    T[..., 3, 3] = 1.0
    return T


def tr2rot(T):
    """Rotation submatrix of a transform: (..., 4, 4) -> (..., 3, 3) (a copy)."""
    return np.array(_as_transform(T, "tr2rot")[..., :3, :3])


def _as_transform(T, name):
    T = np.asarray(T, dtype=float)
    if T.shape[-2:] != (4, 4):
        raise ValueError(f"{name} expects (..., 4, 4) homogeneous transforms, got shape {T.shape}")
    return T


def _rotation_part(T, name):
    """Rotation of a (..., 3, 3) rotation or a (..., 4, 4) transform."""
    T = np.asarray(T, dtype=float)
    if T.shape[-2:] == (3, 3):
        return T
    return _as_transform(T, name)[..., :3, :3]


def transl(*args):
    """Pure translation, or the translation of a transform (release-7 ``transl``).

    ``transl(x, y, z)`` and ``transl([x, y, z])`` give T = [[I, p], [0, 1]] (4, 4); arrays of
    shape (m,) for x, y, z or (m, 3) for p give (m, 4, 4).
    ``transl(T)`` with T (4, 4) gives its translation p (3,); a trajectory (m, 4, 4) gives (m, 3).
    """
    if len(args) == 3:
        p = np.stack(np.broadcast_arrays(*[np.asarray(a, dtype=float) for a in args]), axis=-1)
    elif len(args) == 1:
        p = np.asarray(args[0], dtype=float)
        if p.shape[-2:] == (4, 4):
            return np.array(p[..., :3, 3])
        if p.shape[-1:] != (3,):
            raise ValueError(f"transl expects x, y, z, a (..., 3) vector or a (..., 4, 4) "
                             f"transform, got shape {p.shape}")
    else:
        raise TypeError(f"transl takes 1 or 3 arguments, got {len(args)}")
    T = np.zeros(p.shape[:-1] + (4, 4))
    T[..., 0, 0] = T[..., 1, 1] = T[..., 2, 2] = T[..., 3, 3] = 1.0
    T[..., :3, 3] = p
    return T


def skew(w):
    """Skew-symmetric matrix Sk(w) with Sk(w) @ x = w x x: (..., 3) -> (..., 3, 3)."""
    w = np.asarray(w, dtype=float)
    S = np.zeros(w.shape[:-1] + (3, 3))
    S[..., 0, 1], S[..., 0, 2] = -w[..., 2], w[..., 1]
    S[..., 1, 0], S[..., 1, 2] = w[..., 2], -w[..., 0]
    S[..., 2, 0], S[..., 2, 1] = -w[..., 1], w[..., 0]
    return S


def rotvec(v, theta):
    """Transform of a rotation by theta about the axis v through the origin (Rodrigues).

    R = cos(theta) I + sin(theta) Sk(u) + (1 - cos(theta)) u u^T with u = v / |v|.
    v (3,), theta scalar -> (4, 4); theta (m,) -> (m, 4, 4). Release 7 returns the 4x4 form.
    """
    v = np.asarray(v, dtype=float)
    norm = np.linalg.norm(v)
    if v.shape != (3,) or norm == 0.0:
        raise ValueError(f"rotvec needs a non-zero 3-vector axis, got {v!r}")
    u = v / norm
    theta = np.asarray(theta, dtype=float)[..., None, None]
    R = (np.cos(theta) * np.eye(3) + np.sin(theta) * skew(u)
         + (1.0 - np.cos(theta)) * np.outer(u, u))
    return rot2tr(R)


def _three_angles(args, name):
    """(a, b, c) from either three broadcastable arrays or one (..., 3) array."""
    if len(args) == 3:
        return np.broadcast_arrays(*[np.asarray(a, dtype=float) for a in args])
    if len(args) == 1:
        angles = np.asarray(args[0], dtype=float)
        if angles.shape[-1:] == (3,):
            return angles[..., 0], angles[..., 1], angles[..., 2]
    raise ValueError(f"{name} expects three angles or one (..., 3) array of angles")


def _first_angle(y, x):
    """(θ, cos θ, sin θ) with θ = atan2(y, x), and θ = 0 where hypot(x, y) < 16 eps: the first
    angle of an Euler or roll/pitch/yaw triple, undefined at the singularity (release 7 sets
    it to 0 there and gives the whole rotation about that axis to the last angle)."""
    a = np.where(np.hypot(y, x) < 16 * _EPS, 0.0, np.arctan2(y, x))
    return a, np.cos(a), np.sin(a)


def eul2tr(*angles):
    """ZYZ Euler angles to a transform: T = Rz(a) Ry(b) Rz(c) (seed 000, eul2tr).

    ``eul2tr(a, b, c)`` or ``eul2tr([a, b, c])``; radians. Scalars give (4, 4), (m,) angles or
    an (m, 3) array give (m, 4, 4).
    """
    a, b, c = _three_angles(angles, "eul2tr")
    return rot2tr(rotz(a) @ roty(b) @ rotz(c))


def tr2eul(T):
    """ZYZ Euler angles [a, b, c] of the rotation of T, with T = Rz(a) Ry(b) Rz(c) (seed 000).

    a = atan2(r23, r13), b = atan2(cos a r13 + sin a r23, r33) in [0, pi],
    c = atan2(-sin a r11 + cos a r21, -sin a r12 + cos a r22).
    Singularity (b = 0 or pi, when hypot(r13, r23) < 16 eps): only a + c (or a - c) is defined; as in
    release 7, a = 0 and the whole rotation about Z is given to c.
    T (4, 4) or R (3, 3) -> (3,); a stack (m, 4, 4) -> (m, 3).
    """
    R = _rotation_part(T, "tr2eul")
    a, ca, sa = _first_angle(R[..., 1, 2], R[..., 0, 2])
    b = np.arctan2(ca * R[..., 0, 2] + sa * R[..., 1, 2], R[..., 2, 2])
    c = np.arctan2(-sa * R[..., 0, 0] + ca * R[..., 1, 0], -sa * R[..., 0, 1] + ca * R[..., 1, 1])
    return np.stack([a, b, c], axis=-1)


def rpy2tr(*angles):
    """Roll/pitch/yaw to a transform, seed 000's convention: T = Rz(roll) Ry(pitch) Rx(yaw).

    ``rpy2tr(roll, pitch, yaw)`` or ``rpy2tr([roll, pitch, yaw])``; radians. Scalars give
    (4, 4), (m,) angles or an (m, 3) array give (m, 4, 4).
    Caution: spatialmath and bdsim name the angles the other way round,
    T = Rz(yaw) Ry(pitch) Rx(roll); the matrix product is the same, roll and yaw swap places.
    """
    roll, pitch, yaw = _three_angles(angles, "rpy2tr")
    return rot2tr(rotz(roll) @ roty(pitch) @ rotx(yaw))


def tr2rpy(T):
    """Roll/pitch/yaw [roll, pitch, yaw] of T = Rz(roll) Ry(pitch) Rx(yaw) (seed 000's convention).

    roll = atan2(r21, r11), pitch = atan2(-r31, cos(roll) r11 + sin(roll) r21) in
    [-pi/2, pi/2], yaw = atan2(sin(roll) r13 - cos(roll) r23, cos(roll) r22 - sin(roll) r12).
    Singularity (pitch = +-pi/2, when hypot(r11, r21) < 16 eps): as in release 7, roll = 0 and the
    remaining rotation is given to yaw. (spatialmath/bdsim order is Rz(yaw) Ry(pitch) Rx(roll).)
    T (4, 4) or R (3, 3) -> (3,); a stack (m, 4, 4) -> (m, 3).
    """
    R = _rotation_part(T, "tr2rpy")
    roll, cr, sr = _first_angle(R[..., 1, 0], R[..., 0, 0])
    pitch = np.arctan2(-R[..., 2, 0], cr * R[..., 0, 0] + sr * R[..., 1, 0])
    yaw = np.arctan2(sr * R[..., 0, 2] - cr * R[..., 1, 2], cr * R[..., 1, 1] - sr * R[..., 0, 1])
    return np.stack([roll, pitch, yaw], axis=-1)


def _unit(v, name):
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    if np.any(n == 0.0):
        raise ValueError(f"{name}: zero-length vector")
    return v / n


def oa2tr(o, a):
    """Rotation transform from orientation o and approach a: T = [[n, o, a, 0], [0, 0, 0, 1]].

    a_hat = a/|a|, n_hat = unit(o x a), o_hat = a_hat x n_hat: the approach direction is kept
    exactly and o is made orthogonal to it when the given vectors are not perpendicular.
    o, a (3,) -> (4, 4); (m, 3) -> (m, 4, 4).
    """
    o = np.asarray(o, dtype=float)
    a = _unit(np.asarray(a, dtype=float), "oa2tr")
    n = _unit(np.cross(o, a), "oa2tr (o parallel to a)")
    return rot2tr(np.stack([n, np.cross(a, n), a], axis=-1))


def trnorm(T):
    """Re-orthonormalise the rotation of T, keeping the approach (third) column's direction.

    n = o x a, o' = a x n, R = [n/|n|, o'/|o'|, a/|a|]; the translation is kept.
    (..., 4, 4) -> (..., 4, 4), or (..., 3, 3) -> (..., 3, 3).
    """
    T = np.array(T, dtype=float)
    R = _rotation_part(T, "trnorm")
    o, a = R[..., :, 1], _unit(R[..., :, 2], "trnorm")
    n = _unit(np.cross(o, a), "trnorm")
    R[...] = np.stack([n, np.cross(a, n), a], axis=-1)
    return T


def tr2diff(T1, T2=None):
    """Differential motion vector d = [dx, dy, dz, delta_x, delta_y, delta_z] (seed 000, tr2diff).

    One argument: T1 is a differential transform [[Sk(delta), d], [0, 0]] (for instance
    T2 @ inv(T1) - I, or diff2tr(d)); d is its translation and delta the mean of the two
    skew-symmetric entries, delta_x = (r32 - r23) / 2, etc. The diagonal is ignored.
    Two arguments: the displacement from T1 to T2,
    d = [p2 - p1; 1/2 sum_k c_k(T1) x c_k(T2)], c_k = k-th rotation column; the rotation part
    equals the world-frame rotation vector of R2 R1^T to first order.
    (4, 4) -> (6,); stacks (m, 4, 4) -> (m, 6).
    """
    T1 = _as_transform(T1, "tr2diff")
    if T2 is None:
        R = T1[..., :3, :3]
        delta = 0.5 * np.stack([R[..., 2, 1] - R[..., 1, 2], R[..., 0, 2] - R[..., 2, 0],
                                R[..., 1, 0] - R[..., 0, 1]], axis=-1)
        return np.concatenate([T1[..., :3, 3], delta], axis=-1)
    T2 = _as_transform(T2, "tr2diff")
    delta = 0.5 * np.cross(T1[..., :3, :3], T2[..., :3, :3], axis=-2).sum(axis=-1)
    return np.concatenate([T2[..., :3, 3] - T1[..., :3, 3], delta], axis=-1)


def diff2tr(d):
    """Differential transform of d = [v; omega]: Delta = [[Sk(omega), v], [0, 0, 0, 0]].

    With T(t + dt) = (I + Delta dt) T(t) this is the Paul form dT/dt = Delta T (seed 000,
    diff2tr). d (6,) -> (4, 4); (m, 6) -> (m, 4, 4).
    """
    d = np.asarray(d, dtype=float)
    if d.shape[-1:] != (6,):
        raise ValueError(f"diff2tr expects (..., 6) differential motion vectors, got {d.shape}")
    D = np.zeros(d.shape[:-1] + (4, 4))
    D[..., :3, :3] = skew(d[..., 3:])
    D[..., :3, 3] = d[..., :3]
    return D


def tr2jac(T):
    """6x6 velocity transform from frame A to frame B, T = (A)T(B) (seed 000, tr2jac).

    J = [[R^T, -R^T Sk(p)], [0, R^T]] with T = [[R, p], [0, 1]]: a velocity [v; omega] of a
    body given at A's origin in A coordinates becomes [R^T (v + omega x p); R^T omega], the
    same motion seen at B's origin in B coordinates. (4, 4) -> (6, 6); (m, 4, 4) -> (m, 6, 6).
    """
    T = _as_transform(T, "tr2jac")
    Rt = np.swapaxes(T[..., :3, :3], -1, -2)
    J = np.zeros(T.shape[:-2] + (6, 6))
    J[..., :3, :3] = Rt
    J[..., 3:, 3:] = Rt
    J[..., :3, 3:] = -Rt @ skew(T[..., :3, 3])
    return J


def ishomog(T, check=False):
    """True if T is a 4x4 matrix (release 7). With check=True also require a rotation part
    that is orthonormal with det +1 and a last row [0, 0, 0, 1] (tolerance 1e-9)."""
    T = np.asarray(T)
    if T.shape != (4, 4):
        return False
    if not check:
        return True
    R = T[:3, :3].astype(float)
    return bool(np.allclose(R.T @ R, np.eye(3), atol=1e-9)
                and abs(np.linalg.det(R) - 1.0) < 1e-9
                and np.allclose(T[3], [0, 0, 0, 1], atol=1e-9))
