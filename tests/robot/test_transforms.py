"""Transforms against hand-derived values, seed 000's printed matrices, scipy's independent
rotation code, round trips and invariants."""
import numpy as np
import pytest
from scipy.linalg import expm
from scipy.spatial.transform import Rotation

from blocks.robot.transforms import (diff2tr, eul2tr, ishomog, oa2tr, rot2tr, rotvec, rotx,
                                     roty, rotz, rpy2tr, skew, tr2diff, tr2eul, tr2jac, tr2rot,
                                     tr2rpy, transl, trnorm, trotx, troty, trotz)

RNG = np.random.default_rng(20240607)


def random_transforms(m):
    """m random rigid transforms: rotations from scipy (uniform), translations in [-2, 2]^3."""
    T = rot2tr(Rotation.random(m, random_state=7).as_matrix())
    T[:, :3, 3] = RNG.uniform(-2, 2, (m, 3))
    return T


def assert_rotation(R):
    R = np.asarray(R)
    np.testing.assert_allclose(np.swapaxes(R, -1, -2) @ R, np.broadcast_to(np.eye(3), R.shape),
                               atol=1e-13)
    np.testing.assert_allclose(np.linalg.det(R), 1.0, atol=1e-13)


# --- elementary rotations ------------------------------------------------------------------

def test_axis_rotations_quarter_turn_by_hand():
    # right-hand rule: rotating by +90 deg about x takes y to z and z to -y, and so on
    np.testing.assert_allclose(rotx(np.pi / 2), [[1, 0, 0], [0, 0, -1], [0, 1, 0]], atol=1e-16)
    np.testing.assert_allclose(roty(np.pi / 2), [[0, 0, 1], [0, 1, 0], [-1, 0, 0]], atol=1e-16)
    np.testing.assert_allclose(rotz(np.pi / 2), [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-16)
    np.testing.assert_allclose(trotz(np.pi / 2)[:3, :3], rotz(np.pi / 2))
    np.testing.assert_array_equal(trotz(0.4)[3], [0, 0, 0, 1])
    np.testing.assert_array_equal(trotz(0.4)[:3, 3], [0, 0, 0])


def test_axis_rotations_match_scipy():
    for f, axis in ((rotx, "x"), (roty, "y"), (rotz, "z")):
        for th in (-2.5, 0.3, 1.7):
            np.testing.assert_allclose(f(th), Rotation.from_euler(axis, th).as_matrix(),
                                       atol=1e-15)


def test_seed_printed_rotx_and_transl_roty():
    # seed 000, trinterp page: t1 = rotx(.2) and t2 = transl(1,4,5)*roty(0.3) (4 decimals);
    # release 7's 4x4 rotx is trotx here
    np.testing.assert_allclose(trotx(0.2), [[1, 0, 0, 0], [0, 0.9801, -0.1987, 0],
                                            [0, 0.1987, 0.9801, 0], [0, 0, 0, 1]], atol=5e-5)
    np.testing.assert_allclose(transl(1, 4, 5) @ troty(0.3),
                               [[0.9553, 0, 0.2955, 1], [0, 1, 0, 4], [-0.2955, 0, 0.9553, 5],
                                [0, 0, 0, 1]], atol=5e-5)


def test_rotations_vectorise_over_angles():
    th = np.array([-1.0, 0.0, 0.5, 3.0])
    for f in (rotx, roty, rotz, trotx, troty, trotz):
        stack = f(th)
        assert stack.shape == (4,) + f(0.0).shape
        for i, t in enumerate(th):
            np.testing.assert_array_equal(stack[i], f(t))
    assert_rotation(rotx(th))


# --- translation and conversions -----------------------------------------------------------

def test_transl_forms():
    T = transl(1.0, 2.0, 3.0)
    np.testing.assert_array_equal(T, [[1, 0, 0, 1], [0, 1, 0, 2], [0, 0, 1, 3], [0, 0, 0, 1]])
    np.testing.assert_array_equal(transl([1, 2, 3]), T)
    p = transl(trotx(0.3) @ transl(4, 5, 6))          # translation of a composed transform
    np.testing.assert_allclose(p, rotx(0.3) @ [4, 5, 6])
    assert p.shape == (3,)
    P = RNG.normal(size=(5, 3))
    stack = transl(P)
    assert stack.shape == (5, 4, 4)
    np.testing.assert_array_equal(transl(stack), P)    # release 7's transl(TC) form: (m, 3)
    np.testing.assert_array_equal(transl(P[:, 0], P[:, 1], P[:, 2]), stack)
    with pytest.raises(ValueError):
        transl([1, 2])


def test_rot2tr_tr2rot_round_trip():
    T = random_transforms(3)
    R = tr2rot(T)
    np.testing.assert_array_equal(R, T[:, :3, :3])
    back = rot2tr(R)
    np.testing.assert_array_equal(back[:, :3, :3], R)
    np.testing.assert_array_equal(back[:, :3, 3], 0.0)
    np.testing.assert_array_equal(back[:, 3], np.tile([0, 0, 0, 1.0], (3, 1)))


def test_skew_is_cross_product():
    w, x = RNG.normal(size=3), RNG.normal(size=3)
    np.testing.assert_allclose(skew(w) @ x, np.cross(w, x), atol=1e-15)


# --- rotvec ----------------------------------------------------------------------------------

def test_rotvec_by_hand():
    np.testing.assert_allclose(rotvec([0, 0, 5], 0.7), trotz(0.7), atol=1e-15)  # |v| irrelevant
    # 120 deg about (1, 1, 1) cycles the axes x -> y -> z -> x
    np.testing.assert_allclose(rotvec([1, 1, 1], 2 * np.pi / 3)[:3, :3],
                               [[0, 0, 1], [1, 0, 0], [0, 1, 0]], atol=1e-15)


def test_rotvec_against_scipy_and_invariants():
    v = np.array([0.3, -1.2, 0.5])
    th = np.array([-2.0, 0.1, 1.0, np.pi])
    T = rotvec(v, th)
    assert T.shape == (4, 4, 4)
    for Ti, t in zip(T, th):
        np.testing.assert_allclose(Ti[:3, :3],
                                   Rotation.from_rotvec(t * v / np.linalg.norm(v)).as_matrix(),
                                   atol=1e-14)
        np.testing.assert_allclose(Ti[:3, :3] @ v, v, atol=1e-14)  # the axis is fixed
    assert_rotation(T[:, :3, :3])
    with pytest.raises(ValueError):
        rotvec([0, 0, 0], 1.0)


# --- ZYZ Euler angles ------------------------------------------------------------------------

def test_eul2tr_definition_and_scipy():
    a, b, c = 0.4, 1.1, -2.3
    T = eul2tr(a, b, c)
    np.testing.assert_allclose(T[:3, :3], rotz(a) @ roty(b) @ rotz(c), atol=1e-15)
    # scipy's intrinsic "ZYZ" is the same product
    np.testing.assert_allclose(T[:3, :3], Rotation.from_euler("ZYZ", [a, b, c]).as_matrix(),
                               atol=1e-15)
    np.testing.assert_array_equal(eul2tr([a, b, c]), T)
    assert_rotation(T[:3, :3])


def test_tr2eul_recovers_angles_away_from_singularity():
    m = 200
    ang = np.column_stack([RNG.uniform(-np.pi, np.pi, m), RNG.uniform(0.01, np.pi - 0.01, m),
                           RNG.uniform(-np.pi, np.pi, m)])
    T = eul2tr(ang)
    assert T.shape == (m, 4, 4)
    np.testing.assert_allclose(tr2eul(T), ang, atol=1e-12)
    np.testing.assert_allclose(tr2eul(T[5]), ang[5], atol=1e-12)
    np.testing.assert_allclose(tr2eul(T[:, :3, :3]), ang, atol=1e-12)  # 3x3 input accepted


def test_tr2eul_round_trip_random_rotations():
    T = random_transforms(300)
    np.testing.assert_allclose(eul2tr(tr2eul(T))[:, :3, :3], T[:, :3, :3], atol=1e-13)


@pytest.mark.parametrize("b", [0.0, 1e-17, 1e-14, 1e-9, 1e-5, np.pi - 1e-9, np.pi])
def test_tr2eul_round_trip_near_singularity(b):
    T = eul2tr(0.7, b, -0.2)
    np.testing.assert_allclose(eul2tr(tr2eul(T)), T, atol=1e-13)


def test_tr2eul_singular_convention_by_hand():
    # b = 0: Rz(a) Rz(c) = Rz(a + c), reported as a = 0, c = a + c (release 7)
    np.testing.assert_allclose(tr2eul(eul2tr(0.3, 0.0, 0.5)), [0, 0, 0.8], atol=1e-15)
    # b = pi: Rz(a) Ry(pi) = Ry(pi) Rz(-a), so the set is (0, pi, c - a)
    np.testing.assert_allclose(tr2eul(eul2tr(0.3, np.pi, 0.5)), [0, np.pi, 0.2], atol=1e-15)


# --- roll / pitch / yaw (seed 000: T = Rz(roll) Ry(pitch) Rx(yaw)) ---------------------------

def test_rpy2tr_seed_convention():
    r, p, y = 0.3, -0.6, 1.2
    T = rpy2tr(r, p, y)
    np.testing.assert_allclose(T[:3, :3], rotz(r) @ roty(p) @ rotx(y), atol=1e-15)
    np.testing.assert_allclose(T[:3, :3], Rotation.from_euler("ZYX", [r, p, y]).as_matrix(),
                               atol=1e-15)
    # in seed 000's naming roll turns about Z and yaw about X
    np.testing.assert_allclose(rpy2tr(0.3, 0, 0), trotz(0.3), atol=1e-16)
    np.testing.assert_allclose(rpy2tr(0, 0, 0.3), trotx(0.3), atol=1e-16)
    np.testing.assert_array_equal(rpy2tr([r, p, y]), T)


def test_tr2rpy_recovers_angles_and_round_trips():
    m = 200
    ang = np.column_stack([RNG.uniform(-np.pi, np.pi, m),
                           RNG.uniform(-np.pi / 2 + 0.01, np.pi / 2 - 0.01, m),
                           RNG.uniform(-np.pi, np.pi, m)])
    np.testing.assert_allclose(tr2rpy(rpy2tr(ang)), ang, atol=1e-12)
    T = random_transforms(300)
    np.testing.assert_allclose(rpy2tr(tr2rpy(T))[:, :3, :3], T[:, :3, :3], atol=1e-13)


@pytest.mark.parametrize("p", [np.pi / 2, np.pi / 2 - 1e-9, -np.pi / 2, -np.pi / 2 + 1e-12])
def test_tr2rpy_round_trip_near_singularity(p):
    T = rpy2tr(-0.4, p, 1.0)
    np.testing.assert_allclose(rpy2tr(tr2rpy(T)), T, atol=1e-13)


def test_tr2rpy_singular_convention_by_hand():
    # Rz(r) Ry(+pi/2) = Ry(pi/2) Rx(-r): the set (r, pi/2, y) is reported as (0, pi/2, y - r)
    np.testing.assert_allclose(tr2rpy(rpy2tr(0.1, np.pi / 2, 0.3)), [0, np.pi / 2, 0.2],
                               atol=1e-15)
    # Rz(r) Ry(-pi/2) = Ry(-pi/2) Rx(r): reported as (0, -pi/2, y + r)
    np.testing.assert_allclose(tr2rpy(rpy2tr(0.1, -np.pi / 2, 0.3)), [0, -np.pi / 2, 0.4],
                               atol=1e-15)


# --- oa2tr, trnorm, ishomog ------------------------------------------------------------------

def test_oa2tr_by_hand():
    np.testing.assert_allclose(oa2tr([0, 1, 0], [0, 0, 1]), np.eye(4), atol=1e-16)
    # o not perpendicular to a (and a not unit): a is kept, o is made perpendicular
    np.testing.assert_allclose(oa2tr([0, 1, 1], [0, 0, 2]), np.eye(4), atol=1e-16)
    T = oa2tr([1, 0, 0], [0, -1, 0])   # n = o x a = -z
    np.testing.assert_allclose(T[:3, :3], [[0, 1, 0], [0, 0, -1], [-1, 0, 0]], atol=1e-16)
    o, a = RNG.normal(size=3), RNG.normal(size=3)
    R = oa2tr(o, a)[:3, :3]
    assert_rotation(R)
    np.testing.assert_allclose(R[:, 2], a / np.linalg.norm(a), atol=1e-15)
    assert R[:, 1] @ o > 0 and abs(np.linalg.det(np.column_stack([R[:, 1], o, a]))) < 1e-12


def test_trnorm():
    T = random_transforms(20)
    np.testing.assert_allclose(trnorm(T), T, atol=1e-14)   # already orthonormal: unchanged
    noisy = T + 1e-4 * RNG.normal(size=T.shape) * np.array([1, 1, 1, 0])[:, None]
    fixed = trnorm(noisy)
    assert_rotation(fixed[:, :3, :3])
    a = noisy[:, :3, 2]
    np.testing.assert_allclose(fixed[:, :3, 2], a / np.linalg.norm(a, axis=1)[:, None],
                               atol=1e-15)
    np.testing.assert_array_equal(fixed[:, :3, 3], noisy[:, :3, 3])
    np.testing.assert_allclose(fixed, T, atol=1e-3)         # a small correction
    assert_rotation(trnorm(noisy[0, :3, :3]))


def test_ishomog():
    assert ishomog(np.eye(4)) and not ishomog(np.eye(3)) and not ishomog(np.zeros((2, 4, 4)))
    T = random_transforms(1)[0]
    assert ishomog(T, check=True)
    assert not ishomog(T * 1.01, check=True)
    assert ishomog(T * 1.01)   # release 7 only checks the shape


# --- differential motion -----------------------------------------------------------------------

def test_tr2diff_one_argument_by_hand():
    D = np.array([[0, -3.0, 2.2, 4], [3, 0, -1.2, 5], [-2, 0.8, 0, 6], [0, 0, 0, 0]])
    # delta_x = (0.8 - (-1.2)) / 2 = 1, delta_y = (2.2 - (-2)) / 2 = 2.1, delta_z = (3 + 3) / 2
    np.testing.assert_allclose(tr2diff(D), [4, 5, 6, 1, 2.1, 3], atol=1e-15)
    d = RNG.normal(size=(4, 6))
    np.testing.assert_allclose(tr2diff(diff2tr(d)), d, atol=1e-15)


def test_diff2tr_by_hand():
    np.testing.assert_array_equal(diff2tr([1, 2, 3, 4, 5, 6]),
                                  [[0, -6, 5, 1], [6, 0, -4, 2], [-5, 4, 0, 3], [0, 0, 0, 0]])


def test_tr2diff_two_arguments_small_rotation_by_hand():
    # c_k(T1) = e_k, c_k(T2) = columns of Rz(e): sum of crosses = (0, 0, 2 sin e)
    e = 0.01
    np.testing.assert_allclose(tr2diff(np.eye(4), transl(1, 2, 3) @ trotz(e)),
                               [1, 2, 3, 0, 0, np.sin(e)], atol=1e-16)
    T = random_transforms(4)
    np.testing.assert_allclose(tr2diff(T, T), 0.0, atol=1e-15)
    stack = tr2diff(T[:2], T[2:])
    assert stack.shape == (2, 6)
    np.testing.assert_allclose(stack[1], tr2diff(T[1], T[3]))


@pytest.mark.parametrize("k", range(3))
def test_differential_motion_is_second_order_accurate(k):
    """T2 = expm(Delta) T1 (exact motion by d): the first-order formulas err by O(|d|^2)."""
    T1 = random_transforms(3)[k]
    direction = RNG.normal(size=6)
    errors = []
    for eps in (1e-3, 1e-4):
        d = eps * direction
        T2 = expm(diff2tr(d)) @ T1
        err_two = tr2diff(T1, T2)[3:] - d[3:]                 # rotation part, world frame
        err_one = tr2diff(T2 @ np.linalg.inv(T1) - np.eye(4)) - d
        err_map = (np.eye(4) + diff2tr(d)) @ T1 - T2
        # translation of the 2-argument form is the origin displacement p2 - p1 by definition
        np.testing.assert_allclose(tr2diff(T1, T2)[:3], T2[:3, 3] - T1[:3, 3], atol=1e-15)
        errors.append([np.abs(err_two).max(), np.abs(err_one).max(), np.abs(err_map).max()])
    errors = np.array(errors)
    scale = np.linalg.norm(direction) ** 2 * (1 + np.linalg.norm(T1[:3, 3]))
    assert np.all(errors[0] < 1e-6 * scale), errors         # |error| <~ |d|^2 (1 + |p|)
    ratio = errors[0] / np.maximum(errors[1], 1e-300)
    assert np.all(ratio > 50), ratio      # shrinking d tenfold shrinks the error ~100-fold


# --- velocity transform ------------------------------------------------------------------------

def test_tr2jac_by_hand():
    # spin about z at 1 rad/s: the point at (1, 0, 0) moves along +y at 1 m/s
    np.testing.assert_allclose(tr2jac(transl(1, 0, 0)) @ [0, 0, 0, 0, 0, 1],
                               [0, 1, 0, 0, 0, 1], atol=1e-16)
    # frame B turned +90 deg about z: A's x axis is B's -y axis
    np.testing.assert_allclose(tr2jac(trotz(np.pi / 2)) @ [1, 0, 0, 0, 0, 0],
                               [0, -1, 0, 0, 0, 0], atol=1e-15)


def test_tr2jac_matches_velocity_mapped_by_conjugation():
    """B^-1 dB/dt = T^-1 Delta T when B = T is carried by the motion dT/dt = Delta T (A frame)."""
    T = random_transforms(5)
    d = RNG.normal(size=(5, 6))
    J = tr2jac(T)
    assert J.shape == (5, 6, 6)
    for Ti, Ji, di in zip(T, J, d):
        np.testing.assert_allclose(Ji @ di, tr2diff(np.linalg.inv(Ti) @ diff2tr(di) @ Ti),
                                   atol=1e-13)
    np.testing.assert_allclose(tr2jac(T[0] @ T[1]), tr2jac(T[1]) @ tr2jac(T[0]), atol=1e-13)
    np.testing.assert_allclose(tr2jac(np.linalg.inv(T[2])), np.linalg.inv(J[2]), atol=1e-12)
