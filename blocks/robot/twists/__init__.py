"""Twists and the product of exponentials (Murray, Li & Sastry; seed 004): the Lie-group
algebra, PoE kinematics, Jacobians and Lagrangian dynamics of open chains, robots defined by
twists (``TwistRobot``) and the twists of a DH robot. The symbolic versions (sympy) are in
``blocks.robot.twists.symbolic``, imported on demand.
"""

from .lie import (Ad, ad, exp_rot, exp_twist, inverse, log_rot, log_twist, screw, skew,
                  translation, unskew, vee, wedge)
from .chain import (body_jacobian, christoffel, coriolis_matrix, generalized_inertia,
                    link_body_jacobian, mass_matrix, mass_matrix_derivatives, poe,
                    spatial_jacobian)
from .dh import dh_home_frames, twists_from_dh
from .robot import TwistRobot, default_frames
