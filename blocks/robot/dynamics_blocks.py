"""Dynamics blocks of a serial-link robot: the plant (forward dynamics), rne, gravload, inertia.

Conventions of `shared/spec/robots.md`: M(q) includes the motor inertia G^2·Jm, friction
F_j(qd) = |G_j|·(B_j·|G_j|·qd_j + Tc_j) with Tc_j = Tc+ (qd > 0), Tc- (qd < 0), 0 at rest.
Each block makes one call of a compiled kernel per evaluation, writing into its output view.
"""
import numpy as np

from blocksim.block import In, Out
from blocksim.errors import SimulationError
from blocksim.params import Param, ParamError

from .kinematics_blocks import RobotBlock, robot_param


def _joint_vector(p, name, n):
    """Parameter `name` broadcast to (n,) (a scalar applies to every joint)."""
    value = getattr(p, name)
    try:
        return np.broadcast_to(value, (n,)).astype(float)
    except ValueError:
        raise ParamError(name, f"expected a scalar or {n} joint values, got shape {value.shape}") from None


class Robot(RobotBlock):
    """Forward dynamics of a serial-link robot driven by joint torques: the robot plant.

    Input tau (n) (N·m; N for a prismatic joint):

        M(q)·qdd = tau - C(q, qd)·qd - g(q) - F(qd),   d[q; qd]/dt = [qd; qdd]

    with q(0) = q0, qd(0) = qd0 (a scalar applies to every joint). Outputs q (n) and qd (n)
    are the continuous state (no feedthrough); qdd (n) depends on tau at the same instant.

    Coulomb friction (coulomb_band = delta > 0 rad/s, default 1e-3): the Coulomb term
    |G_j|·Tc_j·sign(qd_j) is discontinuous at qd_j = 0, where a joint at rest chatters and
    adaptive solvers crawl. The block replaces sign by the saturated ramp clip(qd/delta, -1, 1):

        Fc_j = |G_j|·Tc+_j·min(qd_j/delta, 1)    for qd_j >= 0
        Fc_j = |G_j|·Tc-_j·min(-qd_j/delta, 1)   for qd_j < 0

    equal to robots.md's friction for |qd_j| >= delta, continuous (Lipschitz) inside. The
    plant is the robot without Coulomb friction (nofriction('coulomb'), viscous kept) driven
    by tau - Fc(qd). Trade-off: inside the band Coulomb friction is a viscous damper
    |G|·Tc/delta, so a joint that should stick creeps at qd = delta·tau_net/(|G|·Tc), and
    the ODE gains a fast mode of rate ~|G|·Tc/(delta·M_jj) that limits an explicit solver's
    step. A wider band integrates faster but creeps more; a narrower one is more faithful
    and stiffer. (Puma 560, friction: full, falling from qz for 10 s: rk45 needs ~230k
    evaluations with the default band and ~23k with 1e-2; bdf or radau ~1k; the exact
    friction, 19M.) coulomb_band = 0 keeps the exact discontinuous friction. Robots without
    Coulomb friction (friction: viscous or none) are not affected.
    """

    type = "robot"
    params = (
        robot_param(),
        Param("q0", "value", 0.0, "initial joint coordinates (n,) or scalar"),
        Param("qd0", "value", 0.0, "initial joint velocities (n,) or scalar"),
        Param("coulomb_band", "scalar", 1e-3,
              "velocity band (rad/s) in which Coulomb friction is a ramp; 0: exact", minimum=0.0),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        n = self.n
        self._x0 = np.concatenate([_joint_vector(self.p, "q0", n), _joint_vector(self.p, "qd0", n)])
        self._up, self._down = self.robot.coulomb_levels()
        band = self.p.coulomb_band
        self._regularised = band > 0 and bool(np.any(self._up) or np.any(self._down))
        if self._regularised:
            plant = self.robot.nofriction("coulomb")
            self._k, self._P, self._W, self._g = plant.kernel_args()
            self._inv_band = 1.0 / band
        self._tau = np.zeros(n)
        self._fext = np.zeros(6)

    def ports(self):
        n = self.n
        return ([In("tau", shape=(n,), doc="joint torques/forces")],
                [Out("q", shape=(n,), feedthrough=(), state=slice(0, n)),
                 Out("qd", shape=(n,), feedthrough=(), state=slice(n, 2 * n)),
                 Out("qdd", shape=(n,), feedthrough=("tau",), calc="acceleration")])

    def continuous_state(self):
        return self._x0

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        n = self.n
        self._q, self._qd = x[:n], x[n:]
        self._dq, self._dqd = dx[:n], dx[n:]
        self._drive = self._tau if self._regularised else u[0]

    def acceleration(self, t):
        qd = self._qd
        if self._regularised:
            self._k.subtract_coulomb(qd, self.u[0], self._up, self._down, self._inv_band,
                                     self._tau)
        try:
            self._k.accel(self._P, self._W, self._g, self._q, qd, self._drive, self._fext,
                          self.y[2])
        except ValueError as e:
            raise SimulationError(f"forward dynamics failed: {e}", block=self.name, port="qdd",
                                  time=t) from None

    def derivative(self, t):
        np.copyto(self._dq, self._qd)
        np.copyto(self._dqd, self.y[2])


class Rne(RobotBlock):
    """Inverse dynamics tau(q, qd, qdd) by recursive Newton-Euler, with motor inertia and friction.

        tau = M(q)·qdd + C(q, qd)·qd + g(q) + F(qd) + Jn(q)^T·fext

    Inputs q, qd, qdd (n); fext (6, optional, default 0) = [Fx Fy Fz Mx My Mz], the wrench
    the tool exerts on the environment, in the tool frame with the moment about the tool
    point. gravity (3,): the upward acceleration that models gravity, world frame (default:
    the robot's, normally [0, 0, 9.81]). Output tau (n).
    """

    type = "rne"
    params = (
        robot_param(),
        Param("gravity", "value", (), "gravity vector [gx, gy, gz] (m/s^2; default: the robot's)"),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        gravity = self.p.gravity
        if gravity.size:
            if gravity.shape != (3,):
                raise ParamError("gravity", f"expected 3 values, got shape {gravity.shape}")
            self._g = self.robot.kernel_args(gravity)[3]

    def ports(self):
        n = self.n
        return ([In("q", shape=(n,)), In("qd", shape=(n,)), In("qdd", shape=(n,)),
                 In("fext", shape=(6,), optional=True, doc="tool wrench [F; M], tool frame")],
                [Out("tau", shape=(n,))])

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        # an unwired fext is a read-only zero vector: use a writable one (one compiled kernel)
        self._fext = u[3] if u[3].flags.writeable else np.zeros(6)

    def output(self, t):
        q, qd, qdd, _ = self.u
        self._k.rne(self._P, self._W, self._g, q, qd, qdd, self._fext, self.y[0])


class GravLoad(RobotBlock):
    """Gravity torque g(q) = rne(q, 0, 0) (n) at joint coordinates q (n), with the robot's
    gravity."""

    type = "gravload"

    def __init__(self, name, params):
        super().__init__(name, params)
        self._zero = np.zeros(self.n)
        self._fext = np.zeros(6)

    def ports(self):
        return [In("q", shape=(self.n,))], [Out("tau", shape=(self.n,))]

    def output(self, t):
        z = self._zero
        self._k.rne(self._P, self._W, self._g, self.u[0], z, z, self._fext, self.y[0])


class Inertia(RobotBlock):
    """Joint-space inertia matrix M(q) (n, n) at joint coordinates q (n).

    Computed by the composite-rigid-body algorithm; the motor inertia G^2·Jm is on the
    diagonal.
    """

    type = "inertia"

    def ports(self):
        return [In("q", shape=(self.n,))], [Out("M", shape=(self.n, self.n))]

    def output(self, t):
        self._k.inertia(self._P, self._W, self.u[0], self.y[0])
