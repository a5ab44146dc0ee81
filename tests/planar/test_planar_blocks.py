"""The planar blocks against the planar library, and the planar7r diagram against the closed
form of its error dynamics, its end point and its initial torque computed by hand."""
import math
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocks.planar import (dynmodel, forward_dynamics, idxcn, idxgrav, idxman, inertia_rate,
                           kinmodel)

DIAGRAM = Path(__file__).resolve().parents[2] / "diagrams" / "planar7r.yaml"

# the 4-R data of seed 001, section 4.1 (also in demos.md, planar4r)
L = [1.0, 1.0, 1.0, 1.0]
LC = [0.4, 0.3, 0.3, 0.25]
M = [2.0, 1.0, 1.0, 0.5]
ML = [1.0, 1.0, 1.0, 1.0]
I = [0.3, 0.2, 0.2, 0.11]
B = [0.05, 0.04, 0.04, 0.04]
Q = [0.5 * math.pi / 2, math.pi / 2, -math.pi / 2, -math.pi / 2]
QD = [0.3, -0.2, 0.5, 0.1]
DATA = f"L: {L}, Lc: {LC}, m: {M}, ml: {ML}, I: {I}, B: {B}"


def run_text(tmp_path, text):
    path = tmp_path / "d.yaml"
    path.write_text(text)
    return blocksim.run(path)


def test_model_and_kinematics_blocks_equal_the_library(tmp_path):
    r = run_text(tmp_path, f"""
blocksim: 1
blocks:
  Q:  {{type: constant, value: {Q}}}
  QD: {{type: constant, value: {QD}}}
  K:  {{type: planar_kinematics, L: {L}}}
  Mo: {{type: planar_model, {DATA}}}
  Ix: {{type: planar_index, kind: manipulability, L: {L}}}
  Ic: {{type: planar_index, kind: condition, L: {L}}}
  Ig: {{type: planar_index, kind: gravity, L: {L}, Lc: {LC}, m: {M}, ml: {ML}, W: [1, 2, 3, 4]}}
wires: [Q -> K.q, QD -> K.qd, Q -> Mo.q, QD -> Mo.qd, Q -> Ix, Q -> Ic, Q -> Ig]
simulation: {{stop: 1}}
record: {{x: K.x, J: K.J, Jd: K.Jd, H: Mo.H, Hd: Mo.Hd, h: Mo.h, g: Mo.g,
          w: Ix.value, dw: Ix.grad, c: Ic.value, p: Ig.value, dp: Ig.grad}}
""")
    x, J, Jd = kinmodel(Q, QD, L)
    for name, want in zip(("x", "J", "Jd"), (x, J, Jd)):
        np.testing.assert_allclose(r[name][-1], want, rtol=1e-14)
    want = dict(zip(("x", "J", "Jd", "H", "h", "g"), dynmodel(Q, QD, L, LC, M, ML, I, B)))
    want["Hd"] = inertia_rate(Q, QD, L, LC, M, ML, I, B)
    for name in ("H", "Hd", "h", "g"):
        np.testing.assert_allclose(r[name][-1], want[name], rtol=1e-14)
    w, dw = idxman(Q, L)
    assert r["w"][-1] == pytest.approx(w) and np.allclose(r["dw"][-1], dw)
    assert r["c"][-1] == pytest.approx(idxcn(Q, L)[0])
    p, dp = idxgrav(Q, L, LC, M, ML, np.array([1, 2, 3, 4.0]))
    assert r["p"][-1] == pytest.approx(p) and np.allclose(r["dp"][-1], dp)


def test_planar_robot_is_the_forward_dynamics(tmp_path):
    r = run_text(tmp_path, f"""
blocksim: 1
blocks:
  T: {{type: constant, value: [1, -2, 0.5, 0.1]}}
  R: {{type: planar_robot, {DATA}, q0: {Q}, qd0: {QD}}}
wires: [T -> R]
simulation: {{stop: 0.2, rtol: 1e-10, atol: 1e-12}}
record: {{q: R.q, qd: R.qd, qdd: R.qdd}}
""")
    np.testing.assert_array_equal(r["q"][0], Q)  # q0, qd0 honoured
    np.testing.assert_array_equal(r["qd"][0], QD)
    for q, qd, qdd in zip(r["q"], r["qd"], r["qdd"]):
        np.testing.assert_allclose(qdd, forward_dynamics(q, qd, [1, -2, 0.5, 0.1], L, LC, M, ML, I, B),
                                   rtol=1e-12, atol=1e-12)
    # qd is the time integral of qdd: trapezoid over the recorded steps, to the tolerance
    qdd0 = r["qdd"][:, 0]
    trap = QD[0] + np.sum(0.5 * np.diff(r.t) * (qdd0[1:] + qdd0[:-1]))
    assert abs(trap - r["qd"][-1, 0]) < 1e-3


def test_planar_robot_without_friction_conserves_energy(tmp_path):
    """Free motion (tau = 0), B = 0: kinetic 1/2 qd' H qd plus potential energy constant.
    The potential is g0 times the heights of the link COMs and tip masses, from kin_link."""
    from blocks.planar import kin_link
    r = run_text(tmp_path, f"""
blocksim: 1
blocks:
  T: {{type: constant, value: [0, 0, 0, 0]}}
  R: {{type: planar_robot, L: {L}, Lc: {LC}, m: {M}, ml: {ML}, I: {I}, q0: {Q}}}
wires: [T -> R]
simulation: {{stop: 2, rtol: 1e-10, atol: 1e-12}}
record: {{q: R.q, qd: R.qd}}
""")
    E = []
    for q, qd in zip(r["q"], r["qd"]):
        H = dynmodel(q, qd, L, LC, M, ML, I, np.zeros(4))[3]
        pts = kin_link(q, L)
        com_y = pts[:-1, 1] + np.asarray(LC) / np.asarray(L) * (pts[1:, 1] - pts[:-1, 1])
        E.append(0.5 * qd @ H @ qd + 9.81 * (np.dot(M, com_y) + np.dot(ML, pts[1:, 1])))
    assert np.ptp(E) < 1e-6 * max(1, abs(E[0]))


def test_planar7r_error_is_critically_damped_and_ends_on_target():
    """With the exact model the closed loop gives e'' + Kv e' + Kp e = 0 (Kv = 20, Kp = 100,
    a double pole at -10) with e'(0) = xd'(0) - J qd(0) = 0, so e(t) = e(0) e^{-10t} (1 + 10t)."""
    r = blocksim.run(DIAGRAM, overrides={"simulation.rtol": 1e-9, "simulation.atol": 1e-11})
    e0 = r["e"][0]
    assert np.linalg.norm(e0) == pytest.approx(0.05, abs=1e-3)  # joint 7 off by 0.05 rad, L7 = 1
    exact = e0[None, :] * (np.exp(-10 * r.t) * (1 + 10 * r.t))[:, None]
    np.testing.assert_allclose(r["e"], exact, atol=1e-7)
    np.testing.assert_allclose(r["x"][-1], [6, -1], atol=1e-7)


def test_planar7r_initial_torque_by_hand():
    """At t = 0: qd = 0, so h = 0 (no Coriolis, no friction), xdd_d = 0 (s''(0) = 0),
    e' = 0, phi = -Kn qd - Nd qd = 0, Jd qd = 0; the law reduces to
    tau(0) = H J# (Kp e(0)) + g with J# = H^-1 J' (J H^-1 J')^-1."""
    r = blocksim.run(DIAGRAM, overrides={"simulation.stop": 0.01})
    q0 = np.array([math.pi / 2] + [-math.pi / 6] * 5 + [-math.pi / 6 + 0.05])
    data = dict(L=np.ones(7), Lc=[0.4, 0.3, 0.3, 0.3, 0.3, 0.3, 0.25], m=[2, 1, 1, 1, 1, 1, 0.5],
                ml=np.ones(7), I=[0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.11], B=[0.05] + [0.04] * 6)
    x, J, _, H, h, g = dynmodel(q0, np.zeros(7), **data)
    e = np.array([2 + math.sqrt(3), 0.0]) - x
    Hi = np.linalg.inv(H)
    Jp = Hi @ J.T @ np.linalg.inv(J @ Hi @ J.T)
    np.testing.assert_allclose(h, 0, atol=1e-15)
    np.testing.assert_allclose(r["tau"][0], H @ Jp @ (100 * e) + g, rtol=1e-10)


def test_planar7r_with_model_error_still_runs(tmp_path):
    r = blocksim.run(DIAGRAM, overrides={"blocks.Model.m": [2.2, 1.1, 0.9, 1, 1, 1, 0.5],
                                         "simulation.stop": 1})
    assert r.complete and np.all(np.isfinite(r["e"]))
    assert np.linalg.norm(r["e"][-1]) < 0.05  # still converging towards the line
