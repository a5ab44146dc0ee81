"""The classic demos (diagrams/demo1..demo5.yaml) against physics and closed forms.

Each test names the independent truth it checks: energy balance, closed-loop error
dynamics derived by hand, the first-order loop's steady-state radius, sample-time structure.
"""
import math
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocks.robot import load_robot

DIAGRAMS = Path(__file__).resolve().parents[2] / "diagrams"
TIGHT = {"simulation.rtol": 1e-9, "simulation.atol": 1e-11}


def run(name, **overrides):
    return blocksim.run(DIAGRAMS / f"{name}.yaml", overrides=overrides)


def energy(robot, q, qd):
    """Total energy: kinetic 1/2 qd' M(q) qd (M includes the motor inertia G^2 Jm) plus
    potential sum_j m_j g . c_j, with c_j the centre of mass of link j in the world, taken
    from the link frames (fkine_all) and the COM offsets r_j -- not from rne."""
    g = np.asarray(robot.gravity)  # the base accelerates upward by g: gravity acts along -g
    ke = np.array([0.5 * v @ robot.inertia(x) @ v for x, v in zip(q, qd)])
    pe = np.zeros(len(q))
    for k, x in enumerate(q):
        frames = robot.fkine_all(x)
        for j, link in enumerate(robot.links):
            c = frames[j + 1] @ np.append(link.r, 1.0)
            pe[k] += link.m * g @ c[:3]
    return ke + pe


def test_demo1_energy_never_increases_with_viscous_friction():
    r = run("demo1", **TIGHT)
    robot = load_robot("puma560").configure(friction="viscous")
    E = energy(robot, r["q"], r["qd"])
    # viscous friction dissipates: dE/dt = -sum F_j(qd) qd_j <= 0
    assert np.all(np.diff(E) <= 1e-7 * max(1.0, np.abs(E).max()))
    assert E[-1] < E[0] - 1.0  # and it does dissipate (the arm swings down)


def test_demo1_energy_conserved_without_friction():
    r = run("demo1", **TIGHT, **{"robots.p560.friction": "none", "simulation.stop": 3})
    robot = load_robot("puma560").configure(friction="none")
    E = energy(robot, r["q"], r["qd"])
    assert np.ptp(E) < 1e-6 * (1 + np.abs(E).max())


def test_demo1_same_trajectory_from_three_solvers():
    kw = {"simulation.stop": 2, "simulation.output_interval": 0.1}
    ref = run("demo1", **kw, **{"simulation.rtol": 1e-11, "simulation.atol": 1e-13})
    dop = run("demo1", **kw, **{"simulation.solver": "dop853", **TIGHT})
    rk4 = run("demo1", **kw, **{"simulation.solver": "rk4", "simulation.step": 1e-3})
    np.testing.assert_allclose(dop["q"], ref["q"], atol=1e-7)
    # rk4 at h = 1e-3: global error O(h^4) times the motion's derivatives, well below 1e-6
    np.testing.assert_allclose(rk4["q"], ref["q"], atol=1e-6)


def test_demo1_runs_with_full_coulomb_friction():
    r = run("demo1", **{"robots.p560.friction": "full", "simulation.stop": 2})
    assert r.complete and r.t[-1] == 2.0 and np.all(np.isfinite(r["q"]))


def test_demo2_still_before_step_and_settles_at_the_motor_position():
    r = run("demo2", **{"simulation.rtol": 1e-6, "simulation.atol": 1e-9})
    before = r.t < 1.0
    assert before.sum() >= 2
    np.testing.assert_array_equal(r["q"][before], 0.0)  # no input before the step: q stays 0
    # PD coupling K (m - q) + B d/dt(m - q) drives q to the motor position m = [1, 0]
    np.testing.assert_allclose(r["q"][-1], [1.0, 0.0], atol=1e-3)
    np.testing.assert_allclose(r["m"][-1], [1.0, 0.0])


def test_demo3_exact_model_tracks_at_solver_noise_level():
    """With the exact model (perturb 0), rne(q, qd, qdd_d + Kp e + Kd edot) cancels the arm's
    dynamics exactly, so M(q) qdd = M(q)(qdd_d + Kp e + Kd edot): the error obeys
    e'' + Kd e' + Kp e = 0 with e(0) = e'(0) = 0 (the trajectory starts at q0 = qz at rest),
    whose solution is e = 0. Any error left is integration error, bounded by the tolerance."""
    r = run("demo3", **TIGHT, **{"robots.p560p.perturb": 0})
    assert np.abs(r["e"]).max() < 1e-6


def test_demo3_perturbed_model_error_stays_small():
    """With 10 % mass/inertia errors the computed torque is off by about 10 % of the gravity
    and inertial torques. Joint 2 carries the largest: gravity about 37 N m at qz (robots.md),
    so |dtau| is a few N m; the PD loop (Kp = 100 on the acceleration, M22 ~ 4.5 kg m^2)
    turns a torque error dtau into a steady error of about dtau / (M22 Kp) ~ 0.01 rad. So the
    error must stay at the millirad scale: below 1e-2 rad, and above solver noise."""
    r = run("demo3")
    emax = np.abs(r["e"]).max()
    assert 1e-5 < emax < 1e-2
    np.testing.assert_allclose(r["q"][-1], [math.pi / 4, math.pi / 2, -math.pi / 2, 0, 0, 0], atol=1e-2)


def test_demo4_zoh_changes_only_at_its_sample_hits():
    r = run("demo4")
    changed = np.flatnonzero(np.any(np.diff(r["tau_ff"], axis=0) != 0, axis=1)) + 1
    times = r.t[changed]
    ticks = np.round(times / 0.1)
    np.testing.assert_allclose(times, ticks * 0.1, atol=1e-12)
    # and it tracks well although the feedforward is updated only every 0.1 s
    err = np.abs(r["qdes"] - r["q"]).max(axis=0)
    assert err[1] < 2e-2 and np.all(err <= err[1] + 1e-12)


def test_demo5_starts_on_the_circle_and_settles_on_the_lagging_circle():
    r = run("demo5", **{"simulation.rtol": 1e-8, "simulation.atol": 1e-10})
    robot = load_robot("puma560")
    T0 = robot.fkine(r["q"][0])
    np.testing.assert_allclose(T0[:3, 3], [0.55, 0, 0], atol=2e-4)  # x0 is given to 4 decimals
    np.testing.assert_allclose(T0[:3, :3], np.eye(3), atol=2e-4)
    # First-order loop p' = 0.6 (pd - p) driven by a circle of radius 0.05 at 1 rad/s: the
    # steady-state response is a circle of radius 0.05 * 0.6 / sqrt(0.6^2 + 1^2). The
    # transient from the start decays as e^{-0.6 t}: by t = 8 it is below 0.03 e^{-4.8}
    # ~ 2.5e-4 m, which sets the tolerance.
    late = r.t >= 8
    radius = np.hypot(r["p"][late, 0] - 0.5, r["p"][late, 1])
    np.testing.assert_allclose(radius, 0.05 * 0.6 / math.hypot(0.6, 1.0), atol=5e-4)


@pytest.mark.parametrize("name", sorted(p.stem for p in DIAGRAMS.glob("*.yaml")))
def test_every_diagram_checks_and_runs(name, tmp_path):
    from blocksim.cli import main
    path = DIAGRAMS / f"{name}.yaml"
    assert main(["check", str(path)]) == 0
    model = blocksim.load(path, {"simulation.stop": 0.5})
    result = blocksim.execute(model)
    assert result.complete and result.t[-1] == pytest.approx(min(0.5, model.settings.stop))


def test_demo6_visual_servo_converges_with_all_points_in_view(tmp_path):
    """demos.md: the camera (the Puma's tool frame) starts at (0.5, 0, 0) looking along world
    +x; IBVS with gain 0.1 and an assumed depth of 2 m (the true one is about 1.5 m) makes
    the feature error fall monotonically, by more than half over 20 s, without reaching 0."""
    import json
    r = blocksim.run(DIAGRAMS / "demo6.yaml", out=tmp_path)
    T0 = load_robot("puma560").fkine(r["q"][0])
    np.testing.assert_allclose(T0[:3, 3], [0.5, 0, 0], atol=1e-3)
    np.testing.assert_allclose(T0[:3, 2], [1, 0, 0], atol=1e-3)  # optical axis = camera z
    norm = np.linalg.norm(r["e"], axis=1)
    assert np.all(np.diff(norm) <= 1e-9 * norm[0])
    assert norm[-1] < 0.5 * norm[0] and norm[-1] > 1.0
    # e is desired - uv, flattened row by row
    np.testing.assert_allclose(r["e"][-1], (np.array([[256, 456], [456, 456], [456, 256], [256, 256]])
                                            - r["uv"][-1]).ravel())
    report = json.loads((tmp_path / "meta.json").read_text())["blocks"]["camera"]
    assert report["all_visible"] is True
    assert np.all((r["uv"] >= 0) & (r["uv"] <= 512))
