"""A linear model's transfer matrix G(s) = C (sI - A)^-1 B + D (G(z) of a discrete model),
evaluated at many frequencies and at the origin, where it is delicate.

Both work on A's complex Schur form A = Z T Z^H (T upper triangular), computed once and
backward stable: each point is then a triangular solve (python-control's evaluation solves
a full system per point: 45 ms each at 200 states). At s = 0 (z = 1) the eigenvalues at the
origin (integrators; within `ORIGIN` of it, relative) are ordered first and decoupled from
the others by a Sylvester equation, T = W diag(T0, T1) W^-1, which splits G exactly into

    G(s) = sum_k C0 T0^k B0 / s^(k+1)  +  D + C1 (sI - T1)^-1 B1,

the first sum finite (T0 nilpotent). A channel is infinite where a term of that sum is
above rounding, else its DC gain is D - C1 T1^-1 B1, reported as 0 when it is within the
rounding of the terms that make it: where those cancel exactly (a rate's gain, zero by the
model's structure) a value there is rounding, not a gain.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

ORIGIN = 1e-9  # an eigenvalue this close to the origin (relative to A's largest) is a pole there
ROUNDING = 1e3 * np.finfo(float).eps  # relative rounding of a sum of terms, with a margin


def state_space(system):
    """A python-control system (a transfer function too) as a StateSpace."""
    import control
    return system if isinstance(system, control.StateSpace) else control.ss(system)


class Response:
    """G of a python-control system at complex points (see the module docstring)."""

    def __init__(self, system):
        system = state_space(system)
        A, B, C = (np.asarray(m, dtype=float) for m in (system.A, system.B, system.C))
        self.D = np.asarray(system.D, dtype=float)
        self.dt = system.dt if system.isdtime(strict=True) else None
        if len(A):
            T, Z = scipy.linalg.schur(A, output="complex")
        else:
            T, Z = np.zeros((0, 0), complex), np.zeros((0, 0), complex)
        self.T, self.ZB, self.CZ = T, Z.conj().T @ B, C @ Z

    def at(self, points):
        """G at the complex points (s, or z for a discrete model): (points, outputs,
        inputs); inf at a pole."""
        out = np.empty((len(points),) + self.D.shape, dtype=complex)
        eye = np.eye(len(self.T))
        for k, s in enumerate(points):
            try:
                with np.errstate(all="ignore"):
                    x = scipy.linalg.solve_triangular(s * eye - self.T, self.ZB,
                                                      check_finite=False)
                out[k] = self.CZ @ x + self.D
            except np.linalg.LinAlgError:  # exactly at a pole
                out[k] = np.inf
        return out

    def frequency(self, w):
        """G(jw) (G(e^(jw dt)) of a discrete model) at the angular frequencies w (rad/s)."""
        w = np.asarray(w, dtype=float)
        return self.at(np.exp(1j * w * self.dt) if self.dt is not None else 1j * w)

    def dc_gain(self):
        """G(0) (G(1) of a discrete model), outputs x inputs: +-inf where poles at the origin
        reach a channel (the sign of G(s) for small s > 0), 0 where the gain is within
        rounding of 0 (see the module docstring)."""
        n = len(self.T)
        M = self.T - (np.eye(n) if self.dt is not None else 0)  # z = 1 + s
        size = max(1.0, np.abs(np.diag(M)).max(initial=0.0))
        T, Z, m = scipy.linalg.schur(M, output="complex",
                                     sort=lambda x: abs(x) <= ORIGIN * size)
        T0, T01, T1 = T[:m, :m], T[:m, m:], T[m:, m:]
        X = scipy.linalg.solve_sylvester(T0, -T1, -T01) if m and m < n else np.zeros((m, n - m))
        ZB, CZ = Z.conj().T @ self.ZB, self.CZ @ Z
        B0, B1 = ZB[:m] - X @ ZB[m:], ZB[m:]
        C0, C1 = CZ[:, :m], CZ[:, :m] @ X + CZ[:, m:]
        x = np.linalg.solve(T1, B1) if n - m else B1
        gain = self.D - C1 @ x
        scale = np.abs(self.D) + np.abs(C1) @ np.abs(x)
        gain = np.where(np.abs(gain) <= ROUNDING * scale, 0.0, gain.real)
        # the poles at the origin: C0 T0^k B0 against the rounding of C B at the slowest
        # other pole (rho), where both parts of G have the size of C B / rho
        rho = np.abs(np.diag(T1)).min(initial=size)
        growth = (1 + np.linalg.norm(X, 2)) ** 2
        reference = ROUNDING * growth * np.outer(np.linalg.norm(self.CZ, axis=1),
                                                 np.linalg.norm(self.ZB, axis=0))
        power = B0
        for k in range(m):
            residue = C0 @ power
            big = np.abs(residue) > reference * rho ** k
            gain = np.where(big, np.copysign(np.inf, residue.real), gain)
            power = T0 @ power
        return gain
