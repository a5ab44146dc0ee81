"""Friction values are validated where they are written (Tc = [Tc+, Tc-] with Tc+ >= 0 >= Tc-,
B >= 0), and a built-in model takes friction and gravity values of the diagram's own."""
import math

import numpy as np
import pytest

from blocks.robot import RobotDataError, load_robot, robot_from_dict
from blocks.robot.link import Link
from blocksim.errors import DiagramError

G = 9.81


def arm(**link):
    return {"links": [{"a": 1, "m": 1}, {"a": 1, "m": 1, **link}]}


@pytest.mark.parametrize("value, message", [
    ([2, 2], r"links\[1\]: Tc = \[2, 2\]: Coulomb friction is \[Tc\+, Tc-\], the friction torque "
             r".* at positive and at negative joint velocity.*Tc\+ >= 0 and Tc- <= 0 "
             r"\(did you mean \[2, -2\]\?\)"),
    ([-0.1, -0.2], r"Tc = \[-0.1, -0.2\].* \(did you mean \[0.1, -0.2\]\?\)"),
    ([0.3, 0.1], r"Tc = \[0.3, 0.1\]"),
    (-0.3, r"Tc = -0.3: one value t means \[Tc\+, Tc-\] = \[t, -t\], so t >= 0"),
])
def test_coulomb_friction_that_would_push_is_refused_with_its_meaning(value, message):
    with pytest.raises(RobotDataError, match=message):
        robot_from_dict(arm(Tc=value))


def test_negative_viscous_friction_is_refused():
    with pytest.raises(RobotDataError, match=r"links\[1\]: B = -0.01: viscous friction .* B >= 0"):
        robot_from_dict(arm(B=-0.01))


def test_valid_friction_is_the_toolbox_formula():
    """F(qd) = |G|·(B·|G|·qd + Tc+) for qd > 0, with Tc- for qd < 0, 0 at rest (robots spec)."""
    robot = robot_from_dict(arm(B=0.02, Tc=[0.4, -0.25], G=-3))
    for qd, tc in ((0.5, 0.4), (-0.5, -0.25), (0.0, 0.0)):
        expected = 3 * (0.02 * 3 * qd + tc)
        assert robot.friction([0.0, qd])[1] == pytest.approx(expected, abs=1e-15)


def test_a_link_and_a_twist_robot_check_their_friction_too():
    with pytest.raises(ValueError, match=r"Tc = \[1, 1\]"):
        Link(Tc=[1, 1])
    scara = load_robot("twolink")
    with pytest.raises(ValueError, match=r"joint 2: Tc = \[1, 1\]"):
        scara.configure(Tc=[[0, 0], [1, 1]])


def test_twolink_is_horizontal_and_frictionless():
    """The built-in twolink lies in the XY plane with gravity along z: no joint torque holds
    it anywhere (gravload = 0), and it has no friction (docs/robots.md says so)."""
    tl = load_robot("twolink")
    for q in ([0, 0], [0.7, -1.9], [math.pi / 2, 0.3]):
        np.testing.assert_allclose(tl.gravload(q), 0.0, atol=1e-12)
    assert not tl.B.any() and not tl.Tc.any()


def run_twolink(run_diagram, options, **overrides):
    return run_diagram(f"""
blocksim: 1
robots:
  tl: {{model: twolink, {options}}}
blocks:
  tau: {{type: constant, value: [0, 0]}}
  Robot: {{type: robot, robot: tl}}
  Load: {{type: gravload, robot: tl}}
wires: [tau -> Robot, Robot.q -> Load]
simulation: {{stop: 0.01, output_interval: 0.01}}
record: {{q: Robot.q, g: Load.tau}}
""", **overrides)


def test_a_built_in_model_takes_gravity_and_friction_values(run_diagram):
    """twolink made vertical (gravity along +y: weight acts in -y) and given friction. At
    q = 0 the arm lies along x with unit masses at x = 1 and x = 2: holding it takes
    tau1 = g·(1 + 2), tau2 = g·1 (by hand). Released at rest it falls (q1 decreases), the
    friction opposing: slower than without it."""
    free = run_twolink(run_diagram, "gravity: [0, 9.81, 0]")
    np.testing.assert_allclose(free["g"][0], [3 * G, G], rtol=1e-12)
    braked = run_twolink(run_diagram, "gravity: [0, 9.81, 0], B: 0.5, Tc: [[0.2, -0.1], [0.3, -0.4]]")
    np.testing.assert_allclose(braked["g"][0], [3 * G, G], rtol=1e-12)
    assert free["q"][-1, 0] < braked["q"][-1, 0] < 0


def test_friction_values_per_joint_and_friction_option_after_them():
    tl = load_robot("twolink")
    np.testing.assert_array_equal(tl.configure(Tc=[0.2, 0.3]).Tc, [[0.2, -0.2], [0.3, -0.3]])
    np.testing.assert_array_equal(tl.configure(Tc=[[0.2, -0.1], [0.3, -0.4]]).Tc,
                                  [[0.2, -0.1], [0.3, -0.4]])
    np.testing.assert_array_equal(tl.configure(Tc=0.2, B=[0.1, 0.2]).B, [0.1, 0.2])
    viscous = tl.configure(Tc=0.2, B=0.1, friction="viscous")
    assert not viscous.Tc.any() and viscous.B.tolist() == [0.1, 0.1]
    none = tl.configure(Tc=0.2, B=0.1, friction="none")
    assert not none.Tc.any() and not none.B.any()


@pytest.mark.parametrize("options, message", [
    ("Tc: [[2, 2], [0, 0]]", r"d.yaml:4: error: robot 'tl': Tc: joint 1: Tc = \[2, 2\]: "
                             r".*did you mean \[2, -2\]"),
    # one value per joint, each t meaning [t, -t]: a pair [Tc+, Tc-] per joint is a list of pairs
    ("Tc: [0.2, -0.1]", r"robot 'tl': Tc: joint 2: Tc = -0.1: one value t means"),
    ("B: -0.5", r"robot 'tl': B: joint 1: B = -0.5: viscous friction"),
    ("B: [0.1, 0.2, 0.3]", r"robot 'tl': B: B must be one value or 2 \(one per joint\)"),
    ("Tc: [[1, -1, 0]]", r"robot 'tl': Tc: Tc must be one value t, 2 values"),
])
def test_friction_options_are_checked_at_their_line(run_diagram, options, message):
    with pytest.raises(DiagramError, match=message):
        run_twolink(run_diagram, options)
