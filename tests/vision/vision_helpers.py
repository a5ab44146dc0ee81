"""Cameras, poses and demo6 data shared by the vision tests (independent of the code under test)."""
import numpy as np
from scipy.linalg import expm
from scipy.spatial.transform import Rotation

from blocks.vision.camera import CentralCamera

# demo6 camera (demos.md): f = 8 mm, 80 000 px/m, principal point (256, 256), 512 x 512,
# so fx = fy = 0.008 * 80000 = 640 px.
DEMO6_CAMERA = dict(f=0.008, scale=(80000.0, 80000.0), principal=(256.0, 256.0), size=(512.0, 512.0))

# A deliberately asymmetric camera so that swapped u/v or fx/fy cannot cancel:
# fx = 0.01 * 100000 = 1000 px, fy = 0.01 * 50000 = 500 px.
ASYM_CAMERA = dict(f=0.01, scale=(100000.0, 50000.0), principal=(320.0, 240.0), size=(640.0, 480.0))

# demos.md, demo6: the target square's world points (m).
DEMO6_POINTS = np.array([
    [1.995600, 0.239957, 0.2],
    [1.995600, 0.239957, -0.2],
    [2.003600, -0.159963, -0.2],
    [2.003600, -0.159963, 0.2],
])

# Camera at (0.5, 0, 0) looking along world +x (demos.md). Columns = camera x, y, z axes in
# world coordinates. The Puma 560 tool frame at demo6's q0 (standard DH table of seed 000,
# evaluated by hand to 4e-5) has camera x -> world -z, y -> world +y, z -> world +x.
R_PUMA_Q0 = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])
# A level camera (world z up, image "up" = world +z): x (right) -> world -y,
# y (down) -> world -z, z -> world +x.
R_LEVEL = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])


def demo6_camera():
    return CentralCamera(**DEMO6_CAMERA)


def asym_camera():
    return CentralCamera(**ASYM_CAMERA)


def pose(R, t):
    """4x4 homogeneous transform from a rotation matrix and a translation."""
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = t
    return T


def rot(axis, angle):
    """Rotation matrix about a unit axis (scipy's rotation-vector exponential)."""
    return Rotation.from_rotvec(np.asarray(axis, dtype=float) * angle).as_matrix()


def twist_exp(xi):
    """exp of the se(3) matrix of the twist xi = [v; w] (matrix exponential, scipy)."""
    v, w = xi[:3], xi[3:]
    hat = np.zeros((4, 4))
    hat[:3, :3] = [[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]]
    hat[:3, 3] = v
    return expm(hat)
