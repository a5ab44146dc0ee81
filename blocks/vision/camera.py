"""Central-projection (pinhole) camera: world points to pixel coordinates.

Camera frame: origin at the optical centre, z along the optical axis (out of the lens),
x towards increasing u (image right), y towards increasing v (image down).
"""
from typing import NamedTuple

import numpy as np


class Visibility(NamedTuple):
    """Per-point outcome of one projection; every field has shape (p,).

    depth   -- Z, the point's coordinate along the optical axis in the camera frame (m).
    behind  -- Z <= 0: the point is not in front of the camera; its uv row is NaN.
    outside -- in front of the camera but (u, v) outside the image rectangle
               0 <= u <= w, 0 <= v <= h (edges count as inside); its uv row is the
               true projection, so it can be reported.
    """

    depth: np.ndarray
    behind: np.ndarray
    outside: np.ndarray

    @property
    def visible(self) -> np.ndarray:
        """(p,) bool: in front of the camera and inside the image."""
        return ~(self.behind | self.outside)


class CentralCamera:
    """Pinhole camera with focal length, pixel scale, principal point and image size.

    Parameters
    ----------
    f : focal length (m).
    scale : (ax, ay) pixels per metre on the image sensor.
    principal : (u0, v0) principal point (px).
    size : (w, h) image width and height (px).

    A point with camera-frame coordinates (X, Y, Z) projects to

        u = u0 + f·ax·X/Z,    v = v0 + f·ay·Y/Z      (px)

    i.e. [u, v, 1]ᵀ ∝ K·[X, Y, Z]ᵀ with K = [[fx, 0, u0], [0, fy, v0], [0, 0, 1]],
    fx = f·ax and fy = f·ay the focal lengths in pixels.
    """

    def __init__(self, f, scale, principal, size):
        ax, ay = (float(s) for s in scale)
        u0, v0 = (float(c) for c in principal)
        w, h = (float(s) for s in size)
        if not (f > 0 and ax > 0 and ay > 0):
            raise ValueError(f"focal length and scale must be positive, got f={f}, scale={scale}")
        if not (w > 0 and h > 0):
            raise ValueError(f"image size must be positive, got {size}")
        self.f = float(f)
        self.scale = (ax, ay)
        self.principal = (u0, v0)
        self.size = (w, h)
        self.fx = self.f * ax
        self.fy = self.f * ay
        self.u0, self.v0 = u0, v0
        self._focal = np.array([self.fx, self.fy])
        self._centre = np.array([u0, v0])
        self._extent = np.array([w, h])

    @property
    def K(self) -> np.ndarray:
        """(3, 3) intrinsic matrix in pixels."""
        return np.array([[self.fx, 0.0, self.u0], [0.0, self.fy, self.v0], [0.0, 0.0, 1.0]])

    @staticmethod
    def to_camera(P, T) -> np.ndarray:
        """Points (p, 3) in the world frame -> (p, 3) in the camera frame, P_c = T⁻¹·P.

        T (4, 4) is the camera pose in the world: P = R·P_c + t, so P_c = Rᵀ·(P − t),
        computed row-wise as (P − t)·R.
        """
        T = np.asarray(T, dtype=float)
        return (np.asarray(P, dtype=float) - T[:3, 3]) @ T[:3, :3]

    def project_camera_frame(self, Pc):
        """Project points given in the camera frame.

        Pc : (p, 3) camera-frame coordinates (m).
        Returns uv (p, 2) in pixels and a `Visibility`. Rows of points with Z <= 0 are NaN
        (no meaningful image exists), never a mirrored or infinite value.
        """
        Pc = np.asarray(Pc, dtype=float)
        Z = Pc[:, 2]
        behind = Z <= 0.0
        # Dividing by NaN for points behind the camera gives NaN rows without warnings.
        uv = self._centre + self._focal * Pc[:, :2] / np.where(behind, np.nan, Z)[:, None]
        # NaN compares False, so points behind the camera are never also "outside".
        outside = np.any((uv < 0.0) | (uv > self._extent), axis=1)
        return uv, Visibility(Z.copy(), behind, outside)

    def project(self, P, T):
        """Project world points seen from camera pose T.

        P : (p, 3) world coordinates (m); T : (4, 4) camera pose in the world frame.
        Returns uv (p, 2) in pixels and a `Visibility` (camera-frame depths Z and the
        behind / outside masks); see `project_camera_frame`.
        """
        return self.project_camera_frame(self.to_camera(P, T))
