"""Trajectories against boundary conditions, an independent 6x6 boundary-value solve, values at
the midpoint derived by hand, finite differences and geometric properties."""
import numpy as np
import pytest

from blocks.robot.quaternion import Quaternion
from blocks.robot.trajectory import CartesianTrajectory, QuinticTrajectory, ctraj, jtraj, trinterp
from blocks.robot.transforms import rotvec, transl, trotx, troty, trotz

Q0 = np.array([0.0, 1.0, -0.5])
QF = np.array([1.0, -2.0, 0.7])


def quintic_by_solve(q0, qf, qd0, qdf, tf, t):
    """Independent truth: solve the 6x6 boundary-value system for q(t) = sum_k c_k t^k in
    seconds (q, qd, qdd given at t = 0 and t = tf, accelerations zero)."""
    def rows(t):
        p = np.array([t ** k for k in range(6)])
        dp = np.array([k * t ** (k - 1) if k >= 1 else 0.0 for k in range(6)])
        ddp = np.array([k * (k - 1) * t ** (k - 2) if k >= 2 else 0.0 for k in range(6)])
        return p, dp, ddp
    M = np.vstack(rows(0.0) + rows(tf))
    rhs = np.vstack([q0, qd0, np.zeros_like(q0), qf, qdf, np.zeros_like(q0)])
    c = np.linalg.solve(M, rhs)
    P = np.array([rows(ti) for ti in t])            # (m, 3, 6)
    return P[:, 0] @ c, P[:, 1] @ c, P[:, 2] @ c


# --- jtraj -------------------------------------------------------------------------------------

def test_jtraj_boundary_conditions_rest_to_rest():
    q, qd, qdd = jtraj(Q0, QF, 50)
    assert q.shape == qd.shape == qdd.shape == (50, 3)
    np.testing.assert_allclose(q[0], Q0, atol=1e-15)
    np.testing.assert_allclose(q[-1], QF, atol=1e-15)
    for end in (0, -1):
        np.testing.assert_allclose(qd[end], 0.0, atol=1e-14)
        np.testing.assert_allclose(qdd[end], 0.0, atol=1e-14)


def test_jtraj_boundary_velocities_per_second_with_time_vector():
    qd0, qdf = np.array([0.5, 0.0, -1.0]), np.array([0.0, 2.0, 0.3])
    t = np.linspace(0.0, 2.5, 40)
    q, qd, qdd = jtraj(Q0, QF, t, qd0, qdf)
    np.testing.assert_allclose(q[[0, -1]], [Q0, QF], atol=1e-14)
    np.testing.assert_allclose(qd[[0, -1]], [qd0, qdf], atol=1e-14)
    np.testing.assert_allclose(qdd[[0, -1]], 0.0, atol=1e-13)


def test_jtraj_matches_independent_boundary_value_solve():
    qd0, qdf = np.array([0.5, 0.0, -1.0]), np.array([0.0, 2.0, 0.3])
    t = np.sort(np.concatenate([[0.0, 3.0], np.random.default_rng(1).uniform(0, 3, 20)]))
    for got, want in zip(jtraj(Q0, QF, t, qd0, qdf), quintic_by_solve(Q0, QF, qd0, qdf, 3.0, t)):
        np.testing.assert_allclose(got, want, atol=1e-12)


def test_jtraj_midpoint_by_hand():
    # q(tau) = q0 + D (6 tau^5 - 15 tau^4 + 10 tau^3): at tau = 1/2, q = q0 + D/2,
    # dq/dtau = D (30/16 - 60/8 + 30/4) = 15/8 D and d2q/dtau2 = D (120/8 - 180/4 + 60/2) = 0
    D = QF - Q0
    q, qd, qdd = jtraj(Q0, QF, 5)                  # point count: time normalised to [0, 1]
    np.testing.assert_allclose(q[2], Q0 + D / 2, atol=1e-15)
    np.testing.assert_allclose(qd[2], 15 / 8 * D, atol=1e-14)
    np.testing.assert_allclose(qdd[2], 0.0, atol=1e-13)
    # tau = 1/4: 6/1024 - 15/256 + 10/64 = 106/1024 of the way
    np.testing.assert_allclose(q[1], Q0 + 106 / 1024 * D, atol=1e-15)


def test_jtraj_time_vector_scaling():
    T, m = 4.0, 21
    qn, qdn, qddn = jtraj(Q0, QF, m)
    qt, qdt, qddt = jtraj(Q0, QF, np.linspace(0, T, m))
    np.testing.assert_allclose(qt, qn, atol=1e-15)
    np.testing.assert_allclose(qdt, qdn / T, atol=1e-14)       # per second
    np.testing.assert_allclose(qddt, qddn / T ** 2, atol=1e-14)  # per second squared
    # boundary velocities: per second with a time vector, per unit normalised time with a count
    v0, v1 = np.array([1.0, 0, 0]), np.array([0, 0, -2.0])
    qt, qdt, _ = jtraj(Q0, QF, np.linspace(0, T, m), v0, v1)
    qn, qdn, _ = jtraj(Q0, QF, m, v0 * T, v1 * T)
    np.testing.assert_allclose(qt, qn, atol=1e-14)
    np.testing.assert_allclose(qdt, qdn / T, atol=1e-14)


def test_jtraj_rates_are_time_derivatives():
    t = np.linspace(0.0, 2.0, 4001)
    q, qd, qdd = jtraj(Q0, QF, t, [0.3, -0.2, 0.0], [0.0, 0.5, 1.0])
    h = t[1] - t[0]
    np.testing.assert_allclose(np.gradient(q, h, axis=0)[1:-1], qd[1:-1], atol=1e-5)
    np.testing.assert_allclose(np.gradient(qd, h, axis=0)[1:-1], qdd[1:-1], atol=1e-5)


def test_jtraj_scalar_joint_and_bad_arguments():
    q, qd, qdd = jtraj(0.0, 1.0, 3)
    np.testing.assert_allclose(q[:, 0], [0.0, 0.5, 1.0], atol=1e-15)
    with pytest.raises(ValueError):
        jtraj(Q0, QF, 1)
    with pytest.raises(ValueError):
        jtraj(Q0, QF, 2.5)
    with pytest.raises(ValueError):
        jtraj(Q0, QF[:2], 5)


# --- QuinticTrajectory ---------------------------------------------------------------------------

def test_quintic_evaluator_matches_jtraj_and_holds():
    qd0, qdf, tf = np.array([0.5, 0.0, -1.0]), np.array([0.0, 2.0, 0.3]), 1.7
    traj = QuinticTrajectory(Q0, QF, tf, qd0, qdf)
    t = np.linspace(0.0, tf, 33)
    q, qd, qdd = jtraj(Q0, QF, t, qd0, qdf)
    for i, ti in enumerate(t):
        got = traj.at(ti)
        np.testing.assert_allclose(got[0], q[i], atol=1e-14)
        np.testing.assert_allclose(got[1], qd[i], atol=1e-13)
        np.testing.assert_allclose(got[2], qdd[i], atol=1e-12)
    np.testing.assert_allclose(traj.at(tf)[1], qdf, atol=1e-13)   # exact polynomial at tf
    for late in (tf + 1e-9, 10.0):
        after = traj.at(late)
        np.testing.assert_array_equal(after[0], QF)
        np.testing.assert_array_equal(after[1], 0.0)
        np.testing.assert_array_equal(after[2], 0.0)
    before = traj.at(-0.5)
    np.testing.assert_array_equal(before[0], Q0)
    np.testing.assert_array_equal(before[1], 0.0)
    with pytest.raises(ValueError):
        before[0][0] = 1.0                      # the held values cannot be corrupted


def test_quintic_evaluator_scalar_defaults_and_input_not_frozen():
    q0 = np.array([1.0, 2.0])
    traj = QuinticTrajectory(q0, 0.0, 2.0)
    q0[0] = 5.0                                   # the caller's array stays writable ...
    np.testing.assert_allclose(traj.at(1.0)[0], [0.5, 1.0])   # ... and is not aliased
    with pytest.raises(ValueError):
        QuinticTrajectory(q0, 0.0, 0.0)


# --- trinterp and ctraj --------------------------------------------------------------------------

def test_trinterp_seed_example():
    # seed 000, trinterp page (printed to 4 decimals)
    t1 = trotx(0.2)
    t2 = transl(1, 4, 5) @ troty(0.3)
    np.testing.assert_allclose(trinterp(t1, t2, 0), t1, atol=1e-15)
    np.testing.assert_allclose(trinterp(t1, t2, 1), t2, atol=1e-15)
    np.testing.assert_allclose(trinterp(t1, t2, 0.5),
                               [[0.9887, 0.0075, 0.1494, 0.5], [0.0075, 0.9950, -0.0998, 2.0],
                                [-0.1494, 0.0998, 0.9837, 2.5], [0, 0, 0, 1]], atol=5e-5)
    stack = trinterp(t1, t2, [0.0, 0.5, 1.0])
    assert stack.shape == (3, 4, 4)
    np.testing.assert_allclose(stack[1], trinterp(t1, t2, 0.5))


def test_ctraj_seed_example_path_vector():
    # seed 000, ctraj page: T0 = transl([0 0 0]), T1 = transl([-1 2 1]), r = jtraj(0, 1, t)
    t = np.arange(0, 10 + 1e-9, 0.056)
    r = jtraj(0.0, 1.0, t)[0][:, 0]
    TC = ctraj(transl([0, 0, 0]), transl([-1, 2, 1]), r)
    assert TC.shape == (t.size, 4, 4)
    np.testing.assert_allclose(transl(TC), np.outer(r, [-1, 2, 1]), atol=1e-15)


def test_ctraj_straight_line_monotone_quintic():
    T0 = transl(0.5, -0.2, 0.3) @ trotz(0.4)
    T1 = transl(-0.1, 0.6, 1.0) @ rotvec([1, -1, 2], 2.0)
    m = 41
    TC = ctraj(T0, T1, m)
    assert TC.shape == (m, 4, 4)
    np.testing.assert_allclose(TC[0], T0, atol=1e-15)
    np.testing.assert_allclose(TC[-1], T1, atol=1e-14)
    p0, p1 = T0[:3, 3], T1[:3, 3]
    rel = transl(TC) - p0
    np.testing.assert_allclose(np.cross(rel, p1 - p0), 0.0, atol=1e-15)   # collinear
    s = rel @ (p1 - p0) / np.dot(p1 - p0, p1 - p0)
    assert np.all(np.diff(s) > 0)                                            # monotone
    tau = np.linspace(0, 1, m)
    np.testing.assert_allclose(s, 10 * tau ** 3 - 15 * tau ** 4 + 6 * tau ** 5, atol=1e-14)
    assert s[20] == pytest.approx(0.5, abs=1e-15)
    R = TC[:, :3, :3]
    np.testing.assert_allclose(np.swapaxes(R, 1, 2) @ R, np.broadcast_to(np.eye(3), R.shape),
                               atol=1e-14)
    # the rotation follows the same path fraction: its angle from R0 is s * (total angle)
    total = 2 * np.arccos(abs((Quaternion(T0).inv() * Quaternion(T1)).s))
    angles = [2 * np.arccos(min(1.0, abs((Quaternion(T0).inv() * Quaternion(T)).s))) for T in TC]
    np.testing.assert_allclose(angles, s * total, atol=1e-7)


@pytest.mark.parametrize("delta", [-1e-13, 0.0, 1e-13])
def test_a_half_turn_passes_nearer_the_identity_whatever_the_rounding(delta):
    # Rx(-pi/2) -> Rx(pi/2): both arcs are half turns; the quaternions' dot product is 0 in
    # theory and -2.2e-17 from rounding, which took ctraj the other way (midpoint Rx(pi)).
    # roboticstoolbox-python 1.5.0: ctraj(SE3.Rx(-pi/2), SE3.Rx(pi/2), 3)[1] and
    # trinterp(Rx(pi/2), Rx(-pi/2), 0.5) are the identity; release 7 interpolates the
    # quaternions (s >= 0) without flipping them: the same path. The ctraj block's evaluator
    # (CartesianTrajectory) takes the same arc
    for T0, T1 in ((trotx(-np.pi / 2 + delta), trotx(np.pi / 2)),
                   (trotx(np.pi / 2 + delta), trotx(-np.pi / 2))):
        mid = ctraj(T0, T1, 3)[1]
        np.testing.assert_allclose(mid, np.eye(4), atol=1e-12)
        np.testing.assert_allclose(CartesianTrajectory(T0, T1, 2.0).at(1.0), mid, atol=1e-15)


def test_a_half_turn_from_a_half_turn_turns_positively_about_the_axis():
    # when an end pose is itself a half turn from the identity both arcs pass as near it:
    # the motion turns +pi about the relative axis whose first non-zero component is
    # positive (by hand: I -> Rx(+-pi) through Rx(pi/2) whatever the sign rounding gave
    # Rx(pi)'s quaternion; Rx(pi) -> Ry(pi), relative Rz(pi), through Rx(pi) Rz(pi/2))
    cases = [(np.eye(4), trotx(np.pi), trotx(np.pi / 2)),
             (np.eye(4), trotx(-np.pi), trotx(np.pi / 2)),
             (trotx(np.pi), troty(np.pi), trotx(np.pi) @ trotz(np.pi / 2))]
    for T0, T1, expected in cases:
        mid = ctraj(T0, T1, 3)[1]
        np.testing.assert_allclose(mid, expected, atol=1e-12)
        np.testing.assert_allclose(CartesianTrajectory(T0, T1, 2.0).at(1.0), mid, atol=1e-15)


# --- CartesianTrajectory -------------------------------------------------------------------------

@pytest.mark.parametrize("T1", [
    transl(-0.1, 0.6, 1.0) @ rotvec([1, -1, 2], 2.0),
    transl(0.2, 0.0, 0.0) @ trotz(0.4 + np.pi),            # relative half turn about z
    transl(1.0, 1.0, 1.0) @ trotz(0.4),                     # pure translation
])
def test_cartesian_evaluator_matches_ctraj(T1):
    """Rodrigues about a fixed axis (evaluator) against quaternion slerp (ctraj)."""
    T0 = transl(0.5, -0.2, 0.3) @ trotz(0.4)
    tf = 2.5
    traj = CartesianTrajectory(T0, T1, tf)
    t = np.linspace(0, tf, 26)
    TC = ctraj(T0, T1, t.size)
    for ti, Ti in zip(t, TC):
        np.testing.assert_allclose(traj.at(ti), Ti, atol=1e-13)
    np.testing.assert_array_equal(traj.at(-1.0), T0)
    np.testing.assert_array_equal(traj.at(tf + 1e-9), T1)
    np.testing.assert_allclose(traj.at(tf), T1, atol=1e-14)
    with pytest.raises(ValueError):
        traj.at(99.0)[0, 0] = 3.0
