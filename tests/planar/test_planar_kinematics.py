"""Planar kinematics: the paper's 4-R numbers, finite differences, the paper's eq. (8)."""
import numpy as np
import pytest

from blocks.planar import kin_link, kinmodel
from planar_reference import ARM4, Q4, joint_positions, random_arm, tip


def test_paper_4r_numbers():
    # Published in seed 001, section 4.1 (MATLAB session, disp([x xd xdd])), repeated in
    # spec/demos.md planar4r: x = (1.4142, 1.4142), J qd = (-1.4142, 4.2426) for qd = ones,
    # J qdd = (0, 1.4142) for qdd = [1, 0, -1, 2]; printed to 4 decimals.
    x, J, _ = kinmodel(Q4, np.ones(4), ARM4["L"])
    np.testing.assert_allclose(x, [1.4142, 1.4142], atol=5e-5)
    np.testing.assert_allclose(J @ np.ones(4), [-1.4142, 4.2426], atol=5e-5)
    np.testing.assert_allclose(J @ np.array([1.0, 0.0, -1.0, 2.0]), [0.0, 1.4142], atol=5e-5)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 20])
def test_tip_and_jacobian_against_finite_differences(n):
    arm = random_arm(n, seed=n)
    rng = np.random.default_rng(100 + n)
    q, qd = rng.uniform(-np.pi, np.pi, n), rng.uniform(-2, 2, n)
    x, J, Jd = kinmodel(q, qd, arm["L"])
    # tip: sum of link vectors (planar_reference.joint_positions)
    np.testing.assert_allclose(x, tip(q, arm["L"]), rtol=0, atol=1e-12)
    # J: central differences of that tip position
    eps = 1e-6
    J_fd = np.column_stack([(tip(q + eps * e, arm["L"]) - tip(q - eps * e, arm["L"])) / (2 * eps)
                            for e in np.eye(n)])
    np.testing.assert_allclose(J, J_fd, atol=1e-8)
    # Jd = dJ/dt: central differences of J along qd
    J_plus = kinmodel(q + eps * qd, qd, arm["L"])[1]
    J_minus = kinmodel(q - eps * qd, qd, arm["L"])[1]
    np.testing.assert_allclose(Jd, (J_plus - J_minus) / (2 * eps), atol=1e-7)


def test_jacobian_rate_equals_papers_eq8():
    # Second algorithm: eq. (8), Jd row 0 = -qd^T [x_max(j,k)], row 1 = -qd^T [y_max(j,k)],
    # with x_j, y_j the tip seen from joint j (eq. 3, here from J itself: J = [[-y], [x]]).
    n = 6
    arm = random_arm(n, seed=11)
    rng = np.random.default_rng(12)
    q, qd = rng.uniform(-3, 3, n), rng.uniform(-2, 2, n)
    _, J, Jd = kinmodel(q, qd, arm["L"])
    xs, ys = J[1], -J[0]
    r = np.maximum.outer(np.arange(n), np.arange(n))
    np.testing.assert_allclose(Jd[0], qd @ -xs[r], atol=1e-12)
    np.testing.assert_allclose(Jd[1], qd @ -ys[r], atol=1e-12)


@pytest.mark.parametrize("n", [1, 4, 9])
def test_kin_link_sums_link_vectors(n):
    arm = random_arm(n, seed=20 + n)
    q = np.random.default_rng(n).uniform(-3, 3, n)
    P = kin_link(q, arm["L"])
    assert P.shape == (n + 1, 2)
    np.testing.assert_allclose(P, joint_positions(q, arm["L"]), atol=1e-12)
    np.testing.assert_array_equal(P[0], [0.0, 0.0])
    np.testing.assert_allclose(np.linalg.norm(np.diff(P, axis=0), axis=1), arm["L"], rtol=1e-12)


def test_length_mismatch_is_an_error():
    with pytest.raises(ValueError, match="L"):
        kinmodel(np.zeros(3), np.zeros(3), np.ones(2))
    with pytest.raises(ValueError, match="qd"):
        kinmodel(np.zeros(3), np.zeros(4), np.ones(3))
    with pytest.raises(ValueError):
        kin_link(np.zeros((2, 3)), np.ones(3))
