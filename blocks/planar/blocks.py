"""Blocks for planar n-R manipulators (Zlajpah, seed 001): kinematics, the complete model,
the forward-dynamics plant, redundancy indices and the task-plane animation.

Link data (all (n,), scalars broadcast): L link lengths (m), Lc joint-to-COM distances (m),
m link masses (kg), ml point masses at the link tips (kg), I link inertias about the COM
(kg m^2), B viscous joint friction (N m s/rad); gravity g0 (m/s^2) acts along -y.
Joint angles are relative. The hot paths call the library's compiled kernels on arrays
validated once at compile time.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from blocksim.accel.lowering import Lowering
from blocksim.block import Block, In, Out
from blocksim.params import Param, ParamError

from .dynamics import _dynmodel, _forward_dynamics
from .indices import _idxcn, _idxgrav, _idxman, gravity_weight
from .kinematics import _kinmodel

LINK_PARAMS = (
    Param("L", doc="link lengths (n,) m"),
    Param("Lc", doc="joint-to-COM distances (n,) m"),
    Param("m", doc="link masses (n,) kg"),
    Param("ml", "value", 0.0, "point masses at the link tips (n,) kg"),
    Param("I", doc="link inertias about the COM (n,) kg m^2"),
    Param("B", "value", 0.0, "viscous joint friction (n,) N m s/rad"),
    Param("g0", "scalar", 9.81, "gravity along -y, m/s^2"),
)


# compiled forms (accelerated mode): the kernels in C, operation by operation as the
# interpreted ones (numba or plain Python), on the link data (run data P_L ... P_g0)
KERNELS = (Path(__file__).parents[1] / "robot" / "_kernel_rows.c",  # cholesky_solve
           Path(__file__).with_name("_kernels.c"))
LINKS = ("L", "Lc", "m", "ml", "I", "B")


def _arm(n, code):
    """C: the arm's link data (`arm`), a work array, then `code`."""
    return (f"PlanarArm arm = {{{', '.join(f'P_{k}' for k in LINKS)}, P_g0[0], {n}}}; "
            f"double work[PLANAR_WORK({n})]; (void)arm;\n{code}")


class _Arm(Block):
    """A block on an arm's link data (LINK_PARAMS): `_links(p)` gives its run data ({name:
    array}: the link data and g0, and what a subclass adds), declared in that order and
    bound as `self._data` (L, Lc, m, ml, I, B) and `self.v.g0` for the kernels."""

    _values = tuple(p.name for p in LINK_PARAMS)

    def _links(self, p):
        return {**dict(zip(LINKS, _link_data(p))), "g0": float(p.g0)}

    def declare(self, d):
        for name, value in self._links(self.p).items():
            d.derived(name, np.shape(value))
        d.value(*self._values)

    def derive(self, p):
        return self._links(p)

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._data = tuple(getattr(self.v, k) for k in LINKS)


def _lengths(p):
    L = np.ascontiguousarray(p.L, dtype=float).ravel()
    if L.size == 0:
        raise ParamError("L", "L must list at least one link length")
    if not (L > 0).all():
        raise ParamError("L", "link lengths must be > 0")
    return L


def _link_data(p):
    """(L, Lc, m, ml, I, B) as contiguous (n,) arrays; scalars broadcast; ParamError else."""
    L = _lengths(p)
    n = L.size
    out = [L]
    for name in ("Lc", "m", "ml", "I", "B"):
        v = np.asarray(getattr(p, name), dtype=float)
        if v.size == 1:
            v = np.full(n, float(v.reshape(())))
        if v.shape != (n,):
            raise ParamError(name, f"{name} must be a scalar or have {n} values (one per link), "
                                   f"got shape {v.shape}")
        if name != "Lc" and (v < 0).any():
            raise ParamError(name, f"{name} must be >= 0")
        out.append(np.ascontiguousarray(v))
    return tuple(out)


def _vector(p, name, n):
    v = np.asarray(getattr(p, name), dtype=float)
    if v.size == 1:
        v = np.full(n, float(v.reshape(())))
    if v.shape != (n,):
        raise ParamError(name, f"{name} must be a scalar or have {n} values, got shape {v.shape}")
    return v


class PlanarKinematics(Block):
    """Tip position x (2), Jacobian J (2,n) and its derivative Jd of a planar n-R arm.

    x, J, Jd = kinmodel(q, qd, L) of Zlajpah, "Simulation of n-R planar manipulators"
    (1998), eqs. 2-8.

    Inputs: q (n) joint angles (rad), qd (n) joint rates (rad/s).
    Outputs: x (2) tip position (m), J (2,n), Jd (2,n).
    Parameters: L link lengths (n,).
    """

    type = "planar_kinematics"
    params = (Param("L", doc="link lengths (n,) m"),)

    def __init__(self, name, params):
        super().__init__(name, params)
        self._n = _lengths(self.p).size

    def ports(self):
        n = self._n
        return ([In("q", shape=(n,)), In("qd", shape=(n,))],
                [Out("x", shape=(2,)), Out("J", shape=(2, n)), Out("Jd", shape=(2, n))])

    def declare(self, d):
        d.derived("L", (self._n,))
        d.value("L")

    def derive(self, p):
        return {"L": _lengths(p)}

    def output(self, t):
        # the kernel's buffer is [x, J, Jd] flattened: the outputs' consecutive layout
        self.y_flat[:] = _kinmodel(self.u[0], self.u[1], self.v.L)

    def lower(self, c):
        n = self._n
        return Lowering({"output": f"double work[{3 * n}]; "
                                   f"planar_kinmodel({n}, in_q, in_qd, P_L, out_x, work);"},
                        support=KERNELS)


class PlanarModel(_Arm):
    """The complete kinematic and dynamic model of a planar n-R arm: x, J, Jd, H, Hd, h, g.

    x, J, Jd, H, h, g = dynmodel(q, qd, L, Lc, m, ml, I, B) of Zlajpah, "Simulation of
    n-R planar manipulators" (1998), eq. 12, gravity by the corrected eq. 13, and
    Hd = inertia_rate(...) = dH/dt:

        H(q) qdd + h(q, qd) + g(q) = tau,   h = Coriolis/centrifugal + B qd,

    so that the power balance reads qd'(h - B qd) = 1/2 qd' Hd qd.
    Inputs: q (n), qd (n). Outputs: x (2), J (2,n), Jd (2,n), H (n,n), Hd (n,n), h (n), g (n).
    Parameters: the link data L, Lc, m, ml, I, B and g0.
    """

    type = "planar_model"
    params = LINK_PARAMS

    def __init__(self, name, params):
        super().__init__(name, params)
        self._n = _lengths(self.p).size

    def ports(self):
        n = self._n
        return ([In("q", shape=(n,)), In("qd", shape=(n,))],
                [Out("x", shape=(2,)), Out("J", shape=(2, n)), Out("Jd", shape=(2, n)),
                 Out("H", shape=(n, n)), Out("Hd", shape=(n, n)), Out("h", shape=(n,)),
                 Out("g", shape=(n,))])

    def output(self, t):
        # the kernel's buffer is [x, J, Jd, H, Hd, h, g] flattened: the outputs' layout
        self.y_flat[:] = _dynmodel(self.u[0], self.u[1], *self._data, self.v.g0[()])

    def lower(self, c):
        return Lowering({"output": _arm(self._n, "planar_dynmodel(&arm, in_q, in_qd, out_x, "
                                                 "work);")}, support=KERNELS)


class PlanarRobot(_Arm):
    """Forward dynamics of a planar n-R arm driven by joint torques: the plant.

        d/dt [q, qd] = [qd, qdd],   H(q) qdd = tau - h(q, qd) - g(q)

    (Zlajpah, "Simulation of n-R planar manipulators" (1998), eq. 12.)

    Inputs: tau (n) joint torques (N m). Outputs: q (n) and qd (n) (state), qdd (n)
    (depends on tau). Parameters: the link data L, Lc, m, ml, I, B, g0, and the initial
    state q0, qd0 (scalars broadcast).
    """

    type = "planar_robot"
    params = LINK_PARAMS + (
        Param("q0", "value", 0.0, "initial joint angles (n,) rad"),
        Param("qd0", "value", 0.0, "initial joint rates (n,) rad/s"),
    )

    _values = _Arm._values + ("q0", "qd0")

    def __init__(self, name, params):
        super().__init__(name, params)
        self._n = _lengths(self.p).size
        self.continuous_state()  # checks q0 and qd0

    def ports(self):
        n = self._n
        return ([In("tau", shape=(n,))],
                [Out("q", shape=(n,), state=slice(0, n)),
                 Out("qd", shape=(n,), state=slice(n, 2 * n)),
                 Out("qdd", shape=(n,), feedthrough=("tau",))])

    def continuous_state(self):
        n = self._n
        return np.concatenate([_vector(self.p, "q0", n), _vector(self.p, "qd0", n)])

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        n = self._n
        self._q, self._qd = x[:n], x[n:]
        self._dq, self._dqd = dx[:n], dx[n:]

    def output(self, t):
        self.y[2][...] = _forward_dynamics(self._q, self._qd, self.u[0], *self._data,
                                           self.v.g0[()])

    def derivative(self, t):
        self._dq[...] = self._qd
        self._dqd[...] = self.y[2]

    def lower(self, c):
        n = self._n
        return Lowering({
            "output": _arm(n, f"double H[{n * n}];\nif (planar_forward_dynamics(&arm, x, x + {n}, "
                              "in_tau, out_qdd, H, work)) FAIL(\"inertia matrix is not positive "
                              "definite (check the link data)\");"),
            "derivative": c.loop(n, f"dx[i] = x[{n} + i]; dx[{n} + i] = out_qdd[i];")},
            support=KERNELS)


class PlanarIndex(_Arm):
    """A redundancy index of a planar n-R arm and its gradient in q.

    From Zlajpah, "Simulation of n-R planar manipulators" (1998), eqs. 15-24:

        manipulability  w = sqrt(det(J J'))                 (idxman, eqs. 16, 19, 21)
        condition       rho = s_max / s_min of J J' = cond(J)^2   (idxcn, eqs. 15, 18, 20)
        gravity         p = g' W g                          (idxgrav, eqs. 22-24)

    Input: q (n). Outputs: value (scalar), grad (n).
    Parameters: kind, L; for `gravity` also Lc, m, ml, g0 and the weight W ((n,) diagonal or
    (n,n); default identity).
    """

    type = "planar_index"
    params = (
        Param("kind", "choice", "manipulability", "which index",
              choices=("manipulability", "condition", "gravity")),
        Param("L", doc="link lengths (n,) m"),
        Param("Lc", "value", 0.0, "joint-to-COM distances (gravity)"),
        Param("m", "value", 0.0, "link masses (gravity)"),
        Param("ml", "value", 0.0, "tip masses (gravity)"),
        Param("W", "value", None, "weight of the gravity index: (n,) or (n,n); default I"),
        Param("g0", "scalar", 9.81, "gravity along -y, m/s^2"),
    )

    _values = ("L", "Lc", "m", "ml", "W", "g0")

    def __init__(self, name, params):
        super().__init__(name, params)
        self._n = _lengths(self.p).size
        self._links(self.p)  # checks the link data and the weight

    def _links(self, p):
        """L; the gravity index also the link data (no inertias or friction), g0 and its
        weight Ws (n, n)."""
        L = _lengths(p)
        if p.kind != "gravity":
            return {"L": L}
        n = L.size
        Lc, m, ml = (np.ascontiguousarray(_vector(p, k, n)) for k in ("Lc", "m", "ml"))
        try:
            Ws = gravity_weight(p.W, n)
        except ValueError as e:
            raise ParamError("W", str(e)) from None
        return {"L": L, "Lc": Lc, "m": m, "ml": ml, "I": np.zeros(n), "B": np.zeros(n),
                "g0": float(p.g0), "Ws": Ws}

    def bind(self, u, y, x, dx, xd):
        # the kernels of idxman, idxcn and idxgrav ([value, gradient]) on the run data
        Block.bind(self, u, y, x, dx, xd)
        v, kind = self.v, self.p.kind
        if kind == "manipulability":
            self._index = lambda q: _idxman(q, v.L)
        elif kind == "condition":
            self._index = lambda q: _idxcn(q, v.L)
        else:
            self._index = lambda q: _idxgrav(q, v.L, v.Lc, v.m, v.ml, v.g0[()], v.Ws)

    def ports(self):
        n = self._n
        return [In("q", shape=(n,))], [Out("value", shape=()), Out("grad", shape=(n,))]

    def output(self, t):
        out = self._index(self.u[0])
        self.y[0][...] = out[0]
        self.y[1][...] = out[1:]

    # compiled: out_value and out_grad are consecutive, as the kernels' [value, gradient]
    def lower(self, c):
        n, kind = self._n, self.p.kind
        if kind == "gravity":
            code = _arm(n, "planar_idxgrav(&arm, in_q, P_Ws, out_value, work);")
        else:
            name = "idxman" if kind == "manipulability" else "idxcn"
            why = ("manipulability gradient undefined at a singular configuration"
                   if kind == "manipulability" else
                   "condition-number gradient undefined (singular or isotropic J)")
            code = (f"double work[{8 * n + 3}];\nif (planar_{name}({n}, in_q, P_L, out_value, "
                    f'work)) FAIL("{why}");')
        return Lowering({"output": code}, support=KERNELS)
