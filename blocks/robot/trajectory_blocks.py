"""Trajectory sources: a quintic joint-space motion and a straight-line Cartesian motion."""
import numpy as np

from blocksim.block import Block, Out
from blocksim.params import Param, ParamError

from .trajectory import CartesianTrajectory, QuinticTrajectory


class _Motion(Block):
    """A motion over [0, tf]: time-dependent, with tf announced as an event so that the solver
    lands on the end of the motion."""

    time_dependent = True
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

    def __init__(self, name, params):
        super().__init__(name, params)
        p = self.p
        try:
            shape = np.broadcast_shapes(p.q0.shape, p.qf.shape, p.qd0.shape, p.qdf.shape)
        except ValueError:
            raise ParamError("qf", f"q0 {p.q0.shape}, qf {p.qf.shape}, qd0 {p.qd0.shape} and "
                                   f"qdf {p.qdf.shape} do not broadcast together") from None
        if len(shape) > 1:
            raise ParamError("q0", f"expected a joint vector (n,) or a scalar, got shape {shape}")
        self._shape = shape
        flat = [np.broadcast_to(v, shape).ravel() for v in (p.q0, p.qf, p.qd0, p.qdf)]
        self._traj = QuinticTrajectory(flat[0], flat[1], p.tf, flat[2], flat[3])

    def ports(self):
        s = self._shape
        return [], [Out("q", shape=s, feedthrough=()), Out("qd", shape=s, feedthrough=()),
                    Out("qdd", shape=s, feedthrough=())]

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


class CTraj(_Motion):
    """Straight-line Cartesian motion from T0 to T1 over [0, tf], as ctraj in the Robotics Toolbox.

    ctraj of the Robotics Toolbox for MATLAB, release 7, as a function of time.

    Path fraction s = 10 tau^3 - 15 tau^4 + 6 tau^5, tau = t/tf (rest to rest, zero
    acceleration at both ends): translation p0 + s (p1 - p0), rotation R0·Rot(u, s·phi) with
    (u, phi <= pi) the axis and angle of R0^T R1 (the shorter arc, the path of quaternion
    slerp). T0 before 0, T1 from tf on (the motion is smooth through its second derivative
    there; tf is still announced as an event so the solver lands on the end of the motion).
    Params T0, T1 (4, 4); output T (4, 4).
    """

    type = "ctraj"
    params = (Param("T0", doc="start pose (4, 4)"), Param("T1", doc="final pose (4, 4)"),
              _Motion.TF)

    def __init__(self, name, params):
        super().__init__(name, params)
        for key in ("T0", "T1"):
            shape = getattr(self.p, key).shape
            if shape != (4, 4):
                raise ParamError(key, f"expected a 4x4 homogeneous transform, got shape {shape}")
        self._traj = CartesianTrajectory(self.p.T0, self.p.T1, self.p.tf)

    def ports(self):
        return [], [Out("T", shape=(4, 4), feedthrough=())]

    def output(self, t):
        self.y[0][...] = self._traj.at(t)
