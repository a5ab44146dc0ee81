"""Kernels of a twist-defined robot, with the calling convention of ``blocks.robot._kernels``.

The robot blocks call ``k.fkine(P, W, q, out)``, ``k.jacobian(P, W, q, in_tool, out)``,
``k.rne(P, W, g, q, qd, qdd, fext, out)``, ``k.inertia(P, W, q, out)``,
``k.accel(P, W, g, q, qd, tau, fext, out)`` with ``(k, P, W, g) = kernel_args(robot)``; a
``TwistRobot`` hands out this module and its own packing, so every robot block works with
it unchanged. Flat joint arrays (m*n,) hold m configurations; outputs as in ``_kernels``.

Packing (``TwistRobot`` builds it once):

- ``P`` (n, NP) per joint i: the joint screw A_i = Ad_{H_i⁻¹}·ξ_i in link frame i (H_i the
  home pose of link i's frame in the base frame, ξ_i the spatial twist), the flag SIGMA (1
  for ω = 0), PREV the home pose H_{i−1}⁻¹·H_i of frame i in frame i−1 (3x4 row-major,
  H_{−1} = I), the generalized inertia of link i in its frame (6x6 row-major, twists
  (v, ω)), motor inertia JM, gear ratio GR, viscous B and Coulomb TCP/TCN friction.
- ``W`` (NW,): BASE (3x4) and TAIL = H_{n−1}⁻¹·g_st(0)·tool (3x4), the tool in the last
  link's frame.

With T_{i−1,i}(θ) = PREV_i·e^{A_i^θ_i} the pose of link i in link i−1 (Lynch & Park,
Modern Robotics §8.3, in Murray–Li–Sastry's (v, ω) order), g_st(θ) = base·T_{−1,0}·…·
T_{n−2,n−1}·TAIL = base·e^{ξ0^θ0}…e^{ξ(n−1)^θ(n−1)}·g_st(0)·tool. Dynamics are in the base
frame (gravity g given there). Frames are 12-tuples [R00 R01 R02 px R10 …]; 6-vectors
(twists (v, ω), wrenches (f, τ)) are 6-tuples. SI units, radians.
"""

import math

import numpy as np

from .._jit import jit
from .._kernels import _check_out, _cross, _mul, _put, _rows, _rtv, _rv, _tuple12

XI, SIGMA, PREV, GI = 0, 6, 7, 19          # columns: A (6), flag, PREV (12), inertia (36)
JM, GR, B, TCP, TCN = 55, 56, 57, 58, 59
NP = 60
BASE, TAIL = 0, 12
NW = 24

_EYE = (1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0)


# ---------------------------------------------------------------- 6-vector algebra
@jit
def _vec6(a, i):
    return a[i], a[i + 1], a[i + 2], a[i + 3], a[i + 4], a[i + 5]


@jit
def _dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@jit
def _add6(a, b):
    return a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5]


@jit
def _scale6(a, s):
    return a[0] * s, a[1] * s, a[2] * s, a[3] * s, a[4] * s, a[5] * s


@jit
def _twist_in(t, x):
    """Ad_{T⁻¹}·x: twist x of frame a given in a's coordinates -> in b's, T = pose of b in a:
    (Rᵀ(x_v − p × x_ω), Rᵀ·x_ω)."""
    cx, cy, cz = _cross(t[3], t[7], t[11], x[3], x[4], x[5])
    vx, vy, vz = _rtv(t, x[0] - cx, x[1] - cy, x[2] - cz)
    wx, wy, wz = _rtv(t, x[3], x[4], x[5])
    return vx, vy, vz, wx, wy, wz


@jit
def _twist_out(t, x):
    """Ad_T·x = (R·x_v + p × R·x_ω, R·x_ω) (3-25): twist coordinates in b -> in a."""
    wx, wy, wz = _rv(t, x[3], x[4], x[5])
    vx, vy, vz = _rv(t, x[0], x[1], x[2])
    cx, cy, cz = _cross(t[3], t[7], t[11], wx, wy, wz)
    return vx + cx, vy + cy, vz + cz, wx, wy, wz


@jit
def _wrench_out(t, f):
    """Ad_{T⁻¹}ᵀ·f = (R·f, p × R·f + R·τ): wrench in b's coordinates -> in a's (about a's
    origin), T = pose of b in a; the dual of ``_twist_in``."""
    fx, fy, fz = _rv(t, f[0], f[1], f[2])
    nx, ny, nz = _rv(t, f[3], f[4], f[5])
    cx, cy, cz = _cross(t[3], t[7], t[11], fx, fy, fz)
    return fx, fy, fz, nx + cx, ny + cy, nz + cz


@jit
def _ad(v, x):
    """ad_V·x = (ω × x_v + v × x_ω, ω × x_ω) for V = (v, ω)."""
    ax, ay, az = _cross(v[3], v[4], v[5], x[0], x[1], x[2])
    bx, by, bz = _cross(v[0], v[1], v[2], x[3], x[4], x[5])
    cx, cy, cz = _cross(v[3], v[4], v[5], x[3], x[4], x[5])
    return ax + bx, ay + by, az + bz, cx, cy, cz


@jit
def _ad_t(v, f):
    """ad_Vᵀ·F = (−ω × f, −v × f − ω × τ) for V = (v, ω), F = (f, τ)."""
    ax, ay, az = _cross(v[3], v[4], v[5], f[0], f[1], f[2])
    bx, by, bz = _cross(v[0], v[1], v[2], f[0], f[1], f[2])
    cx, cy, cz = _cross(v[3], v[4], v[5], f[3], f[4], f[5])
    return -ax, -ay, -az, -bx - cx, -by - cy, -bz - cz


@jit
def _mat6(G, r, c, x):
    """G[r, c:c+36] (a 6x6 row-major matrix) times the 6-tuple x."""
    return (_dot6(G[r, c:c + 6], x), _dot6(G[r, c + 6:c + 12], x),
            _dot6(G[r, c + 12:c + 18], x), _dot6(G[r, c + 18:c + 24], x),
            _dot6(G[r, c + 24:c + 30], x), _dot6(G[r, c + 30:c + 36], x))


@jit
def _unit6(k):
    """The k-th unit 6-vector."""
    return (1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0,
            1.0 if k == 3 else 0.0, 1.0 if k == 4 else 0.0, 1.0 if k == 5 else 0.0)


@jit
def _inv12(t):
    """Inverse of a 3x4 frame: [Rᵀ, −Rᵀ·p]."""
    px, py, pz = _rtv(t, t[3], t[7], t[11])
    return (t[0], t[4], t[8], -px, t[1], t[5], t[9], -py, t[2], t[6], t[10], -pz)


# ---------------------------------------------------------------- kinematics
@jit
def _exp(P, j, th):
    """e^{A^θ} of joint j's screw A = (v, ω) in its link frame (3-19, 3-20; |ω| = 1)."""
    vx, vy, vz = P[j, XI], P[j, XI + 1], P[j, XI + 2]
    if P[j, SIGMA] != 0.0:
        return (1.0, 0.0, 0.0, vx * th, 0.0, 1.0, 0.0, vy * th, 0.0, 0.0, 1.0, vz * th)
    wx, wy, wz = P[j, XI + 3], P[j, XI + 4], P[j, XI + 5]
    c, s = math.cos(th), math.sin(th)
    u = 1.0 - c
    r00, r01, r02 = c + u * wx * wx, u * wx * wy - s * wz, u * wx * wz + s * wy
    r10, r11, r12 = u * wx * wy + s * wz, c + u * wy * wy, u * wy * wz - s * wx
    r20, r21, r22 = u * wx * wz - s * wy, u * wy * wz + s * wx, c + u * wz * wz
    ux, uy, uz = _cross(wx, wy, wz, vx, vy, vz)
    h = (wx * vx + wy * vy + wz * vz) * th
    px = ux - (r00 * ux + r01 * uy + r02 * uz) + wx * h
    py = uy - (r10 * ux + r11 * uy + r12 * uz) + wy * h
    pz = uz - (r20 * ux + r21 * uy + r22 * uz) + wz * h
    return (r00, r01, r02, px, r10, r11, r12, py, r20, r21, r22, pz)


@jit
def _link(P, j, th):
    """T_{j−1,j}(θ) = PREV_j·e^{A_j^θ}: pose of link j in link j−1."""
    return _mul(_tuple12(P[j], PREV), _exp(P, j, th))


@jit
def _frames(P, W, use_base, q, off, F):
    """F[0] = base (or I), F[j+1] = F[j]·T_{j−1,j}(q_j): link frames; F is (n+1, 12)."""
    t = _tuple12(W, BASE) if use_base else _EYE
    for i in range(12):
        F[0, i] = t[i]
    for j in range(P.shape[0]):
        t = _mul(t, _link(P, j, q[off + j]))
        for i in range(12):
            F[j + 1, i] = t[i]


@jit
def fkine(P, W, q, out):
    """Tool pose base·e^{ξ0^θ0}…·g_st(0)·tool; out (4m, 4)."""
    n = P.shape[0]
    m = _rows(q, n)
    _check_out(out, 4 * m, 4)
    tail = _tuple12(W, TAIL)
    for k in range(m):
        t = _tuple12(W, BASE)
        for j in range(n):
            t = _mul(t, _link(P, j, q[k * n + j]))
        _put(out, 4 * k, _mul(t, tail))


@jit
def fkine_all(P, W, q, out):
    """Frames [base, link 0, …, link n−1] in the world; out (4m(n+1), 4)."""
    n = P.shape[0]
    m = _rows(q, n)
    _check_out(out, 4 * m * (n + 1), 4)
    F = np.empty((n + 1, 12))
    for k in range(m):
        _frames(P, W, True, q, k * n, F)
        for f in range(n + 1):
            _put(out, 4 * (k * (n + 1) + f), _tuple12(F[f], 0))


@jit
def jacobian(P, W, q, in_tool, out):
    """Geometric Jacobian of the tool point (6, n) per configuration, rows [v; ω].

    Column j: the joint's spatial twist S_j = Ad_{F_j}·A_j = (s_v, s_ω) (world frame) moved
    to the tool point p: [s_v + s_ω × p; s_ω]; ``in_tool`` rotates both halves into the tool
    frame (jacobn = the body Jacobian 3-32). out (6m, n)."""
    n = P.shape[0]
    m = _rows(q, n)
    _check_out(out, 6 * m, n)
    F = np.empty((n + 1, 12))
    for k in range(m):
        _frames(P, W, True, q, k * n, F)
        te = _mul(_tuple12(F[n], 0), _tuple12(W, TAIL))
        o = 6 * k
        for j in range(n):
            s = _twist_out(_tuple12(F[j + 1], 0), _vec6(P[j], XI))
            cx, cy, cz = _cross(s[3], s[4], s[5], te[3], te[7], te[11])
            vx, vy, vz = s[0] + cx, s[1] + cy, s[2] + cz
            wx, wy, wz = s[3], s[4], s[5]
            if in_tool:
                vx, vy, vz = _rtv(te, vx, vy, vz)
                wx, wy, wz = _rtv(te, wx, wy, wz)
            out[o, j] = vx
            out[o + 1, j] = vy
            out[o + 2, j] = vz
            out[o + 3, j] = wx
            out[o + 4, j] = wy
            out[o + 5, j] = wz


# ---------------------------------------------------------------- dynamics
@jit
def _friction1(P, j, qdj):
    """Link-side friction |G|·(B·|G|·q̇ + Tc), Tc = Tc+ (q̇ > 0), Tc- (q̇ < 0), 0 at rest."""
    g = abs(P[j, GR])
    f = g * g * P[j, B] * qdj
    if qdj > 0.0:
        f += g * P[j, TCP]
    elif qdj < 0.0:
        f += g * P[j, TCN]
    return f


@jit
def friction(P, qd, out):
    """Joint friction torques F(q̇); qd and out (m*n,)."""
    n = P.shape[0]
    _rows(qd, n)
    if out.shape[0] != qd.shape[0]:
        raise ValueError("out has the wrong length")
    for i in range(qd.shape[0]):
        out[i] = _friction1(P, i % n, qd[i])


@jit
def _rne_row(P, W, g, q, qd, off, qdd, aoff, fext, foff, out, ooff, work):
    """Newton–Euler recursion in the link frames for one configuration.

    Outward, from V_{−1} = 0 and V̇_{−1} = (g, 0) (the base accelerates upward to model
    gravity): V_j = Ad_{T_{j−1,j}⁻¹}·V_{j−1} + A_j·θ̇_j,
    V̇_j = Ad_{T_{j−1,j}⁻¹}·V̇_{j−1} + ad_{V_j}·A_j·θ̇_j + A_j·θ̈_j.
    Inward, from the tool wrench fext (exerted on the environment, tool frame, about the
    tool point): F_j = Ad_{T_{j,j+1}⁻¹}ᵀ·F_{j+1} + G_j·V̇_j − ad_{V_j}ᵀ·G_j·V_j,
    τ_j = A_jᵀ·F_j + G²·Jm·θ̈_j + friction. work is (n, 24).
    """
    n = P.shape[0]
    v = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    a = (g[0], g[1], g[2], 0.0, 0.0, 0.0)
    for j in range(n):
        t = _link(P, j, q[off + j])
        A = _vec6(P[j], XI)
        qdj = qd[off + j]
        v = _add6(_twist_in(t, v), _scale6(A, qdj))
        a = _add6(_add6(_twist_in(t, a), _scale6(_ad(v, A), qdj)), _scale6(A, qdd[aoff + j]))
        for i in range(12):
            work[j, i] = t[i]
        for i in range(6):
            work[j, 12 + i] = v[i]
            work[j, 18 + i] = a[i]
    f = _wrench_out(_tuple12(W, TAIL), _vec6(fext, foff))
    for j in range(n - 1, -1, -1):
        if j < n - 1:
            f = _wrench_out(_tuple12(work[j + 1], 0), f)
        v = _vec6(work[j], 12)
        f = _add6(_add6(f, _mat6(P, j, GI, _vec6(work[j], 18))),
                  _scale6(_ad_t(v, _mat6(P, j, GI, v)), -1.0))
        gj = P[j, GR]
        out[ooff + j] = (_dot6(_vec6(P[j], XI), f) + gj * gj * P[j, JM] * qdd[aoff + j]
                         + _friction1(P, j, qd[off + j]))


@jit
def rne(P, W, g, q, qd, qdd, fext, out):
    """Inverse dynamics τ = M(q)q̈ + C(q,q̇)q̇ + F(q̇) + g(q) [+ Jᵀ·fext] for m configurations;
    g (3,) in the base frame, fext (6,) or (6m,), q, qd, qdd, out (m*n,)."""
    n = P.shape[0]
    m = _rows(q, n)
    if qd.shape[0] != q.shape[0] or qdd.shape[0] != q.shape[0] or out.shape[0] != q.shape[0]:
        raise ValueError("q, qd, qdd and out lengths differ")
    if fext.shape[0] != 6 and fext.shape[0] != 6 * m:
        raise ValueError("fext must have 6 or 6*m elements")
    fstep = 0 if fext.shape[0] == 6 else 6
    work = np.empty((n, 24))
    for k in range(m):
        o = k * n
        _rne_row(P, W, g, q, qd, o, qdd, o, fext, k * fstep, out, o, work)


@jit
def _inertia_row(P, q, off, out, orow, T, C):
    """M(q) by the composite-rigid-body algorithm in the link frames, motor inertia added.

    Composite inertia C_j = G_j + Ad_{T_{j,j+1}⁻¹}ᵀ·C_{j+1}·Ad_{T_{j,j+1}⁻¹} (links j..n−1 in
    frame j); M_jj = A_jᵀ·C_j·A_j and, carrying f = C_j·A_j inward as a wrench,
    M_ij = M_ji = A_iᵀ·f for i < j. T (n, 12) and C (n, 36) are work arrays."""
    n = P.shape[0]
    for j in range(n):
        t = _link(P, j, q[off + j])
        for i in range(12):
            T[j, i] = t[i]
    for i in range(36):
        C[n - 1, i] = P[n - 1, GI + i]
    for j in range(n - 1, 0, -1):
        t = _tuple12(T[j], 0)
        for c in range(6):      # column c of Ad_{T⁻¹}ᵀ·C_j·Ad_{T⁻¹}
            col = _wrench_out(t, _mat6(C, j, 0, _twist_in(t, _unit6(c))))
            for r in range(6):
                C[j - 1, 6 * r + c] = P[j - 1, GI + 6 * r + c] + col[r]
    for j in range(n):
        A = _vec6(P[j], XI)
        f = _mat6(C, j, 0, A)
        gj = P[j, GR]
        out[orow + j, j] = _dot6(A, f) + gj * gj * P[j, JM]
        for i in range(j - 1, -1, -1):
            f = _wrench_out(_tuple12(T[i + 1], 0), f)
            x = _dot6(_vec6(P[i], XI), f)
            out[orow + i, j] = x
            out[orow + j, i] = x


@jit
def inertia(P, W, q, out):
    """Joint-space inertia M(q) (motor inertia included); q (m*n,), out (m*n, n)."""
    n = P.shape[0]
    m = _rows(q, n)
    _check_out(out, m * n, n)
    T = np.empty((n, 12))
    C = np.empty((n, 36))
    for k in range(m):
        _inertia_row(P, q, k * n, out, k * n, T, C)


@jit
def coriolis(P, W, q, qd, out):
    """C(q, q̇) from the Christoffel symbols, C_ij = Σ_k Γ_ijk·q̇_k with
    Γ_ijk = ½(∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_kj/∂q_i) (seed 004 §3.5); out (m*n, n).

    In the base frame, with S_j the spatial twist of joint j, Gc_i = Σ_{p≥i} Ad_{F_p⁻¹}ᵀ·G_p·
    Ad_{F_p⁻¹} the composite spatial inertia of links i..n−1 and M_jl = S_jᵀ·Gc_max(j,l)·S_l:
    ∂S_j/∂q_k = [S_k, S_j] for k < j (else 0) and ∂Gc_i/∂q_k = −ad_{S_k}ᵀ·Gc_h − Gc_h·ad_{S_k}
    with h = max(i, k), so
    ∂M_jl/∂q_k = [k<j]·[S_k,S_j]ᵀGc_i S_l + [k<l]·S_jᵀGc_i[S_k,S_l]
                 − [S_k,S_j]ᵀGc_h S_l − S_jᵀGc_h[S_k,S_l],  i = max(j, l).
    Motor inertia and friction do not contribute."""
    n = P.shape[0]
    m = _rows(q, n)
    if qd.shape[0] != q.shape[0]:
        raise ValueError("q and qd lengths differ")
    _check_out(out, m * n, n)
    F = np.empty((n + 1, 12))
    S = np.empty((n, 6))
    Gc = np.empty((n, 36))
    Br = np.empty((n, n, 6))         # Br[k, j] = [S_k, S_j]
    GS = np.empty((n, n, 6))         # GS[i, l] = Gc_i·S_l
    GB = np.empty((n, n, n, 6))      # GB[i, k, l] = Gc_i·[S_k, S_l]
    dM = np.empty((n, n, n))         # dM[k, j, l] = ∂M_jl/∂q_k
    for r in range(m):
        o = r * n
        _frames(P, W, False, q, o, F)
        for j in range(n):
            t = _tuple12(F[j + 1], 0)
            s = _twist_out(t, _vec6(P[j], XI))
            for i in range(6):
                S[j, i] = s[i]
        for j in range(n - 1, -1, -1):
            t = _tuple12(F[j + 1], 0)
            for c in range(6):
                col = _wrench_out(t, _mat6(P, j, GI, _twist_in(t, _unit6(c))))
                for i in range(6):
                    Gc[j, 6 * i + c] = col[i] + (Gc[j + 1, 6 * i + c] if j < n - 1 else 0.0)
        for k in range(n):
            for j in range(n):
                b = _ad(_vec6(S[k], 0), _vec6(S[j], 0))
                for i in range(6):
                    Br[k, j, i] = b[i]
        for i in range(n):
            for l in range(n):
                x = _mat6(Gc, i, 0, _vec6(S[l], 0))
                for c in range(6):
                    GS[i, l, c] = x[c]
                for k in range(n):
                    x = _mat6(Gc, i, 0, _vec6(Br[k, l], 0))
                    for c in range(6):
                        GB[i, k, l, c] = x[c]
        for k in range(n):
            for j in range(n):
                for l in range(n):
                    i = max(j, l)
                    h = max(i, k)
                    d = -_dot6(_vec6(Br[k, j], 0), _vec6(GS[h, l], 0)) \
                        - _dot6(_vec6(S[j], 0), _vec6(GB[h, k, l], 0))
                    if k < j:
                        d += _dot6(_vec6(Br[k, j], 0), _vec6(GS[i, l], 0))
                    if k < l:
                        d += _dot6(_vec6(S[j], 0), _vec6(GB[i, k, l], 0))
                    dM[k, j, l] = d
        for i in range(n):
            for j in range(n):
                c = 0.0
                for k in range(n):
                    c += 0.5 * (dM[k, i, j] + dM[j, i, k] - dM[i, k, j]) * qd[o + k]
                out[o + i, j] = c


@jit
def accel(P, W, g, q, qd, tau, fext, out):
    """Forward dynamics q̈ = M(q)⁻¹·(τ − rne(q, q̇, 0)), Cholesky solve; raises ValueError
    when M is not positive definite. q, qd, tau, out (m*n,)."""
    n = P.shape[0]
    m = _rows(q, n)
    if qd.shape[0] != q.shape[0] or tau.shape[0] != q.shape[0] or out.shape[0] != q.shape[0]:
        raise ValueError("q, qd, tau and out lengths differ")
    if fext.shape[0] != 6 and fext.shape[0] != 6 * m:
        raise ValueError("fext must have 6 or 6*m elements")
    fstep = 0 if fext.shape[0] == 6 else 6
    work = np.empty((n, 24))
    T = np.empty((n, 12))
    C = np.empty((n, 36))
    L = np.empty((n, n))
    zero = np.zeros(n)
    b = np.empty(n)
    for k in range(m):
        o = k * n
        _rne_row(P, W, g, q, qd, o, zero, 0, fext, k * fstep, b, 0, work)
        _inertia_row(P, q, o, L, 0, T, C)
        for i in range(n):
            b[i] = tau[o + i] - b[i]
        for j in range(n):          # Cholesky M = L·Lᵀ in the lower triangle
            s = L[j, j]
            for p in range(j):
                s -= L[j, p] * L[j, p]
            if not s > 0.0:
                raise ValueError("inertia matrix is not positive definite")
            s = math.sqrt(s)
            L[j, j] = s
            for i in range(j + 1, n):
                x = L[i, j]
                for p in range(j):
                    x -= L[i, p] * L[j, p]
                L[i, j] = x / s
        for i in range(n):
            x = b[i]
            for p in range(i):
                x -= L[i, p] * b[p]
            b[i] = x / L[i, i]
        for i in range(n - 1, -1, -1):
            x = b[i]
            for p in range(i + 1, n):
                x -= L[p, i] * b[p]
            b[i] = x / L[i, i]
        for i in range(n):
            out[o + i] = b[i]
