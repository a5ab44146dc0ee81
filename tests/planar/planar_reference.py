"""Independent reference model of a planar n-R arm for the tests: energies, not recursions.

Every body (link COM i with mass m_i, tip point mass ml_i) is placed by summing link vectors;
velocities come from complex-step differentiation of those positions, exact to rounding.
From T(q, qd) and V(q) the terms of tau = H qdd + C(q, qd) + B qd + g follow by the
definition of the Lagrange equations, with finite differences where a derivative in q is
needed. Nothing here shares code or formulas with blocks/planar.
"""
import numpy as np

G0 = 9.81

# The paper's 4-R arm: seed 001, Table 1 (also spec/demos.md, planar4r).
ARM4 = dict(L=np.array([1.0, 1.0, 1.0, 1.0]), Lc=np.array([0.4, 0.3, 0.3, 0.25]),
            m=np.array([2.0, 1.0, 1.0, 0.5]), ml=np.array([1.0, 1.0, 1.0, 1.0]),
            I=np.array([0.3, 0.2, 0.2, 0.11]), B=np.array([0.05, 0.04, 0.04, 0.04]))
Q4 = np.array([0.5, 1.0, -1.0, -1.0]) * np.pi / 2    # seed 001, section 4.1


def random_arm(n, seed):
    """Arbitrary but physical link data (positive lengths, masses, inertias)."""
    rng = np.random.default_rng(seed)
    L = rng.uniform(0.3, 1.5, n)
    return dict(L=L, Lc=L * rng.uniform(0.1, 0.9, n), m=rng.uniform(0.2, 3.0, n),
                ml=rng.uniform(0.0, 1.0, n), I=rng.uniform(0.01, 0.4, n),
                B=rng.uniform(0.0, 0.2, n))


def link_directions(q):
    """Unit vectors (n, 2) of the links; link k points at angle q_0 + ... + q_k."""
    angle = np.zeros((), dtype=np.result_type(q, float))
    dirs = []
    for qk in q:
        angle = angle + qk
        dirs.append([np.cos(angle), np.sin(angle)])
    return np.array(dirs)


def joint_positions(q, L):
    """Base, joints and tip (n+1, 2) by adding link vectors one at a time."""
    points = [np.zeros(2, dtype=np.result_type(q, float))]
    for Lk, d in zip(L, link_directions(q)):
        points.append(points[-1] + Lk * d)
    return np.array(points)


def bodies(q, arm):
    """Point-mass positions (2n, 2) and masses (2n,): link COMs, then tip masses."""
    d = link_directions(q)
    joints = joint_positions(q, arm["L"])
    com = joints[:-1] + arm["Lc"][:, None] * d
    return np.vstack([com, joints[1:]]), np.concatenate([arm["m"], arm["ml"]])


def tip(q, L):
    return joint_positions(q, L)[-1]


def kinetic(q, qd, arm):
    """T = 1/2 sum m |v|^2 + 1/2 sum I_k (absolute rate of link k)^2, v by complex step."""
    h = 1e-30
    pos, mass = bodies(q + 1j * h * qd, arm)
    v = pos.imag / h
    omega = np.cumsum(qd)
    return 0.5 * np.sum(mass * np.sum(v * v, axis=1)) + 0.5 * np.sum(arm["I"] * omega ** 2)


def potential(q, arm, g0=G0):
    """V = g0 sum m y (gravity along -y)."""
    pos, mass = bodies(q, arm)
    return g0 * np.sum(mass * pos[:, 1])


def inertia(q, arm):
    """H from T, which is a quadratic form in qd: H_ij = T(e_i + e_j) - T(e_i) - T(e_j)."""
    n = len(q)
    E = np.eye(n)
    Te = [kinetic(q, E[i], arm) for i in range(n)]
    return np.array([[kinetic(q, E[i] + E[j], arm) - Te[i] - Te[j] for j in range(n)]
                     for i in range(n)])


def inertia_rate(q, qd, arm, eps=1e-6):
    """dH/dt = dH/dq along qd, central difference."""
    return (inertia(q + eps * qd, arm) - inertia(q - eps * qd, arm)) / (2 * eps)


def coriolis(q, qd, arm, eps=1e-6):
    """C = d/dt(dT/dqd) - dT/dq - H qdd = Hd qd - dT/dq (Lagrange equations, no friction)."""
    dTdq = np.array([(kinetic(q + eps * e, qd, arm) - kinetic(q - eps * e, qd, arm))
                     / (2 * eps) for e in np.eye(len(q))])
    return inertia_rate(q, qd, arm, eps) @ qd - dTdq


def gravity(q, arm, g0=G0, eps=1e-6):
    """g = dV/dq, central difference."""
    return np.array([(potential(q + eps * e, arm, g0) - potential(q - eps * e, arm, g0))
                     / (2 * eps) for e in np.eye(len(q))])


def numeric_gradient(f, q, eps=1e-6):
    """Central-difference gradient of a scalar function f(q)."""
    return np.array([(f(q + eps * e) - f(q - eps * e)) / (2 * eps) for e in np.eye(len(q))])
