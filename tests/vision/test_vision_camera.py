"""CentralCamera: projection equations, pose consistency and visibility reporting."""
import warnings

import numpy as np
import pytest

from blocks.vision.camera import CentralCamera
from vision_helpers import DEMO6_POINTS, R_LEVEL, R_PUMA_Q0, asym_camera, demo6_camera, pose, rot

# An arbitrary, non-trivial camera pose in the world (rotation vector 0.3,-0.5,0.8 scaled).
R_ANY = rot(np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8]), 1.1)
T_ANY = pose(R_ANY, [0.2, -1.0, 0.5])


def world_from_camera(T, Pc):
    """World coordinates of camera-frame points: P = R·Pc + t (the definition of T)."""
    return np.asarray(Pc) @ T[:3, :3].T + T[:3, 3]


def test_focal_lengths_in_pixels():
    cam = asym_camera()
    assert (cam.fx, cam.fy) == (1000.0, 500.0)  # 0.01*100000, 0.01*50000
    np.testing.assert_array_equal(cam.K, [[1000, 0, 320], [0, 500, 240], [0, 0, 1]])


def test_point_on_optical_axis_lands_on_principal_point():
    cam = asym_camera()
    # Points at 0.5, 3 and 40 m along the camera's z axis, written in world coordinates.
    P = T_ANY[:3, 3] + np.outer([0.5, 3.0, 40.0], T_ANY[:3, 2])
    uv, info = cam.project(P, T_ANY)
    np.testing.assert_allclose(uv, [[320.0, 240.0]] * 3, atol=1e-9)
    np.testing.assert_allclose(info.depth, [0.5, 3.0, 40.0], rtol=1e-12)


def test_known_camera_frame_point():
    cam = asym_camera()
    Pc = np.array([[0.1, -0.05, 2.0], [-0.3, 0.2, 0.5]])
    # By hand: u = 320 + 1000*0.1/2 = 370,     v = 240 + 500*(-0.05)/2 = 227.5
    #          u = 320 + 1000*(-0.3)/0.5 = -280 v = 240 + 500*0.2/0.5 = 440
    expected = np.array([[370.0, 227.5], [-280.0, 440.0]])
    uv, info = cam.project(world_from_camera(T_ANY, Pc), T_ANY)
    np.testing.assert_allclose(uv, expected, atol=1e-9)
    np.testing.assert_allclose(info.depth, [2.0, 0.5], rtol=1e-12)
    np.testing.assert_array_equal(info.outside, [False, True])  # u = -280 < 0
    # Second route: homogeneous K·Pc divided by its third component.
    h = Pc @ cam.K.T
    np.testing.assert_allclose(uv, h[:, :2] / h[:, 2:], atol=1e-9)


def test_translating_camera_along_its_x_moves_points_the_other_way():
    cam = asym_camera()
    P = world_from_camera(T_ANY, [[0.1, -0.05, 2.0]])
    dx = 0.04
    T_moved = T_ANY @ pose(np.eye(3), [dx, 0.0, 0.0])
    uv, _ = cam.project(P, T_ANY)
    uv_moved, info = cam.project(P, T_moved)
    # The point is now at X = 0.1 - 0.04 = 0.06 in the camera: u = 320 + 1000*0.06/2 = 350.
    np.testing.assert_allclose(uv_moved, [[350.0, 227.5]], atol=1e-9)
    assert uv_moved[0, 0] < uv[0, 0]
    np.testing.assert_allclose(info.depth, [2.0], rtol=1e-12)


def test_translating_camera_along_world_axis():
    cam = demo6_camera()
    P = np.array([[0.0, 0.0, 2.0]])
    # Camera aligned with the world; moving it by +0.1 m in world x puts the point at
    # X = -0.1: u = 256 - 640*0.1/2 = 224.
    uv, _ = cam.project(P, pose(np.eye(3), [0.1, 0.0, 0.0]))
    np.testing.assert_allclose(uv, [[224.0, 256.0]], atol=1e-9)


def test_roll_by_pi_about_optical_axis_mirrors_about_principal_point():
    cam = asym_camera()
    Pc = np.array([[0.1, -0.05, 2.0], [-0.2, 0.3, 1.0], [0.05, 0.07, 4.0]])
    P = world_from_camera(T_ANY, Pc)
    uv, _ = cam.project(P, T_ANY)
    uv_rolled, _ = cam.project(P, T_ANY @ pose(rot([0, 0, 1], np.pi), [0, 0, 0]))
    # (X, Y) -> (-X, -Y) in the camera, so uv -> 2*(u0, v0) - uv.
    np.testing.assert_allclose(uv_rolled, 2 * np.array([320.0, 240.0]) - uv, atol=1e-9)


def test_panning_camera_moves_axis_point_by_focal_tangent():
    cam = asym_camera()
    theta = 0.1
    P = world_from_camera(T_ANY, [[0.0, 0.0, 3.0]])
    uv, _ = cam.project(P, T_ANY @ pose(rot([0, 1, 0], theta), [0, 0, 0]))
    # Rotating the camera by theta about its y axis: the point is at
    # (-3 sin θ, 0, 3 cos θ) in the new frame, so u = u0 - fx·tan θ, v = v0.
    np.testing.assert_allclose(uv, [[320.0 - 1000.0 * np.tan(theta), 240.0]], atol=1e-9)


def test_behind_and_outside_are_flagged_and_behind_rows_are_nan():
    cam = demo6_camera()
    Pc = np.array([
        [0.0, 0.0, 1.0],    # centre: (256, 256), visible
        [0.4, 0.4, 1.0],    # 256 + 640*0.4 = 512 on both edges: inside (closed rectangle)
        [0.0, 0.0, -1.0],   # behind
        [0.1, 0.0, 0.0],    # in the focal plane (Z = 0): behind
        [1.0, 0.0, 1.0],    # u = 896 > 512: right of the image
        [-1.0, 0.0, 1.0],   # u = -384 < 0: left
        [0.0, 1.0, 1.0],    # v = 896 > 512: below
        [0.0, -1.0, 1.0],   # v = -384 < 0: above
    ])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no divide-by-zero warnings either
        uv, info = cam.project_camera_frame(Pc)
    np.testing.assert_array_equal(info.behind, [0, 0, 1, 1, 0, 0, 0, 0])
    np.testing.assert_array_equal(info.outside, [0, 0, 0, 0, 1, 1, 1, 1])
    np.testing.assert_array_equal(info.visible, [1, 1, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(info.depth, Pc[:, 2])
    assert np.isnan(uv[2:4]).all() and np.isfinite(uv[[0, 1, 4, 5, 6, 7]]).all()
    np.testing.assert_allclose(uv[[1, 4, 7]], [[512, 512], [896, 256], [256, -384]])


def test_invalid_intrinsics_rejected():
    with pytest.raises(ValueError):
        CentralCamera(0.0, (1, 1), (0, 0), (10, 10))
    with pytest.raises(ValueError):
        CentralCamera(0.01, (1, 1), (0, 0), (10, 0))


@pytest.mark.parametrize("R", [R_PUMA_Q0, R_LEVEL], ids=["puma_q0", "level"])
def test_demo6_target_inside_image(R):
    assert np.isclose(np.linalg.det(R), 1.0) and np.allclose(R.T @ R, np.eye(3))
    cam = demo6_camera()
    uv, info = cam.project(DEMO6_POINTS, pose(R, [0.5, 0.0, 0.0]))
    assert info.visible.all()
    # Depth = world x - 0.5: 1.4956 and 1.5036 m (demos.md: "true depth ≈ 1.5 m").
    np.testing.assert_allclose(info.depth, DEMO6_POINTS[:, 0] - 0.5, rtol=1e-12)
    # By hand from the axis mapping: camera (X, Y) = (R[:,0]·d, R[:,1]·d), d = P - (0.5, 0, 0).
    d = DEMO6_POINTS - [0.5, 0.0, 0.0]
    expected = 256.0 + 640.0 * (d @ R[:, :2]) / d[:, [0]]
    np.testing.assert_allclose(uv, expected, atol=1e-9)


def test_demo6_puma_view_by_hand():
    cam = demo6_camera()
    uv, _ = cam.project(DEMO6_POINTS, pose(R_PUMA_Q0, [0.5, 0.0, 0.0]))
    # u = 256 + 640*(-z_w)/(x_w - 0.5), v = 256 + 640*y_w/(x_w - 0.5); first point:
    # u = 256 - 128/1.4956 = 170.4156, v = 256 + 153.5725/1.4956 = 358.6829.
    np.testing.assert_allclose(uv[0], [170.4156, 358.6829], atol=1e-4)
    # Same corner order as demo6's desired square [[256,456],[456,456],[456,256],[256,256]]:
    # u grows from point 1 to 2, v falls from point 2 to 3.
    assert uv[1, 0] > uv[0, 0] and uv[2, 1] < uv[1, 1]
