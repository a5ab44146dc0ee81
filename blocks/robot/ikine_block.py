"""The inverse-kinematics block: a pose in, the joint coordinates that reach it out."""
import numpy as np

from blocksim.block import In, Out
from blocksim.errors import SimulationError
from blocksim.params import Param, ParamError

from .ikine import IKineError, _check_6s, _config, ikine, ikine6s
from .kinematics_blocks import RobotBlock, joint_names, robot_param


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

    def __init__(self, name, params):
        super().__init__(name, params)
        p, n = self.p, self.n
        if p.method == "analytic":
            try:
                _check_6s(self.robot)
            except ValueError as e:
                raise ParamError("method", f"{e}: use method numerical") from None
            try:
                _config(p.config)
            except ValueError as e:
                raise ParamError("config", str(e)) from None
            self._solve = self._analytic
        else:
            self._solve = self._numerical
        try:
            self._q0 = np.broadcast_to(p.q0, (n,)).astype(float)
        except ValueError:
            raise ParamError("q0", f"expected a scalar or {n} joint values, got shape "
                                   f"{p.q0.shape}") from None
        if p.mask.size not in (1, 6) or not p.mask.any():
            raise ParamError("mask", "expected one weight or 6 weights >= 0, not all zero")
        self._mask = np.broadcast_to(p.mask.ravel(), (6,)).astype(float)

    def ports(self):
        return [In("T", shape=(4, 4), doc="pose, world frame")], \
            [Out("q", shape=(self.n,), elements=joint_names("q", (self.n,)))]

    def _numerical(self, T):
        return ikine(self.robot, T, self._q0, self._mask)

    def _analytic(self, T):
        return ikine6s(self.robot, T, self.p.config)

    def output(self, t):
        try:
            np.copyto(self.y[0], self._solve(self.u[0]))
        except IKineError as e:
            raise SimulationError(f"no inverse kinematic solution: {e}", block=self.name,
                                  port="q", time=t) from None
