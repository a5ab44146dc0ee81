"""A robot defined by joint twists (product of exponentials), with SerialLink's method names.

``TwistRobot(twists, home, frames=None, m=None, r=None, I=None, Jm=None, G=None, B=None,
Tc=None, qlim=None, name='', manufacturer='', gravity=(0, 0, 9.81), base=None, tool=None,
poses=None, comment='')``

- ``twists`` (n, 6): rows ξ_j = (v, ω) in the base frame at q = 0 (seed 004 eq. 3-27/3-28):
  |ω| = 1 for a revolute (or helical) joint, ω = 0 and |v| = 1 for a prismatic joint, so q
  is in radians or metres. ``home`` (4, 4): the tool pose g_st(0) at q = 0 in the base frame.
- ``frames`` (n, 4, 4): home poses g_sl_j(0) of the link frames (``default_frames`` when
  None); ``m`` (n,) kg, ``r`` (n, 3) centre of mass in the link frame (m), ``I`` (n, 3, 3)
  or (n, 6) [Ixx Iyy Izz Ixy Iyz Ixz] inertia about the centre of mass in the link frame's
  axes (kg·m²); ``Jm``, ``G``, ``B``, ``Tc`` (n, 2) or (n,) (t means [t, −t]), ``qlim``
  (n, 2): motor inertia, gear ratio, friction and limits with SerialLink's conventions.
- ``gravity``, ``base``, ``tool``, ``poses`` as for SerialLink; the tool pose is
  base·e^{ξ0^q0}…e^{ξ(n−1)^q(n−1)}·home·tool (3-29).

Kinematics and dynamics run in ``_kernels`` (numba when available) with the calling
convention of SerialLink's kernels, so the robot blocks accept a TwistRobot unchanged.
``q`` (n,) gives one answer, (m, n) a stack of m answers.
"""
from __future__ import annotations

import numpy as np

from ..link import inertia_tensor
from ..serial_link import _readonly, _result, _transform
from .chain import christoffel, generalized_inertia
from .dh import dh_home_frames, twists_from_dh
from .lie import Ad, inverse

__all__ = ["TwistRobot", "default_frames"]

_K = None
_asc = np.ascontiguousarray
_F64 = np.float64


def _kernels():
    """The twist kernel module, imported (numba with it) when the first robot is built."""
    global _K
    if _K is None:
        from . import _kernels as k
        _K = k
    return _K


def _check_twists(twists):
    twists = np.array(twists, dtype=float)
    if twists.ndim != 2 or twists.shape[1] != 6 or not len(twists):
        raise ValueError(f"twists must be an (n, 6) array of rows (v, w), got shape "
                         f"{twists.shape}")
    for j, (v, w) in enumerate(zip(twists[:, :3], twists[:, 3:])):
        nw, nv = np.linalg.norm(w), np.linalg.norm(v)
        if not (abs(nw - 1) < 1e-9 or (nw == 0 and abs(nv - 1) < 1e-9)):
            raise ValueError(f"twist {j}: w must be a unit vector (revolute) or zero with v a "
                             f"unit vector (prismatic); got |w| = {nw:g}, |v| = {nv:g}")
    return twists


def default_frames(twists):
    """Link frames for a robot given by twists alone (n, 4, 4): axes parallel to the base;
    the origin of a revolute link on its joint axis at the point nearest the base origin
    (ω × v), of a prismatic link at the previous link's origin. They only serve drawing
    (fkine_all) and as the frames of link masses given without a frame."""
    twists = np.asarray(twists, dtype=float)
    H = np.tile(np.eye(4), (len(twists), 1, 1))
    p = np.zeros(3)
    for j, xi in enumerate(twists):
        if np.any(xi[3:]):
            p = np.cross(xi[3:], xi[:3])
        H[j, :3, 3] = p
    return H


def _per_joint(value, n, shape, default, what):
    a = np.full((n,) + shape, default, dtype=float) if value is None else \
        np.array(value, dtype=float)
    if a.shape != (n,) + shape:
        raise ValueError(f"{what} must have shape {(n,) + shape}, got {a.shape}")
    return a


class TwistRobot:
    """An open-chain manipulator given by twists (immutable by convention: modifiers return
    new robots). Read-only attributes: ``n``, ``name``, ``manufacturer``, ``comment``,
    ``twists`` (n, 6), ``home`` (4, 4), ``frames`` (n, 4, 4), ``sigma`` (n,) 0 revolute /
    1 prismatic, ``config``, ``m``, ``r``, ``I`` (n, 3, 3), ``Jm``, ``G``, ``B``, ``Tc``
    (n, 2), ``qlim`` (n, 2), ``gravity``, ``base``, ``tool``, ``poses``."""

    def __init__(self, twists, home, frames=None, m=None, r=None, I=None, Jm=None, G=None,
                 B=None, Tc=None, qlim=None, name="", manufacturer="", gravity=(0.0, 0.0, 9.81),
                 base=None, tool=None, poses=None, comment=""):
        xi = _check_twists(twists)
        n = len(xi)
        self.n = n
        self.name, self.manufacturer, self.comment = str(name), str(manufacturer), str(comment)
        self.twists = _readonly(xi)
        self.home = _transform(home, "home")
        H = default_frames(xi) if frames is None else np.asarray(frames, dtype=float)
        if H.shape != (n, 4, 4):
            raise ValueError(f"frames must have shape {(n, 4, 4)}, got {H.shape}")
        self.frames = _readonly([_transform(h, f"frames[{j}]") for j, h in enumerate(H)])
        self.sigma = (np.linalg.norm(xi[:, 3:], axis=1) == 0).astype(int)
        self.sigma.setflags(write=False)
        self.config = "".join("RP"[s] for s in self.sigma)
        self.m = _readonly(_per_joint(m, n, (), 0.0, "m"))
        self.r = _readonly(_per_joint(r, n, (3,), 0.0, "r"))
        if I is None:
            I = np.zeros((n, 3, 3))
        if len(I) != n:
            raise ValueError(f"I needs {n} inertia tensors, got {len(I)}")
        self.I = _readonly([inertia_tensor(x) for x in I])
        self.Jm = _readonly(_per_joint(Jm, n, (), 0.0, "Jm"))
        self.G = _readonly(_per_joint(G, n, (), 1.0, "G"))
        self.B = _readonly(_per_joint(B, n, (), 0.0, "B"))
        tc = _per_joint(Tc, n, (2,) if np.ndim(Tc) == 2 else (), 0.0, "Tc")
        self.Tc = _readonly(tc if tc.ndim == 2 else np.stack([tc, -tc], axis=1))
        self.qlim = _readonly(_per_joint(qlim, n, (2,), np.nan, "qlim"))
        self.gravity = _readonly(gravity)
        if self.gravity.shape != (3,):
            raise ValueError("gravity must have 3 elements")
        self.base = _transform(base, "base")
        self.tool = _transform(tool, "tool")
        self._poses = {}
        for key, value in (poses or {}).items():
            v = _readonly(value)
            if v.shape != (n,):
                raise ValueError(f"pose {key!r} must have {n} joint values, got shape {v.shape}")
            self._poses[str(key)] = v
        self._pack()

    def _pack(self):
        """The kernel arguments P, W (layout in ``_kernels``) and the base-frame gravity."""
        K = _kernels()
        self._k = K
        n = self.n
        P = np.zeros((n, K.NP))
        prev = np.eye(4)
        for j in range(n):
            Hinv = inverse(self.frames[j])
            P[j, K.XI:K.XI + 6] = Ad(Hinv) @ self.twists[j]
            P[j, K.PREV:K.PREV + 12] = (inverse(prev) @ self.frames[j])[:3].ravel()
            P[j, K.GI:K.GI + 36] = generalized_inertia(self.m[j], self.r[j], self.I[j]).ravel()
            prev = self.frames[j]
        P[:, K.SIGMA] = self.sigma
        P[:, K.JM], P[:, K.GR], P[:, K.B] = self.Jm, self.G, self.B
        P[:, K.TCP], P[:, K.TCN] = self.Tc[:, 0], self.Tc[:, 1]
        W = np.zeros(K.NW)
        W[K.BASE:K.BASE + 12] = self.base[:3].ravel()
        W[K.TAIL:K.TAIL + 12] = (inverse(prev) @ self.home @ self.tool)[:3].ravel()
        self._P, self._W = P, W
        self._g = self._base_gravity(self.gravity)
        self._z6 = np.zeros(6)
        self._zn = np.zeros(n)

    def __getstate__(self):
        state = dict(self.__dict__)
        del state["_k"]                  # a module: restored from the import on unpickling
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._k = _kernels()

    @classmethod
    def from_dh(cls, robot):
        """The same robot as a SerialLink ``robot``, described by its twists at q = 0
        (``twists_from_dh``), its DH link frames at q = 0 and its dynamic parameters:
        fkine, Jacobians, rne, inertia, coriolis, gravload and accel agree."""
        twists, gst0 = twists_from_dh(robot)
        return cls(twists, gst0, frames=dh_home_frames(robot), m=robot.m, r=robot.r, I=robot.I,
                   Jm=robot.Jm, G=robot.G, B=robot.B, Tc=robot.Tc, qlim=robot.qlim,
                   name=robot.name, manufacturer=robot.manufacturer, gravity=robot.gravity,
                   base=robot.base, poses=robot.poses, comment=robot.comment)

    # ------------------------------------------------------------ construction helpers
    @property
    def poses(self):
        """Named joint configurations, name -> (n,) array (a fresh copy on every access)."""
        return {k: v.copy() for k, v in self._poses.items()}

    def _base_gravity(self, gravity):
        """Gravity (world frame) expressed in the base frame: Rbᵀ·g."""
        g = np.asarray(gravity, dtype=np.float64)
        if g.shape != (3,):
            raise ValueError("gravity must have 3 elements")
        return np.ascontiguousarray(self.base[:3, :3].T @ g)

    def _fext(self, fext):
        if fext is None:
            return self._z6
        f = _asc(fext, _F64).reshape(-1)
        if f.shape[0] % 6:
            raise ValueError("fext must be a 6-vector [Fx Fy Fz Mx My Mz] or (m, 6)")
        return f

    def _copy(self, name=None, **changes):
        args = dict(frames=self.frames, m=self.m, r=self.r, I=self.I, Jm=self.Jm, G=self.G,
                    B=self.B, Tc=self.Tc, qlim=self.qlim, name=self.name,
                    manufacturer=self.manufacturer, gravity=self.gravity, base=self.base,
                    tool=self.tool, poses=self._poses, comment=self.comment)
        args.update(changes)
        if name is not None:
            args["name"] = name
        return TwistRobot(self.twists, self.home, **args)

    def nofriction(self, what="coulomb"):
        """Copy with Coulomb friction removed ('coulomb') or Coulomb and viscous ('all')."""
        if what not in ("coulomb", "all"):
            raise ValueError(f"nofriction: what must be 'coulomb' or 'all', got {what!r}")
        return self._copy(Tc=np.zeros((self.n, 2)), B=self.B if what == "coulomb" else None)

    def perturb(self, p, seed=None):
        """Copy with masses and inertia tensors scaled by draws from U(1−p, 1+p), exactly as
        SerialLink.perturb: s = default_rng(seed).uniform(1−p, 1+p, (n, 2)), m·s[:, 0],
        I·s[:, 1]; name prefixed 'P/'."""
        s = np.random.default_rng(seed).uniform(1 - p, 1 + p, size=(self.n, 2))
        return self._copy(m=self.m * s[:, 0], I=self.I * s[:, 1, None, None],
                          name="P/" + self.name)

    def payload(self, m, p=(0.0, 0.0, 0.0)):
        """Copy with a point mass m (kg) at p (3,) in the tool frame added to the last link,
        as SerialLink.payload: p_n = T_tail·p in the last link's frame, COM
        r' = (m_n·r + m·p_n)/(m_n + m), I' = I + m_n(|e|²1 − eeᵀ) + m(|f|²1 − ffᵀ),
        e = r − r', f = p_n − r'."""
        p = np.asarray(p, dtype=np.float64)
        if p.shape != (3,):
            raise ValueError("payload position p must have 3 elements")
        m = float(m)
        tail = inverse(self.frames[-1]) @ self.home @ self.tool
        pn = tail[:3, :3] @ p + tail[:3, 3]
        mn, rn = self.m[-1], self.r[-1]
        total = mn + m
        if total == 0.0:
            return self._copy()
        rc = (mn * rn + m * pn) / total

        def shift(mass, v):
            return mass * (v @ v * np.eye(3) - np.outer(v, v))

        masses, coms, inertias = self.m.copy(), self.r.copy(), self.I.copy()
        masses[-1], coms[-1] = total, rc
        inertias[-1] = self.I[-1] + shift(mn, rn - rc) + shift(m, pn - rc)
        return self._copy(m=masses, r=coms, I=inertias)

    def configure(self, friction=None, perturb=None, seed=None, gravity=None, base=None,
                  tool=None, payload=None):
        """A new robot for a diagram's ``robots:`` entry, as SerialLink.configure: gravity,
        base, tool replaced, then payload ((m, p) or {'m', 'p'}), perturb (with seed), and
        friction None/'full' (kept), 'viscous' (Coulomb removed), 'none' (all removed)."""
        if friction not in (None, "full", "viscous", "none"):
            raise ValueError(f"friction must be 'full', 'viscous' or 'none', got {friction!r}")
        kw = {k: v for k, v in (("gravity", gravity), ("base", base), ("tool", tool))
              if v is not None}
        robot = self._copy(**kw) if kw else self
        if payload is not None:
            if isinstance(payload, dict):
                if set(payload) - {"m", "p"} or "m" not in payload:
                    raise ValueError("payload mapping needs 'm' and optionally 'p'")
                robot = robot.payload(payload["m"], payload.get("p", (0.0, 0.0, 0.0)))
            else:
                robot = robot.payload(*payload)
        if perturb is not None:
            robot = robot.perturb(perturb, seed)
        if friction == "viscous":
            robot = robot.nofriction("coulomb")
        elif friction == "none":
            robot = robot.nofriction("all")
        return robot

    # ------------------------------------------------------------ kinematics
    def fkine(self, q, out=None):
        """Tool pose base·e^{ξ0^q0}…e^{ξ(n−1)^q(n−1)}·home·tool (3-29): (4, 4), or (m, 4, 4)
        for q (m, n). ``out`` (float64, the result's shape) receives the answer."""
        q = _asc(q, _F64)
        if q.ndim == 1:
            if out is None:
                out = np.empty((4, 4))
            self._k.fkine(self._P, self._W, q, out)
            return out
        res = _result(out, (q.shape[0], 4, 4))
        self._k.fkine(self._P, self._W, q.reshape(-1), res.reshape(-1, 4))
        return res

    def fkine_all(self, q):
        """Frames [base, link 0, …, link n−1] in the world (link j's frame is
        base·e^{ξ0^q0}…e^{ξj^qj}·frames[j]): (n+1, 4, 4) or (m, n+1, 4, 4)."""
        q = _asc(q, _F64)
        res = np.empty(q.shape[:-1] + (self.n + 1, 4, 4))
        self._k.fkine_all(self._P, self._W, q.reshape(-1), res.reshape(-1, 4))
        return res

    def jacob0(self, q, out=None):
        """Geometric Jacobian of the tool point in the world frame, (6, n) rows [v; ω]
        (ẋ = J0·q̇); (m, 6, n) for q (m, n)."""
        return self._jacobian(q, False, out)

    def jacobn(self, q, out=None):
        """Jacobian in the tool frame, (6, n) rows [v; ω]: the body Jacobian J^b_st (3-32)
        of the tool frame; (m, 6, n) for q (m, n)."""
        return self._jacobian(q, True, out)

    def jacobs(self, q):
        """Spatial manipulator Jacobian J^s_st (3-30) in world coordinates, (6, n):
        V^s = J^s·q̇ with v^s the velocity of the body point at the world origin,
        J^s = [[I, p^], [0, I]]·J0 for the tool position p; J^s = Ad_{g_st}·J^b (3-26)."""
        J = np.array(self.jacob0(q))
        p = self.fkine(q)[..., :3, 3]
        J[..., :3, :] += np.cross(p[..., None, :], np.swapaxes(J[..., 3:, :], -1, -2)) \
            .swapaxes(-1, -2)
        return J

    def _jacobian(self, q, in_tool, out):
        q = _asc(q, _F64)
        if q.ndim == 1:
            if out is None:
                out = np.empty((6, self.n))
            self._k.jacobian(self._P, self._W, q, in_tool, out)
            return out
        res = _result(out, (q.shape[0], 6, self.n))
        self._k.jacobian(self._P, self._W, q.reshape(-1), in_tool, res.reshape(-1, self.n))
        return res

    @staticmethod
    def _stack(*arrays):
        arrays = [_asc(a, _F64) for a in arrays]
        if all(a.shape == arrays[0].shape for a in arrays):
            return arrays
        return [_asc(a) for a in np.broadcast_arrays(*arrays)]

    # ------------------------------------------------------------ dynamics
    def rne(self, q, qd, qdd, gravity=None, fext=None, out=None):
        """Inverse dynamics τ = M(q)·q̈ + C(q,q̇)·q̇ + F(q̇) + g(q) + J_nᵀ·fext (N·m or N) by the
        Newton–Euler recursion on twists, motor inertia G²·Jm·q̈ and friction included.
        ``gravity`` (3,) overrides the robot's (world frame); ``fext`` (6,) [F; M] is the
        wrench the tool exerts on the environment, tool frame, moment about the tool point;
        (m, 6) one per row. q, qd, qdd (n,) -> (n,); (m, n) -> (m, n)."""
        g = self._g if gravity is None else self._base_gravity(gravity)
        f = self._fext(fext)
        q, qd, qdd = self._stack(q, qd, qdd)
        res = _result(out, q.shape)
        self._k.rne(self._P, self._W, g, q.reshape(-1), qd.reshape(-1), qdd.reshape(-1), f,
                    res.reshape(-1))
        return res

    def inertia(self, q, out=None):
        """Joint-space inertia M(q) (n, n), motor inertia G²·Jm included (kg·m²), equal to
        the seed's Σ J_iᵀ·M_i·J_i (3-37); (m, n, n) for q (m, n)."""
        q = _asc(q, _F64)
        res = _result(out, q.shape + (self.n,))
        self._k.inertia(self._P, self._W, q.reshape(-1), res.reshape(-1, self.n))
        return res

    def coriolis(self, q, qd):
        """C(q, q̇) (n, n) from the Christoffel symbols (seed 004 §3.5): C·q̇ is the velocity
        torque of rne and Ṁ − 2C is skew-symmetric; (m, n, n) for stacks."""
        q, qd = self._stack(q, qd)
        res = np.empty(q.shape + (self.n,))
        self._k.coriolis(self._P, self._W, q.reshape(-1), qd.reshape(-1), res.reshape(-1, self.n))
        return res

    def christoffel(self, q):
        """Christoffel symbols Γ_ijk (n, n, n) at q (n,) (seed 004 ``dyn_getF``), from the
        link body Jacobians: C_ij = Σ_k Γ_ijk·q̇_k."""
        inertias = [generalized_inertia(*a) for a in zip(self.m, self.r, self.I)]
        return christoffel(self.twists, self.frames, inertias, q)

    def gravload(self, q, gravity=None, out=None):
        """Gravity torque g(q) = rne(q, 0, 0) (n,) or (m, n)."""
        q = _asc(q, _F64)
        return self.rne(q, np.zeros_like(q), np.zeros_like(q), gravity=gravity, out=out)

    def accel(self, q, qd, tau, gravity=None, fext=None, out=None):
        """Forward dynamics q̈ = M(q)⁻¹·(τ − C(q,q̇)·q̇ − F(q̇) − g(q) − J_nᵀ·fext); q, qd, tau
        (n,) -> (n,), stacks (m, n) -> (m, n); ``gravity``, ``fext`` as in rne."""
        g = self._g if gravity is None else self._base_gravity(gravity)
        f = self._fext(fext)
        q, qd, tau = self._stack(q, qd, tau)
        res = _result(out, q.shape)
        self._k.accel(self._P, self._W, g, q.reshape(-1), qd.reshape(-1), tau.reshape(-1), f,
                      res.reshape(-1))
        return res

    def friction(self, qd):
        """Joint friction F(q̇) = |G|·(B·|G|·q̇ + Tc) (n,) or (m, n), Tc = Tc+ for q̇ > 0,
        Tc- for q̇ < 0, 0 at rest."""
        qd = _asc(qd, _F64)
        res = np.empty(qd.shape)
        self._k.friction(self._P, qd.reshape(-1), res.reshape(-1))
        return res

    # ------------------------------------------------------------ queries and display
    def islimit(self, q):
        """Per joint −1 below qlim[:, 0], +1 above qlim[:, 1], 0 within or without limits."""
        q = np.asarray(q, dtype=np.float64)
        return np.where(q < self.qlim[:, 0], -1, np.where(q > self.qlim[:, 1], 1, 0))

    def __repr__(self):
        return f"TwistRobot({self.name!r}, n={self.n}, {self.config})"

    def __str__(self):
        def vec(x):
            return "[" + ", ".join(f"{v:.6g}" for v in x) + "]"

        lines = [f"{self.name or 'noname'}"
                 + (f" ({self.manufacturer})" if self.manufacturer else "")
                 + f": {self.n} axis, {self.config}, twists (v, w)"]
        if self.comment:
            lines.append(f"  {self.comment}")
        for j, xi in enumerate(self.twists):
            lines.append(f"  {j}: v = {vec(xi[:3])}, w = {vec(xi[3:])}")
        lines.append("home = " + np.array2string(self.home, precision=4, suppress_small=True,
                                                 prefix="home = "))
        lines.append("gravity = " + vec(self.gravity))
        for label, T in (("base", self.base), ("tool", self.tool)):
            if not np.array_equal(T, np.eye(4)):
                lines.append(f"{label} = " + np.array2string(T, precision=4, suppress_small=True,
                                                             prefix=f"{label} = "))
        if self._poses:
            lines.append("poses: " + ", ".join(self._poses))
        return "\n".join(lines)

    def display(self):
        """The twists, home pose, gravity, base, tool and poses as text (``str(robot)``)."""
        return str(self)

    # ------------------------------------------------------------ inverse kinematics, analysis
    def ikine(self, T, q0=None, mask=None, **options):
        """Numerical inverse kinematics: ``ikine.ikine(self, T, q0, mask, **options)``."""
        from ..ikine import ikine
        return ikine(self, T, q0, mask, **options)

    def maniplty(self, q, method="yoshikawa", dof="all"):
        """Manipulability index: ``analysis.maniplty``."""
        from ..analysis import maniplty
        return maniplty(self, q, method, dof)

    def cinertia(self, q, dof="all"):
        """Cartesian inertia (J·M⁻¹·Jᵀ)⁻¹: ``analysis.cinertia``."""
        from ..analysis import cinertia
        return cinertia(self, q, dof)

    def itorque(self, q, qdd):
        """Inertia torque M(q)·q̈: ``analysis.itorque``."""
        from ..analysis import itorque
        return itorque(self, q, qdd)

    def fdyn(self, T, torqfun=None, q0=None, qd0=None, **options):
        """(t, q, qd) integrating the forward dynamics over [0, T]: ``analysis.fdyn``."""
        from ..analysis import fdyn
        return fdyn(self, T, torqfun, q0, qd0, **options)
