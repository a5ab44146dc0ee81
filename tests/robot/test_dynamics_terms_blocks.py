"""coriolis, jacob_dot, energy and ikine blocks against independent truth: rne (a second
algorithm), finite differences, a two-link arm by hand, energy conservation of a
frictionless arm falling under gravity, and the fkine round trip."""
import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "blocks"))
from harness import Rig  # noqa: E402

from blocks.robot import transforms as tr  # noqa: E402
from blocks.robot.dynamics_blocks import Coriolis, Energy  # noqa: E402
from blocks.robot.ikine_block import IKine  # noqa: E402
from blocks.robot.kinematics_blocks import JacobDot  # noqa: E402
from blocks.robot.models import load_robot  # noqa: E402
from blocksim.errors import SimulationError  # noqa: E402
from blocksim.params import ParamError  # noqa: E402

RNG = np.random.default_rng(26)
PUMA = load_robot("puma560")
RIGID = PUMA.nofriction("all")            # rne without friction: M qdd + C qd + g
QN = PUMA.poses["qn"]
STATES = [(RNG.uniform(-2, 2, 6), RNG.uniform(-1.5, 1.5, 6)) for _ in range(4)]


@pytest.mark.parametrize("q, qd", STATES)
def test_coriolis_times_qd_is_the_velocity_torque_of_rne(q, qd):
    C = Rig(Coriolis, {"robot": RIGID}).set(q=q, qd=qd).out()
    np.testing.assert_allclose(C @ qd, RIGID.rne(q, qd, np.zeros(6)) - RIGID.gravload(q),
                               atol=1e-12)


@pytest.mark.parametrize("q, qd", STATES)
def test_mdot_minus_two_c_is_skew_symmetric(q, qd):
    """dM/dt along qd by central differences of the inertia matrix (a different algorithm:
    composite rigid bodies); N = dM/dt - 2C must satisfy N + N^T = 0."""
    C = Rig(Coriolis, {"robot": PUMA}).set(q=q, qd=qd).out()
    h = 1e-6
    Mdot = (PUMA.inertia(q + h * qd) - PUMA.inertia(q - h * qd)) / (2 * h)
    N = Mdot - 2 * C
    np.testing.assert_allclose(N + N.T, 0.0, atol=1e-8)
    assert np.abs(N).max() > 1e-2           # not trivially zero


@pytest.mark.parametrize("q, qd", STATES)
def test_jacob_dot_is_the_rate_of_the_jacobian_along_qd(q, qd):
    got = Rig(JacobDot, {"robot": PUMA}).set(q=q, qd=qd).out()
    h = 1e-6
    Jdot = (PUMA.jacob0(q + h * qd) - PUMA.jacob0(q - h * qd)) / (2 * h)
    np.testing.assert_allclose(got, Jdot @ qd, atol=1e-7)
    assert np.abs(got).max() > 0.1


# --- energy -------------------------------------------------------------------------------------

def test_energy_of_the_two_link_arm_by_hand():
    """twolink: unit point masses at the ends of unit links; with gravity g0 along -y
    (the vector [0, g0, 0] models it), V = g0 (y1 + y2) = g0 (2 sin q1 + sin(q1 + q2)) and
    K = qd^T M qd / 2 with M = [[3 + 2 cos q2, 1 + cos q2], [1 + cos q2, 1]] (Lagrange)."""
    g0 = 9.81
    arm = load_robot("twolink").configure(gravity=[0.0, g0, 0.0])
    rig = Rig(Energy, {"robot": arm})
    for q, qd in [((0.3, -0.7), (1.1, 0.4)), ((2.0, 1.0), (-0.5, 2.0))]:
        out = rig.set(q=q, qd=qd).outputs()
        c2 = math.cos(q[1])
        M = np.array([[3 + 2 * c2, 1 + c2], [1 + c2, 1.0]])
        kinetic = 0.5 * np.asarray(qd) @ M @ np.asarray(qd)
        potential = g0 * (2 * math.sin(q[0]) + math.sin(q[0] + q[1]))
        assert float(out["kinetic"]) == pytest.approx(kinetic, rel=1e-13)
        assert float(out["potential"]) == pytest.approx(potential, rel=1e-13, abs=1e-13)
        assert float(out["total"]) == pytest.approx(kinetic + potential, rel=1e-13)


@pytest.mark.parametrize("q, qd", STATES[:2])
def test_potential_energy_gradient_is_gravload(q, qd):
    """dV/dq by central differences equals rne's gravity torque (base, offsets, gravity and
    the motor inertias all of the Puma as shipped)."""
    rig = Rig(Energy, {"robot": PUMA})
    h = 1e-6
    grad = np.empty(6)
    for j in range(6):
        dq = np.zeros(6)
        dq[j] = h
        up = float(rig.set(q=q + dq, qd=qd).outputs()["potential"])
        down = float(rig.set(q=q - dq, qd=qd).outputs()["potential"])
        grad[j] = (up - down) / (2 * h)
    np.testing.assert_allclose(grad, PUMA.gravload(q), atol=1e-6)
    out = rig.set(q=q, qd=qd).outputs()
    assert float(out["kinetic"]) == pytest.approx(0.5 * qd @ PUMA.inertia(q) @ qd, rel=1e-13)


DEMO1 = """
blocksim: 1
name: demo1_energy
robots:
  p560: {{model: puma560, friction: {friction}}}
blocks:
  torque: {{type: constant, value: zeros(6)}}
  Robot:  {{type: robot, robot: p560, q0: qz}}
  E:      {{type: energy, robot: p560}}
wires: [torque -> Robot.tau, Robot.q -> E.q, Robot.qd -> E.qd]
simulation: {{solver: rk45, rtol: 1e-10, atol: 1e-12, stop: 1}}
record: {{E: E.total, K: E.kinetic, V: E.potential}}
"""


def test_a_frictionless_arm_falling_under_gravity_keeps_its_energy(run_diagram):
    """demo1 (the Puma collapsing from qz with zero torque) without friction: the total
    energy stays at its start while several joules move from potential to kinetic."""
    result = run_diagram(DEMO1.format(friction="none"))
    E, K = result["E"], result["K"]
    assert K[0] == 0.0 and K.max() > 5.0
    assert np.abs(E - E[0]).max() < 1e-6 * K.max()


def test_viscous_friction_only_takes_energy_away(run_diagram):
    result = run_diagram(DEMO1.format(friction="viscous"))
    E = result["E"]
    assert (np.diff(E) <= 1e-9).all() and E[0] - E[-1] > 0.1


# --- ikine --------------------------------------------------------------------------------------

def test_analytic_ikine_round_trip_on_the_puma():
    rig = Rig(IKine, {"robot": PUMA, "method": "analytic", "config": "rdn"})
    for _ in range(20):
        q = RNG.uniform(-2.5, 2.5, 6)
        T = PUMA.fkine(q)
        got = rig.set(T=T).out()
        np.testing.assert_allclose(PUMA.fkine(got), T, atol=1e-12)


def test_numerical_ikine_round_trip_from_its_initial_estimate():
    rig = Rig(IKine, {"robot": PUMA, "q0": QN})
    for _ in range(5):
        q = QN + RNG.uniform(-0.3, 0.3, 6)
        T = PUMA.fkine(q)
        got = rig.set(T=T).out()
        np.testing.assert_allclose(PUMA.fkine(got), T, atol=1e-9)
        # the branch near q0; qn's q3 = pi lies outside its limits [-225, 45] deg, so q0's
        # q3 starts a turn lower, at -pi, and the answer's q3 is the same angle
        np.testing.assert_allclose(np.angle(np.exp(1j * (got - q))), 0.0, atol=1e-6)
        np.testing.assert_allclose(np.delete(got - q, 2), 0.0, atol=1e-6)
    # a function of T alone: the same pose gives the same answer whatever came before
    T = PUMA.fkine(QN + 0.1)
    first = rig.set(T=T).out()
    rig.set(T=PUMA.fkine(QN - 0.2)).out()
    np.testing.assert_array_equal(rig.set(T=T).out(), first)


def test_numerical_ikine_block_leaves_a_joint_inside_its_limits_where_it_is():
    # the Puma's q6 may lie anywhere in +-266 deg: targets with q6 from 2.4 to 2.9 rad come
    # back as themselves (they came back a turn lower), as the generating q is the solution
    # nearest q0 (roboticstoolbox-python 1.5.0's ikine_LM from q0 = q returns q6 = 2.5)
    q0 = np.array([0.3, 0.6, -0.5, 0.4, 0.7, 2.5])
    rig = Rig(IKine, {"robot": PUMA, "q0": q0})
    for dq6 in (-0.1, 0.0, 0.2, 0.4):
        q = q0 + [0.05, -0.03, 0.02, 0.04, -0.05, dq6]
        np.testing.assert_allclose(rig.set(T=PUMA.fkine(q)).out(), q, atol=1e-9)


def test_ikine_in_a_diagram_follows_a_cartesian_path(run_diagram):
    T0 = PUMA.fkine(QN)
    T1 = T0 @ tr.transl(0.1, -0.05, 0.1) @ tr.troty(0.2)
    text = f"""
blocksim: 1
robots: {{p560: {{model: puma560}}}}
blocks:
  path: {{type: ctraj, T0: {T0.tolist()}, T1: {T1.tolist()}, tf: 1}}
  ik: {{type: ikine, robot: p560, method: analytic, config: lun}}
  ikn: {{type: ikine, robot: p560, q0: qn}}
  fk: {{type: fkine, robot: p560}}
  fkn: {{type: fkine, robot: p560}}
wires: [path.T -> ik, ik -> fk, path.T -> ikn, ikn -> fkn]
simulation: {{stop: 1, solver: rk4, step: 0.1}}
record: {{T: path.T, Ta: fk.T, Tn: fkn.T}}
"""
    result = run_diagram(text)
    np.testing.assert_allclose(result["Ta"], result["T"], atol=1e-12)
    np.testing.assert_allclose(result["Tn"], result["T"], atol=1e-9)
    np.testing.assert_allclose(result["T"][-1], T1, atol=1e-14)


def test_ikine_errors_name_the_block_and_time():
    rig = Rig(IKine, {"robot": PUMA, "method": "analytic"}, name="ik")
    rig.set(T=tr.transl(5.0, 0.0, 0.0))
    with pytest.raises(SimulationError) as e:
        rig.outputs(0.25)
    assert e.value.block == "ik" and e.value.time == 0.25 and "out of reach" in str(e.value)
    with pytest.raises(ParamError) as e:
        Rig(IKine, {"robot": load_robot("twolink"), "method": "analytic"})
    assert e.value.param == "method" and "numerical" in str(e.value)
    with pytest.raises(ParamError) as e:
        Rig(IKine, {"robot": PUMA, "method": "analytic", "config": "lrx"})
    assert e.value.param == "config"
    with pytest.raises(ParamError) as e:
        Rig(IKine, {"robot": PUMA, "q0": [1, 2]})
    assert e.value.param == "q0"
