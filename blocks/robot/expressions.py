"""Robot functions in a diagram's expressions, with the toolbox's names and argument order:

    parameters:
      T0: fkine(p560, qz)                     # 4x4 tool pose at the pose qz
      T1: fkine(p560, qz) @ transl(0.1, 0, 0)
      q1: ikine(p560, T1, qz)                 # joints that reach T1, searched from qz
      q2: ikine(arm, T1, q0, [1, 1, 1, 0, 0, 0])  # a 3-joint arm: the position only
      J:  jacob0(p560, p560.qr)               # 6 x n

The first argument names an entry of the diagram's `robots:` section (the catalogue's
SECTION_FUNCTIONS hands these to the evaluator, bound to the diagram's robots); the joint
vector must have the robot's n values. Each computes what the robot's method of the same
name does (``RobotBase``); in a parameter that happens once, when the diagram is checked.
"""
from __future__ import annotations

import numpy as np

from blocksim.language.expr import Function


def _q(robot, q, what):
    """A joint vector of the robot's n values, as float64."""
    q = np.asarray(q, dtype=np.float64)
    if q.shape != (robot.n,):
        raise ValueError(f"{what}() needs {robot.n} joint values for robot '{robot.name}', "
                         f"got shape {q.shape}")
    return q


def _fkine(robot, q):
    """Tool pose (4, 4) at joint values q: base, links and tool."""
    return robot.fkine(_q(robot, q, "fkine"))


def _ikine(robot, T, q0=None, mask=None):
    """Joint values (n,) whose tool pose is T (numerical, from q0, default zeros); mask: the
    6 weights of the pose error [x y z, rotation about x y z] in the tool frame (default
    ones), e.g. [1, 1, 1, 0, 0, 0] for a position-only target of a 3-joint arm."""
    return robot.ikine(*_ikine_args(robot, T, q0, mask))


def _ikine_probe(robot, T, q0=None, mask=None):
    """ikine's shape, (n,), for a function block's shape probe, whose stand-in T (zeros) is
    no pose: the arguments checked as ikine checks them."""
    _ikine_args(robot, T, q0, mask)
    return np.zeros(robot.n)


def _ikine_args(robot, T, q0, mask):
    """(T, q0, mask) checked: a 4x4 pose, n joint values or None, 6 weights or None."""
    T = np.asarray(T, dtype=np.float64)
    if T.shape != (4, 4):
        raise ValueError(f"ikine() needs a 4x4 pose, got shape {T.shape}")
    if mask is not None:
        mask = np.asarray(mask, dtype=np.float64)
        if mask.shape != (6,) or (mask < 0).any() or not mask.any():
            raise ValueError(f"ikine() needs a mask of 6 weights >= 0, not all zero, for "
                             f"[x y z, rotation about x y z] in the tool frame, got "
                             f"{np.array2string(mask, separator=', ')}")
    return T, None if q0 is None else _q(robot, q0, "ikine"), mask


def _jacob0(robot, q):
    """Geometric Jacobian (6, n) in the world frame at q."""
    return robot.jacob0(_q(robot, q, "jacob0"))


def _jacobn(robot, q):
    """Geometric Jacobian (6, n) in the tool frame at q."""
    return robot.jacobn(_q(robot, q, "jacobn"))


def _gravload(robot, q):
    """Joint torques (n,) that hold the robot still at q against gravity."""
    return robot.gravload(_q(robot, q, "gravload"))


def _inertia(robot, q):
    """Joint-space inertia matrix M(q) (n, n), motor inertia included."""
    return robot.inertia(_q(robot, q, "inertia"))


FUNCTIONS = {
    "fkine": Function(_fkine, 2, 2, subject="robots"),
    "ikine": Function(_ikine, 2, 4, subject="robots", probe=_ikine_probe),
    "jacob0": Function(_jacob0, 2, 2, subject="robots"),
    "jacobn": Function(_jacobn, 2, 2, subject="robots"),
    "gravload": Function(_gravload, 2, 2, subject="robots"),
    "inertia": Function(_inertia, 2, 2, subject="robots"),
}
