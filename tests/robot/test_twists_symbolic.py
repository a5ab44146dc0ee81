"""Symbolic twists (blocks.robot.twists.symbolic, sympy) against the closed forms printed in
seed 004, expressions derived by hand here, and the numeric robots (lambdified results at
random states). Skipped when sympy is not installed."""
import math

import numpy as np
import pytest

sp = pytest.importorskip("sympy")

from blocks.robot import Link, SerialLink, load_robot, transl  # noqa: E402
from blocks.robot.twists import TwistRobot, exp_twist, poe, spatial_jacobian  # noqa: E402
from blocks.robot.twists import symbolic as S  # noqa: E402

RNG = np.random.default_rng(77)
X, Y, Z = sp.Matrix([1, 0, 0]), sp.Matrix([0, 1, 0]), sp.Matrix([0, 0, 1])
l0, l1, l2, r0, r1, r2, m1, m2, m3 = sp.symbols("l0 l1 l2 r0 r1 r2 m1 m2 m3", positive=True)
Ix1, Ix2, Ix3, Iy1, Iy2, Iy3, Iz1, Iz2, Iz3 = sp.symbols(
    "Ix1 Ix2 Ix3 Iy1 Iy2 Iy3 Iz1 Iz2 Iz3", positive=True)
s = sp.symbols("s1:7", real=True)
sin, cos = sp.sin, sp.cos


def is_zero(expr):
    return S.simplify(expr) == sp.zeros(*expr.shape)


def rigid(p):
    return sp.Matrix([[1, 0, 0, p[0]], [0, 1, 0, p[1]], [0, 0, 1, p[2]], [0, 0, 0, 1]])


def test_gencoords_and_genforces_as_in_seed_003():
    q, qd, qdd = S.gencoords(3)
    assert [str(x) for x in q] == ["q1", "q2", "q3"]
    assert [str(x) for x in qd] == ["qd1", "qd2", "qd3"]
    assert [str(x) for x in qdd] == ["qdd1", "qdd2", "qdd3"]
    assert [str(x) for x in S.genforces(2)] == ["Q1", "Q2"]
    assert q.shape == (3, 1) and all(x.is_real for x in q)


def test_scara_example_3_1_is_the_printed_result():
    # seed 004 §4.1: R1..R4 = exp4_2(twist, s_i), gst0 = [I, (0, l1 + l2, l0)], Rst as printed
    tw = [[0, 0, 0, 0, 0, 1], [l1, 0, 0, 0, 0, 1], [l1 + l2, 0, 0, 0, 0, 1], [0, 0, 1, 0, 0, 0]]
    Rst = S.simplify(S.poe(tw, s[:4], rigid([0, l1 + l2, l0])))
    printed = sp.Matrix([
        [cos(s[0] + s[1] + s[2]), -sin(s[0] + s[1] + s[2]), 0, -sin(s[0] + s[1]) * l2 - sin(s[0]) * l1],
        [sin(s[0] + s[1] + s[2]), cos(s[0] + s[1] + s[2]), 0, cos(s[0] + s[1]) * l2 + cos(s[0]) * l1],
        [0, 0, 1, l0 + s[3]], [0, 0, 0, 1]])
    assert Rst == printed          # the very expression, not only an equal one
    # and at random numbers through the numeric implementation
    L, th = RNG.uniform(0.1, 1, 3), RNG.uniform(-3, 3, 4)
    subs = dict(zip((l0, l1, l2) + s[:4], [*L, *th]))
    numeric = np.array([[float(sp.sympify(x).subs(subs)) for x in xi] for xi in tw])
    np.testing.assert_allclose(poe(numeric, th, transl(0, L[1] + L[2], L[0])),
                               np.array(printed.subs(subs), dtype=float), atol=1e-13)


def test_alternate_base_scara_example_3_3():
    # seed 004 §4.3; by hand (see test_twists): p = (-l1 s1 - l2 s12, l1 c1 + l2 c12 - l1 - l2, s4)
    tw = [S.screw(Z, [0, -l1 - l2, 0]), S.screw(Z, [0, -l2, 0]), S.screw(Z, [0, 0, 0]),
          sp.Matrix([0, 0, 1, 0, 0, 0])]
    g = S.poe(tw, s[:4], sp.eye(4))
    a = s[0] + s[1] + s[2]
    expected = sp.Matrix([[cos(a), -sin(a), 0, -l1 * sin(s[0]) - l2 * sin(s[0] + s[1])],
                          [sin(a), cos(a), 0, l1 * cos(s[0]) + l2 * cos(s[0] + s[1]) - l1 - l2],
                          [0, 0, 1, s[3]], [0, 0, 0, 1]])
    assert is_zero(g - expected)


def test_elbow_manipulator_example_3_2():
    # seed 004 §4.2 (its result is omitted there); by hand (see test_twists): the wrist point
    # and the product of the axis rotations Rz(s1)Rx(-s2)Rx(-s3)Rz(s4)Rx(-s5)Ry(s6)
    tw = [S.screw(Z, [0, 0, l0]), S.screw(-X, [0, 0, l0]), S.screw(-X, [0, l1, l0]),
          S.screw(Z, [0, l1 + l2, l0]), S.screw(-X, [0, l1 + l2, l0]), S.screw(Y, [0, l1 + l2, l0])]
    g = S.poe(tw, s, rigid([0, l1 + l2, l0]))
    r = l1 * cos(s[1]) + l2 * cos(s[1] + s[2])
    p = sp.Matrix([-sin(s[0]) * r, cos(s[0]) * r, l0 - l1 * sin(s[1]) - l2 * sin(s[1] + s[2])])
    assert is_zero(g[:3, 3] - p)
    R = (sp.rot_ccw_axis3(s[0]) * sp.rot_ccw_axis1(-s[1]) * sp.rot_ccw_axis1(-s[2])
         * sp.rot_ccw_axis3(s[3]) * sp.rot_ccw_axis1(-s[4]) * sp.rot_ccw_axis2(s[5]))
    assert sp.expand(g[:3, :3] - R) == sp.zeros(3, 3)


def test_two_link_page_212_mass_matrix_and_christoffel_symbols():
    # seed 004 §4.7: screw1, screw2, gst10, gst20, M1, M2 as written there
    tw = [sp.Matrix([0, 0, 0, 0, 0, 1]), sp.Matrix([0, -l1, 0, 0, 0, 1])]
    frames = [rigid([r1, 0, 0]), rigid([l1 + r2, 0, 0])]
    inertias = [sp.diag(m1, m1, m1, Ix1, Iy1, Iz1), sp.diag(m2, m2, m2, Ix2, Iy2, Iz2)]
    M = S.simplify(S.mass_matrix(tw, frames, inertias, s[:2]))
    printed = sp.Matrix([
        [2 * r2 * m2 * l1 * cos(s[1]) + Iz1 + m2 * l1 ** 2 + r1 ** 2 * m1 + Iz2 + r2 ** 2 * m2,
         r2 * m2 * l1 * cos(s[1]) + r2 ** 2 * m2 + Iz2],
        [r2 * m2 * l1 * cos(s[1]) + r2 ** 2 * m2 + Iz2, r2 ** 2 * m2 + Iz2]])
    assert M == printed
    G = S.christoffel(M, s[:2])
    b = r2 * m2 * l1 * sin(s[1])
    F = {(1, 1, 1): 0, (1, 1, 2): -b, (1, 2, 1): -b, (1, 2, 2): -b,      # F111..F222 printed
         (2, 1, 1): b, (2, 1, 2): 0, (2, 2, 1): 0, (2, 2, 2): 0}
    for (i, j, k), value in F.items():
        assert sp.simplify(G[i - 1][j - 1][k - 1] - value) == 0, (i, j, k)


def test_two_link_dh_arm_mass_matrix_and_gravity_by_hand():
    # links l1, l2 along x (DH a = l1, l2), centres of mass r1, r2 from the joints, inertias
    # Iz about them; gravity in -y of the arm's plane. Lagrange by hand:
    # M11 = Iz1 + Iz2 + m1 r1² + m2 (l1² + r2² + 2 l1 r2 cos q2), M12 = Iz2 + m2 (r2² + l1 r2 cos q2),
    # M22 = Iz2 + m2 r2²; g = g0·((m1 r1 + m2 l1) c1 + m2 r2 c12, m2 r2 c12)
    g0 = sp.Symbol("g0", positive=True)
    robot = S.SymbolicRobot.from_dh(
        [dict(a=l1, m=m1, r=(r1 - l1, 0, 0), I=sp.diag(Ix1, Iy1, Iz1)),
         dict(a=l2, m=m2, r=(r2 - l2, 0, 0), I=sp.diag(Ix2, Iy2, Iz2))], gravity=(0, g0, 0))
    q1, q2 = robot.q
    M = sp.Matrix([[Iz1 + Iz2 + m1 * r1 ** 2 + m2 * (l1 ** 2 + r2 ** 2 + 2 * l1 * r2 * cos(q2)),
                    Iz2 + m2 * (r2 ** 2 + l1 * r2 * cos(q2))],
                   [Iz2 + m2 * (r2 ** 2 + l1 * r2 * cos(q2)), Iz2 + m2 * r2 ** 2]])
    assert is_zero(robot.inertia() - M)
    g = g0 * sp.Matrix([(m1 * r1 + m2 * l1) * cos(q1) + m2 * r2 * cos(q1 + q2), m2 * r2 * cos(q1 + q2)])
    assert is_zero(robot.gravload() - g)
    # C·qd: the classical velocity terms -h s2 (2 qd1 qd2 + qd2²), h s2 qd1², h = m2 l1 r2
    qd1, qd2 = robot.qd
    h = m2 * l1 * r2 * sin(q2)
    assert is_zero(robot.coriolis() * robot.qd - sp.Matrix([-h * (2 * qd1 * qd2 + qd2 ** 2), h * qd1 ** 2]))


def test_three_link_example_4_3_mass_matrix_by_hand():
    # seed 004 §4.8 (p. 222): twists and link frames as written there; M derived by hand
    # (see three_link_mass_matrix_by_hand in test_twists)
    tw = [sp.Matrix([0, 0, 0, 0, 0, 1]), sp.Matrix([0, -l0, 0, -1, 0, 0]),
          sp.Matrix([0, -l0, l1, -1, 0, 0])]
    robot = S.SymbolicRobot(tw, rigid([0, l1 + l2, l0]),
                            frames=[rigid([0, 0, r0]), rigid([0, r1, l0]), rigid([0, l1 + r2, l0])],
                            m=[m1, m2, m3], I=[sp.diag(Ix1, Iy1, Iz1), sp.diag(Ix2, Iy2, Iz2),
                                               sp.diag(Ix3, Iy3, Iz3)])
    _, t2, t3 = robot.q
    c2, s2, c3, c23, s23 = cos(t2), sin(t2), cos(t3), cos(t2 + t3), sin(t2 + t3)
    M11 = (Iz1 + Iy2 * s2 ** 2 + Iz2 * c2 ** 2 + m2 * r1 ** 2 * c2 ** 2 + Iy3 * s23 ** 2
           + Iz3 * c23 ** 2 + m3 * (l1 * c2 + r2 * c23) ** 2)
    M22 = Ix2 + Ix3 + m2 * r1 ** 2 + m3 * (l1 ** 2 + r2 ** 2 + 2 * l1 * r2 * c3)
    M23 = Ix3 + m3 * (r2 ** 2 + l1 * r2 * c3)
    M = sp.Matrix([[M11, 0, 0], [0, M22, M23], [0, M23, Ix3 + m3 * r2 ** 2]])
    assert is_zero(robot.inertia() - M)


def small_arm():
    """Three joints (R, R, P) with offsets, centres of mass off the axes, motor inertia, gear
    ratios, viscous and asymmetric Coulomb friction (principal inertias keep the symbolic
    work short; full tensors are checked numerically in test_twists)."""
    return SerialLink([
        Link(alpha=math.pi / 2, d=0.3, m=2, r=[0, -0.1, 0], I=[0.1, 0.2, 0.3, 0, 0, 0],
             Jm=1e-4, G=50, B=1e-3, Tc=[0.2, -0.3]),
        Link(a=0.4, offset=math.pi / 2, m=1.5, r=[-0.2, 0, 0], I=[0.01, 0.05, 0.05, 0, 0, 0],
             B=0.01),
        Link(type="prismatic", alpha=-math.pi / 2, m=0.7, r=[0, 0, -0.1],
             I=[0.01, 0.01, 0.001, 0, 0, 0], offset=0.1, G=-20, Jm=2e-5, Tc=0.1)],
        gravity=[0.5, 0, 9.81])


@pytest.mark.parametrize("kind", ["dh", "twists"])
def test_lambdified_functions_equal_the_numeric_robot(kind):
    robot = small_arm()
    source = robot if kind == "dh" else TwistRobot.from_dh(robot)
    sym = S.SymbolicRobot.from_robot(source)
    fk, j0, jn = sym.numeric("fkine"), sym.numeric("jacob0"), sym.numeric("jacobn")
    M, C, g, rne = sym.numeric("inertia"), sym.numeric("coriolis"), sym.numeric("gravload"), \
        sym.numeric("rne")
    twist = TwistRobot.from_dh(robot)
    for _ in range(5):
        q, qd, qdd = RNG.uniform(-1.5, 1.5, (3, 3))
        np.testing.assert_allclose(fk(q), robot.fkine(q), atol=1e-14)
        np.testing.assert_allclose(j0(q), robot.jacob0(q), atol=1e-14)
        np.testing.assert_allclose(jn(q), robot.jacobn(q), atol=1e-14)
        np.testing.assert_allclose(M(q), robot.inertia(q), atol=1e-14)
        np.testing.assert_allclose(C(q, qd), twist.coriolis(q, qd), atol=1e-14)
        np.testing.assert_allclose(g(q), robot.gravload(q), atol=1e-13)
        np.testing.assert_allclose(rne(q, qd, qdd), robot.rne(q, qd, qdd), atol=1e-13)


def test_symbolic_parameters_are_substituted_before_lambdify():
    sym = S.SymbolicRobot([S.screw(Z, [0, 0, 0]), S.screw(Z, [l1, 0, 0])], rigid([l1 + l2, 0, 0]),
                          simplified=False)
    with pytest.raises(ValueError, match="l1, l2"):
        sym.numeric("fkine")
    fk = sym.numeric("fkine", {l1: 0.5, l2: 0.25})
    q = np.array([0.3, -0.7])
    np.testing.assert_allclose(fk(q)[:2, 3], [0.5 * math.cos(0.3) + 0.25 * math.cos(-0.4),
                                              0.5 * math.sin(0.3) + 0.25 * math.sin(-0.4)])


def test_puma_kinematics_and_gravity_numeric_spot_checks():
    # six axes: unsimplified expressions, lambdified, against the numeric library
    robot = load_robot("puma560")
    sym = S.SymbolicRobot.from_robot(robot, simplified=False)
    fk, j0, g = sym.numeric("fkine"), sym.numeric("jacob0"), sym.numeric("gravload")
    for _ in range(3):
        q = RNG.uniform(-2, 2, 6)
        np.testing.assert_allclose(fk(q), robot.fkine(q), atol=1e-13)
        np.testing.assert_allclose(j0(q), robot.jacob0(q), atol=1e-13)
        np.testing.assert_allclose(g(q), robot.gravload(q), atol=1e-11)


def test_symbolic_and_numeric_formulas_agree_at_numbers():
    tw = [S.screw(Z, [0.1, 0, 0]), S.screw(sp.Matrix([0, 1, 0]), [0, 0, 0.3], sp.Rational(1, 10)),
          sp.Matrix([0, 0, 1, 0, 0, 0])]
    t = RNG.uniform(-2, 2, 3)
    num = np.array([[float(x) for x in xi] for xi in tw])
    Js = S.spatial_jacobian(tw, s[:3]).subs(dict(zip(s[:3], t)))
    np.testing.assert_allclose(np.array(Js, dtype=float), spatial_jacobian(num, t), atol=1e-14)
    g = S.exp_twist(tw[1], s[0]).subs(s[0], t[0])
    np.testing.assert_allclose(np.array(g, dtype=float), exp_twist(num[1], t[0]), atol=1e-14)
