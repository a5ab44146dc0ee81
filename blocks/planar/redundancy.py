"""Self-motion of a redundant planar arm driven by an index gradient (seed 001, eq. 14)."""
from __future__ import annotations

import numpy as np

from .kinematics import kinmodel

__all__ = ["null_space_climb"]


def null_space_climb(q0, L, index, gain=10.0, dt=1e-3, tol=1e-3, max_steps=1_000_000):
    """Move in the null space of J along an index gradient until the motion dies out.

    Eq. (14) with no task motion (xd_dot = 0): qd = gain (I - J^+ J) grad(q), with
    J^+ = J^T (J J^T)^-1, integrated by explicit Euler, q <- q + dt qd, until |qd| < tol
    (the paper's loop in section 4.1). The tip stays fixed up to the Euler error O(dt^2)
    per step. gain > 0 climbs the index, gain < 0 descends it.

    q0, L: (n,) start angles (rad) and link lengths (m); index(q) -> (value, grad (n,)),
    e.g. ``lambda q: idxman(q, L)``. Returns (q (n,), value at q, number of steps); raises
    RuntimeError if |qd| is still >= tol after max_steps.
    """
    q = np.array(q0, dtype=np.float64)
    zeros = np.zeros_like(q)
    for step in range(1, max_steps + 1):
        _, J, _ = kinmodel(q, zeros, L)
        grad = index(q)[1]
        qd = gain * (grad - J.T @ np.linalg.solve(J @ J.T, J @ grad))
        q += dt * qd
        if np.linalg.norm(qd) < tol:
            return q, index(q)[0], step
    raise RuntimeError(f"null-space motion did not settle in {max_steps} steps")
