"""A Puma 560 at rest under gravity compensation, linearised: A's lower-left block is
-M(q)^-1 dG/dq, checked against central differences of the robot's own `accel` (and of
gravload and inertia); a trim of the Puma holding the pose with its joint torques free
finds gravload(q)."""
import numpy as np
import pytest

import blocksim
from blocks.robot import load_robot

POSE = np.array([0.1, 0.6, -0.4, 0.2, 0.3, -0.1])

DIAGRAM = """
blocksim: 1
name: puma_at_rest
robots:
  p560: {{model: puma560, friction: viscous}}
blocks:
  Torque: {{type: constant, value: {torque}}}
  Robot:  {{type: robot, robot: p560, q0: {pose}}}
wires:
  - Torque -> Robot.tau
simulation: {{stop: 1}}
record: {{q: Robot.q}}
"""


@pytest.fixture(scope="module")
def puma():
    return load_robot("puma560").configure(friction="viscous")


def diagram(path, torque):
    path.write_text(DIAGRAM.format(torque=list(map(float, torque)), pose=POSE.tolist()))
    return path


def central(f, x, h=1e-6):
    """d f / d x by central differences, one column per element of x."""
    cols = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e[k] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return np.array(cols).T


def test_a_lower_left_block_is_minus_m_inverse_dg_dq(tmp_path, puma):
    gravity = puma.gravload(POSE)
    path = diagram(tmp_path / "puma.yaml", gravity)
    sys = blocksim.linearize(path, ["Robot.tau"], ["Robot.q"])  # an equilibrium: no --at
    n = 6
    A = sys.A
    np.testing.assert_array_equal(A[:n, :n], 0)       # dq/dt = qd
    np.testing.assert_array_equal(A[:n, n:], np.eye(n))
    # the robot's own forward dynamics, differenced here: d qdd / dq at qd = 0, tau = G(q0)
    accel = central(lambda q: puma.accel(q, np.zeros(n), gravity), POSE)
    np.testing.assert_allclose(A[n:, :n], accel, rtol=1e-6, atol=1e-6 * np.abs(accel).max())
    # the same as -M^-1 dG/dq (at rest the Coriolis terms vanish and tau - G = 0)
    dG = central(puma.gravload, POSE)
    np.testing.assert_allclose(A[n:, :n], -np.linalg.solve(puma.inertia(POSE), dG),
                               rtol=1e-6, atol=1e-6 * np.abs(accel).max())
    # d qdd / d qd = -M^-1 diag(G^2 B): the viscous friction B of each motor, reflected
    # through its gear ratio G (the Puma's published G and B, Corke's mdl_puma560, from
    # Armstrong et al. 1986) and d qdd / d tau = M^-1
    G = np.array([-62.6111, 107.815, -53.7063, 76.0364, 71.923, 76.686])
    B = np.array([1.48e-3, 0.817e-3, 1.38e-3, 71.2e-6, 82.6e-6, 36.7e-6])
    damping = -np.linalg.solve(puma.inertia(POSE), np.diag(G ** 2 * B))
    np.testing.assert_allclose(A[n:, n:], damping, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(sys.B[n:], np.linalg.inv(puma.inertia(POSE)), rtol=1e-6,
                               atol=1e-9)


def test_trim_of_the_puma_holding_the_pose_finds_its_gravity_load(tmp_path, puma):
    path = diagram(tmp_path / "puma.yaml", np.zeros(6))
    point = blocksim.trim(path, fix={"Robot.x[0:6]": POSE.tolist()}, free=["Robot.tau"])
    assert point.converged and point.residual < 1e-9
    np.testing.assert_allclose(point.inputs["Robot.tau"], puma.gravload(POSE), rtol=1e-9,
                               atol=1e-9)
    np.testing.assert_allclose(point.states["Robot"], np.r_[POSE, np.zeros(6)], atol=1e-12)
    # run from it: the arm holds the pose (without the torques it falls: 0.3 rad in 0.5 s)
    held = blocksim.run(path, op=point, overrides={"simulation.stop": 2})
    np.testing.assert_allclose(held["q"], np.broadcast_to(POSE, held["q"].shape), atol=1e-9)
    fallen = blocksim.run(path, overrides={"simulation.stop": 0.5})
    assert np.abs(fallen["q"][-1] - POSE).max() > 0.1


def test_the_initial_state_of_an_unsupported_arm_is_not_an_equilibrium(tmp_path, puma):
    path = diagram(tmp_path / "puma.yaml", np.zeros(6))
    with pytest.raises(blocksim.errors.AnalysisError, match="not an equilibrium") as info:
        blocksim.linearize(path, ["Robot.tau"], ["Robot.q"])
    # the largest residual: the joint gravity accelerates most, qdd = -M^-1 G(q) at rest
    # (the shoulder, x[6 + 1])
    falling = np.linalg.solve(puma.inertia(POSE), puma.gravload(POSE))
    assert f"Robot.x[{6 + int(np.argmax(np.abs(falling)))}]" in str(info.value)
    # along the trajectory it is allowed
    sys = blocksim.linearize(path, ["Robot.tau"], ["Robot.q"], at=0.0)
    assert sys.nstates == 12
