"""Twists of a Denavit–Hartenberg robot at its home pose q = 0.

Joint j's axis at q = 0 is the z axis of DH frame j−1 (standard DH, frame −1 = the base) or
of frame j (modified DH), through that frame's origin o: the revolute twist is
ξ = (−z × o, z) (seed 004 eq. 3-27), the prismatic one (z, 0) (3-28). The PoE joint value
is the DH joint coordinate q (offsets are inside the home pose), so
base·e^{ξ0^q0}…e^{ξ(n−1)^q(n−1)}·g_st(0) = SerialLink.fkine(q) with
g_st(0) = A_0(0)…A_{n−1}(0)·tool.
"""
from __future__ import annotations

import numpy as np

from .lie import screw, translation

__all__ = ["dh_home_frames", "twists_from_dh"]


def dh_home_frames(robot):
    """Home poses H_j = A_0(0)·…·A_j(0) (n, 4, 4) of the DH link frames, in the base frame;
    link j's centre of mass r_j and inertia I_j are given in frame j."""
    H = np.empty((robot.n, 4, 4))
    g = np.eye(4)
    for j in range(robot.n):
        g = g @ robot.A(j, 0.0)
        H[j] = g
    return H


def twists_from_dh(robot):
    """(twists (n, 6), gst0 (4, 4)) of a SerialLink in its base frame: rows ξ_j = (v, ω)
    and the tool pose at q = 0, A_0(0)…A_{n−1}(0)·tool (m, rad)."""
    H = dh_home_frames(robot)
    axes = H if robot.mdh else np.concatenate([np.eye(4)[None], H[:-1]])
    twists = np.empty((robot.n, 6))
    for j, (frame, sigma) in enumerate(zip(axes, robot.sigma)):
        z, o = frame[:3, 2], frame[:3, 3]
        twists[j] = translation(z) if sigma else screw(z, o)
    return twists, H[-1] @ robot.tool
