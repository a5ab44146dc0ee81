"""Trajectory sources: a quintic joint-space motion, a straight-line Cartesian motion and a
multi-segment joint motion through via points."""
from pathlib import Path

import numpy as np

from blocksim.accel.lowering import LowerContext, Lowering
from blocksim.block import Block, In, Out
from blocksim.params import Param, ParamError

from .kinematics_blocks import joint_names
from .mstraj import ViaPointError, ViaPointTrajectory
from .quaternion import HALF_TURN
from .trajectory import CartesianTrajectory, QuinticTrajectory


CTRAJ = Path(__file__).with_name("_ctraj.c")  # ctraj's motion in C (compiled diagrams)


class _Trajectory(Block):
    """A source whose motion is an object of the trajectory library: subclasses give
    `_trajectory(p)`, the motion of parameters `p` (checked), which normal mode evaluates
    (`self._traj`, made again after a change of values), and `_numbers(traj)`, its numbers
    as compiled code reads them: the run data, declared in that order; `_values` the
    parameters they come from."""

    time_dependent = True
    _values = ()

    def _trajectory(self, p):
        raise NotImplementedError

    def _numbers(self, traj):
        raise NotImplementedError

    def declare(self, d):
        for name, value in self._numbers(self._traj).items():
            d.derived(name, np.shape(value))
        d.value(*self._values)

    def derive(self, p):
        return self._numbers(self._trajectory(p))

    def values_changed(self):
        self._traj = self._trajectory(self.p)


class _Motion(_Trajectory):
    """A motion over [0, tf], with tf announced as an event so that the solver lands on the
    end of the motion."""

    TF = Param("tf", "scalar", doc="duration (s), > 0", positive=True)

    def events(self, start, stop):
        return (self.p.tf,) if start < self.p.tf <= stop else ()


class JTraj(_Motion):
    """Quintic joint trajectory from q0 to qf over [0, tf], as jtraj in the Robotics Toolbox.

    jtraj of the Robotics Toolbox for MATLAB, release 7, called with a time vector.

    With tau = t/tf, w0 = qd0·tf, w1 = qdf·tf and D = qf - q0:

        q(t) = q0 + w0 tau + C tau^3 + B tau^4 + A tau^5
        A = 6D - 3(w0 + w1),  B = -15D + 8w0 + 7w1,  C = 10D - 6w0 - 4w1

    and qd = dq/dt, qdd = d2q/dt2 of that exact polynomial: q(0) = q0, q(tf) = qf, velocities
    qd0, qdf and zero accelerations at both ends. From t = tf on the block holds qf with zero
    rates (right-continuous: qd jumps from qdf to 0 there when qdf != 0); before 0 it holds q0.
    tf is announced as an event so the solver lands on it; the mode (0 moving, 1 holding)
    lives in the discrete state. q0, qf, qd0, qdf broadcast together to the signal's shape,
    a scalar or a joint vector (n,) such as `qz` or `p560.qr`. Outputs q, qd, qdd (rad, rad/s,
    rad/s^2 for revolute joints).
    """

    type = "jtraj"
    params = (
        Param("q0", doc="start configuration (n,) or scalar"),
        Param("qf", doc="final configuration (n,) or scalar"),
        _Motion.TF,
        Param("qd0", "value", 0.0, "start velocity (per second)"),
        Param("qdf", "value", 0.0, "final velocity (per second)"),
    )

    _values = ("q0", "qf", "tf", "qd0", "qdf")

    def __init__(self, name, params):
        super().__init__(name, params)
        self._traj = self._trajectory(self.p)
        p = self.p
        self._shape = np.broadcast_shapes(p.q0.shape, p.qf.shape, p.qd0.shape, p.qdf.shape)

    def _trajectory(self, p):
        try:
            shape = np.broadcast_shapes(p.q0.shape, p.qf.shape, p.qd0.shape, p.qdf.shape)
        except ValueError:
            raise ParamError("qf", f"q0 {p.q0.shape}, qf {p.qf.shape}, qd0 {p.qd0.shape} and "
                                   f"qdf {p.qdf.shape} do not broadcast together") from None
        if len(shape) > 1:
            raise ParamError("q0", f"expected a joint vector (n,) or a scalar, got shape {shape}")
        flat = [np.broadcast_to(v, shape).ravel() for v in (p.q0, p.qf, p.qd0, p.qdf)]
        return QuinticTrajectory(flat[0], flat[1], p.tf, flat[2], flat[3])

    @staticmethod
    def _numbers(traj):
        """tf, 1/tf, M (3n, 6) and the values held before and after (3n) (the evaluator's
        numbers)."""
        return {"tf": traj.tf, "inv_tf": traj._inv_tf, "M": traj._M,
                "before": traj._held[False], "after": traj._held[True]}

    def ports(self):
        s = self._shape
        return [], [Out(k, shape=s, feedthrough=(), elements=joint_names(k, s))
                    for k in ("q", "qd", "qdd")]

    def discrete_state(self):
        return np.zeros(1)

    def initialize(self, t):
        self.xd[0] = 1.0 if t >= self.p.tf else 0.0

    def event(self, t):
        self.xd[0] = 1.0

    def output(self, t):
        # q, qd, qdd are consecutive in y_flat, in the evaluator's [q; qd; qdd] order; the
        # mode (not t) decides the hold, so landing exactly on tf needs no round-off care
        self._traj.into(np.inf if self.xd[0] else min(t, self.p.tf), self.y_flat)

    # compiled: out_q is y_flat, [q; qd; qdd] = M @ [1, tau, .., tau^5] (a gemv)
    def lower(self, c):
        m = 3 * int(np.prod(self._shape, dtype=int))
        held = "double tf = P_tf[0]; const double *held = s > tf ? P_after : P_before;"
        return Lowering({
            "output": (
                "double s = xd[0] != 0.0 ? INFINITY : PYMIN(t, P_tf[0]);\n"
                f"if (s < 0.0 || s > P_tf[0]) {{ {held} "
                + LowerContext.loop(m, "out_q[i] = held[i];") + " }\n"
                "else { double tau = s * P_inv_tf[0], p[6]; p[0] = 1.0; p[1] = tau; "
                "p[2] = tau * tau; p[3] = p[2] * tau; p[4] = p[2] * p[2]; p[5] = p[4] * tau; "
                f"rt_matmul(P_M, {m}, 6, p, 1, out_q); }}"),
            "initialize": "xd[0] = t >= P_tf[0] ? 1.0 : 0.0;",
            "event": "xd[0] = 1.0;"})


class CTraj(_Motion):
    """Straight-line Cartesian motion from T0 to T1 over [0, tf], as ctraj in the Robotics Toolbox.

    ctraj of the Robotics Toolbox for MATLAB, release 7, as a function of time.

    Path fraction s = 10 tau^3 - 15 tau^4 + 6 tau^5, tau = t/tf (rest to rest, zero
    acceleration at both ends): translation p0 + s (p1 - p0), rotation R0·Rot(u, s·phi) with
    (u, phi <= pi) the axis and angle of R0^T R1 (the shorter arc, the path of quaternion
    slerp; a half turn is a tie: the arc through orientations nearer the identity, as
    release 7 takes, or when an end pose is itself a half turn from the identity, the
    positive turn about the axis's first non-zero component). T0 before 0, T1 from tf on (the motion is smooth through its second derivative
    there; tf is still announced as an event so the solver lands on the end of the motion).

    T0, T1 (4, 4): parameters, or leave one out to read it from the input port of the same
    name (the motion then runs between the poses the inputs hold at each instant, e.g. a
    start pose computed by fkine). Outputs: T (4, 4) and v (6) = [dp/dt; omega], the
    velocity of the moving pose in the world frame, rows as a jacob0's (m/s, rad/s):
    dp/dt = ds/dt (p1 - p0), omega = ds/dt phi R0 u, zero outside [0, tf]: a feedforward
    for resolved-rate control (qd = J0^-1 v). With poses from inputs v is the rate along
    the path between the poses as they are (the inputs' own rates are not included).
    """

    type = "ctraj"
    params = (Param("T0", "value", None, "start pose (4, 4); unset: the input T0"),
              Param("T1", "value", None, "final pose (4, 4); unset: the input T1"),
              _Motion.TF)

    def __init__(self, name, params):
        super().__init__(name, params)
        self._inputs = tuple(key for key in ("T0", "T1") if getattr(self.p, key) is None)
        self._values = ("tf",) + tuple(key for key in ("T0", "T1") if key not in self._inputs)
        self._traj = self._trajectory(self.p)
        if self._inputs:
            self.output = self._from_inputs

    def _trajectory(self, p):
        poses = {}
        for key in ("T0", "T1"):
            value = getattr(p, key)
            if value is not None:
                _check_pose(key, value)
            poses[key] = np.eye(4) if value is None else value
        return CartesianTrajectory(poses["T0"], poses["T1"], p.tf)

    @staticmethod
    def _numbers(traj):
        """tf, then the motion's terms as _ctraj.c's CTrajTerms holds them: T0, T1,
        sin_term, cos_term, dp, spin, phi."""
        return {"tf": traj.tf, "terms": np.concatenate([np.ravel(v) for v in (
            traj._T0, traj._T1, traj._sin_term, traj._cos_term, traj._dp, traj._spin,
            traj._phi)])}

    def values_changed(self):
        super().values_changed()
        self._bind_poses()

    def ports(self):
        ins = [In(key, shape=(4, 4), doc=f"{key} pose") for key in self._inputs]
        return ins, [Out("T", shape=(4, 4), feedthrough=self._inputs),
                     Out("v", shape=(6,), feedthrough=self._inputs)]

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._wired = dict(zip(self._inputs, u))
        self._bind_poses()

    def _bind_poses(self):
        self._T0 = self._wired.get("T0", self.p.T0)
        self._T1 = self._wired.get("T1", self.p.T1)

    def output(self, t):
        self._traj.into(t, self.y[0], self.y[1])

    def _from_inputs(self, t):
        self._traj.set_poses(self._T0, self._T1)
        self._traj.into(t, self.y[0], self.y[1])

    # compiled: with poses from inputs the terms are computed at each evaluation as
    # set_poses computes them
    def lower(self, c):
        if not self._inputs:
            terms = "memcpy(&m, P_terms, sizeof m);"
        else:
            poses = [f"in_{key}" if key in self._inputs else f"P_terms + {16 * k}"
                     for k, key in enumerate(("T0", "T1"))]
            terms = f"ctraj_poses(&m, {poses[0]}, {poses[1]}, {HALF_TURN!r});"
        return Lowering({"output": f"CTrajTerms m; {terms}\n"
                                   "ctraj_into(&m, P_tf[0], t, out_T, out_v);"},
                        support=(CTRAJ,))


def _check_pose(key, T):
    """A pose parameter must be a rigid transform: a rotation (R^T R = I to 1e-3, which
    admits a matrix typed from 4-decimal printouts, and det R > 0) and a last row
    [0, 0, 0, 1]; a scale or a shear would be interpolated into a path of non-rotations."""
    if T.shape != (4, 4):
        raise ParamError(key, f"expected a 4x4 homogeneous transform, got shape {T.shape}")
    R = T[:3, :3]
    deviation, det = np.abs(R.T @ R - np.eye(3)).max(), np.linalg.det(R)
    if deviation > 1e-3 or det <= 0:
        raise ParamError(key, f"expected a 4x4 homogeneous transform: its 3x3 part is not a "
                              f"rotation (|R^T R - I| up to {deviation:.3g}, det R = {det:.3g})")
    if np.abs(T[3] - (0, 0, 0, 1)).max() > 1e-9:
        raise ParamError(key, f"expected a 4x4 homogeneous transform: its last row is "
                              f"{T[3].tolist()}, not [0, 0, 0, 1]")


class MSTraj(_Trajectory):
    """Joint motion along straight segments through via points, as mstraj in the Robotics Toolbox.

    mstraj of the Robotics Toolbox for MATLAB (segments, qdmax or tsegment, q0, tacc), as a
    function of time. From q0 at rest the joints move in straight lines through the via
    points (rows of `via`, (m, n); the last is the end point, reached at rest), at constant
    velocity on each segment; every corner is rounded by a blend of duration tacc centred on
    the instant the straight path reaches the via point, so the path passes near a via point
    (3 tacc |dv| / 32 from it, dv the change of velocity there), not through it (unless
    tacc = 0: straight lines, velocity steps at the via points).

    Segment durations: `tsegment` (one per segment, s), or the time the slowest joint needs
    at its speed limit `qdmax` (one for all joints or one per joint), lengthened where the
    blends would not fit. Within a blend from segment velocity v_k to v_k+1 (duration D,
    time s into it) qd = v_k + (v_k+1 - v_k)(3 (s/D)^2 - 2 (s/D)^3): every joint's speed
    stays between its segment speeds, so within qdmax. tacc: one time, or one per corner
    (m + 1: start, each via point, end). The motion lasts from 0 to
    tf = tacc_start/2 + sum of the segment durations + tacc_end/2; the instants where the
    law changes are announced as events. Outputs q, qd, qdd with
    q0's shape; q0 before 0, the end point with zero rates after tf.

    The toolbox's mstraj, sampled every dt, differs at the ends and in its timing: its first
    and last blends last tacc/2 (made to cover the same distance, their quintic peaks at
    1.51 times the segment speed, beyond qdmax), and with qdmax each segment also gets its
    blend time (tacc/2 for the first) added. With tsegment the motion between the first and
    the last blend is the toolbox's, tacc/2 later; with qdmax it is shorter here.
    """

    type = "mstraj"
    params = (
        Param("via", doc="via points (m, n), one row each; the last is the end point"),
        Param("q0", doc="start configuration (n,)"),
        Param("qdmax", "value", None, "joint speed limits (n,) or one for all, > 0 "
              "(or give tsegment)"),
        Param("tsegment", "value", None, "segment durations (m,) (s) (or give qdmax)"),
        Param("tacc", "value", 0.0, "blend (acceleration) time (s), one or one per corner",
              minimum=0.0),
    )

    _values = ("via", "q0", "qdmax", "tsegment", "tacc")

    def __init__(self, name, params):
        super().__init__(name, params)
        self._traj = self._trajectory(self.p)
        self._shape = self.p.q0.shape

    @staticmethod
    def _trajectory(p):
        if p.q0.ndim > 1:
            raise ParamError("q0", f"expected a joint vector (n,) or a scalar, got shape "
                                   f"{p.q0.shape}")
        try:
            return ViaPointTrajectory(p.q0, p.via, p.tacc, p.qdmax, p.tsegment)
        except ViaPointError as e:
            raise ParamError(e.param, str(e)) from None

    @staticmethod
    def _numbers(traj):
        """The pieces' bounds, origins and M (3n, 5) of each piece, padded to the most pieces
        the via points' count allows (2m + 3; bounds with inf): the numbers change, not the
        code."""
        K = 2 * len(traj.velocities) + 3
        pieces = len(traj._origins)
        bounds = np.full(K - 1, np.inf)
        bounds[:pieces - 1] = traj.bounds
        origins = np.zeros(K)
        origins[:pieces] = traj._origins
        M = np.zeros((K,) + traj._M.shape[1:])
        M[:pieces] = traj._M
        return {"bounds": bounds, "origins": origins, "M": M}

    def ports(self):
        s = self._shape
        return [], [Out(k, shape=s, feedthrough=(), elements=joint_names(k, s))
                    for k in ("q", "qd", "qdd")]

    def events(self, start, stop):
        bounds = self._traj.bounds
        return tuple(float(b) for b in bounds[(bounds > start) & (bounds <= stop)])

    def discrete_state(self):
        return np.zeros(1)  # the piece of the law in force (ViaPointTrajectory.piece)

    def initialize(self, t):
        self.xd[0] = self._traj.piece(t)

    def event(self, t):
        self.xd[0] = self._traj.piece(t)

    def output(self, t):
        self._traj.into(int(self.xd[0]), t, self.y_flat)

    def lower(self, c):
        K, w = 2 * len(self._traj.velocities) + 3, 3 * int(np.prod(self._shape, dtype=int))
        piece = f"xd[0] = rt_search_right(P_bounds, {K - 1}, t);"  # searchsorted(bounds, t)
        return Lowering({
            "output": ("int k = (int)xd[0]; double s = t - P_origins[k], p[5]; p[0] = 1.0; "
                       "p[1] = s; p[2] = s * s; p[3] = p[2] * s; p[4] = p[2] * p[2];\n"
                       f"rt_matmul(P_M + k * {5 * w}, {w}, 5, p, 1, out_q);"),
            "initialize": piece, "event": piece})
