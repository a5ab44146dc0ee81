"""The planar model against an independent algorithm: the same arm as a general serial-link
robot (blocks.robot, recursive Newton-Euler and composite-rigid-body inertia).

Standard DH for a planar n-R arm with relative angles: alpha = 0, a = L_i, d = 0, theta = q_i;
frame i sits at the far end of link i with x along the link, so link i's COM is at
r = (Lc_i - L_i, 0, 0) and its tip mass ml_i at the frame origin. Folding the tip mass into
the link gives mass m_i + ml_i, COM at (m_i (Lc_i - L_i)) / (m_i + ml_i) along x, and by the
parallel-axis theorem Izz = I_i + m_i d1^2 + ml_i d2^2 about it (d1, d2 the distances of the
link COM and of the tip from the combined COM). Gravity g0 along -y is the DH robot's
gravity vector (0, g0, 0) (the base accelerates upward). Viscous friction B with G = 1.
"""
import numpy as np
import pytest

from blocks.planar import dynmodel
from blocks.robot import Link, SerialLink

L = np.array([1.0, 0.8, 0.6, 0.5])
LC = np.array([0.4, 0.3, 0.35, 0.2])
M = np.array([2.0, 1.0, 1.2, 0.5])
ML = np.array([1.0, 0.5, 0.7, 0.3])
I = np.array([0.3, 0.2, 0.15, 0.11])
B = np.array([0.05, 0.04, 0.03, 0.02])
G0 = 9.81


def serial_link_arm():
    links = []
    for l, lc, m, ml, izz, b in zip(L, LC, M, ML, I, B):
        total = m + ml
        xc = m * (lc - l) / total
        izz_c = izz + m * (lc - l - xc) ** 2 + ml * xc ** 2
        links.append(Link(alpha=0.0, a=l, d=0.0, m=total, r=[xc, 0.0, 0.0],
                          I=[0.0, 0.0, izz_c, 0.0, 0.0, 0.0], B=b, G=1.0))
    return SerialLink(links, gravity=[0.0, G0, 0.0])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_H_h_g_equal_the_serial_link_robot(seed):
    rng = np.random.default_rng(seed)
    q, qd = rng.uniform(-2, 2, (2, 4))
    _, _, _, H, h, g = dynmodel(q, qd, L, LC, M, ML, I, B, G0)
    robot = serial_link_arm()
    np.testing.assert_allclose(H, robot.inertia(q), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h, robot.coriolis(q, qd) @ qd + robot.friction(qd), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(g, robot.gravload(q), rtol=1e-12, atol=1e-12)
    # and the whole equation of motion at once, through rne
    qdd = rng.uniform(-1, 1, 4)
    np.testing.assert_allclose(H @ qdd + h + g, robot.rne(q, qd, qdd), rtol=1e-11, atol=1e-12)
