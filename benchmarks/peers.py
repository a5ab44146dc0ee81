"""blocksim against its peers on the same work, in one run, as ratios.

    pip install -e ".[fast,bench]"      # bdsim, roboticstoolbox-python, pinocchio
    python benchmarks/peers.py [--repeat N]

Rows (medians of --repeat runs; a peer that does not import is reported and skipped):
- engine: a chain integrator -> N gains -> integrator (N = 10, 100), wall time of the whole
  integration divided by the derivative evaluations, blocksim against bdsim; and blocksim's
  derivative function alone, per block.
- falling Puma: the demo1 structure (zero torque, friction off, motor inertia kept), 5 s,
  RK45 rtol 1e-6 atol 1e-8: blocksim (compiled once, then simulated), bdsim (rtb's FDyn
  block), and a bare scipy solve_ivp loop around pinocchio's aba (with the motor inertia as
  armature), which is the floor any Python framework can approach.
- computed torque: the demo3 structure (jtraj, PD on the error, rne of the exact model,
  forward dynamics), 10 s, the same tolerances, for the same three.
- whole process: `blocksim run diagrams/demo1.yaml --no-plots --quiet`, imports included.
The bdsim constructor follows the peer set-up notes: BDSim(toolboxes=False, graphics=False,
animation=False, progress=False) with the robot blocks created directly from
roboticstoolbox.blocks. The pinocchio model is built from the same DH table and checked
against blocksim's rne and inertia before anything is timed.
"""
import argparse
import contextlib
import io
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import blocksim  # noqa: E402
from blocks.robot import load_robot  # noqa: E402
from engine import chain  # noqa: E402

QF = np.array([np.pi / 4, np.pi / 2, -np.pi / 2, 0, 0, 0])
TOL = {"simulation.rtol": 1e-6, "simulation.atol": 1e-8}


def median_time(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


# ---------------------------------------------------------------- blocksim
def blocksim_model(path, overrides):
    return blocksim.load(path, overrides)


def blocksim_run(model):
    return blocksim.execute(model)


# ---------------------------------------------------------------- bdsim
def bdsim_sim():
    import bdsim
    return bdsim.BDSim(toolboxes=False, graphics=False, animation=False, progress=False)


def bdsim_quiet_run(sim, bd, T, rtol=1e-6, atol=1e-8, **kw):
    with contextlib.redirect_stdout(io.StringIO()):
        return sim.run(bd, T=T, solver="RK45", solver_args={"rtol": rtol, "atol": atol}, **kw)


def bdsim_chain(n):
    sim = bdsim_sim()
    bd = sim.blockdiagram()
    first = bd.INTEGRATOR(x0=1.0)
    prev = first
    for k in range(n):
        g = bd.GAIN(-1.0 if k == 0 else 1.0)
        bd.connect(prev, g)
        prev = g
    bd.connect(prev, first)
    with contextlib.redirect_stdout(io.StringIO()):
        bd.compile(report=False)
    return sim, bd


def rtb_puma():
    import roboticstoolbox as rtb
    return rtb.models.DH.Puma560().nofriction(coulomb=True, viscous=True)


def bdsim_falling(puma):
    from roboticstoolbox.blocks import FDyn
    sim = bdsim_sim()
    bd = sim.blockdiagram()
    tau = bd.CONSTANT(np.zeros(6))
    robot = FDyn(puma, q0=np.zeros(6), bd=bd)
    bd.connect(tau, robot)
    null = bd.NULL(nin=3)
    for i in range(3):
        bd.connect(robot[i], null[i])
    with contextlib.redirect_stdout(io.StringIO()):
        bd.compile(report=False)
    return sim, bd


def bdsim_computed_torque(puma):
    from roboticstoolbox.blocks import FDyn, IDyn, JTraj
    sim = bdsim_sim()
    bd = sim.blockdiagram()
    jt = JTraj(q0=np.zeros(6), qf=QF, T=10, bd=bd)
    robot = FDyn(puma, q0=np.zeros(6), bd=bd)
    rne = IDyn(puma, bd=bd)
    e = bd.SUM("+-")
    ed = bd.SUM("+-")
    kp = bd.GAIN(100.0)
    kd = bd.GAIN(20.0)
    acc = bd.SUM("+++")
    bd.connect(jt[0], e[0]); bd.connect(robot[0], e[1])
    bd.connect(jt[1], ed[0]); bd.connect(robot[1], ed[1])
    bd.connect(e, kp); bd.connect(ed, kd)
    bd.connect(jt[2], acc[0]); bd.connect(kp, acc[1]); bd.connect(kd, acc[2])
    bd.connect(robot[0], rne[0]); bd.connect(robot[1], rne[1]); bd.connect(acc, rne[2])
    bd.connect(rne, robot)
    null = bd.NULL()
    bd.connect(robot[2], null)
    with contextlib.redirect_stdout(io.StringIO()):
        bd.compile(report=False)
    return sim, bd


# ---------------------------------------------------------------- scipy + pinocchio
def pinocchio_puma():
    """pinocchio model of blocksim's Puma (same DH table), motor inertia G^2 Jm as armature
    (which rnea and aba include); checked against blocksim (friction off) before use."""
    from robot import pinocchio_model
    robot = load_robot("puma560").configure(friction="none")
    pin, model, _ = pinocchio_model(robot)
    model.armature = np.asarray(robot.G) ** 2 * np.asarray(robot.Jm)
    data = model.createData()
    rng = np.random.default_rng(1)
    q, qd, qdd = rng.uniform(-1, 1, (3, 6))
    err = max(np.abs(pin.rnea(model, data, q, qd, qdd) - robot.rne(q, qd, qdd)).max(),
              np.abs(pin.aba(model, data, q, qd, robot.rne(q, qd, qdd)) - qdd).max())
    if err > 1e-9:
        raise RuntimeError(f"pinocchio model disagrees with blocksim by {err:.2e}")
    return pin, model, data


def scipy_falling(pin, model, data):
    from scipy.integrate import solve_ivp
    zero = np.zeros(6)

    def f(t, y):
        return np.concatenate([y[6:], pin.aba(model, data, y[:6], y[6:], zero)])

    return solve_ivp(f, (0, 5), np.zeros(12), method="RK45", rtol=1e-6, atol=1e-8)


def scipy_computed_torque(pin, model, data):
    from scipy.integrate import solve_ivp
    from blocks.robot import QuinticTrajectory
    traj = QuinticTrajectory(np.zeros(6), QF, 10.0)

    def f(t, y):
        q, qd = y[:6], y[6:]
        qdes, qddes, qdddes = traj.at(t)
        a = qdddes + 100 * (qdes - q) + 20 * (qddes - qd)
        tau = pin.rnea(model, data, q, qd, a)
        return np.concatenate([qd, pin.aba(model, data, q, qd, tau)])

    return solve_ivp(f, (0, 10), np.zeros(12), method="RK45", rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------- report
class Table:
    def __init__(self):
        self.rows = []

    def add(self, what, who, value, unit, base=None):
        self.rows.append((what, who, value, unit, base))

    def show(self):
        print(f"{'benchmark':<34} {'who':<24} {'value':>10} {'unit':<10} {'ratio':>8}")
        for what, who, value, unit, base in self.rows:
            ratio = f"{value / base:8.2f}" if base else ""
            print(f"{what:<34} {who:<24} {value:>10.3g} {unit:<10} {ratio}")


def optional(label, fn):
    try:
        return fn()
    except ImportError as e:
        print(f"({label} not available: {e}; install the bench extra)")
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rep = args.repeat
    table = Table()

    # engine chains
    with tempfile.TemporaryDirectory() as tmp:
        for n in (10, 100):
            path = Path(tmp) / f"chain{n}.yaml"
            path.write_text(chain(n).replace("simulation: {stop: 1}",
                                             "simulation: {stop: 5, rtol: 1e-6, atol: 1e-8}"))
            model = blocksim.load(path)
            res = blocksim.execute(model)
            wall = median_time(lambda: blocksim.execute(model), rep)
            ours = wall / res.meta["solver"]["nfev"] * 1e6
            table.add(f"chain of {n} gains, per evaluation", "blocksim", ours, "µs")
            built = optional("bdsim", lambda n=n: bdsim_chain(n))
            if built:
                sim, bd = built
                stats = [bdsim_quiet_run(sim, bd, 5)[".stats"] for _ in range(max(1, rep // 2))]
                theirs = statistics.median(s.integrator_wall_time / s.ydot_calls for s in stats) * 1e6
                table.add(f"chain of {n} gains, per evaluation", "bdsim", theirs, "µs", ours)

    # falling Puma
    demo1 = ROOT / "diagrams" / "demo1.yaml"
    model = blocksim_model(demo1, {**TOL, "simulation.stop": 5, "robots.p560.friction": "none"})
    blocksim.execute(model)  # warm (kernels loaded)
    ours = median_time(lambda: blocksim.execute(model), rep)
    table.add("falling Puma 5 s (demo1)", "blocksim", ours * 1e3, "ms")
    puma = optional("roboticstoolbox", rtb_puma)
    if puma is not None:
        sim, bd = bdsim_falling(puma)
        t = median_time(lambda: bdsim_quiet_run(sim, bd, 5), max(1, rep // 2))
        table.add("falling Puma 5 s (demo1)", "bdsim + rtb", t * 1e3, "ms", ours * 1e3)
    pin = optional("pinocchio", pinocchio_puma)
    if pin is not None:
        t = median_time(lambda: scipy_falling(*pin), rep)
        table.add("falling Puma 5 s (demo1)", "scipy + pinocchio aba", t * 1e3, "ms", ours * 1e3)

    # computed torque
    demo3 = ROOT / "diagrams" / "demo3.yaml"
    model = blocksim_model(demo3, {**TOL, "robots.p560p.perturb": 0, "robots.p560.friction": "none",
                                   "robots.p560p.friction": "none"})
    blocksim.execute(model)
    ours = median_time(lambda: blocksim.execute(model), rep)
    table.add("computed torque 10 s (demo3)", "blocksim", ours * 1e3, "ms")
    if puma is not None:
        sim, bd = bdsim_computed_torque(puma)
        t = median_time(lambda: bdsim_quiet_run(sim, bd, 10), max(1, rep // 2))
        table.add("computed torque 10 s (demo3)", "bdsim + rtb", t * 1e3, "ms", ours * 1e3)
    if pin is not None:
        t = median_time(lambda: scipy_computed_torque(*pin), rep)
        table.add("computed torque 10 s (demo3)", "scipy + pinocchio", t * 1e3, "ms", ours * 1e3)

    # whole process
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "blocksim", "run", str(demo1), "--no-plots", "--quiet",
               "--out", tmp]
        subprocess.run(cmd, check=True)  # warm the kernel cache
        t = median_time(lambda: subprocess.run(cmd, check=True), rep)
    table.add("blocksim run demo1 (process)", "blocksim", t, "s")
    table.show()


if __name__ == "__main__":
    main()
