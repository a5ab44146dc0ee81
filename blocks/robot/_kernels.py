"""Kinematics and dynamics kernels of every robot, as scalar loops compiled by numba when
available (the reference source of the C kernels ``_ckernels.c``; see ``backend``).

A robot is packed, whatever describes its kinematics (DH parameters, twists), as a chain of
**joint frames**: frame j is carried by link j, its z axis is the axis of joint j and its
origin lies on that axis, so the joint moves it by J(q) = Rz(q)·Tz(h·q) (revolute, h the
pitch of a helical joint, usually 0) or Tz(q) (prismatic) and the pose of joint frame j in
joint frame j−1 is T_j(q) = X_j·J(q) with X_j constant. ``RobotBase`` builds the packing from
what its subclass says about the kinematics; the kernels never see DH parameters or twists.

- ``P`` (n, NP) per joint, columns named by the constants below: SIGMA (1 prismatic, 0
  revolute), SLIDE (translation along z per unit joint value: 1 prismatic, the pitch h for a
  revolute joint), X (3x4 row-major [R | p]), FRAME (the robot's own link frame in the joint
  frame, for fkine_all), mass M, centre of mass RX..RZ and inertia about it I0..I0+8 (3x3
  row-major) in the joint frame, and the link-side drive constants MOTOR = G²·Jm (motor
  inertia), VISCOUS = G²·B, UP = |G|·Tc+ and DOWN = −|G|·Tc− (Coulomb friction levels,
  both ≥ 0 for friction that opposes motion).
- ``W`` (NW,) the base pose (3x4) in the world and the tool pose (3x4) in the last joint frame.
- ``q``, ``qd``, ``qdd``, ``tau`` flat (m*n,), rows of n joint values, row-major.
- outputs filled in place: joint vectors (m*n,), matrices stacked by rows: inertia and
  coriolis (m*n, n), jacobian (6m, n), fkine (4m, 4); a single answer is the m = 1 case, so
  a caller may pass its own preallocated (n,), (n, n), (6, n) or (4, 4) array.

Each algorithm is one row function (one configuration) and a kernel that checks the
arguments and loops over the rows. Frames are 12-tuples or 12-vectors [R00 R01 R02 px R10 …].
Dynamics kernels work in the base frame (gravity g (3,) given in the base frame); kinematics
kernels include base and tool. Units: SI, radians.

This module is imported when the first robot is built; see ``_jit``.
"""

import math

import numpy as np

from ._jit import jit
from ._linalg import cholesky_solve

# column layout of P
SIGMA, SLIDE, X, FRAME = 0, 1, 2, 14
M, RX, RY, RZ, I0 = 26, 27, 28, 29, 30       # inertia about the COM: columns 30..38
MOTOR, VISCOUS, UP, DOWN = 39, 40, 41, 42
NP = 43
# layout of W
BASE, TOOL = 0, 12
NW = 24
RNE_WORK = 18      # per link: T_j (12), F = m·v̇_c (3), N = I·ω̇ + ω × I·ω (3)

_EYE = (1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0)


# ---------------------------------------------------------------- small helpers
@jit
def _cross(ax, ay, az, bx, by, bz):
    """a × b as a 3-tuple."""
    return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx


@jit
def _rv(t, x, y, z):
    """R·v with R the rotation part of the 3x4 frame ``t`` (tuple or 12-vector)."""
    return (t[0] * x + t[1] * y + t[2] * z,
            t[4] * x + t[5] * y + t[6] * z,
            t[8] * x + t[9] * y + t[10] * z)


@jit
def _rtv(t, x, y, z):
    """Rᵀ·v with R the rotation part of the 3x4 frame ``t``."""
    return (t[0] * x + t[4] * y + t[8] * z,
            t[1] * x + t[5] * y + t[9] * z,
            t[2] * x + t[6] * y + t[10] * z)


@jit
def _mv3(A, r, c, x, y, z):
    """A[r, c:c+9] (a 3x3 row-major matrix) times v."""
    return (A[r, c] * x + A[r, c + 1] * y + A[r, c + 2] * z,
            A[r, c + 3] * x + A[r, c + 4] * y + A[r, c + 5] * z,
            A[r, c + 6] * x + A[r, c + 7] * y + A[r, c + 8] * z)


@jit
def _transport(ax, ay, az, bx, by, bz, wx, wy, wz, rx, ry, rz):
    """a + b × r + ω × (ω × r): acceleration of the point at r of a rigid body whose point at
    the origin accelerates by a, turning at ω with angular acceleration b."""
    cx, cy, cz = _cross(bx, by, bz, rx, ry, rz)
    ux, uy, uz = _cross(wx, wy, wz, rx, ry, rz)
    ux, uy, uz = _cross(wx, wy, wz, ux, uy, uz)
    return ax + cx + ux, ay + cy + uy, az + cz + uz


@jit
def _mul(t, u):
    """Product of two 3x4 frames (homogeneous transforms with the last row implied)."""
    return (t[0] * u[0] + t[1] * u[4] + t[2] * u[8],
            t[0] * u[1] + t[1] * u[5] + t[2] * u[9],
            t[0] * u[2] + t[1] * u[6] + t[2] * u[10],
            t[0] * u[3] + t[1] * u[7] + t[2] * u[11] + t[3],
            t[4] * u[0] + t[5] * u[4] + t[6] * u[8],
            t[4] * u[1] + t[5] * u[5] + t[6] * u[9],
            t[4] * u[2] + t[5] * u[6] + t[6] * u[10],
            t[4] * u[3] + t[5] * u[7] + t[6] * u[11] + t[7],
            t[8] * u[0] + t[9] * u[4] + t[10] * u[8],
            t[8] * u[1] + t[9] * u[5] + t[10] * u[9],
            t[8] * u[2] + t[9] * u[6] + t[10] * u[10],
            t[8] * u[3] + t[9] * u[7] + t[10] * u[11] + t[11])


@jit
def _tuple12(v, i):
    """The 12 entries v[i:i+12] as a tuple."""
    return (v[i], v[i + 1], v[i + 2], v[i + 3], v[i + 4], v[i + 5],
            v[i + 6], v[i + 7], v[i + 8], v[i + 9], v[i + 10], v[i + 11])


@jit
def _store(A, r, c, values):
    """A[r, c:c+len(values)] = values (a tuple of floats)."""
    for i in range(len(values)):
        A[r, c + i] = values[i]


@jit
def _put(out, row, t):
    """Write the 3x4 frame t as a 4x4 homogeneous transform into out[row:row+4]."""
    for r in range(3):
        for c in range(4):
            out[row + r, c] = t[4 * r + c]
    out[row + 3, 0] = 0.0
    out[row + 3, 1] = 0.0
    out[row + 3, 2] = 0.0
    out[row + 3, 3] = 1.0


# ---------------------------------------------------------------- the joints
@jit
def _link(P, j, qj):
    """T_j(qj) = X_j·Rz(qj)·Tz(h·qj) (revolute) or X_j·Tz(qj) (prismatic): the pose of joint
    frame j in joint frame j−1 (3x4 tuple)."""
    x = _tuple12(P[j], X)
    px, py, pz = x[3], x[7], x[11]
    if P[j, SLIDE] != 0.0:
        d = P[j, SLIDE] * qj
        px, py, pz = px + x[2] * d, py + x[6] * d, pz + x[10] * d
    if P[j, SIGMA] != 0.0:
        return (x[0], x[1], x[2], px, x[4], x[5], x[6], py, x[8], x[9], x[10], pz)
    c = math.cos(qj)
    s = math.sin(qj)
    return (x[0] * c + x[1] * s, x[1] * c - x[0] * s, x[2], px,
            x[4] * c + x[5] * s, x[5] * c - x[4] * s, x[6], py,
            x[8] * c + x[9] * s, x[9] * c - x[8] * s, x[10], pz)


@jit
def _frames(P, W, use_base, q, off, F):
    """F[0] = base (or identity), F[j+1] = F[j]·T_j(q_j): the joint frames; F (n+1, 12).
    Joint j's axis is the z axis of F[j+1] through its origin."""
    t = _tuple12(W, BASE) if use_base else _EYE
    _store(F, 0, 0, t)
    for j in range(P.shape[0]):
        t = _mul(t, _link(P, j, q[off + j]))
        _store(F, j + 1, 0, t)


@jit
def _outward(P, j, t, qdj, qddj, w, b, a):
    """One step of the outward Newton–Euler recursion (seed 000 §4.1, in the joint frames).

    From the angular velocity w, angular acceleration b and origin acceleration a of link j−1
    (its frame's coordinates) to those of link j (frame j's coordinates), t = T_j(q_j):
    a_j = Rᵀ·(a + b × p + w × (w × p)) + 2·w' × ż·v + ż·v̇ and, for a revolute joint,
    w_j = w' + ż·q̇, b_j = Rᵀ·b + w' × ż·q̇ + ż·q̈, with w' = Rᵀ·w, p the origin of frame j and
    v = h·q̇ the joint's sliding rate (h = SLIDE)."""
    ax, ay, az = _transport(a[0], a[1], a[2], b[0], b[1], b[2], w[0], w[1], w[2],
                            t[3], t[7], t[11])
    ax, ay, az = _rtv(t, ax, ay, az)
    wx, wy, wz = _rtv(t, w[0], w[1], w[2])
    bx, by, bz = _rtv(t, b[0], b[1], b[2])
    h = P[j, SLIDE]
    if h != 0.0:
        v2 = 2.0 * h * qdj
        ax, ay, az = ax + v2 * wy, ay - v2 * wx, az + h * qddj
    if P[j, SIGMA] == 0.0:
        bx, by, bz = bx + wy * qdj, by - wx * qdj, bz + qddj
        wz += qdj
    return (wx, wy, wz), (bx, by, bz), (ax, ay, az)


@jit
def _body(P, k, t):
    """Link k's centre-of-mass offset R·r and its inertia R·I·Rᵀ [xx, yy, zz, xy, yz, xz] in the
    axes of a frame t whose rotation R is that of joint frame k (a 9-tuple)."""
    sx, sy, sz = _rv(t, P[k, RX], P[k, RY], P[k, RZ])
    # the columns of R·I are (a00, a01, a02), (a10, a11, a12), (a20, a21, a22)
    a00, a01, a02 = _rv(t, P[k, I0], P[k, I0 + 3], P[k, I0 + 6])
    a10, a11, a12 = _rv(t, P[k, I0 + 1], P[k, I0 + 4], P[k, I0 + 7])
    a20, a21, a22 = _rv(t, P[k, I0 + 2], P[k, I0 + 5], P[k, I0 + 8])
    return (sx, sy, sz,
            a00 * t[0] + a10 * t[1] + a20 * t[2],
            a01 * t[4] + a11 * t[5] + a21 * t[6],
            a02 * t[8] + a12 * t[9] + a22 * t[10],
            a00 * t[4] + a10 * t[5] + a20 * t[6],
            a01 * t[8] + a11 * t[9] + a21 * t[10],
            a00 * t[8] + a10 * t[9] + a20 * t[10])


# ---------------------------------------------------------------- argument checks
@jit
def _rows(x, n):
    """Number of rows m of a flat (m*n,) array, checking the length."""
    if x.shape[0] % n != 0 or x.shape[0] == 0:
        raise ValueError("joint array length is not a positive multiple of n")
    return x.shape[0] // n


@jit
def _check_out(out, rows, cols):
    """Raise unless the 2-D output has shape (rows, cols)."""
    if out.shape[0] != rows or out.shape[1] != cols:
        raise ValueError("out has the wrong shape")


@jit
def _dynamic_rows(P, g, q, qd, x, fext, out, names):
    """(m, fext's row stride: 0 for one wrench for every row, 6 for one per row) of a call of
    rne or accel, checking its arguments; ``names`` names q, qd, x and out for the message."""
    m = _rows(q, P.shape[0])
    if qd.shape[0] != q.shape[0] or x.shape[0] != q.shape[0] or out.shape[0] != q.shape[0]:
        raise ValueError(names + " lengths differ")
    if g.shape[0] != 3:
        raise ValueError("g must have 3 elements")
    if fext.shape[0] != 6 and fext.shape[0] != 6 * m:
        raise ValueError("fext must have 6 or 6*m elements")
    return m, 0 if fext.shape[0] == 6 else 6


# ---------------------------------------------------------------- kinematics
@jit
def fkine(P, W, q, out):
    """End-effector pose base·T_0(q_0)…T_{n−1}(q_{n−1})·tool; out (4m, 4), 4x4 blocks."""
    n = P.shape[0]
    m = _rows(q, n)
    _check_out(out, 4 * m, 4)
    for k in range(m):
        t = _tuple12(W, BASE)
        for j in range(n):
            t = _mul(t, _link(P, j, q[k * n + j]))
        _put(out, 4 * k, _mul(t, _tuple12(W, TOOL)))


@jit
def fkine_all(P, W, q, out):
    """World poses of the base and of the robot's link frames; out (4m(n+1), 4), 4x4 blocks."""
    n = P.shape[0]
    m = _rows(q, n)
    _check_out(out, 4 * m * (n + 1), 4)
    F = np.empty((n + 1, 12))
    for k in range(m):
        _frames(P, W, True, q, k * n, F)
        o = 4 * k * (n + 1)
        _put(out, o, _tuple12(F[0], 0))
        for j in range(n):
            _put(out, o + 4 * (j + 1), _mul(_tuple12(F[j + 1], 0), _tuple12(P[j], FRAME)))


@jit
def _jacobian_row(P, W, q, off, in_tool, out, orow, F):
    """Geometric Jacobian (6, n) of one configuration into out[orow:orow+6].

    Column j: [ż × (p_e − o) + h·ż; ż] (revolute) or [ż; 0] (prismatic), ż and o the axis and
    origin of joint frame j, h its pitch, p_e the tool point, all in the world; ``in_tool``
    rotates both halves into the tool frame (jacobn instead of jacob0)."""
    n = P.shape[0]
    _frames(P, W, True, q, off, F)
    te = _mul(_tuple12(F[n], 0), _tuple12(W, TOOL))
    for j in range(n):
        f = F[j + 1]
        zx, zy, zz = f[2], f[6], f[10]
        if P[j, SIGMA] == 0.0:
            vx, vy, vz = _cross(zx, zy, zz, te[3] - f[3], te[7] - f[7], te[11] - f[11])
            wx, wy, wz = zx, zy, zz
        else:
            vx = vy = vz = wx = wy = wz = 0.0
        h = P[j, SLIDE]
        if h != 0.0:
            vx, vy, vz = vx + h * zx, vy + h * zy, vz + h * zz
        if in_tool:
            vx, vy, vz = _rtv(te, vx, vy, vz)
            wx, wy, wz = _rtv(te, wx, wy, wz)
        out[orow, j] = vx
        out[orow + 1, j] = vy
        out[orow + 2, j] = vz
        out[orow + 3, j] = wx
        out[orow + 4, j] = wy
        out[orow + 5, j] = wz


@jit
def jacobian(P, W, q, in_tool, out):
    """Geometric Jacobian (6, n) per configuration, rows [v; ω] of the tool point, in the world
    frame (jacob0) or, when ``in_tool``, in the tool frame (jacobn); out (6m, n)."""
    n = P.shape[0]
    m = _rows(q, n)
    _check_out(out, 6 * m, n)
    F = np.empty((n + 1, 12))
    for k in range(m):
        _jacobian_row(P, W, q, k * n, in_tool, out, 6 * k, F)


@jit
def _jacob_dot_row(P, W, q, qd, off, out, ooff):
    """J̇·q̇ of one configuration: the outward recursion of rne without gravity at q̈ = 0 gives
    the last link's ω, ω̇ and origin acceleration; the tool point's follows by transport."""
    t = _tuple12(W, BASE)
    w = b = a = (0.0, 0.0, 0.0)
    for j in range(P.shape[0]):
        u = _link(P, j, q[off + j])
        w, b, a = _outward(P, j, u, qd[off + j], 0.0, w, b, a)
        t = _mul(t, u)
    ax, ay, az = _transport(a[0], a[1], a[2], b[0], b[1], b[2], w[0], w[1], w[2],
                            W[TOOL + 3], W[TOOL + 7], W[TOOL + 11])
    ax, ay, az = _rv(t, ax, ay, az)
    bx, by, bz = _rv(t, b[0], b[1], b[2])
    out[ooff] = ax
    out[ooff + 1] = ay
    out[ooff + 2] = az
    out[ooff + 3] = bx
    out[ooff + 4] = by
    out[ooff + 5] = bz


@jit
def jacob_dot(P, W, q, qd, out):
    """J̇(q, q̇)·q̇ in the world frame, the tool point's acceleration and the angular
    acceleration at q̈ = 0; q, qd (m*n,), out (6m,) rows [a; ω̇]."""
    m = _rows(q, P.shape[0])
    if qd.shape[0] != q.shape[0]:
        raise ValueError("q and qd lengths differ")
    if out.shape[0] != 6 * m:
        raise ValueError("out has the wrong shape")
    for k in range(m):
        _jacob_dot_row(P, W, q, qd, k * P.shape[0], out, 6 * k)


# ---------------------------------------------------------------- friction
@jit
def _coulomb(up, down, s):
    """Coulomb friction torque for the Coulomb direction s in [−1, 1]: s·up for s > 0, s·down
    for s < 0, 0 for s = 0 (up = |G|·Tc+, down = −|G|·Tc−). s = sign(q̇) is robots.md's
    friction; a regularised band or a stick–slip mode chooses s otherwise."""
    return s * (up if s > 0.0 else down)


@jit
def _friction1(P, j, qdj):
    """Link-side friction of joint j: |G|·(B·|G|·q̇ + Tc), Tc = Tc+ (q̇ > 0), Tc- (q̇ < 0), 0 at
    rest (robots.md; it opposes motion whatever the sign of G)."""
    s = 1.0 if qdj > 0.0 else -1.0 if qdj < 0.0 else 0.0
    return P[j, VISCOUS] * qdj + _coulomb(P[j, UP], P[j, DOWN], s)


@jit
def friction(P, qd, out):
    """Joint friction torques F(q̇); qd and out (m*n,)."""
    n = P.shape[0]
    _rows(qd, n)
    if out.shape[0] != qd.shape[0]:
        raise ValueError("qd and out lengths differ")
    for i in range(qd.shape[0]):
        out[i] = _friction1(P, i % n, qd[i])


@jit
def subtract_coulomb(x, tau, up, down, scale, out):
    """out = tau − Fc with the Coulomb friction Fc_j = ``_coulomb``(up_j, down_j, s_j) for the
    directions s_j = clip(x_j·scale, −1, 1); all (n,). The robot block's regularised friction
    is x = q̇ with scale = 1/band; x = a direction in {−1, 0, 1} with scale = 1 is the exact
    friction of a joint slipping that way."""
    n = x.shape[0]
    if tau.shape[0] < n or up.shape[0] < n or down.shape[0] < n or out.shape[0] < n:
        raise ValueError("tau, up, down and out need as many elements as x")
    for j in range(n):
        s = min(max(x[j] * scale, -1.0), 1.0)
        out[j] = tau[j] - _coulomb(up[j], down[j], s)


# ---------------------------------------------------------------- dynamics
@jit
def _rne_row(P, W, g, q, qd, qdd, off, aoff, fext, foff, out, ooff, work):
    """Recursive Newton–Euler for one configuration, in the joint frames.

    Outward (``_outward``) from ω = ω̇ = 0 and v̇ = g (the base accelerates upward to model
    gravity); COM force F = m·v̇_c and moment N = I·ω̇ + ω × I·ω. Inward from the tip wrench
    fext[foff:foff+6] exerted by the end-effector on the environment (tool frame, about the
    tool point): f_j = R_{j+1}·f_{j+1} + F_j, n_j = R_{j+1}·n_{j+1} + p_{j+1} × R_{j+1}·f_{j+1}
    + c_j × F_j + N_j, τ_j = n_j·ż (revolute) + h·f_j·ż. Adds G²·Jm·q̈ and the friction of
    ``_friction1``. work is (n, RNE_WORK)."""
    n = P.shape[0]
    w = b = (0.0, 0.0, 0.0)
    a = (g[0], g[1], g[2])
    for j in range(n):
        t = _link(P, j, q[off + j])
        w, b, a = _outward(P, j, t, qd[off + j], qdd[aoff + j], w, b, a)
        vx, vy, vz = _transport(a[0], a[1], a[2], b[0], b[1], b[2], w[0], w[1], w[2],
                                P[j, RX], P[j, RY], P[j, RZ])
        Iw = _mv3(P, j, I0, w[0], w[1], w[2])
        e = _cross(w[0], w[1], w[2], Iw[0], Iw[1], Iw[2])
        Ib = _mv3(P, j, I0, b[0], b[1], b[2])
        mj = P[j, M]
        _store(work, j, 0, t)
        _store(work, j, 12, (mj * vx, mj * vy, mj * vz, Ib[0] + e[0], Ib[1] + e[1], Ib[2] + e[2]))
    f = _rv(W[TOOL:], fext[foff], fext[foff + 1], fext[foff + 2])
    nx, ny, nz = _rv(W[TOOL:], fext[foff + 3], fext[foff + 4], fext[foff + 5])
    c = _cross(W[TOOL + 3], W[TOOL + 7], W[TOOL + 11], f[0], f[1], f[2])
    nx, ny, nz = nx + c[0], ny + c[1], nz + c[2]
    for j in range(n - 1, -1, -1):
        if j < n - 1:
            u = work[j + 1]
            f = _rv(u, f[0], f[1], f[2])
            nx, ny, nz = _rv(u, nx, ny, nz)
            c = _cross(u[3], u[7], u[11], f[0], f[1], f[2])
            nx, ny, nz = nx + c[0], ny + c[1], nz + c[2]
        c = _cross(P[j, RX], P[j, RY], P[j, RZ], work[j, 12], work[j, 13], work[j, 14])
        nx, ny, nz = nx + c[0] + work[j, 15], ny + c[1] + work[j, 16], nz + c[2] + work[j, 17]
        f = (f[0] + work[j, 12], f[1] + work[j, 13], f[2] + work[j, 14])
        tau = nz if P[j, SIGMA] == 0.0 else 0.0
        if P[j, SLIDE] != 0.0:
            tau += P[j, SLIDE] * f[2]
        out[ooff + j] = (tau + P[j, MOTOR] * qdd[aoff + j]
                         + _friction1(P, j, qd[off + j]))


@jit
def rne(P, W, g, q, qd, qdd, fext, out):
    """Inverse dynamics τ = M(q)q̈ + C(q,q̇)q̇ + F(q̇) + g(q) [+ Jᵀ·fext] for m configurations.

    g (3,) the base acceleration that models gravity, in the base frame; fext (6,) for all
    rows or (m*6,) one wrench per row; q, qd, qdd, out (m*n,).
    """
    n = P.shape[0]
    m, fstep = _dynamic_rows(P, g, q, qd, qdd, fext, out, "q, qd, qdd and out")
    work = np.empty((n, RNE_WORK))
    for k in range(m):
        _rne_row(P, W, g, q, qd, qdd, k * n, k * n, fext, k * fstep, out, k * n, work)


@jit
def _inertia_row(P, W, q, off, out, orow, F, C):
    """Joint-space inertia by the composite-rigid-body algorithm, in the base frame.

    Composite k (links k..n−1): mass M_k, COM c_k, inertia I_k about c_k (parallel-axis
    theorem). Joint i moving at unit rate gives composite i the linear momentum
    p_i = M_i·(ż_i × (c_i − o_i) + h_i·ż_i) and the angular momentum L_i = I_i·ż_i about c_i
    (revolute; p_i = M_i·ż_i for a prismatic joint); then for j ≤ i,
    M_ji = ż_j·(L_i + (c_i − o_j) × p_i) (revolute j) + h_j·ż_j·p_i. Adds G²·Jm on the
    diagonal. Writes out[orow:orow+n, :]; F is (n+1, 12), C is (n, 10) [M, c, Ixx, Iyy, Izz,
    Ixy, Iyz, Ixz]."""
    n = P.shape[0]
    _frames(P, W, False, q, off, F)
    Mc = 0.0
    ccx = ccy = ccz = 0.0
    Ixx = Iyy = Izz = Ixy = Iyz = Ixz = 0.0
    for k in range(n - 1, -1, -1):
        t = F[k + 1]
        sx, sy, sz, wxx, wyy, wzz, wxy, wyz, wxz = _body(P, k, t)
        cx, cy, cz = t[3] + sx, t[7] + sy, t[11] + sz
        mk = P[k, M]
        Mn = Mc + mk
        if Mn > 0.0:
            nx = (Mc * ccx + mk * cx) / Mn
            ny = (Mc * ccy + mk * cy) / Mn
            nz = (Mc * ccz + mk * cz) / Mn
        else:
            nx, ny, nz = cx, cy, cz
        dx, dy, dz = ccx - nx, ccy - ny, ccz - nz
        ex, ey, ez = cx - nx, cy - ny, cz - nz
        Ixx += Mc * (dy * dy + dz * dz) + wxx + mk * (ey * ey + ez * ez)
        Iyy += Mc * (dx * dx + dz * dz) + wyy + mk * (ex * ex + ez * ez)
        Izz += Mc * (dx * dx + dy * dy) + wzz + mk * (ex * ex + ey * ey)
        Ixy += -Mc * dx * dy + wxy - mk * ex * ey
        Iyz += -Mc * dy * dz + wyz - mk * ey * ez
        Ixz += -Mc * dx * dz + wxz - mk * ex * ez
        Mc = Mn
        ccx, ccy, ccz = nx, ny, nz
        _store(C, k, 0, (Mc, ccx, ccy, ccz, Ixx, Iyy, Izz, Ixy, Iyz, Ixz))
    for i in range(n):
        f = F[i + 1]
        Mi = C[i, 0]
        cx, cy, cz = C[i, 1], C[i, 2], C[i, 3]
        if P[i, SIGMA] == 0.0:
            px, py, pz = _cross(f[2], f[6], f[10], cx - f[3], cy - f[7], cz - f[11])
            Lx = C[i, 4] * f[2] + C[i, 7] * f[6] + C[i, 9] * f[10]
            Ly = C[i, 7] * f[2] + C[i, 5] * f[6] + C[i, 8] * f[10]
            Lz = C[i, 9] * f[2] + C[i, 8] * f[6] + C[i, 6] * f[10]
        else:
            px = py = pz = Lx = Ly = Lz = 0.0
        h = P[i, SLIDE]
        if h != 0.0:
            px, py, pz = px + h * f[2], py + h * f[6], pz + h * f[10]
        px, py, pz = Mi * px, Mi * py, Mi * pz
        for j in range(i + 1):
            zx, zy, zz = F[j + 1, 2], F[j + 1, 6], F[j + 1, 10]
            h = P[j, SLIDE]
            mji = h * (zx * px + zy * py + zz * pz) if h != 0.0 else 0.0
            if P[j, SIGMA] == 0.0:
                hx, hy, hz = _cross(cx - F[j + 1, 3], cy - F[j + 1, 7], cz - F[j + 1, 11],
                                    px, py, pz)
                mji += zx * (Lx + hx) + zy * (Ly + hy) + zz * (Lz + hz)
            out[orow + j, i] = mji
            out[orow + i, j] = mji
        out[orow + i, i] += P[i, MOTOR]


@jit
def inertia(P, W, q, out):
    """Joint-space inertia matrices M(q) (motor inertia included); q (m*n,), out (m*n, n)."""
    n = P.shape[0]
    m = _rows(q, n)
    _check_out(out, m * n, n)
    F = np.empty((n + 1, 12))
    C = np.empty((n, 10))
    for k in range(m):
        _inertia_row(P, W, q, k * n, out, k * n, F, C)


@jit
def _coriolis_row(P, W, q, qd, off, out, orow, F, K, J):
    """C(q, q̇) of one configuration into out[orow:orow+n, :], in the base frame: the
    Christoffel-symbol matrix C_ij = Σ_k Γ_ijk·q̇_k, Γ_ijk = ½(∂M_ij/∂q_k + ∂M_ik/∂q_j −
    ∂M_jk/∂q_i) (seed 004 §3.5), in O(n³) from the link Jacobians.

    C = Σ_i m_i·J_viᵀ·J̇_vi + J_ωiᵀ·u_i with J_vi, J_ωi the Jacobians of link i's COM velocity
    and angular velocity, I_i its inertia about the COM and u_i = I_i·J̇_ωi +
    ½·(ω_i × I_i·J_ωi − I_i·(ω_i × J_ωi) − (I_i·ω_i) × J_ωi): the translational part is
    Christoffel-consistent as it is (second derivatives commute); the ½(…) term is the
    rotational one's (from the body Jacobian's ∂_j J_k − ∂_k J_j = −J_j × J_k). Column b of
    link i (b ≤ i), joint axis ż through o: J_v = ż × (c_i − o) + h·ż, J_ω = ż (revolute) or
    J_v = ż, J_ω = 0 (prismatic); their rates follow from ż' = ω_{b−1} × ż, the velocity ȯ
    of o on link b−1 and ċ_i. C·q̇ is the velocity torque of rne and Ṁ − 2C is
    skew-symmetric. F (n+1, 12), K (n, 30) per joint/link: ż, o, ż', ȯ, ω, c, ċ, I (3x3);
    J (n, 12) per column: J_v, J_ω, m·J̇_v, u."""
    n = P.shape[0]
    _frames(P, W, False, q, off, F)
    wx = wy = wz = 0.0
    vx = vy = vz = 0.0
    for j in range(n):
        t = F[j + 1]
        qdj = qd[off + j]
        zx, zy, zz, ox, oy, oz = t[2], t[6], t[10], t[3], t[7], t[11]
        cx, cy, cz = _cross(wx, wy, wz, ox - F[j, 3], oy - F[j, 7], oz - F[j, 11])
        vox, voy, voz = vx + cx, vy + cy, vz + cz
        dzx, dzy, dzz = _cross(wx, wy, wz, zx, zy, zz)
        if P[j, SIGMA] == 0.0:     # link j turns about the axis
            wx, wy, wz = wx + zx * qdj, wy + zy * qdj, wz + zz * qdj
        vx, vy, vz = vox, voy, voz
        if P[j, SLIDE] != 0.0:     # and slides along it
            s = P[j, SLIDE] * qdj
            vx, vy, vz = vx + zx * s, vy + zy * s, vz + zz * s
        sx, sy, sz, ixx, iyy, izz, ixy, iyz, ixz = _body(P, j, t)
        ux, uy, uz = _cross(wx, wy, wz, sx, sy, sz)
        _store(K, j, 0, (zx, zy, zz, ox, oy, oz, dzx, dzy, dzz, vox, voy, voz, wx, wy, wz,
                         ox + sx, oy + sy, oz + sz, vx + ux, vy + uy, vz + uz,
                         ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz))
    for i in range(n):
        for j in range(n):
            out[orow + i, j] = 0.0
    for i in range(n):
        mi = P[i, M]
        cx, cy, cz = K[i, 15], K[i, 16], K[i, 17]
        dcx, dcy, dcz = K[i, 18], K[i, 19], K[i, 20]
        wx, wy, wz = K[i, 12], K[i, 13], K[i, 14]
        Lx, Ly, Lz = _mv3(K, i, 21, wx, wy, wz)
        for b in range(i + 1):
            zx, zy, zz = K[b, 0], K[b, 1], K[b, 2]
            dzx, dzy, dzz = K[b, 6], K[b, 7], K[b, 8]
            if P[b, SIGMA] == 0.0:
                rx, ry, rz = cx - K[b, 3], cy - K[b, 4], cz - K[b, 5]
                jvx, jvy, jvz = _cross(zx, zy, zz, rx, ry, rz)
                ax, ay, az = _cross(dzx, dzy, dzz, rx, ry, rz)
                ex, ey, ez = _cross(zx, zy, zz, dcx - K[b, 9], dcy - K[b, 10], dcz - K[b, 11])
                djx, djy, djz = ax + ex, ay + ey, az + ez
                jwx, jwy, jwz = zx, zy, zz
                # u = I·ż' + ½·(ω × I·ż − I·(ω × ż) − I·ω × ż)
                hx, hy, hz = _mv3(K, i, 21, zx, zy, zz)
                ex, ey, ez = _cross(wx, wy, wz, hx, hy, hz)
                hx, hy, hz = _cross(wx, wy, wz, zx, zy, zz)
                hx, hy, hz = _mv3(K, i, 21, hx, hy, hz)
                ex, ey, ez = ex - hx, ey - hy, ez - hz
                hx, hy, hz = _cross(Lx, Ly, Lz, zx, zy, zz)
                ex, ey, ez = ex - hx, ey - hy, ez - hz
                hx, hy, hz = _mv3(K, i, 21, dzx, dzy, dzz)
                ux, uy, uz = hx + 0.5 * ex, hy + 0.5 * ey, hz + 0.5 * ez
            else:
                jvx = jvy = jvz = djx = djy = djz = jwx = jwy = jwz = ux = uy = uz = 0.0
            h = P[b, SLIDE]
            if h != 0.0:
                jvx, jvy, jvz = jvx + h * zx, jvy + h * zy, jvz + h * zz
                djx, djy, djz = djx + h * dzx, djy + h * dzy, djz + h * dzz
            _store(J, b, 0, (jvx, jvy, jvz, jwx, jwy, jwz, mi * djx, mi * djy, mi * djz,
                             ux, uy, uz))
        for a in range(i + 1):
            for b in range(i + 1):
                out[orow + a, b] += (J[a, 0] * J[b, 6] + J[a, 1] * J[b, 7] + J[a, 2] * J[b, 8]
                                     + J[a, 3] * J[b, 9] + J[a, 4] * J[b, 10]
                                     + J[a, 5] * J[b, 11])


@jit
def coriolis(P, W, q, qd, out):
    """Coriolis/centripetal matrix C(q, q̇) from the Christoffel symbols, Ṁ − 2C
    skew-symmetric (motor inertia and friction do not contribute); q, qd (m*n,),
    out (m*n, n)."""
    n = P.shape[0]
    m = _rows(q, n)
    if qd.shape[0] != q.shape[0]:
        raise ValueError("q and qd lengths differ")
    _check_out(out, m * n, n)
    F = np.empty((n + 1, 12))
    K = np.empty((n, 30))
    J = np.empty((n, 12))
    for k in range(m):
        _coriolis_row(P, W, q, qd, k * n, out, k * n, F, K, J)


@jit
def _accel_row(P, W, g, q, qd, tau, off, fext, foff, out, work, F, C, L, zero, b):
    """q̈ = M⁻¹·(τ − rne(q, q̇, 0)) of one configuration: the bias from one Newton–Euler pass,
    M from the composite-rigid-body algorithm into L, solved by Cholesky M = L·Lᵀ in place.
    Raises ValueError when M is not positive definite."""
    n = P.shape[0]
    _rne_row(P, W, g, q, qd, zero, off, 0, fext, foff, b, 0, work)
    _inertia_row(P, W, q, off, L, 0, F, C)
    for i in range(n):
        b[i] = tau[off + i] - b[i]
    if not cholesky_solve(L, b):
        raise ValueError("inertia matrix is not positive definite")
    for i in range(n):
        out[off + i] = b[i]


@jit
def accel(P, W, g, q, qd, tau, fext, out):
    """Forward dynamics q̈ = M(q)⁻¹·(τ − C(q,q̇)·q̇ − F(q̇) − g(q) − J_nᵀ·fext) for m
    configurations; g and fext as in ``rne``; q, qd, tau, out (m*n,)."""
    n = P.shape[0]
    m, fstep = _dynamic_rows(P, g, q, qd, tau, fext, out, "q, qd, tau and out")
    work = np.empty((n, RNE_WORK))
    F = np.empty((n + 1, 12))
    C = np.empty((n, 10))
    L = np.empty((n, n))
    zero = np.zeros(n)
    b = np.empty(n)
    for k in range(m):
        _accel_row(P, W, g, q, qd, tau, k * n, fext, k * fstep, out, work, F, C, L, zero, b)
