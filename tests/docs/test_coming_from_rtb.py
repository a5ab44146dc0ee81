"""docs/robots.md, "Coming from roboticstoolbox-python": every difference the table lists is
checked here with the numbers roboticstoolbox-python 1.5.0 computes (copied: it is not a test
dependency; the calls that made them are named with each), both what differs and the
conversion the table gives. DIFFERENCES maps the table's rows to their tests, so a row
without a test, or a test without a row, fails.

Inputs shared by the robot checks (the calls below use them): Q, QD, QDD; rtb is
roboticstoolbox-python 1.5.0, sm is spatialmath-python's spatialmath.base."""
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from docfiles import DOCS, files

import blocksim
from blocks.robot import SerialLink, load_robot
from blocks.robot.dynamics_blocks import Rne
from blocks.robot.ikine import ikine6s
from blocks.robot.mstraj import mstraj
from blocks.robot.trajectory import ctraj, jtraj
from blocks.robot.transforms import rpy2tr, tr2diff, tr2rpy, transl, trotx
from blocksim.errors import DiagramError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "blocks"))
from harness import Rig  # noqa: E402

Q = np.array([0.3, -0.6, 0.4, 0.8, -0.7, 1.2])
QD = np.array([0.5, -1.0, 0.7, 2.0, -1.5, 0.9])
QDD = np.array([0.2, 0.1, -0.3, 0.4, 0.5, -0.6])
PUMA = load_robot("puma560")
# rtb: p = Puma560(); p.tool = SE3.Trans(0.02, -0.01, 0.1) * SE3.Rx(0.3)
TOOL = transl(0.02, -0.01, 0.1) @ trotx(0.3)


def close(a, b, tol=1e-9):
    np.testing.assert_allclose(a, b, rtol=0, atol=tol)


@pytest.fixture(scope="module")
def page_robots(tmp_path_factory):
    """The page's robot files, loaded."""
    folder = tmp_path_factory.mktemp("rtb_robots")
    robots = {}
    for name in ("twolink_rtb.yaml", "stanford_rtb.yaml"):
        (folder / name).write_text(files("robots.md")[name])
        robots[name] = load_robot(str(folder / name))
    return robots


def test_gravity_sign():
    # rtb: Puma560().gravity; .gravload(Q); .gravload(Q, gravity=[0, 9.81, 0])
    close(PUMA.gravity, [0, 0, 9.81], 0)
    rtb_gravity = np.array([0.0, 0.0, -9.81])
    close(PUMA.gravload(Q), [0.0, 33.307283690013, 1.997841895194, 0.002593938998,
                             0.020829130611, 0.0])
    close(PUMA.gravload(Q, gravity=-rtb_gravity), PUMA.gravload(Q), 0)
    close(PUMA.gravload(Q, gravity=[0, -9.81, 0]),
          [-46.119682874292, -3.439908564216, 2.523404170872, -0.008332794588, 0.018100762425,
           0.0])


def test_puma_d1():
    # rtb: Puma560().links[0].d = 0.67183; Puma560().fkine(Q).A
    rtb_fkine = np.array([[-0.740177717602, -0.517919355329, 0.428831537716, 0.485766241573],
                          [0.65886014794, -0.431235529961, 0.616392101795, -0.006799970456],
                          [-0.134314004561, 0.738779709436, 0.660427353389, 0.847177140885],
                          [0.0, 0.0, 0.0, 1.0]])
    close(PUMA.d[0], 0.0, 0)
    close(PUMA.fkine(Q), transl(0, 0, -0.67183) @ rtb_fkine)
    close(PUMA.configure(base=transl(0, 0, 0.67183)).fkine(Q), rtb_fkine)


def test_puma_qn():
    # rtb: Puma560().qn
    rtb_qn = [0.0, 0.785398163397, -3.14159265359, 0.0, 0.785398163397, 0.0]
    close(PUMA.poses["qn"], [0, np.pi / 4, np.pi, 0, np.pi / 4, 0], 0)
    close(PUMA.fkine(PUMA.poses["qn"]), PUMA.fkine(rtb_qn))


def test_twolink(page_robots):
    # rtb: TwoLink().fkine([0.4, -0.7]).A, .gravload([0.4, -0.7]),
    # .rne([0.4, -0.7], [0.3, -0.2], [0.5, 0.1])
    q, qd, qdd = [0.4, -0.7], [0.3, -0.2], [0.5, 0.1]
    close(load_robot("twolink").gravload(q), [0.0, 0.0], 0)          # horizontal here
    rtb = page_robots["twolink_rtb.yaml"]
    close(rtb.fkine(q), [[0.955336489126, 0.295520206661, 0.0, 1.876397483128],
                         [0.0, 0.0, -1.0, 0.0],
                         [-0.295520206661, 0.955336489126, 0.0, 0.093898135647],
                         [0.0, 0.0, 0.0, 1.0]])
    close(rtb.gravload(q), [-18.220745408558, -4.681148796715])
    close(rtb.rne(q, qd, qdd), [-17.050850913041, -4.36892804582])


def test_stanford_arm(page_robots):
    # rtb: Stanford().fkine(q).A and .gravload(q) at q = [0.3, -0.6, 0.5, 0.8, -0.7, 1.2]
    q = [0.3, -0.6, 0.5, 0.8, -0.7, 1.2]
    rtb_fkine = [[0.402314233752, -0.103851019857, -0.909592338905, -0.309222830703],
                 [0.622195512526, 0.759843029586, 0.188444460205, 0.044296858382],
                 [0.671577249103, -0.641758160107, 0.370311304746, 0.824667807455],
                 [0.0, 0.0, 0.0, 1.0]]
    rtb_gravload = [0.0, -129.746662553329, 52.384629213248, -3.160209775596, 6.558071363866,
                    0.0]
    ours = load_robot("stanford")
    assert np.abs(ours.fkine(q) - rtb_fkine).max() > 0.1            # d6, a3 differ
    assert np.abs(ours.gravload(q) - rtb_gravload).max() > 1.0       # and link 5
    assert np.isnan(ours.qlim).all()
    rtb = page_robots["stanford_rtb.yaml"]
    close(rtb.fkine(q), rtb_fkine)
    close(rtb.gravload(q), rtb_gravload)
    close(rtb.qlim[:, 1], [2.9670597284, 2.9670597284, 1.27, 2.9670597284, 1.5707963268,
                           2.9670597284])                           # rtb: Stanford().qlim


def test_friction_sign():
    # rtb: Puma560().friction(QD); .rne(Q, QD, QDD)
    close(PUMA.friction(QD), -np.array([-27.632295383975, 17.151733641825, -9.875529793261,
                                        -1.674898139394, 1.683808031403, -0.497917487946]))
    close(PUMA.rne(Q, QD, QDD), [27.149479231359, 16.783765980172, 12.056283218522,
                                 1.756143163797, -1.57590410379, 0.381397348502])


F = np.array([5.0, -3.0, 10.0, 0.4, -0.2, 0.3])
# rtb: p.rne(Q, QD, QDD, fext=F) for the Puma with TOOL
RTB_RNE_FEXT = [32.383609710462, 17.055427866772, 9.730082905477, 1.77213369729,
                -1.876248187282, 0.681397348502]


def test_rne_fext_frame():
    robot = PUMA.configure(tool=TOOL)
    close(robot.rne(Q, QD, QDD, fext=F, fext_frame="link"), RTB_RNE_FEXT)
    assert np.abs(robot.rne(Q, QD, QDD, fext=F) - RTB_RNE_FEXT).max() > 0.5   # tool frame
    # the same wrench moved to the tool frame (force rotated, moment about the tool point)
    R, p = TOOL[:3, :3], TOOL[:3, 3]
    at_tool = np.r_[R.T @ F[:3], R.T @ (F[3:] - np.cross(p, F[:3]))]
    close(robot.rne(Q, QD, QDD, fext=at_tool), RTB_RNE_FEXT)
    # accel inverts it; the rne block's parameter fext_frame: link gives the same
    close(robot.accel(Q, QD, np.array(RTB_RNE_FEXT), fext=F, fext_frame="link"), QDD)
    rig = Rig(Rne, {"robot": robot, "fext_frame": "link"}, {"fext": (6,)})
    close(rig.set(q=Q, qd=QD, qdd=QDD, fext=F).out(), RTB_RNE_FEXT)
    with pytest.raises(ValueError, match="fext_frame must be 'tool' or 'link'"):
        robot.rne(Q, QD, QDD, fext=F, fext_frame="world")


def test_payload_frame(tmp_path):
    # rtb: p.payload(2.5, [0.01, 0.02, 0.05]); p.rne(Q, QD, QDD) for the Puma with TOOL
    rtb_rne = [27.087238779057, 28.93855523186, 15.666887896609, 1.925124059452,
               -0.870428162596, 0.622264734055]
    robot, p = PUMA.configure(tool=TOOL), np.array([0.01, 0.02, 0.05])
    close(robot.payload(2.5, p, frame="link").rne(Q, QD, QDD), rtb_rne)
    close(robot.payload(2.5, (np.linalg.inv(TOOL) @ np.r_[p, 1])[:3]).rne(Q, QD, QDD), rtb_rne)
    close(PUMA.configure(tool=TOOL, payload={"m": 2.5, "p": p, "frame": "link"})
          .rne(Q, QD, QDD), rtb_rne)
    assert np.abs(robot.payload(2.5, p).rne(Q, QD, QDD) - rtb_rne).max() > 0.01
    # in a diagram: payload: {mass, com, frame: link}
    text = ("blocksim: 1\nrobots:\n  p: {model: puma560, tool: 'transl(0.02, -0.01, 0.1) @ "
            "trotx(0.3)', payload: {mass: 2.5, com: [0.01, 0.02, 0.05], frame: FRAME}}\n"
            "blocks: {c: {type: constant, value: 1}}\nsimulation: {stop: 0.1}\n")
    path = tmp_path / "payload.yaml"
    path.write_text(text.replace("FRAME", "link"))
    close(blocksim.load(path).resources["robots"]["p"].rne(Q, QD, QDD), rtb_rne)
    path.write_text(text.replace("FRAME", "wrist"))
    with pytest.raises(DiagramError, match="payload frame must be tool or link, got 'wrist'"):
        blocksim.load(path)


def test_rpy_order():
    # sm: rpy2tr(0.1, 0.2, 0.3); tr2rpy(rpy2tr(0.1, 0.2, 0.3))
    sm_rpy2tr = [[0.936293363584, -0.275095847318, 0.218350663146, 0.0],
                 [0.289629477626, 0.956425085849, -0.036957013525, 0.0],
                 [-0.198669330795, 0.097843395007, 0.975170327202, 0.0],
                 [0.0, 0.0, 0.0, 1.0]]
    close(rpy2tr(0.3, 0.2, 0.1), sm_rpy2tr)
    assert np.abs(rpy2tr(0.1, 0.2, 0.3) - sm_rpy2tr).max() > 0.1
    close(tr2rpy(np.array(sm_rpy2tr))[::-1], [0.1, 0.2, 0.3])


def test_tr2diff_frame():
    # sm: tr2delta(T1, T2), T1 = transl(0.1, 0.2, 0.3) @ trotx(0.4), T2 below
    T1 = transl(0.1, 0.2, 0.3) @ trotx(0.4)
    T2 = np.array([[0.999350130406, -0.030193893788, -0.01968871849, 0.15],
                   [0.019228416573, 0.908550249235, -0.417332855897, 0.18],
                   [0.030489094017, 0.416683061082, 0.908540390821, 0.33],
                   [0.0, 0.0, 0.0, 1.0]])
    sm_delta = [0.05, -0.006738669611, 0.035420196666, 0.030285552316, -0.020141567812,
                0.02988872536]
    d, R1 = tr2diff(T1, T2), T1[:3, :3]
    close(np.r_[R1.T @ d[:3], R1.T @ d[3:]], sm_delta)
    assert np.abs(d - sm_delta).max() > 0.01


def test_ctraj_profile():
    # rtb: [T.t[0] for T in ctraj(SE3.Trans(0.5, -0.2, 0.3), SE3.Trans(-0.1, 0.6, 1.0), 5)]
    rtb_x = [0.5, 0.415625, 0.2, -0.015625, -0.1]
    T0, T1 = transl(0.5, -0.2, 0.3), transl(-0.1, 0.6, 1.0)
    assert np.abs(ctraj(T0, T1, 5)[:, 0, 3] - rtb_x).max() > 0.02        # quintic here
    tau = np.linspace(0, 1, 5)
    s = np.where(tau <= 1 / 3, 9 * tau ** 2 / 4,
                 np.where(tau <= 2 / 3, 1.5 * tau - 0.25, 1 - 9 * (1 - tau) ** 2 / 4))
    close(ctraj(T0, T1, s)[:, 0, 3], rtb_x, 1e-12)


def test_jacobn():
    # rtb: Puma560().jacobe(Q)
    close(PUMA.jacobn(Q), [
        [0.315018831175, 0.027788809647, 0.200588207814, 0.0, 0.0, 0.0],
        [-0.213001498936, 0.450466622769, 0.338886938851, 0.0, 0.0, 0.0],
        [0.302338516411, 0.201380987672, -0.178278836552, 0.0, 0.0, 0.0],
        [-0.134314004561, -0.84817061263, -0.84817061263, -0.233437274542, -0.932039085967, 0.0],
        [0.738779709436, 0.258919402258, 0.258919402258, 0.600436064377, -0.362357754477, 0.0],
        [0.660427353389, -0.462133481805, -0.462133481805, 0.764842187284, 0.0, 1.0]])


def test_jacob_dot():
    # rtb: Puma560().jacob0_dot(Q, QD) @ QD
    close(PUMA.jacob_dot(Q, QD), [-0.436100260939, -0.219219754887, 0.206088241531,
                                  -2.078349557306, -1.33980861947, -0.377393269395])


def test_ikine_and_qlim():
    # q2 = -1 rad lies outside the Puma's [-45, 225] deg. rtb: Puma560().ikine_LM(T, q0=q,
    # joint_limits=False).q keeps that solution, q2 moved a turn (still outside):
    # [0.3, 5.28318530718, 0.4, 0.8, -0.7, 1.2]; with its default joint_limits=True it
    # restarts from unseeded random points (another solution each call)
    q = np.array([0.3, -1.0, 0.4, 0.8, -0.7, 1.2])
    T = PUMA.fkine(q)
    rtb_free = [0.3, 5.28318530718, 0.4, 0.8, -0.7, 1.2]
    close(PUMA.fkine(rtb_free), T)
    assert PUMA.islimit(rtb_free)[1] == 1
    ours = PUMA.ikine(T, q0=q)
    close(PUMA.fkine(ours), T)
    assert (PUMA.islimit(ours) == 0).all()
    np.testing.assert_array_equal(PUMA.ikine(T, q0=q), ours)           # the same every call
    # it is one of the 8 closed-form solutions (ikine6s)
    wrapped = [np.angle(np.exp(1j * (ours - ikine6s(PUMA, T, c)))) for c in
               [a + b + w for a in "lr" for b in "ud" for w in "nf"]]
    assert min(np.abs(w).max() for w in wrapped) < 1e-8
    # without limits (links without qlim) blocksim finds q itself
    free = SerialLink([link.replace(qlim=None) for link in PUMA.links])
    close(free.ikine(T, q0=q + 0.05), q, 1e-8)


def test_mstraj():
    # rtb: mstraj([[1, 0.5], [0.2, 1.5]], dt=0.25, tacc=0 or 0.5, tsegment=[2, 2], q0=[0, 0])
    via, dt = np.array([[1.0, 0.5], [0.2, 1.5]]), 0.25
    straight = [[0.125, 0.0625], [0.25, 0.125], [0.375, 0.1875], [0.5, 0.25], [0.625, 0.3125],
                [0.75, 0.375], [0.875, 0.4375], [1.0, 0.5], [0.9, 0.625], [0.8, 0.75],
                [0.7, 0.875], [0.6, 1.0], [0.5, 1.125], [0.4, 1.25], [0.3, 1.375], [0.2, 1.5]]
    q, t = mstraj(via, None, [2.0, 2.0], [0.0, 0.0], dt, 0.0)
    close(q[0], [0, 0], 0)
    close(q[1:], straight, 1e-12)
    close(t[:-1], np.arange(16) * dt, 1e-12)                  # rtb's t: 0, 0.25, ... 3.75
    blended = [row[:] for row in straight]
    blended[7] = [0.9578125, 0.51171875]                      # the corner's blend
    q, t = mstraj(via, None, [2.0, 2.0], [0.0, 0.0], dt, 0.5)
    close(q[0], [0, 0], 0)
    close(q[-1], via[-1], 0)
    for k in range(15):                 # away from the end blends: its row at t = ours at
        close(np.interp(k * dt + dt + 0.25, t, q[:, 0]), blended[k][0], 1e-12)  # t + dt + tacc/2
        close(np.interp(k * dt + dt + 0.25, t, q[:, 1]), blended[k][1], 1e-12)
    assert t[-1] == pytest.approx(4.5)  # two end blends of tacc/2 longer than its 4 s


def test_the_same_in_both():
    # rtb: jtraj([0, 1], [1, -1], linspace(0, 2, 5), qd0=[0.5, 0], qd1=[0.2, 0.1]).qd and with
    # 5 points; the analytic ikine_a agrees (tests/robot/test_ikine.py's table)
    t = np.linspace(0, 2, 5)
    close(jtraj([0, 1], [1, -1], t, qd0=[0.5, 0], qdf=[0.2, 0.1])[1],
          [[0.5, 0.0], [0.611328125, -1.091796875], [0.63125, -1.91875],
           [0.405078125, -1.023046875], [0.2, 0.1]], 1e-12)
    close(jtraj([0, 1], [1, -1], 5, qd0=[0.5, 0], qdf=[0.2, 0.1])[1],
          [[0.5, 0.0], [1.138671875, -2.146484375], [1.56875, -3.79375],
           [0.932421875, -2.077734375], [0.2, 0.1]], 1e-12)


DIFFERENCES = {
    "gravity's sign": test_gravity_sign,
    "the Puma's d1": test_puma_d1,
    "the Puma's qn": test_puma_qn,
    "twolink": test_twolink,
    "Stanford arm": test_stanford_arm,
    "friction's sign": test_friction_sign,
    "rne's fext": test_rne_fext_frame,
    "the payload's frame": test_payload_frame,
    "rpy order": test_rpy_order,
    "tr2diff's frame": test_tr2diff_frame,
    "ctraj's profile": test_ctraj_profile,
    "jacobn": test_jacobn,
    "jacob_dot": test_jacob_dot,
    "ikine and qlim": test_ikine_and_qlim,
    "mstraj": test_mstraj,
}


def test_every_row_of_the_table_has_its_test():
    page = (DOCS / "robots.md").read_text()
    start = page.index("## Coming from roboticstoolbox-python")
    table = page[start:page.index("\n## ", start + 1)]
    rows = [line.split("|")[1].strip() for line in table.splitlines() if line.startswith("| ")]
    assert rows[0] == "difference"
    assert rows[1:] == list(DIFFERENCES)
    assert "The same in both (checked): `jtraj`" in re.sub(r"\s+", " ", table)
