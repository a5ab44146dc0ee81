"""Coulomb friction that sticks (hybrid.md): the robot block's `coulomb: events`.

Expected values are derived here by hand for a single prismatic joint (a mass m on a rail,
viscous b and Coulomb c friction), and from physical invariants for the Puma.
"""
import math
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.errors import SimulationError

ROOT = Path(__file__).resolve().parents[2]
M, B, C = 2.0, 0.5, 1.5   # kg, N·s/m, N

SLIDER = f"""
blocksim: 1
name: slider
robots:
  rail:
    links: [{{alpha: 0, a: 0, theta: 0, d: 0, type: prismatic, m: {M}, r: [0, 0, 0],
              I: [0, 0, 0, 0, 0, 0], Jm: 0, G: 1, B: {B}, Tc: [{C}, -{C}]}}]
    gravity: [0, 0, 0]
blocks:
  Force: FORCE
  Cart: {{type: robot, robot: rail, qd0: V0}}
wires: [Force -> Cart.tau]
simulation: {{stop: STOP, rtol: 1e-10, atol: 1e-12, event_tol: 1e-13}}
record: {{q: Cart.q, qd: Cart.qd}}
"""


def slider(tmp_path, force, v0, stop, **overrides):
    text = SLIDER.replace("FORCE", force).replace("V0", str(v0)).replace("STOP", str(stop))
    path = tmp_path / "slider.yaml"
    path.write_text(text)
    return blocksim.run(str(path), overrides=overrides or None)


def test_a_sliding_joint_stops_and_sticks_where_the_hand_solution_says(tmp_path):
    """m dv/dt = -b v - c while v > 0: v(t) = (v0 + c/b) e^(-bt/m) - c/b, which reaches 0 at
    t_s = (m/b) ln(1 + b v0/c); integrating, q(t_s) = (m/b) v0 - (c/b) t_s. With no force
    the joint then stays exactly there, qd exactly 0."""
    v0 = 3.0
    t_s = M / B * math.log(1 + B * v0 / C)
    q_s = M / B * v0 - C / B * t_s
    r = slider(tmp_path, "{type: constant, value: [0]}", v0, 2 * t_s)
    np.testing.assert_allclose(r.events_t, [t_s], rtol=0, atol=1e-9)
    moving = r.t < t_s
    t = r.t[moving]
    np.testing.assert_allclose(r["qd"][moving, 0], (v0 + C / B) * np.exp(-B * t / M) - C / B,
                               atol=1e-9)
    after = r.t >= r.events_t[0]
    assert np.all(r["qd"][after] == 0.0)
    np.testing.assert_allclose(r["q"][after, 0], q_s, atol=1e-9)
    assert np.all(r["q"][after, 0] == r["q"][-1, 0])


def test_a_stuck_joint_breaks_away_when_the_force_reaches_the_coulomb_level(tmp_path):
    """From rest under F = k t: stuck (qd = 0 exactly) while k t < c, so until t_b = c/k;
    then m dv/dt = k t - c - b v, i.e. with s = t - t_b, v(s) = (k/b)(s - (m/b)(1 - e^(-bs/m)))."""
    k = 0.75
    t_b = C / k
    r = slider(tmp_path, f"{{type: ramp, slope: [{k}]}}", 0.0, t_b + 3)
    np.testing.assert_allclose(r.events_t, [t_b], rtol=0, atol=1e-9)
    stuck = r.t <= t_b
    assert np.all(r["qd"][stuck] == 0.0) and np.all(r["q"][stuck] == 0.0)
    s = r.t[~stuck] - t_b
    np.testing.assert_allclose(r["qd"][~stuck, 0], k / B * (s - M / B * (1 - np.exp(-B * s / M))),
                               atol=1e-9)


def test_a_model_simulated_twice_starts_from_its_initial_modes(tmp_path):
    """Sliding at v0 = 3 under F = 1: m qdd(0) = F - b v0 - c, so qdd(0) = (1 - 1.5 - 1.5)/2
    = -1 on every run of the same compiled model (the second run used to start with the
    stuck joint of the first run's end: qdd(0) = 0); both runs are the same."""
    text = SLIDER.replace("FORCE", "{type: constant, value: [1.0]}").replace("V0", "3")
    path = tmp_path / "slider.yaml"
    path.write_text(text.replace("STOP", "10").replace("record: {", "record: {qdd: Cart.qdd, "))
    model = blocksim.load(str(path))
    first, second = blocksim.run(model), blocksim.run(model)
    assert first["qd"][-1, 0] == 0.0  # the first run ends stuck
    assert first["qdd"][0, 0] == second["qdd"][0, 0] == pytest.approx((1 - B * 3 - C) / M)
    for name in ("q", "qd", "qdd"):
        np.testing.assert_array_equal(first[name], second[name])


def test_a_force_inside_the_band_never_moves_the_joint(tmp_path):
    r = slider(tmp_path, f"{{type: constant, value: [{0.99 * C}]}}", 0.0, 5)
    assert np.all(r["q"] == 0.0) and np.all(r["qd"] == 0.0) and len(r.events_t) == 0


def puma_potential(robot, q):
    """sum of m_j g z_j over the links' centres of mass in the world frame (frame j + 1 of
    fkine_all, frame 0 being the base), with the upward acceleration g = 9.81 of robots.md."""
    frames = robot.fkine_all(q)
    return sum(link.m * robot.gravity[2] * (frames[:, j + 1] @ np.append(link.r, 1.0))[:, 2]
               for j, link in enumerate(robot.links))


def puma_energy(robot, q, qd):
    """Kinetic 1/2 qd'M(q)qd plus potential."""
    kinetic = 0.5 * np.einsum("ki,kij,kj->k", qd, robot.inertia(q), qd)
    return kinetic + puma_potential(robot, q)


def test_the_potential_energy_reference_is_the_gravity_load():
    """The reference itself, checked: dV/dq = g(q) = gravload(q) (central differences)."""
    from blocks.robot import load_robot

    robot = load_robot("puma560")
    q = np.array([0.1, -0.4, 0.3, 0.2, 0.5, -0.1])
    grad = [(puma_potential(robot, (q + 1e-6 * e)[None]) - puma_potential(robot, (q - 1e-6 * e)[None]))[0]
            / 2e-6 for e in np.eye(6)]
    np.testing.assert_allclose(grad, robot.gravload(q), atol=1e-6)


def test_demo1_with_full_friction_comes_to_rest_exactly_and_never_gains_energy():
    """The Puma falls from qz with zero torque and full friction: joints stick one after
    another; the run ends with every joint at rest exactly (qd == 0), having taken a few
    hundred steps at most, and the mechanical energy never rises (friction only dissipates;
    the tolerance covers the solver's error)."""
    from blocks.robot import load_robot

    r = blocksim.run(str(ROOT / "diagrams" / "demo1.yaml"),
                     overrides={"robots.p560.friction": "full", "simulation.rtol": 1e-8,
                                "simulation.atol": 1e-10})
    assert np.all(r["qd"][-1] == 0.0)
    assert r.meta["events"]["total"] >= 2 and r.meta["solver"]["nsteps"] < 3000
    energy = puma_energy(load_robot("puma560"), r["q"], r["qd"])
    assert np.all(np.diff(energy) <= 1e-7 * abs(energy).max())
    assert energy[-1] < energy[0] - 1.0  # it fell and dissipated
    # joints that are at rest stay exactly where they stuck
    last = r.events_t[-1]
    after = r.t > last
    assert np.all(r["q"][after] == r["q"][-1])


def test_band_remains_available():
    """coulomb: band is version 1's regularisation: no events, the joints creep."""
    r = blocksim.run(str(ROOT / "diagrams" / "demo1.yaml"),
                     overrides={"robots.p560.friction": "full", "blocks.Robot.coulomb": "band",
                                "blocks.Robot.coulomb_band": 1e-2, "simulation.stop": 3})
    assert r.meta["events"] == {"total": 0, "per_block": {}} and r.meta["event_blocks"] == []
    assert np.abs(r["qd"][-1]).max() > 0


def test_a_joint_without_coulomb_friction_moves_freely_beside_a_sticky_one(tmp_path):
    """Two-link arm, Coulomb friction on joint 2 only, constant torque -1 on joint 1 from
    rest (reported by the robot-core review: joint 1's velocity was snapped to 0 at every
    step). Gravity acts along z, normal to the arm's plane: joint 1 accelerates backwards
    as the free arm does; joint 2 stays stuck while its holding torque is inside the band."""
    text = """
blocksim: 1
name: two
robots:
  arm: {links: [{a: 1, m: 1}, {a: 1, m: 1, Tc: 0.5}]}
blocks:
  Torque: {type: constant, value: [-1, 0]}
  Arm: {type: robot, robot: arm}
wires: [Torque -> Arm.tau]
simulation: {stop: 1, rtol: 1e-10, atol: 1e-12}
record: {q: Arm.q, qd: Arm.qd}
"""
    path = tmp_path / "two.yaml"
    path.write_text(text)
    r = blocksim.run(str(path))
    from blocks.robot.models import robot_from_dict

    robot = robot_from_dict({"links": [{"a": 1, "m": 1}, {"a": 1, "m": 1, "Tc": 0.5}]})
    # while joint 2 is held, joint 1 turns the rigid arm: inertia about joint 1 is
    # M11(q2 = 0) = 5 (two unit masses at 1 m and 2 m), so q1 = -t^2/(2*5) ...
    M11 = robot.inertia([0.0, 0.0])[0, 0]
    assert M11 == pytest.approx(5.0)
    held = r["qd"][:, 1] == 0.0
    assert held.all(), "the holding torque stays inside the band"
    np.testing.assert_allclose(r["q"][:, 0], -r.t ** 2 / (2 * M11), atol=1e-9)


def test_a_singular_inertia_of_the_free_joints_is_a_simulation_error(tmp_path):
    """A massless, inertia-free distal link has M22 = 0 (closed form: nothing moves when
    joint 2 turns), so with joint 1 stuck the free joints' inertia M_FF = [M22] is singular:
    the same SimulationError (block, port qdd, time) as the unconstrained forward dynamics
    gives, not numpy's bare LinAlgError."""
    from blocks.robot.models import robot_from_dict

    links = [{"a": 1, "m": 1, "Tc": 0.5}, {"a": 1, "m": 0}]
    assert robot_from_dict({"links": links}).inertia([0.0, 0.0])[1, 1] == 0.0
    path = tmp_path / "singular.yaml"
    path.write_text("""
blocksim: 1
name: singular
robots:
  arm: {links: [{a: 1, m: 1, Tc: 0.5}, {a: 1, m: 0}]}
blocks:
  Torque: {type: constant, value: [0, 0]}
  Arm: {type: robot, robot: arm}
wires: [Torque -> Arm.tau]
simulation: {stop: 1}
""")
    with pytest.raises(SimulationError, match="forward dynamics failed: the inertia matrix of "
                                              "the joints that are not stuck is singular") as info:
        blocksim.run(str(path))
    assert (info.value.block, info.value.port, info.value.time) == ("Arm", "qdd", 0.0)


RAILS = """
blocksim: 1
name: rails
robots:
  rails:
    links: [{alpha: pi/2, type: prismatic, m: 0, B: 0.5, Tc: [1.5, -1.5]},
            {alpha: 0, type: prismatic, m: 2, B: 0.5, Tc: TC2}]
    gravity: [0, 0, 0]
blocks:
  Force: FORCE
  Cart: {type: robot, robot: rails, qd0: V0}
wires: [Force -> Cart.tau]
simulation: {stop: STOP, rtol: 1e-10, atol: 1e-12, event_tol: 1e-13}
record: {q: Cart.q, qd: Cart.qd}
"""


def rails(tmp_path, force, v0, stop, tc2="[1.5, -1.5]"):
    """Two prismatic joints on orthogonal axes (alpha = pi/2), the first link massless: both
    joints move the 2 kg second link, so M = diag(2, 2) and the joints do not interact
    (b = 0.5 N·s/m each)."""
    text = RAILS
    for key, value in (("FORCE", force), ("V0", v0), ("STOP", stop), ("TC2", tc2)):
        text = text.replace(key, str(value))
    path = tmp_path / "rails.yaml"
    path.write_text(text)
    return blocksim.run(str(path))


def test_two_joints_stopping_at_the_same_instant_both_stick(tmp_path):
    """Equal joints sliding at v0 = 3 with no force stop together at t_s = (m/b) ln(1 + b v0/c)
    (the slider's hand solution): one event, both at rest exactly from then on, at q(t_s)."""
    m, b, c, v0 = 2.0, 0.5, 1.5, 3.0
    t_s = m / b * math.log(1 + b * v0 / c)
    r = rails(tmp_path, "{type: constant, value: [0, 0]}", [v0, v0], 2 * t_s)
    np.testing.assert_allclose(r.events_t, [t_s], rtol=0, atol=1e-9)
    after = r.t >= t_s
    assert np.all(r["qd"][after] == 0.0)
    np.testing.assert_allclose(r["q"][-1], [m / b * v0 - c / b * t_s] * 2, atol=1e-9)


def test_break_away_backwards_at_the_lower_coulomb_level(tmp_path):
    """From rest under F = (k t, -k t) with Coulomb levels [1.5, -1.5] and [1.5, -0.5]: joint 2
    breaks away backwards when k t reaches 0.5 (its own Tc-), joint 1 forwards at 1.5; each
    then follows m dv/dt = ±(k s) - b v, v = ±(k/b)(s - (m/b)(1 - e^(-bs/m))), s the time
    since its break-away."""
    m, b, k = 2.0, 0.5, 0.75
    t1, t2 = 1.5 / k, 0.5 / k
    r = rails(tmp_path, f"{{type: ramp, slope: [{k}, {-k}]}}", [0, 0], t1 + 2, "[1.5, -0.5]")
    np.testing.assert_allclose(r.events_t, [t2, t1], rtol=0, atol=1e-9)
    for j, (t_b, sign) in enumerate(((t1, 1.0), (t2, -1.0))):
        assert np.all(r["qd"][r.t <= t_b, j] == 0.0)
        s = r.t[r.t > t_b] - t_b
        np.testing.assert_allclose(r["qd"][r.t > t_b, j],
                                   sign * k / b * (s - m / b * (1 - np.exp(-b * s / m))), atol=1e-9)
