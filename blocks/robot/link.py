"""One link of a serial-link robot: Denavit–Hartenberg kinematics and rigid-body dynamics.

Standard DH (Paul): ``A = Rz(θ)·Tz(d)·Tx(a)·Rx(α)``; modified DH (Craig):
``A = Rx(α)·Tx(a)·Rz(θ)·Tz(d)`` where α, a are then α_{j-1}, a_{j-1}. A revolute joint has
θ = q + offset (its fixed ``d`` is a parameter), a prismatic joint d = q + offset (its fixed
``theta`` is a parameter). Units: SI, radians.
"""

import math

import numpy as np

_CONVENTIONS = ("standard", "modified")
_TYPES = ("revolute", "prismatic")


def _frozen(x, shape):
    a = np.array(x, dtype=np.float64)
    if a.shape != shape:
        raise ValueError(f"expected shape {shape}, got {a.shape}")
    a.setflags(write=False)
    return a


def inertia_tensor(I):
    """A 3x3 symmetric inertia tensor from 6 values [Ixx Iyy Izz Ixy Iyz Ixz] or a 3x3."""
    a = np.asarray(I, dtype=np.float64)
    if a.shape == (6,):
        xx, yy, zz, xy, yz, xz = a
        a = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    elif a.shape == (3, 3):
        if (a != a.T).any():  # exactly symmetric (the usual case) skips the slower allclose
            if not np.allclose(a, a.T, rtol=1e-12, atol=1e-15):
                raise ValueError("inertia tensor is not symmetric")
            a = (a + a.T) / 2
    else:
        raise ValueError(f"inertia needs 6 values [Ixx Iyy Izz Ixy Iyz Ixz] or a 3x3, "
                         f"got shape {a.shape}")
    return a


def check_friction(B, Tc):
    """Raise ValueError unless viscous friction B >= 0 and Coulomb friction Tc = [Tc+, Tc-]
    (or one value t meaning [t, -t]) has Tc+ >= 0 >= Tc-: both must oppose motion, since the
    friction torque is |G|·(B·|G|·q̇ + Tc+) for q̇ > 0 and |G|·(B·|G|·q̇ + Tc-) for q̇ < 0."""
    if not B >= 0:
        raise ValueError(f"B = {B:g}: viscous friction (motor side) opposes motion, so B >= 0")
    tc = np.asarray(Tc, dtype=np.float64)
    if tc.ndim == 0:
        if not tc >= 0:
            raise ValueError(f"Tc = {float(tc):g}: one value t means [Tc+, Tc-] = [t, -t], "
                             "so t >= 0")
        return
    if not (tc[0] >= 0 and tc[1] <= 0):
        meant = f"[{abs(tc[0]):g}, {-abs(tc[1]):g}]"
        raise ValueError(
            f"Tc = [{tc[0]:g}, {tc[1]:g}]: Coulomb friction is [Tc+, Tc-], the friction torque "
            "(motor side) at positive and at negative joint velocity, as in the Robotics "
            "Toolbox; it opposes motion, so Tc+ >= 0 and Tc- <= 0"
            + (f" (did you mean {meant}?)" if np.isfinite(tc).all() else ""))


class Link:
    """Kinematic and dynamic parameters of one link (immutable by convention).

    Parameters: ``alpha, a`` (rad, m), ``theta`` (rad, fixed; prismatic only), ``d`` (m, fixed;
    revolute only), ``type`` 'revolute' | 'prismatic', ``offset`` added to q, ``qlim``
    [min, max] or None (stored as nan), ``m`` (kg), ``r`` (3,) COM in the link frame (m),
    ``I`` inertia about the COM in the link frame (6 values [Ixx Iyy Izz Ixy Iyz Ixz] or 3x3,
    kg·m², stored 3x3), ``Jm`` motor inertia (kg·m², motor side), ``G`` signed gear ratio,
    ``B`` viscous friction (N·m·s/rad, motor side), ``Tc`` Coulomb friction [Tc+, Tc-]
    (N·m, motor side; a scalar t means [t, -t]), ``convention`` 'standard' | 'modified'.
    """

    __slots__ = ("alpha", "a", "theta", "d", "sigma", "offset", "qlim", "m", "r", "I",
                 "Jm", "G", "B", "Tc", "convention")

    def __init__(self, alpha=0.0, a=0.0, theta=0.0, d=0.0, type="revolute", offset=0.0,
                 qlim=None, m=0.0, r=(0.0, 0.0, 0.0), I=(0.0,) * 6, Jm=0.0, G=1.0, B=0.0,
                 Tc=(0.0, 0.0), convention="standard"):
        if type not in _TYPES:
            raise ValueError(f"type must be 'revolute' or 'prismatic', got {type!r}")
        if convention not in _CONVENTIONS:
            raise ValueError(f"convention must be 'standard' or 'modified', got {convention!r}")
        if type == "revolute" and theta != 0.0:
            raise ValueError("a revolute joint has theta = q + offset: give offset, not theta")
        if type == "prismatic" and d != 0.0:
            raise ValueError("a prismatic joint has d = q + offset: give offset, not d")
        if np.shape(Tc) in ((), (2,)):  # other shapes: _frozen's message
            check_friction(float(B), Tc)
        if np.ndim(Tc) == 0:
            Tc = (Tc, -Tc)
        self.alpha = float(alpha)
        self.a = float(a)
        self.theta = float(theta)
        self.d = float(d)
        self.sigma = 0 if type == "revolute" else 1
        self.offset = float(offset)
        self.qlim = _frozen((np.nan, np.nan) if qlim is None else qlim, (2,))
        self.m = float(m)
        self.r = _frozen(r, (3,))
        self.I = _frozen(inertia_tensor(I), (3, 3))
        self.Jm = float(Jm)
        self.G = float(G)
        self.B = float(B)
        self.Tc = _frozen(Tc, (2,))
        self.convention = convention

    @property
    def type(self):
        """'revolute' or 'prismatic'."""
        return _TYPES[self.sigma]

    @property
    def isrevolute(self):
        return self.sigma == 0

    @property
    def isprismatic(self):
        return self.sigma == 1

    @property
    def mdh(self):
        """True for modified DH."""
        return self.convention == "modified"

    def replace(self, **changes):
        """A copy with some parameters changed (keyword names as in the constructor)."""
        kw = {k: getattr(self, k) for k in ("alpha", "a", "theta", "d", "type", "offset", "m",
                                             "r", "I", "Jm", "G", "B", "Tc", "convention")}
        kw["qlim"] = None if np.isnan(self.qlim).all() else self.qlim
        kw.update(changes)
        return Link(**kw)

    def A(self, q):
        """Link transform (4, 4) for joint value q (rad or m)."""
        v = float(q) + self.offset
        th, d = (v, self.d) if self.sigma == 0 else (self.theta, v)
        ct, st = math.cos(th), math.sin(th)
        ca, sa = math.cos(self.alpha), math.sin(self.alpha)
        a = self.a
        if self.mdh:
            return np.array([[ct, -st, 0.0, a],
                             [ca * st, ca * ct, -sa, -sa * d],
                             [sa * st, sa * ct, ca, ca * d],
                             [0.0, 0.0, 0.0, 1.0]])
        return np.array([[ct, -st * ca, st * sa, a * ct],
                         [st, ct * ca, -ct * sa, a * st],
                         [0.0, sa, ca, d],
                         [0.0, 0.0, 0.0, 1.0]])

    def nofriction(self, what="coulomb"):
        """A copy with Coulomb friction zeroed ('coulomb') or Coulomb and viscous ('all')."""
        if what not in ("coulomb", "all"):
            raise ValueError(f"nofriction: what must be 'coulomb' or 'all', got {what!r}")
        return self.replace(Tc=(0.0, 0.0), B=0.0 if what == "all" else self.B)

    def __repr__(self):
        var = "theta=q" if self.sigma == 0 else "d=q"
        return (f"Link({self.type}, {self.convention}, {var}, alpha={self.alpha:g}, a={self.a:g}, "
                f"{'d' if self.sigma == 0 else 'theta'}={self.d if self.sigma == 0 else self.theta:g}, "
                f"offset={self.offset:g}, m={self.m:g})")
