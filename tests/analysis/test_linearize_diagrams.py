"""Linearise (and trim) every diagram of diagrams/ where it makes sense, and check what comes
out against what the control law or the physics says: computed-torque control with an
exact model is e'' + Kd e' + Kp e = 0 on every joint; resolved-rate control
qdot = -0.6 J^-1 e gives poles at -0.6; a free-falling ball is a double integrator; a mass
stuck by friction does not feel a force; a room is a first-order lag."""
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocks.robot import load_robot

DIAGRAMS = Path(__file__).resolve().parents[2] / "diagrams"


def linearize(name, inputs, outputs, **options):
    return blocksim.linearize(DIAGRAMS / name, inputs, outputs, **options)


@pytest.mark.parametrize("name, robot, joints", [("demo3.yaml", "p560p", 6),
                                                 ("scara.yaml", "scarap", 4)])
def test_computed_torque_with_an_exact_model_has_every_pole_at_minus_ten(name, robot, joints):
    # Kp = 100, Kd = 20: s^2 + 20 s + 100 = (s + 10)^2 per joint; the controller's model
    # unperturbed, the start (at rest on the trajectory's start) is an equilibrium
    sys = linearize(name, ["rne.tau"], ["Robot.q"], overrides={f"robots.{robot}.perturb": 0})
    poles = sys.poles()
    assert poles.size == 2 * joints
    # a double pole moves by about the square root of the differences' error
    np.testing.assert_allclose(poles, -10.0, atol=1e-3)


def test_computed_torque_with_the_perturbed_model_stays_near_minus_ten():
    poles = linearize("demo3.yaml", ["rne.tau"], ["Robot.q"], at=0.0).poles()
    assert np.all(poles.real < 0) and np.all(np.abs(poles + 10) < 5)


def test_resolved_rate_control_has_every_pole_at_minus_its_gain():
    # qdot = -0.6 inv(J0(q)) tr2diff(T_d, T(q)): d qdot / dq = -0.6 I where the error is small
    sys = linearize("demo5.yaml", ["Gain.y"], ["axes.y"], at=0.0)
    np.testing.assert_allclose(sys.poles(), -0.6, atol=1e-3)


def test_ibvs_and_the_flexible_and_feedforward_arms_are_stable_loops():
    for name, inputs, outputs, options in (
            ("demo6.yaml", ["Product.y"], ["axes.y"], {"at": 0.0}),
            ("demo2.yaml", ["Sum1.y"], ["Robot.q"], {}),
            ("demo4.yaml", ["jtraj.q"], ["Robot.q"], {"at": 0.0})):
        poles = linearize(name, inputs, outputs, **options).poles()
        assert poles.size and np.all(poles.real < 0), (name, poles)


def test_the_planar_arm_tracks_in_the_task_and_drifts_in_its_null_space():
    # 7 joints, a 2-D task: the task error obeys e'' + 20 e' + 100 e (4 poles at -10), the
    # null-space velocities are damped by Kn = 10 (5 poles at -10), the null-space positions
    # are free (5 poles at 0); the start is not an equilibrium (the tip is 0.05 rad off its
    # path and accelerates), which moves them a little
    poles = linearize("planar7r.yaml", ["CtrlTau.y"], ["Tip.x"], at=0.0).poles()
    assert np.sum(np.abs(poles + 10) < 2) == 9 and np.sum(np.abs(poles) < 0.1) == 5


def test_demo1_at_qz_held_by_its_gravity_torques():
    point = blocksim.trim(DIAGRAMS / "demo1.yaml", fix={"Robot.x[0:12]": 0}, free=["Robot.tau"])
    p560 = load_robot("puma560")
    np.testing.assert_allclose(point.inputs["Robot.tau"], p560.gravload(np.zeros(6)), atol=1e-9)
    sys = linearize("demo1.yaml", ["Robot.tau"], ["Robot.q"], op=point)
    poles = sys.poles()
    # joint 1 turns about the vertical: no gravity stiffness, a free double integrator pole
    assert np.sum(np.abs(poles) < 1e-6) >= 2
    assert np.any(poles.real > 0.1)  # and the arm, left alone, falls


def test_free_fall_and_a_stuck_mass():
    ball = linearize("bouncing_ball.yaml", ["Gravity.y"], ["Position.y"], at=0.0)
    np.testing.assert_array_equal(ball.A, [[0, 0], [1, 0]])  # v' = g, x' = v
    np.testing.assert_array_equal(ball.B, [[1], [0]])
    stuck = linearize("stick_slip.yaml", ["Force.y"], ["Mass.q"], at=0.0)
    np.testing.assert_array_equal(stuck.B, 0)  # at rest, held by Coulomb friction


def test_a_room_held_at_its_setpoint_is_a_first_order_lag():
    point = blocksim.trim(DIAGRAMS / "thermostat.yaml", fix={"Room.x": 20}, free=["Heater.y"])
    # heater on (30 K) and 10 degC outside: holding 20 degC needs 10 K, 20 K less
    assert point.inputs["Heater.y"] == pytest.approx(-20.0)
    room = linearize("thermostat.yaml", ["Outside.y"], ["Room.y"], op=point)
    np.testing.assert_allclose(room.A, [[-1 / 600]], rtol=1e-12)  # tau T' = T_out - T + h
    np.testing.assert_allclose(room.dcgain(), 1.0)
