"""The inverse-kinematics block: a pose in, the joint coordinates that reach it out."""
from pathlib import Path

import numpy as np

from blocksim.accel.lowering import needs_lapack

from blocksim.block import In, Out
from blocksim.errors import SimulationError
from blocksim.params import Param, ParamError

from .ikine import (ILIMIT, LAM, RESTARTS, SEED, TOL, IKineError, _check_6s, _config, _Limits,
                    _rx, _sign, ikine, ikine6s, restart_box)
from .kinematics_blocks import RobotBlock, joint_names, robot_param

IKINE = Path(__file__).with_name("_ikine.c")  # the numerical ikine in C (compiled diagrams)


class IKine(RobotBlock):
    """Joint coordinates q with fkine(q) = T, as ikine and ikine6s in the Robotics Toolbox.

    method numerical: ikine's damped least squares (Levenberg-Marquardt on the pose error in
    the tool frame, weighted by `mask`), started from `q0` at every evaluation, so q is a
    function of T alone: pick q0 near the motion to get the solution branch you want (it
    takes about 1-2 ms per evaluation for a 6-axis arm near q0; restarts from random
    configurations, always the same ones, when an attempt stalls).
    method analytic: the closed form of a 6-axis arm with a spherical wrist, such as the
    Puma 560 (ikine6s, also called ikine560), the solution chosen by the `config` letters
    l/r (arm left or right), u/d (elbow up or down), n/f (wrist not flipped or flipped);
    angles wrapped to (-pi, pi].
    Input T (4, 4), world frame; output q (n). A pose out of reach (or, numerically, one the
    iteration cannot reach within the joint limits) stops the run with an error naming
    the time.
    """

    type = "ikine"
    params = (
        robot_param(),
        Param("method", "choice", "numerical", "numerical (any robot) or analytic (a 6-axis "
              "arm with a spherical wrist)", choices=("numerical", "analytic")),
        Param("q0", "value", 0.0, "numerical: the initial estimate (n,) or scalar (rad)"),
        Param("mask", "value", 1.0, "numerical: weights of the pose error [x y z, rotation "
              "about x y z] in the tool frame (6,) (0: ignore that direction)", minimum=0.0),
        Param("config", "string", "lun", "analytic: configuration letters l/r, u/d, n/f"),
    )

    _values = ("robot", "q0", "mask")

    def __init__(self, name, params):
        super().__init__(name, params)
        if self.p.method == "analytic":
            try:
                _config(self.p.config)
            except ValueError as e:
                raise ParamError("config", str(e)) from None
            self._solve = self._analytic
        else:
            self._solve = self._numerical
        self._checked(self.p)

    def _checked(self, p):
        """(q0 (n,), mask (6,)) of parameters `p`, checked (a robot that the analytic
        method cannot solve, a q0 of another size, a mask without a weight)."""
        n = self.n
        if p.method == "analytic":
            try:
                _check_6s(p.robot)
            except ValueError as e:
                raise ParamError("method", f"{e}: use method numerical") from None
        try:
            q0 = np.broadcast_to(p.q0, (n,)).astype(float)
        except ValueError:
            raise ParamError("q0", f"expected a scalar or {n} joint values, got shape "
                                   f"{p.q0.shape}") from None
        if p.mask.size not in (1, 6) or not p.mask.any():
            raise ParamError("mask", "expected one weight or 6 weights >= 0, not all zero")
        return q0, np.broadcast_to(p.mask.ravel(), (6,)).astype(float)

    # run data: numerical: q0 and mask (normal mode's), the joint limits lo, hi, which
    # joints are revolute, whether any is limited, the first start (q0 inside the limits)
    # and the restarts' starts (RESTARTS, n); analytic: the numbers of _ikine.c's Puma
    def _more(self, p):
        if p.method != "numerical":
            return {"puma": _puma_numbers(p.robot, p.config)}
        q0, mask = self._checked(p)
        limits = _Limits(p.robot)
        lo, hi = restart_box(p.robot, limits, q0)
        rng = np.random.default_rng(SEED)  # ikine's restarts start from these points
        starts = np.array([rng.uniform(lo, hi) for _ in range(RESTARTS)])
        return {"q0": q0, "mask": mask, "lo": limits.lo, "hi": limits.hi,
                "revolute": np.asarray(limits.revolute, dtype=float),
                "limited": float(limits.any), "start": limits.apply(q0)[0], "starts": starts}

    def ports(self):
        return [In("T", shape=(4, 4), doc="pose, world frame")], \
            [Out("q", shape=(self.n,), elements=joint_names("q", (self.n,)))]

    def _numerical(self, T):
        return ikine(self.robot, T, self.v.q0, self.v.mask)

    def _analytic(self, T):
        return ikine6s(self.robot, T, self.p.config)

    def output(self, t):
        try:
            np.copyto(self.y[0], self._solve(self.u[0]))
        except IKineError as e:
            raise SimulationError(f"no inverse kinematic solution: {e}", block=self.name,
                                  port="q", time=t) from None

    # ---- compiled form: _ikine.c
    def lower(self, c):
        needs_lapack()
        if self.p.method != "numerical":
            low = self._rows({"output": (
                "Puma puma; memcpy(&puma, P_puma, sizeof puma); double a = 0, b = 0, d = 0;\n"
                "int status = ik_puma(&puma, in_T, out_q, &a, &b, &d);\n"
                'if (status == 1) FAIL("no inverse kinematic solution: ikine6s: pose out of '
                'reach: the wrist centre is %.6g from the joint-1 axis, less than the shoulder '
                'offset %.6g", a, b);\n'
                'else if (status == 2) FAIL("no inverse kinematic solution: ikine6s: pose out '
                'of reach: shoulder-to-wrist distance %.6g, the arm reaches %.6g to %.6g", a, '
                "b, d);")})
            low.support += (IKINE,)
            return low
        n = self.n
        solve = (
            f"IKineRobot k = {{RP, RW, Rg, P_lo, P_hi, P_revolute, P_mask, P_limited[0] != 0.0, "
            f"{n}}};\n"
            f"double res; long long total;\n"
            f"int status = ik_solve(&k, in_T, P_start, P_starts, {RESTARTS}, "
            f"{ILIMIT}, {TOL!r}, {LAM!r}, out_q, &res, &total);\n"
            'if (status == IK_SINGULAR) FAIL("Singular matrix");\n'
            'else if (status == IK_SVD) FAIL("SVD did not converge");\n'
            'else if (status) FAIL("Non-positive determinant (left-handed or null coordinate '
            'frame) in rotation matrix 0");\n'
            f"else if (!(res < {TOL!r})) FAIL(\"no inverse kinematic solution: ikine did not "
            "converge: error %.3g (tol %g) after %lld iterations in %d attempts; the pose may be "
            "out of reach or outside the joint limits, or the mask does not allow it\", res, "
            f"{TOL!r}, total, {RESTARTS + 1});")
        low = self._rows({"output": solve})
        low.support += (IKINE,)
        return low


def _puma_numbers(robot, config):
    """The numbers _ikine.c's Puma holds, computed as ikine6s computes them."""
    a, d, alpha = robot.a, robot.d, robot.alpha
    signs = [_sign(np.sin(x)) for x in alpha[[0, 2, 3, 4]]]
    c6 = _rx(alpha[5]).T @ np.array([a[5], 0.0, d[5]])
    L = np.hypot(a[2], d[3])
    beta = np.arctan2(-signs[1] * d[3], a[2])
    left, up, flip = _config(config)
    return np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in (
        signs, c6, d[1] + d[2], d[0], a[1], a[1] ** 2, L, beta, 2 * a[1] * L, alpha,
        robot.offset, np.linalg.inv(robot.base), np.linalg.inv(robot.tool), left, up, flip)])
