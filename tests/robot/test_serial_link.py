"""SerialLink and Link: construction, kinematics (fkine, fkine_all, Jacobians, jacob_dot),
modifiers (nofriction, perturb, payload, configure) and display."""

import copy
import pickle

import numpy as np
import pytest

from blocks.robot import Link, SerialLink, load_robot
from robot_helpers import jacobian_fd, rotx, rotz, to_modified, transl

RNG = np.random.default_rng(7)
BASE = transl(0.1, -0.2, 0.3) @ rotz(0.4) @ rotx(-0.3)
TOOL = transl(0.01, 0.02, 0.15) @ rotx(0.7)


@pytest.fixture(scope="module")
def puma():
    return load_robot("puma560")


@pytest.fixture(scope="module", params=["puma560", "puma560akb", "stanford", "twolink"])
def any_robot(request):
    """Every model, once bare and once with a non-trivial base and tool."""
    return load_robot(request.param)


def with_base_tool(robot):
    return robot.configure(base=BASE, tool=TOOL)


# ---------------------------------------------------------------- Link
def test_link_inertia_six_values_and_matrix():
    L6 = Link(I=[1, 2, 3, 0.1, 0.2, 0.3])
    L33 = Link(I=[[1, 0.1, 0.3], [0.1, 2, 0.2], [0.3, 0.2, 3]])
    # [Ixx Iyy Izz Ixy Iyz Ixz] (seed 000, link.I)
    np.testing.assert_array_equal(L6.I, L33.I)
    with pytest.raises(ValueError):
        Link(I=[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]])      # not symmetric
    with pytest.raises(ValueError):
        Link(I=[1, 2, 3])


def test_link_scalar_coulomb_is_symmetric_and_joint_variable_rules():
    np.testing.assert_array_equal(Link(Tc=0.4).Tc, [0.4, -0.4])   # seed 000: scalar = symmetric
    with pytest.raises(ValueError, match="offset"):
        Link(theta=0.3)                     # a revolute joint's theta is q + offset
    with pytest.raises(ValueError, match="offset"):
        Link(type="prismatic", d=0.3)       # a prismatic joint's d is q + offset
    assert np.isnan(Link().qlim).all()


def test_link_transform_standard_and_modified():
    # Standard: Rz(θ)·Tz(d)·Tx(a)·Rx(α); modified: Rx(α)·Tx(a)·Rz(θ)·Tz(d) (robots.md)
    q, d, a, al, off = 0.3, 0.2, 0.5, -0.7, 0.1
    std = Link(alpha=al, a=a, d=d, offset=off).A(q)
    np.testing.assert_allclose(std, rotz(q + off) @ transl(0, 0, d) @ transl(a, 0, 0) @ rotx(al),
                               atol=1e-15)
    mdh = Link(alpha=al, a=a, d=d, offset=off, convention="modified").A(q)
    np.testing.assert_allclose(mdh, rotx(al) @ transl(a, 0, 0) @ rotz(q + off) @ transl(0, 0, d),
                               atol=1e-15)
    pri = Link(alpha=al, a=a, theta=0.4, type="prismatic", offset=off).A(q)
    np.testing.assert_allclose(pri, rotz(0.4) @ transl(0, 0, q + off) @ transl(a, 0, 0) @ rotx(al),
                               atol=1e-15)


# ---------------------------------------------------------------- SerialLink basics
def test_packed_attributes(puma):
    assert puma.n == 6 and puma.config == "RRRRRR" and not puma.mdh
    assert puma.r.shape == (6, 3) and puma.I.shape == (6, 3, 3) and puma.Tc.shape == (6, 2)
    np.testing.assert_array_equal(puma.G, [-62.6111, 107.815, -53.7063, 76.0364, 71.923, 76.686])
    with pytest.raises(ValueError):
        puma.m[0] = 1.0                      # parameter arrays are read-only
    poses = puma.poses
    poses["qz"][0] = 5.0                     # poses hands out copies
    assert puma.poses["qz"][0] == 0.0


def test_pickle_and_deepcopy(puma):
    q = RNG.uniform(-1, 1, 6)
    for clone in (pickle.loads(pickle.dumps(puma)), copy.deepcopy(puma)):
        np.testing.assert_array_equal(clone.rne(q, q, q), puma.rne(q, q, q))
        assert clone.name == puma.name and clone.poses.keys() == puma.poses.keys()


def test_mixed_conventions_rejected():
    with pytest.raises(ValueError):
        SerialLink([Link(), Link(convention="modified")])
    with pytest.raises(ValueError):
        SerialLink([Link()], convention="modified")


def test_fkine_is_base_times_link_transforms_times_tool(any_robot):
    robot = with_base_tool(any_robot)
    q = RNG.uniform(-1, 1, robot.n)
    T = robot.base
    for j in range(robot.n):
        T = T @ robot.A(j, q[j])             # Link.A: a separate implementation
    np.testing.assert_allclose(robot.fkine(q), T @ robot.tool, atol=1e-14)
    frames = robot.fkine_all(q)
    assert frames.shape == (robot.n + 1, 4, 4)
    np.testing.assert_allclose(frames[0], robot.base, atol=1e-15)
    np.testing.assert_allclose(frames[-1] @ robot.tool, robot.fkine(q), atol=1e-14)


def test_stacks_match_single_calls(any_robot):
    robot = with_base_tool(any_robot)
    Q = RNG.uniform(-1, 1, (4, robot.n))
    QD = RNG.uniform(-1, 1, (4, robot.n))
    for name, args in (("fkine", (Q,)), ("fkine_all", (Q,)), ("jacob0", (Q,)), ("jacobn", (Q,)),
                       ("jacob_dot", (Q, QD))):
        stacked = getattr(robot, name)(*args)
        single = np.array([getattr(robot, name)(*(a[k] for a in args)) for k in range(4)])
        np.testing.assert_array_equal(stacked, single, err_msg=name)


def test_jacob0_matches_finite_differences_of_fkine(any_robot):
    robot = with_base_tool(any_robot)
    for _ in range(3):
        q = RNG.uniform(-1.5, 1.5, robot.n)
        np.testing.assert_allclose(robot.jacob0(q), jacobian_fd(robot, q), atol=1e-8)


def test_jacobn_is_jacob0_in_the_tool_frame(any_robot):
    robot = with_base_tool(any_robot)
    q = RNG.uniform(-1, 1, robot.n)
    R = robot.fkine(q)[:3, :3]
    J0 = robot.jacob0(q)
    np.testing.assert_allclose(robot.jacobn(q), np.vstack([R.T @ J0[:3], R.T @ J0[3:]]),
                               atol=1e-14)


def test_jacob_dot_matches_finite_differences(any_robot):
    # d/dt J(q(t))·q̇ along q(t) = q + t·q̇, by central differences
    robot = with_base_tool(any_robot)
    q, qd = RNG.uniform(-1, 1, robot.n), RNG.uniform(-1, 1, robot.n)
    h = 1e-6
    fd = (robot.jacob0(q + h * qd) - robot.jacob0(q - h * qd)) / (2 * h) @ qd
    np.testing.assert_allclose(robot.jacob_dot(q, qd), fd, atol=1e-8)


@pytest.mark.parametrize("name", ["puma560", "stanford"])
def test_standard_and_modified_dh_describe_the_same_motion(name):
    """The regrouped modified-DH description (robot_helpers.to_modified) gives the same tool
    pose, Jacobian and J̇q̇; its frame i is the standard frame i times (Tx(a_i)·Rx(α_i))⁻¹."""
    std = with_base_tool(load_robot(name))
    mdh = to_modified(std)
    assert mdh.mdh
    for _ in range(3):
        q, qd = RNG.uniform(-1, 1, std.n), RNG.uniform(-1, 1, std.n)
        np.testing.assert_allclose(mdh.fkine(q), std.fkine(q), atol=1e-14)
        np.testing.assert_allclose(mdh.jacob0(q), std.jacob0(q), atol=1e-13)
        np.testing.assert_allclose(mdh.jacob_dot(q, qd), std.jacob_dot(q, qd), atol=1e-13)
        Fs, Fm = std.fkine_all(q), mdh.fkine_all(q)
        for i, L in enumerate(std.links):
            np.testing.assert_allclose(Fm[i + 1] @ transl(L.a, 0, 0) @ rotx(L.alpha), Fs[i + 1],
                                       atol=1e-14)


# ---------------------------------------------------------------- modifiers
def test_nofriction(puma):
    v = puma.nofriction()
    assert np.all(v.Tc == 0) and np.array_equal(v.B, puma.B)
    z = puma.nofriction("all")
    assert np.all(z.Tc == 0) and np.all(z.B == 0)
    assert np.all(puma.Tc != 0)               # the original is untouched


def test_perturb_is_reproducible_and_exactly_specified(puma):
    p1, p2 = puma.perturb(0.1, seed=3), puma.perturb(0.1, seed=3)
    np.testing.assert_array_equal(p1.m, p2.m)
    np.testing.assert_array_equal(p1.I, p2.I)
    # robots.md: s = default_rng(seed).uniform(1 - p, 1 + p, size=(n, 2))
    s = np.random.default_rng(3).uniform(0.9, 1.1, size=(6, 2))
    np.testing.assert_array_equal(p1.m, puma.m * s[:, 0])
    np.testing.assert_array_equal(p1.I, puma.I * s[:, 1, None, None])
    for attr in ("r", "Jm", "G", "B", "Tc"):
        np.testing.assert_array_equal(getattr(p1, attr), getattr(puma, attr))
    assert p1.name == "P/Puma 560"
    assert not np.array_equal(puma.perturb(0.1, seed=4).m, p1.m)


def test_a_perturbed_copy_shares_the_frames_and_equals_a_robot_built_afresh(puma):
    """A perturbed robot (a Monte Carlo run's) has the DH geometry of the one it is copied
    from: its joint frames are the same read-only arrays, not computed again; its dynamics
    equal those of a robot built from the perturbed links with the frames computed anew."""
    from blocks.robot import serial_link
    p1 = puma.perturb(0.1, seed=3)
    frames = puma._kinematics()
    assert all(a is b for a, b in zip(p1._kinematics(), frames))
    assert not any(a.flags.writeable for a in frames)
    links = [L.replace(m=p1.m[j], I=p1.I[j]) for j, L in enumerate(puma.links)]
    serial_link._dh_frames.cache_clear()
    afresh = SerialLink(links, name=p1.name, gravity=puma.gravity, base=puma.base,
                        tool=puma.tool)
    assert afresh._kinematics()[0] is not frames[0]
    q, qd = RNG.uniform(-1, 1, 6), RNG.uniform(-1, 1, 6)
    np.testing.assert_array_equal(p1.inertia(q), afresh.inertia(q))
    np.testing.assert_array_equal(p1.rne(q, qd, qd), afresh.rne(q, qd, qd))


def test_payload_composite_body_by_hand():
    tl = load_robot("twolink")
    # last link: 1 kg at r = 0, no inertia; payload 2 kg at x = 0.5 (identity tool).
    # Composite: 3 kg, COM x = (1*0 + 2*0.5)/3 = 1/3; about it Iyy = Izz = 1*(1/3)^2 + 2*(1/6)^2
    # = 1/6, Ixx = 0.
    pl = tl.payload(2.0, [0.5, 0, 0])
    assert pl.m[1] == pytest.approx(3.0)
    np.testing.assert_allclose(pl.r[1], [1 / 3, 0, 0], atol=1e-15)
    np.testing.assert_allclose(pl.I[1], np.diag([0, 1 / 6, 1 / 6]), atol=1e-15)
    # p is in the tool frame: tool = transl(0.2, 0, 0)·rotz(pi/2) maps [0.3, 0, 0] to [0.2, 0.3, 0]
    tooled = tl.configure(tool=transl(0.2, 0, 0) @ rotz(np.pi / 2)).payload(2.0, [0.3, 0, 0])
    np.testing.assert_allclose(tooled.r[1], np.array([0.2, 0.3, 0]) * 2 / 3, atol=1e-15)


def test_payload_gravity_equals_point_mass_jacobian_transpose(puma):
    # The point mass m at p adds Jv(p)ᵀ·m·g to the gravity load (virtual work), with Jv the
    # translational Jacobian of the point, i.e. of a robot whose tool ends at p.
    m, p = 2.5, np.array([0.05, -0.02, 0.1])
    q = RNG.uniform(-1, 1, 6)
    loaded = puma.payload(m, p)
    at_p = puma.configure(tool=transl(*p))
    expected = puma.gravload(q) + at_p.jacob0(q)[:3].T @ (m * puma.gravity)
    np.testing.assert_allclose(loaded.gravload(q), expected, atol=1e-12)


def test_configure_order_payload_perturb_friction(puma):
    got = puma.configure(friction="viscous", perturb=0.2, seed=5, payload={"m": 1.0, "p": [0, 0, .1]})
    want = puma.payload(1.0, [0, 0, 0.1]).perturb(0.2, 5).nofriction("coulomb")
    for attr in ("m", "r", "I", "B", "Tc"):
        np.testing.assert_array_equal(getattr(got, attr), getattr(want, attr))
    g = puma.configure(gravity=[0, 0, 1.62], friction="none")
    np.testing.assert_array_equal(g.gravity, [0, 0, 1.62])
    assert np.all(g.B == 0) and np.all(g.Tc == 0)
    with pytest.raises(ValueError):
        puma.configure(friction="coulomb")


# ---------------------------------------------------------------- queries and display
def test_islimit_and_isspherical(puma):
    q = np.zeros(6)
    q[2] = np.pi                              # joint 2 limit is [-225, 45] degrees
    q[0] = -3.0                               # joint 0 limit is [-160, 160] degrees
    np.testing.assert_array_equal(puma.islimit(q), [-1, 0, 1, 0, 0, 0])
    # wrist axes meet in one point: standard a3 = a4 = d4 = 0, modified a4 = a5 = d4 = 0
    assert puma.isspherical() and load_robot("puma560akb").isspherical()
    assert load_robot("stanford").isspherical()
    assert not load_robot("twolink").isspherical()
    offset_wrist = SerialLink(puma.links[:4] + (puma.links[4].replace(a=0.01), puma.links[5]))
    assert not offset_wrist.isspherical()


def test_display_and_dyn(puma):
    text = str(puma)
    assert "Puma 560 (Unimation): 6 axis, RRRRRR, standard DH" in text
    assert "0.4318" in text and "0.15005" in text and "q5" in text
    assert puma.display() == text
    d = puma.dyn(1)
    assert "m  = 17.4 kg" in d and "-0.3638" in d and "G = 107.815" in d
    assert "Stanford" in str(load_robot("stanford")) and "q2" in str(load_robot("stanford"))
