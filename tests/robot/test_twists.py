"""Twists and the product of exponentials (blocks.robot.twists) against the worked examples of
seed 004 (Murray, Li & Sastry's examples as printed by the twist toolbox), closed forms derived
by hand here, the matrix exponential as a series (scipy.linalg.expm), finite differences, and
the DH robot library as a second algorithm for the same robots."""
import math

import numpy as np
import pytest
from scipy.linalg import expm

from blocks.robot import load_robot, rotx, roty, rotz, transl, trotx, troty
from blocks.robot.twists import (Ad, TwistRobot, ad, body_jacobian, christoffel,
                                 coriolis_matrix, exp_rot, exp_twist, generalized_inertia,
                                 inverse, link_body_jacobian, log_rot, log_twist, mass_matrix,
                                 mass_matrix_derivatives, poe, screw, skew, spatial_jacobian,
                                 translation, twists_from_dh, unskew, vee, wedge)

RNG = np.random.default_rng(2024)
Z, X, Y = np.eye(3)[2], np.eye(3)[0], np.eye(3)[1]


def random_rigid(rng):
    return exp_twist(rng.normal(size=6), rng.uniform(-3, 3))


# --- the algebra (seed 004 §3.1-3.3) ----------------------------------------------------------

def test_skew_wedge_and_their_inverses():
    w, b, xi = RNG.normal(size=3), RNG.normal(size=3), RNG.normal(size=6)
    np.testing.assert_allclose(skew(w) @ b, np.cross(w, b), atol=1e-15)      # eq. 3-2
    np.testing.assert_array_equal(unskew(skew(w)), w)
    np.testing.assert_array_equal(vee(wedge(xi)), xi)                           # eq. 3-13/14
    # a point p moves with velocity ξ^ p̄ = v + ω × p
    p = RNG.normal(size=3)
    np.testing.assert_allclose((wedge(xi) @ np.append(p, 1))[:3], xi[:3] + np.cross(xi[3:], p))


@pytest.mark.parametrize("xi", [screw(Z, [0.3, -0.2, 0.5]), screw([1, 2, 2], [1, 0, -1], 0.2),
                                translation([0.2, -0.5, 1.0]), np.r_[0.4, -1.1, 0.3, 0.5, 2.0, -1.0]])
def test_exponentials_equal_the_matrix_series(xi):
    # eq. 3-17 (the defining series) by scipy's expm, against the closed forms 3-6/3-19/3-20;
    # ξ includes a pitch, a pure translation and a non-unit ω
    for theta in (0.0, 0.7, -2.5, 4.0):
        np.testing.assert_allclose(exp_twist(xi, theta), expm(wedge(xi) * theta), atol=1e-13)
    w = np.asarray(xi[3:], dtype=float)
    np.testing.assert_allclose(exp_rot(w, 1.3), expm(skew(w) * 1.3), atol=1e-13)


def test_screw_motions_move_points_as_described():
    w, q = np.array([0, 0.6, 0.8]), np.array([0.5, -1.0, 2.0])
    # a point on the axis is fixed by the rotation (3-27); with pitch h it advances h·θ along ω
    np.testing.assert_allclose(exp_twist(screw(w, q), 1.1) @ np.append(q, 1), np.append(q, 1))
    np.testing.assert_allclose(exp_twist(screw(w, q, 0.3), 1.1)[:3] @ np.append(q, 1),
                               q + 0.3 * 1.1 * w)
    # a pure translation (3-28, 3-19) moves every point by v·θ and does not rotate
    g = exp_twist(translation([1.0, 2.0, -1.0]), 0.5)
    np.testing.assert_array_equal(g, transl(0.5, 1.0, -0.5))


def test_log_inverts_exp():
    for _ in range(20):
        g = random_rigid(RNG)
        np.testing.assert_allclose(exp_twist(log_twist(g)), g, atol=1e-12)
    # rotation vectors with |r| < π come back unchanged; small and half-turn angles included
    for r in (RNG.normal(size=3), [1e-9, -2e-9, 3e-10], [0, 0, 0], 3.1415 * np.array([0, 0.6, 0.8])):
        np.testing.assert_allclose(log_rot(exp_rot(r)), r, atol=1e-12)
    for axis in (X, Y, Z, np.array([1.0, 2.0, 2.0]) / 3):       # θ = π exactly: either sign
        r = log_rot(exp_rot(axis, math.pi))
        assert abs(abs(r @ axis) - math.pi) < 1e-12
        np.testing.assert_allclose(exp_rot(r), exp_rot(axis, math.pi), atol=1e-12)
    # ξθ of a known motion: a rotation of 0.8 rad about z through (1, 0, 0)
    np.testing.assert_allclose(log_twist(exp_twist(screw(Z, X), 0.8)), 0.8 * screw(Z, X),
                               atol=1e-14)


def test_adjoint_properties():
    g1, g2 = random_rigid(RNG), random_rigid(RNG)
    xi, eta = RNG.normal(size=6), RNG.normal(size=6)
    np.testing.assert_allclose(Ad(g1 @ g2), Ad(g1) @ Ad(g2), atol=1e-12)
    np.testing.assert_allclose(Ad(inverse(g1)), np.linalg.inv(Ad(g1)), atol=1e-12)
    np.testing.assert_allclose(inverse(g1) @ g1, np.eye(4), atol=1e-14)
    # Ad_g ξ = (g ξ^ g⁻¹)^∨ (the matrix form behind 3-23..3-25)
    np.testing.assert_allclose(Ad(g1) @ xi, vee(g1 @ wedge(xi) @ inverse(g1)), atol=1e-12)
    # ad_ξ η = [ξ^, η^]^∨
    np.testing.assert_allclose(ad(xi) @ eta, vee(wedge(xi) @ wedge(eta) - wedge(eta) @ wedge(xi)),
                               atol=1e-13)


# --- forward kinematics: the seed's worked examples ----------------------------------------------

L0, L1, L2 = 0.4, 0.35, 0.3


def scara_twists(l1=L1, l2=L2):
    """Seed 004 §4.1, example 3.1 (p. 115): R1..R4 = exp4_2 of these twists."""
    return np.array([[0, 0, 0, 0, 0, 1], [l1, 0, 0, 0, 0, 1], [l1 + l2, 0, 0, 0, 0, 1],
                     [0, 0, 1, 0, 0, 0]], dtype=float)


def scara_printed(s, l0=L0, l1=L1, l2=L2):
    """Rst printed in seed 004 §4.1 (example 3.1)."""
    s1, s2, s3, s4 = s
    c, sn = math.cos(s1 + s2 + s3), math.sin(s1 + s2 + s3)
    return np.array([[c, -sn, 0, -math.sin(s1 + s2) * l2 - math.sin(s1) * l1],
                     [sn, c, 0, math.cos(s1 + s2) * l2 + math.cos(s1) * l1],
                     [0, 0, 1, l0 + s4], [0, 0, 0, 1]])


def test_scara_forward_kinematics_is_the_printed_closed_form():
    gst0 = transl(0, L1 + L2, L0)                       # gst0 of example 3.1
    for _ in range(10):
        s = RNG.uniform(-3, 3, 4)
        np.testing.assert_allclose(poe(scara_twists(), s, gst0), scara_printed(s), atol=1e-14)
    # the twists are those of screw(w, q) with the axes through (0, 0, 0), (0, l1, 0), (0, l1+l2, 0)
    np.testing.assert_allclose(scara_twists()[:3], [screw(Z, [0, y, 0]) for y in (0, L1, L1 + L2)])


def test_scara_with_the_alternate_base_frame():
    # seed 004 §4.3, example 3.3 (p. 120): axes through (0, -l1-l2, 0), (0, -l2, 0), the origin,
    # gst0 = I. By hand: the tool point (0, 0, θ4) turned about the three axes gives
    # p = (-l1 s1 - l2 s12, l1 c1 + l2 c12 - l1 - l2, θ4), R = Rz(θ1 + θ2 + θ3)
    tw = [screw(Z, [0, -L1 - L2, 0]), screw(Z, [0, -L2, 0]), screw(Z, [0, 0, 0]), translation(Z)]
    for _ in range(10):
        s = RNG.uniform(-3, 3, 4)
        g = poe(tw, s)
        np.testing.assert_allclose(g[:3, :3], rotz(s[0] + s[1] + s[2]), atol=1e-14)
        p = [-L1 * math.sin(s[0]) - L2 * math.sin(s[0] + s[1]),
             L1 * math.cos(s[0]) + L2 * math.cos(s[0] + s[1]) - L1 - L2, s[3]]
        np.testing.assert_allclose(g[:3, 3], p, atol=1e-14)
        # the same arm seen from the tool's home frame: g' = g_st(0)⁻¹·g (example 3.1's l0, l1, l2)
        gst0 = transl(0, L1 + L2, L0)
        np.testing.assert_allclose(g, inverse(gst0) @ poe(scara_twists(), s, gst0), atol=1e-14)


def elbow_twists(l0=L0, l1=L1, l2=L2):
    """Seed 004 §4.2, example 3.2 (p. 117): the elbow manipulator's screw(w_i, q_i)."""
    return [screw(Z, [0, 0, l0]), screw(-X, [0, 0, l0]), screw(-X, [0, l1, l0]),
            screw(Z, [0, l1 + l2, l0]), screw(-X, [0, l1 + l2, l0]), screw(Y, [0, l1 + l2, l0])]


def test_elbow_manipulator_against_the_hand_derived_pose():
    # seed 004 prints no result ("too long"). By hand: the tool point (0, l1+l2, l0) lies on
    # axes 4-6; joint 3 turns it about -x through (0, l1, l0), joint 2 about -x through
    # (0, 0, l0), joint 1 about z: p = (-s1 r, c1 r, l0 - l1 s2 - l2 s23), r = l1 c2 + l2 c23;
    # the rotation is the product of the axis rotations, Rz(θ1)Rx(-θ2)Rx(-θ3)Rz(θ4)Rx(-θ5)Ry(θ6)
    gst0 = transl(0, L1 + L2, L0)
    for _ in range(10):
        t = RNG.uniform(-3, 3, 6)
        g = poe(elbow_twists(), t, gst0)
        r = L1 * math.cos(t[1]) + L2 * math.cos(t[1] + t[2])
        p = [-math.sin(t[0]) * r, math.cos(t[0]) * r,
             L0 - L1 * math.sin(t[1]) - L2 * math.sin(t[1] + t[2])]
        R = rotz(t[0]) @ rotx(-t[1]) @ rotx(-t[2]) @ rotz(t[3]) @ rotx(-t[4]) @ roty(t[5])
        np.testing.assert_allclose(g[:3, 3], p, atol=1e-14)
        np.testing.assert_allclose(g[:3, :3], R, atol=1e-14)


# --- Jacobians ---------------------------------------------------------------------------------

def stanford_twists(l0=L0, l1=L1, s3=0.0):
    """Seed 004 §4.6, example 3.9: the Stanford arm; s3 = 0 puts the wrist axes through
    (0, l1, l0) (the seed's commented alternative), s3 ≠ 0 through (0, l1 + s3, l0) (the
    seed's first choice, marked "right or wrong??")."""
    w = [0, l1 + s3, l0]
    return np.array([screw(Z, [0, 0, 0]), screw(-X, [0, 0, l0]), translation(Y),
                     screw(Z, w), screw(-X, w), screw(Y, w)])


def jacobian_fd(twists, theta, gst0, h=1e-6):
    """Spatial Jacobian by central differences of the PoE map: column j = (∂g/∂θj·g⁻¹)^∨
    (the definition V^s = (ġ g⁻¹)^∨, eq. 3-21)."""
    g = poe(twists, theta, gst0)
    J = np.empty((6, len(theta)))
    for j in range(len(theta)):
        d = np.zeros(len(theta))
        d[j] = h
        dg = (poe(twists, theta + d, gst0) - poe(twists, theta - d, gst0)) / (2 * h)
        J[:, j] = vee(dg @ inverse(g))
    return J


def test_stanford_jacobian_against_finite_differences():
    tw, gst0 = stanford_twists(), transl(0, L1, L0)
    for _ in range(5):
        t = RNG.uniform(-2, 2, 6)
        Js = spatial_jacobian(tw, t)
        np.testing.assert_allclose(Js, jacobian_fd(tw, t, gst0), atol=1e-8)
        # body Jacobian (3-32) and the adjoint relation J^s = Ad_g J^b (3-26)
        Jb = body_jacobian(tw, t, gst0)
        np.testing.assert_allclose(Js, Ad(poe(tw, t, gst0)) @ Jb, atol=1e-13)


def test_stanford_wrist_axes_belong_at_the_home_point():
    # the seed's doubt (§4.6): with constant twists through (0, l1, l0) the wrist point is on
    # axes 4-6 and stays put when they turn -- a spherical wrist; twists through
    # (0, l1 + s3, l0) make the wrist point move with joints 4-6 once s3 ≠ 0, so they are wrong
    gst0 = transl(0, L1, L0)
    t = RNG.uniform(-2, 2, 6)
    t[2] = 0.2
    others = t.copy()
    others[3:] = RNG.uniform(-2, 2, 3)
    right = [poe(stanford_twists(), x, gst0)[:3, 3] for x in (t, others)]
    wrong = [poe(stanford_twists(s3=t[2]), x, gst0)[:3, 3] for x in (t, others)]
    np.testing.assert_allclose(right[0], right[1], atol=1e-14)
    assert np.linalg.norm(wrong[0] - wrong[1]) > 1e-2


def test_scara_jacobian_of_example_3_8():
    # seed 004 §4.5 (example 3.8, p. 154): twists through (0,0,0), (0,l1,0), (0,l1+l2,0) and
    # a prismatic z. By hand, column i of J^s is (-ω × q_i', ω) with q_i' the current point of
    # axis i: (0,0,0), (-l1 s1, l1 c1, 0), (-l1 s1 - l2 s12, l1 c1 + l2 c12, 0); column 4 is (z, 0)
    tw = [screw(Z, [0, 0, 0]), screw(Z, [0, L1, 0]), screw(Z, [0, L1 + L2, 0]), translation(Z)]
    s = RNG.uniform(-3, 3, 4)
    q2 = [-L1 * math.sin(s[0]), L1 * math.cos(s[0]), 0]
    q3 = [q2[0] - L2 * math.sin(s[0] + s[1]), q2[1] + L2 * math.cos(s[0] + s[1]), 0]
    expected = np.column_stack([screw(Z, [0, 0, 0]), screw(Z, q2), screw(Z, q3), translation(Z)])
    np.testing.assert_allclose(spatial_jacobian(tw, s), expected, atol=1e-14)


# --- dynamics: the seed's two- and three-link examples --------------------------------------------

def two_link(l1, r1, r2, m1, m2, Iz1, Iz2, Ix=(0.3, 0.4), Iy=(0.5, 0.6)):
    """Seed 004 §4.7 (p. 212): screws, link frames gst10, gst20, M1 = diag(m1,m1,m1,Ix1,Iy1,Iz1)."""
    tw = np.array([[0, 0, 0, 0, 0, 1], [0, -l1, 0, 0, 0, 1]], dtype=float)
    frames = [transl(r1, 0, 0), transl(l1 + r2, 0, 0)]
    inertias = [np.diag([m1, m1, m1, Ix[0], Iy[0], Iz1]), np.diag([m2, m2, m2, Ix[1], Iy[1], Iz2])]
    return tw, frames, inertias


P2 = dict(l1=0.7, r1=0.3, r2=0.25, m1=2.0, m2=1.5, Iz1=0.11, Iz2=0.07)


def test_two_link_mass_matrix_and_christoffel_symbols_as_printed():
    tw, frames, inertias = two_link(**P2)
    l1, r1, r2, m1, m2, Iz1, Iz2 = (P2[k] for k in ("l1", "r1", "r2", "m1", "m2", "Iz1", "Iz2"))
    for _ in range(5):
        s = RNG.uniform(-3, 3, 2)
        c2, s2 = math.cos(s[1]), math.sin(s[1])
        # M printed in seed 004 §4.7
        M = np.array([[2 * r2 * m2 * l1 * c2 + Iz1 + m2 * l1 ** 2 + r1 ** 2 * m1 + Iz2 + r2 ** 2 * m2,
                       r2 * m2 * l1 * c2 + r2 ** 2 * m2 + Iz2],
                      [r2 * m2 * l1 * c2 + r2 ** 2 * m2 + Iz2, r2 ** 2 * m2 + Iz2]])
        np.testing.assert_allclose(mass_matrix(tw, frames, inertias, s), M, atol=1e-14)
        # F111..F222 printed in seed 004 §4.7: Γ_112 = Γ_121 = Γ_122 = -r2 m2 l1 sin s2,
        # Γ_211 = r2 m2 l1 sin s2, the others 0 (indices 1-based there)
        b = r2 * m2 * l1 * s2
        G = np.zeros((2, 2, 2))
        G[0, 0, 1] = G[0, 1, 0] = G[0, 1, 1] = -b
        G[1, 0, 0] = b
        np.testing.assert_allclose(christoffel(tw, frames, inertias, s), G, atol=1e-14)


def three_link_mass_matrix_by_hand(t, l1, r1, r2, m, Ix, Iy, Iz):
    """The three-link arm of seed 004 §4.8 (example 4.3, p. 222), M derived by hand: link 2
    turns about -x at height l0 with body angular velocity (-θ̇2, -θ̇1 s2, θ̇1 c2) and its
    centre of mass r1 c2 from the z axis; link 3 likewise with θ2 + θ3 and l1 c2 + r2 c23."""
    _, s2, s3 = np.sin(t)
    _, c2, c3 = np.cos(t)
    s23, c23 = math.sin(t[1] + t[2]), math.cos(t[1] + t[2])
    M11 = (Iz[0] + Iy[1] * s2 ** 2 + Iz[1] * c2 ** 2 + m[1] * r1 ** 2 * c2 ** 2
           + Iy[2] * s23 ** 2 + Iz[2] * c23 ** 2 + m[2] * (l1 * c2 + r2 * c23) ** 2)
    M22 = Ix[1] + Ix[2] + m[1] * r1 ** 2 + m[2] * (l1 ** 2 + r2 ** 2 + 2 * l1 * r2 * c3)
    M23 = Ix[2] + m[2] * (r2 ** 2 + l1 * r2 * c3)
    M33 = Ix[2] + m[2] * r2 ** 2
    return np.array([[M11, 0, 0], [0, M22, M23], [0, M23, M33]])


def three_link(l0, l1, r0, r1, r2, m, Ix, Iy, Iz):
    """Seed 004 §4.8: screws and link frames gst10, gst20, gst30, M_i = diag(m,m,m,Ix,Iy,Iz)."""
    tw = np.array([[0, 0, 0, 0, 0, 1], [0, -l0, 0, -1, 0, 0], [0, -l0, l1, -1, 0, 0]], float)
    frames = [transl(0, 0, r0), transl(0, r1, l0), transl(0, l1 + r2, l0)]
    inertias = [np.diag([m[i]] * 3 + [Ix[i], Iy[i], Iz[i]]) for i in range(3)]
    return tw, frames, inertias


P3 = dict(l0=0.5, l1=0.6, r0=0.25, r1=0.3, r2=0.2, m=(3.0, 2.0, 1.2), Ix=(0.05, 0.08, 0.04),
          Iy=(0.06, 0.02, 0.01), Iz=(0.09, 0.07, 0.03))


def test_three_link_mass_matrix_by_hand():
    tw, frames, inertias = three_link(**P3)
    for _ in range(5):
        t = RNG.uniform(-3, 3, 3)
        expected = three_link_mass_matrix_by_hand(
            t, *(P3[k] for k in ("l1", "r1", "r2", "m", "Ix", "Iy", "Iz")))
        np.testing.assert_allclose(mass_matrix(tw, frames, inertias, t), expected, atol=1e-14)


def test_mass_matrix_derivatives_and_the_skew_property():
    tw, frames, inertias = three_link(**P3)
    t, td = RNG.uniform(-3, 3, 3), RNG.uniform(-2, 2, 3)
    dM = mass_matrix_derivatives(tw, frames, inertias, t)
    h = 1e-6
    for k in range(3):
        e = np.eye(3)[k] * h
        fd = (mass_matrix(tw, frames, inertias, t + e) - mass_matrix(tw, frames, inertias, t - e)) / (2 * h)
        np.testing.assert_allclose(dM[k], fd, atol=1e-8)
    C = coriolis_matrix(christoffel(tw, frames, inertias, t), td)
    S = np.einsum("kij,k->ij", dM, td) - 2 * C
    np.testing.assert_allclose(S, -S.T, atol=1e-14)


def test_generalized_inertia_kinetic_energy():
    # ½VᵀMV of a body with its centre of mass at r in frame B: ½m|v + ω × r|² + ½ωᵀIω
    m, r, I = 2.5, RNG.normal(size=3), np.diag([0.3, 0.2, 0.1]) + 0.01
    v, w = RNG.normal(size=3), RNG.normal(size=3)
    vc = v + np.cross(w, r)
    ke = 0.5 * m * vc @ vc + 0.5 * w @ I @ w
    V = np.r_[v, w]
    assert abs(0.5 * V @ generalized_inertia(m, r, I) @ V - ke) < 1e-13


# --- TwistRobot: the DH robots described by twists ----------------------------------------------------

def dh_robots():
    puma = load_robot("puma560")
    based = puma.configure(base=transl(0.1, -0.2, 0.3) @ trotx(0.4), tool=transl(0, 0.05, 0.1)
                           @ troty(0.3), gravity=[0.5, -1.0, 9.0])
    return [puma, based, load_robot("puma560akb"), load_robot("stanford")]


@pytest.mark.parametrize("robot", dh_robots(), ids=["puma560", "puma_base_tool", "puma560akb",
                                                    "stanford"])
def test_dh_and_twist_descriptions_agree(robot):
    tr = TwistRobot.from_dh(robot)
    n = robot.n
    Q, QD, QDD = RNG.uniform(-2, 2, (3, 4, n))
    f = RNG.normal(size=6)
    for q, qd, qdd in zip(Q, QD, QDD):
        np.testing.assert_allclose(tr.fkine(q), robot.fkine(q), atol=1e-14)
        np.testing.assert_allclose(tr.fkine_all(q), robot.fkine_all(q), atol=1e-14)
        np.testing.assert_allclose(tr.jacob0(q), robot.jacob0(q), atol=1e-14)
        np.testing.assert_allclose(tr.jacobn(q), robot.jacobn(q), atol=1e-14)
        np.testing.assert_allclose(tr.inertia(q), robot.inertia(q), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(tr.rne(q, qd, qdd), robot.rne(q, qd, qdd), rtol=1e-12, atol=1e-11)
        np.testing.assert_allclose(tr.rne(q, qd, qdd, fext=f), robot.rne(q, qd, qdd, fext=f),
                                   rtol=1e-12, atol=1e-11)
        np.testing.assert_allclose(tr.gravload(q), robot.gravload(q), atol=1e-11)
        np.testing.assert_allclose(tr.accel(q, qd, qdd), robot.accel(q, qd, qdd), rtol=1e-10,
                                   atol=1e-10)
        # both are the Christoffel-symbol matrix (issue 16)
        np.testing.assert_allclose(tr.coriolis(q, qd), robot.coriolis(q, qd), rtol=1e-11,
                                   atol=1e-12)
    # stacks of configurations, as SerialLink
    np.testing.assert_allclose(tr.rne(Q, QD, QDD), robot.rne(Q, QD, QDD), rtol=1e-12, atol=1e-11)
    np.testing.assert_allclose(tr.jacob0(Q), robot.jacob0(Q), atol=1e-14)
    np.testing.assert_allclose(tr.friction(QD), robot.friction(QD), atol=1e-15)


def test_twists_from_dh_are_the_joint_axes():
    # standard DH: joint j turns about z of frame j-1 (frame -1 the base), read from the
    # library's fkine_all at q = 0: ω is that axis and the motion fixes the frame's origin
    robot = load_robot("puma560")
    twists, gst0 = twists_from_dh(robot)
    for xi, F in zip(twists, robot.fkine_all(np.zeros(6))[:-1]):
        np.testing.assert_allclose(xi[3:], F[:3, 2], atol=1e-15)
        np.testing.assert_allclose(exp_twist(xi, 0.9) @ F[:, 3], F[:, 3], atol=1e-15)
    np.testing.assert_allclose(gst0, robot.fkine(np.zeros(6)), atol=1e-15)


def test_twist_robot_matches_the_reference_formulas():
    # a robot that DH cannot describe directly: a helical joint and arbitrary link frames;
    # kernels (Newton–Euler, composite inertia) against the seed's formulas of `chain`:
    # M = Σ JᵀM_iJ (3-37), C from Γ, g = ∂V/∂q by differences of the potential energy
    tw = np.array([screw(Z, [0.1, 0, 0]), screw(np.array([1.0, 2, 2]) / 3, [0, 0.3, 0.5], 0.05),
                   translation(np.array([0, 0.6, 0.8])), screw(X, [0.2, 0.4, 0.9])])
    frames = np.array([exp_twist(RNG.normal(size=6), 1.0) for _ in range(4)])
    m, r = RNG.uniform(0.5, 3, 4), RNG.normal(scale=0.2, size=(4, 3))
    A = RNG.normal(size=(4, 3, 3))
    I = np.einsum("kij,klj->kil", A, A) * 0.05 + 0.01 * np.eye(3)
    home, base, tool = random_rigid(RNG), random_rigid(RNG), transl(0.0, 0.0, 0.1)
    gravity = np.array([0.3, -0.4, 9.8])
    robot = TwistRobot(tw, home, frames=frames, m=m, r=r, I=I, Jm=[1e-4, 2e-4, 0, 3e-4],
                       G=[50, -30, 1, 10], base=base, tool=tool, gravity=gravity)
    inertias = [generalized_inertia(*a) for a in zip(m, r, I)]
    motor = np.diag(robot.G ** 2 * robot.Jm)
    gb = base[:3, :3].T @ gravity

    def potential(q):
        # V = Σ m_i gᵀ c_i, c_i the centre of mass of link i in the base frame
        V, g = 0.0, np.eye(4)
        for i in range(4):
            g = g @ exp_twist(tw[i], q[i])
            V += m[i] * gb @ (g @ frames[i] @ np.append(r[i], 1))[:3]
        return V

    for _ in range(3):
        q, qd, qdd = RNG.uniform(-2, 2, (3, 4))
        np.testing.assert_allclose(robot.fkine(q), base @ poe(tw, q, home) @ tool, atol=1e-13)
        np.testing.assert_allclose(robot.jacobn(q), body_jacobian(tw, q, home @ tool), atol=1e-13)
        np.testing.assert_allclose(robot.jacobs(q), Ad(base) @ spatial_jacobian(tw, q), atol=1e-13)
        M = mass_matrix(tw, frames, inertias, q) + motor
        np.testing.assert_allclose(robot.inertia(q), M, rtol=1e-12, atol=1e-13)
        C = coriolis_matrix(christoffel(tw, frames, inertias, q), qd)
        np.testing.assert_allclose(robot.coriolis(q, qd), C, rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(robot.christoffel(q), christoffel(tw, frames, inertias, q))
        h = 1e-6
        grav = [(potential(q + h * e) - potential(q - h * e)) / (2 * h) for e in np.eye(4)]
        np.testing.assert_allclose(robot.gravload(q), grav, atol=1e-7)
        np.testing.assert_allclose(robot.rne(q, qd, qdd), M @ qdd + C @ qd + robot.gravload(q),
                                   rtol=1e-11, atol=1e-11)
        # a wrench F at the tool adds J_nᵀF (the tool frame's body Jacobian is jacobn)
        F = RNG.normal(size=6)
        np.testing.assert_allclose(robot.rne(q, qd, qdd, fext=F) - robot.rne(q, qd, qdd),
                                   robot.jacobn(q).T @ F, atol=1e-12)
        np.testing.assert_allclose(robot.accel(q, qd, robot.rne(q, qd, qdd)), qdd, atol=1e-10)


def test_link_body_jacobian_gives_the_link_velocity():
    # V^b of link i's frame by differences of g_sl_i(θ) = e^{ξ1θ1}…e^{ξiθi}·g_sl_i(0)
    tw, frames, _ = three_link(**P3)
    t, td, h = RNG.uniform(-2, 2, 3), RNG.uniform(-1, 1, 3), 1e-6
    for i in range(3):
        def g(x):
            return poe(tw[:i + 1], x[:i + 1], frames[i])
        dg = (g(t + h * td) - g(t - h * td)) / (2 * h)
        np.testing.assert_allclose(link_body_jacobian(tw, t, frames[i], i) @ td,
                                   vee(inverse(g(t)) @ dg), atol=1e-8)


def test_modifiers_match_serial_link():
    puma = load_robot("puma560")
    tr = TwistRobot.from_dh(puma)
    q, qd, qdd = RNG.uniform(-1, 1, (3, 6))
    for a, b in ((tr.perturb(0.2, seed=7), puma.perturb(0.2, seed=7)),
                 (tr.payload(2.5, [0.01, 0.02, 0.1]), puma.payload(2.5, [0.01, 0.02, 0.1])),
                 (tr.nofriction("all"), puma.nofriction("all")),
                 (tr.configure(friction="viscous", payload=(1.0, [0, 0, 0.05]), perturb=0.1,
                               seed=3, gravity=[0, 0, 3.0]),
                  puma.configure(friction="viscous", payload=(1.0, [0, 0, 0.05]), perturb=0.1,
                                 seed=3, gravity=[0, 0, 3.0]))):
        np.testing.assert_allclose(a.rne(q, qd, qdd), b.rne(q, qd, qdd), rtol=1e-12, atol=1e-11)
    assert tr.perturb(0.1).name == "P/" + puma.name
    assert set(tr.poses) == set(puma.poses)


def test_twist_robot_rejects_bad_twists():
    with pytest.raises(ValueError, match="twist 1"):
        TwistRobot([screw(Z, [0, 0, 0]), [0, 0, 0, 0, 0, 2.0]], np.eye(4))
    with pytest.raises(ValueError, match="twist 0"):
        TwistRobot([[0, 0, 2.0, 0, 0, 0]], np.eye(4))
    with pytest.raises(ValueError, match="home"):
        TwistRobot([translation(Z)], np.ones((4, 4)))
