"""Robot functions in expressions (fkine(p560, qz), ikine, jacob0, ...): they come from the
block library (catalog SECTION_FUNCTIONS), take a robot of the diagram's robots: section by
name, and compute what the robot object computes."""
import numpy as np
import pytest

import blocksim
from blocks.catalog import SECTION_FUNCTIONS
from blocks.robot import load_robot
from blocks.robot.expressions import FUNCTIONS
from blocksim.errors import DiagramError
from blocksim.language import expr

PUMA = load_robot("puma560")
QZ, QN = PUMA.poses["qz"], PUMA.poses["qn"]


def diagram(parameters, blocks="", wires="[]", record="{}"):
    return f"""
blocksim: 1
parameters:
{parameters}
robots:
  p560: {{model: puma560}}
blocks:
  Zero: {{type: constant, value: 0}}
{blocks}
wires: {wires}
simulation: {{stop: 1, output_interval: 0.5}}
record: {record}
"""


def test_the_engine_has_no_robot_functions_of_its_own():
    """They come in from the library, for diagrams that have robots."""
    assert not set(FUNCTIONS) & set(expr.FUNCTIONS)
    assert SECTION_FUNCTIONS == {"robots": "blocks.robot.expressions:FUNCTIONS"}
    assert all(f.subject == "robots" for f in FUNCTIONS.values())


def test_ctraj_starts_at_fkine_of_a_pose(run_diagram):
    """The issue's case: a ctraj's T0 as fkine(p560, qz) instead of 16 pasted numbers. At
    t = 0 the trajectory is fkine(qz) as the robot object computes it, whose position is the
    published (0.4521, -0.15005, 0.4318) with the identity rotation (robots spec)."""
    result = run_diagram(diagram(
        "  T0: fkine(p560, qz)\n  T1: fkine(p560, qz) @ transl(0, 0.1, 0)",
        "  traj: {type: ctraj, T0: T0, T1: T1, tf: 1}", record="{T: traj.T}"))
    np.testing.assert_allclose(result["T"][0], PUMA.fkine(QZ), atol=1e-15)
    np.testing.assert_allclose(result["T"][0][:3, 3], [0.4521, -0.15005, 0.4318], atol=5e-5)
    np.testing.assert_allclose(result["T"][0][:3, :3], np.eye(3), atol=1e-15)
    # the end: 0.1 m along the tool's y axis, which at qz is the world's y
    np.testing.assert_allclose(result["T"][-1][:3, 3], [0.4521, -0.05005, 0.4318], atol=5e-5)


def test_each_function_is_the_robots_method(run_diagram):
    """In parameters and in a function block (computed at run time on its input)."""
    result = run_diagram(diagram(
        "  T: fkine(p560, qn) @ transl(0.05, -0.02, 0.03)\n"
        "  q1: ikine(p560, T, qn)\n"
        "  J0: jacob0(p560, p560.qn)\n  Jn: jacobn(p560, qn)\n"
        "  g: gravload(p560, qz)\n  M: inertia(p560, qz)",
        "  Q: {type: constant, value: q1}\n"
        "  Pose: {type: function, expr: 'fkine(p560, u)'}\n"
        "  Pack: {type: function, expr: '[sum(J0), sum(Jn), sum(g), sum(M)]', inputs: []}",
        "[Q -> Pose]", "{T: Pose.y, q1: Q.y, sums: Pack.y}"))
    T = PUMA.fkine(QN) @ np.array([[1, 0, 0, 0.05], [0, 1, 0, -0.02], [0, 0, 1, 0.03],
                                   [0, 0, 0, 1]])
    # ikine's round trip: the tool pose of its answer is the pose asked for
    np.testing.assert_allclose(result["T"][0], T, atol=1e-9)
    np.testing.assert_allclose(PUMA.fkine(result["q1"][0]), T, atol=1e-9)
    expected = [PUMA.jacob0(QN).sum(), PUMA.jacobn(QN).sum(), PUMA.gravload(QZ).sum(),
                PUMA.inertia(QZ).sum()]
    np.testing.assert_allclose(result["sums"][0], expected, rtol=1e-14)


def test_ikine_with_a_mask_reaches_a_position_with_three_joints(run_diagram):
    """ikine(arm, T, q0, mask): a 3-joint arm matches a position only (it was refused,
    'takes 2 to 3 arguments, got 4'). By hand for this elbow arm (d1 = 0.3, a2 = 0.5,
    a3 = 0.4): at (0.4, 0.3, 0.5), q1 = atan2(0.3, 0.4), r = 0.5, z = 0.5 - d1 = 0.2,
    cos q3 = (r^2 + z^2 - a2^2 - a3^2) / (2 a2 a3) = -0.3 (elbow q3 > 0 from q0 here),
    q2 = atan2(z, r) - atan2(a3 sin q3, a2 + a3 cos q3)."""
    text = """
blocksim: 1
parameters:
  q1: ikine(arm, transl(0.4, 0.3, 0.5), [0.1, 0.5, 0.5], [1, 1, 1, 0, 0, 0])
robots:
  arm: {links: [{alpha: pi/2, d: 0.3}, {a: 0.5}, {a: 0.4}]}
blocks:
  Q: {type: constant, value: q1}
simulation: {stop: 1, output_interval: 0.5}
record: {q: Q.y}
"""
    q3 = np.arccos(-0.3)
    q2 = np.arctan2(0.2, 0.5) - np.arctan2(0.4 * np.sin(q3), 0.5 + 0.4 * np.cos(q3))
    np.testing.assert_allclose(run_diagram(text)["q"][0], [np.arctan2(0.3, 0.4), q2, q3],
                               atol=1e-9)


def test_ikine_in_a_function_block_follows_its_input_pose(run_diagram):
    """A function block's ikine(arm, T, q0, mask) on a pose from its input: its output's
    shape is found without solving the probe's stand-in pose (zeros, no pose at all: the
    block was refused, 'Non-positive determinant ... in rotation matrix'), a T of another
    shape is still refused, and it follows the pose that fkine makes of a joint path, as
    the ikine block does (both from q0 each time: the same numbers)."""
    text = """
blocksim: 1
robots:
  arm: {links: [{alpha: pi/2, d: 0.3}, {a: 0.5}, {a: 0.4}]}
blocks:
  Path: {type: jtraj, q0: [0.2, 0.4, 0.6], qf: [0.6, 0.2, 1.0], tf: 1}
  Pose: {type: fkine, robot: arm}
  Solve: {type: function, inputs: [T],
          expr: "ikine(arm, T, [0.1, 0.5, 0.5], [1, 1, 1, 0, 0, 0])"}
  Block: {type: ikine, robot: arm, q0: [0.1, 0.5, 0.5], mask: [1, 1, 1, 0, 0, 0]}
wires: [Path.q -> Pose, Pose -> Solve, Pose -> Block]
simulation: {stop: 1, output_interval: 0.25}
record: {q: Path.q, solved: Solve.y, block: Block.q}
"""
    result = run_diagram(text)
    np.testing.assert_allclose(result["solved"], result["q"], atol=1e-9)
    np.testing.assert_array_equal(result["solved"], result["block"])
    with pytest.raises(DiagramError, match=r"ikine\(\) needs a 4x4 pose, got shape \(3, 3\)"):
        run_diagram(text.replace("ikine(arm, T,", "ikine(arm, T[0:3, 0:3],"))


def test_jacob0_is_the_derivative_of_fkine():
    """jacob0(p560, q) against central differences of fkine(p560, q) (position rows, and
    the angular rows from dR R^T), all through expressions."""
    robots = {"p560": PUMA}
    functions = {**{n: f.bound(robots) for n, f in FUNCTIONS.items()}, **expr.FUNCTIONS}
    q = np.array([0.3, -0.4, 0.9, 0.2, -0.7, 1.1])
    names = {"q": q}
    J = expr.evaluate("jacob0(p560, q)", names, functions=functions)
    h = 1e-6
    for j in range(6):
        dq = np.zeros(6)
        dq[j] = h
        plus = expr.evaluate("fkine(p560, q + d)", {**names, "d": dq}, functions=functions)
        minus = expr.evaluate("fkine(p560, q - d)", {**names, "d": dq}, functions=functions)
        dT = (plus - minus) / (2 * h)
        W = dT[:3, :3] @ PUMA.fkine(q)[:3, :3].T
        np.testing.assert_allclose(J[:3, j], dT[:3, 3], atol=1e-8)
        np.testing.assert_allclose(J[3:, j], [W[2, 1], W[0, 2], W[1, 0]], atol=1e-8)


def test_a_changed_robot_changes_the_values(run_diagram):
    """--set robots.p560.tool: the parameters that use the robot follow it."""
    text = diagram("  T0: fkine(p560, qz)", "  P: {type: constant, value: T0}",
                   record="{T: P.y}")
    moved = run_diagram(text, **{"robots.p560.tool": "transl(0, 0, 0.2)"})
    np.testing.assert_allclose(moved["T"][0][:3, 3], PUMA.fkine(QZ)[:3, 3] + [0, 0, 0.2],
                               atol=1e-15)


@pytest.mark.parametrize("value, message", [
    ("fkine(p56, qz)", r"fkine\(\) takes an entry of the diagram's 'robots' section first, by "
                       r"its name: 'p56' is not one of them \(p560\)"),
    ("fkine([1, 2], qz)", r"fkine\(\) takes an entry .*: it needs one of them \(p560\)"),
    ("fkine(p560, [0, 0])", r"fkine\(\) needs 6 joint values for robot 'Puma 560', got shape \(2,\)"),
    ("fkine(p560)", r"fkine\(\) takes 2 arguments, got 1"),
    ("ikine(p560, eye(3))", r"ikine\(\) needs a 4x4 pose, got shape \(3, 3\)"),
    ("ikine(p560, transl(3, 0, 0))", r"ikine did not converge"),
    ("ikine(p560, transl(3, 0, 0), qz, [1, 1, 1])", r"ikine\(\) needs a mask of 6 weights >= 0, "
     r"not all zero, for \[x y z, rotation about x y z\] in the tool frame, got \[1\., 1\., 1\.\]"),
    ("ikine(p560, eye(4), qz, [1, 1, 1, 0, 0, 0], 1)", r"ikine\(\) takes 2 to 4 arguments, got 5"),
])
def test_mistakes_are_diagram_errors_at_the_parameter(run_diagram, value, message):
    with pytest.raises(DiagramError, match=r"d.yaml:4: error: parameter 'X': " + message):
        run_diagram(diagram(f"  X: {value}"))


def test_without_robots_there_are_no_robot_functions(run_diagram):
    with pytest.raises(DiagramError, match="unknown function 'fkine'"):
        run_diagram("""
blocksim: 1
parameters: {T: "fkine(p560, [0, 0])"}
blocks: {c: {type: constant, value: T}}
simulation: {stop: 1}
""")
