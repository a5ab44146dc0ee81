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

from ..robot_base import RobotBase, readonly, transform, vector_text
from .chain import christoffel, generalized_inertia
from .dh import dh_home_frames, twists_from_dh
from .lie import inverse

__all__ = ["TwistRobot", "default_frames"]

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

    def _kinematics(self):
        """The joint frames of the twists (``RobotBase``). Joint frame K_j at q = 0 has its z
        axis along ω_j (revolute) or v_j (prismatic), its origin on the axis nearest link
        frame j's origin, and its x axis along link frame j's x (or y) axis made orthogonal to
        z; in it the twist is (h·e_z, e_z) with pitch h = ω·v, or (e_z, 0), so
        e^{ξ_j q} = K_j·J(q)·K_j⁻¹ and the chain base·e^{ξ_0 q_0}…e^{ξ_j q_j}·K_j =
        base·X_0·J(q_0)…X_j·J(q_j) with X_j = K_{j−1}⁻¹·K_j; Y_j = K_j⁻¹·H_j and
        E = H_{n−1}⁻¹·home."""
        K = np.empty((self.n, 4, 4))
        slide = np.empty(self.n)
        for j, (xi, H) in enumerate(zip(self.twists, self.frames)):
            v, w = xi[:3], xi[3:]
            if self.sigma[j]:
                z, o, slide[j] = v, H[:3, 3], 1.0
            else:
                p = np.cross(w, v)               # the axis point nearest the origin
                z, o, slide[j] = w, p + w * (w @ (H[:3, 3] - p)), w @ v
            x = next(a - (a @ z) * z for a in (H[:3, 0], H[:3, 1]) if abs(a @ z) < 0.9)
            x /= np.linalg.norm(x)
            K[j] = np.eye(4)
            K[j, :3, :3] = np.column_stack([x, np.cross(z, x), z])
            K[j, :3, 3] = o
        Kinv = inverse(K)
        X = np.concatenate([K[:1], Kinv[:-1] @ K[1:]])
        return X, Kinv @ self.frames, slide, inverse(self.frames[-1]) @ self.home

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

    def __repr__(self):
        return f"TwistRobot({self.name!r}, n={self.n}, {self.config})"

    def _table(self):
        """The twists (joints numbered 1..n) and the home pose."""
        lines = [f"  q{j}: v = {vector_text(xi[:3])}, w = {vector_text(xi[3:])}"
                 for j, xi in enumerate(self.twists, 1)]
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
