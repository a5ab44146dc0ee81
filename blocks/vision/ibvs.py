"""Image-based visual servoing (IBVS) with point features."""
import numpy as np

from blocks.vision.features import interaction_matrix


class IBVS:
    """Classical IBVS law: v_cam = λ · pinv(L(s, Z)) · (s* − s).

    gain : λ (1/s). desired : s* as (p, 2) pixel positions. fx, fy, u0, v0 : the camera's
    focal lengths and principal point in pixels (see `CentralCamera`). depth : the assumed
    depth Z (m) used in L, one positive scalar or (p,) positive values.

    s and s* are flattened row by row (u1, v1, u2, v2, ...). v_cam is the camera's spatial
    velocity [v; ω] in the camera frame (m/s, rad/s). With the true depths the closed loop
    is d(s* − s)/dt = −λ·L·pinv(L)·(s* − s): an error in the range of L decays as e^(−λt).
    """

    def __init__(self, gain, desired, fx, fy, u0, v0, depth):
        desired = np.asarray(desired, dtype=float)
        if desired.ndim != 2 or desired.shape[1] != 2:
            raise ValueError(f"desired features must have shape (p, 2), got {desired.shape}")
        depth = np.asarray(depth, dtype=float)
        if depth.shape not in ((), (desired.shape[0],)) or np.any(depth <= 0):
            raise ValueError(f"depth must be positive, scalar or ({desired.shape[0]},); got {depth}")
        self.gain = float(gain)
        self.desired = desired
        self.depth = depth
        self.fx, self.fy, self.u0, self.v0 = float(fx), float(fy), float(u0), float(v0)
        self._s_star = desired.reshape(-1)

    def error(self, uv) -> np.ndarray:
        """Feature error s* − s, shape (2p,), ordered u1, v1, u2, v2, ... (px)."""
        return self._s_star - np.asarray(uv, dtype=float).reshape(-1)

    def velocity(self, uv, depth=None) -> np.ndarray:
        """Camera velocity demand (6,) for features uv (p, 2).

        depth : None uses the assumed depth given at construction; otherwise a scalar or
        (p,) depths used for this call only, e.g. the true depths `Visibility.depth`.
        """
        L = interaction_matrix(uv, self.depth if depth is None else depth,
                               self.fx, self.fy, self.u0, self.v0)
        # Minimum-norm least-squares solution = pinv(L)·e (same singular-value cutoff,
        # max(2p, 6)·eps), without forming the pseudo-inverse.
        return self.gain * np.linalg.lstsq(L, self.error(uv), rcond=None)[0]
