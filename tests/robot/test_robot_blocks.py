"""Robot blocks against closed forms derived here, the robot library, finite differences and
published values (shared/spec/robots.md), plus their declarations (ports, feedthrough)."""
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "blocks"))
from harness import Rig, convert_params  # noqa: E402

import blocksim  # noqa: E402
from blocks.catalog import BLOCKS  # noqa: E402
from blocks.robot import transforms as tr  # noqa: E402
from blocks.robot.dynamics_blocks import GravLoad, Inertia, Rne, Robot  # noqa: E402
from blocks.robot.kinematics_blocks import FKine, IJacob, Jacob0, Jacobn  # noqa: E402
from blocks.robot.link import Link  # noqa: E402
from blocks.robot.models import load_robot  # noqa: E402
from blocks.robot.serial_link import SerialLink  # noqa: E402
from blocks.robot.trajectory import jtraj  # noqa: E402
from blocks.robot.trajectory_blocks import CTraj, JTraj  # noqa: E402
from blocks.robot.transform_blocks import (Eul2Tr, Rpy2Tr, Tr2Diff, Tr2Eul,  # noqa: E402
                                           Tr2Rpy, Tr2Xyz, Xyz2Tr)
from blocksim.block import ALL, PortError  # noqa: E402
from blocksim.errors import SimulationError  # noqa: E402
from blocksim.language.library import Library  # noqa: E402
from blocksim.params import ParamError  # noqa: E402

RNG = np.random.default_rng(5)
PUMA = load_robot("puma560")                      # full friction (Coulomb and viscous)
QN = PUMA.poses["qn"]
# twolink (robots.md): planar, unit masses at the distal joints, unit lengths; gravity turned
# into the plane (-y) so that g(q) is not zero
TWOLINK = load_robot("twolink").configure(gravity=[0.0, 9.81, 0.0])
G0 = 9.81


def twolink_by_hand(q, qd):
    """M, C·qd and g of two point masses m1 = m2 = 1 at the ends of links l1 = l2 = 1,
    gravity g0 in -y: Lagrange with x2 = l1 c1 + l2 c12, y2 = l1 s1 + l2 s12."""
    c1, c2, c12, s2 = math.cos(q[0]), math.cos(q[1]), math.cos(q[0] + q[1]), math.sin(q[1])
    M = np.array([[3 + 2 * c2, 1 + c2], [1 + c2, 1.0]])
    h = np.array([-s2 * (2 * qd[0] * qd[1] + qd[1] ** 2), s2 * qd[0] ** 2])
    g = G0 * np.array([2 * c1 + c12, c12])
    return M, h, g


def pendulum(length, mass):
    """One revolute link with a point mass at its tip, hanging along +x at q = 0 (gravity
    acceleration g0 towards +x: the 'upward' gravity vector is [-g0, 0, 0])."""
    return SerialLink([Link(a=length, m=mass)], gravity=(-G0, 0.0, 0.0))


# --- robot (forward dynamics) ------------------------------------------------------------------

def test_robot_ports_state_aliases_and_feedthrough():
    rig = Rig(Robot, {"robot": PUMA})
    ins, outs = rig.block.ports()
    assert [p.name for p in ins] == ["tau"] and ins[0].shape == (6,)
    q, qd, qdd = outs
    assert (q.name, q.state, q.feedthrough) == ("q", slice(0, 6), ())
    assert (qd.name, qd.state, qd.feedthrough) == ("qd", slice(6, 12), ())
    assert qdd.name == "qdd" and not qdd.aliased and qdd.feedthrough == ("tau",)
    # the q and qd outputs are the state itself
    assert np.shares_memory(rig.y["q"], rig.x) and np.shares_memory(rig.y["qd"], rig.x)


def test_robot_initial_state_broadcasts_scalars():
    rig = Rig(Robot, {"robot": PUMA, "q0": 0.3, "qd0": -0.1})
    np.testing.assert_array_equal(rig.x, [0.3] * 6 + [-0.1] * 6)
    rig = Rig(Robot, {"robot": PUMA, "q0": QN})
    np.testing.assert_array_equal(rig.y["q"], QN)
    np.testing.assert_array_equal(rig.y["qd"], np.zeros(6))
    with pytest.raises(ParamError) as e:
        Rig(Robot, {"robot": PUMA, "qd0": [1, 2]})
    assert e.value.param == "qd0"


def test_pendulum_point_mass_closed_form():
    # m l^2 qdd = -m g0 l sin q  =>  qdd = -(g0/l) sin q, whatever the mass
    length, mass = 0.7, 2.5
    for q in (0.0, 0.4, -1.3, 2.9):
        rig = Rig(Robot, {"robot": pendulum(length, mass), "q0": q, "qd0": 1.7})
        out = rig.outputs()
        assert out["qdd"][0] == pytest.approx(-(G0 / length) * math.sin(q), rel=1e-12, abs=1e-13)
        np.testing.assert_allclose(rig.derivative(), [1.7, out["qdd"][0]], rtol=0, atol=0)


def test_pendulum_integrated_conserves_energy():
    # E = 1/2 m l^2 qd^2 - m g0 l cos q is constant along the plant's own derivative
    length, mass = 0.7, 2.5
    rig = Rig(Robot, {"robot": pendulum(length, mass), "q0": 2.0})
    block = rig.block

    def f(t, x):
        rig.x[:] = x
        block.acceleration(t)
        block.derivative(t)
        return rig.dx.copy()

    sol = solve_ivp(f, (0.0, 3.0), rig.x.copy(), rtol=1e-10, atol=1e-12)
    q, qd = sol.y
    energy = 0.5 * mass * length ** 2 * qd ** 2 - mass * G0 * length * np.cos(q)
    assert sol.success and q.min() < -1.9  # it swung through to the other side
    np.testing.assert_allclose(energy, energy[0], atol=1e-7 * abs(energy[0]))


def test_twolink_forward_dynamics_by_hand():
    for _ in range(3):
        q, qd, tau = RNG.uniform(-2, 2, 2), RNG.uniform(-1, 1, 2), RNG.uniform(-5, 5, 2)
        rig = Rig(Robot, {"robot": TWOLINK, "q0": q, "qd0": qd}).set(tau=tau)
        M, h, g = twolink_by_hand(q, qd)
        out = rig.outputs()
        np.testing.assert_allclose(out["qdd"], np.linalg.solve(M, tau - h - g), rtol=1e-12)
        np.testing.assert_array_equal(rig.derivative(), np.concatenate([qd, out["qdd"]]))


def test_puma_forward_dynamics_matches_the_library_without_coulomb():
    robot = PUMA.configure(friction="viscous")
    q, qd, tau = RNG.uniform(-1, 1, 6), RNG.uniform(-1, 1, 6), RNG.uniform(-20, 20, 6)
    rig = Rig(Robot, {"robot": robot, "q0": q, "qd0": qd}).set(tau=tau)
    np.testing.assert_allclose(rig.outputs()["qdd"], robot.accel(q, qd, tau), rtol=1e-13)
    # and the library's accel is the inverse of rne: rne(q, qd, qdd) = tau
    np.testing.assert_allclose(robot.rne(q, qd, rig.y["qdd"]), tau, rtol=1e-10, atol=1e-10)


def test_feedforward_diagram_tracks_the_trajectory(tmp_path):
    # jtraj -> rne (the same robot) -> robot: tau = M qdd_d + C qd_d + g + F is the exact
    # inverse of the plant, so q(t) = q_d(t) up to integration error (open loop, 1 s)
    path = tmp_path / "feedforward.yaml"
    path.write_text("""
blocksim: 1
robots:
  p560: {model: puma560, friction: viscous}
blocks:
  traj: {type: jtraj, q0: p560.qz, qf: p560.qr, tf: 1.0}
  ff:   {type: rne, robot: p560}
  arm:  {type: robot, robot: p560, q0: qz}
wires: [traj.q -> ff.q, traj.qd -> ff.qd, traj.qdd -> ff.qdd, ff.tau -> arm.tau]
simulation: {stop: 1.5, rtol: 1e-9, atol: 1e-11, output_interval: 0.25}
record: {q: arm.q, qd: arm.qd, qdd: arm.qdd, qref: traj.q}
""")
    r = blocksim.run(path)
    q_ref, qd_ref, qdd_ref = jtraj(PUMA.poses["qz"], PUMA.poses["qr"], r.t.clip(0, 1.0))
    np.testing.assert_allclose(r["q"], q_ref, atol=1e-7)
    np.testing.assert_allclose(r["qd"], qd_ref, atol=1e-6)
    np.testing.assert_allclose(r["qdd"], qdd_ref, atol=1e-5)
    np.testing.assert_allclose(r["q"][-1], PUMA.poses["qr"], atol=1e-7)  # held after tf


# --- Coulomb friction regularisation ----------------------------------------------------------

BAND = 1e-3


def coulomb_rig(qd, band=BAND):
    rig = Rig(Robot, {"robot": PUMA, "q0": QN, "qd0": qd, "coulomb": "band", "coulomb_band": band})
    return rig.set(tau=np.linspace(-3, 3, 6))


def test_coulomb_outside_the_band_is_the_robots_friction():
    tau = np.linspace(-3, 3, 6)
    for qd in ([0.05, -0.02, 0.3, -0.01, 0.002, -0.5], [BAND, -BAND, 1.0, -1.0, 2 * BAND, -3.0]):
        qdd = coulomb_rig(qd).outputs()["qdd"]
        # robots.md friction (sign(qd), Tc+ / Tc-) inside the library's accel
        np.testing.assert_allclose(qdd, PUMA.accel(QN, qd, tau), rtol=1e-11, atol=1e-12)


def test_coulomb_inside_the_band_is_a_ramp():
    tau = np.linspace(-3, 3, 6)
    qd = np.array([0.25, -0.5, 0.0, 0.75, -1.0, 0.1]) * BAND
    # the docstring's equation, written out: |G| Tc+ qd/band for qd >= 0, |G| Tc- |qd|/band below
    gear = np.abs(PUMA.G)
    ramp = np.where(qd >= 0, gear * PUMA.Tc[:, 0] * qd / BAND, gear * PUMA.Tc[:, 1] * -qd / BAND)
    expected = PUMA.nofriction("coulomb").accel(QN, qd, tau - ramp)
    np.testing.assert_allclose(coulomb_rig(qd).outputs()["qdd"], expected, rtol=1e-11, atol=1e-12)
    # at rest the ramp and robots.md agree (no Coulomb torque at qd = 0)
    np.testing.assert_allclose(coulomb_rig(np.zeros(6)).outputs()["qdd"],
                               PUMA.accel(QN, np.zeros(6), tau), rtol=1e-11, atol=1e-12)


def test_coulomb_one_joint_closed_form_and_creep_speed():
    # one link turning in a horizontal plane (no gravity): m l^2 + G^2 Jm = M,
    # M qdd = tau - |G| (B |G| qd + Tc(qd)), with the ramp |G| Tc+ qd/band inside the band
    m, l, G, Jm, B, Tc, tau, band = 2.0, 0.5, -3.0, 0.01, 0.02, (0.3, -0.2), 0.5, 0.01
    link = Link(a=l, m=m, G=G, Jm=Jm, B=B, Tc=Tc)
    robot = SerialLink([link], gravity=(0.0, 0.0, 0.0))
    M = m * l ** 2 + G ** 2 * Jm

    def qdd(qd):
        rig = Rig(Robot, {"robot": robot, "qd0": qd, "coulomb": "band",
                          "coulomb_band": band}).set(tau=[tau])
        return rig.outputs()["qdd"][0]

    for qd in (0.2, -0.05, band, -band):
        coulomb = 3.0 * (Tc[0] if qd > 0 else Tc[1])
        assert qdd(qd) == pytest.approx((tau - 3.0 * (B * 3.0 * qd) - coulomb) / M, rel=1e-12)
    # tau = 0.5 < |G| Tc+ = 0.9: the joint should stick; it creeps where the damping
    # G^2 B + |G| Tc+/band balances tau
    creep = tau / (G ** 2 * B + 3.0 * Tc[0] / band)
    assert creep < band
    assert qdd(creep) == pytest.approx(0.0, abs=1e-12)
    assert qdd(0.0) == pytest.approx(tau / M, rel=1e-12)


def test_coulomb_band_zero_is_exact_and_viscous_robots_are_untouched():
    tau = np.linspace(-3, 3, 6)
    qd = np.array([0.25, -0.5, 0.0, 0.75, -1.0, 0.1]) * BAND
    np.testing.assert_allclose(coulomb_rig(qd, band=0.0).outputs()["qdd"],
                               PUMA.accel(QN, qd, tau), rtol=1e-11, atol=1e-12)
    viscous = PUMA.configure(friction="viscous")
    rig = Rig(Robot, {"robot": viscous, "q0": QN, "qd0": qd}).set(tau=tau)
    np.testing.assert_allclose(rig.outputs()["qdd"], viscous.accel(QN, qd, tau), rtol=1e-13)


# --- rne, gravload, inertia -------------------------------------------------------------------

def rne_rig(robot, **params):
    return Rig(Rne, {"robot": robot, **params})


def test_rne_twolink_by_hand_and_the_library():
    q, qd, qdd = RNG.uniform(-2, 2, 2), RNG.uniform(-1, 1, 2), RNG.uniform(-1, 1, 2)
    M, h, g = twolink_by_hand(q, qd)
    tau = rne_rig(TWOLINK).set(q=q, qd=qd, qdd=qdd).out()
    np.testing.assert_allclose(tau, M @ qdd + h + g, rtol=1e-12, atol=1e-12)
    # Puma with full friction: the library's rne (motor inertia and friction included)
    q, qd, qdd = RNG.uniform(-1, 1, 6), RNG.uniform(-1, 1, 6), RNG.uniform(-1, 1, 6)
    tau = rne_rig(PUMA).set(q=q, qd=qd, qdd=qdd).out()
    np.testing.assert_allclose(tau, PUMA.rne(q, qd, qdd), rtol=1e-13)


def test_rne_gravity_parameter():
    q, qd, qdd = np.array([0.3, -0.8]), np.array([0.5, 1.0]), np.array([0.0, 0.2])
    M, h, _ = twolink_by_hand(q, qd)
    tau = rne_rig(TWOLINK, gravity=[0, 0, 0]).set(q=q, qd=qd, qdd=qdd).out()
    np.testing.assert_allclose(tau, M @ qdd + h, rtol=1e-12, atol=1e-12)
    # gravity [0, 2 g0, 0] doubles the hand-derived gravity torque
    _, _, g = twolink_by_hand(q, qd)
    tau = rne_rig(TWOLINK, gravity=[0, 2 * G0, 0]).set(q=q, qd=qd, qdd=qdd).out()
    np.testing.assert_allclose(tau, M @ qdd + h + 2 * g, rtol=1e-12, atol=1e-12)
    with pytest.raises(ParamError):
        rne_rig(TWOLINK, gravity=[0, 9.81])


def test_rne_fext_adds_jacobn_transpose_wrench():
    # Virtual work: a wrench w = [F; M] that the tool exerts on the environment (tool frame,
    # moment about the tool point) absorbs the power w^T [v; omega]_tool = w^T Jn(q) qd for
    # every qd, so the joints must supply tau_extra = Jn(q)^T w on top of the free motion.
    robot = PUMA.configure(tool=tr.transl(0.05, -0.02, 0.1) @ tr.trotx(0.3))
    q, qd, qdd = RNG.uniform(-1, 1, 6), RNG.uniform(-1, 1, 6), RNG.uniform(-1, 1, 6)
    w = np.array([3.0, -2.0, 5.0, 0.4, -0.7, 0.2])
    free = rne_rig(robot).set(q=q, qd=qd, qdd=qdd).out()
    loaded = Rig(Rne, {"robot": robot}, {"fext": (6,)}).set(q=q, qd=qd, qdd=qdd, fext=w).out()
    Jn = Rig(Jacobn, {"robot": robot}).set(q=q).out()
    np.testing.assert_allclose(loaded - free, Jn.T @ w, rtol=1e-11, atol=1e-12)


def test_rne_declares_an_optional_tool_wrench():
    ins, outs = Rig(Rne, {"robot": PUMA}).block.ports()
    assert [p.name for p in ins] == ["q", "qd", "qdd", "fext"]
    assert ins[3].optional and ins[3].shape == (6,) and ins[3].default == 0.0
    assert [(o.name, o.shape, o.feedthrough) for o in outs] == [("tau", (6,), ALL)]


def test_gravload_by_hand_and_published_puma_values():
    q = np.array([0.6, -1.1])
    _, _, g = twolink_by_hand(q, np.zeros(2))
    np.testing.assert_allclose(Rig(GravLoad, {"robot": TWOLINK}).set(q=q).out(), g, rtol=1e-12)
    # robots.md sanity value: gravload(qz) = [0, 37.4837, 0.2489, 0, 0, 0] N m
    np.testing.assert_allclose(Rig(GravLoad, {"robot": PUMA}).out(), [0, 37.4837, 0.2489, 0, 0, 0],
                               atol=5e-5)


def test_inertia_by_hand_and_published_puma_diagonal():
    q = np.array([0.2, 0.9])
    M, _, _ = twolink_by_hand(q, np.zeros(2))
    np.testing.assert_allclose(Rig(Inertia, {"robot": TWOLINK}).set(q=q).out(), M, rtol=1e-12)
    np.testing.assert_array_equal(Rig(Inertia, {"robot": TWOLINK}).out(), [[5, 2], [2, 1]])
    # robots.md: diag M(qz) ~ [3.9611, 4.4566, 0.9387, 0.1924, 0.1713, 0.1941]
    M = Rig(Inertia, {"robot": PUMA}).out()
    np.testing.assert_allclose(np.diag(M), [3.9611, 4.4566, 0.9387, 0.1924, 0.1713, 0.1941],
                               atol=5e-5)


# --- kinematics -------------------------------------------------------------------------------

def test_fkine_twolink_by_hand_and_puma_published_position():
    q = np.array([0.4, -1.2])
    T = Rig(FKine, {"robot": TWOLINK}).set(q=q).out()
    np.testing.assert_allclose(T[:2, 3], [math.cos(0.4) + math.cos(-0.8),
                                          math.sin(0.4) + math.sin(-0.8)], rtol=1e-14)
    np.testing.assert_allclose(T[:3, :3], tr.rotz(-0.8), atol=1e-15)
    T = Rig(FKine, {"robot": PUMA}).out()  # qz: robots.md sanity value
    np.testing.assert_allclose(T[:3, 3], [0.4521, -0.15005, 0.4318], atol=1e-4)
    np.testing.assert_allclose(T[:3, :3], np.eye(3), atol=1e-12)


def test_jacobians_against_finite_differences_of_fkine():
    robot = PUMA.configure(tool=tr.transl(0, 0, 0.2))
    q = RNG.uniform(-1, 1, 6)
    fk = Rig(FKine, {"robot": robot})
    J0 = Rig(Jacob0, {"robot": robot}).set(q=q).out()
    Jn = Rig(Jacobn, {"robot": robot}).set(q=q).out()
    T = fk.set(q=q).out()
    h = 1e-6
    for k in range(6):
        dq = np.zeros(6)
        dq[k] = h
        Tp, Tm = fk.set(q=q + dq).out(), fk.set(q=q - dq).out()
        dT = (Tp - Tm) / (2 * h)                 # dT/dq_k: [dR, dp]
        W = dT[:3, :3] @ T[:3, :3].T             # Sk(omega_k) in the world frame
        column = np.concatenate([dT[:3, 3], [W[2, 1], W[0, 2], W[1, 0]]])
        np.testing.assert_allclose(J0[:, k], column, atol=1e-8)
    R = T[:3, :3]
    np.testing.assert_allclose(Jn, np.vstack([R.T @ J0[:3], R.T @ J0[3:]]), atol=1e-13)


@pytest.fixture(scope="module")
def puma_jacobian():
    return Rig(Jacob0, {"robot": PUMA}).set(q=QN).out()


def ijacob(J, **params):
    return Rig(IJacob, params, {"J": J.shape}).set(J=J).out()


def test_ijacob_inv_of_a_square_jacobian(puma_jacobian):
    Jinv = ijacob(puma_jacobian, method="inv")
    np.testing.assert_allclose(Jinv @ puma_jacobian, np.eye(6), atol=1e-10)
    with pytest.raises(PortError) as e:
        Rig(IJacob, {"method": "inv"}, {"J": (6, 7)})
    assert e.value.port == "J"
    singular = np.zeros((6, 6))
    rig = Rig(IJacob, {"method": "inv"}, {"J": (6, 6)}).set(J=singular)
    with pytest.raises(SimulationError):
        rig.outputs(1.5)


def test_ijacob_pinv_of_a_redundant_jacobian():
    J = RNG.normal(size=(6, 7))
    Jinv = ijacob(J, method="pinv")
    assert Jinv.shape == (7, 6)
    # full row rank: J J^+ = I, and the Penrose conditions (J^+ J symmetric, J^+ J J^+ = J^+)
    np.testing.assert_allclose(J @ Jinv, np.eye(6), atol=1e-12)
    np.testing.assert_allclose(Jinv @ J, (Jinv @ J).T, atol=1e-12)
    np.testing.assert_allclose(Jinv @ J @ Jinv, Jinv, atol=1e-12)


@pytest.mark.parametrize("shape", [(6, 7), (6, 6), (7, 5)])
def test_ijacob_damped_least_squares(shape):
    J = RNG.normal(size=shape)
    lam = 0.3
    Jinv = ijacob(J, method="dls", damping=lam)
    r, c = shape
    # both textbook forms (equal by the push-through identity), with explicit inverses
    right = J.T @ np.linalg.inv(J @ J.T + lam ** 2 * np.eye(r))
    left = np.linalg.inv(J.T @ J + lam ** 2 * np.eye(c)) @ J.T
    np.testing.assert_allclose(Jinv, right, atol=1e-12)
    np.testing.assert_allclose(Jinv, left, atol=1e-12)
    # no damping, full row rank: the pseudo-inverse
    if r <= c:
        np.testing.assert_allclose(ijacob(J, method="dls"), np.linalg.pinv(J), atol=1e-10)


# --- transforms -------------------------------------------------------------------------------

def scalar_rig(cls, **inputs):
    rig = Rig(cls)
    return rig.set(**inputs)


def test_xyz2tr_tr2xyz_round_trip():
    T = scalar_rig(Xyz2Tr, x=0.3, y=-1.2, z=2.5).out()
    np.testing.assert_array_equal(T, tr.transl(0.3, -1.2, 2.5))
    T = tr.transl(0.3, -1.2, 2.5) @ tr.rpy2tr(0.1, 0.2, 0.3)
    out = Rig(Tr2Xyz).set(T=T).outputs()
    assert (out["x"], out["y"], out["z"]) == (0.3, -1.2, 2.5)
    assert all(out[k].shape == () for k in "xyz")
    np.testing.assert_array_equal(out["p"], [0.3, -1.2, 2.5])


ANGLES = [(0.3, 1.1, -2.0), (-2.5, 0.4, 3.0), (1.0, 0.0, 0.5), (0.7, math.pi, -0.2)]


@pytest.mark.parametrize("a, b, c", ANGLES)
def test_euler_blocks_match_the_library_including_singular_cases(a, b, c):
    T = scalar_rig(Eul2Tr, a=a, b=b, c=c).out()
    np.testing.assert_allclose(T, tr.eul2tr(a, b, c), atol=1e-15)
    out = Rig(Tr2Eul).set(T=T).outputs()
    np.testing.assert_allclose([out["a"], out["b"], out["c"]], tr.tr2eul(T), atol=1e-14)
    back = scalar_rig(Eul2Tr, a=out["a"], b=out["b"], c=out["c"]).out()
    np.testing.assert_allclose(back, T, atol=1e-14)


@pytest.mark.parametrize("r, p, y", [(0.3, 1.1, -2.0), (-2.5, -0.4, 3.0), (1.0, math.pi / 2, 0.5)])
def test_rpy_blocks_seed_convention(r, p, y):
    T = scalar_rig(Rpy2Tr, roll=r, pitch=p, yaw=y).out()
    # seed 000: T = Rz(roll) Ry(pitch) Rx(yaw), built here from elementary rotations
    np.testing.assert_allclose(T[:3, :3], tr.rotz(r) @ tr.roty(p) @ tr.rotx(y), atol=1e-15)
    np.testing.assert_array_equal(T[3], [0, 0, 0, 1])
    out = Rig(Tr2Rpy).set(T=T).outputs()
    np.testing.assert_allclose([out["roll"], out["pitch"], out["yaw"]], tr.tr2rpy(T), atol=1e-14)
    back = scalar_rig(Rpy2Tr, roll=out["roll"], pitch=out["pitch"], yaw=out["yaw"]).out()
    np.testing.assert_allclose(back, T, atol=1e-14)


def test_tr2diff_small_motion_and_the_library():
    T1 = tr.transl(0.1, 0.2, 0.3) @ tr.eul2tr(0.4, 0.5, 0.6)
    v, w = np.array([1e-4, -2e-4, 3e-4]), np.array([2e-5, -1e-5, 3e-5])
    # T2: T1 translated by v and turned by the world-frame rotation vector w
    T2 = tr.rotvec(w, np.linalg.norm(w)) @ T1
    T2[:3, 3] = T1[:3, 3] + v
    out = Rig(Tr2Diff).set(T1=T1, T2=T2).out()
    np.testing.assert_allclose(out, tr.tr2diff(T1, T2), atol=1e-16)
    np.testing.assert_allclose(out[:3], v, rtol=1e-12)
    np.testing.assert_allclose(out[3:], w, rtol=1e-4)  # exact to first order in |w| ~ 4e-5


# --- trajectories -----------------------------------------------------------------------------

def test_jtraj_boundaries_midpoint_and_hold():
    q0, qf, tf = PUMA.poses["qz"], PUMA.poses["qr"], 2.0
    rig = Rig(JTraj, {"q0": q0, "qf": qf, "tf": tf}).start(0.0)
    assert rig.block.time_dependent
    out = rig.outputs(0.0)
    np.testing.assert_array_equal(out["q"], q0)
    np.testing.assert_array_equal(out["qd"], np.zeros(6))
    np.testing.assert_array_equal(out["qdd"], np.zeros(6))
    # s(tau) = 10 tau^3 - 15 tau^4 + 6 tau^5: s(1/2) = 1/2, s'(1/2) = 15/8, s''(1/2) = 0
    out = rig.outputs(1.0)
    np.testing.assert_allclose(out["q"], (q0 + qf) / 2, atol=1e-15)
    np.testing.assert_allclose(out["qd"], 15 / 8 * (qf - q0) / tf, atol=1e-14)
    np.testing.assert_allclose(out["qdd"], 0.0, atol=1e-14)
    out = rig.outputs(tf)
    np.testing.assert_allclose(out["q"], qf, atol=1e-15)
    np.testing.assert_allclose(out["qd"], 0.0, atol=1e-14)
    np.testing.assert_allclose(out["qdd"], 0.0, atol=1e-13)
    assert rig.block.events(0.0, 10.0) == (tf,)
    assert rig.block.events(tf, 10.0) == ()
    rig.block.event(tf)
    for t in (tf, 3.0, 100.0):
        out = rig.outputs(t)
        np.testing.assert_array_equal(out["q"], qf)
        np.testing.assert_array_equal(out["qd"], np.zeros(6))
        np.testing.assert_array_equal(out["qdd"], np.zeros(6))


def test_jtraj_boundary_velocities_and_the_library():
    q0, qf, tf = np.array([0.0, 1.0]), np.array([1.0, -1.0]), 1.5
    qd0, qdf = np.array([0.5, 0.0]), np.array([-0.2, 0.3])
    rig = Rig(JTraj, {"q0": q0, "qf": qf, "tf": tf, "qd0": qd0, "qdf": qdf}).start(0.0)
    np.testing.assert_allclose(rig.outputs(0.0)["qd"], qd0, atol=1e-15)
    np.testing.assert_allclose(rig.outputs(tf)["qd"], qdf, atol=1e-14)
    times = np.linspace(0, tf, 7)
    q, qd, qdd = jtraj(q0, qf, times, qd0, qdf)
    for k, t in enumerate(times):
        out = rig.outputs(t)
        np.testing.assert_allclose(out["q"], q[k], atol=1e-14)
        np.testing.assert_allclose(out["qd"], qd[k], atol=1e-13)
        np.testing.assert_allclose(out["qdd"], qdd[k], atol=1e-12)
    # started after tf: holding from the first evaluation, zero rates (qd jumps from qdf)
    late = Rig(JTraj, {"q0": q0, "qf": qf, "tf": tf, "qd0": qd0, "qdf": qdf}).start(2.0)
    np.testing.assert_array_equal(late.outputs(2.0)["qd"], np.zeros(2))


def test_jtraj_scalar_and_shape_errors():
    rig = Rig(JTraj, {"q0": 1.0, "qf": 3.0, "tf": 2.0})
    assert rig.out_shapes == {"q": (), "qd": (), "qdd": ()}
    assert rig.outputs(1.0)["q"] == pytest.approx(2.0, abs=1e-15)
    with pytest.raises(ParamError):
        Rig(JTraj, {"q0": [0, 0], "qf": [1, 1, 1], "tf": 1.0})
    with pytest.raises(ParamError):
        Rig(JTraj, {"q0": 0, "qf": 1, "tf": 0.0})


def test_ctraj_ends_and_midpoint():
    T0 = tr.transl(0.5, 0.0, 0.2)
    T1 = tr.transl(0.3, 0.4, 0.6) @ tr.trotz(1.2)
    rig = Rig(CTraj, {"T0": T0, "T1": T1, "tf": 4.0})
    assert rig.block.time_dependent and rig.block.events(0.0, 10.0) == (4.0,)
    np.testing.assert_allclose(rig.outputs(0.0)["T"], T0, atol=1e-15)
    np.testing.assert_allclose(rig.outputs(4.0)["T"], T1, atol=1e-14)
    np.testing.assert_allclose(rig.outputs(9.0)["T"], T1, atol=1e-15)
    # half time: s = 1/2, halfway along the line and half the rotation about z
    np.testing.assert_allclose(rig.outputs(2.0)["T"], tr.transl(0.4, 0.2, 0.4) @ tr.trotz(0.6),
                               atol=1e-14)


# --- catalogue and the spec's Robotics table --------------------------------------------------

MINE = {"robot", "rne", "gravload", "inertia", "fkine", "jacob0", "jacobn", "ijacob", "tr2diff",
        "xyz2tr", "tr2xyz", "eul2tr", "tr2eul", "rpy2tr", "tr2rpy", "jtraj", "ctraj"}
SPEC = Path(__file__).resolve().parents[1] / "data" / "spec_blocks.md"  # blocks.md's tables
MINIMAL = {"jtraj": {"q0": 0, "qf": 1, "tf": 1}, "ctraj": {"T0": np.eye(4), "T1": np.eye(4), "tf": 1}}


def build(type_name):
    cls = Library().block_class(type_name)
    params = MINIMAL.get(type_name, {"robot": PUMA} if cls.params and cls.params[0].name == "robot"
                         else {})
    probe = cls("probe", convert_params(cls, params))
    wired = {p.name: (6, 6) for p in probe.ports()[0] if p.shape is None}
    return Rig(cls, params, wired)


def robotics_rows():
    """(type, params, inputs, outputs) per type of blocks.md's Robotics table; a row naming
    two types (`eul2tr` / `tr2eul`) has its port cells split on ' / ' outside backticks."""
    section = SPEC.read_text().split("## Robotics", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().split("|")[1:-1]]
        if len(cells) != 5 or not cells[0].startswith("`"):
            continue
        types = re.findall(r"`(\w+)`", cells[0])
        parts = [re.split(r" / (?=`|—)", c) if len(types) > 1 else [c] for c in cells[2:4]]
        for i, name in enumerate(types):
            rows.append((name, cells[1], parts[0][i], parts[1][i]))
    return [r for r in rows if r[0] in MINE]


def names(cell):
    """Port or parameter names of a cell: inside backticks, shapes '(...)' and defaults
    '=...' removed."""
    out = []
    for chunk in re.findall(r"`([^`]*)`", cell):
        for item in re.sub(r"\([^)]*\)", "", chunk).split(","):
            item = item.split("=")[0].strip()
            if item:
                out.append(item)
    return out


@pytest.mark.parametrize("type_name", sorted(MINE))
def test_catalogue_entries_build_and_are_documented(type_name):
    assert BLOCKS[type_name].startswith("blocks.robot.")
    rig = build(type_name)
    assert rig.block.type == type_name
    assert len(type(rig.block).__doc__.strip()) > 40
    assert all(p.doc for p in type(rig.block).params)


def test_parameters_and_ports_match_the_robotics_table():
    rows = robotics_rows()
    assert {r[0] for r in rows} == MINE
    for type_name, params, inputs, outputs in rows:
        rig = build(type_name)
        declared = [p.name for p in type(rig.block).params]
        # the robot block adds coulomb (hybrid.md) and coulomb_band after the spec's parameters
        assert declared[:len(names(params))] == names(params), type_name
        ins, outs = rig.block.ports()
        assert [p.name for p in ins] == names(inputs), type_name
        # ctraj adds its velocity v after the spec's pose T (inputs only when a pose is unset)
        assert [p.name for p in outs][:len(names(outputs))] == names(outputs), type_name
        assert len(outs) == len(names(outputs)) + (type_name == "ctraj"), type_name
