"""Microseconds per call of the robot kernels for the Puma 560 (median of repeats).

Two tables. The Puma 560 as a SerialLink (standard DH): blocksim with its default backend (C
when built), with numba and as plain Python, and, when they import (the ``bench`` extra:
roboticstoolbox-python, pinocchio), their counterparts with the ratio to blocksim. The same
Puma as a TwistRobot (``TwistRobot.from_dh``): the C and numba backends and their ratio,
next to the SerialLink's C figures.

Each backend is measured in a worker process (the backend is chosen when the kernels are first
imported). ``--baseline DIR`` adds the same calls on another blocksim checkout (e.g. ``git
worktree add /tmp/old REV``, its extension built in place), imported into the same worker
under another package name, and the ratio new/old: every timing run of the new code is
followed by one of the old, so that both see the same machine. Before the robot core was
shared, twist robots always ran on numba: the baseline's twist column is that. The
pinocchio model is built from the same DH table and checked against blocksim before it is
timed.

    python benchmarks/robot.py [--quick] [--baseline DIR] [--stat min] [--repeat N]
"""

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ROWS = 1000   # trajectory length of the batched rne
RNG = np.random.default_rng(0)
Q, QD, QDD = (RNG.uniform(-1, 1, (ROWS, 6)) for _ in range(3))
q, qd, qdd = Q[0], QD[0], QDD[0]
STAT = {"median": np.median, "min": np.min}


def per_call(fn, per=1, budget=0.02, repeat=7, stat="median"):
    """Median (or min) over ``repeat`` runs of the time per call in µs, divided by ``per``
    rows; each run lasts about ``budget`` seconds."""
    return interleaved([fn], per, budget, repeat, stat)[0]


def interleaved(fns, per=1, budget=0.02, repeat=7, stat="median"):
    """``per_call`` of several functions with their runs interleaved (run k of each, then run
    k + 1), so that a busy machine slows them alike; one call count, from the first."""
    for fn in fns:
        fn()
    t = timeit.timeit(fns[0], number=1)
    number = max(1, int(budget / max(t, 1e-7)))
    runs = [[] for _ in fns]
    for _ in range(repeat):
        for fn, r in zip(fns, runs):
            r.append(timeit.timeit(fn, number=number))
    return [float(STAT[stat](r)) / number / per * 1e6 for r in runs]


def blocksim_cases(p):
    tau = p.rne(q, qd, qdd)
    o6, o66 = np.empty(6), np.empty((6, 6))
    return {
        "rne": lambda: p.rne(q, qd, qdd),
        "rne out=": lambda: p.rne(q, qd, qdd, out=o6),
        "inertia": lambda: p.inertia(q),
        "inertia out=": lambda: p.inertia(q, out=o66),
        "coriolis": lambda: p.coriolis(q, qd),
        "gravload": lambda: p.gravload(q),
        "accel": lambda: p.accel(q, qd, tau),
        "accel out=": lambda: p.accel(q, qd, tau, out=o6),
        "fkine": lambda: p.fkine(q),
        "jacob0": lambda: p.jacob0(q),
        f"rne batch/row ({ROWS})": (lambda: p.rne(Q, QD, QDD), ROWS),
    }


# ---------------------------------------------------------------- blocksim, in worker processes
def _baseline_package(tree):
    """The robot library of another checkout, imported as the package ``baseline_robot``."""
    path = Path(tree).resolve() / "blocks" / "robot"
    spec = importlib.util.spec_from_file_location("baseline_robot", path / "__init__.py",
                                                  submodule_search_locations=[str(path)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["baseline_robot"] = module
    spec.loader.exec_module(module)
    return module


def worker(args):
    """{column: {case: µs}} with the backend of the environment: the Puma as SerialLink and
    as TwistRobot, and the baseline's when given, their runs interleaved case by case."""
    sys.path.insert(0, str(ROOT))
    from blocks import robot as new
    from blocks.robot import backend

    libraries = [("new", new)] + ([("old", _baseline_package(args.baseline))]
                                  if args.baseline else [])
    robots = {}
    for label, lib in libraries:
        puma = lib.load_robot("puma560")
        robots[f"{label} puma"] = puma
        if not args.puma_only:
            robots[f"{label} twist"] = lib.TwistRobot.from_dh(puma)
    cases = {label: blocksim_cases(robot) for label, robot in robots.items()}
    budget = 0.005 if args.quick else 0.02
    times = {label: {} for label in robots}
    for name in cases["new puma"]:
        row = [cases[label][name] for label in robots]
        per = row[0][1] if isinstance(row[0], tuple) else 1
        fns = [case[0] if isinstance(case, tuple) else case for case in row]
        for label, t in zip(robots, interleaved(fns, per, budget, args.repeat, args.stat)):
            times[label][name] = t
    json.dump({"backend": backend.name(), "times": times}, sys.stdout)


def blocksim_columns(args):
    """{(backend, column): {case: µs}} from one worker per backend (plain Python: the
    SerialLink alone, without the baseline)."""
    out = {}
    # numba's cache of the baseline's source may hold code compiled under its own package name
    cache = tempfile.mkdtemp(prefix="blocksim-bench-numba-") if args.baseline else None
    for backend in ("c", "numba", "python"):
        env = dict(os.environ, BLOCKSIM_KERNELS=backend)
        env.pop("BLOCKSIM_NO_JIT", None)
        if cache:
            env["NUMBA_CACHE_DIR"] = cache
        cmd = [sys.executable, __file__, "--worker", "--stat", args.stat, "--repeat",
               str(args.repeat)]
        cmd += ["--quick"] if args.quick else []
        cmd += ["--puma-only"] if backend == "python" else ["--baseline", args.baseline] \
            if args.baseline else []
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"worker ({backend}) failed:\n{done.stderr}")
        report = json.loads(done.stdout)
        if report["backend"] != backend:      # e.g. no numba, or no C extension built
            print(f"blocksim {backend}: not available; skipped")
            continue
        out.update({(backend, label): times for label, times in report["times"].items()})
    if cache:
        shutil.rmtree(cache, ignore_errors=True)
    return out


# ---------------------------------------------------------------- roboticstoolbox-python
def rtb_cases():
    import roboticstoolbox as rtb

    r = rtb.models.DH.Puma560()
    tau = r.rne(q, qd, qdd)
    return {
        "rne": lambda: r.rne(q, qd, qdd),
        "inertia": lambda: r.inertia(q),
        "coriolis": lambda: r.coriolis(q, qd),
        "gravload": lambda: r.gravload(q),
        "accel": lambda: r.accel(q, qd, tau),
        "fkine": lambda: r.fkine(q),
        "jacob0": lambda: r.jacob0(q),
        f"rne batch/row ({ROWS})": (lambda: r.rne(Q, QD, QDD), ROWS),
    }


# ---------------------------------------------------------------- pinocchio
def pinocchio_model(robot):
    """A pinocchio model of a revolute standard-DH robot: joint j's frame is T_{j-1}·Rz(q_j),
    so its placement in joint j-1's frame is X_{j-1}·Rz(offset_j) with X = Tz(d)·Tx(a)·Rx(α),
    and link j's COM and inertia (given in T_j = joint frame·X_j) are mapped through X_j.
    Rigid bodies only: motor inertia and friction are left out."""
    import pinocchio as pin

    if robot.mdh or "P" in robot.config:
        raise ValueError("this converter handles revolute standard-DH robots only")

    def X(L):
        ca, sa = np.cos(L.alpha), np.sin(L.alpha)
        T = np.eye(4)
        T[:3, :3] = [[1, 0, 0], [0, ca, -sa], [0, sa, ca]]
        T[:3, 3] = (L.a, 0, L.d)
        return T

    def Rz(t):
        T = np.eye(4)
        T[:2, :2] = [[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]]
        return T

    model = pin.Model()
    parent, place = 0, robot.base
    for j, L in enumerate(robot.links):
        P = place @ Rz(L.offset)
        jid = model.addJoint(parent, pin.JointModelRZ(), pin.SE3(P[:3, :3], P[:3, 3]), f"j{j}")
        Xj = X(L)
        R = Xj[:3, :3]
        model.appendBodyToJoint(jid, pin.Inertia(L.m, R @ L.r + Xj[:3, 3], R @ L.I @ R.T),
                                pin.SE3.Identity())
        parent, place = jid, Xj
    ee = place @ robot.tool
    fid = model.addFrame(pin.Frame("tool", parent, 0, pin.SE3(ee[:3, :3], ee[:3, 3]),
                                   pin.FrameType.OP_FRAME))
    return pin, model, fid


def pinocchio_cases():
    sys.path.insert(0, str(ROOT))
    from blocks.robot import SerialLink, load_robot

    robot = load_robot("puma560")
    pin, model, fid = pinocchio_model(robot)
    data = model.createData()
    # the same robot without motor inertia and friction, for the agreement check
    rigid = SerialLink([L.replace(Jm=0.0) for L in robot.nofriction("all").links])

    def fkine(x):
        pin.framesForwardKinematics(model, data, x)
        return data.oMf[fid].homogeneous

    def jacob0(x):
        return pin.computeFrameJacobian(model, data, x, fid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)

    def inertia(x):
        M = pin.crba(model, data, x)
        return np.triu(M) + np.triu(M, 1).T

    checks = {
        "rne": (pin.rnea(model, data, q, qd, qdd), rigid.rne(q, qd, qdd)),
        "inertia": (inertia(q), rigid.inertia(q)),
        "gravload": (pin.computeGeneralizedGravity(model, data, q), rigid.gravload(q)),
        "coriolis·qd": (pin.computeCoriolisMatrix(model, data, q, qd) @ qd,
                        rigid.coriolis(q, qd) @ qd),
        "accel": (pin.aba(model, data, q, qd, qdd), rigid.accel(q, qd, qdd)),
        "fkine": (fkine(q), rigid.fkine(q)),
        "jacob0": (jacob0(q), rigid.jacob0(q)),
    }
    errors = {k: float(np.abs(np.asarray(a) - b).max()) for k, (a, b) in checks.items()}
    cases = {
        "rne": lambda: pin.rnea(model, data, q, qd, qdd),
        "inertia": lambda: pin.crba(model, data, q),
        "coriolis": lambda: pin.computeCoriolisMatrix(model, data, q, qd),
        "gravload": lambda: pin.computeGeneralizedGravity(model, data, q),
        "accel": lambda: pin.aba(model, data, q, qd, qdd),
        "fkine": lambda: fkine(q),
        "jacob0": lambda: jacob0(q),
    }
    return cases, errors


def optional(label, build, budget, repeat, stat):
    """Timings of an optional library, or None with the reason printed."""
    try:
        made = build()
    except ImportError as e:
        print(f"{label}: not installed ({e.name}); skipped")
        return None
    except Exception as e:     # an API change in a third-party package must not stop the table
        print(f"{label}: could not be set up ({type(e).__name__}: {e}); skipped")
        return None
    cases, errors = made if isinstance(made, tuple) else (made, None)
    if errors is not None:
        print(f"{label} agreement with blocksim (max |difference|): "
              + ", ".join(f"{k} {v:.1e}" for k, v in errors.items()))
        if max(errors.values()) > 1e-8:
            print(f"{label}: models disagree; skipped")
            return None
    out = {}
    for name, case in cases.items():
        fn, per = case if isinstance(case, tuple) else (case, 1)
        try:
            out[name] = per_call(fn, per, budget, repeat, stat)
        except Exception as e:
            print(f"{label} {name}: {type(e).__name__}: {e}")
    return out


# ---------------------------------------------------------------- tables
def table(title, columns):
    """Print columns [(heading, {case: value} or None)] as one row per case; columns that are
    None (not measured) are left out."""
    columns = [(h, c) for h, c in columns if c is not None]
    cases = next(c for _, c in columns if c)
    print(f"\n{title}")
    print(f"{'':24s}" + "".join(f"{h:>15s}" for h, _ in columns))
    for name in cases:
        cells = [c.get(name) for _, c in columns]
        print(f"{name:24s}" + "".join(f"{x:15.2f}" if x is not None else f"{'-':>15s}"
                                      for x in cells))


def ratio(a, b):
    if a is None or b is None:
        return None
    return {k: a[k] / b[k] for k in a if k in b}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="shorter runs")
    ap.add_argument("--stat", choices=sorted(STAT), default="median",
                    help="statistic over the runs (min is steadier on a busy machine)")
    ap.add_argument("--repeat", type=int, default=7, help="timed runs per case (default 7)")
    ap.add_argument("--baseline", metavar="DIR",
                    help="another blocksim checkout (extension built) to measure side by side")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--puma-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return
    budget = 0.005 if args.quick else 0.02
    cols = blocksim_columns(args)
    rtb = optional("roboticstoolbox-python", rtb_cases, budget, args.repeat, args.stat)
    pin = optional("pinocchio", pinocchio_cases, budget, args.repeat, args.stat)

    new_c, old_c = cols.get(("c", "new puma")), cols.get(("c", "old puma"))
    ref = new_c or cols.get(("numba", "new puma"))
    stat = f"{args.stat} of {args.repeat} runs"
    table(f"Puma 560 (SerialLink), microseconds per call ({stat})", [
        ("blocksim c", new_c), ("old c", old_c), ("new/old", ratio(new_c, old_c)),
        ("numba", cols.get(("numba", "new puma"))),
        ("old numba", cols.get(("numba", "old puma"))),
        ("plain", cols.get(("python", "new puma"))),
        ("rtb-python", rtb), ("rtb/blocksim", ratio(rtb, ref)),
        ("pinocchio", pin), ("pin/blocksim", ratio(pin, ref))])
    twist_c, twist_nb = cols.get(("c", "new twist")), cols.get(("numba", "new twist"))
    old_twist = cols.get(("c", "old twist"))
    table(f"Puma 560 as a TwistRobot, microseconds per call ({stat})", [
        ("twist c", twist_c), ("twist numba", twist_nb), ("c/numba", ratio(twist_c, twist_nb)),
        ("SerialLink c", new_c), ("twist/DH c", ratio(twist_c, new_c)),
        ("old twist", old_twist), ("c/old twist", ratio(twist_c, old_twist))])


if __name__ == "__main__":
    main()
