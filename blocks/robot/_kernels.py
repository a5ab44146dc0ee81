"""Scalar-loop kernels for serial-link kinematics and dynamics, compiled by numba when available.

Every public kernel works on packed parameters and flat arrays so that one compiled version
serves a single configuration and a stack of ``m`` configurations alike:

- ``P`` (n, NP) per-link parameters, columns named by the constants below (``SerialLink``
  builds it once). Revolute joints have theta = q + offset (column THETA is 0), prismatic
  joints d = q + offset (column D is 0).
- ``W`` (NW,) robot parameters: base (3x4 row-major, rows [R | p]), tool (3x4), convention
  flag (0 standard DH, 1 modified DH).
- ``q``, ``qd``, ``qdd``, ``tau`` flat (m*n,), rows of n joint values, row-major.
- outputs filled in place: joint vectors (m*n,), matrices stacked by rows: inertia and
  coriolis (m*n, n), jacobian (6m, n), fkine (4m, 4); a single answer is the m = 1 case, so
  a caller may pass its own preallocated (n,), (n, n), (6, n) or (4, 4) array.

Link transform, standard DH: ``A = Rz(θ)·Tz(d)·Tx(a)·Rx(α)``; modified DH:
``A = Rx(α)·Tx(a)·Rz(θ)·Tz(d)``. Frames are 12-tuples or 12-vectors [R00 R01 R02 px R10 ...].

Dynamics kernels work in the base frame (gravity must be given in the base frame);
kinematics kernels include ``base`` and ``tool``. Units: SI, radians.

This module is imported when the first robot is built; see ``_jit``.
"""

import math

import numpy as np

from ._jit import jit

# column layout of P
SIGMA, A, THETA, D, OFFSET, M, RX, RY, RZ = range(9)
I0 = 9                     # inertia about the COM, 3x3 row-major, columns 9..17
JM, G, B, TCP, TCN, CA, SA = range(18, 25)   # CA, SA: cos and sin of alpha
NP = 25
# layout of W
BASE, TOOL, MDH = 0, 12, 24
NW = 25

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
def _dh(P, mdh, j, qj):
    """Link transform ^{j-1}A_j (3x4 tuple) of link j for joint value qj."""
    v = qj + P[j, OFFSET]
    if P[j, SIGMA] == 0.0:
        th = v
        d = P[j, D]
    else:
        th = P[j, THETA]
        d = v
    ct = math.cos(th)
    st = math.sin(th)
    ca = P[j, CA]
    sa = P[j, SA]
    a = P[j, A]
    if mdh:
        return (ct, -st, 0.0, a,
                ca * st, ca * ct, -sa, -sa * d,
                sa * st, sa * ct, ca, ca * d)
    return (ct, -st * ca, st * sa, a * ct,
            st, ct * ca, -ct * sa, a * st,
            0.0, sa, ca, d)


@jit
def _frames(P, W, use_base, q, off, F):
    """F[k] = T0·A_1…A_k for k = 0..n (F is (n+1, 12)); T0 = base, or identity."""
    mdh = W[MDH] != 0.0
    t = _tuple12(W, BASE) if use_base else _EYE
    for i in range(12):
        F[0, i] = t[i]
    for j in range(P.shape[0]):
        t = _mul(t, _dh(P, mdh, j, q[off + j]))
        for i in range(12):
            F[j + 1, i] = t[i]


@jit
def _axis(F, mdh, k):
    """Axis z and a point o on the axis of joint k: frame k (standard) or k+1 (modified)."""
    f = k + 1 if mdh else k
    return F[f, 2], F[f, 6], F[f, 10], F[f, 3], F[f, 7], F[f, 11]


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


# ---------------------------------------------------------------- kinematics
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


@jit
def fkine(P, W, q, out):
    """End-effector pose base·A_1…A_n·tool; out (4m, 4), one 4x4 block per configuration."""
    n = P.shape[0]
    m = _rows(q, n)
    _check_out(out, 4 * m, 4)
    mdh = W[MDH] != 0.0
    tool = _tuple12(W, TOOL)
    for k in range(m):
        t = _tuple12(W, BASE)
        for j in range(n):
            t = _mul(t, _dh(P, mdh, j, q[k * n + j]))
        _put(out, 4 * k, _mul(t, tool))


@jit
def fkine_all(P, W, q, out):
    """Frames [base, base·A_1, …, base·A_1…A_n]; out (4m(n+1), 4), 4x4 blocks."""
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
    """Geometric Jacobian (6, n) per configuration, rows [v; ω] of the tool point.

    Column k, revolute: [z_k × (p_e − o_k); z_k]; prismatic: [z_k; 0], with z_k, o_k the
    axis of joint k in the world frame and p_e the tool-point position. ``in_tool`` expresses
    both halves in the tool frame (jacobn) instead of the world frame (jacob0).
    out (6m, n).
    """
    n = P.shape[0]
    m = _rows(q, n)
    _check_out(out, 6 * m, n)
    mdh = W[MDH] != 0.0
    F = np.empty((n + 1, 12))
    tool = _tuple12(W, TOOL)
    for k in range(m):
        _frames(P, W, True, q, k * n, F)
        te = _mul(_tuple12(F[n], 0), tool)
        ex, ey, ez = te[3], te[7], te[11]
        o = 6 * k
        for j in range(n):
            zx, zy, zz, ox, oy, oz = _axis(F, mdh, j)
            if P[j, SIGMA] == 0.0:
                vx, vy, vz = _cross(zx, zy, zz, ex - ox, ey - oy, ez - oz)
                wx, wy, wz = zx, zy, zz
            else:
                vx, vy, vz = zx, zy, zz
                wx = wy = wz = 0.0
            if in_tool:
                vx, vy, vz = _rtv(te, vx, vy, vz)
                wx, wy, wz = _rtv(te, wx, wy, wz)
            out[o, j] = vx
            out[o + 1, j] = vy
            out[o + 2, j] = vz
            out[o + 3, j] = wx
            out[o + 4, j] = wy
            out[o + 5, j] = wz


@jit
def jacob_dot(P, W, q, qd, out):
    """J̇(q, q̇)·q̇ in the world frame: tool-point acceleration and angular acceleration at q̈ = 0.

    Outward recursion in the world frame: ω_k = ω_{k-1} + z_k q̇_k, ω̇_k = ω̇_{k-1} +
    ω_{k-1} × z_k q̇_k (revolute); point accelerations by rigid-body transport, plus the
    Coriolis term 2 ω × z_k q̇_k for prismatic joints. out (m*6,) rows [a; ω̇].
    """
    n = P.shape[0]
    m = _rows(q, n)
    if qd.shape[0] != q.shape[0] or out.shape[0] != 6 * m:
        raise ValueError("qd or out has the wrong length")
    mdh = W[MDH] != 0.0
    F = np.empty((n + 1, 12))
    tool = _tuple12(W, TOOL)
    for k in range(m):
        _frames(P, W, True, q, k * n, F)
        wx = wy = wz = 0.0      # angular velocity of the previous body
        bx = by = bz = 0.0      # its angular acceleration
        ax = ay = az = 0.0      # acceleration of its frame origin
        Ox, Oy, Oz = F[0, 3], F[0, 7], F[0, 11]
        for j in range(n):
            qdj = qd[k * n + j]
            zx, zy, zz, ox, oy, oz = _axis(F, mdh, j)
            # acceleration of the axis point o, as a point of the previous body
            rx, ry, rz = ox - Ox, oy - Oy, oz - Oz
            cx, cy, cz = _cross(bx, by, bz, rx, ry, rz)
            ux, uy, uz = _cross(wx, wy, wz, rx, ry, rz)
            ux, uy, uz = _cross(wx, wy, wz, ux, uy, uz)
            ax, ay, az = ax + cx + ux, ay + cy + uy, az + cz + uz
            sx, sy, sz = _cross(wx, wy, wz, zx * qdj, zy * qdj, zz * qdj)
            if P[j, SIGMA] == 0.0:
                bx, by, bz = bx + sx, by + sy, bz + sz
                wx, wy, wz = wx + zx * qdj, wy + zy * qdj, wz + zz * qdj
            else:
                ax, ay, az = ax + 2.0 * sx, ay + 2.0 * sy, az + 2.0 * sz
            Nx, Ny, Nz = F[j + 1, 3], F[j + 1, 7], F[j + 1, 11]
            rx, ry, rz = Nx - ox, Ny - oy, Nz - oz
            cx, cy, cz = _cross(bx, by, bz, rx, ry, rz)
            ux, uy, uz = _cross(wx, wy, wz, rx, ry, rz)
            ux, uy, uz = _cross(wx, wy, wz, ux, uy, uz)
            ax, ay, az = ax + cx + ux, ay + cy + uy, az + cz + uz
            Ox, Oy, Oz = Nx, Ny, Nz
        te = _mul(_tuple12(F[n], 0), tool)
        rx, ry, rz = te[3] - Ox, te[7] - Oy, te[11] - Oz
        cx, cy, cz = _cross(bx, by, bz, rx, ry, rz)
        ux, uy, uz = _cross(wx, wy, wz, rx, ry, rz)
        ux, uy, uz = _cross(wx, wy, wz, ux, uy, uz)
        o = 6 * k
        out[o] = ax + cx + ux
        out[o + 1] = ay + cy + uy
        out[o + 2] = az + cz + uz
        out[o + 3] = bx
        out[o + 4] = by
        out[o + 5] = bz


# ---------------------------------------------------------------- dynamics
@jit
def _friction1(P, j, qdj):
    """Link-side friction of joint j: |G|·(B·|G|·q̇ + Tc), Tc = Tc+ (q̇>0), Tc- (q̇<0), 0 at rest."""
    g = abs(P[j, G])
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
    """Recursive Newton–Euler for one configuration (link-frame recursion, seed 000 §4.1).

    Outward: ω, ω̇ and the frame-origin acceleration v̇ of every link, starting from
    v̇_0 = g (the base accelerates upward to model gravity); COM force F = m·v̇_c and moment
    N = I·ω̇ + ω × I·ω. Inward: f_j = R f_{j+1} + F_j, n_j from the moment balance, τ_j the
    projection on the joint axis. The tip starts from the wrench fext[foff:foff+6] exerted by
    the end-effector on the environment, given in the tool frame about the tool point.
    Adds G²·Jm·q̈ and the friction of ``_friction1``. work is (n, 21).
    """
    n = P.shape[0]
    mdh = W[MDH] != 0.0
    wx = wy = wz = 0.0
    ax = ay = az = 0.0
    vx, vy, vz = g[0], g[1], g[2]
    for j in range(n):
        qdj = qd[off + j]
        qddj = qdd[aoff + j]
        t = _dh(P, mdh, j, q[off + j])
        if mdh:
            px, py, pz = t[3], t[7], t[11]
            cx, cy, cz = _cross(ax, ay, az, px, py, pz)
            ux, uy, uz = _cross(wx, wy, wz, px, py, pz)
            ux, uy, uz = _cross(wx, wy, wz, ux, uy, uz)
            vx, vy, vz = _rtv(t, vx + cx + ux, vy + cy + uy, vz + cz + uz)
            wx, wy, wz = _rtv(t, wx, wy, wz)
            ax, ay, az = _rtv(t, ax, ay, az)
            if P[j, SIGMA] == 0.0:
                ax, ay, az = ax + wy * qdj, ay - wx * qdj, az + qddj
                wz += qdj
            else:
                vx, vy, vz = vx + 2.0 * wy * qdj, vy - 2.0 * wx * qdj, vz + qddj
        else:
            px, py, pz = _rtv(t, t[3], t[7], t[11])
            if P[j, SIGMA] == 0.0:
                ax, ay, az = _rtv(t, ax + wy * qdj, ay - wx * qdj, az + qddj)
                wx, wy, wz = _rtv(t, wx, wy, wz + qdj)
                vx, vy, vz = _rtv(t, vx, vy, vz)
            else:
                wx, wy, wz = _rtv(t, wx, wy, wz)
                ax, ay, az = _rtv(t, ax, ay, az)
                vx, vy, vz = _rtv(t, vx, vy, vz + qddj)
                cx, cy, cz = _cross(wx, wy, wz, t[8], t[9], t[10])
                vx, vy, vz = vx + 2.0 * qdj * cx, vy + 2.0 * qdj * cy, vz + 2.0 * qdj * cz
            cx, cy, cz = _cross(ax, ay, az, px, py, pz)
            ux, uy, uz = _cross(wx, wy, wz, px, py, pz)
            ux, uy, uz = _cross(wx, wy, wz, ux, uy, uz)
            vx, vy, vz = vx + cx + ux, vy + cy + uy, vz + cz + uz
        # COM acceleration, Newton and Euler
        sx, sy, sz = P[j, RX], P[j, RY], P[j, RZ]
        cx, cy, cz = _cross(ax, ay, az, sx, sy, sz)
        ux, uy, uz = _cross(wx, wy, wz, sx, sy, sz)
        ux, uy, uz = _cross(wx, wy, wz, ux, uy, uz)
        mj = P[j, M]
        Iw0 = P[j, I0] * wx + P[j, I0 + 1] * wy + P[j, I0 + 2] * wz
        Iw1 = P[j, I0 + 3] * wx + P[j, I0 + 4] * wy + P[j, I0 + 5] * wz
        Iw2 = P[j, I0 + 6] * wx + P[j, I0 + 7] * wy + P[j, I0 + 8] * wz
        ex, ey, ez = _cross(wx, wy, wz, Iw0, Iw1, Iw2)
        for i in range(12):
            work[j, i] = t[i]
        work[j, 12] = px
        work[j, 13] = py
        work[j, 14] = pz
        work[j, 15] = mj * (vx + cx + ux)
        work[j, 16] = mj * (vy + cy + uy)
        work[j, 17] = mj * (vz + cz + uz)
        work[j, 18] = P[j, I0] * ax + P[j, I0 + 1] * ay + P[j, I0 + 2] * az + ex
        work[j, 19] = P[j, I0 + 3] * ax + P[j, I0 + 4] * ay + P[j, I0 + 5] * az + ey
        work[j, 20] = P[j, I0 + 6] * ax + P[j, I0 + 7] * ay + P[j, I0 + 8] * az + ez

    # tip wrench: tool frame about the tool point -> frame n about its origin
    fx, fy, fz = _rv(W[TOOL:TOOL + 12], fext[foff], fext[foff + 1], fext[foff + 2])
    nx, ny, nz = _rv(W[TOOL:TOOL + 12], fext[foff + 3], fext[foff + 4], fext[foff + 5])
    cx, cy, cz = _cross(W[TOOL + 3], W[TOOL + 7], W[TOOL + 11], fx, fy, fz)
    nx, ny, nz = nx + cx, ny + cy, nz + cz
    for j in range(n - 1, -1, -1):
        if j < n - 1:
            fx, fy, fz = _rv(work[j + 1], fx, fy, fz)
            nx, ny, nz = _rv(work[j + 1], nx, ny, nz)
        Fx, Fy, Fz = work[j, 15], work[j, 16], work[j, 17]
        sx, sy, sz = P[j, RX], P[j, RY], P[j, RZ]
        if mdh:
            if j < n - 1:
                cx, cy, cz = _cross(work[j + 1, 12], work[j + 1, 13], work[j + 1, 14], fx, fy, fz)
                nx, ny, nz = nx + cx, ny + cy, nz + cz
            cx, cy, cz = _cross(sx, sy, sz, Fx, Fy, Fz)
            zx, zy, zz = 0.0, 0.0, 1.0
        else:
            px, py, pz = work[j, 12], work[j, 13], work[j, 14]
            ux, uy, uz = _cross(px, py, pz, fx, fy, fz)
            cx, cy, cz = _cross(px + sx, py + sy, pz + sz, Fx, Fy, Fz)
            nx, ny, nz = nx + ux, ny + uy, nz + uz
            zx, zy, zz = work[j, 8], work[j, 9], work[j, 10]
        nx, ny, nz = nx + cx + work[j, 18], ny + cy + work[j, 19], nz + cz + work[j, 20]
        fx, fy, fz = fx + Fx, fy + Fy, fz + Fz
        if P[j, SIGMA] == 0.0:
            tau = nx * zx + ny * zy + nz * zz
        else:
            tau = fx * zx + fy * zy + fz * zz
        gj = P[j, G]
        qddj = qdd[aoff + j]
        out[ooff + j] = tau + gj * gj * P[j, JM] * qddj + _friction1(P, j, qd[off + j])


@jit
def rne(P, W, g, q, qd, qdd, fext, out):
    """Inverse dynamics τ = M(q)q̈ + C(q,q̇)q̇ + F(q̇) + g(q) [+ Jᵀ·fext] for m configurations.

    g (3,) the base acceleration that models gravity, in the base frame; fext (6,) for all
    rows or (m*6,) one wrench per row; q, qd, qdd, out (m*n,).
    """
    n = P.shape[0]
    m = _rows(q, n)
    if qd.shape[0] != q.shape[0] or qdd.shape[0] != q.shape[0] or out.shape[0] != q.shape[0]:
        raise ValueError("q, qd, qdd and out lengths differ")
    if fext.shape[0] != 6 and fext.shape[0] != 6 * m:
        raise ValueError("fext must have 6 or 6*m elements")
    fstep = 0 if fext.shape[0] == 6 else 6
    work = np.empty((n, 21))
    for k in range(m):
        o = k * n
        _rne_row(P, W, g, q, qd, o, qdd, o, fext, k * fstep, out, o, work)


@jit
def _inertia_row(P, W, q, off, out, orow, F, C):
    """Joint-space inertia by the composite-rigid-body algorithm, in the base frame.

    Composite k (links k..n-1): mass M_k, COM c_k, inertia I_k about c_k (parallel-axis
    theorem). For j ≤ i: M_ji = z_j·(L_i + (c_i − o_j) × p_i) (revolute j) or z_j·p_i
    (prismatic j), where p_i, L_i are the linear and angular (about c_i) momentum of
    composite i for a unit rate of joint i. Adds G²·Jm on the diagonal. Writes
    out[orow:orow+n, :]; F is (n+1, 12), C is (n, 10) [M, c, Ixx, Iyy, Izz, Ixy, Iyz, Ixz].
    """
    n = P.shape[0]
    mdh = W[MDH] != 0.0
    _frames(P, W, False, q, off, F)
    Mc = 0.0
    ccx = ccy = ccz = 0.0
    Ixx = Iyy = Izz = Ixy = Iyz = Ixz = 0.0
    for k in range(n - 1, -1, -1):
        t = F[k + 1]
        sx, sy, sz = _rv(t, P[k, RX], P[k, RY], P[k, RZ])
        cx, cy, cz = t[3] + sx, t[7] + sy, t[11] + sz
        # R·I·Rᵀ
        a00, a01, a02 = _rv(t, P[k, I0], P[k, I0 + 3], P[k, I0 + 6])
        a10, a11, a12 = _rv(t, P[k, I0 + 1], P[k, I0 + 4], P[k, I0 + 7])
        a20, a21, a22 = _rv(t, P[k, I0 + 2], P[k, I0 + 5], P[k, I0 + 8])
        # columns of R·I are (a00,a01,a02), (a10,a11,a12), (a20,a21,a22)
        r0x, r0y, r0z = t[0], t[1], t[2]
        r1x, r1y, r1z = t[4], t[5], t[6]
        r2x, r2y, r2z = t[8], t[9], t[10]
        wxx = a00 * r0x + a10 * r0y + a20 * r0z
        wyy = a01 * r1x + a11 * r1y + a21 * r1z
        wzz = a02 * r2x + a12 * r2y + a22 * r2z
        wxy = a00 * r1x + a10 * r1y + a20 * r1z
        wyz = a01 * r2x + a11 * r2y + a21 * r2z
        wxz = a00 * r2x + a10 * r2y + a20 * r2z
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
        C[k, 0] = Mc
        C[k, 1] = ccx
        C[k, 2] = ccy
        C[k, 3] = ccz
        C[k, 4] = Ixx
        C[k, 5] = Iyy
        C[k, 6] = Izz
        C[k, 7] = Ixy
        C[k, 8] = Iyz
        C[k, 9] = Ixz
    for i in range(n):
        zx, zy, zz, ox, oy, oz = _axis(F, mdh, i)
        Mi = C[i, 0]
        cx, cy, cz = C[i, 1], C[i, 2], C[i, 3]
        if P[i, SIGMA] == 0.0:
            px, py, pz = _cross(zx, zy, zz, cx - ox, cy - oy, cz - oz)
            px, py, pz = Mi * px, Mi * py, Mi * pz
            Lx = C[i, 4] * zx + C[i, 7] * zy + C[i, 9] * zz
            Ly = C[i, 7] * zx + C[i, 5] * zy + C[i, 8] * zz
            Lz = C[i, 9] * zx + C[i, 8] * zy + C[i, 6] * zz
        else:
            px, py, pz = Mi * zx, Mi * zy, Mi * zz
            Lx = Ly = Lz = 0.0
        for j in range(i + 1):
            zx, zy, zz, ox, oy, oz = _axis(F, mdh, j)
            if P[j, SIGMA] == 0.0:
                hx, hy, hz = _cross(cx - ox, cy - oy, cz - oz, px, py, pz)
                mji = zx * (Lx + hx) + zy * (Ly + hy) + zz * (Lz + hz)
            else:
                mji = zx * px + zy * py + zz * pz
            out[orow + j, i] = mji
            out[orow + i, j] = mji
        gi = P[i, G]
        out[orow + i, i] += gi * gi * P[i, JM]


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
def coriolis(P, W, q, qd, out):
    """Coriolis/centripetal matrix C(q, q̇) with Ṁ − 2C skew-symmetric; out (m*n*n,).

    C = Σ_i m_i·J_viᵀ·J̇_vi + J_ωiᵀ·(I_i·J̇_ωi + ω_i × I_i·J_ωi), with J_vi, J_ωi the
    Jacobians of link i's COM velocity and angular velocity and I_i its inertia about the COM,
    all in the base frame. Then C·q̇ is the velocity torque of rne and, since
    d/dt I_i = [ω_i]I_i − I_i[ω_i], Ṁ − 2C is a sum of skew-symmetric terms.
    Motor inertia and friction do not contribute. out (m*n, n).
    """
    n = P.shape[0]
    m = _rows(q, n)
    if qd.shape[0] != q.shape[0]:
        raise ValueError("q and qd lengths differ")
    _check_out(out, m * n, n)
    mdh = W[MDH] != 0.0
    F = np.empty((n + 1, 12))
    K = np.empty((n, 27))   # per joint/link: z, o, ż, ȯ, ω, c, ċ, I (6)
    J = np.empty((n, 12))   # per column: Jv, Jω, J̇v, u = I·J̇ω + ω × I·Jω
    for k in range(m):
        _frames(P, W, False, q, k * n, F)
        wx = wy = wz = 0.0
        vx = vy = vz = 0.0
        Ox = Oy = Oz = 0.0
        for j in range(n):
            qdj = qd[k * n + j]
            zx, zy, zz, ox, oy, oz = _axis(F, mdh, j)
            cx, cy, cz = _cross(wx, wy, wz, ox - Ox, oy - Oy, oz - Oz)
            vox, voy, voz = vx + cx, vy + cy, vz + cz
            dzx, dzy, dzz = _cross(wx, wy, wz, zx, zy, zz)
            t = F[j + 1]
            if P[j, SIGMA] == 0.0:     # body j turns about the axis
                wx, wy, wz = wx + zx * qdj, wy + zy * qdj, wz + zz * qdj
                sx = sy = sz = 0.0
            else:                      # body j slides along the axis
                sx, sy, sz = zx * qdj, zy * qdj, zz * qdj
            cx, cy, cz = _cross(wx, wy, wz, t[3] - ox, t[7] - oy, t[11] - oz)
            vx, vy, vz = vox + cx + sx, voy + cy + sy, voz + cz + sz
            Ox, Oy, Oz = t[3], t[7], t[11]
            sx, sy, sz = _rv(t, P[j, RX], P[j, RY], P[j, RZ])
            ux, uy, uz = _cross(wx, wy, wz, sx, sy, sz)
            a00, a01, a02 = _rv(t, P[j, I0], P[j, I0 + 3], P[j, I0 + 6])
            a10, a11, a12 = _rv(t, P[j, I0 + 1], P[j, I0 + 4], P[j, I0 + 7])
            a20, a21, a22 = _rv(t, P[j, I0 + 2], P[j, I0 + 5], P[j, I0 + 8])
            vals = (zx, zy, zz, ox, oy, oz, dzx, dzy, dzz, vox, voy, voz, wx, wy, wz,
                    Ox + sx, Oy + sy, Oz + sz, vx + ux, vy + uy, vz + uz,
                    a00 * t[0] + a10 * t[1] + a20 * t[2],
                    a01 * t[4] + a11 * t[5] + a21 * t[6],
                    a02 * t[8] + a12 * t[9] + a22 * t[10],
                    a00 * t[4] + a10 * t[5] + a20 * t[6],
                    a01 * t[8] + a11 * t[9] + a21 * t[10],
                    a00 * t[8] + a10 * t[9] + a20 * t[10])
            for i in range(27):
                K[j, i] = vals[i]
        o = k * n
        for i in range(n):
            for j in range(n):
                out[o + i, j] = 0.0
        for i in range(n):
            mi = P[i, M]
            cx, cy, cz = K[i, 15], K[i, 16], K[i, 17]
            dcx, dcy, dcz = K[i, 18], K[i, 19], K[i, 20]
            wx, wy, wz = K[i, 12], K[i, 13], K[i, 14]
            Ixx, Iyy, Izz, Ixy, Iyz, Ixz = K[i, 21], K[i, 22], K[i, 23], K[i, 24], K[i, 25], K[i, 26]
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
                    # u = I·ż + ω × (I·z)
                    hx = Ixx * zx + Ixy * zy + Ixz * zz
                    hy = Ixy * zx + Iyy * zy + Iyz * zz
                    hz = Ixz * zx + Iyz * zy + Izz * zz
                    ex, ey, ez = _cross(wx, wy, wz, hx, hy, hz)
                    ux = Ixx * dzx + Ixy * dzy + Ixz * dzz + ex
                    uy = Ixy * dzx + Iyy * dzy + Iyz * dzz + ey
                    uz = Ixz * dzx + Iyz * dzy + Izz * dzz + ez
                else:
                    jvx, jvy, jvz = zx, zy, zz
                    djx, djy, djz = dzx, dzy, dzz
                    jwx = jwy = jwz = 0.0
                    ux = uy = uz = 0.0
                J[b, 0] = jvx
                J[b, 1] = jvy
                J[b, 2] = jvz
                J[b, 3] = jwx
                J[b, 4] = jwy
                J[b, 5] = jwz
                J[b, 6] = mi * djx
                J[b, 7] = mi * djy
                J[b, 8] = mi * djz
                J[b, 9] = ux
                J[b, 10] = uy
                J[b, 11] = uz
            for a in range(i + 1):
                for b in range(i + 1):
                    out[o + a, b] += (J[a, 0] * J[b, 6] + J[a, 1] * J[b, 7] + J[a, 2] * J[b, 8]
                                           + J[a, 3] * J[b, 9] + J[a, 4] * J[b, 10]
                                           + J[a, 5] * J[b, 11])


@jit
def accel(P, W, g, q, qd, tau, fext, out):
    """Forward dynamics q̈ = M(q)⁻¹·(τ − rne(q, q̇, 0)) for m configurations.

    One rne call with q̈ = 0 gives the bias (Coriolis, gravity, friction, fext); M from the
    composite-rigid-body algorithm; the solve is a Cholesky factorisation M = L·Lᵀ.
    Raises ValueError when M is not positive definite. q, qd, tau, out (m*n,).
    """
    n = P.shape[0]
    m = _rows(q, n)
    if qd.shape[0] != q.shape[0] or tau.shape[0] != q.shape[0] or out.shape[0] != q.shape[0]:
        raise ValueError("q, qd, tau and out lengths differ")
    if fext.shape[0] != 6 and fext.shape[0] != 6 * m:
        raise ValueError("fext must have 6 or 6*m elements")
    fstep = 0 if fext.shape[0] == 6 else 6
    work = np.empty((n, 21))
    F = np.empty((n + 1, 12))
    C = np.empty((n, 10))
    L = np.empty((n, n))
    zero = np.zeros(n)
    b = np.empty(n)
    for k in range(m):
        o = k * n
        _rne_row(P, W, g, q, qd, o, zero, 0, fext, k * fstep, b, 0, work)
        _inertia_row(P, W, q, o, L, 0, F, C)
        for i in range(n):
            b[i] = tau[o + i] - b[i]
        # Cholesky, lower triangle of L in place
        for j in range(n):
            s = L[j, j]
            for p in range(j):
                s -= L[j, p] * L[j, p]
            if not s > 0.0:
                raise ValueError("inertia matrix is not positive definite")
            s = math.sqrt(s)
            L[j, j] = s
            for i in range(j + 1, n):
                r = L[i, j]
                for p in range(j):
                    r -= L[i, p] * L[j, p]
                L[i, j] = r / s
        for i in range(n):
            r = b[i]
            for p in range(i):
                r -= L[i, p] * b[p]
            b[i] = r / L[i, i]
        for i in range(n - 1, -1, -1):
            r = b[i]
            for p in range(i + 1, n):
                r -= L[p, i] * b[p]
            b[i] = r / L[i, i]
        for i in range(n):
            out[o + i] = b[i]
