"""Symbolic kinematics and dynamics of twist and DH robots (sympy, the ``symbolic`` extra).

The formulas of seed 004 with sympy matrices: the exponentials (3-6, 3-19, 3-20), the
adjoint (3-25), forward kinematics (3-29), the spatial, body and link body Jacobians (3-30,
3-32, 3-34), the mass matrix M = Σ J_iᵀ·M_i·J_i (3-37, ``dyn_getM``) and the Christoffel
symbols (``dyn_getF``). ``SymbolicRobot`` collects them for one robot with the joint symbols
of ``gencoords`` (seed 003): fkine, jacob0, jacobn, jacobs, inertia, christoffel, coriolis,
gravload, friction and rne, simplified, and ``numeric(...)`` turns any of them back into a
fast numpy function (``sympy.lambdify``).

Twists are 6x1 matrices (v, ω), rigid motions 4x4 matrices; angles in radians, SI units.
Importing this module imports sympy; nothing else in blocksim does.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

__all__ = ["gencoords", "genforces", "skew", "wedge", "exp_rot", "exp_twist", "screw",
           "translation", "Ad", "inverse", "dh_transform", "poe", "spatial_jacobian",
           "link_body_jacobian", "body_jacobian", "generalized_inertia", "mass_matrix",
           "christoffel", "coriolis_matrix", "simplify", "exact", "lambdify", "SymbolicRobot"]


def gencoords(n):
    """Generalized coordinates (seed 003): (q, qd, qdd), n x 1 matrices of real symbols
    q1…qn, qd1…qdn, qdd1…qddn."""
    return tuple(sp.Matrix(sp.symbols(f"{s}1:{n + 1}", real=True)) for s in ("q", "qd", "qdd"))


def genforces(n):
    """Generalized forces (seed 003): an n x 1 matrix of real symbols Q1…Qn."""
    return sp.Matrix(sp.symbols(f"Q1:{n + 1}", real=True))


def _col(x):
    return sp.Matrix(x).reshape(len(x), 1) if not isinstance(x, sp.MatrixBase) else \
        x.reshape(len(x), 1)


def skew(w):
    """ω^ (3-2): skew(w)·b = w × b."""
    w = _col(w)
    return sp.Matrix([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])


def wedge(xi):
    """ξ^ = [[ω^, v], [0, 0]] (3-14) of a twist (v, ω)."""
    xi = _col(xi)
    return sp.Matrix.vstack(sp.Matrix.hstack(skew(xi[3:, 0]), xi[:3, 0]), sp.zeros(1, 4))


def exp_rot(w, theta):
    """e^{ω^θ} = I + ω^·sin θ + ω^²·(1 − cos θ) (3-6) for a unit axis w."""
    K = skew(w)
    return sp.eye(3) + K * sp.sin(theta) + K * K * (1 - sp.cos(theta))


def _rigid(R, p):
    return sp.Matrix.vstack(sp.Matrix.hstack(R, _col(p)), sp.Matrix([[0, 0, 0, 1]]))


def exp_twist(xi, theta):
    """e^{ξ^θ} (3-19, 3-20) of a twist (v, ω) with |ω| = 1 or ω = 0 (exp4_2 of seed 004):
    [[e^{ω^θ}, (I − e^{ω^θ})(ω × v) + ω·ωᵀ·v·θ], [0, 1]], or [[I, v·θ], [0, 1]]."""
    xi = _col(xi)
    v, w = xi[:3, 0], xi[3:, 0]
    if all(x == 0 for x in w):
        return _rigid(sp.eye(3), v * theta)
    R = exp_rot(w, theta)
    return _rigid(R, (sp.eye(3) - R) * w.cross(v) + w * (w.T * v)[0] * theta)


def screw(w, q, h=0):
    """Twist (−ω × q + h·ω, ω) of a rotation about the axis w through q with pitch h (the
    seed's ``screw(w, q)`` for h = 0, 3-27)."""
    w, q = _col(w), _col(q)
    return sp.Matrix.vstack(-w.cross(q) + h * w, w)


def translation(v):
    """Twist (v, 0) of a translation along v (3-28)."""
    return sp.Matrix.vstack(_col(v), sp.zeros(3, 1))


def Ad(g):
    """Ad_g = [[R, p^·R], [0, R]] (3-25)."""
    R, p = g[:3, :3], g[:3, 3]
    return sp.Matrix.vstack(sp.Matrix.hstack(R, skew(p) * R), sp.Matrix.hstack(sp.zeros(3), R))


def inverse(g):
    """g⁻¹ = [[Rᵀ, −Rᵀ·p], [0, 1]]."""
    R, p = g[:3, :3], g[:3, 3]
    return _rigid(R.T, -R.T * p)


def dh_transform(theta, d, a, alpha, modified=False):
    """DH link transform: standard Rz(θ)·Tz(d)·Tx(a)·Rx(α) (seed 004 eq. 3-36, ``DH``), or
    modified Rx(α)·Tx(a)·Rz(θ)·Tz(d)."""
    ct, st, ca, sa = sp.cos(theta), sp.sin(theta), sp.cos(alpha), sp.sin(alpha)
    if modified:
        return sp.Matrix([[ct, -st, 0, a], [ca * st, ca * ct, -sa, -sa * d],
                          [sa * st, sa * ct, ca, ca * d], [0, 0, 0, 1]])
    return sp.Matrix([[ct, -st * ca, st * sa, a * ct], [st, ct * ca, -ct * sa, a * st],
                      [0, sa, ca, d], [0, 0, 0, 1]])


def poe(twists, theta, gst0=None):
    """g_st(θ) = e^{ξ1^θ1}·…·e^{ξn^θn}·g_st(0) (3-29)."""
    g = sp.eye(4)
    for xi, th in zip(twists, theta):
        g = g * exp_twist(xi, th)
    return g if gst0 is None else g * gst0


def spatial_jacobian(twists, theta):
    """J^s = [ξ1, ξ2', …], ξi' = Ad_{e^{ξ1^θ1}…e^{ξ(i−1)^θ(i−1)}}·ξi (3-30), 6 x n."""
    cols, g = [], sp.eye(4)
    for xi, th in zip(twists, theta):
        cols.append(Ad(g) * _col(xi))
        g = g * exp_twist(xi, th)
    return sp.Matrix.hstack(*cols)


def link_body_jacobian(twists, theta, frame0, i):
    """[ξ1†, …, ξi†, 0, …] with ξj† = Ad⁻¹_{e^{ξj^θj}…e^{ξi^θi}·g_sl(0)}·ξj (3-34), 6 x n,
    i counted from 0."""
    cols = [sp.zeros(6, 1) for _ in twists]
    g = frame0
    for j in range(i, -1, -1):
        g = exp_twist(twists[j], theta[j]) * g
        cols[j] = Ad(inverse(g)) * _col(twists[j])
    return sp.Matrix.hstack(*cols)


def body_jacobian(twists, theta, gst0):
    """J^b_st = [ξ1†, …, ξn†] (3-32), 6 x n."""
    return link_body_jacobian(twists, theta, gst0, len(twists) - 1)


def generalized_inertia(m, r=(0, 0, 0), I=None):
    """[[m·1, −m·r^], [m·r^, I − m·r^·r^]] for twists (v, ω) of a frame with the centre of
    mass at r and the inertia I (3x3) about it; diag(m, m, m, Ix, Iy, Iz) for r = 0 and
    principal axes (seed 004 §4.7)."""
    S = skew(r)
    I = sp.zeros(3) if I is None else sp.Matrix(I)
    return sp.Matrix.vstack(sp.Matrix.hstack(m * sp.eye(3), -m * S),
                            sp.Matrix.hstack(m * S, I - m * S * S))


def mass_matrix(twists, frames, inertias, theta):
    """M(θ) = Σ_i J_iᵀ·M_i·J_i (3-37, ``dyn_getM``): J_i the body Jacobian of link i's frame
    (frames[i] = g_sl_i(0)), M_i its 6x6 generalized inertia."""
    n = len(twists)
    M = sp.zeros(n)
    for i, (g0, Mi) in enumerate(zip(frames, inertias)):
        J = link_body_jacobian(twists, theta, g0, i)
        M += J.T * Mi * J
    return M


def christoffel(M, theta):
    """Γ_ijk = ½(∂M_ij/∂θk + ∂M_ik/∂θj − ∂M_kj/∂θi) (``dyn_getF``), as nested lists [i][j][k]."""
    n = len(theta)
    dM = [M.diff(t) for t in theta]
    return [[[(dM[k][i, j] + dM[j][i, k] - dM[i][k, j]) / 2 for k in range(n)]
             for j in range(n)] for i in range(n)]


def coriolis_matrix(gamma, theta_dot):
    """C_ij = Σ_k Γ_ijk·θ̇k."""
    n = len(theta_dot)
    return sp.Matrix(n, n, lambda i, j: sum(gamma[i][j][k] * theta_dot[k] for k in range(n)))


def simplify(expr):
    """trigsimp(expand(x)) of every element of a matrix, a nested list or a scalar: products
    of sines and cosines expanded, then collected into sums of angles (faster than
    sympy.simplify on these expressions, and as short)."""
    if isinstance(expr, sp.MatrixBase):
        return expr.applyfunc(simplify)
    if isinstance(expr, list):
        return [simplify(x) for x in expr]
    return sp.trigsimp(sp.expand(expr))


def exact(x, tol=1e-12):
    """An exact sympy number for a float: 0 below tol, a multiple k·π/12 when x is one to
    1e-12 relative, otherwise the rational of its shortest decimal repr (0.4318 -> 2159/5000)."""
    if isinstance(x, sp.Basic):
        return x
    x = float(x)
    if abs(x) < tol:
        return sp.Integer(0)
    k = round(x / (math.pi / 12))
    if k and abs(x - k * math.pi / 12) <= 1e-12 * abs(x):
        return k * sp.pi / 12
    return sp.Rational(repr(x))


def _exact_matrix(a):
    a = np.asarray(a, dtype=float)
    return sp.Matrix(a.shape[0], a.shape[1] if a.ndim == 2 else 1,
                     [exact(x) for x in a.ravel()])


def _default_frames(twists):
    """``robot.default_frames`` for symbolic twists: base-parallel axes, origins at ω × v on
    a revolute axis, at the previous link's origin for a prismatic joint."""
    frames, p = [], sp.zeros(3, 1)
    for xi in twists:
        if any(x != 0 for x in xi[3:, 0]):
            p = xi[3:, 0].cross(xi[:3, 0])
        frames.append(_rigid(sp.eye(3), p))
    return frames


class SymbolicRobot:
    """A symbolic open-chain robot: twists in the base frame, the home tool pose, link frames
    and dynamic parameters, any of them numbers or sympy expressions.

    ``SymbolicRobot(twists, home, frames=None, m=None, r=None, I=None, Jm=None, G=None,
    B=None, Tc=None, gravity=(0, 0, 981/100), base=None, simplified=True)``: ``twists`` n
    6-vectors (v, ω), ``home`` 4x4, ``frames`` n 4x4 link frames at q = 0, ``m`` n masses,
    ``r`` n centres of mass (link frame), ``I`` n 3x3 inertias about them, ``Jm``, ``G``,
    ``B`` n values, ``Tc`` n pairs (Tc+, Tc-), ``gravity`` the upward acceleration that
    models gravity in the world frame, ``base`` 4x4. Joint symbols ``q``, ``qd``, ``qdd``
    from ``gencoords(n)``. Results are cached; with ``simplified`` every one is simplified
    (slow for six joints: use it for two or three).
    """

    def __init__(self, twists, home, frames=None, m=None, r=None, I=None, Jm=None, G=None,
                 B=None, Tc=None, gravity=(0, 0, sp.Rational(981, 100)), base=None,
                 simplified=True):
        self.n = n = len(twists)
        self.twists = [_col(xi) for xi in twists]
        self.home = sp.Matrix(home)
        self.frames = [sp.Matrix(h) for h in frames] if frames is not None else \
            _default_frames(self.twists)
        zero = [0] * n
        self.m = list(zero if m is None else m)
        self.r = [_col(x) for x in ([(0, 0, 0)] * n if r is None else r)]
        self.I = [sp.Matrix(x) for x in ([sp.zeros(3)] * n if I is None else I)]
        self.Jm = list(zero if Jm is None else Jm)
        self.G = list([1] * n if G is None else G)
        self.B = list(zero if B is None else B)
        self.Tc = [tuple(x) for x in ([(0, 0)] * n if Tc is None else Tc)]
        self.base = sp.eye(4) if base is None else sp.Matrix(base)
        self.gravity = self.base[:3, :3].T * _col(gravity)      # in the base frame
        self.simplified = simplified
        self.q, self.qd, self.qdd = gencoords(n)
        self._cache = {}

    @classmethod
    def from_dh(cls, links, modified=False, tool=None, **kw):
        """A DH robot: ``links`` mappings with the keys of ``Link`` (alpha, a, theta, d, type,
        offset, m, r, I (3x3), Jm, G, B, Tc), numbers or sympy expressions. Its twists, home
        pose and link frames are those of ``dh.twists_from_dh`` / ``dh_home_frames``,
        computed exactly from the DH transforms (3-36)."""
        H, g = [], sp.eye(4)
        for L in links:
            prismatic = L.get("type", "revolute") == "prismatic"
            off = L.get("offset", 0)
            theta = L.get("theta", 0) if prismatic else off
            d = off if prismatic else L.get("d", 0)
            g = g * dh_transform(theta, d, L.get("a", 0), L.get("alpha", 0), modified)
            H.append(g)
        axes = H if modified else [sp.eye(4)] + H[:-1]
        twists = [translation(f[:3, 2]) if L.get("type", "revolute") == "prismatic"
                  else screw(f[:3, 2], f[:3, 3]) for f, L in zip(axes, links)]
        home = H[-1] * (sp.eye(4) if tool is None else sp.Matrix(tool))
        dyn = {key: [L.get(key, default) for L in links] for key, default in
               (("m", 0), ("r", (0, 0, 0)), ("I", sp.zeros(3)), ("Jm", 0), ("G", 1), ("B", 0),
                ("Tc", (0, 0)))}
        return cls(twists, home, frames=H, **dyn, **kw)

    @classmethod
    def from_robot(cls, robot, **kw):
        """The symbolic model of a numeric SerialLink or TwistRobot, every number made exact
        (``exact``); SerialLink goes through ``from_dh``."""
        def vec(a):
            return [exact(x) for x in np.ravel(a)]

        common = dict(gravity=vec(robot.gravity), base=_exact_matrix(robot.base))
        common.update(kw)
        if hasattr(robot, "twists"):
            return cls([vec(xi) for xi in robot.twists], _exact_matrix(robot.home @ robot.tool),
                       frames=[_exact_matrix(h) for h in robot.frames], m=vec(robot.m),
                       r=[vec(x) for x in robot.r], I=[_exact_matrix(x) for x in robot.I],
                       Jm=vec(robot.Jm), G=vec(robot.G), B=vec(robot.B),
                       Tc=[vec(x) for x in robot.Tc], **common)
        links = [dict(alpha=exact(L.alpha), a=exact(L.a), theta=exact(L.theta), d=exact(L.d),
                      type=L.type, offset=exact(L.offset), m=exact(L.m), r=vec(L.r),
                      I=_exact_matrix(L.I), Jm=exact(L.Jm), G=exact(L.G), B=exact(L.B),
                      Tc=vec(L.Tc)) for L in robot.links]
        return cls.from_dh(links, modified=robot.mdh, tool=_exact_matrix(robot.tool), **common)

    def _get(self, key, build):
        """The cached result `key`, built (and simplified when `simplified`) on first use."""
        if key not in self._cache:
            value = build()
            self._cache[key] = simplify(value) if self.simplified else value
        return self._cache[key]

    # ------------------------------------------------------------ kinematics
    def fkine(self):
        """Tool pose base·e^{ξ1^q1}…e^{ξn^qn}·home (4x4)."""
        return self._get("fkine", lambda: self.base * poe(self.twists, self.q, self.home))

    def jacobs(self):
        """Spatial manipulator Jacobian (3-30) in the base frame, 6 x n."""
        return self._get("jacobs", lambda: spatial_jacobian(self.twists, self.q))

    def jacobn(self):
        """Body Jacobian of the tool frame (3-32), 6 x n: SerialLink's jacobn."""
        return self._get("jacobn", lambda: body_jacobian(self.twists, self.q, self.home))

    def jacob0(self):
        """Geometric Jacobian of the tool point in the world frame, rows [v; ω], 6 x n:
        diag(R, R)·J^b with R the tool orientation."""
        def build():
            R = self.fkine()[:3, :3]
            Jb = self.jacobn()
            return sp.Matrix.vstack(R * Jb[:3, :], R * Jb[3:, :])
        return self._get("jacob0", build)

    # ------------------------------------------------------------ dynamics
    def link_inertias(self):
        """Generalized inertias M_i (6x6) of the links in their frames."""
        return [generalized_inertia(*a) for a in zip(self.m, self.r, self.I)]

    def link_jacobians(self):
        """Body Jacobians J_i (6 x n) of the link frames (3-34)."""
        return self._get("link_jacobians", lambda: [
            link_body_jacobian(self.twists, self.q, g0, i) for i, g0 in enumerate(self.frames)])

    def inertia(self):
        """M(q) = Σ J_iᵀ·M_i·J_i (3-37) + diag(G²·Jm), n x n, from the (simplified) link
        Jacobians."""
        def build():
            M = sp.diag(*[g ** 2 * j for g, j in zip(self.G, self.Jm)])
            for J, Mi in zip(self.link_jacobians(), self.link_inertias()):
                M += J.T * Mi * J
            return M
        return self._get("inertia", build)

    def christoffel(self):
        """Γ_ijk of M(q) (``dyn_getF``), nested lists [i][j][k]."""
        return self._get("christoffel", lambda: christoffel(self.inertia(), self.q))

    def coriolis(self):
        """C(q, qd) = [Σ_k Γ_ijk·qd_k], n x n."""
        return self._get("coriolis", lambda: coriolis_matrix(self.christoffel(), self.qd))

    def gravload(self):
        """g(q) = ∂V/∂q, V = Σ_i m_i·gᵀ·c_i(q) with c_i = e^{ξ1^q1}…e^{ξi^qi}·g_sl_i(0)·r_i
        the centre of mass in the base frame and g the base-frame gravity, n x 1."""
        def build():
            V, g = 0, sp.eye(4)
            for xi, q, H, m, r in zip(self.twists, self.q, self.frames, self.m, self.r):
                g = g * exp_twist(xi, q)
                c = (g * H * sp.Matrix.vstack(r, sp.Matrix([1])))[:3, 0]
                V += m * (self.gravity.T * c)[0]
            return sp.Matrix([V]).jacobian(self.q).T
        return self._get("gravload", build)

    def friction(self):
        """F(qd) = |G|·(B·|G|·qd + Tc), Tc = Tc+ for qd > 0, Tc- for qd < 0, 0 at rest."""
        return sp.Matrix([sp.Abs(G) * (B * sp.Abs(G) * v + sp.Piecewise((tc[0], v > 0),
                                                                       (tc[1], v < 0), (0, True)))
                          for G, B, tc, v in zip(self.G, self.B, self.Tc, self.qd)])

    def rne(self):
        """τ = M(q)·qdd + C(q, qd)·qd + g(q) + F(qd), n x 1."""
        return self.inertia() * self.qdd + self.coriolis() * self.qd + self.gravload() \
            + self.friction()

    # ------------------------------------------------------------ numeric functions
    def numeric(self, what, params=None):
        """A numpy function of one of fkine, jacobs, jacobn, jacob0, inertia, gravload
        (f(q)), coriolis (f(q, qd)) or rne (f(q, qd, qdd)); ``params`` {symbol: value}
        substitutes the robot's parameter symbols first. Arguments (n,) -> arrays of the
        result's shape ((n,) for vectors)."""
        args = {"coriolis": (self.q, self.qd), "rne": (self.q, self.qd, self.qdd)}.get(
            what, (self.q,))
        if what not in ("fkine", "jacobs", "jacobn", "jacob0", "inertia", "gravload",
                        "coriolis", "rne"):
            raise ValueError(f"numeric: unknown function {what!r}")
        return lambdify(getattr(self, what)(), args, params)


def lambdify(expr, args, params=None):
    """``expr`` (a matrix) with ``params`` {symbol: value} substituted, as a numpy function
    of the argument vectors ``args`` (sequences of symbols); raises ValueError if other
    symbols remain. A column vector gives (n,) results."""
    expr = sp.Matrix(expr)
    if params:
        expr = expr.subs(params)
    free = expr.free_symbols - {s for a in args for s in a}
    if free:
        raise ValueError("symbols without a value: " + ", ".join(sorted(map(str, free)))
                         + " (give them in params)")
    f = sp.lambdify([list(a) for a in args], expr, "numpy")
    shape = (expr.rows,) if expr.cols == 1 else expr.shape

    def numeric(*values):
        return np.asarray(f(*values), dtype=float).reshape(shape)

    return numeric
