"""Quaternions for rotations (release-7 ``quaternion`` and ``qinterp``, seed 000).

A quaternion q = s + <vx, vy, vz> is held as the 4-vector [s, vx, vy, vz]. A unit quaternion
represents the rotation by theta about the unit axis u as [cos(theta/2), sin(theta/2) u]; q and
-q are the same rotation. The module-level helpers work on (..., 4) arrays so that
trajectories can convert and interpolate whole stacks at once.
"""
from __future__ import annotations

import numbers

import numpy as np

from .transforms import rot2tr

__all__ = ["Quaternion", "qinterp"]


def quat_from_rot(R):
    """Unit quaternion [s, vx, vy, vz] of rotation matrices (..., 3, 3) -> (..., 4), s >= 0.

    Shepperd's method: of 4 s^2 = 1 + trace and 4 v_i^2 = 1 + 2 r_ii - trace, the largest is
    taken as the pivot (never close to zero) and the other three components follow from the
    off-diagonal sums and differences, e.g. 4 s vx = r32 - r23, 4 vx vy = r12 + r21.
    """
    R = np.asarray(R, dtype=float)
    r = R.reshape(-1, 3, 3)
    trace = np.trace(r, axis1=1, axis2=2)
    pivots = np.stack([trace, r[:, 0, 0], r[:, 1, 1], r[:, 2, 2]], axis=1)
    k = np.argmax(pivots, axis=1)
    d = np.empty((r.shape[0], 4))
    # sums and differences of the off-diagonal pairs
    d32, d13, d21 = r[:, 2, 1] - r[:, 1, 2], r[:, 0, 2] - r[:, 2, 0], r[:, 1, 0] - r[:, 0, 1]
    s12, s13, s23 = r[:, 0, 1] + r[:, 1, 0], r[:, 0, 2] + r[:, 2, 0], r[:, 1, 2] + r[:, 2, 1]
    rows = [
        (1.0 + trace, d32, d13, d21),                              # pivot s
        (d32, 1.0 + 2 * r[:, 0, 0] - trace, s12, s13),            # pivot vx
        (d13, s12, 1.0 + 2 * r[:, 1, 1] - trace, s23),             # pivot vy
        (d21, s13, s23, 1.0 + 2 * r[:, 2, 2] - trace),             # pivot vz
    ]
    for i, row in enumerate(rows):
        sel = k == i
        if np.any(sel):
            # row = 4 x q with x the pivot component: dividing by sqrt(4 x^2) = 2 x gives 2 q
            two_x = np.sqrt(np.maximum(row[i][sel], 0.0))
            d[sel] = np.stack([c[sel] for c in row], axis=1) / two_x[:, None]
    d *= 0.5
    d[d[:, 0] < 0] *= -1.0
    return d.reshape(R.shape[:-2] + (4,))


def quat_to_rot(d):
    """Rotation matrices (..., 3, 3) of quaternions (..., 4); the quaternion is normalised first.

    R = (s^2 - v.v) I + 2 v v^T + 2 s Sk(v).
    """
    d = np.asarray(d, dtype=float)
    d = d / np.linalg.norm(d, axis=-1, keepdims=True)
    s, x, y, z = d[..., 0], d[..., 1], d[..., 2], d[..., 3]
    R = np.empty(d.shape[:-1] + (3, 3))
    R[..., 0, 0] = 1 - 2 * (y * y + z * z)
    R[..., 1, 1] = 1 - 2 * (x * x + z * z)
    R[..., 2, 2] = 1 - 2 * (x * x + y * y)
    R[..., 0, 1], R[..., 1, 0] = 2 * (x * y - s * z), 2 * (x * y + s * z)
    R[..., 0, 2], R[..., 2, 0] = 2 * (x * z + s * y), 2 * (x * z - s * y)
    R[..., 1, 2], R[..., 2, 1] = 2 * (y * z - s * x), 2 * (y * z + s * x)
    return R


# how near a half turn (|cos(phi/2)|, phi the rotation from one pose to the other) counts as
# one, and how small a quaternion component counts as zero, in arc_sign
HALF_TURN = 1e-9


def arc_sign(d1, d2):
    """+1.0 or -1.0: the sign to give the unit quaternion d2 (4,) so that the rotation from d1
    (4,) to it takes the shorter arc (the one rule of slerp, trinterp, ctraj and the ctraj block).

    The relative rotation conj(d1)·d2 = [cos(phi/2), sin(phi/2) u] has cos(phi/2) = d1·d2: a
    positive dot product is the shorter arc. A half turn (|d1·d2| <= HALF_TURN) is a tie,
    decided by the poses, not by rounding: the arc through orientations nearer the identity
    (the midpoint d1 ± d2 with the larger scalar part: release 7 interpolates the quaternions
    with s >= 0 as they are, so Rx(-pi/2) to Rx(pi/2) passes through the identity), and when
    an end pose is itself a half turn from the identity (s = 0, both arcs as near), the one
    turning positively about the relative axis u's first non-zero component.
    """
    dot = float(d1 @ d2)
    if abs(dot) > HALF_TURN:
        return 1.0 if dot > 0.0 else -1.0
    if abs(d1[0]) > HALF_TURN and abs(d2[0]) > HALF_TURN:
        return 1.0 if d1[0] * d2[0] > 0.0 else -1.0
    v1, v2 = d1[1:], d2[1:]
    for c in d1[0] * v2 - d2[0] * v1 - np.cross(v1, v2):      # the vector of conj(d1)·d2
        if abs(c) > HALF_TURN:
            return 1.0 if c > 0.0 else -1.0
    return 1.0


def slerp(d1, d2, r):
    """Spherical linear interpolation of unit quaternions d1, d2 (4,) at fractions r.

    q(r) = [sin((1 - r) W) q1 + sin(r W) q2] / sin(W), cos(W) = q1.q2, after giving q2 the
    sign ``arc_sign`` chooses so that the shorter arc is taken (W <= pi/2, a rotation of
    <= pi; a half turn by the tie rule there). For W < 1e-8 the normalised linear
    interpolation is used (same to rounding).
    r scalar -> (4,); r (m,) -> (m, 4). The angular rate along the path is constant.
    """
    d1 = np.asarray(d1, dtype=float)
    d2 = np.asarray(d2, dtype=float)
    r = np.asarray(r, dtype=float)[..., None]
    d2 = arc_sign(d1, d2) * d2
    w = np.arccos(min(float(d1 @ d2), 1.0))
    if w < 1e-8:
        d = (1.0 - r) * d1 + r * d2
        return d / np.linalg.norm(d, axis=-1, keepdims=True)
    return (np.sin((1.0 - r) * w) * d1 + np.sin(r * w) * d2) / np.sin(w)


class Quaternion:
    """Quaternion q = s + <v>, with the operators of release 7 (seed 000, quaternion).

    Constructors:
      ``Quaternion()``                 identity 1 <0, 0, 0>
      ``Quaternion(q)``                copy of a Quaternion
      ``Quaternion(R)``                unit quaternion of a 3x3 rotation or a 4x4 transform
      ``Quaternion([s, vx, vy, vz])``  the elements
      ``Quaternion(s, [vx, vy, vz])``  the elements
      ``Quaternion.angvec(theta, v)``  rotation by theta about v (release 7's
                                       ``quaternion(v, theta)``)

    Operators: ``q1 * q2`` Hamilton product (compounding rotations, like T1 @ T2), ``q * x``
    with a 3-vector x rotates x, ``q * c`` with a scalar scales, ``q1 / q2 = q1 * q2.inv()``,
    ``q ** j`` integer power, ``q1 == q2`` element-wise within ``Quaternion.atol``.
    Instances are immutable.
    """

    atol = 1e-10
    __slots__ = ("_d",)

    def __init__(self, s=None, v=None):
        if v is not None:
            d = np.concatenate([[float(s)], np.asarray(v, dtype=float).reshape(3)])
        elif s is None:
            d = np.array([1.0, 0.0, 0.0, 0.0])
        elif isinstance(s, Quaternion):
            d = s._d
        else:
            a = np.asarray(s, dtype=float)
            if a.shape in ((3, 3), (4, 4)):
                d = quat_from_rot(a[:3, :3])
            elif a.shape == (4,):
                d = a.copy()
            else:
                raise ValueError(f"Quaternion needs a 3x3 rotation, a 4x4 transform, 4 elements "
                                 f"or (s, v), got shape {a.shape}")
        self._d = d
        self._d.flags.writeable = False

    @classmethod
    def angvec(cls, theta, v):
        """Unit quaternion of a rotation by theta (rad) about the axis v: [cos(theta/2), sin(theta/2) v/|v|]."""
        v = np.asarray(v, dtype=float)
        return cls(np.cos(theta / 2.0), np.sin(theta / 2.0) * v / np.linalg.norm(v))

    @property
    def d(self):
        """The 4 elements [s, vx, vy, vz] (read-only array)."""
        return self._d

    @property
    def s(self):
        """Scalar part."""
        return float(self._d[0])

    @property
    def v(self):
        """Vector part (3,) (read-only array)."""
        return self._d[1:]

    def norm(self):
        """Magnitude sqrt(s^2 + v.v)."""
        return float(np.linalg.norm(self._d))

    def unit(self):
        """The unit quaternion q / |q|."""
        return Quaternion(self._d / self.norm())

    def conj(self):
        """Conjugate s - <v>; the inverse rotation for a unit quaternion."""
        return Quaternion(self.s, -self.v)

    def inv(self):
        """Inverse conj(q) / |q|^2, so that q * q.inv() = 1."""
        return Quaternion(self.conj()._d / (self._d @ self._d))

    def r(self):
        """Equivalent 3x3 rotation matrix (of the unit quaternion)."""
        return quat_to_rot(self._d)

    def tr(self):
        """Equivalent 4x4 homogeneous transform with zero translation."""
        return rot2tr(self.r())

    def __mul__(self, other):
        if isinstance(other, Quaternion):
            s1, v1, s2, v2 = self.s, self.v, other.s, other.v
            return Quaternion(s1 * s2 - v1 @ v2, s1 * v2 + s2 * v1 + np.cross(v1, v2))
        if isinstance(other, numbers.Real):
            return Quaternion(self._d * other)
        x = np.asarray(other, dtype=float)
        if x.shape == (3,):
            return (self * Quaternion(0.0, x) * self.inv()).v.copy()
        return NotImplemented

    def __rmul__(self, other):
        if isinstance(other, numbers.Real):
            return Quaternion(self._d * other)
        return NotImplemented

    def __truediv__(self, other):
        if isinstance(other, Quaternion):
            return self * other.inv()
        if isinstance(other, numbers.Real):
            return Quaternion(self._d / other)
        return NotImplemented

    def __pow__(self, j):
        if not isinstance(j, numbers.Integral):
            return NotImplemented
        result = Quaternion()
        for _ in range(abs(j)):
            result = result * self
        return result.inv() if j < 0 else result

    def __neg__(self):
        return Quaternion(-self._d)

    def __eq__(self, other):
        if not isinstance(other, Quaternion):
            return NotImplemented
        return bool(np.allclose(self._d, other._d, rtol=0.0, atol=self.atol))

    __hash__ = None

    def __str__(self):
        """Release-7 display, e.g. ``0.98383 <0.098712, 0.14869, 0.014919>``."""
        s, x, y, z = (f"{c + 0.0:.5g}" for c in self._d)
        return f"{s} <{x}, {y}, {z}>"

    def __repr__(self):
        s, x, y, z = (repr(float(c)) for c in self._d)
        return f"Quaternion({s}, [{x}, {y}, {z}])"


def qinterp(q1, q2, r):
    """Slerp between unit quaternions q1 (r = 0) and q2 (r = 1) along the shorter arc
    (``arc_sign``'s rule).

    r scalar gives a Quaternion; an array r gives a list of Quaternions (release 7 returns a
    cell array). See ``slerp`` for the equation.
    """
    d = slerp(q1.d, q2.d, r)
    if d.ndim == 1:
        return Quaternion(d)
    return [Quaternion(row) for row in d.reshape(-1, 4)]
