"""Microseconds per call of the serial-link kernels for the Puma 560 (median of repeats).

Columns: blocksim with numba, blocksim as plain Python (``BLOCKSIM_NO_JIT=1``, run in a
subprocess because the switch is read when the kernels are first imported), and, when they
import (the ``bench`` extra: roboticstoolbox-python, pinocchio), their counterparts with the
ratio to blocksim (its default backend: C when built, else numba). The pinocchio model is built from the same DH table and checked
against blocksim before it is timed.

    python benchmarks/robot.py [--quick]
"""

import argparse
import json
import os
import subprocess
import sys
import timeit
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from blocks.robot import SerialLink, load_robot  # noqa: E402

ROWS = 1000   # trajectory length of the batched rne
RNG = np.random.default_rng(0)
Q, QD, QDD = (RNG.uniform(-1, 1, (ROWS, 6)) for _ in range(3))
q, qd, qdd = Q[0], QD[0], QDD[0]


STAT = {"median": np.median, "min": np.min}


def per_call(fn, per=1, budget=0.02, repeat=7, stat="median"):
    """Median (or min) over ``repeat`` runs of the time per call in µs, divided by ``per``
    rows; each run lasts about ``budget`` seconds."""
    fn()
    t = timeit.timeit(fn, number=1)
    number = max(1, int(budget / max(t, 1e-7)))
    runs = timeit.repeat(fn, number=number, repeat=repeat)
    return float(STAT[stat](runs)) / number / per * 1e6


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


def time_cases(cases, budget, stat):
    out = {}
    for name, case in cases.items():
        fn, per = case if isinstance(case, tuple) else (case, 1)
        out[name] = per_call(fn, per, budget, stat=stat)
    return out


def plain_python_timings(quick, stat):
    """blocksim timings measured in a subprocess with BLOCKSIM_NO_JIT=1."""
    env = dict(os.environ, BLOCKSIM_NO_JIT="1")
    args = [sys.executable, __file__, "--worker", "--stat", stat] + (["--quick"] if quick else [])
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


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


def pinocchio_cases(robot):
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


def optional(label, build, budget, stat):
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
            out[name] = per_call(fn, per, budget, stat=stat)
        except Exception as e:
            print(f"{label} {name}: {type(e).__name__}: {e}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="shorter runs")
    ap.add_argument("--stat", choices=sorted(STAT), default="median",
                    help="statistic over the 7 runs (min is steadier on a busy machine)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    budget = 0.005 if args.quick else 0.02
    puma = load_robot("puma560")
    if args.worker:
        json.dump(time_cases(blocksim_cases(puma), budget, args.stat), sys.stdout)
        return
    from blocks.robot._jit import enabled

    jit = time_cases(blocksim_cases(puma), budget, args.stat) if enabled() else None
    plain = plain_python_timings(args.quick, args.stat)
    rtb = optional("roboticstoolbox-python", rtb_cases, budget, args.stat)
    pin = optional("pinocchio", lambda: pinocchio_cases(puma), budget, args.stat)

    from blocks.robot import backend
    cols = [f"blocksim ({backend.name()})", "blocksim plain"]
    if rtb is not None:
        cols += ["rtb-python", "rtb/numba"]
    if pin is not None:
        cols += ["pinocchio", "pin/numba"]
    print(f"\nPuma 560, microseconds per call ({args.stat} of 7 runs)"
          + ("" if jit is not None else "; numba not available"))
    print(f"{'':24s}" + "".join(f"{c:>16s}" for c in cols))
    for name in plain:
        cells = [jit.get(name) if jit else None, plain[name]]
        for other in (rtb, pin):
            if other is not None:
                t = other.get(name)
                cells += [t, t / jit[name] if t and jit else None]
        print(f"{name:24s}" + "".join(f"{c:16.2f}" if c is not None else f"{'-':>16s}"
                                      for c in cells))


if __name__ == "__main__":
    main()
