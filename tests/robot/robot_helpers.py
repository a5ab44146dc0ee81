"""Helpers shared by the robot-core tests: elementary transforms, finite differences and the
standard-to-modified DH conversion used as a second, independent description of a robot."""

import numpy as np

from blocks.robot import Link, SerialLink


def rotx(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1.0]])


def rotz(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])


def transl(x, y, z):
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


def jacobian_fd(robot, q, h=1e-6):
    """World-frame Jacobian by central differences of fkine: linear part from the position,
    angular part from the skew-symmetric dR·Rᵀ."""
    J = np.zeros((6, robot.n))
    R = robot.fkine(q)[:3, :3]
    for j in range(robot.n):
        dq = np.zeros(robot.n)
        dq[j] = h
        Tp, Tm = robot.fkine(q + dq), robot.fkine(q - dq)
        J[:3, j] = (Tp[:3, 3] - Tm[:3, 3]) / (2 * h)
        W = (Tp[:3, :3] - Tm[:3, :3]) / (2 * h) @ R.T
        J[3:, j] = (W[2, 1], W[0, 2], W[1, 0])
    return J


def to_modified(robot):
    """The same physical robot described with modified DH.

    Standard chain Rz(θ1)Tz(d1)·[Tx(a1)Rx(α1)]·Rz(θ2)Tz(d2)·…·[Tx(an)Rx(αn)] regrouped (Tx and
    Rx about the same axis commute): modified link i has α'_i = α_{i-1}, a'_i = a_{i-1}
    (α'_1 = a'_1 = 0), the same θ, d; the last Tx(an)·Rx(αn) moves into the tool. The link
    frames differ: standard frame i = modified frame i · Tx(a_i)·Rx(α_i), so the COM becomes
    r' = Rx(α_i)·r + [a_i, 0, 0] and the inertia I' = Rx(α_i)·I·Rx(α_i)ᵀ.
    """
    links = []
    for i, L in enumerate(robot.links):
        X = transl(L.a, 0, 0) @ rotx(L.alpha)
        prev = robot.links[i - 1] if i else None
        links.append(Link(alpha=prev.alpha if prev else 0.0, a=prev.a if prev else 0.0,
                          theta=L.theta, d=L.d, type=L.type, offset=L.offset, m=L.m,
                          r=X[:3, :3] @ L.r + X[:3, 3], I=X[:3, :3] @ L.I @ X[:3, :3].T,
                          Jm=L.Jm, G=L.G, B=L.B, Tc=L.Tc, convention="modified"))
    last = robot.links[-1]
    tool = transl(last.a, 0, 0) @ rotx(last.alpha) @ robot.tool
    return SerialLink(links, name=robot.name + " (MDH)", gravity=robot.gravity,
                      base=robot.base, tool=tool)
