"""Quaternion against seed 000's printed examples, hand algebra, scipy's rotation code and
the rotation-matrix algebra it must mirror."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation, Slerp

from blocks.robot.quaternion import Quaternion, qinterp, quat_from_rot, quat_to_rot, slerp
from blocks.robot.transforms import rot2tr, rotvec, rotx, roty, rotz, trotx

RNG = np.random.default_rng(11)


def scipy_quat(R):
    """[s, vx, vy, vz] with s >= 0 from scipy (which stores [x, y, z, w])."""
    x = Rotation.from_matrix(R).as_quat()
    d = np.concatenate([x[..., 3:], x[..., :3]], axis=-1)
    return np.where(d[..., :1] < 0, -d, d)


def rotation_angle(R):
    """Angle of a rotation matrix from its trace, robust form via atan2."""
    axis_sin = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    return np.arctan2(np.linalg.norm(axis_sin), 0.5 * (np.trace(R) - 1.0))


# --- seed 000, quaternion page -------------------------------------------------------------

def test_seed_quaternion_page_examples():
    q1 = Quaternion(trotx(0.2))
    q2 = Quaternion(roty(0.3))
    # each printed line of the quaternion page, printed with 5 significant digits
    printed = [
        (q1, "0.995 <0.099833, 0, 0>"),
        (q2, "0.98877 <0, 0.14944, 0>"),
        (q1 * q2, "0.98383 <0.098712, 0.14869, 0.014919>"),
        (q1 * q1, "0.98007 <0.19867, 0, 0>"),
        (q1 ** 2, "0.98007 <0.19867, 0, 0>"),
        (q1 * q1.inv(), "1 <0, 0, 0>"),
        (q1 / q1, "1 <0, 0, 0>"),
        (q1 / q2, "0.98383 <0.098712, -0.14869, -0.014919>"),
        (q1 * q2 ** -1, "0.98383 <0.098712, -0.14869, -0.014919>"),
        (Quaternion.angvec(1, [1, 0, 0]), "0.87758 <0.47943, 0, 0>"),
        (Quaternion(rotx(1)), "0.87758 <0.47943, 0, 0>"),
    ]
    for q, text in printed:
        assert str(q) == text
    # q1.r printed to 4 decimals
    np.testing.assert_allclose(q1.r(), [[1, 0, 0], [0, 0.9801, -0.1987], [0, 0.1987, 0.9801]],
                               atol=5e-5)


def test_seed_qinterp_page_example():
    q1 = Quaternion(rotx(0.3))
    q2 = Quaternion(roty(-0.5))
    assert str(q1) == "0.98877 <0.14944, 0, 0>"
    assert str(q2) == "0.96891 <0, -0.2474, 0>"
    assert str(qinterp(q1, q2, 0)) == "0.98877 <0.14944, 0, 0>"
    assert str(qinterp(q1, q2, 1)) == "0.96891 <0, -0.2474, 0>"
    assert str(qinterp(q1, q2, 0.3)) == "0.99159 <0.10536, -0.075182, 0>"


# --- construction and conversion -------------------------------------------------------------

def test_constructors():
    assert Quaternion() == Quaternion(1.0, [0, 0, 0])
    q = Quaternion([0.5, 0.5, -0.5, 0.5])
    assert q.s == 0.5 and np.array_equal(q.v, [0.5, -0.5, 0.5])
    np.testing.assert_array_equal(q.d, [0.5, 0.5, -0.5, 0.5])
    assert Quaternion(q) == q
    assert Quaternion(0.5, [0.5, -0.5, 0.5]) == q
    with pytest.raises(ValueError):
        Quaternion([1, 2, 3])
    with pytest.raises(ValueError):
        q.d[0] = 2.0          # immutable


def test_from_rotation_matches_scipy_over_random_rotations():
    R = Rotation.random(500, random_state=3).as_matrix()
    D = quat_from_rot(R)
    np.testing.assert_allclose(D, scipy_quat(R), atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(D, axis=1), 1.0, atol=1e-15)
    np.testing.assert_allclose(quat_to_rot(D), R, atol=1e-14)
    q = Quaternion(R[0])
    np.testing.assert_allclose(q.r(), R[0], atol=1e-14)
    np.testing.assert_allclose(Quaternion(rot2tr(R[0])).d, q.d)


@pytest.mark.parametrize("axis", [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, -2, 0.5], [-1, 1, 1]])
@pytest.mark.parametrize("angle", [np.pi, np.pi - 1e-9, np.pi - 1e-4, 2.0, 1e-9, 0.0])
def test_from_rotation_round_trip_including_half_turns(axis, angle):
    """Half turns make s ~ 0: a trace-only formula loses all precision there."""
    R = rotvec(axis, angle)[:3, :3]
    q = Quaternion(R)
    assert abs(q.norm() - 1.0) < 1e-15
    np.testing.assert_allclose(q.r(), R, atol=1e-15)
    u = np.asarray(axis) / np.linalg.norm(axis)
    expect = np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * u])   # s >= 0 here
    np.testing.assert_allclose(q.d, expect, atol=1e-15)
    np.testing.assert_allclose(q.tr(), rot2tr(R), atol=1e-15)


def test_angvec_matches_rotvec():
    v = [0.2, -0.7, 1.1]
    for theta in (-1.3, 0.4, 3.0):
        q = Quaternion.angvec(theta, v)
        np.testing.assert_allclose(q.r(), rotvec(v, theta)[:3, :3], atol=1e-15)


# --- algebra -----------------------------------------------------------------------------------

def test_hamilton_units_by_hand():
    one, i, j, k = (Quaternion(np.eye(4)[n]) for n in range(4))
    assert i * j == k and j * k == i and k * i == j
    assert j * i == -k
    assert i * i == -one and j * j == -one and k * k == -one
    assert i * j * k == -one


def test_product_compounds_rotations_like_matrices():
    R = Rotation.random(6, random_state=5).as_matrix()
    for a, b in zip(R[:3], R[3:]):
        np.testing.assert_allclose((Quaternion(a) * Quaternion(b)).r(), a @ b, atol=1e-14)
        np.testing.assert_allclose((Quaternion(a) / Quaternion(b)).r(), a @ b.T, atol=1e-14)


def test_vector_rotation():
    R = rotz(0.7) @ rotx(-0.4)
    x = np.array([0.3, -1.0, 2.0])
    np.testing.assert_allclose(Quaternion(R) * x, R @ x, atol=1e-15)
    np.testing.assert_allclose(Quaternion(rotz(np.pi / 2)) * [1, 0, 0], [0, 1, 0], atol=1e-15)


def test_norm_inverse_conjugate_unit_by_hand():
    q = Quaternion(1.0, [2.0, 2.0, 4.0])
    assert q.norm() == 5.0                              # sqrt(1 + 4 + 4 + 16)
    np.testing.assert_allclose(q.unit().d, [0.2, 0.4, 0.4, 0.8])
    np.testing.assert_array_equal(q.conj().d, [1, -2, -2, -4])
    np.testing.assert_allclose(q.inv().d, np.array([1, -2, -2, -4]) / 25)
    assert q * q.inv() == Quaternion() and q.inv() * q == Quaternion()
    assert (2 * q).norm() == 10.0 and (q * 2).norm() == 10.0 and (q / 5).norm() == 1.0
    assert Quaternion(2.0, [0, 0, 0]).inv() == Quaternion(0.5, [0, 0, 0])


def test_integer_powers():
    q = Quaternion(Rotation.random(random_state=9).as_matrix())
    assert q ** 0 == Quaternion()
    assert q ** 3 == q * q * q
    assert q ** -2 == (q * q).inv()
    # the n-th power of a rotation by theta is a rotation by n theta
    assert Quaternion.angvec(0.3, [1, 2, 3]) ** 4 == Quaternion.angvec(1.2, [1, 2, 3])


def test_equality_tolerance_and_repr():
    q = Quaternion.angvec(0.8, [0, 1, 1])
    assert q == Quaternion(q.d + 1e-12)
    assert q != Quaternion(q.d + 1e-6)
    assert q != -q                      # same rotation, different quaternion
    assert (q == "q") is False
    assert eval(repr(q), {"Quaternion": Quaternion}) == q


# --- interpolation -----------------------------------------------------------------------------

def test_qinterp_endpoints_unit_norm_and_scipy_slerp():
    q1 = Quaternion(Rotation.random(random_state=1).as_matrix())
    q2 = Quaternion(Rotation.random(random_state=2).as_matrix())
    r = np.linspace(0, 1, 11)
    qs = qinterp(q1, q2, r)
    assert isinstance(qs, list) and len(qs) == 11
    assert qs[0] == q1
    np.testing.assert_allclose(qs[-1].r(), q2.r(), atol=1e-14)
    np.testing.assert_allclose([q.norm() for q in qs], 1.0, atol=1e-15)
    ref = Slerp([0, 1], Rotation.from_matrix([q1.r(), q2.r()]))(r).as_matrix()
    np.testing.assert_allclose([q.r() for q in qs], ref, atol=1e-13)


def test_qinterp_constant_angular_rate():
    q1 = Quaternion.angvec(0.5, [1, 0, 0])
    q2 = Quaternion.angvec(2.5, [0.3, 1, -1])
    total = rotation_angle(q1.r().T @ q2.r())
    r = np.linspace(0, 1, 9)
    R = [q.r() for q in qinterp(q1, q2, r)]
    steps = [rotation_angle(a.T @ b) for a, b in zip(R[:-1], R[1:])]
    np.testing.assert_allclose(steps, total / 8, atol=1e-13)
    from_start = [rotation_angle(R[0].T @ b) for b in R]
    np.testing.assert_allclose(from_start, r * total, atol=1e-13)


def test_qinterp_takes_the_shorter_arc():
    # from Rz(0) to Rz(3 pi / 2) the shorter way is -pi/2: half way is Rz(-pi/4) (by hand)
    q1, q2 = Quaternion(), Quaternion(rotz(1.5 * np.pi))
    np.testing.assert_allclose(qinterp(q1, q2, 0.5).r(), rotz(-np.pi / 4), atol=1e-15)
    np.testing.assert_allclose(qinterp(q1, -q2, 0.5).r(), rotz(-np.pi / 4), atol=1e-15)


def test_slerp_nearly_equal_quaternions():
    d1 = Quaternion.angvec(0.3, [1, 1, 0]).d
    d2 = Quaternion.angvec(0.3 + 1e-12, [1, 1, 0]).d
    mid = slerp(d1, d2, np.array([0.0, 0.5, 1.0]))
    assert np.all(np.isfinite(mid))
    np.testing.assert_allclose(mid, [d1, 0.5 * (d1 + d2), d2], atol=1e-15)
