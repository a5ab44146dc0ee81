"""maniplty, cinertia, itorque, gravjac, paycap and fdyn.

Independent truths: hand calculations on the planar two-link arm (unit lengths and masses
at the distal joints, robots.md), a second algorithm (singular values, seed 000's
J⁻ᵀ·M·J⁻¹, rne with an external wrench, rne's gravity load, the kernels' jacob0), the
physical meaning F = Λ·ẍ checked through accel, and energy conservation / dissipation
with potential energy from the COM positions (fkine_all and the links' r, not rne).
"""

import numpy as np
import pytest

from blocks.robot import load_robot
from blocks.robot.analysis import cinertia, fdyn, gravjac, itorque, maniplty, paycap
from blocksim.errors import SimulationError
from robot_helpers import rotx, rotz, transl

PLANAR = [1, 1, 0, 0, 0, 0]                  # x, y rows of jacob0 for the planar arm
BASE = transl(0.1, -0.2, 0.3) @ rotz(0.4) @ rotx(-0.3)
TOOL = transl(0.01, 0.02, 0.15) @ rotx(0.7)


@pytest.fixture(scope="module")
def puma():
    return load_robot("puma560")


@pytest.fixture(scope="module")
def twolink():
    return load_robot("twolink")


def random_q(n, m, seed):
    return np.random.default_rng(seed).uniform(-2.5, 2.5, size=(m, n))


def tool_wrench(robot, q, F0):
    """rne's fext (the wrench the end-effector exerts, tool frame) for a wrench F0 = [f; m]
    applied to the end-effector, world frame, moment about the tool point."""
    R = robot.fkine(q)[:3, :3]
    return -np.concatenate([R.T @ F0[:3], R.T @ F0[3:]])


# ---------------------------------------------------------------- maniplty
def test_yoshikawa_two_link_by_hand(twolink):
    # planar rows x, y of the Jacobian: J = [[−s1 − s12, −s12], [c1 + c12, c12]] (unit links),
    # det J = s2, so w = sqrt(det(J Jᵀ)) = |a1·a2·sin q2| = |sin q2|
    q = random_q(2, 7, seed=1)
    np.testing.assert_allclose(maniplty(twolink, q, dof=PLANAR), np.abs(np.sin(q[:, 1])),
                               atol=1e-14)
    # singular (stretched): det(J Jᵀ) is zero up to rounding, ~1e-16, and w its square root
    assert maniplty(twolink, [0.4, 0.0], dof=PLANAR) == pytest.approx(0.0, abs=1e-7)
    # release 7's default uses all 6 rows: rank 2 < 6 gives 0 for a planar arm
    assert maniplty(twolink, q[0]) == pytest.approx(0.0, abs=1e-12)


def test_yoshikawa_puma_is_the_product_of_singular_values(puma):
    # sqrt(det(J Jᵀ)) = Π σ_i for a full-row-rank J (second algorithm: SVD)
    q = random_q(6, 4, seed=2)
    J = puma.jacob0(q)
    np.testing.assert_allclose(maniplty(puma, q),
                               np.prod(np.linalg.svd(J, compute_uv=False), axis=1), rtol=1e-10)
    np.testing.assert_allclose(maniplty(puma, q, dof="trans"),
                               np.prod(np.linalg.svd(J[:, :3], compute_uv=False), axis=1),
                               rtol=1e-10)
    # qz has θ5 = 0: joints 4 and 6 share an axis, a wrist singularity
    assert maniplty(puma, puma.poses["qz"]) == pytest.approx(0.0, abs=1e-7)
    assert maniplty(puma, q).shape == (4,) and isinstance(maniplty(puma, q[0]), float)


def test_asada_and_cinertia_two_link_by_hand(twolink):
    # q = (0, π/2): J (rows x, y) = [[−1, −1], [1, 0]]; M = [[3 + 2c2, 1 + c2], [1 + c2, 1]]
    # = [[3, 1], [1, 1]] (unit point masses at the distal joints); J⁻¹ = [[0, 1], [−1, −1]],
    # Λ = J⁻ᵀ M J⁻¹ = diag(1, 2), so Asada's λ_min/λ_max = 1/2 and Yoshikawa |sin q2| = 1
    q = [0.0, np.pi / 2]
    np.testing.assert_allclose(cinertia(twolink, q, dof=PLANAR), np.diag([1.0, 2.0]),
                               atol=1e-14)
    assert maniplty(twolink, q, "asada", dof=PLANAR) == pytest.approx(0.5, abs=1e-14)
    assert maniplty(twolink, q, dof=PLANAR) == pytest.approx(1.0, abs=1e-14)


def test_asada_puma_is_the_eigenvalue_ratio_of_seed_cartesian_inertia(puma):
    q = random_q(6, 3, seed=3)
    ratios = []
    for qi in q:
        Ji = np.linalg.inv(puma.jacob0(qi))
        e = np.linalg.eigvalsh(Ji.T @ puma.inertia(qi) @ Ji)        # seed 000's Mx
        ratios.append(e[0] / e[-1])
    np.testing.assert_allclose(maniplty(puma, q, "asada"), ratios, rtol=1e-8)
    # at the wrist singularity the acceleration ellipsoid degenerates: 0
    assert maniplty(puma, puma.poses["qz"], "asada") == pytest.approx(0.0, abs=1e-12)


def test_maniplty_argument_checks(puma, twolink):
    with pytest.raises(ValueError):
        maniplty(puma, puma.poses["qn"], method="condition")
    with pytest.raises(ValueError):
        maniplty(puma, puma.poses["qn"], dof="xyz")
    with pytest.raises(ValueError):
        maniplty(twolink, [0.1, 0.2], "asada")              # 6 rows, 2 joints
    with pytest.raises(ValueError):
        cinertia(twolink, [0.1, 0.2])


# ---------------------------------------------------------------- cinertia
def test_cinertia_puma_seed_formula_and_force_acceleration(puma):
    robot = puma.configure(base=BASE, tool=TOOL)
    q = random_q(6, 3, seed=4)
    L = cinertia(robot, q)
    assert L.shape == (3, 6, 6)
    zero = np.zeros(6)
    for qi, Li in zip(q, L):
        J = robot.jacob0(qi)
        Ji = np.linalg.inv(J)
        np.testing.assert_allclose(Li, Ji.T @ robot.inertia(qi) @ Ji, rtol=1e-8, atol=1e-10)
        # at rest, no gravity, no joint torque: a wrench F on the end-effector accelerates
        # the tool point by ẍ = J q̈ (J̇ q̇ = 0), with q̈ from accel (rne with fext); F = Λ ẍ
        F = np.array([3.0, -2.0, 5.0, 0.4, -0.3, 0.2])
        qdd = robot.accel(qi, zero, zero, gravity=[0, 0, 0], fext=tool_wrench(robot, qi, F))
        np.testing.assert_allclose(Li @ (J @ qdd), F, rtol=1e-8, atol=1e-8)


def test_cinertia_translation_only_for_the_redundant_case(puma):
    # 3 rows, 6 joints: Λ = (J M⁻¹ Jᵀ)⁻¹ of the tool point's translation; a pure force F at
    # the tool point gives the translational acceleration ẍ with F = Λ ẍ
    q = random_q(6, 1, seed=5)[0]
    L = cinertia(puma, q, dof="trans")
    zero = np.zeros(6)
    F = np.array([-4.0, 1.0, 2.5, 0, 0, 0])
    qdd = puma.accel(q, zero, zero, gravity=[0, 0, 0], fext=tool_wrench(puma, q, F))
    np.testing.assert_allclose(L @ (puma.jacob0(q)[:3] @ qdd), F[:3], rtol=1e-8, atol=1e-10)


# ---------------------------------------------------------------- itorque
def test_itorque_is_inertia_times_acceleration_and_rne_without_gravity(puma):
    robot = puma.nofriction("all")
    q = random_q(6, 4, seed=6)
    qdd = random_q(6, 4, seed=7)
    tau = itorque(robot, q, qdd)
    np.testing.assert_allclose(tau, np.einsum("kij,kj->ki", robot.inertia(q), qdd), rtol=1e-12)
    # rne with q̇ = 0 and gravity off leaves only M(q)·q̈ (motor inertia included in both)
    np.testing.assert_allclose(tau, robot.rne(q, np.zeros_like(q), qdd, gravity=[0, 0, 0]),
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(itorque(robot, q[0], qdd[0]), tau[0], rtol=1e-12)


# ---------------------------------------------------------------- gravjac
@pytest.mark.parametrize("name", ["puma560", "puma560akb", "stanford", "twolink"])
def test_gravjac_equals_gravload_and_jacob0(name):
    robot = load_robot(name).configure(base=BASE, tool=TOOL)
    q = random_q(robot.n, 4, seed=8)
    tau, J = gravjac(robot, q)
    assert tau.shape == (4, robot.n) and J.shape == (4, 6, robot.n)
    np.testing.assert_allclose(tau, robot.gravload(q), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(J, robot.jacob0(q), atol=1e-12)
    g = np.array([1.0, -2.0, 9.0])
    tau1, J1 = gravjac(robot, q[0], gravity=g)
    np.testing.assert_allclose(tau1, robot.gravload(q[0], gravity=g), rtol=1e-10, atol=1e-10)


def test_gravjac_two_link_in_a_vertical_plane_by_hand(twolink):
    # gravity along y: V = g·(m1·y1 + m2·y2), y1 = sin q1, y2 = sin q1 + sin(q1 + q2), so
    # τ1 = g·(2 cos q1 + cos(q1 + q2)), τ2 = g·cos(q1 + q2)
    q1, q2 = 0.3, -0.8
    tau, _ = gravjac(twolink, [q1, q2], gravity=[0, 9.81, 0])
    np.testing.assert_allclose(tau, [9.81 * (2 * np.cos(q1) + np.cos(q1 + q2)),
                                     9.81 * np.cos(q1 + q2)], rtol=1e-12)


# ---------------------------------------------------------------- paycap
def test_paycap_two_link_by_hand(twolink):
    # q = 0 (arm along x), a downward force at the tip in the world frame, w = (0, −1, 0, …):
    # J rows v = [[0, 0], [2, 1], [0, 0]], so τ_u = −Jᵀu = (2, 1); gravity (along z) loads
    # no joint of the planar arm. With tmax = (10, 4): s = min(10/2, 4/1) = 4 at joint 1
    wmax, joint = paycap(twolink, [0.0, 0.0], [0, -1, 0, 0, 0, 0], "0", [[10, 4], [-10, -4]])
    np.testing.assert_allclose(wmax, [0, -4, 0, 0, 0, 0], atol=1e-12)
    assert joint == 1


@pytest.mark.parametrize("frame", ["0", "n"])
def test_paycap_puma_reaches_the_limit_on_the_binding_joint(puma, frame):
    # definition: holding the robot and the payload wrench wmax takes
    # τ = rne(q, 0, 0, fext = −wmax) (rne's fext is the wrench the end-effector exerts); that
    # torque touches tlim on the returned joint and stays within tlim on the others
    robot = puma.configure(tool=TOOL)
    tlim = np.array([[97.6, 186.4, 89.4, 24.2, 20.1, 21.3],
                     [-97.6, -186.4, -89.4, -24.2, -20.1, -21.3]])
    w = np.array([0.3, -0.2, -1.0, 0.05, 0.02, -0.01])
    q = random_q(6, 3, seed=9)
    wmax, joint = paycap(robot, q, w, frame, tlim)
    assert wmax.shape == (3, 6) and joint.shape == (3,)
    for qi, wi, j in zip(q, wmax, joint):
        assert wi @ w > 0                                # same direction as w
        fext = -wi if frame == "n" else tool_wrench(robot, qi, wi)
        tau = robot.rne(qi, np.zeros(6), np.zeros(6), fext=fext)
        assert np.all(tau <= tlim[0] + 1e-9) and np.all(tau >= tlim[1] - 1e-9)
        assert min(abs(tau[j] - tlim[0, j]), abs(tau[j] - tlim[1, j])) < 1e-9
        tau_more = robot.rne(qi, np.zeros(6), np.zeros(6), fext=1.01 * fext)
        assert tau_more[j] > tlim[0, j] or tau_more[j] < tlim[1, j]


def test_paycap_argument_checks(puma):
    q = puma.poses["qn"]
    with pytest.raises(ValueError):
        paycap(puma, q, [0, 0, -1, 0, 0, 0], "w", np.ones((2, 6)))
    with pytest.raises(ValueError):
        paycap(puma, q, [0, 0, -1, 0, 0, 0], "0", np.ones(6))
    with pytest.raises(ValueError):
        paycap(puma, q, np.zeros(6), "0", np.ones((2, 6)))


# ---------------------------------------------------------------- fdyn
def energy(robot, q, qd):
    """½ q̇ᵀ M q̇ + Σ_j m_j g·c_j, COM c_j = T_j·r_j from fkine_all (robots.md: gravity is the
    upward acceleration (0, 0, 9.81), so the potential is m·g·z)."""
    F = robot.fkine_all(q)
    c = np.einsum("kjab,jb->kja", F[:, 1:, :3, :3], robot.r) + F[:, 1:, :3, 3]
    kinetic = 0.5 * np.einsum("ki,kij,kj->k", qd, robot.inertia(q), qd)
    return kinetic + (c @ robot.gravity) @ robot.m


def test_fdyn_frictionless_free_fall_conserves_energy(puma):
    robot = puma.nofriction("all")
    qd0 = np.array([0.5, -0.3, 0.4, 1.0, -0.8, 0.6])
    t, q, qd = fdyn(robot, 0.6, q0=puma.poses["qn"], qd0=qd0, rtol=1e-10, atol=1e-10)
    assert t[0] == 0.0 and t[-1] == pytest.approx(0.6)
    assert q.shape == qd.shape == (len(t), 6)
    E = energy(robot, q, qd)
    assert np.ptp(q[:, 1]) > 0.2                           # the arm really falls
    assert np.abs(E - E[0]).max() < 1e-6 * np.abs(E).max()


def test_fdyn_viscous_friction_dissipates_energy(puma):
    # dE/dt = −q̇ᵀ F(q̇) = −Σ G_j² B_j q̇_j² ≤ 0 (robots.md friction, Coulomb removed)
    robot = puma.nofriction("coulomb")
    t_eval = np.linspace(0.0, 0.6, 601)
    t, q, qd = fdyn(robot, 0.6, q0=puma.poses["qn"], qd0=[0.5, -0.3, 0.4, 1.0, -0.8, 0.6],
                    t_eval=t_eval, rtol=1e-10, atol=1e-10)
    E = energy(robot, q, qd)
    assert np.all(np.diff(E) <= 1e-9)
    power = np.einsum("kj,kj->k", qd, robot.friction(qd))
    dissipated = np.sum((power[1:] + power[:-1]) / 2 * np.diff(t))      # trapezoid rule
    assert E[0] - E[-1] > 1.0
    assert E[0] - E[-1] == pytest.approx(dissipated, rel=1e-4)


def test_fdyn_torque_function_and_arguments(puma):
    # gravity compensation τ = k·g(q) with k = 1 passed through args holds the arm at rest
    robot = puma.nofriction()
    seen = []

    def hold(t, q, qd, k):
        seen.append(t)
        return k * robot.gravload(q)

    q0 = puma.poses["qn"]
    t, q, qd = fdyn(robot, 0.5, hold, q0=q0, args=(1.0,), t_eval=[0.0, 0.25, 0.5])
    np.testing.assert_array_equal(t, [0.0, 0.25, 0.5])
    np.testing.assert_allclose(q, np.tile(q0, (3, 1)), atol=1e-9)
    np.testing.assert_allclose(qd, 0, atol=1e-9)
    assert seen
    # without torque the same arm falls: joint 2 (the shoulder) moves
    t, q, qd = fdyn(robot, 0.5, q0=q0)
    assert abs(q[-1, 1] - q0[1]) > 0.1


def test_fdyn_failures_are_simulation_errors(twolink):
    with pytest.raises(SimulationError, match="finite") as info:
        fdyn(twolink, 1.0, lambda t, q, qd: np.full(2, np.nan))
    assert info.value.time == 0.0
    # τ = 10·q̇³ on a two-link arm: q̈ grows like q̇³, a finite-time blow-up (for one joint
    # with inertia I, q̇(t) = q̇0/sqrt(1 − 20·q̇0²·t/I)) that the step-size control cannot pass
    with pytest.raises(SimulationError, match="step size") as info:
        fdyn(twolink, 10.0, lambda t, q, qd: 10.0 * qd ** 3, qd0=[1.0, 1.0])
    assert 0 < info.value.time < 10.0


def test_serial_link_methods_delegate(puma):
    q, qdd = random_q(6, 2, seed=10)
    tlim = np.array([[100.0] * 6, [-100.0] * 6])
    assert puma.maniplty(q, "asada", "trans") == maniplty(puma, q, "asada", "trans")
    np.testing.assert_array_equal(puma.cinertia(q), cinertia(puma, q))
    np.testing.assert_array_equal(puma.itorque(q, qdd), itorque(puma, q, qdd))
    for a, b in zip(puma.gravjac(q, [0, 0, 3.0]), gravjac(puma, q, [0, 0, 3.0])):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(puma.paycap(q, [0, 0, -1, 0, 0, 0], "n", tlim),
                    paycap(puma, q, [0, 0, -1, 0, 0, 0], "n", tlim)):
        np.testing.assert_array_equal(a, b)
    robot = puma.nofriction()
    for a, b in zip(robot.fdyn(0.1, q0=q, t_eval=[0, 0.1]), fdyn(robot, 0.1, None, q, None,
                                                                  t_eval=[0, 0.1])):
        np.testing.assert_array_equal(a, b)
