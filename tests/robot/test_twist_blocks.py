"""A twist-defined robot in diagrams: the `robots:` entry, the robot blocks driven by a
TwistRobot, and diagrams/scara.yaml against seed 004 example 3.1's closed form."""
import math
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "blocks"))
from harness import Rig  # noqa: E402

import blocksim  # noqa: E402
from blocks.robot import transl  # noqa: E402
from blocks.robot.dynamics_blocks import GravLoad, Inertia, Rne, Robot  # noqa: E402
from blocks.robot.kinematics_blocks import FKine, Jacob0, Jacobn  # noqa: E402
from blocks.robot.trajectory import jtraj  # noqa: E402
from blocks.robot.twists import TwistRobot, screw, translation  # noqa: E402
from blocksim.errors import DiagramError  # noqa: E402

DIAGRAMS = Path(__file__).resolve().parents[2] / "diagrams"
RNG = np.random.default_rng(11)
L0, L1, L2 = 0.4, 0.35, 0.3
Z = np.array([0.0, 0.0, 1.0])


def scara_closed_form(s):
    """Rst printed in seed 004 §4.1 (example 3.1), l0, l1, l2 as in diagrams/scara.yaml."""
    s1, s2, s3, s4 = s
    c, sn = math.cos(s1 + s2 + s3), math.sin(s1 + s2 + s3)
    return np.array([[c, -sn, 0, -math.sin(s1 + s2) * L2 - math.sin(s1) * L1],
                     [sn, c, 0, math.cos(s1 + s2) * L2 + math.cos(s1) * L1],
                     [0, 0, 1, L0 + s4], [0, 0, 0, 1]])


def scara(**kw):
    """Example 3.1's SCARA with masses on link frames at the joint axes, Coulomb friction."""
    tw = [screw(Z, [0, 0, 0]), screw(Z, [0, L1, 0]), screw(Z, [0, L1 + L2, 0]), translation(Z)]
    frames = [transl(0, 0, L0), transl(0, L1, L0), transl(0, L1 + L2, L0), transl(0, L1 + L2, L0)]
    return TwistRobot(tw, transl(0, L1 + L2, L0), frames=frames, m=[4, 3, 0.5, 1],
                      r=[[0, L1 / 2, 0], [0, L2 / 2, 0], [0, 0, 0], [0, 0, -0.05]],
                      I=[[0.04, 0.004, 0.04, 0, 0, 0], [0.02, 0.003, 0.02, 0, 0, 0],
                         [4e-4, 4e-4, 6e-4, 0, 0, 0], [2e-3, 2e-3, 5e-4, 0, 0, 0]],
                      Jm=[2e-4, 2e-4, 1e-4, 1e-4], G=[50, 50, 20, 30], B=[1e-3] * 4,
                      Tc=[[0.2, -0.25]] * 4, name="scara", **kw)


ROBOT = scara()


def test_kinematics_blocks_with_a_twist_robot():
    for _ in range(3):
        q = RNG.uniform(-2, 2, 4)
        T = Rig(FKine, {"robot": ROBOT}).set(q=q).out()
        np.testing.assert_allclose(T, scara_closed_form(q), atol=1e-14)
        np.testing.assert_allclose(Rig(Jacob0, {"robot": ROBOT}).set(q=q).out(), ROBOT.jacob0(q))
        np.testing.assert_allclose(Rig(Jacobn, {"robot": ROBOT}).set(q=q).out(), ROBOT.jacobn(q))
        # the derivatives of example 3.1's tool point x = -l1 s1 - l2 s12,
        # y = l1 c1 + l2 c12, z = l0 + q4, and ω = (q1' + q2' + q3') z
        s1, s12, c1, c12 = math.sin(q[0]), math.sin(q[0] + q[1]), math.cos(q[0]), math.cos(q[0] + q[1])
        J = Rig(Jacob0, {"robot": ROBOT}).set(q=q).out()
        np.testing.assert_allclose(J[:3], [[-L1 * c1 - L2 * c12, -L2 * c12, 0, 0],
                                           [-L1 * s1 - L2 * s12, -L2 * s12, 0, 0],
                                           [0, 0, 0, 1]], atol=1e-14)
        np.testing.assert_allclose(J[3:], [[0] * 4, [0] * 4, [1, 1, 1, 0]], atol=1e-15)


def test_dynamics_blocks_with_a_twist_robot():
    q, qd, qdd = RNG.uniform(-1, 1, (3, 4))
    f = RNG.normal(size=6)
    rig = Rig(Rne, {"robot": ROBOT}, inputs={"fext": (6,)}).set(q=q, qd=qd, qdd=qdd, fext=f)
    np.testing.assert_allclose(rig.out(), ROBOT.rne(q, qd, qdd, fext=f), rtol=1e-13)
    rig = Rig(Rne, {"robot": ROBOT, "gravity": [0, 0, 0]}).set(q=q, qd=qd, qdd=qdd)
    np.testing.assert_allclose(rig.out(), ROBOT.rne(q, qd, qdd, gravity=[0, 0, 0]), rtol=1e-13)
    # gravity (0, 0, 9.81) loads only the vertical quill: g(q) = (0, 0, 0, m4·9.81)
    np.testing.assert_allclose(Rig(GravLoad, {"robot": ROBOT}).set(q=q).out(),
                               [0, 0, 0, 1.0 * 9.81], atol=1e-13)
    np.testing.assert_allclose(Rig(Inertia, {"robot": ROBOT}).set(q=q).out(), ROBOT.inertia(q))
    # the plant: outside the Coulomb band the block's acceleration is the library's accel
    qd = np.array([0.3, -0.2, 0.5, -0.1])
    tau = RNG.uniform(-3, 3, 4)
    rig = Rig(Robot, {"robot": ROBOT, "q0": q, "qd0": qd}).set(tau=tau)
    np.testing.assert_allclose(rig.outputs()["qdd"], ROBOT.accel(q, qd, tau), rtol=1e-12)
    np.testing.assert_allclose(ROBOT.rne(q, qd, rig.y["qdd"]), tau, atol=1e-11)


def write(tmp_path, text):
    path = tmp_path / "twist.yaml"
    path.write_text(textwrap.dedent(text))
    return path


SCARA_ENTRY = """\
    blocksim: 1
    robots:
      arm:
        twists:
          - {w: [0, 0, 1], q: [0, 0, 0]}
          - [0.35, 0, 0, 0, 0, 1]
          - {w: [0, 0, 1], q: [0, 0.65, 0]}
          - {v: [0, 0, 1]}
        home: transl(0, 0.65, 0.4)
        %s
    blocks:
      traj: {type: jtraj, q0: [0, 0, 0, 0], qf: [1, -1, 0.5, -0.1], tf: 1}
      F:    {type: fkine, robot: arm}
    wires: [traj.q -> F]
    simulation: {stop: 1, output_interval: 0.25}
    record: {T: F.T, q: traj.q}
    """


def test_a_twist_robot_in_a_diagram(tmp_path):
    r = blocksim.run(write(tmp_path, SCARA_ENTRY % "poses: {qz: [0, 0, 0, 0]}"))
    for q, T in zip(r["q"], r["T"]):
        np.testing.assert_allclose(T, scara_closed_form(q), atol=1e-14)
    np.testing.assert_allclose(r["q"], jtraj([0, 0, 0, 0], [1, -1, 0.5, -0.1], r.t)[0])


@pytest.mark.parametrize("extra, line, words", [
    ("links: [{m: 1}]", 10, ["links must be a list of 4"]),
    ("links: [{m: 1}, {m: 1}, {qlimit: [0, 1]}, {}]", 10,
     ["links[2]", "unknown key 'qlimit'", "did you mean 'qlim'"]),
    ("links: [{frame: eye(3)}, {}, {}, {}]", 10, ["links[0].frame", "(4, 4)"]),
    ("convention: standard", 10, ["'convention' belongs to a DH robot"]),
    ("tool: eye(3)", 10, ["'tool'", "(4, 4)"]),
])
def test_twist_robot_errors_are_located(tmp_path, extra, line, words):
    with pytest.raises(DiagramError) as e:
        blocksim.load(write(tmp_path, SCARA_ENTRY % extra))
    assert e.value.line == line
    for w in words:
        assert w in str(e.value)


@pytest.mark.parametrize("robot, line, words", [
    ("{twists: [{w: [0, 0, 1], p: [0, 0, 0]}], home: eye(4)}", 3, ["twists[0]", "unknown key 'p'"]),
    ("{twists: [[0, 0, 0, 0, 0, 2]], home: eye(4)}", 3, ["twist 0", "unit vector"]),
    ("{twists: [{w: [0, 0, 1]}], home: eye(4)}", 3, ["needs 'w' (axis) and 'q'"]),
    ("{twists: [{v: [0, 0, 1]}]}", 3, ["needs 'home'"]),
    ("{model: puma560, home: eye(4)}", 3, ["'home' belongs to a twist robot"]),
    ("{twists: [], home: eye(4)}", 3, ["non-empty list"]),
])
def test_twist_robot_entry_errors(tmp_path, robot, line, words):
    text = f"""\
    blocksim: 1
    robots:
      arm: {robot}
    blocks:
      A: {{type: constant, value: 0}}
      T: {{type: terminator}}
    wires: [A -> T]
    simulation: {{stop: 1}}
    """
    with pytest.raises(DiagramError) as e:
        blocksim.load(write(tmp_path, text))
    assert e.value.line == line
    for w in words:
        assert w in str(e.value)


def test_scara_diagram_tracks_the_trajectory():
    r = blocksim.run(DIAGRAMS / "scara.yaml")
    q = r["q"]
    # the recorded tool position is example 3.1's closed form at the recorded joint angles
    for qk, p in zip(q, r["p"]):
        np.testing.assert_allclose(p, scara_closed_form(qk)[:3, 3], atol=1e-14)
    # computed torque with a 10 % perturbed model: the error stays at the millimetre scale and
    # the arm ends near qf = (π/2, -π/2, π/4, -0.15); the quill's gravity is misjudged by the
    # model, a steady offset e4 = -(m̂4 - m4)·g/(m̂4·Kp) of a few millimetres
    assert np.abs(r["e"]).max() < 0.01
    np.testing.assert_allclose(q[-1, :3], [math.pi / 2, -math.pi / 2, math.pi / 4], atol=1e-3)
    assert abs(q[-1, 3] + 0.15) < 0.01
    # with the exact model, rne is the plant's inverse: the error is integration noise
    exact = blocksim.run(DIAGRAMS / "scara.yaml", overrides={"robots.scarap.perturb": 0})
    assert np.abs(exact["e"]).max() < 1e-6
