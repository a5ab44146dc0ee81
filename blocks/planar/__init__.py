"""Planar n-R manipulators (Zlajpah, seed 001): kinematics, dynamics, redundancy indices.

Pure functions on (n,) arrays, compiled with numba when available (``blocks.robot._jit``;
the kernels are scalar loops over math.sin/cos with a fixed summation order, so the compiled
and the plain-Python path, BLOCKSIM_NO_JIT=1, give the same numbers bit for bit):
``kinmodel``, ``kin_link``, ``dynmodel`` (the paper's six values x, J, Jd, H, h, g),
``inertia_rate`` (dH/dt), ``forward_dynamics``, ``idxman``, ``idxcn``, ``idxgrav`` and the
self-motion helper ``null_space_climb``.
"""
from .dynamics import dynmodel, forward_dynamics, inertia_rate
from .indices import idxcn, idxgrav, idxman
from .kinematics import kin_link, kinmodel
from .redundancy import null_space_climb

__all__ = ["kinmodel", "kin_link", "dynmodel", "inertia_rate", "forward_dynamics", "idxman",
           "idxcn", "idxgrav", "null_space_climb"]
