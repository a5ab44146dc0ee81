"""The robot base: all of a serial manipulator that does not depend on how its kinematics is
described. ``SerialLink`` (Denavit–Hartenberg) and ``TwistRobot`` (product of exponentials)
derive from ``RobotBase`` and supply only their kinematics.

Conventions (``shared/spec/robots.md``): gravity (3,) is the upward acceleration that models
gravity (default (0, 0, 9.81): gravity acts in −z of the world); motor inertia adds G²·Jm to
M(q) and G²·Jm·q̈ to rne; friction F_j(q̇) = |G_j|·(B_j·|G_j|·q̇_j + Tc_j) (Tc+ for q̇ > 0,
Tc- for q̇ < 0, 0 at rest) always opposes motion. ``base`` places the robot in the world;
dynamics are computed in the base frame with gravity rotated into it. Angles in radians, SI
units, joints indexed from 0.

``q`` of shape (n,) gives one answer; (m, n) a stack of m answers. The numerical work is done
by the kernels of ``_kernels`` (run as the C extension ``_ckernels``, by numba or as plain
Python: see ``backend``) on the arrays P and W packed once per robot.
"""

import numpy as np

from .link import check_friction, inertia_tensor

_asc = np.ascontiguousarray
_F64 = np.float64
_K = None


def _kernels():
    """The kernel module (C extension, numba or plain Python: ``backend``), chosen and imported
    when the first robot is built."""
    global _K
    if _K is None:
        from .backend import kernels
        _K = kernels()
    return _K


def readonly(a):
    """``a`` as a read-only C-contiguous float64 array."""
    a = np.array(a, dtype=np.float64)
    a.setflags(write=False)
    return a


def transform(T, what):
    """A read-only 4x4 homogeneous transform (identity for None); ValueError naming ``what``."""
    if T is None:
        return readonly(np.eye(4))
    T = np.asarray(T, dtype=np.float64)
    if T.shape != (4, 4) or not np.allclose(T[3], (0, 0, 0, 1)) \
            or not np.allclose(T[:3, :3] @ T[:3, :3].T, np.eye(3), atol=1e-9):
        raise ValueError(f"{what} must be a 4x4 homogeneous transform")
    return readonly(T)


def _per_joint(value, n, shape, default, what):
    """``value`` as an (n,) + shape float array, filled with ``default`` when None."""
    a = np.full((n,) + shape, default, dtype=float) if value is None else \
        np.array(value, dtype=float)
    if a.shape != (n,) + shape:
        raise ValueError(f"{what} must have shape {(n,) + shape}, got {a.shape}")
    return a


def joint_friction(n, B=None, Tc=None):
    """Friction values for n joints as (B (n,), Tc (n, 2)), either None when not given: B one
    value for all joints or one per joint; Tc one value t for all joints, one per joint
    (each meaning [t, -t]) or [Tc+, Tc-] per joint (n, 2). ValueError for other shapes and
    for friction that would not oppose motion (``link.check_friction``), naming the joint."""
    if B is not None:
        B = np.asarray(B, dtype=np.float64)
        if B.shape not in ((), (n,)):
            raise ValueError(f"B must be one value or {n} (one per joint), got shape {B.shape}")
        B = np.broadcast_to(B, (n,)).copy()
    if Tc is not None:
        Tc = np.asarray(Tc, dtype=np.float64)
        if Tc.shape not in ((), (n,), (n, 2)):
            raise ValueError(f"Tc must be one value t, {n} values (one per joint, each meaning "
                             f"[t, -t]) or {n} pairs [Tc+, Tc-], got shape {Tc.shape}")
        if Tc.ndim < 2:
            Tc = np.broadcast_to(Tc, (n,))
            for j, t in enumerate(Tc):
                _joint_check(j, 0.0, t)
            Tc = np.stack([Tc, -Tc], axis=1)
    for j in range(n):
        _joint_check(j, 0.0 if B is None else B[j], (0.0, 0.0) if Tc is None else Tc[j])
    return B, Tc


def _joint_check(j, B, Tc):
    try:
        check_friction(B, Tc)
    except ValueError as e:
        raise ValueError(f"joint {j + 1}: {e}") from None


def _result(out, shape):
    """``out`` checked to be a writable float64 C-contiguous array of ``shape``, or a new one."""
    if out is None:
        return np.empty(shape)
    if out.shape != shape or out.dtype != _F64 or not out.flags.c_contiguous \
            or not out.flags.writeable:
        raise ValueError(f"out must be a writable C-contiguous float64 array of shape {shape}")
    return out


def _joints(*arrays):
    """(lead, arrays): joint arrays as float64 C-contiguous, broadcast to one shape when their
    shapes differ, and flattened for the kernels; lead = () for one configuration (n,), (m,)
    for a stack (m, n)."""
    arrays = [_asc(a, _F64) for a in arrays]
    if any(a.shape != arrays[0].shape for a in arrays):
        arrays = [_asc(a) for a in np.broadcast_arrays(*arrays)]
    lead = arrays[0].shape[:-1]
    return lead, [a.reshape(-1) for a in arrays] if lead else arrays


def vector_text(x):
    """The numbers of x as text, [a, b, c] with 6 significant digits."""
    return "[" + ", ".join(f"{v:.6g}" for v in x) + "]"


class RobotBase:
    """A serial manipulator of n joints (immutable by convention: modifiers return new robots).

    Read-only attributes: ``n``, ``name``, ``manufacturer``, ``comment``, ``sigma`` (n,)
    0 revolute / 1 prismatic, ``config`` ('R'/'P' per joint), ``m`` (n,) kg, ``r`` (n, 3)
    centre of mass in the link frame (m), ``I`` (n, 3, 3) inertia about the centre of mass in
    the link frame's axes (kg·m²), ``Jm`` (n,) motor inertia, ``G`` (n,) signed gear ratio,
    ``B`` (n,) viscous and ``Tc`` (n, 2) Coulomb friction [Tc+, Tc-] (motor side), ``qlim``
    (n, 2) (nan where unset), ``gravity`` (3,), ``base``, ``tool`` (4, 4), ``poses`` (dict of
    fresh copies).

    A subclass describes the kinematics: it sets its own attributes, then calls
    ``RobotBase.__init__``, and implements ``_kinematics()``, ``_rebuild(**params)`` (the same
    kinematics with other values of ``_PARAMS``), ``_kind`` and ``_table()`` (its description
    in ``str``). ``_kinematics()`` returns the chain of joint frames the kernels work on
    (``_kernels``): (X (n, 4, 4), Y (n, 4, 4), slide (n,), E (4, 4)) with X_j the pose at
    q = 0 of joint frame j in joint frame j−1 (the base frame for j = 0), Y_j the pose of the
    robot's link frame j (where r and I are given) in joint frame j, slide_j the translation
    of joint frame j along its z axis per unit joint value (1 prismatic, the pitch of a
    helical joint, 0 revolute), and E the end-effector without the tool in the last link's
    frame.
    """

    _PARAMS = ("m", "r", "I", "Jm", "G", "B", "Tc", "qlim", "name", "manufacturer", "comment",
               "gravity", "base", "tool", "poses")

    def __init__(self, sigma, m=None, r=None, I=None, Jm=None, G=None, B=None, Tc=None,
                 qlim=None, name="", manufacturer="", comment="", gravity=(0.0, 0.0, 9.81),
                 base=None, tool=None, poses=None):
        n = len(sigma)
        self.n = n
        self.name, self.manufacturer, self.comment = str(name), str(manufacturer), str(comment)
        self.sigma = np.array(sigma, dtype=int)
        self.sigma.setflags(write=False)
        self.config = "".join("RP"[s] for s in self.sigma)
        self.m = readonly(_per_joint(m, n, (), 0.0, "m"))
        self.r = readonly(_per_joint(r, n, (3,), 0.0, "r"))
        if I is None:
            I = np.zeros((n, 3, 3))
        if len(I) != n:
            raise ValueError(f"I needs {n} inertia tensors, got {len(I)}")
        self.I = readonly([inertia_tensor(x) for x in I])
        self.Jm = readonly(_per_joint(Jm, n, (), 0.0, "Jm"))
        self.G = readonly(_per_joint(G, n, (), 1.0, "G"))
        self.B = readonly(_per_joint(B, n, (), 0.0, "B"))
        tc = _per_joint(Tc, n, (2,) if np.ndim(Tc) == 2 else (), 0.0, "Tc")
        self.Tc = readonly(tc if tc.ndim == 2 else np.stack([tc, -tc], axis=1))
        for j in range(n):
            _joint_check(j, self.B[j], self.Tc[j])
        self.qlim = readonly(_per_joint(qlim, n, (2,), np.nan, "qlim"))
        self.gravity = readonly(gravity)
        if self.gravity.shape != (3,):
            raise ValueError("gravity must have 3 elements")
        self.base = transform(base, "base")
        self.tool = transform(tool, "tool")
        self._poses = {}
        for key, value in (poses or {}).items():
            v = readonly(value)
            if v.shape != (n,):
                raise ValueError(f"pose {key!r} must have {n} joint values, got shape {v.shape}")
            self._poses[str(key)] = v
        self._k = _kernels()
        self._pack()
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

    def _pack(self):
        """The kernel arguments P and W (layout in ``_kernels``) from the joint
        frames of ``_kinematics()``, the inertias moved into the joint frames, and the drive
        constants on the link side; ``_axes`` keeps Y⁻¹ and the slides for ``joint_axes``."""
        K, n = self._k, self.n
        X, Y, slide, E = self._kinematics()
        R = Y[:, :3, :3]
        g = np.abs(self.G)
        P = np.zeros((n, K.NP))
        P[:, K.SIGMA] = self.sigma
        P[:, K.SLIDE] = slide
        P[:, K.X:K.X + 12] = X[:, :3].reshape(n, 12)
        P[:, K.FRAME:K.FRAME + 12] = Y[:, :3].reshape(n, 12)
        P[:, K.M] = self.m
        P[:, K.RX:K.RZ + 1] = np.einsum("jab,jb->ja", R, self.r) + Y[:, :3, 3]
        P[:, K.I0:K.I0 + 9] = (R @ self.I @ np.swapaxes(R, 1, 2)).reshape(n, 9)
        P[:, K.MOTOR] = self.G * self.G * self.Jm
        P[:, K.VISCOUS] = g * g * self.B
        P[:, K.UP] = g * self.Tc[:, 0]
        P[:, K.DOWN] = -(g * self.Tc[:, 1])
        W = np.zeros(K.NW)
        W[K.BASE:K.BASE + 12] = self.base[:3].ravel()
        W[K.TOOL:K.TOOL + 12] = (Y[-1] @ E @ self.tool)[:3].ravel()
        # the same with the end-effector frame without the tool in place of the tool: the
        # kernels apply fext there (fext_frame 'link'); nothing else in rne and accel uses it
        W_link = W.copy()
        W_link[K.TOOL:K.TOOL + 12] = (Y[-1] @ E)[:3].ravel()
        self._P, self._W = P, W        # writable: numba dispatches read-only arrays slower
        self._W_by_frame = {"tool": W, "link": W_link}
        self._axes = (readonly(np.linalg.inv(Y)), readonly(slide))

    # ------------------------------------------------------------ parameters and copies
    @property
    def poses(self):
        """Named joint configurations, name -> (n,) array (a fresh copy on every access)."""
        return {k: v.copy() for k, v in self._poses.items()}

    def kernel_args(self, gravity=None, fext_frame="tool"):
        """(kernels, P, W, g): the kernel module of the chosen backend and the arguments every
        kernel takes (``_kernels`` documents them; the robot's own arrays: never write into
        them), g (3,) the gravity in the base frame: the robot's, or ``gravity`` (world
        frame); W places fext as ``fext_frame`` says (``rne``). The robot blocks fetch them
        once and call the kernels directly on their port arrays."""
        g = self._g if gravity is None else self._base_gravity(gravity)
        return self._k, self._P, self._wrench_W(fext_frame), g

    def _wrench_W(self, fext_frame):
        """W with fext applied in the tool frame ('tool') or the last link's ('link')."""
        try:
            return self._W_by_frame[fext_frame]
        except (KeyError, TypeError):
            raise ValueError(f"fext_frame must be 'tool' or 'link', got {fext_frame!r}") from None

    def coulomb_levels(self):
        """(up, down) (n,): the link-side Coulomb friction levels |G|·Tc+ and −|G|·Tc− (both
        ≥ 0 when friction opposes motion): a joint slipping with q̇ > 0 meets the friction
        torque up, with q̇ < 0 the torque −down (``_kernels._coulomb``)."""
        K = self._k
        return self._P[:, K.UP].copy(), self._P[:, K.DOWN].copy()

    def _base_gravity(self, gravity):
        """Gravity (world frame) expressed in the base frame: Rbᵀ·g."""
        g = np.asarray(gravity, dtype=np.float64)
        if g.shape != (3,):
            raise ValueError("gravity must have 3 elements")
        return np.ascontiguousarray(self.base[:3, :3].T @ g)

    def _fext(self, fext):
        f = _asc(fext, _F64).reshape(-1)
        if f.shape[0] % 6:
            raise ValueError("fext must be a 6-vector [Fx Fy Fz Mx My Mz] or (m, 6)")
        return f

    def _copy(self, **changes):
        """The same kinematics with some of ``_PARAMS`` changed."""
        params = {k: getattr(self, "_poses" if k == "poses" else k) for k in self._PARAMS}
        params.update(changes)
        return self._rebuild(**params)

    def nofriction(self, what="coulomb"):
        """Copy with Coulomb friction removed ('coulomb') or Coulomb and viscous ('all')."""
        return self._copy(**self._nofriction_changes(what))

    def _nofriction_changes(self, what):
        if what not in ("coulomb", "all"):
            raise ValueError(f"nofriction: what must be 'coulomb' or 'all', got {what!r}")
        return {"Tc": np.zeros((self.n, 2))} if what == "coulomb" else \
            {"Tc": np.zeros((self.n, 2)), "B": np.zeros(self.n)}

    def perturb(self, p, seed=None):
        """Copy with masses and inertia tensors scaled by independent draws from U(1−p, 1+p).

        Exactly (robots.md): ``s = numpy.random.default_rng(seed).uniform(1 - p, 1 + p,
        size=(n, 2))``; link j's mass × s[j, 0] and its whole inertia tensor × s[j, 1]. COM,
        Jm, G, B, Tc unchanged; name prefixed 'P/'.
        """
        return self._copy(**self._perturb_changes(p, seed))

    def _perturb_changes(self, p, seed):
        s = np.random.default_rng(seed).uniform(1 - p, 1 + p, size=(self.n, 2))
        return {"m": self.m * s[:, 0], "I": self.I * s[:, 1, None, None], "name": "P/" + self.name}

    def payload(self, m, p=(0.0, 0.0, 0.0), frame="tool"):
        """Copy with a point mass m (kg) at p (3,) added to the last link; p in the tool frame
        (``frame`` 'tool'), or in the last link's frame, the end effector without the tool
        ('link', as roboticstoolbox-python's ``payload`` takes it).

        p is mapped into the last link's frame, p_n = T·p with T the tool pose in that frame;
        the last link becomes the composite body: mass m_n + m, COM
        r' = (m_n·r + m·p_n)/(m_n + m), inertia about r' by the parallel-axis theorem
        I' = I + m_n·(|e|²·1 − e·eᵀ) + m·(|f|²·1 − f·fᵀ), e = r − r', f = p_n − r'.
        """
        p = np.asarray(p, dtype=np.float64)
        if p.shape != (3,):
            raise ValueError("payload position p must have 3 elements")
        if frame not in ("tool", "link"):
            raise ValueError(f"payload frame must be 'tool' or 'link', got {frame!r}")
        m = float(m)
        T = self._kinematics()[3] @ (self.tool if frame == "tool" else np.eye(4))
        pn = T[:3, :3] @ p + T[:3, 3]
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
                  tool=None, payload=None, B=None, Tc=None):
        """A new robot for a diagram's ``robots:`` entry.

        Applied in this order: gravity/base/tool and the friction values B (n,) and Tc
        (n, 2) or (n,) replaced, then ``payload`` ((m, p[, frame]) or {'m': m, 'p': p,
        'frame': frame}, p in the (new) tool frame or the last link's, as ``payload``), then ``perturb`` (p with ``seed``), then ``friction``: None or
        'full' keep it, 'viscous' = nofriction('coulomb'), 'none' = nofriction('all').
        """
        if friction not in (None, "full", "viscous", "none"):
            raise ValueError(f"friction must be 'full', 'viscous' or 'none', got {friction!r}")
        # one copy for all the changes (the payload needs the new tool: a copy before it)
        B, Tc = joint_friction(self.n, B, Tc)
        changes = {k: v for k, v in (("gravity", gravity), ("base", base), ("tool", tool),
                                     ("B", B), ("Tc", Tc)) if v is not None}
        robot = self
        if payload is not None:
            if changes:
                robot, changes = robot._copy(**changes), {}
            if isinstance(payload, dict):
                if set(payload) - {"m", "p", "frame"} or "m" not in payload:
                    raise ValueError("payload mapping needs 'm' and optionally 'p', 'frame'")
                robot = robot.payload(payload["m"], payload.get("p", (0.0, 0.0, 0.0)),
                                      payload.get("frame", "tool"))
            else:
                robot = robot.payload(*payload)
        if perturb is not None:
            changes.update(robot._perturb_changes(perturb, seed))
        if friction in ("viscous", "none"):
            changes.update(robot._nofriction_changes("coulomb" if friction == "viscous" else "all"))
        return robot._copy(**changes) if changes else robot

    # ------------------------------------------------------------ calling the kernels
    def _run(self, kernel, lead, tail, out, *args):
        """``kernel(*args, out)``, its joint arrays flattened (``_joints``): for one configuration
        (lead = ()) into ``out`` of shape ``tail`` (allocated when None, checked by the
        kernel); for a stack into ``out`` of shape lead + tail, seen by the kernel as the
        rows of the configurations stacked (e.g. (m, 4, 4) as (4m, 4))."""
        if not lead:
            if out is None:
                out = np.empty(tail)
            kernel(*args, out)
            return out
        res = _result(out, lead + tail)
        kernel(*args, res.reshape((-1,) + tail[1:]))
        return res

    def _of_q(self, kernel, q, tail, out, *flag):
        """``kernel(P, W, q, *flag, out)`` through ``_run``, q (n,) or (m, n) float64 (fkine,
        inertia and jacobian take one configuration without this detour)."""
        return self._run(kernel, q.shape[:-1], tail, out, self._P, self._W, q.reshape(-1), *flag)

    def _dynamics(self, kernel, q, qd, x, gravity, fext, out, fext_frame="tool"):
        """``kernel(P, W, g, q, qd, x, f, out)`` (rne: x = q̈, accel: x = τ) through ``_run``,
        one configuration without detour."""
        q, qd, x = _asc(q, _F64), _asc(qd, _F64), _asc(x, _F64)
        g = self._g if gravity is None else self._base_gravity(gravity)
        f = self._z6 if fext is None else self._fext(fext)
        W = self._wrench_W(fext_frame)
        if q.ndim == qd.ndim == x.ndim == 1:
            if out is None:
                out = np.empty(self.n)
            kernel(self._P, W, g, q, qd, x, f, out)
            return out
        lead, (q, qd, x) = _joints(q, qd, x)
        return self._run(kernel, lead, (self.n,), out, self._P, W, g, q, qd, x, f)

    # ------------------------------------------------------------ kinematics
    def fkine(self, q, out=None):
        """End-effector pose (4, 4) in the world, tool included, or (m, 4, 4) for q (m, n).
        ``out`` (float64, the result's shape) receives the answer."""
        q = _asc(q, _F64)
        if q.ndim != 1:
            return self._of_q(self._k.fkine, q, (4, 4), out)
        out = np.empty((4, 4)) if out is None else out
        self._k.fkine(self._P, self._W, q, out)
        return out

    def fkine_all(self, q):
        """World poses of the base and of every link frame, tool not applied: (n+1, 4, 4) or
        (m, n+1, 4, 4); used to draw the links."""
        q = _asc(q, _F64)
        F = self._of_q(self._k.fkine_all, q, (4 * self.n + 4, 4), None)
        return F.reshape(q.shape[:-1] + (self.n + 1, 4, 4))

    def jacob0(self, q, out=None):
        """Geometric Jacobian in the world frame, (6, n) rows [v; ω] of the tool point
        (ẋ = J0·q̇); (m, 6, n) for q (m, n). ``out`` as in ``fkine``."""
        return self._jacobian(q, False, out)

    def jacobn(self, q, out=None):
        """Geometric Jacobian in the tool frame, (6, n) rows [v; ω]: the body Jacobian of the
        tool frame; (m, 6, n) for q (m, n). ``out`` as in ``fkine``."""
        return self._jacobian(q, True, out)

    def _jacobian(self, q, in_tool, out):
        q = _asc(q, _F64)
        if q.ndim != 1:
            return self._of_q(self._k.jacobian, q, (6, self.n), out, in_tool)
        out = np.empty((6, self.n)) if out is None else out
        self._k.jacobian(self._P, self._W, q, in_tool, out)
        return out

    def joint_axes(self, q):
        """(z, o, h) at q: the world direction z (..., n, 3) and a point o (..., n, 3) of every
        joint axis, and h (n,) the translation along z per unit joint value (1 prismatic, the
        pitch of a helical joint, 0 revolute)."""
        F = self.fkine_all(q)[..., 1:, :, :] @ self._axes[0]
        return F[..., :3, 2], F[..., :3, 3], self._axes[1]

    def jacob_dot(self, q, qd):
        """J̇(q, q̇)·q̇ (6,) in the world frame: the tool-point acceleration and the angular
        acceleration when q̈ = 0, so that ẍ = J0·q̈ + J̇·q̇. (m, 6) for stacks."""
        lead, (q, qd) = _joints(q, qd)
        return self._run(self._k.jacob_dot, lead, (6,), None, self._P, self._W, q, qd)

    # ------------------------------------------------------------ dynamics
    def rne(self, q, qd, qdd, gravity=None, fext=None, out=None, fext_frame="tool"):
        """Inverse dynamics τ = M(q)·q̈ + C(q,q̇)·q̇ + F(q̇) + g(q) + J_nᵀ·fext (N·m or N).

        Recursive Newton–Euler including motor inertia G²·Jm·q̈ and friction F(q̇).
        ``gravity`` (3,) overrides the robot's (world frame). ``fext`` (6,) = [Fx Fy Fz Mx My
        Mz] is the wrench the end-effector exerts on the environment, expressed in the tool
        frame with the moment about the tool point (``fext_frame`` 'tool'), or in the last
        link's frame, the end effector without the tool, with the moment about its origin
        ('link', as roboticstoolbox-python's rne); (m, 6) gives one wrench per row. q, qd,
        qdd (n,) -> (n,); stacks (m, n) -> (m, n). ``out`` (float64, C-contiguous, the
        result's shape) receives the answer.
        """
        return self._dynamics(self._k.rne, q, qd, qdd, gravity, fext, out, fext_frame)

    def inertia(self, q, out=None):
        """Joint-space inertia M(q) (n, n), motor inertia G²·Jm included (kg·m²);
        (m, n, n) for q (m, n). Composite-rigid-body algorithm. ``out`` as in ``fkine``."""
        q = _asc(q, _F64)
        if q.ndim != 1:
            return self._of_q(self._k.inertia, q, (self.n, self.n), out)
        out = np.empty((self.n, self.n)) if out is None else out
        self._k.inertia(self._P, self._W, q, out)
        return out

    def coriolis(self, q, qd):
        """Coriolis/centripetal matrix C(q, q̇) (n, n) of the Christoffel symbols
        (C_ij = Σ_k Γ_ijk·q̇_k): C·q̇ is the velocity torque and Ṁ − 2C is skew-symmetric;
        (m, n, n) for stacks. Friction is not included."""
        lead, (q, qd) = _joints(q, qd)
        return self._run(self._k.coriolis, lead, (self.n, self.n), None, self._P, self._W, q, qd)

    def gravload(self, q, gravity=None, out=None):
        """Gravity torque g(q) = rne(q, 0, 0) (n,) or (m, n); ``gravity`` overrides the robot's
        (world frame); ``out`` as in ``fkine``."""
        q = _asc(q, _F64)
        if q.ndim != 1:
            return self._dynamics(self._k.rne, q, self._zn, self._zn, gravity, None, out)
        g = self._g if gravity is None else self._base_gravity(gravity)
        out = np.empty(self.n) if out is None else out
        self._k.rne(self._P, self._W, g, q, self._zn, self._zn, self._z6, out)
        return out

    def accel(self, q, qd, tau, gravity=None, fext=None, out=None, fext_frame="tool"):
        """Forward dynamics q̈ = M(q)⁻¹·(τ − C(q,q̇)·q̇ − F(q̇) − g(q) − J_nᵀ·fext).

        The bias is one rne call with q̈ = 0, M by the composite-rigid-body algorithm, the
        solve by Cholesky. q, qd, tau (n,) -> (n,); stacks (m, n) -> (m, n). ``gravity``,
        ``fext`` and ``fext_frame`` as in ``rne``; ``out`` (float64, the result's shape)
        receives the answer.
        """
        return self._dynamics(self._k.accel, q, qd, tau, gravity, fext, out, fext_frame)

    def friction(self, qd):
        """Joint friction F(q̇) = |G|·(B·|G|·q̇ + Tc) per joint (n,) or (m, n); Tc = Tc+ for
        q̇ > 0, Tc- for q̇ < 0, 0 at rest. rne adds it; it opposes motion."""
        lead, (qd,) = _joints(qd)
        return self._run(self._k.friction, lead, (self.n,), None, self._P, qd)

    # ------------------------------------------------------------ queries and display
    def islimit(self, q):
        """Per joint −1 below qlim[:, 0], +1 above qlim[:, 1], 0 within or without limits."""
        q = np.asarray(q, dtype=np.float64)
        return np.where(q < self.qlim[:, 0], -1, np.where(q > self.qlim[:, 1], 1, 0))

    def __str__(self):
        lines = [f"{self.name or 'noname'}"
                 + (f" ({self.manufacturer})" if self.manufacturer else "")
                 + f": {self.n} axis, {self.config}, {self._kind}"]
        if self.comment:
            lines.append(f"  {self.comment}")
        lines += self._table()
        lines.append("gravity = " + vector_text(self.gravity))
        for label, T in (("base", self.base), ("tool", self.tool)):
            if not np.array_equal(T, np.eye(4)):
                lines.append(f"{label} = " + np.array2string(T, precision=4, suppress_small=True,
                                                             prefix=f"{label} = "))
        if self._poses:
            lines.append("poses: " + ", ".join(self._poses))
        return "\n".join(lines)

    def display(self):
        """The robot as text (``str(robot)``): kinematics, gravity, base, tool and poses."""
        return str(self)

    def dyn(self, j=None):
        """Dynamic parameters of every link (or of link j, 0-based; the text numbers links
        1..n as the toolbox) as text: mass, COM, inertia about the COM, motor inertia, gear
        ratio, viscous and Coulomb friction, qlim."""
        out = []
        for k in range(self.n) if j is None else [j]:
            I, Tc, qlim = self.I[k], self.Tc[k], self.qlim[k]
            six = I[(0, 1, 2, 0, 1, 0), (0, 1, 2, 1, 2, 2)]
            out += [f"link {k + 1} ({('revolute', 'prismatic')[self.sigma[k]]}):",
                    f"  m  = {self.m[k]:.6g} kg",
                    f"  r  = {vector_text(self.r[k])} m",
                    f"  I  = [Ixx Iyy Izz Ixy Iyz Ixz] = {vector_text(six)} kg.m^2",
                    f"  Jm = {self.Jm[k]:.6g} kg.m^2, G = {self.G[k]:.6g}",
                    f"  B  = {self.B[k]:.6g}, Tc = {vector_text(Tc)} (motor side)",
                    f"  qlim = {vector_text(qlim)}"]
        return "\n".join(out)

    # ------------------------------------------------------------ inverse kinematics, analysis
    def ikine(self, T, q0=None, mask=None, **options):
        """Numerical inverse kinematics: ``ikine.ikine(self, T, q0, mask, **options)``."""
        from .ikine import ikine
        return ikine(self, T, q0, mask, **options)

    def maniplty(self, q, method="yoshikawa", dof="all"):
        """Manipulability index: ``analysis.maniplty``."""
        from .analysis import maniplty
        return maniplty(self, q, method, dof)

    def cinertia(self, q, dof="all"):
        """Cartesian inertia (J·M⁻¹·Jᵀ)⁻¹: ``analysis.cinertia``."""
        from .analysis import cinertia
        return cinertia(self, q, dof)

    def itorque(self, q, qdd):
        """Inertia torque M(q)·q̈: ``analysis.itorque``."""
        from .analysis import itorque
        return itorque(self, q, qdd)

    def gravjac(self, q, gravity=None):
        """(gravity load, jacob0) in one pass: ``analysis.gravjac``."""
        from .analysis import gravjac
        return gravjac(self, q, gravity)

    def paycap(self, q, w, f, tlim):
        """(wmax, joint): payload capacity under torque limits: ``analysis.paycap``."""
        from .analysis import paycap
        return paycap(self, q, w, f, tlim)

    def fdyn(self, T, torqfun=None, q0=None, qd0=None, **options):
        """(t, q, qd) integrating the forward dynamics over [0, T]: ``analysis.fdyn``."""
        from .analysis import fdyn
        return fdyn(self, T, torqfun, q0, qd0, **options)
