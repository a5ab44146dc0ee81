"""IBVS law and closed loops with a free-flying camera (pose integrated from v, no robot)."""
import numpy as np
import pytest

from blocks.vision.features import interaction_matrix
from blocks.vision.ibvs import IBVS
from vision_helpers import DEMO6_POINTS, R_PUMA_Q0, demo6_camera, pose, rot, twist_exp

# A 0.4 m square target in the world plane z = 0, and a goal pose 1.2 m above it looking
# down (camera z = world -z), rolled by 0.3 rad and slightly off centre.
SQUARE = np.array([[-0.2, -0.2, 0.0], [0.2, -0.2, 0.0], [0.2, 0.2, 0.0], [-0.2, 0.2, 0.0]])
T_GOAL = pose(rot([1, 0, 0], np.pi) @ rot([0, 0, 1], 0.3), [0.05, -0.03, 1.2])
# Start: the goal moved by a twist of several cm and ~0.2 rad in the camera frame.
T_START = T_GOAL @ twist_exp(np.array([0.08, -0.05, 0.1, 0.1, -0.08, 0.2]))


def fly(ctrl, cam, P, T, dt, steps, true_depth):
    """Free-flying camera: T <- T·exp(v·dt) with v from the IBVS law, held over each step.
    Returns the feature error norms (px) at t = 0, dt, ..., steps*dt and the final pose."""
    norms = []
    for _ in range(steps + 1):
        uv, info = cam.project(P, T)
        assert info.visible.all()
        norms.append(np.linalg.norm(ctrl.error(uv)))
        T = T @ twist_exp(ctrl.velocity(uv, info.depth if true_depth else None) * dt)
    return np.array(norms), T


def make_ctrl(cam, gain, desired, depth):
    return IBVS(gain, desired, cam.fx, cam.fy, cam.u0, cam.v0, depth)


def test_error_ordering_and_zero_velocity_at_goal():
    cam = demo6_camera()
    desired = np.array([[256.0, 456.0], [456.0, 456.0], [456.0, 256.0], [256.0, 256.0]])
    ctrl = make_ctrl(cam, 0.1, desired, 2.0)
    uv = desired + [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]
    np.testing.assert_array_equal(ctrl.error(uv), -np.arange(1.0, 9.0))  # u1, v1, u2, ...
    np.testing.assert_array_equal(ctrl.velocity(desired), np.zeros(6))


def test_square_system_gives_exact_feature_rate():
    # Three points give an invertible 6x6 L, so pinv(L) = inv(L) and L·v = λ·(s* − s).
    cam = demo6_camera()
    uv = np.array([[200.0, 300.0], [350.0, 220.0], [260.0, 120.0]])
    desired = uv + [[5.0, -3.0], [2.0, 4.0], [-6.0, 1.0]]
    Z = np.array([1.0, 1.5, 2.5])
    ctrl = make_ctrl(cam, 0.7, desired, Z)
    L = interaction_matrix(uv, Z, cam.fx, cam.fy, cam.u0, cam.v0)
    np.testing.assert_allclose(L @ ctrl.velocity(uv), 0.7 * (desired - uv).reshape(-1), rtol=1e-9)


@pytest.mark.parametrize("p", [4, 2], ids=["overdetermined", "underdetermined"])
def test_velocity_is_gain_times_pseudo_inverse_times_error(p):
    # Reference: numpy's SVD pseudo-inverse, formed explicitly (the law as written).
    cam = demo6_camera()
    uv = np.array([[200.0, 300.0], [350.0, 220.0], [260.0, 120.0], [100.0, 100.0]])[:p]
    desired = uv + np.array([[5.0, -3.0], [2.0, 4.0], [-6.0, 1.0], [3.0, 3.0]])[:p]
    Z = np.array([1.0, 1.5, 2.5, 0.8])[:p]
    L = interaction_matrix(uv, Z, cam.fx, cam.fy, cam.u0, cam.v0)
    expected = 0.4 * np.linalg.pinv(L) @ (desired - uv).reshape(-1)
    np.testing.assert_allclose(make_ctrl(cam, 0.4, desired, Z).velocity(uv), expected,
                               rtol=1e-10, atol=1e-12 * np.abs(expected).max())


def test_per_call_depth_overrides_assumed_depth():
    cam = demo6_camera()
    uv = np.array([[200.0, 300.0], [350.0, 220.0], [260.0, 120.0], [100.0, 100.0]])
    desired = uv + 10.0
    Z = np.array([1.0, 1.5, 2.5, 0.8])
    np.testing.assert_array_equal(make_ctrl(cam, 0.3, desired, 2.0).velocity(uv, Z),
                                  make_ctrl(cam, 0.3, desired, Z).velocity(uv))


def test_invalid_arguments_rejected():
    cam = demo6_camera()
    with pytest.raises(ValueError):
        make_ctrl(cam, 0.1, np.zeros(8), 2.0)             # desired must be (p, 2)
    with pytest.raises(ValueError):
        make_ctrl(cam, 0.1, np.zeros((4, 2)), 0.0)        # depth must be positive
    with pytest.raises(ValueError):
        make_ctrl(cam, 0.1, np.zeros((4, 2)), [1.0, 2.0])  # one depth per point


def test_true_depth_error_decays_exponentially_at_gain_rate():
    cam = demo6_camera()
    desired, _ = cam.project(SQUARE, T_GOAL)
    lam, dt, steps = 1.0, 0.005, 1600
    norms, T_end = fly(make_ctrl(cam, lam, desired, 1.2), cam, SQUARE, T_START, dt, steps, True)
    t = dt * np.arange(steps + 1)
    slope, _ = np.polyfit(t, np.log(norms), 1)
    # Continuous law: d(e)/dt = -λ·L·pinv(L)·e, so |e| ∝ exp(-λt) (e stays in the range of L
    # near the goal). Holding v over a step multiplies e by (1 - λ·dt) per step to first
    # order, so the sampled rate is -ln(1 - λ·dt)/dt = 1.00251 for λ·dt = 0.005.
    assert -slope == pytest.approx(-np.log(1 - lam * dt) / dt, rel=1e-3)
    assert np.ptp(np.log(norms) - slope * t) < 0.01  # a straight line in log scale
    # Converged: error down by e^-8 (factor ~3e-4); the pose is the goal pose.
    assert norms[-1] < 1e-3 * norms[0]
    np.testing.assert_allclose(T_end, T_GOAL, atol=1e-3)


def test_assumed_constant_depth_still_converges():
    cam = demo6_camera()
    desired, _ = cam.project(SQUARE, T_GOAL)
    # Constant depth 1.5 m against true depths 1.2 m (goal) and ~1.1-1.3 m (start).
    norms, T_end = fly(make_ctrl(cam, 1.0, desired, 1.5), cam, SQUARE, T_START, 0.005, 1600, False)
    assert norms[-1] < 1e-2 * norms[0]
    np.testing.assert_allclose(T_end, T_GOAL, atol=1e-2)


def test_demo6_free_flying_camera():
    """demo6 with the robot replaced by a free-flying camera: the Puma loop (jacobn inverse
    times v, a rate-controlled arm) moves the camera by exactly v, so the image behaviour
    should match demos.md: 'the feature error norm falls by more than an order of magnitude
    over the 20 s without reaching zero' (gain 0.1, assumed depth 2 m, true ≈ 1.5 m)."""
    cam = demo6_camera()
    desired = [[256, 456], [456, 456], [456, 256], [256, 256]]  # demos.md
    T0 = pose(R_PUMA_Q0, [0.5, 0.0, 0.0])
    norms, _ = fly(make_ctrl(cam, 0.1, desired, 2.0), cam, DEMO6_POINTS, T0, 0.01, 2000, False)
    assert norms[-1] < 0.1 * norms[0]
    assert norms[-1] > 1.0  # px: still visibly away from the goal at t = 20 s
    assert np.all(np.diff(norms) < 0)
