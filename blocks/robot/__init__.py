"""Robotics toolbox core: serial-link robots, kinematics, dynamics, transforms, trajectories.

Importable without any diagram: ``from blocks.robot import load_robot``.
"""

from .transforms import (diff2tr, eul2tr, ishomog, oa2tr, rot2tr, rotvec, rotx, roty, rotz,
                         rpy2tr, skew, tr2diff, tr2eul, tr2jac, tr2rot, tr2rpy, transl, trnorm,
                         trotx, troty, trotz)
from .quaternion import Quaternion, qinterp
from .trajectory import CartesianTrajectory, QuinticTrajectory, ctraj, jtraj, trinterp
from .mstraj import ViaPointTrajectory, mstraj
from .link import Link
from .robot_base import RobotBase
from .serial_link import SerialLink
from .models import RobotDataError, load_robot, robot_from_dict
from .ikine import IKineError, ikine, ikine560, ikine6s
from .analysis import cinertia, fdyn, gravjac, itorque, maniplty, paycap
from .twists import TwistRobot, twists_from_dh
