"""mstraj and ctraj's velocity and input poses: against the toolbox's blend (jtraj, a second
algorithm), the velocity limits, integrals of the rates, finite differences of the pose, and
through whole diagrams."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "blocks"))
from harness import Rig  # noqa: E402

from blocks.robot import transforms as tr  # noqa: E402
from blocks.robot.models import load_robot  # noqa: E402
from blocks.robot.mstraj import ViaPointTrajectory, mstraj  # noqa: E402
from blocks.robot.trajectory import jtraj  # noqa: E402
from blocks.robot.trajectory_blocks import CTraj, MSTraj  # noqa: E402
from blocksim.params import ParamError  # noqa: E402

Q0 = np.array([0.0, 0.5, -1.0])
VIA = np.array([[1.0, 0.5, 0.0], [1.0, -0.5, 1.0], [-0.5, -0.5, 0.5]])
QDMAX = np.array([0.5, 1.0, 0.8])
TACC = 0.6


def sampled(rig, times):
    """The block's q, qd, qdd at `times`, its mode advanced at the announced events as the
    simulator does (an event at a bound before evaluating there)."""
    events = list(rig.block.events(0.0, times[-1]))
    rig.start(times[0])
    out = []
    for t in times:
        while events and events[0] <= t:
            rig.block.event(events.pop(0))
        y = rig.outputs(t)
        out.append((y["q"], y["qd"], y["qdd"]))
    return [np.array(v) for v in zip(*out)]


def rig_for(**params):
    return Rig(MSTraj, {"via": VIA, "q0": Q0, "tacc": TACC, **params})


def test_segments_at_the_speed_limit_of_their_slowest_joint():
    rig = rig_for(qdmax=QDMAX)
    traj = rig.block._traj
    t = np.linspace(0, traj.tf, 4001)
    q, qd, qdd = sampled(rig, t)
    # within the limits everywhere (blends stay between their segments' velocities)
    assert (np.abs(qd) <= QDMAX * (1 + 1e-12)).all()
    # segment k's time is the slowest joint's |dq| / qdmax (by hand: 1/0.5, 1/0.8, 1.5/0.5 s)
    points = np.vstack([Q0, VIA])
    T = np.max(np.abs(np.diff(points, axis=0)) / QDMAX, axis=1)
    np.testing.assert_allclose(T, [2.0, 1.25, 3.0])
    np.testing.assert_allclose(np.diff(traj.corners), T)
    assert traj.tf == pytest.approx(TACC / 2 + T.sum() + TACC / 2)
    # on each straight part the slowest joint moves at its limit
    for k in range(3):
        mid = traj.corners[k] + T[k] / 2
        v = traj.at(mid)[1]
        assert np.max(np.abs(v) / QDMAX) == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_allclose(v, (points[k + 1] - points[k]) / T[k], atol=1e-12)


def test_blends_are_the_toolbox_quintic_through_the_corner():
    """Release 7 blends with jtraj from the line at c - tacc/2 to the line at c + tacc/2
    with the two segment velocities: the same polynomial (its tau^5 term vanishes)."""
    traj = ViaPointTrajectory(Q0, VIA, TACC, QDMAX)
    points = np.vstack([Q0, VIA])
    h = TACC / 2
    for k in (1, 2):
        c = traj.corners[k]
        v_in, v_out = traj.velocities[k - 1], traj.velocities[k]
        t = np.linspace(c - h, c + h, 21)
        q, qd, qdd = jtraj(points[k] - h * v_in, points[k] + h * v_out, t - (c - h),
                           v_in, v_out)
        got = np.array([np.concatenate(traj.at(ti)) for ti in t])
        np.testing.assert_allclose(got, np.hstack([q, qd, qdd]), atol=1e-12)
        # it passes 3 tacc |dv| / 32 from the via point (the quintic at its midpoint)
        np.testing.assert_allclose(traj.at(c)[0] - points[k], 3 * TACC * (v_out - v_in) / 32,
                                   atol=1e-13)


def test_starts_and_ends_at_rest_and_holds():
    rig = rig_for(qdmax=QDMAX)
    tf = rig.block._traj.tf
    q, qd, qdd = sampled(rig, np.array([-1.0, 0.0, tf, tf + 2.0]))
    np.testing.assert_allclose(q, [Q0, Q0, VIA[-1], VIA[-1]], atol=1e-14)
    np.testing.assert_allclose(qd, 0.0, atol=1e-14)
    np.testing.assert_allclose(qdd, 0.0, atol=1e-13)


def test_rates_integrate_to_the_motion_and_acceleration_only_in_blends():
    rig = rig_for(qdmax=QDMAX)
    traj = rig.block._traj
    t = np.linspace(0, traj.tf, 20001)
    q, qd, qdd = sampled(rig, t)
    dt = t[1] - t[0]

    def integral(rate):
        return np.concatenate([[0.0 * rate[0]], np.cumsum((rate[1:] + rate[:-1]) / 2, axis=0)]) * dt

    np.testing.assert_allclose(q - Q0, integral(qd), atol=1e-6)
    np.testing.assert_allclose(qd - qd[0], integral(qdd), atol=1e-6)
    in_blend = np.any(np.abs(t[:, None] - traj.corners) < TACC / 2 + 1e-12, axis=1)
    assert np.abs(qdd[~in_blend]).max() < 1e-12
    assert np.abs(qdd[in_blend]).max() > 0.5


def test_tacc_zero_passes_through_the_via_points_and_tsegment_sets_the_times():
    traj = ViaPointTrajectory(Q0, VIA, 0.0, tsegment=[1.0, 2.0, 0.5])
    np.testing.assert_allclose(traj.corners, [0.0, 1.0, 3.0, 3.5])
    for c, p in zip(traj.corners[1:], VIA):
        np.testing.assert_allclose(traj.at(c)[0], p, atol=1e-14)
    # one tacc per corner: start, the via points, end
    traj = ViaPointTrajectory(Q0, VIA, [0.2, 0.4, 0.0, 1.0], tsegment=[1.0, 2.0, 0.5])
    assert traj.tf == pytest.approx(0.1 + 3.5 + 0.5)
    np.testing.assert_allclose(traj.at(traj.corners[2])[0], VIA[1], atol=1e-14)  # tacc 0 there


def test_mstraj_function_samples_the_law():
    q, t = mstraj(VIA, QDMAX, None, Q0, 0.1, TACC)
    traj = ViaPointTrajectory(Q0, VIA, TACC, QDMAX)
    assert t[-1] >= traj.tf > t[-2]
    np.testing.assert_allclose(q[-1], VIA[-1])
    np.testing.assert_allclose(q[7], traj.at(0.7)[0])


@pytest.mark.parametrize("params, param", [
    ({"qdmax": QDMAX, "tsegment": [1, 1, 1]}, "qdmax"),
    ({}, "qdmax"),
    ({"tsegment": [1.0, 0.5, 1.0]}, "tsegment"),           # 0.5 s < the 0.6 s of its blends
    ({"tsegment": [1.0, 1.0]}, "tsegment"),
    ({"qdmax": [1.0, -1.0, 1.0]}, "qdmax"),
    ({"qdmax": QDMAX, "via": [[1.0, 2.0]]}, "via"),
    ({"qdmax": QDMAX, "tacc": [0.1, 0.2]}, "tacc"),
])
def test_bad_parameters_are_named(params, param):
    with pytest.raises(ParamError) as e:
        rig_for(**params)
    assert e.value.param == param


# issue 35 item 16: a blend's q is a quartic in the time s into it, so s^4 up to tacc must
# be a double: tacc <= (1.798e308)^(1/4) = 1.16e77 s; 1e200 leaked numpy's overflow warnings
# (D^3 in the coefficients) and made the blend's coefficients 0 by overflow, not by value
@pytest.mark.parametrize("params, param, words", [
    ({"qdmax": QDMAX, "tacc": 1e200}, "tacc", "tacc 1e+200 s is longer than a blend can be "
                                             "(1.16e+77 s"),
    ({"qdmax": QDMAX, "tacc": [0, 0, 1.2e77, 0]}, "tacc", "tacc 1.2e+77 s"),
    # 1e308 s each: the motion lasts 3e308 s, beyond the largest double (inf)
    ({"tsegment": [1e308] * 3, "tacc": 0}, "tsegment", "would last more than the largest"),
    ({"qdmax": 1e-310, "tacc": 0}, "qdmax", "shorter segments or faster joints"),  # 1/1e-310
])
def test_times_beyond_a_double_are_refused_without_warnings(params, param, words):
    with np.errstate(all="raise"), pytest.raises(ParamError) as e:
        rig_for(**params)
    assert e.value.param == param and words in str(e.value), str(e.value)
    with np.errstate(all="raise"):  # just below: the blends' coefficients are numbers
        traj = ViaPointTrajectory(Q0, VIA, tacc=1e76, qdmax=QDMAX)
    assert traj.tf == pytest.approx(4e76) and np.isfinite(traj._M).all()


def test_mstraj_in_a_diagram_lands_on_every_change_of_law(run_diagram):
    text = """
blocksim: 1
blocks:
  traj: {type: mstraj, via: [[1, 0.5], [1, -0.5]], q0: [0, 0], qdmax: [0.5, 1], tacc: 0.4}
  I: {type: integrator}
wires: [traj.qd -> I]
simulation: {stop: 5, solver: rk45, rtol: 1e-10, atol: 1e-12}
record: {q: traj.q, qd: traj.qd, integral: I.y}
"""
    result = run_diagram(text)
    traj = ViaPointTrajectory([0, 0], [[1, 0.5], [1, -0.5]], 0.4, [0.5, 1])
    for b in traj.bounds[1:]:
        assert np.any(result.t == b)
    np.testing.assert_allclose(result["integral"], result["q"], atol=1e-8)
    np.testing.assert_allclose(result["q"][-1], [1, -0.5], atol=1e-14)


# --- ctraj: velocity output, poses from inputs ------------------------------------------------

T0 = tr.transl(0.5, -0.2, 0.3) @ tr.trotz(0.4)
T1 = tr.transl(-0.1, 0.6, 1.0) @ tr.rotvec([1, -1, 2], 2.0)


def velocity_by_differences(pose, t, h=1e-6):
    """[dp/dt; omega] by central differences: omega from the skew part of dR/dt R^T."""
    Tp, Tm, T = pose(t + h), pose(t - h), pose(t)
    W = (Tp[:3, :3] - Tm[:3, :3]) / (2 * h) @ T[:3, :3].T
    return np.concatenate([(Tp[:3, 3] - Tm[:3, 3]) / (2 * h), [W[2, 1], W[0, 2], W[1, 0]]])


def test_ctraj_velocity_is_the_rate_of_the_pose():
    rig = Rig(CTraj, {"T0": T0, "T1": T1, "tf": 2.0})
    for t in (0.1, 0.7, 1.0, 1.9):
        v = rig.outputs(t)["v"]
        np.testing.assert_allclose(v, velocity_by_differences(lambda s: rig.outputs(s)["T"], t),
                                   atol=1e-8)
    assert np.abs(rig.outputs(1.0)["v"]).max() > 0.5
    for t in (-1.0, 0.0, 2.0, 3.0):
        np.testing.assert_array_equal(rig.outputs(t)["v"], np.zeros(6))


def test_ctraj_poses_from_inputs_equal_the_parameters():
    by_params = Rig(CTraj, {"T0": T0, "T1": T1, "tf": 2.0})
    both = Rig(CTraj, {"tf": 2.0})
    assert [p.name for p in both.block.ports()[0]] == ["T0", "T1"]
    assert both.block.ports()[1][0].feedthrough == ("T0", "T1")
    one = Rig(CTraj, {"T1": T1, "tf": 2.0})
    assert [p.name for p in one.block.ports()[0]] == ["T0"]
    both.set(T0=T0, T1=T1)
    one.set(T0=T0)
    for t in (0.0, 0.3, 1.2, 2.5):
        want = by_params.outputs(t)
        for rig in (both, one):
            got = rig.outputs(t)
            np.testing.assert_allclose(got["T"], want["T"], atol=1e-15)
            np.testing.assert_allclose(got["v"], want["v"], atol=1e-15)
    # the motion follows the inputs: a new start pose moves the whole path
    both.set(T0=T1)
    np.testing.assert_allclose(both.outputs(1.0)["T"], T1, atol=1e-14)


def test_ctraj_from_fkine_in_a_diagram_reaches_the_goal(run_diagram):
    """The start pose comes from the robot's forward kinematics at qn; the resolved-rate
    feedforward J0^-1 v integrated from qn follows the Cartesian path."""
    p560 = load_robot("puma560")
    qn = p560.poses["qn"]
    goal = p560.fkine(qn) @ tr.transl(0.05, 0.1, -0.05) @ tr.trotx(0.3)
    text = f"""
blocksim: 1
robots: {{p560: {{model: puma560}}}}
parameters: {{goal: {goal.tolist()}}}
blocks:
  start: {{type: constant, value: qn}}
  fk0: {{type: fkine, robot: p560}}
  traj: {{type: ctraj, T1: goal, tf: 1}}
  J: {{type: jacob0, robot: p560}}
  Jinv: {{type: ijacob}}
  qd: {{type: matmul}}
  q: {{type: integrator, x0: qn}}
  fk: {{type: fkine, robot: p560}}
wires: [start -> fk0, fk0 -> traj.T0, q -> J, J -> Jinv, Jinv -> qd.u1, traj.v -> qd.u2,
        qd -> q, q -> fk]
simulation: {{stop: 1.5, solver: rk45, rtol: 1e-10, atol: 1e-12}}
record: {{T: traj.T, Tq: fk.T}}
"""
    result = run_diagram(text)
    np.testing.assert_allclose(result["T"][0], p560.fkine(qn), atol=1e-14)
    np.testing.assert_allclose(result["T"][-1], goal, atol=1e-14)
    np.testing.assert_allclose(result["Tq"], result["T"], atol=1e-7)
