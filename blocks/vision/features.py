"""Point-feature interaction matrix (image Jacobian) in pixel units."""
import numpy as np


def interaction_matrix(uv, depth, fx, fy, u0, v0) -> np.ndarray:
    """Image Jacobian of p point features: d(uv)/dt = L · v_cam.

    uv : (p, 2) feature positions (px); depth : Z (m), one scalar for all points or (p,)
    per point; fx = f·ax, fy = f·ay focal lengths (px); (u0, v0) principal point (px).
    v_cam = [vx, vy, vz, ωx, ωy, ωz] is the camera's spatial velocity expressed in the
    camera frame (m/s, rad/s), the points are fixed in the world. Returns L of shape
    (2p, 6), rows ordered u1, v1, u2, v2, ... (uv flattened row by row).

    With ū = u − u0 and v̄ = v − v0, each point contributes

        du/dt = [−fx/Z,  0,     ū/Z,  ū·v̄/fy,       −(fx² + ū²)/fx,  fx·v̄/fy] · v_cam
        dv/dt = [0,     −fy/Z,  v̄/Z,  (fy² + v̄²)/fy,  −ū·v̄/fx,       −fy·ū/fx] · v_cam

    which is the normalised-coordinate matrix (x = ū/fx, y = v̄/fy)

        [−1/Z, 0, x/Z, x·y, −(1 + x²), y;  0, −1/Z, y/Z, 1 + y², −x·y, −x]

    with its u row scaled by fx and its v row by fy (from dP/dt = −v − ω × P in the
    camera frame).
    """
    uv = np.asarray(uv, dtype=float)
    p = uv.shape[0]
    inv_z = 1.0 / np.asarray(depth, dtype=float)
    if inv_z.ndim and inv_z.shape != (p,):
        raise ValueError(f"depth must be a scalar or have shape ({p},), got {inv_z.shape}")
    du = uv[:, 0] - u0
    dv = uv[:, 1] - v0
    L = np.zeros((p, 2, 6))
    L[:, 0, 0] = -fx * inv_z
    L[:, 0, 2] = du * inv_z
    L[:, 0, 3] = du * dv / fy
    L[:, 0, 4] = -(fx + du * du / fx)
    L[:, 0, 5] = (fx / fy) * dv
    L[:, 1, 1] = -fy * inv_z
    L[:, 1, 2] = dv * inv_z
    L[:, 1, 3] = fy + dv * dv / fy
    L[:, 1, 4] = -du * dv / fx
    L[:, 1, 5] = -(fy / fx) * du
    return L.reshape(2 * p, 6)
