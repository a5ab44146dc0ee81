"""A robot defined by joint twists (product of exponentials), with SerialLink's method names.

``TwistRobot(twists, home, frames=None, m=None, r=None, I=None, Jm=None, G=None, B=None,
Tc=None, qlim=None, name='', manufacturer='', gravity=(0, 0, 9.81), base=None, tool=None,
poses=None, comment='')``

- ``twists`` (n, 6): rows ξ_j = (v, ω) in the base frame at q = 0 (seed 004 eq. 3-27/3-28):
  |ω| = 1 for a revolute (or helical) joint, ω = 0 and |v| = 1 for a prismatic joint, so q
  is in radians or metres. ``home`` (4, 4): the tool pose g_st(0) at q = 0 in the base frame.
- ``frames`` (n, 4, 4): home poses g_sl_j(0) of the link frames (``default_frames`` when
  None); ``m`` (n,) kg, ``r`` (n, 3) centre of mass in the link frame (m), ``I`` (n, 3, 3)
  or (n, 6) [Ixx Iyy Izz Ixy Iyz Ixz] inertia about the centre of mass in the link frame's
  axes (kg·m²); ``Jm``, ``G``, ``B``, ``Tc`` (n, 2) or (n,) (t means [t, −t]), ``qlim``
  (n, 2): motor inertia, gear ratio, friction and limits with SerialLink's conventions.
- ``gravity``, ``base``, ``tool``, ``poses`` as for SerialLink; the tool pose is
  base·e^{ξ0^q0}…e^{ξ(n−1)^q(n−1)}·home·tool (3-29).

Everything but the kinematics (dynamics, friction, modifiers, analysis) comes from
``RobotBase``; ``q`` (n,) gives one answer, (m, n) a stack of m answers.
"""
from __future__ import annotations

import numpy as np

from ..robot_base import RobotBase, _vec, readonly, transform
from .chain import christoffel, generalized_inertia
from .dh import dh_home_frames, twists_from_dh
from .lie import Ad, inverse

__all__ = ["TwistRobot", "default_frames"]

_K = None


def _kernels():
    """The twist kernel module, imported (numba with it) when the first robot is built."""
    global _K
    if _K is None:
        from . import _kernels as k
        _K = k
    return _K


def _check_twists(twists):
    twists = np.array(twists, dtype=float)
    if twists.ndim != 2 or twists.shape[1] != 6 or not len(twists):
        raise ValueError(f"twists must be an (n, 6) array of rows (v, w), got shape "
                         f"{twists.shape}")
    for j, (v, w) in enumerate(zip(twists[:, :3], twists[:, 3:])):
        nw, nv = np.linalg.norm(w), np.linalg.norm(v)
        if not (abs(nw - 1) < 1e-9 or (nw == 0 and abs(nv - 1) < 1e-9)):
            raise ValueError(f"twist {j}: w must be a unit vector (revolute) or zero with v a "
                             f"unit vector (prismatic); got |w| = {nw:g}, |v| = {nv:g}")
    return twists


def default_frames(twists):
    """Link frames for a robot given by twists alone (n, 4, 4): axes parallel to the base;
    the origin of a revolute link on its joint axis at the point nearest the base origin
    (ω × v), of a prismatic link at the previous link's origin. They only serve drawing
    (fkine_all) and as the frames of link masses given without a frame."""
    twists = np.asarray(twists, dtype=float)
    H = np.tile(np.eye(4), (len(twists), 1, 1))
    p = np.zeros(3)
    for j, xi in enumerate(twists):
        if np.any(xi[3:]):
            p = np.cross(xi[3:], xi[:3])
        H[j, :3, 3] = p
    return H


class TwistRobot(RobotBase):
    """An open-chain manipulator given by twists (immutable by convention: modifiers return
    new robots). Read-only attributes besides those of ``RobotBase``: ``twists`` (n, 6),
    ``home`` (4, 4), ``frames`` (n, 4, 4)."""

    def __init__(self, twists, home, frames=None, m=None, r=None, I=None, Jm=None, G=None,
                 B=None, Tc=None, qlim=None, name="", manufacturer="", gravity=(0.0, 0.0, 9.81),
                 base=None, tool=None, poses=None, comment=""):
        xi = _check_twists(twists)
        n = len(xi)
        self.twists = readonly(xi)
        self.home = transform(home, "home")
        H = default_frames(xi) if frames is None else np.asarray(frames, dtype=float)
        if H.shape != (n, 4, 4):
            raise ValueError(f"frames must have shape {(n, 4, 4)}, got {H.shape}")
        self.frames = readonly([transform(h, f"frames[{j}]") for j, h in enumerate(H)])
        sigma = (np.linalg.norm(xi[:, 3:], axis=1) == 0).astype(int)
        super().__init__(sigma, m, r, I, Jm, G, B, Tc, qlim, name=name,
                         manufacturer=manufacturer, comment=comment, gravity=gravity, base=base,
                         tool=tool, poses=poses)

    _kind = "twists (v, w)"
    _kernel_module = staticmethod(_kernels)

    def _pack(self):
        """The kernel arguments P, W (layout in ``_kernels``) and the base-frame gravity."""
        K, n = self._k, self.n
        P = np.zeros((n, K.NP))
        prev = np.eye(4)
        for j in range(n):
            Hinv = inverse(self.frames[j])
            P[j, K.XI:K.XI + 6] = Ad(Hinv) @ self.twists[j]
            P[j, K.PREV:K.PREV + 12] = (inverse(prev) @ self.frames[j])[:3].ravel()
            P[j, K.GI:K.GI + 36] = generalized_inertia(self.m[j], self.r[j], self.I[j]).ravel()
            prev = self.frames[j]
        P[:, K.SIGMA] = self.sigma
        P[:, K.JM], P[:, K.GR], P[:, K.B] = self.Jm, self.G, self.B
        P[:, K.TCP], P[:, K.TCN] = self.Tc[:, 0], self.Tc[:, 1]
        W = np.zeros(K.NW)
        W[K.BASE:K.BASE + 12] = self.base[:3].ravel()
        W[K.TAIL:K.TAIL + 12] = (inverse(prev) @ self.home @ self.tool)[:3].ravel()
        return P, W

    @classmethod
    def from_dh(cls, robot):
        """The same robot as a SerialLink ``robot``, described by its twists at q = 0
        (``twists_from_dh``), its DH link frames at q = 0 and its dynamic parameters:
        fkine, Jacobians, rne, inertia, coriolis, gravload and accel agree."""
        twists, gst0 = twists_from_dh(robot)
        return cls(twists, gst0, frames=dh_home_frames(robot), m=robot.m, r=robot.r, I=robot.I,
                   Jm=robot.Jm, G=robot.G, B=robot.B, Tc=robot.Tc, qlim=robot.qlim,
                   name=robot.name, manufacturer=robot.manufacturer, gravity=robot.gravity,
                   base=robot.base, poses=robot.poses, comment=robot.comment)

    def _rebuild(self, **params):
        return TwistRobot(self.twists, self.home, frames=self.frames, **params)

    def _end_frame(self):
        """The end-effector (without the tool) in the last link's frame: H_{n−1}⁻¹·home."""
        return inverse(self.frames[-1]) @ self.home

    def __repr__(self):
        return f"TwistRobot({self.name!r}, n={self.n}, {self.config})"

    def _table(self):
        """The twists and the home pose."""
        lines = [f"  {j}: v = {_vec(xi[:3])}, w = {_vec(xi[3:])}" for j, xi in enumerate(self.twists)]
        return lines + ["home = " + np.array2string(self.home, precision=4, suppress_small=True,
                                                    prefix="home = ")]

    def jacobs(self, q):
        """Spatial manipulator Jacobian J^s_st (3-30) in world coordinates, (6, n):
        V^s = J^s·q̇ with v^s the velocity of the body point at the world origin,
        J^s = [[I, p^], [0, I]]·J0 for the tool position p; J^s = Ad_{g_st}·J^b (3-26)."""
        J = np.array(self.jacob0(q))
        p = self.fkine(q)[..., :3, 3]
        J[..., :3, :] += np.cross(p[..., None, :], np.swapaxes(J[..., 3:, :], -1, -2)) \
            .swapaxes(-1, -2)
        return J

    def christoffel(self, q):
        """Christoffel symbols Γ_ijk (n, n, n) at q (n,) (seed 004 ``dyn_getF``), from the
        link body Jacobians: C_ij = Σ_k Γ_ijk·q̇_k."""
        inertias = [generalized_inertia(*a) for a in zip(self.m, self.r, self.I)]
        return christoffel(self.twists, self.frames, inertias, q)
