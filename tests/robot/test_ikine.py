"""Inverse kinematics: ikine (damped least squares) and ikine6s/ikine560 (closed form).

Independent truths: forward kinematics of the answer (fkine(q) = T for T = fkine(q_random)),
the generating joint path, the two-link arm's closed-form solutions, the reach of the arm,
the geometry of the 8 Puma configurations measured on the link frames (fkine_all), and the
values printed in Corke, "Robotics, Vision and Control" (Springer 2011), §7.3.1.
"""

import itertools

import numpy as np
import pytest

from blocks.robot import Link, SerialLink, jtraj, load_robot
from blocks.robot.ikine import IKineError, _Limits, ikine, ikine560, ikine6s
from robot_helpers import rotx, rotz, transl

CONFIGS = ["".join(c) for c in itertools.product("lr", "ud", "nf")]


@pytest.fixture(scope="module")
def puma():
    return load_robot("puma560")


@pytest.fixture(scope="module")
def twolink():
    return load_robot("twolink")


def random_q(robot, m, seed):
    """m joint vectors uniform within the robot's limits (the Puma's are all set)."""
    rng = np.random.default_rng(seed)
    return rng.uniform(robot.qlim[:, 0], robot.qlim[:, 1], size=(m, robot.n))


def angle_diff(a, b):
    """Elementwise a − b wrapped to (−π, π]."""
    return np.pi - np.mod(np.pi - (np.asarray(a) - np.asarray(b)), 2 * np.pi)


# ---------------------------------------------------------------- ikine, numerical
def test_ikine_round_trip_puma_within_limits(puma):
    for q in random_q(puma, 12, seed=1):
        T = puma.fkine(q)
        qs = ikine(puma, T)                                  # q0 = 0, as in seed 000
        np.testing.assert_allclose(puma.fkine(qs), T, atol=1e-9)
        assert (puma.islimit(qs) == 0).all()                  # qlim is respected


def test_ikine_base_tool_and_offsets():
    # a Puma without limits, with joint offsets, a base and a tool: fkine adds the offsets,
    # so the round trip checks that ikine works in the same joint coordinates
    p = load_robot("puma560")
    offsets = [0.1, -0.2, 0.3, -0.4, 0.5, -0.6]
    links = [L.replace(offset=o, qlim=None) for L, o in zip(p.links, offsets)]
    robot = SerialLink(links, base=transl(0.2, -0.1, 0.5) @ rotz(0.7),
                       tool=transl(0, 0.02, 0.1) @ rotx(0.3))
    for q in np.random.default_rng(2).uniform(-2, 2, size=(6, 6)):
        T = robot.fkine(q)
        np.testing.assert_allclose(robot.fkine(ikine(robot, T, q0=q + 0.3)), T, atol=1e-9)


def test_ikine_trajectory_seeds_each_pose_with_the_previous_solution(puma):
    # the path's poses are 20 close steps; starting on the path, each solution seeds the
    # next, so ikine follows the generating joint path itself (not another branch); qn's
    # joint 3 (π) lies outside its limit [−225°, 45°] and comes back as the same angle −π
    qpath = jtraj(puma.poses["qn"], puma.poses["qn"] + [0.5, -0.3, 0.4, 0.6, -0.5, 0.7], 20)[0]
    Ts = puma.fkine(qpath)
    qs = ikine(puma, Ts, q0=qpath[0])
    assert qs.shape == (20, 6)
    np.testing.assert_allclose(angle_diff(qs, qpath), 0, atol=1e-8)
    assert (puma.islimit(qs) == 0).all()


def test_ikine_mask_two_link_matches_the_closed_form(twolink):
    # planar arm, unit links: the two solutions for a point (x, y) are
    # q2 = ±acos((x² + y² − 2)/2), q1 = atan2(y, x) − atan2(sin q2, 1 + cos q2)
    rng = np.random.default_rng(3)
    for q in rng.uniform(-2.5, 2.5, size=(6, 2)):
        x, y = twolink.fkine(q)[:2, 3]
        # target orientation tilted out of the plane: only x and y are matched
        T = transl(x, y, 0.0) @ rotx(0.8)
        qs = ikine(twolink, T, q0=q + 0.2, mask=[1, 1, 0, 0, 0, 0])
        c2 = (x * x + y * y - 2) / 2
        closed = [[np.arctan2(y, x) - np.arctan2(s2, 1 + c2), np.arctan2(s2, c2)]
                  for s2 in (np.sqrt(1 - c2 * c2), -np.sqrt(1 - c2 * c2))]
        assert min(np.abs(angle_diff(qs, c)).max() for c in closed) < 1e-8
    with pytest.raises(IKineError):       # without the mask the tilted pose is unreachable
        ikine(twolink, T, q0=q, restarts=1)


def test_ikine_unreachable_pose_reports_the_residual(twolink, puma):
    # (2.5, 0) is 0.5 beyond the two-link arm's reach l1 + l2 = 2: the best point is the
    # stretched arm (q2 = 0) at distance 0.5
    with pytest.raises(IKineError) as info:
        ikine(twolink, transl(2.5, 0, 0), q0=[0.1, 0.2], mask=[1, 1, 0, 0, 0, 0])
    err = info.value
    assert isinstance(err, ValueError)
    assert err.residual == pytest.approx(0.5, abs=1e-6)
    assert err.iterations > 0 and "did not converge" in str(err)
    assert abs(angle_diff(err.q[1], 0.0)) < 1e-3
    # a point 2 m from the Puma's shoulder (its reach is about 0.9 m); in a sequence the
    # failing pose's index is reported
    Ts = np.stack([puma.fkine(puma.poses["qn"]), transl(2.0, 0, 0)])
    with pytest.raises(IKineError, match="pose 1") as info:
        ikine(puma, Ts, q0=puma.poses["qn"], restarts=2)
    assert info.value.index == 1 and info.value.residual > 1.0


def test_ikine_joint_limits_choose_the_allowed_branch(twolink):
    # with q2 limited to [0, π] the target made by q = (0.3, −1.1) must be reached by the
    # mirrored elbow: for unit links q1 + q2/2 = −0.25 on both branches, so (−0.8, 1.1)
    links = [twolink.links[0], twolink.links[1].replace(qlim=[0.0, np.pi])]
    limited = SerialLink(links, name="limited two link")
    T = limited.fkine([0.3, -1.1])
    qs = ikine(limited, T, q0=[0.3, -1.1], mask=[1, 1, 0, 0, 0, 0])
    np.testing.assert_allclose(qs, [-0.8, 1.1], atol=1e-8)


def test_ikine_keeps_a_joint_inside_its_limits_where_it_is(puma):
    # the Puma's q6 range, ±266°, is wider than a turn: q6 = 2.5 rad lies inside it and comes
    # back as 2.5 (it came back as 2.5 − 2π); roboticstoolbox-python 1.5.0,
    # Puma560().ikine_LM(T, q0=q) and from q0 = q + 0.1, returns q6 = 2.5 (its Puma is 0.672 m
    # taller, which moves T, not q)
    q = np.array([0.3, 0.6, -0.5, 0.4, 0.7, 2.5])
    T = puma.fkine(q)
    for q0 in (q, q + 0.1, None):
        np.testing.assert_allclose(ikine(puma, T, q0=q0), q, atol=1e-9)
    # along a path on which q6 passes pi (seeded pose by pose), the answer is the path itself
    qpath = jtraj(q, q + [0.2, -0.1, 0.1, 0.3, -0.2, 1.5], 8)[0]
    np.testing.assert_allclose(ikine(puma, puma.fkine(qpath), q0=q), qpath, atol=1e-8)


def test_joint_limits_move_a_joint_outside_by_the_fewest_turns():
    # by hand, for limits [lo, hi]: inside stays; outside moves by the fewest 2π that land
    # inside; when none does, the nearer limit by angular distance (clamped)
    lims = [[-266 * np.pi / 180, 266 * np.pi / 180]] * 3 + [[-10.0, 10.0], [0.0, 1.0], [0.0, 1.0]]
    robot = SerialLink([Link(a=1.0, qlim=lim) for lim in lims])
    q, clamped = _Limits(robot).apply(np.array([2.5, 4.7, -5.0, 10.5, 3.0, 5.0]))
    np.testing.assert_allclose(q, [2.5, 4.7 - 2 * np.pi, -5.0 + 2 * np.pi,
                                   10.5 - 2 * np.pi,   # not 10.5 − 4π, also inside
                                   1.0,                # 2 above hi, 2π − 3 below lo
                                   0.0], atol=1e-15)   # 4 above hi, 5 − 2π below lo
    assert clamped.tolist() == [False, False, False, False, True, True]


def test_ikine_argument_checks(puma):
    T = puma.fkine(puma.poses["qn"])
    with pytest.raises(ValueError):
        ikine(puma, T, mask=[1, 1, 1])
    with pytest.raises(ValueError):
        ikine(puma, T, q0=[0, 0])
    with pytest.raises(ValueError):
        ikine(puma, np.eye(3))


# ---------------------------------------------------------------- ikine6s, closed form
def test_ikine6s_printed_example(puma):
    # RVC §7.3.1: T = p560.fkine(qn); p560.ikine6s(T) prints
    # [2.6486 -3.9270 0.0940 2.5326 0.9743 0.3734]; p560.ikine6s(T, 'ru') gives qn back.
    # That MATLAB ikine6s computes the flipped wrist when no wrist letter is given (n4 = -1;
    # 'n' sets n4 = +1), so these are 'luf' and 'ruf' here
    T = puma.fkine(puma.poses["qn"])
    q = ikine6s(puma, T, "luf")
    np.testing.assert_allclose(angle_diff(q, [2.6486, -3.9270, 0.0940, 2.5326, 0.9743, 0.3734]),
                               0, atol=6e-5)
    np.testing.assert_allclose(angle_diff(ikine6s(puma, T, "ruf"), puma.poses["qn"]), 0,
                               atol=1e-12)
    assert ikine560 is ikine6s


# roboticstoolbox-python 1.5.0: Puma560().ikine_a(transl(0, 0, d1) @ T, config).q for T =
# fkine(q) here (its Puma stands d1 = 0.67183 m taller: the same joint angles, the pose
# 0.67183 m higher), q = IKINE_A_Q[k]; the 8 rows in CONFIGS order (lun, luf, ldn, ... rdf)
IKINE_A_Q = [[0, np.pi / 4, np.pi, 0, np.pi / 4, 0], [-0.91, 1.38, 0.48, 2.71, -1.41, -4.63],
             [-0.26, 3.49, -0.11, 2.5, 1.09, -3.13], [2.68, 0.9, -3.92, -1.71, -1.64, 0.76],
             [0.42, -0.31, -0.73, -1.14, -0.32, -1.54], [1.98, 0.44, 0.62, 2.77, -0.99, -3.92]]
IKINE_A = [
    [
        [2.64856121, 2.35619449, 0.09395583, -0.60903322, -0.97434958, -2.76819308],
        [2.64856121, 2.35619449, 0.09395583, 2.53255944, 0.97434958, 0.37339958],
        [2.64856121, -2.30805959, -3.14159265, -2.46732640, -0.86039026, -0.48046800],
        [2.64856121, -2.30805959, -3.14159265, 0.67426625, 0.86039026, 2.66112465],
        [0.00000000, 0.78539816, -3.14159265, -3.14159265, -0.78539816, 3.14159265],
        [0.00000000, 0.78539816, -3.14159265, 0.00000000, 0.78539816, 0.00000000],
        [0.00000000, -0.83353306, 0.09395583, -0.00000000, -0.83121910, -0.00000000],
        [0.00000000, -0.83353306, 0.09395583, 3.14159265, 0.83121910, -3.14159265],
    ],
    [
        [-0.91000000, 1.38000000, 0.48000000, 2.71000000, -1.41000000, 1.65318531],
        [-0.91000000, 1.38000000, 0.48000000, -0.43159265, 1.41000000, -1.48840735],
        [-0.91000000, -2.89764048, 2.75554849, 1.06375057, -2.64963579, -0.55356149],
        [-0.91000000, -2.89764048, 2.75554849, -2.07784208, 2.64963579, 2.58803117],
        [3.06769445, 1.76159265, 2.75554849, -0.20621784, -1.76423636, 2.39154003],
        [3.06769445, 1.76159265, 2.75554849, 2.93537482, 1.76423636, -0.75005262],
        [3.06769445, -0.24395217, 0.48000000, -2.80604140, -2.48525001, -0.44030292],
        [3.06769445, -0.24395217, 0.48000000, 0.33555126, 2.48525001, 2.70128973],
    ],
    [
        [-0.26000000, -2.79318531, -0.11000000, -0.64159265, -1.09000000, 0.01159265],
        [-0.26000000, -2.79318531, -0.11000000, 2.50000000, 1.09000000, -3.13000000],
        [-0.26000000, -1.37842401, -2.93763682, -2.14732849, -0.68533118, 1.94831489],
        [-0.26000000, -1.37842401, -2.93763682, 0.99426416, 0.68533118, -1.19327777],
        [-2.53325753, -0.34840735, -2.93763682, -3.02526712, -1.04906143, 0.21342638],
        [-2.53325753, -0.34840735, -2.93763682, 0.11632553, 1.04906143, -2.92816628],
        [-2.53325753, -1.76316865, -0.11000000, -0.27490059, -0.37974209, -2.61380162],
        [-2.53325753, -1.76316865, -0.11000000, 2.86669207, 0.37974209, 0.52779103],
    ],
    [
        [-1.38746240, 2.24159265, 0.87236318, 0.51407382, -1.63226990, 0.86721631],
        [-1.38746240, 2.24159265, 0.87236318, -2.62751883, 1.63226990, -2.27437635],
        [-1.38746240, -1.64258772, 2.36318531, 2.45200112, -0.88108282, -1.82581438],
        [-1.38746240, -1.64258772, 2.36318531, -0.68959153, 0.88108282, 1.31577828],
        [2.68000000, 0.90000000, 2.36318531, -1.71000000, -1.64000000, 0.76000000],
        [2.68000000, 0.90000000, 2.36318531, 1.43159265, 1.64000000, -2.38159265],
        [2.68000000, -1.49900493, 0.87236318, -1.51578497, -1.42543152, -1.63253825],
        [2.68000000, -1.49900493, 0.87236318, 1.62580768, 1.42543152, 1.50905440],
    ],
    [
        [-3.09520210, 2.65731155, -0.73000000, -0.08501693, -0.73499189, 0.68538949],
        [-3.09520210, 2.65731155, -0.73000000, 3.05657573, 0.73499189, -2.45620317],
        [-3.09520210, -2.83159265, -2.31763682, -2.38258385, -0.08283500, 3.00655117],
        [-3.09520210, -2.83159265, -2.31763682, 0.75900880, 0.08283500, -0.13504149],
        [0.42000000, 0.48428110, -2.31763682, -2.68669975, -0.70829669, 0.12603089],
        [0.42000000, 0.48428110, -2.31763682, 0.45489291, 0.70829669, -3.01556176],
        [0.42000000, -0.31000000, -0.73000000, -1.14000000, -0.32000000, -1.54000000],
        [0.42000000, -0.31000000, -0.73000000, 2.00159265, 0.32000000, 1.60159265],
    ],
    [
        [2.29607283, 0.55574827, 0.62000000, 2.44006960, -1.03724378, 2.72048498],
        [2.29607283, 0.55574827, 0.62000000, -0.70152305, 1.03724378, -0.42110768],
        [2.29607283, 2.70159265, 2.61554849, 1.70045067, -2.54674702, 0.89998010],
        [2.29607283, 2.70159265, 2.61554849, -1.44114199, 2.54674702, -2.24161255],
        [1.98000000, 2.58584438, 2.61554849, 1.70387781, -2.83032143, 0.72145304],
        [1.98000000, 2.58584438, 2.61554849, -1.43771485, 2.83032143, -2.42013961],
        [1.98000000, 0.44000000, 0.62000000, 2.77000000, -0.99000000, 2.36318531],
        [1.98000000, 0.44000000, 0.62000000, -0.37159265, 0.99000000, -0.77840735],
    ],
]


def test_ikine6s_letters_are_the_toolboxs(puma):
    # 6 poses x 8 configurations against roboticstoolbox-python's ikine_a (table above): the
    # wrist letters n/f were swapped (q4, q6 off by pi, q5 negated)
    for q, expected in zip(IKINE_A_Q, IKINE_A):
        T = puma.fkine(q)
        for c, qe in zip(CONFIGS, expected):
            np.testing.assert_allclose(angle_diff(ikine6s(puma, T, c), qe), 0, atol=1e-8,
                                       err_msg=c)
    T = puma.fkine(IKINE_A_Q[1])
    np.testing.assert_array_equal(ikine6s(puma, T), ikine6s(puma, T, "lun"))


def shoulder_elbow_wrist(robot, q):
    """From the link frames, in base coordinates: joint-1 axis point o1, shoulder point
    S = o1 + (d2 + d3)·z1 (where the arm's plane meets joint 2's axis), elbow point E = o2 (on
    joint 3's axis), wrist centre W = o4 (= o5, the wrist axes' intersection)."""
    F = np.linalg.inv(robot.base) @ robot.fkine_all(q)
    o1, z1 = F[1][:3, 3], F[1][:3, 2]
    S = o1 + (robot.d[1] + robot.d[2]) * z1
    return o1, S, F[2][:3, 3], F[4][:3, 3]


def check_configurations(robot, q, T):
    """Each of the 8 solutions reproduces T; they are distinct; and the letters mean:
    l/r — seen from above (base z), looking from the joint-1 axis towards the wrist centre W,
          the shoulder point S lies to the left (cross product z > 0) / right;
    u/d — the elbow E is above / below the straight line S–W at E's horizontal position;
    n/f — the wrist's ZYZ Euler angle −s4·θ5 (s4 = sign sin α4) is ≥ 0 / < 0 (tr2eul without
          / with 'flip'), and the flipped wrist is (θ4 + π, −θ5, θ6 + π).
    Returns the 8 solutions."""
    sols = {c: ikine6s(robot, T, c) for c in CONFIGS}
    for c, qc in sols.items():
        np.testing.assert_allclose(robot.fkine(qc), T, atol=1e-10, err_msg=c)
        o1, S, E, W = shoulder_elbow_wrist(robot, qc)
        (wx, wy), (sx, sy) = (W - o1)[:2], (S - o1)[:2]
        assert (wx * sy - wy * sx > 0) == (c[0] == "l"), c
        h = (W - S)[:2]
        t = (E - S)[:2] @ h / (h @ h)
        above = E[2] - (S[2] + t * (W - S)[2])
        assert (above > 0) == (c[1] == "u"), c
        s4 = np.sign(np.sin(robot.alpha[3]))
        assert (-s4 * (qc[4] + robot.offset[4]) >= 0) == (c[2] == "n"), c
    for a, b in itertools.combinations(CONFIGS, 2):
        assert np.abs(angle_diff(sols[a], sols[b])).max() > 1e-3, (a, b)
    for arm in ("lu", "ld", "ru", "rd"):
        n, f = sols[arm + "n"], sols[arm + "f"]
        np.testing.assert_allclose(angle_diff(f, n + [0, 0, 0, np.pi, 0, np.pi])[[3, 5]],
                                   0, atol=1e-10)
        np.testing.assert_allclose(f[:3], n[:3], atol=1e-12)
        th5n, th5f = n[4] + robot.offset[4], f[4] + robot.offset[4]
        assert abs(angle_diff(th5f, -th5n)) < 1e-10
    return sols


def test_ikine6s_all_eight_configurations(puma):
    qs_all = random_q(puma, 40, seed=4)
    qs_all = qs_all[np.abs(np.sin(qs_all[:, 4])) > 0.2][:5]   # away from the wrist singularity
    for q in qs_all:
        sols = check_configurations(puma, q, puma.fkine(q))
        # the generating q is one of the 8 (the Puma's limits span less than 2π on joints 1-5)
        assert min(np.abs(angle_diff(s, q)).max() for s in sols.values()) < 1e-9


def test_ikine6s_other_signs_offsets_base_tool_and_sequence():
    # a Puma-type arm with the opposite twist signs, a shoulder height d1, a flange d6,
    # a6 and α6, joint offsets, a base and a tool: the 8 solutions reproduce T and keep
    # their geometric meaning; a sequence gives (m, 6)
    dh = [(-np.pi / 2, 0.0, 0.3), (0.0, 0.5, -0.1), (np.pi / 2, -0.05, 0.2),
          (-np.pi / 2, 0.0, 0.45), (np.pi / 2, 0.0, 0.0), (0.4, 0.03, 0.08)]
    links = [Link(alpha=al, a=a, d=d, offset=off)
             for (al, a, d), off in zip(dh, [0.2, -0.3, 0.1, 0.4, -0.2, 0.3])]
    robot = SerialLink(links, base=transl(0.1, 0.2, 0.3) @ rotx(0.2),
                       tool=transl(0.01, 0, 0.12) @ rotz(0.5))
    qs = np.random.default_rng(5).uniform(-2.5, 2.5, size=(4, 6))
    Ts = robot.fkine(qs)
    for q, T in zip(qs, Ts):
        check_configurations(robot, q, T)
    for c in ("lun", "rdf"):
        sol = ikine6s(robot, Ts, c)
        assert sol.shape == (4, 6)
        np.testing.assert_allclose(robot.fkine(sol), Ts, atol=1e-10, err_msg=c)


def test_ikine6s_unreachable_and_unsupported(puma):
    with pytest.raises(IKineError, match="out of reach") as info:
        ikine6s(puma, transl(2.0, 0.0, 0.0))
    assert info.value.residual > 1.0 and info.value.iterations == 0
    # the wrist centre on the joint-1 axis is closer than the shoulder offset 0.15005 m
    with pytest.raises(IKineError, match="shoulder offset"):
        ikine6s(puma, transl(0.0, 0.0, 0.8))
    with pytest.raises(IKineError, match="pose 1"):
        ikine6s(puma, np.stack([puma.fkine(puma.poses["qn"]), transl(2.0, 0.0, 0.0)]))
    for name in ("stanford", "puma560akb", "twolink"):
        with pytest.raises(ValueError, match="not a Puma-type"):
            ikine6s(load_robot(name), np.eye(4))
    with pytest.raises(ValueError, match="both"):
        ikine6s(puma, np.eye(4), "lr")
    with pytest.raises(ValueError, match="letters"):
        ikine6s(puma, np.eye(4), "x")


def test_ikine6s_wrist_singularity(puma):
    # θ5 = 0: only θ4 + θ6 is determined; the answer still reproduces the pose
    q = np.array([0.3, 0.5, -1.0, 0.7, 0.0, 0.2])
    T = puma.fkine(q)
    for c in CONFIGS:
        np.testing.assert_allclose(puma.fkine(ikine6s(puma, T, c)), T, atol=1e-10)
    # there q4 = 0 whichever wrist letter: roboticstoolbox-python 1.5.0's ikine_a(T, 'rdn')
    # and (T, 'rdf') both give [0.3, 0.5, -1.0, 0.0, 0.0, 0.9]
    for c in ("rdn", "rdf"):
        np.testing.assert_allclose(ikine6s(puma, T, c), [0.3, 0.5, -1.0, 0.0, 0.0, 0.9],
                                   atol=1e-10)


def test_serial_link_methods_delegate(puma, twolink):
    T = puma.fkine(puma.poses["qn"])
    np.testing.assert_array_equal(puma.ikine(T, puma.poses["qn"] + 0.1),
                                  ikine(puma, T, puma.poses["qn"] + 0.1))
    np.testing.assert_array_equal(twolink.ikine(transl(1.2, 0.5, 0), mask=[1, 1, 0, 0, 0, 0],
                                                q0=[0.2, 0.3], tol=1e-12),
                                  ikine(twolink, transl(1.2, 0.5, 0), [0.2, 0.3],
                                        [1, 1, 0, 0, 0, 0], tol=1e-12))
    np.testing.assert_array_equal(puma.ikine6s(T, "rdf"), ikine6s(puma, T, "rdf"))
    np.testing.assert_array_equal(puma.ikine560(T, "ru"), ikine6s(puma, T, "ru"))
