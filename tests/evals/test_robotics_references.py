"""Issue 26's computed features, checked as a user meets them (diagrams written from
docs/robots.md, docs/language.md and `blocksim blocks`, run through blocksim.run) against
references built here: the rotation formulas, values published by the Robotics Toolbox's
manual and Corke's book, finite differences, the Christoffel symbols of M(q), an
independent quintic blend (the toolbox's jtraj), energy conservation, closed forms.
"""
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.linalg import expm

import blocksim

ROOT = Path(__file__).resolve().parents[2]


def run_text(tmp_path, text, **overrides):
    path = tmp_path / "d.yaml"
    path.write_text(text)
    return blocksim.run(str(path), overrides=overrides or None)


def final(result):
    return {key: result[key][-1] for key in result.keys() if key != "t"}


def rx(a):
    return np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])


def ry(a):
    return np.array([[math.cos(a), 0, math.sin(a)], [0, 1, 0], [-math.sin(a), 0, math.cos(a)]])


def rz(a):
    return np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])


def homog(R, p=(0, 0, 0)):
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    return T


def wrapped(a):
    return np.angle(np.exp(1j * np.asarray(a)))


# ---- transforms and robot functions in expressions ----------------------------------------------
TRANSFORMS = """\
blocksim: 1
name: transforms
robots:
  p560: {model: puma560}
blocks:
  Tx: {type: constant, value: trotx(0.3)}
  Ty: {type: constant, value: troty(-1.1)}
  Tz: {type: constant, value: trotz(2.2)}
  Rpy: {type: constant, value: "rpy2tr(0.1, 0.2, 0.3)"}
  RpyV: {type: constant, value: "rpy2tr([0.1, 0.2, 0.3])"}
  Eul: {type: constant, value: "eul2tr(0.1, 0.2, 0.3)"}
  EulV: {type: constant, value: "eul2tr([0.1, 0.2, 0.3])"}
  R2t: {type: constant, value: "r2t([[0, -1, 0], [1, 0, 0], [0, 0, 1]])"}
  T2r: {type: constant, value: "t2r(transl(1, 2, 3) @ trotx(0.3))"}
  Rt2tr: {type: constant, value: "rt2tr(t2r(trotz(2.2)), [1, 2, 3])"}
  Demo: {type: constant, value: "transl(0.5, 0, 0) @ troty(pi/2) @ trotz(-pi/2)"}
  Fz: {type: constant, value: "fkine(p560, qz)"}
  Fr: {type: constant, value: "fkine(p560, qr)"}
  Ik: {type: constant, value: "ikine(p560, fkine(p560, [0.1, 0.5, -0.8, 0.2, 0.4, 0.3]),
                                      [0, 0.4, -0.7, 0, 0.3, 0])"}
  J0: {type: constant, value: "jacob0(p560, [0.3, -0.6, 0.4, 0.8, -0.7, 1.2])"}
  Fq: {type: constant, value: "fkine(p560, [0.3, -0.6, 0.4, 0.8, -0.7, 1.2])"}
simulation: {stop: 0.01}
record: {Tx: Tx.y, Ty: Ty.y, Tz: Tz.y, Rpy: Rpy.y, RpyV: RpyV.y, Eul: Eul.y, EulV: EulV.y,
         R2t: R2t.y, T2r: T2r.y, Rt2tr: Rt2tr.y, Demo: Demo.y, Fz: Fz.y, Fr: Fr.y, Ik: Ik.y,
         J0: J0.y, Fq: Fq.y}
"""


def test_transforms_in_expressions_against_the_formulas_and_published_values(tmp_path):
    v = final(run_text(tmp_path, TRANSFORMS))
    formulas = {"Tx": homog(rx(0.3)), "Ty": homog(ry(-1.1)), "Tz": homog(rz(2.2)),
                # release 7 manual: rpy2tr = Rz(r) Ry(p) Rx(y), eul2tr = Rz(a) Ry(b) Rz(c)
                "Rpy": homog(rz(0.1) @ ry(0.2) @ rx(0.3)), "RpyV": homog(rz(0.1) @ ry(0.2) @ rx(0.3)),
                "Eul": homog(rz(0.1) @ ry(0.2) @ rz(0.3)), "EulV": homog(rz(0.1) @ ry(0.2) @ rz(0.3)),
                "R2t": homog(rz(np.pi / 2)), "T2r": rx(0.3), "Rt2tr": homog(rz(2.2), (1, 2, 3)),
                # by hand: troty(pi/2) trotz(-pi/2) maps x -> -y... columns (0,-1,0), (0,0,-1), (1,0,0)
                "Demo": np.array([[0, 0, 1, 0.5], [-1, 0, 0, 0], [0, -1, 0, 0], [0, 0, 0, 1.0]])}
    for key, expected in formulas.items():
        assert np.abs(v[key] - expected).max() < 1e-15, key
    # Corke, Robotics, Vision and Control (2011), section 2.2.1.2: eul2r(0.1, 0.2, 0.3) and
    # rpy2r(0.1, 0.2, 0.3) (that edition's rpy order is release 7's), printed to 4 decimals
    assert np.abs(v["Eul"][:3, :3] - [[0.9021, -0.3836, 0.1977], [0.3875, 0.9216, 0.0198],
                                      [-0.1898, 0.0587, 0.9801]]).max() < 6e-5
    assert np.abs(v["Rpy"][:3, :3] - [[0.9752, -0.0370, 0.2184], [0.0978, 0.9564, -0.2751],
                                      [-0.1987, 0.2896, 0.9363]]).max() < 6e-5
    # Robotics Toolbox release 7 manual (fkine): the Puma's tool at qz and at qr
    assert np.abs(v["Fz"] - homog(np.eye(3), (0.4521, -0.15005, 0.4318))).max() < 1e-12
    assert np.abs(v["Fr"] - homog(np.eye(3), (0.0203, -0.15005, 0.8636))).max() < 1e-12
    # ikine from a nearby q0 comes back to the pose's own q
    assert np.abs(v["Ik"] - [0.1, 0.5, -0.8, 0.2, 0.4, 0.3]).max() < 1e-8


def test_jacob0_in_an_expression_is_the_derivative_of_fkine(tmp_path):
    """J0 = [dp/dq; omega/dq] by central differences of fkine (omega from dR R^T)."""
    model = blocksim.load(_write(tmp_path, TRANSFORMS))
    p560 = model.resources["robots"]["p560"]
    v = final(blocksim.execute(model))
    q, h = np.array([0.3, -0.6, 0.4, 0.8, -0.7, 1.2]), 1e-6
    J = np.empty((6, 6))
    for j in range(6):
        e = np.zeros(6)
        e[j] = h
        T1, T0 = p560.fkine(q + e), p560.fkine(q - e)
        W = (T1[:3, :3] - T0[:3, :3]) / (2 * h) @ v["Fq"][:3, :3].T
        J[:, j] = np.concatenate([(T1[:3, 3] - T0[:3, 3]) / (2 * h), [W[2, 1], W[0, 2], W[1, 0]]])
    assert np.abs(v["J0"] - J).max() < 1e-8


def _write(tmp_path, text, name="d.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# ---- ikine blocks -------------------------------------------------------------------------------
CONFIGS = [a + b + c for a in "lr" for b in "ud" for c in "nf"]


def ikine_diagram(q, configs):
    blocks = [f'  Q: {{type: constant, value: "{list(q)}"}}', "  F: {type: fkine, robot: p560}"]
    wires, record = ["Q -> F"], ["T: F.T"]
    for c in configs:
        blocks += [f"  I{c}: {{type: ikine, robot: p560, method: analytic, config: {c}}}",
                   f"  F{c}: {{type: fkine, robot: p560}}"]
        wires += [f"F -> I{c}", f"I{c} -> F{c}"]
        record += [f"q{c}: I{c}.q", f"T{c}: F{c}.T"]
    blocks += ['  N: {type: ikine, robot: p560, q0: "[0.2, -0.5, 0.3, 0.6, -0.6, 1]"}',
               "  FN: {type: fkine, robot: p560}"]
    wires += ["F -> N", "N -> FN"]
    record += ["qN: N.q", "TN: FN.T"]
    return ("blocksim: 1\nname: ik\nrobots:\n  p560: {model: puma560}\nblocks:\n"
            + "\n".join(blocks) + f"\nwires: [{', '.join(wires)}]\nsimulation: {{stop: 0.01}}\n"
            + f"record: {{{', '.join(record)}}}\n")


def test_puma_ikine_all_eight_configurations_round_trip(tmp_path):
    q = [0.3, -0.6, 0.4, 0.8, -0.7, 1.2]
    v = final(run_text(tmp_path, ikine_diagram(q, CONFIGS)))
    solutions = []
    for c in CONFIGS:
        assert np.abs(v["T" + c] - v["T"]).max() < 1e-12, c
        solutions.append(v["q" + c])
    # eight different solutions, one of them the q we started from
    diffs = np.abs(wrapped(np.array(solutions)[:, None] - np.array(solutions)[None])).max(axis=2)
    assert (diffs + np.eye(8) * 10).min() > 1e-3
    assert min(np.abs(wrapped(s - q)).max() for s in solutions) < 1e-9
    # the spherical wrist's flip, by hand: (q4, q5, q6) -> (q4 + pi, -q5, q6 + pi), arm unchanged
    for arm in ("lu", "ld", "ru", "rd"):
        n, f = v[f"q{arm}n"], v[f"q{arm}f"]
        assert np.abs(wrapped(f - (n + [0, 0, 0, np.pi, 0, np.pi]) * [1, 1, 1, 1, -1, 1])).max() < 1e-9
    # the numerical ikine from a nearby q0 finds q itself
    assert np.abs(v["qN"] - q).max() < 1e-8 and np.abs(v["TN"] - v["T"]).max() < 1e-10


def test_puma_ikine_published_solutions_at_qn(tmp_path):
    """Corke, Robotics, Vision and Control (2011), section 7.2.2.1: for T = fkine(qn),
    ikine6s(T) gives 2.6486 -3.9270 0.0940 2.5326 0.9743 0.3734 and ikine6s(T, 'ru') gives
    qn = 0 0.7854 3.1416 0 0.7854 0 (angles wrapped here). Without a wrist letter that MATLAB
    ikine6s computes the flipped wrist (n4 = -1), so these are configurations luf and ruf;
    roboticstoolbox-python 1.5.0's Puma560().ikine_a(T, 'lun') (its T 0.67183 m higher) gives
    2.64856121 2.35619449 0.09395583 -0.60903322 -0.97434958 -2.76819308."""
    qn = [0, math.pi / 4, math.pi, 0, math.pi / 4, 0]
    v = final(run_text(tmp_path, ikine_diagram(qn, ["luf", "ruf", "lun"])))
    assert np.abs(wrapped(v["qluf"] - [2.6486, -3.9270, 0.0940, 2.5326, 0.9743, 0.3734])).max() < 1e-4
    assert np.abs(wrapped(v["qruf"] - qn)).max() < 1e-9
    assert np.abs(wrapped(v["qlun"] - [2.64856121, 2.35619449, 0.09395583, -0.60903322,
                                       -0.97434958, -2.76819308])).max() < 1e-8


# ---- dynamics terms -----------------------------------------------------------------------------
DYNAMICS = """\
blocksim: 1
name: terms
parameters: {q: [0.3, -0.6, 0.4, 0.8, -0.7, 1.2], qd: [0.5, -1.0, 0.7, 2.0, -1.5, 0.9]}
robots:
  R: {model: MODEL, friction: none}
blocks:
  Q: {type: constant, value: q}
  QD: {type: constant, value: qd}
  C: {type: coriolis, robot: R}
  Jd: {type: jacob_dot, robot: R}
  E: {type: energy, robot: R}
wires: [Q -> C.q, QD -> C.qd, Q -> Jd.q, QD -> Jd.qd, Q -> E.q, QD -> E.qd]
simulation: {stop: 0.01}
record: {C: C.C, Jd: Jd.Jdot_qd, K: E.kinetic}
"""


@pytest.mark.parametrize("model", ["puma560", "stanford"])
def test_coriolis_is_christoffel_and_jacob_dot_the_derivative(tmp_path, model):
    m = blocksim.load(_write(tmp_path, DYNAMICS.replace("MODEL", model)))
    robot = m.resources["robots"]["R"]
    v = final(blocksim.execute(m))
    q = np.array([0.3, -0.6, 0.4, 0.8, -0.7, 1.2])
    qd = np.array([0.5, -1.0, 0.7, 2.0, -1.5, 0.9])
    h = 1e-6
    # the inertia matrix the reference below differentiates, itself from the links' kinetic
    # energy T(x) = x M x / 2 by polarisation: M_ij = T(e_i + e_j) - T(e_i) - T(e_j)
    E = np.eye(6)
    T = [kinetic_energy_of_the_links(robot, q, e) for e in E]
    M = np.array([[T[i] if i == j else kinetic_energy_of_the_links(robot, q, E[i] + E[j])
                   - T[i] - T[j] for j in range(6)] for i in range(6)])
    M[np.diag_indices(6)] *= 2
    assert np.abs(robot.inertia(q) - M).max() < 1e-6 * np.abs(M).max()
    dM = np.stack([(robot.inertia(q + h * e) - robot.inertia(q - h * e)) / (2 * h)
                   for e in np.eye(6)], axis=2)  # dM[i, j, k] = dM_ij / dq_k
    # C_ij = sum_k (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i) qd_k / 2
    C = 0.5 * (np.einsum("ijk,k->ij", dM, qd) + np.einsum("ikj,k->ij", dM, qd)
               - np.einsum("jki,k->ij", dM, qd))
    assert np.abs(v["C"] - C).max() < 1e-6 * max(1, np.abs(C).max())
    Mdot = np.einsum("ijk,k->ij", dM, qd)
    S = Mdot - 2 * v["C"]
    assert np.abs(S + S.T).max() < 1e-6 * max(1, np.abs(C).max())  # skew-symmetric
    Jdot = (robot.jacob0(q + h * qd) - robot.jacob0(q - h * qd)) / (2 * h)
    assert np.abs(v["Jd"] - Jdot @ qd).max() < 1e-8
    assert v["K"] == pytest.approx(kinetic_energy_of_the_links(robot, q, qd), rel=1e-8)


def kinetic_energy_of_the_links(robot, q, qd, h=1e-6):
    """Sum over the links of m v_c.v_c / 2 + w.(R I R^T) w / 2 (v_c the centre of mass's
    velocity, w the angular velocity, both from differences of the link frames along qd),
    plus each rotor's Jm (G qd)^2 / 2: the kinetic energy without the inertia matrix."""
    frames = [robot.fkine_all(q + s * h * qd) for s in (1, 0, -1)]
    total = 0.0
    for i, link in enumerate(robot.links):
        after, here, before = (F[i + 1] for F in frames)
        centre = lambda T: T[:3, :3] @ link.r + T[:3, 3]  # noqa: E731
        v = (centre(after) - centre(before)) / (2 * h)
        W = (after[:3, :3] - before[:3, :3]) / (2 * h) @ here[:3, :3].T  # skew(w)
        w = np.array([W[2, 1], W[0, 2], W[1, 0]])
        R = here[:3, :3]
        total += link.m * v @ v / 2 + w @ R @ link.I @ R.T @ w / 2
        total += link.Jm * (link.G * qd[i]) ** 2 / 2
    return total


def test_frictionless_puma_falling_conserves_energy(tmp_path):
    """demo1 with friction none: no torque, no friction, so kinetic + potential is constant."""
    text = (ROOT / "diagrams" / "demo1.yaml").read_text().replace(
        "record:\n", "record:\n  E: Energy.total\n  K: Energy.kinetic\n").replace(
        "wires:\n", "  Energy: {type: energy, robot: p560}\nwires:\n  - Robot.q -> Energy.q\n"
        "  - Robot.qd -> Energy.qd\n")
    r = blocksim.run(_write(tmp_path, text), plots=False, overrides={
        "robots.p560.friction": "none", "simulation.solver": "dop853", "simulation.stop": 2,
        "simulation.rtol": 1e-11, "simulation.atol": 1e-12})
    assert r["K"].max() > 40  # the arm swings: tens of joules change form
    assert np.abs(r["E"] - r["E"][0]).max() < 1e-8


# ---- trajectories -------------------------------------------------------------------------------
def quintic_blend(q0, v0, q1, v1, T, s):
    """The toolbox's jtraj between (q0, v0, 0) and (q1, v1, 0) over T, at times s in [0, T]:
    the quintic's six coefficients solved from the six end conditions."""
    A = np.array([[0, 0, 0, 0, 0, 1], [T**5, T**4, T**3, T**2, T, 1], [0, 0, 0, 0, 1, 0],
                  [5*T**4, 4*T**3, 3*T**2, 2*T, 1, 0], [0, 0, 0, 2, 0, 0],
                  [20*T**3, 12*T**2, 6*T, 2, 0, 0]])
    coef = np.linalg.solve(A, np.array([q0, q1, v0, v1, np.zeros_like(q0), np.zeros_like(q0)]))
    return np.stack([s**5, s**4, s**3, s**2, s, np.ones_like(s)], 1) @ coef


VIA = np.array([[1, 0.5], [1.5, -1], [0, 0]])
MSTRAJ = """\
blocksim: 1
name: mstraj
blocks:
  M: {type: mstraj, via: "[[1, 0.5], [1.5, -1], [0, 0]]", q0: [0, 0], TIMING}
simulation: {stop: 9, solver: rk45, output_interval: 0.005}
record: {q: M.q, qd: M.qd}
"""


@pytest.mark.parametrize("tacc", [0.0, 0.6])
def test_mstraj_through_via_points_with_the_toolbox_blends(tmp_path, tacc):
    tseg = np.array([2, 3, 2.5])
    r = run_text(tmp_path, MSTRAJ.replace("TIMING", f"tsegment: {tseg.tolist()}, tacc: {tacc}"))
    points = np.vstack([[0, 0], VIA])
    arrive = tacc / 2 + np.concatenate([[0], np.cumsum(tseg)])  # the straight path's corners
    speed = np.diff(points, axis=0) / tseg[:, None]
    # straight parts: the line through the via points at the segment's speed
    for k in range(3):
        on = (r.t >= arrive[k] + tacc / 2 + 1e-9) & (r.t <= arrive[k + 1] - tacc / 2 - 1e-9)
        line = points[k] + np.outer(r.t[on] - arrive[k], speed[k])
        assert on.sum() > 100 and np.abs(r["q"][on] - line).max() < 1e-12
        assert np.abs(r["qd"][on] - speed[k]).max() < 1e-12
    # corners: the toolbox's blend, a jtraj quintic from line to line over tacc, centred on
    # the via point (the start and end corners blend from and to rest)
    velocity = np.vstack([np.zeros(2), speed, np.zeros(2)])
    for k in range(4):
        if tacc == 0:
            break
        s0 = arrive[k] - tacc / 2
        inside = (r.t >= s0) & (r.t <= arrive[k] + tacc / 2)
        start = points[k] - velocity[k] * tacc / 2
        blend = quintic_blend(start, velocity[k], points[k] + velocity[k + 1] * tacc / 2,
                              velocity[k + 1], tacc, r.t[inside] - s0)
        assert inside.sum() > 100 and np.abs(r["q"][inside] - blend).max() < 1e-12
    end = r.t >= arrive[-1] + tacc / 2
    assert np.abs(r["q"][end] - VIA[-1]).max() < 1e-12 and np.all(r["qd"][end] == 0)
    if tacc == 0:  # straight lines pass through the via points at the arrival times
        for k in range(1, 4):
            i = np.argmin(np.abs(r.t - arrive[k]))
            assert np.abs(r["q"][i] - points[k]).max() < 1e-12


def test_mstraj_keeps_to_the_speed_limits(tmp_path):
    qdmax = np.array([0.5, 0.8])
    r = run_text(tmp_path, MSTRAJ.replace("TIMING", "qdmax: [0.5, 0.8], tacc: 0.6"))
    ratio = np.abs(r["qd"]) / qdmax
    assert ratio.max() <= 1 + 1e-12
    # on each segment the slowest joint moves at its limit: |dq| / qdmax (2, 1.875, 3 s here)
    points = np.vstack([[0, 0], VIA])
    tseg = (np.abs(np.diff(points, axis=0)) / qdmax).max(axis=1)
    assert tseg == pytest.approx([2.0, 1.875, 3.0])
    arrive = 0.3 + np.concatenate([[0], np.cumsum(tseg)])
    for k in range(3):
        mid = np.argmin(np.abs(r.t - (arrive[k] + arrive[k + 1]) / 2))
        assert r["qd"][mid] == pytest.approx(np.diff(points, axis=0)[k] / tseg[k], abs=1e-12)
    # the corner's blend passes 3 tacc |dv| / 32 from the via point (the quintic at its centre)
    dv = np.diff(points, axis=0)[1] / tseg[1] - np.diff(points, axis=0)[0] / tseg[0]
    i = np.argmin(np.abs(r.t - arrive[1]))
    assert np.abs(r["q"][i] - VIA[0]) == pytest.approx(3 * 0.6 * np.abs(dv) / 32, abs=1e-9)


CTRAJ = """\
blocksim: 1
name: ctraj
robots:
  p560: {model: puma560}
blocks:
  C: {type: ctraj, T0: trotx(0.2), T1: "transl(1, 4, 5) @ troty(0.3)", tf: 2}
  Q: {type: constant, value: qn}
  F: {type: fkine, robot: p560}
  C2: {type: ctraj, T1: "transl(0.1, -0.2, 0.3) @ trotz(2.5) @ trotx(1)", tf: 1.5}
wires: [Q -> F, F -> C2.T0]
simulation: {stop: 2.5, solver: rk45, output_interval: 0.001}
record: {T: C.T, v: C.v, T2: C2.T, v2: C2.v}
"""


def test_ctraj_midpoint_published_and_velocity_the_derivative(tmp_path):
    r = run_text(tmp_path, CTRAJ)
    # release 7 manual, trinterp example: half way from rotx(.2) to transl(1,4,5)*roty(0.3);
    # ctraj's s(1/2) = 10/8 - 15/16 + 6/32 = 1/2
    half = np.array([[0.9887, 0.0075, 0.1494, 0.5], [0.0075, 0.9950, -0.0998, 2.0],
                     [-0.1494, 0.0998, 0.9837, 2.5], [0, 0, 0, 1]])
    assert np.abs(r["T"][np.argmin(np.abs(r.t - 1.0))] - half).max() < 6e-5
    h = 0.001
    for T, v in ((r["T"], r["v"]), (r["T2"], r["v2"])):
        dp = (T[2:, :3, 3] - T[:-2, :3, 3]) / (2 * h)
        W = (T[2:, :3, :3] - T[:-2, :3, :3]) / (2 * h) @ np.transpose(T[1:-1, :3, :3], (0, 2, 1))
        fd = np.hstack([dp, np.stack([W[:, 2, 1], W[:, 0, 2], W[:, 1, 0]], 1)])
        assert np.abs(fd - v[1:-1]).max() < 2e-5 * np.abs(v).max()  # O(h^2) differences
        R = T[:, :3, :3]
        assert np.abs(R @ np.transpose(R, (0, 2, 1)) - np.eye(3)).max() < 1e-14


# ---- results and the Python API -----------------------------------------------------------------
def test_refined_rows_follow_the_solution_and_leave_the_steps_alone():
    model = blocksim.load(str(ROOT / "diagrams" / "msd.yaml"), overrides={
        "simulation.stop": 10, "simulation.rtol": 1e-9, "simulation.atol": 1e-12})
    plain = blocksim.execute(model)
    model.set("simulation.refine", 7)
    fine = blocksim.execute(model)
    assert fine.meta["solver"]["nsteps"] == plain.meta["solver"]["nsteps"]
    assert len(fine.t) == 7 * (len(plain.t) - 1) + 1
    steps = np.searchsorted(fine.t, plain.t)
    assert np.array_equal(fine.t[steps], plain.t) and np.array_equal(fine["x"][steps], plain["x"])
    # m x'' + c x' + k x = step(t - 1), m 1, c 0.4, k 4 (the diagram): x = C A^-1 (e^(A tau) - I) B
    A, B = np.array([[0, 1], [-4, -0.4]]), np.array([0, 1.0])
    x = [0.0 if t < 1 else np.linalg.solve(A, (expm(A * (t - 1)) - np.eye(2)) @ B)[0]
         for t in fine.t]
    assert np.abs(fine["x"] - x).max() < 1e-8


def test_model_set_equals_a_fresh_load_with_the_override():
    path = str(ROOT / "diagrams" / "demo3.yaml")
    overrides = {"simulation.stop": 1}
    model = blocksim.load(path, overrides=overrides)
    for key, value in [("robots.p560p.perturb", 0.2), ("robots.p560p.seed", 7),
                       ("parameters.tf", 4), ("blocks.Kp.K", "2*50"),
                       ("robots.p560.friction", "none"),
                       ("parameters.qf", "[0.1, 0.2, 0.3, 0.4, 0.5, 0.6]"),
                       ("robots.p560p.payload", {"mass": 2.0, "com": [0, 0, 0.1]}),
                       ("simulation.solver", "rk4"), ("record.extra", "Sum2.y")]:
        model.set(key, value)
        overrides[key] = value
        again, fresh = blocksim.execute(model), blocksim.run(path, overrides=overrides)
        assert again.keys() == fresh.keys(), key
        for name in again.keys():
            assert np.array_equal(again[name], fresh[name]), (key, name)
