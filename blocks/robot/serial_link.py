"""Serial-link robot: packed parameters, kinematics and rigid-body dynamics.

Conventions (``shared/spec/robots.md``): standard or modified DH; gravity (3,) is the upward
acceleration that models gravity (default (0, 0, 9.81): gravity acts in −z of the world);
motor inertia adds G²·Jm to M(q) and G²·Jm·q̈ to rne; friction
F_j(q̇) = |G_j|·(B_j·|G_j|·q̇_j + Tc_j) (Tc+ for q̇ > 0, Tc- for q̇ < 0, 0 at rest) always
opposes motion. ``base`` places the robot in the world; dynamics are computed in the base frame
with gravity rotated into it. Angles in radians, SI units, joints indexed from 0.

``q`` of shape (n,) gives one answer; (m, n) a stack of m answers. The numerical work is done by
the kernels of ``_kernels`` (run as the C extension ``_ckernels``, by numba or as plain Python:
see ``backend``) on arrays packed once here.
"""

import numpy as np

from .link import Link

_K = None


def _kernels():
    """The kernel module (C extension, numba or plain Python: ``backend``), chosen and imported
    when the first robot is built."""
    global _K
    if _K is None:
        from .backend import kernels
        _K = kernels()
    return _K


def _readonly(a):
    a = np.ascontiguousarray(a, dtype=np.float64)
    a.setflags(write=False)
    return a


def _transform(T, what):
    if T is None:
        return _readonly(np.eye(4))
    T = np.asarray(T, dtype=np.float64)
    if T.shape != (4, 4) or not np.allclose(T[3], (0, 0, 0, 1)) \
            or not np.allclose(T[:3, :3] @ T[:3, :3].T, np.eye(3), atol=1e-9):
        raise ValueError(f"{what} must be a 4x4 homogeneous transform")
    return _readonly(T)


_asc = np.ascontiguousarray
_F64 = np.float64


def _result(out, shape):
    """``out`` checked to be a writable float64 C-contiguous array of ``shape``, or a new one."""
    if out is None:
        return np.empty(shape)
    if out.shape != shape or out.dtype != _F64 or not out.flags.c_contiguous \
            or not out.flags.writeable:
        raise ValueError(f"out must be a writable C-contiguous float64 array of shape {shape}")
    return out


class SerialLink:
    """A serial-link manipulator (immutable by convention: modifiers return new robots).

    ``SerialLink(links, name='', manufacturer='', convention=None, gravity=(0, 0, 9.81),
    base=None, tool=None, poses=None, comment='')``: ``links`` a sequence of ``Link``, all of
    one convention ('standard' or 'modified'; ``convention=None`` takes it from the links),
    ``base``/``tool`` 4x4 transforms (identity when None), ``poses`` a mapping name -> (n,)
    joint vector.

    Attributes (read-only arrays): ``n``, ``links``, ``name``, ``manufacturer``, ``comment``,
    ``convention``, ``mdh``, ``config`` ('R'/'P' per joint), ``sigma`` (n,) 0 revolute / 1
    prismatic, ``alpha``, ``a``, ``theta``, ``d``, ``offset`` (n,), ``m`` (n,), ``r`` (n, 3),
    ``I`` (n, 3, 3), ``Jm``, ``G``, ``B`` (n,), ``Tc`` (n, 2), ``qlim`` (n, 2) (nan where
    unset), ``gravity`` (3,), ``base``, ``tool`` (4, 4), ``poses`` (dict of fresh copies).
    """

    def __init__(self, links, name="", manufacturer="", convention=None, gravity=(0.0, 0.0, 9.81),
                 base=None, tool=None, poses=None, comment=""):
        links = tuple(links)
        if not links or not all(isinstance(L, Link) for L in links):
            raise ValueError("SerialLink needs a non-empty sequence of Link objects")
        used = {L.convention for L in links}
        if convention is None:
            if len(used) > 1:
                raise ValueError("links mix standard and modified DH")
            convention = used.pop()
        elif used != {convention}:
            raise ValueError(f"convention={convention!r} but the links use {sorted(used)}")
        n = len(links)
        self.links = links
        self.n = n
        self.name = str(name)
        self.manufacturer = str(manufacturer)
        self.comment = str(comment)
        self.convention = convention
        self.mdh = convention == "modified"
        self.config = "".join("RP"[L.sigma] for L in links)
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

        def col(attr):
            return _readonly([getattr(L, attr) for L in links])

        self.sigma = np.array([L.sigma for L in links])
        self.sigma.setflags(write=False)
        self.alpha, self.a, self.theta, self.d = col("alpha"), col("a"), col("theta"), col("d")
        self.offset, self.m, self.r, self.I = col("offset"), col("m"), col("r"), col("I")
        self.Jm, self.G, self.B, self.Tc = col("Jm"), col("G"), col("B"), col("Tc")
        self.qlim = col("qlim")

        K = _kernels()
        self._k = K
        P = np.zeros((n, K.NP))
        P[:, K.SIGMA] = self.sigma
        P[:, K.A] = self.a
        P[:, K.THETA] = self.theta
        P[:, K.D] = self.d
        P[:, K.OFFSET] = self.offset
        P[:, K.M] = self.m
        P[:, K.RX:K.RZ + 1] = self.r
        P[:, K.I0:K.I0 + 9] = self.I.reshape(n, 9)
        P[:, K.JM] = self.Jm
        P[:, K.G] = self.G
        P[:, K.B] = self.B
        P[:, K.TCP] = self.Tc[:, 0]
        P[:, K.TCN] = self.Tc[:, 1]
        P[:, K.CA] = np.cos(self.alpha)
        P[:, K.SA] = np.sin(self.alpha)
        W = np.zeros(K.NW)
        W[K.BASE:K.BASE + 12] = self.base[:3].ravel()
        W[K.TOOL:K.TOOL + 12] = self.tool[:3].ravel()
        W[K.MDH] = float(self.mdh)
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

    def _copy(self, links=None, name=None, **kw):
        args = dict(name=self.name, manufacturer=self.manufacturer, convention=self.convention,
                    gravity=self.gravity, base=self.base, tool=self.tool, poses=self._poses,
                    comment=self.comment)
        args.update(kw)
        if name is not None:
            args["name"] = name
        return SerialLink(self.links if links is None else links, **args)

    def nofriction(self, what="coulomb"):
        """Copy with Coulomb friction removed ('coulomb') or Coulomb and viscous ('all')."""
        return self._copy([L.nofriction(what) for L in self.links])

    def perturb(self, p, seed=None):
        """Copy with masses and inertia tensors scaled by independent draws from U(1−p, 1+p).

        Exactly (robots.md): ``s = numpy.random.default_rng(seed).uniform(1 - p, 1 + p,
        size=(n, 2))``; link j's mass × s[j, 0] and its whole inertia tensor × s[j, 1]. COM,
        Jm, G, B, Tc unchanged; name prefixed 'P/'.
        """
        s = np.random.default_rng(seed).uniform(1 - p, 1 + p, size=(self.n, 2))
        links = [L.replace(m=L.m * s[j, 0], I=L.I * s[j, 1]) for j, L in enumerate(self.links)]
        return self._copy(links, name="P/" + self.name)

    def payload(self, m, p=(0.0, 0.0, 0.0)):
        """Copy with a point mass m (kg) at p (3,) in the tool frame added to the last link.

        p is mapped through ``tool`` into the last link's frame, p_n = R_t·p + t_t; the last
        link becomes the composite body: mass m_n + m, COM r' = (m_n·r + m·p_n)/(m_n + m),
        inertia about r' by the parallel-axis theorem
        I' = I + m_n·(|e|²·1 − e·eᵀ) + m·(|f|²·1 − f·fᵀ), e = r − r', f = p_n − r'.
        (roboticstoolbox-python's ``payload`` instead overwrites the last link's m and r.)
        """
        p = np.asarray(p, dtype=np.float64)
        if p.shape != (3,):
            raise ValueError("payload position p must have 3 elements")
        m = float(m)
        L = self.links[-1]
        pn = self.tool[:3, :3] @ p + self.tool[:3, 3]
        total = L.m + m
        if total == 0.0:
            return self._copy()
        rc = (L.m * L.r + m * pn) / total

        def shift(mass, v):
            return mass * (v @ v * np.eye(3) - np.outer(v, v))

        inertia = L.I + shift(L.m, L.r - rc) + shift(m, pn - rc)
        return self._copy(self.links[:-1] + (L.replace(m=total, r=rc, I=inertia),))

    def configure(self, friction=None, perturb=None, seed=None, gravity=None, base=None,
                  tool=None, payload=None):
        """A new robot for a diagram's ``robots:`` entry.

        Applied in this order: gravity/base/tool replaced, then ``payload`` ((m, p) or
        {'m': m, 'p': p}, p in the (new) tool frame), then ``perturb`` (p with ``seed``), then
        ``friction``: None or 'full' keep it, 'viscous' = nofriction('coulomb'),
        'none' = nofriction('all').
        """
        if friction not in (None, "full", "viscous", "none"):
            raise ValueError(f"friction must be 'full', 'viscous' or 'none', got {friction!r}")
        kw = {}
        if gravity is not None:
            kw["gravity"] = gravity
        if base is not None:
            kw["base"] = base
        if tool is not None:
            kw["tool"] = tool
        robot = self._copy(**kw) if kw else self
        if payload is not None:
            if isinstance(payload, dict):
                unknown = set(payload) - {"m", "p"}
                if unknown or "m" not in payload:
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
    def A(self, j, qj):
        """Link transform ^{j-1}A_j (4, 4) of joint j (0-based) at joint value qj."""
        return self.links[j].A(qj)

    def fkine(self, q, out=None):
        """End-effector pose base·A_1(q_1)…A_n(q_n)·tool: (4, 4), or (m, 4, 4) for q (m, n).
        ``out`` (float64, the result's shape) receives the answer."""
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
        """Frames [base, base·A_1, …, base·A_1…A_n] (tool not applied): (n+1, 4, 4) or
        (m, n+1, 4, 4); used to draw the links."""
        q = _asc(q, _F64)
        res = np.empty(q.shape[:-1] + (self.n + 1, 4, 4))
        self._k.fkine_all(self._P, self._W, q.reshape(-1), res.reshape(-1, 4))
        return res

    def jacob0(self, q, out=None):
        """Geometric Jacobian in the world frame, (6, n) rows [v; ω] of the tool point
        (ẋ = J0·q̇); (m, 6, n) for q (m, n). ``out`` as in ``fkine``."""
        return self._jacobian(q, False, out)

    def jacobn(self, q, out=None):
        """Geometric Jacobian in the tool frame, (6, n) rows [v; ω]; (m, 6, n) for q (m, n).
        ``out`` as in ``fkine``."""
        return self._jacobian(q, True, out)

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

    def jacob_dot(self, q, qd):
        """J̇(q, q̇)·q̇ (6,) in the world frame: the tool-point acceleration and the angular
        acceleration when q̈ = 0, so that ẍ = J0·q̈ + J̇·q̇. (m, 6) for stacks."""
        q, qd = self._stack(q, qd)
        res = np.empty(q.shape[:-1] + (6,))
        self._k.jacob_dot(self._P, self._W, q.reshape(-1), qd.reshape(-1), res.reshape(-1))
        return res

    @staticmethod
    def _stack(*arrays):
        """Joint arrays broadcast to one shape, float64 C-contiguous."""
        arrays = [_asc(a, _F64) for a in arrays]
        if all(a.shape == arrays[0].shape for a in arrays):
            return arrays
        return [_asc(a) for a in np.broadcast_arrays(*arrays)]

    # ------------------------------------------------------------ dynamics
    def rne(self, q, qd, qdd, gravity=None, fext=None, out=None):
        """Inverse dynamics τ = M(q)·q̈ + C(q,q̇)·q̇ + F(q̇) + g(q) + J_nᵀ·fext (N·m or N).

        Recursive Newton–Euler (seed 000 §4.1; Craig's form for modified DH) including motor
        inertia G²·Jm·q̈ and friction F(q̇). ``gravity`` (3,) overrides the robot's (world
        frame). ``fext`` (6,) = [Fx Fy Fz Mx My Mz] is the wrench the end-effector exerts on
        the environment, expressed in the tool frame with the moment about the tool point
        (the seed's "end-effector coordinate frame"; frame n when tool is identity); (m, 6)
        gives one wrench per row. q, qd, qdd (n,) -> (n,); stacks (m, n) -> (m, n).
        ``out`` (float64, C-contiguous, the result's shape) receives the answer.
        """
        q = _asc(q, _F64)
        qd = _asc(qd, _F64)
        qdd = _asc(qdd, _F64)
        g = self._g if gravity is None else self._base_gravity(gravity)
        f = self._z6 if fext is None else self._fext(fext)
        if q.ndim == 1 and qd.ndim == 1 and qdd.ndim == 1:
            if out is None:
                out = np.empty(q.shape[0])
            self._k.rne(self._P, self._W, g, q, qd, qdd, f, out)
            return out
        q, qd, qdd = self._stack(q, qd, qdd)
        res = _result(out, q.shape)
        self._k.rne(self._P, self._W, g, q.reshape(-1), qd.reshape(-1), qdd.reshape(-1), f,
                    res.reshape(-1))
        return res

    def inertia(self, q, out=None):
        """Joint-space inertia M(q) (n, n), motor inertia G²·Jm included (kg·m²);
        (m, n, n) for q (m, n). Composite-rigid-body algorithm. ``out`` as in ``fkine``."""
        q = _asc(q, _F64)
        if q.ndim == 1:
            if out is None:
                out = np.empty((self.n, self.n))
            self._k.inertia(self._P, self._W, q, out)
            return out
        res = _result(out, q.shape + (self.n,))
        self._k.inertia(self._P, self._W, q.reshape(-1), res.reshape(-1, self.n))
        return res

    def coriolis(self, q, qd):
        """Coriolis/centripetal matrix C(q, q̇) (n, n) with C·q̇ the velocity torque and
        Ṁ − 2C skew-symmetric; (m, n, n) for stacks. Friction is not included."""
        q, qd = self._stack(q, qd)
        res = np.empty(q.shape + (self.n,))
        self._k.coriolis(self._P, self._W, q.reshape(-1), qd.reshape(-1), res.reshape(-1, self.n))
        return res

    def gravload(self, q, gravity=None, out=None):
        """Gravity torque g(q) = rne(q, 0, 0) (n,) or (m, n); ``gravity`` overrides the robot's
        (world frame); ``out`` as in ``fkine``."""
        q = _asc(q, _F64)
        g = self._g if gravity is None else self._base_gravity(gravity)
        if q.ndim == 1:
            if out is None:
                out = np.empty(q.shape[0])
            self._k.rne(self._P, self._W, g, q, self._zn, self._zn, self._z6, out)
            return out
        res = _result(out, q.shape)
        z = np.zeros(q.size)
        self._k.rne(self._P, self._W, g, q.reshape(-1), z, z, self._z6, res.reshape(-1))
        return res

    def accel(self, q, qd, tau, gravity=None, fext=None, out=None):
        """Forward dynamics q̈ = M(q)⁻¹·(τ − C(q,q̇)·q̇ − F(q̇) − g(q) − J_nᵀ·fext).

        The bias is one rne call with q̈ = 0, M by the composite-rigid-body algorithm, the
        solve by Cholesky. q, qd, tau (n,) -> (n,); stacks (m, n) -> (m, n). ``gravity`` and
        ``fext`` as in ``rne``; ``out`` (float64, the result's shape) receives the answer.
        """
        q = _asc(q, _F64)
        qd = _asc(qd, _F64)
        tau = _asc(tau, _F64)
        g = self._g if gravity is None else self._base_gravity(gravity)
        f = self._z6 if fext is None else self._fext(fext)
        if q.ndim == 1 and qd.ndim == 1 and tau.ndim == 1:
            if out is None:
                out = np.empty(q.shape[0])
            self._k.accel(self._P, self._W, g, q, qd, tau, f, out)
            return out
        q, qd, tau = self._stack(q, qd, tau)
        res = _result(out, q.shape)
        self._k.accel(self._P, self._W, g, q.reshape(-1), qd.reshape(-1), tau.reshape(-1), f,
                      res.reshape(-1))
        return res

    def friction(self, qd):
        """Joint friction F(q̇) = |G|·(B·|G|·q̇ + Tc) per joint (n,) or (m, n); Tc = Tc+ for
        q̇ > 0, Tc- for q̇ < 0, 0 at rest. rne adds it; it opposes motion."""
        qd = _asc(qd, _F64)
        res = np.empty(qd.shape)
        self._k.friction(self._P, qd.reshape(-1), res.reshape(-1))
        return res

    # ------------------------------------------------------------ queries and display
    def islimit(self, q):
        """Per joint −1 below qlim[:, 0], +1 above qlim[:, 1], 0 within or without limits."""
        q = np.asarray(q, dtype=np.float64)
        return np.where(q < self.qlim[:, 0], -1, np.where(q > self.qlim[:, 1], 1, 0))

    def isspherical(self):
        """True when the last three joints are revolute with orthogonally intersecting axes."""
        if self.n < 3 or self.config[-3:] != "RRR":
            return False
        tw = np.abs(np.sin(self.alpha))
        if self.mdh:   # axes z_{n-3}, z_{n-2}, z_{n-1} meet at o_{n-3}
            return bool(self.a[-2] == 0 and self.a[-1] == 0 and self.d[-2] == 0
                        and np.allclose(tw[-2:], 1))
        # standard DH: axes z_{n-4}, z_{n-3}, z_{n-2} meet at o_{n-3}
        return bool(self.a[-3] == 0 and self.a[-2] == 0 and self.d[-2] == 0
                    and np.allclose(tw[-3:-1], 1))

    def __repr__(self):
        return f"SerialLink({self.name!r}, n={self.n}, {self.config}, {self.convention} DH)"

    def __str__(self):
        def num(x):
            return f"{x:.6g}"

        lines = [f"{self.name or 'noname'}"
                 + (f" ({self.manufacturer})" if self.manufacturer else "")
                 + f": {self.n} axis, {self.config}, {self.convention} DH"]
        if self.comment:
            lines.append(f"  {self.comment}")
        heads = ("theta", "d", "a", "alpha", "offset") if not self.mdh else \
            ("theta", "d", "a_{j-1}", "alpha_{j-1}", "offset")
        rule = "+---+" + "+".join("-" * 13 for _ in heads) + "+"
        lines += [rule, "| j |" + "|".join(f"{h:>12} " for h in heads) + "|", rule]
        for j, L in enumerate(self.links):
            th = f"q{j}" if L.sigma == 0 else num(L.theta)
            d = num(L.d) if L.sigma == 0 else f"q{j}"
            cells = (th, d, num(L.a), num(L.alpha), num(L.offset))
            lines.append(f"|{j:>2} |" + "|".join(f"{c:>12} " for c in cells) + "|")
        lines.append(rule)
        lines.append("gravity = [" + ", ".join(num(x) for x in self.gravity) + "]")
        for label, T in (("base", self.base), ("tool", self.tool)):
            if not np.array_equal(T, np.eye(4)):
                lines.append(f"{label} = " + np.array2string(T, precision=4, suppress_small=True,
                                                             prefix=f"{label} = "))
        if self._poses:
            lines.append("poses: " + ", ".join(self._poses))
        return "\n".join(lines)

    def display(self):
        """The DH table with name, joint structure, gravity, base, tool (``str(robot)``)."""
        return str(self)

    def dyn(self, j=None):
        """Dynamic parameters of every link (or of link j, 0-based) as text: mass, COM,
        inertia about the COM, motor inertia, gear ratio, viscous and Coulomb friction, qlim."""
        out = []
        for k in range(self.n) if j is None else [j]:
            L = self.links[k]
            I = L.I
            out += [f"link {k} ({L.type}):",
                    f"  m  = {L.m:.6g} kg",
                    f"  r  = [{', '.join(f'{x:.6g}' for x in L.r)}] m",
                    f"  I  = [Ixx Iyy Izz Ixy Iyz Ixz] = [{I[0, 0]:.6g}, {I[1, 1]:.6g}, "
                    f"{I[2, 2]:.6g}, {I[0, 1]:.6g}, {I[1, 2]:.6g}, {I[0, 2]:.6g}] kg.m^2",
                    f"  Jm = {L.Jm:.6g} kg.m^2, G = {L.G:.6g}",
                    f"  B  = {L.B:.6g}, Tc = [{L.Tc[0]:.6g}, {L.Tc[1]:.6g}] (motor side)",
                    f"  qlim = [{L.qlim[0]:.6g}, {L.qlim[1]:.6g}]"]
        return "\n".join(out)

    # ------------------------------------------------------------ inverse kinematics, analysis
    def ikine(self, T, q0=None, mask=None, **options):
        """Numerical inverse kinematics: ``ikine.ikine(self, T, q0, mask, **options)``."""
        from .ikine import ikine
        return ikine(self, T, q0, mask, **options)

    def ikine6s(self, T, config="lun"):
        """Closed form for a Puma-type arm with a spherical wrist: ``ikine.ikine6s``."""
        from .ikine import ikine6s
        return ikine6s(self, T, config)

    ikine560 = ikine6s

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
