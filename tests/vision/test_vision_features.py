"""Point-feature interaction matrix: published normalised form and finite differences."""
import numpy as np
import pytest

from blocks.vision.features import interaction_matrix
from vision_helpers import asym_camera, pose, rot, twist_exp


def test_normalised_form_matches_published_matrix():
    # Unit focal lengths and principal point at 0 give the normalised-coordinate matrix of
    # Chaumette & Hutchinson (2006), eq. (11). At x = 0.2, y = -0.1, Z = 2, by hand:
    # [-1/Z, 0, x/Z, x*y, -(1+x^2), y]  = [-0.5, 0, 0.1, -0.02, -1.04, -0.1]
    # [0, -1/Z, y/Z, 1+y^2, -x*y, -x]   = [0, -0.5, -0.05, 1.01, 0.02, -0.2]
    L = interaction_matrix([[0.2, -0.1]], 2.0, 1.0, 1.0, 0.0, 0.0)
    np.testing.assert_allclose(L, [[-0.5, 0, 0.1, -0.02, -1.04, -0.1],
                                   [0, -0.5, -0.05, 1.01, 0.02, -0.2]], atol=1e-15)


def test_pixel_form_is_normalised_form_scaled():
    # u = u0 + fx*x, v = v0 + fy*y, so the u row is fx times the normalised u row and the
    # v row fy times the normalised v row.
    fx, fy, u0, v0 = 1000.0, 500.0, 320.0, 240.0
    x, y, Z = 0.2, -0.1, 2.0
    L = interaction_matrix([[u0 + fx * x, v0 + fy * y]], Z, fx, fy, u0, v0)
    Ln = interaction_matrix([[x, y]], Z, 1.0, 1.0, 0.0, 0.0)
    np.testing.assert_allclose(L, Ln * [[fx], [fy]], rtol=1e-13)


def test_rows_ordered_u1_v1_u2_v2_and_depth_forms_agree():
    uv = np.array([[100.0, 50.0], [300.0, 400.0], [10.0, 470.0]])
    Z = np.array([0.7, 1.5, 4.0])
    L = interaction_matrix(uv, Z, 1000.0, 500.0, 320.0, 240.0)
    assert L.shape == (6, 6)
    for i in range(3):
        np.testing.assert_array_equal(L[2 * i:2 * i + 2],
                                      interaction_matrix(uv[i:i + 1], Z[i], 1000.0, 500.0, 320.0, 240.0))
    np.testing.assert_array_equal(interaction_matrix(uv, 2.0, 1000.0, 500.0, 320.0, 240.0),
                                  interaction_matrix(uv, [2.0] * 3, 1000.0, 500.0, 320.0, 240.0))
    with pytest.raises(ValueError):
        interaction_matrix(uv, [1.0, 2.0], 1000.0, 500.0, 320.0, 240.0)


def test_matches_finite_differences_of_projection():
    """Move the camera by a small twist in its own frame, T·exp(±ξ·h), and compare the
    central difference of the projected features with L·ξ (true depths)."""
    cam = asym_camera()
    T = pose(rot(np.array([1.0, 2.0, -0.5]) / np.linalg.norm([1.0, 2.0, -0.5]), 0.7), [0.3, 0.1, -0.2])
    # Camera-frame points at several depths, spread over the image.
    Pc = np.array([[0.1, -0.05, 0.5], [-0.3, 0.2, 1.0], [0.5, 0.4, 2.0],
                   [-1.0, -0.6, 5.0], [0.0, 0.0, 3.0]])
    P = Pc @ T[:3, :3].T + T[:3, 3]
    uv, info = cam.project(P, T)
    L = interaction_matrix(uv, info.depth, cam.fx, cam.fy, cam.u0, cam.v0)
    h = 1e-6
    twists = list(np.eye(6)) + [np.array([0.3, -0.2, 0.5, 0.4, -0.7, 0.25])]
    for xi in twists:
        uv_plus, _ = cam.project(P, T @ twist_exp(xi * h))
        uv_minus, _ = cam.project(P, T @ twist_exp(-xi * h))
        rate = (uv_plus - uv_minus).reshape(-1) / (2 * h)
        # Central difference error is O(h^2) plus rounding ~ 1e-16*|uv|/h ~ 1e-7 px/s.
        np.testing.assert_allclose(rate, L @ xi, rtol=1e-6, atol=1e-5, err_msg=f"twist {xi}")
