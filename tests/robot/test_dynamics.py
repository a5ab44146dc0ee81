"""Rigid-body dynamics of SerialLink: rne, inertia, coriolis, gravload, accel, friction.

Independent truths: closed forms derived by hand (one-link pendulum, Spong & Vidyasagar's
two-link planar arm, the seed-004 two-link mass matrix), a second algorithm (inertia by the
composite-rigid-body method vs columns of rne; standard vs modified DH descriptions of the same
robot), statics by virtual work (τ = Jᵀ·w) and the physical invariants (M symmetric positive
definite, Ṁ − 2C skew-symmetric).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from blocks.robot import Link, SerialLink, load_robot
from robot_helpers import rotx, rotz, to_modified, transl

RNG = np.random.default_rng(11)
MODELS = ["puma560", "puma560akb", "stanford", "twolink"]
BASE = transl(0.1, -0.2, 0.3) @ rotz(0.4) @ rotx(-0.3)
TOOL = transl(0.01, 0.02, 0.15) @ rotx(0.7)


@pytest.fixture(scope="module", params=MODELS)
def robot(request):
    """Every model, with a non-trivial base (gravity then acts obliquely) and tool."""
    return load_robot(request.param).configure(base=BASE, tool=TOOL)


def state(n, scale=1.0):
    return (RNG.uniform(-1.5, 1.5, n), RNG.uniform(-1, 1, n) * scale, RNG.uniform(-1, 1, n))


# ---------------------------------------------------------------- closed forms
def test_one_link_pendulum_with_motor_and_friction():
    """τ = (m·l² + Izz + G²·Jm)·q̈ + m·g·l·cos q + |G|·(B·|G|·q̇ + Tc±).

    The joint axis is made horizontal by the base rotation Rx(π/2) (robot y is world up), so
    gravity (0, 0, g) in the world is (0, g, 0) in the base frame and the COM at angle q from x
    has height l·sin q."""
    m, l, Izz, Jm, G, B, Tc = 2.0, 0.6, 0.05, 1e-4, -30.0, 2e-3, (0.2, -0.3)
    pend = SerialLink([Link(a=l, m=m, r=[0, 0, 0], I=[0.01, 0.02, Izz, 0, 0, 0], Jm=Jm, G=G, B=B,
                            Tc=Tc)], base=rotx(np.pi / 2))
    g = 9.81
    for q, qd, qdd in ((0.3, 0.5, -1.2), (-2.0, -0.7, 0.4), (1.0, 0.0, 2.0)):
        tc = Tc[0] if qd > 0 else Tc[1] if qd < 0 else 0.0
        expected = (m * l * l + Izz + G * G * Jm) * qdd + m * g * l * np.cos(q) \
            + abs(G) * (B * abs(G) * qd + tc)
        assert pend.rne([q], [qd], [qdd])[0] == pytest.approx(expected, rel=1e-13)
        assert pend.gravload([q])[0] == pytest.approx(m * g * l * np.cos(q), rel=1e-13)
    # the same arm with a vertical axis (no base rotation) feels no gravity torque
    flat = SerialLink(pend.links)
    assert flat.gravload([0.3])[0] == pytest.approx(0.0, abs=1e-15)


def spong_two_link(l1=0.7, l2=0.5, lc1=0.3, lc2=0.2, m1=2.0, m2=1.5, I1=0.1, I2=0.05):
    """Two-link planar arm in a vertical plane: link i of length li, COM at lci from its joint
    (standard DH frame i sits at the distal end, so r = [lci − li, 0, 0]), inertia Ii about the
    COM normal to the plane (the in-plane moments, set non-zero, must not matter). Gravity acts
    in −y."""
    links = [Link(a=l1, m=m1, r=[lc1 - l1, 0, 0], I=[0.3, 0.2, I1, 0, 0, 0]),
             Link(a=l2, m=m2, r=[lc2 - l2, 0, 0], I=[0.1, 0.4, I2, 0, 0, 0])]
    return SerialLink(links, gravity=[0, 9.81, 0])


def test_two_link_planar_arm_spong():
    """Spong, Hutchinson & Vidyasagar, Robot Modeling and Control, two-link planar arm:
    d11 = m1 lc1² + m2 (l1² + lc2² + 2 l1 lc2 cos q2) + I1 + I2, d12 = m2 (lc2² + l1 lc2 cos q2)
    + I2, d22 = m2 lc2² + I2; h = −m2 l1 lc2 sin q2, C = [[h q̇2, h (q̇1 + q̇2)], [−h q̇1, 0]];
    g1 = (m1 lc1 + m2 l1) g cos q1 + m2 lc2 g cos(q1 + q2), g2 = m2 lc2 g cos(q1 + q2)."""
    l1, lc1, lc2, m1, m2, I1, I2, g = 0.7, 0.3, 0.2, 2.0, 1.5, 0.1, 0.05, 9.81
    arm = spong_two_link()
    for _ in range(3):
        q, qd, qdd = state(2)
        c2 = np.cos(q[1])
        d11 = m1 * lc1 ** 2 + m2 * (l1 ** 2 + lc2 ** 2 + 2 * l1 * lc2 * c2) + I1 + I2
        d12 = m2 * (lc2 ** 2 + l1 * lc2 * c2) + I2
        d22 = m2 * lc2 ** 2 + I2
        M = np.array([[d11, d12], [d12, d22]])
        h = -m2 * l1 * lc2 * np.sin(q[1])
        C = np.array([[h * qd[1], h * (qd[0] + qd[1])], [-h * qd[0], 0.0]])
        gq = np.array([(m1 * lc1 + m2 * l1) * g * np.cos(q[0]) + m2 * lc2 * g * np.cos(q.sum()),
                       m2 * lc2 * g * np.cos(q.sum())])
        np.testing.assert_allclose(arm.inertia(q), M, rtol=1e-13)
        np.testing.assert_allclose(arm.coriolis(q, qd), C, atol=1e-14)
        np.testing.assert_allclose(arm.gravload(q), gq, rtol=1e-13)
        np.testing.assert_allclose(arm.rne(q, qd, qdd), M @ qdd + C @ qd + gq, rtol=1e-12)


def test_seed_004_two_link_mass_matrix():
    """Seed 004 (page 212 example): M11 = Iz1 + Iz2 + m1 r1² + m2 (l1² + r2² + 2 l1 r2 cos q2),
    M12 = Iz2 + m2 (r2² + l1 r2 cos q2), M22 = Iz2 + m2 r2², with ri the COM distance from joint i."""
    l1, l2, r1, r2, m1, m2, Iz1, Iz2 = 1.1, 0.8, 0.45, 0.35, 3.0, 2.0, 0.2, 0.12
    arm = SerialLink([Link(a=l1, m=m1, r=[r1 - l1, 0, 0], I=[0, 0, Iz1, 0, 0, 0]),
                      Link(a=l2, m=m2, r=[r2 - l2, 0, 0], I=[0, 0, Iz2, 0, 0, 0])])
    for q2 in (0.0, 0.9, -2.4):
        c = np.cos(q2)
        M11 = Iz1 + Iz2 + m1 * r1 ** 2 + m2 * (l1 ** 2 + r2 ** 2 + 2 * l1 * r2 * c)
        M12 = Iz2 + m2 * (r2 ** 2 + l1 * r2 * c)
        M22 = Iz2 + m2 * r2 ** 2
        np.testing.assert_allclose(arm.inertia([0.3, q2]), [[M11, M12], [M12, M22]], rtol=1e-13)


# ---------------------------------------------------------------- algorithms and invariants
def test_inertia_equals_rne_columns(robot):
    """Column j of M is rne(q, 0, e_j) without gravity: the textbook n-call method against the
    composite-rigid-body algorithm."""
    q = RNG.uniform(-1.5, 1.5, robot.n)
    cols = [robot.rne(q, np.zeros(robot.n), e, gravity=[0, 0, 0]) for e in np.eye(robot.n)]
    np.testing.assert_allclose(robot.inertia(q), np.column_stack(cols), rtol=1e-12, atol=1e-13)


def test_inertia_symmetric_positive_definite(robot):
    for M in robot.inertia(RNG.uniform(-3, 3, (5, robot.n))):
        np.testing.assert_array_equal(M, M.T)
        assert np.linalg.eigvalsh(M).min() > 0


def test_accel_inverts_rne(robot):
    q, qd, qdd = (RNG.uniform(-1.5, 1.5, (4, robot.n)) for _ in range(3))
    fext = RNG.normal(size=6)
    tau = robot.rne(q, qd, qdd, fext=fext)
    np.testing.assert_allclose(robot.accel(q, qd, tau, fext=fext), qdd, atol=1e-9)
    g = [0.5, -1.0, 3.0]
    np.testing.assert_allclose(robot.accel(q[0], qd[0], robot.rne(q[0], qd[0], qdd[0], gravity=g),
                                           gravity=g), qdd[0], atol=1e-9)


def test_coriolis_times_qd_is_the_velocity_torque(robot):
    q, qd, _ = state(robot.n)
    bias = robot.rne(q, qd, np.zeros(robot.n))
    np.testing.assert_allclose(robot.coriolis(q, qd) @ qd + robot.gravload(q) + robot.friction(qd),
                               bias, rtol=1e-12, atol=1e-12)


def christoffel_by_differences(robot, q, qd, h=1e-6):
    """C_ij = Σ_k Γ_ijk q̇_k, Γ_ijk = ½(∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i), the partial
    derivatives of `inertia` by central differences."""
    n = robot.n
    dM = np.array([(robot.inertia(q + h * e) - robot.inertia(q - h * e)) / (2 * h)
                   for e in np.eye(n)])  # dM[k, i, j] = ∂M_ij/∂q_k
    gamma = 0.5 * (dM.transpose(1, 2, 0) + dM.transpose(1, 0, 2) - dM)  # [i, j, k]
    return gamma @ qd


def christoffel_by_rne(robot, q, qd):
    """The toolbox's construction (seed 003: N²/2 invocations of rne): without gravity and
    friction, h(q̇) = rne(q, q̇, 0) = Σ_jk Γ_·jk q̇_j q̇_k, so h(e_j) = Γ_·jj and
    h(e_j + e_k) − h(e_j) − h(e_k) = 2Γ_·jk; C(:, k) gathers Γ_·jk q̇_j."""
    rigid = robot.nofriction("all")
    n, E = robot.n, np.eye(robot.n)

    def h(v):
        return rigid.rne(q, v, np.zeros(n), gravity=[0, 0, 0])
    C = np.zeros((n, n))
    for j in range(n):
        C[:, j] += h(E[j]) * qd[j]
        for k in range(j + 1, n):
            g = 0.5 * (h(E[j] + E[k]) - h(E[j]) - h(E[k]))
            C[:, k] += g * qd[j]
            C[:, j] += g * qd[k]
    return C


def test_coriolis_is_the_christoffel_matrix(robot):
    """Issue 16: the Christoffel-symbol matrix (as the toolbox and pinocchio return), not
    merely a factorisation with C·q̇ right and Ṁ − 2C skew."""
    for _ in range(3):
        q, qd, _ = state(robot.n)
        C = robot.coriolis(q, qd)
        scale = np.abs(C).max() + 1e-3
        np.testing.assert_allclose(C, christoffel_by_rne(robot, q, qd), atol=1e-12 * scale)
        np.testing.assert_allclose(C, christoffel_by_differences(robot, q, qd), atol=1e-7 * scale)


def test_mdot_minus_two_c_is_skew_symmetric(robot):
    q, qd, _ = state(robot.n)
    h = 1e-6
    Mdot = (robot.inertia(q + h * qd) - robot.inertia(q - h * qd)) / (2 * h)
    S = Mdot - 2 * robot.coriolis(q, qd)
    scale = np.abs(Mdot).max() + 1
    np.testing.assert_allclose(S + S.T, 0, atol=1e-7 * scale)
    assert abs(qd @ S @ qd) < 1e-7 * scale


def test_external_wrench_by_virtual_work(robot):
    """Statics: a wrench w exerted by the end-effector on the environment (tool frame, moment
    about the tool point) needs joint torques Jnᵀ·w."""
    q = RNG.uniform(-1.5, 1.5, robot.n)
    w = RNG.normal(size=6)
    z = np.zeros(robot.n)
    np.testing.assert_allclose(robot.rne(q, z, z, gravity=[0, 0, 0], fext=w), robot.jacobn(q).T @ w,
                               atol=1e-12)


def test_standard_and_modified_dh_give_the_same_dynamics():
    """The regrouped modified-DH description (robot_helpers.to_modified: frames shifted by
    Tx(a_i)·Rx(α_i), COM and inertia re-expressed) is the same physical robot."""
    for name in ("puma560", "stanford"):
        std = load_robot(name).configure(base=BASE, tool=TOOL)
        mdh = to_modified(std)
        q, qd, qdd = state(std.n)
        w = RNG.normal(size=6)
        np.testing.assert_allclose(mdh.rne(q, qd, qdd, fext=w), std.rne(q, qd, qdd, fext=w),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(mdh.inertia(q), std.inertia(q), rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(mdh.coriolis(q, qd), std.coriolis(q, qd), atol=1e-12)


def test_stacks_and_out_arguments(robot):
    n = robot.n
    Q, QD, QDD = (RNG.uniform(-1, 1, (3, n)) for _ in range(3))
    tau = robot.rne(Q, QD, QDD)
    np.testing.assert_array_equal(tau, [robot.rne(*x) for x in zip(Q, QD, QDD)])
    np.testing.assert_array_equal(robot.inertia(Q), [robot.inertia(x) for x in Q])
    np.testing.assert_array_equal(robot.coriolis(Q, QD), [robot.coriolis(*x) for x in zip(Q, QD)])
    np.testing.assert_array_equal(robot.gravload(Q), [robot.gravload(x) for x in Q])
    np.testing.assert_array_equal(robot.accel(Q, QD, tau), [robot.accel(*x) for x in zip(Q, QD, tau)])
    np.testing.assert_array_equal(robot.friction(QD), [robot.friction(x) for x in QD])
    # broadcasting one velocity over the stack
    np.testing.assert_array_equal(robot.rne(Q, QD[0], QDD[0])[1], robot.rne(Q[1], QD[0], QDD[0]))
    out = np.empty(n)
    assert robot.rne(Q[0], QD[0], QDD[0], out=out) is out
    np.testing.assert_array_equal(out, tau[0])
    M = np.empty((n, n))
    assert robot.inertia(Q[0], out=M) is M
    T = np.empty((3, n))
    assert robot.rne(Q, QD, QDD, out=T) is T
    np.testing.assert_array_equal(T, tau)
    with pytest.raises(ValueError):
        robot.accel(Q, QD, tau, out=np.empty((n, 3)).T)      # not C-contiguous


def test_wrong_lengths_raise():
    puma = load_robot("puma560")
    with pytest.raises(ValueError):
        puma.rne(np.zeros(5), np.zeros(5), np.zeros(5))
    with pytest.raises(ValueError):
        puma.rne(np.zeros(6), np.zeros(6), np.zeros(6), out=np.empty(5))
    with pytest.raises(ValueError):
        puma.inertia(np.zeros(7))


def test_singular_inertia_is_reported():
    # the second joint moves a body with no mass, no inertia and no motor: M is singular
    arm = SerialLink([Link(a=1, m=1, I=[1, 1, 1, 0, 0, 0]), Link(a=1)])
    with pytest.raises(ValueError, match="positive definite"):
        arm.accel([0, 0], [0, 0], [0, 0])


# ---------------------------------------------------------------- friction
def test_friction_opposes_motion_on_every_joint():
    """robots.md: F = |G|·(B·|G|·q̇ + Tc), Tc+ for q̇ > 0, Tc- for q̇ < 0; the Puma has G < 0 on
    joints 0 and 2, where release 7's signed G would have pushed the joint along."""
    puma = load_robot("puma560")
    for sign in (1.0, -1.0):
        qd = sign * np.array([0.3, 0.2, 0.5, 1.0, 0.7, 2.0])
        F = puma.friction(qd)
        assert np.all(F * qd > 0)            # the torque needed to overcome it, so −F·q̇ < 0
        tc = puma.Tc[:, 0] if sign > 0 else puma.Tc[:, 1]
        np.testing.assert_allclose(F, np.abs(puma.G) * (puma.B * np.abs(puma.G) * qd + tc),
                                   rtol=1e-15)
    np.testing.assert_array_equal(puma.friction(np.zeros(6)), 0.0)
    # joint 0 by hand: 62.6111·(1.48e-3·62.6111·0.1 + 0.395)
    assert puma.friction([0.1, 0, 0, 0, 0, 0])[0] == pytest.approx(
        62.6111 * (1.48e-3 * 62.6111 * 0.1 + 0.395), rel=1e-14)
    # in forward dynamics friction only removes energy: with every other torque balanced,
    # τ = rne(q, q̇, 0) − F(q̇), the kinetic-energy rate q̇ᵀ·M·q̈ equals −q̇ᵀ·F < 0
    q, qd, _ = state(6)
    qdd = puma.accel(q, qd, puma.rne(q, qd, np.zeros(6)) - puma.friction(qd))
    power = qd @ puma.inertia(q) @ qdd
    assert power == pytest.approx(-qd @ puma.friction(qd), rel=1e-9) and power < 0


# ---------------------------------------------------------------- compiled vs plain Python
_SCRIPT = """
import json, sys
import numpy as np
from blocks.robot import load_robot
rng = np.random.default_rng(1)
out = {}
for name in ("puma560", "puma560akb", "stanford"):
    R = load_robot(name)
    q, qd, qdd = (rng.uniform(-1, 1, (2, 6)) for _ in range(3))
    tau = R.rne(q, qd, qdd, fext=np.arange(6.0))
    res = [R.fkine(q), R.fkine_all(q), R.jacob0(q), R.jacobn(q), R.jacob_dot(q, qd), tau,
           R.inertia(q), R.coriolis(q, qd), R.gravload(q), R.accel(q, qd, tau), R.friction(qd)]
    out[name] = [r.tolist() for r in res]
json.dump(out, sys.stdout)
"""


def test_jit_and_plain_python_give_identical_numbers():
    """The same script with BLOCKSIM_NO_JIT=1 (plain Python kernels) and with numba."""
    pytest.importorskip("numba")
    root = Path(__file__).resolve().parents[2]
    runs = []
    for flag in ("", "1"):
        env = dict(os.environ, PYTHONPATH=str(root), BLOCKSIM_NO_JIT=flag)
        done = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                              text=True, check=True, timeout=300)
        runs.append(json.loads(done.stdout))
    assert runs[0] == runs[1]
