"""Manipulator analysis: manipulability, Cartesian inertia, inertia torque, gravity load with
the Jacobian, payload capacity, and integration of the forward dynamics.

Release-7 and SerialLink reference names (seeds 000 and 003): ``maniplty``, ``cinertia``,
``itorque``, ``gravjac``, ``paycap``, ``fdyn``. ``q`` of shape (n,) gives one answer, (m, n)
a stack of m answers. SI units, radians; wrenches are [Fx Fy Fz Mx My Mz] (N, N·m).
"""

import numpy as np

from blocksim.errors import SimulationError

_DOF = {"all": np.ones(6, dtype=bool), "trans": np.r_[True, True, True, False, False, False],
        "rot": np.r_[False, False, False, True, True, True]}


def _rows(dof):
    """Boolean row selection of the world-frame Jacobian: 'all', 'trans', 'rot' or 6 flags."""
    if isinstance(dof, str):
        if dof not in _DOF:
            raise ValueError(f"dof must be 'all', 'trans', 'rot' or 6 flags, got {dof!r}")
        return _DOF[dof]
    rows = np.asarray(dof) != 0
    if rows.shape != (6,) or not rows.any():
        raise ValueError("dof must have 6 elements [x y z rx ry rz], not all zero")
    return rows


def _joints(robot, q):
    q = np.asarray(q, dtype=np.float64)
    if q.shape[-1:] != (robot.n,) or q.ndim not in (1, 2):
        raise ValueError(f"q must be ({robot.n},) or (m, {robot.n}), got shape {q.shape}")
    return q


def _mobility(robot, q, rows):
    """Y = J·M⁻¹·Jᵀ (..., k, k) for the selected rows J (..., k, n) of jacob0: ẍ = Y·F."""
    J = robot.jacob0(q)[..., rows, :]
    return J @ np.linalg.solve(robot.inertia(q), np.swapaxes(J, -1, -2))


def cinertia(robot, q, dof="all"):
    """Cartesian (operational-space) inertia Λ(q) with F = Λ·ẍ (seed 000, ``cinertia``).

    Λ = (J·M⁻¹·Jᵀ)⁻¹ with J the rows ``dof`` of jacob0 (world frame, tool point) and M the
    joint-space inertia (motor inertia included); for a square J this is seed 000's
    J⁻ᵀ·M·J⁻¹. It maps an acceleration ẍ (m/s², rad/s²) of the selected coordinates of a
    robot at rest to the wrench F (N, N·m) that causes it when the joints exert no torque
    beyond gravity compensation. The number of selected rows k must not exceed n (e.g.
    dof=[1, 1, 0, 0, 0, 0] for a planar two-link arm). q (n,) -> (k, k); (m, n) -> (m, k, k).
    Raises numpy.linalg.LinAlgError at a singular configuration.
    """
    rows = _rows(dof)
    if rows.sum() > robot.n:
        raise ValueError(f"cinertia: {rows.sum()} Cartesian coordinates but only {robot.n} "
                         f"joints; select at most {robot.n} with dof")
    L = np.linalg.inv(_mobility(robot, _joints(robot, q), rows))
    return (L + np.swapaxes(L, -1, -2)) / 2


def maniplty(robot, q, method="yoshikawa", dof="all"):
    """Manipulability index (seed 000, ``maniplty``; seed 003 for ``dof``).

    'yoshikawa': w = sqrt(det(J·Jᵀ)) with J the rows ``dof`` of jacob0 (units mixed when
    translation and rotation are both selected); 0 at a singularity, and 0 whenever more
    rows than joints are selected. Release 7 (seed 000) uses the whole Jacobian, the default
    here; seed 003's later release defaults to translation only: pass dof='trans' for it, or
    e.g. dof=[1, 1, 0, 0, 0, 0] for the planar two-link arm, where w = |a1·a2·sin q2|.
    'asada': the ratio λ_min/λ_max of the eigenvalues of the Cartesian inertia Λ = cinertia
    (1 for an isotropic arm, 0 at a singularity), computed as μ_min/μ_max of
    Λ⁻¹ = J·M⁻¹·Jᵀ, the same ratio (release 7 computes min(eig)/max(eig) of Λ; the seed's
    wording "ratio of the ellipsoid axes" is this ratio's square root). At most n rows.
    q (n,) -> float; (m, n) -> (m,).
    """
    q = _joints(robot, q)
    rows = _rows(dof)
    if method == "yoshikawa":
        J = robot.jacob0(q)[..., rows, :]
        w = np.sqrt(np.maximum(np.linalg.det(J @ np.swapaxes(J, -1, -2)), 0.0))
    elif method == "asada":
        if rows.sum() > robot.n:
            raise ValueError(f"maniplty asada: {rows.sum()} Cartesian coordinates but only "
                             f"{robot.n} joints; select at most {robot.n} with dof")
        mu = np.linalg.eigvalsh(_mobility(robot, q, rows))
        w = np.maximum(mu[..., 0], 0.0) / mu[..., -1]
    else:
        raise ValueError(f"method must be 'yoshikawa' or 'asada', got {method!r}")
    return float(w) if q.ndim == 1 else w


def itorque(robot, q, qdd):
    """Inertia torque τ_i = M(q)·q̈ (N·m or N), motor inertia G²·Jm included (seed 000,
    ``itorque``). q, qdd (n,) -> (n,); stacks (m, n) -> (m, n)."""
    q = _joints(robot, q)
    qdd = np.asarray(qdd, dtype=np.float64)
    q, qdd = np.broadcast_arrays(q, qdd)
    return (robot.inertia(np.ascontiguousarray(q)) @ qdd[..., None])[..., 0]


def gravjac(robot, q, gravity=None):
    """Gravity load and world-frame Jacobian from one pass over the joint axes (seed 003,
    ``gravjac``; no inverse dynamics).

    With joint i's axis z_i through o_i and its slide h_i (``joint_axes``), link j's centre of
    mass c_j = T_j·r_j (T_j its frame from fkine_all) and the suffix sums M_i = Σ_{j≥i} m_j,
    S_i = Σ_{j≥i} m_j·c_j: τ_i = (z_i × (S_i − M_i·o_i))·g + h_i·M_i·z_i·g (revolute),
    τ_i = M_i·z_i·g (prismatic), the holding torque ∂V/∂q_i of V = Σ_j m_j·g·c_j; and the
    tool-point Jacobian column [z_i × (p − o_i) + h_i·z_i; z_i] (revolute) or [z_i; 0]
    (prismatic), p the tool point. ``gravity`` (3,) is the upward acceleration that models
    gravity in the world frame (default the robot's). q (n,) -> (tau (n,), J0 (6, n));
    (m, n) -> ((m, n), (m, 6, n)).
    """
    q = _joints(robot, q)
    g = robot.gravity if gravity is None else np.asarray(gravity, dtype=np.float64)
    if g.shape != (3,):
        raise ValueError("gravity must have 3 elements")
    F = robot.fkine_all(q)                                   # (..., n+1, 4, 4)
    z, o, h = robot.joint_axes(q)                            # (..., n, 3) twice, (n,)
    c = np.einsum("...jab,jb->...ja", F[..., 1:, :3, :3], robot.r) + F[..., 1:, :3, 3]
    m = robot.m
    Mi = np.cumsum(m[::-1])[::-1]
    Si = np.cumsum((m[:, None] * c)[..., ::-1, :], axis=-2)[..., ::-1, :]
    revolute = robot.sigma == 0
    slide = h * Mi * (z @ g)
    tau = np.where(revolute, np.cross(z, Si - Mi[:, None] * o) @ g, 0.0) + slide
    p = robot.fkine(q)[..., :3, 3]
    J = np.empty(q.shape[:-1] + (6, robot.n))
    lin = np.where(revolute[:, None], np.cross(z, p[..., None, :] - o), 0.0) + h[:, None] * z
    J[..., :3, :] = np.swapaxes(lin, -1, -2)
    J[..., 3:, :] = np.swapaxes(np.where(revolute[:, None], z, 0.0), -1, -2)
    return tau, J


def paycap(robot, q, w, f, tlim):
    """Largest payload wrench in the direction of w that the joint torque limits allow
    (seed 003, ``paycap``).

    w (6,) is the wrench the payload applies to the end-effector, [F; M] at the tool point,
    in the world frame (f = '0', Jacobian jacob0) or the tool frame (f = 'n', jacobn). Holding
    the robot and a wrench s·u, u = w/|w|, takes τ(s) = τ_g + s·τ_u with τ_g the gravity load
    and τ_u = −Jᵀ·u. Joint j allows s_j = (tmax_j − τ_g,j)/τ_u,j for τ_u,j > 0,
    (tmin_j − τ_g,j)/τ_u,j for τ_u,j < 0, and any s for τ_u,j = 0; the capacity is
    s* = min_j s_j, reached first by joint j* (0-based).
    tlim (2, n): first row the maximum, second row the minimum joint torque (N·m or N).
    Returns (wmax, joint): wmax = s*·u (6,) and j*; for q (m, n), (m, 6) and (m,).
    s* < 0 means the unloaded robot already exceeds a limit; s* = inf (joint −1) when w
    loads no joint.
    """
    q = _joints(robot, q)
    w = np.asarray(w, dtype=np.float64)
    tlim = np.asarray(tlim, dtype=np.float64)
    if w.shape != (6,) or not w.any():
        raise ValueError("w must be a non-zero wrench [Fx Fy Fz Mx My Mz]")
    if tlim.shape != (2, robot.n):
        raise ValueError(f"tlim must be (2, {robot.n}): maximum torques, then minimum torques")
    if f == "0":
        J = robot.jacob0(q)
    elif f == "n":
        J = robot.jacobn(q)
    else:
        raise ValueError(f"f must be '0' (world frame) or 'n' (tool frame), got {f!r}")
    u = w / np.linalg.norm(w)
    tau_g = robot.gravload(q)
    tau_u = -(np.swapaxes(J, -1, -2) @ u)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(tau_u > 0, (tlim[0] - tau_g) / tau_u,
                     np.where(tau_u < 0, (tlim[1] - tau_g) / tau_u, np.inf))
    joint = np.argmin(s, axis=-1)
    smax = np.take_along_axis(s, joint[..., None], axis=-1)[..., 0]
    joint = np.where(np.isinf(smax), -1, joint)
    return smax[..., None] * u, joint


def fdyn(robot, T, torqfun=None, q0=None, qd0=None, args=(), t_eval=None, method="RK45",
         rtol=1e-6, atol=1e-8, max_step=np.inf):
    """Integrate the forward dynamics from t = 0 to T (s) (seed 000 and 003, ``fdyn``).

    State x = [q; q̇], ẋ = [q̇; accel(q, q̇, τ)] with
    q̈ = M(q)⁻¹·(τ − C(q,q̇)·q̇ − F(q̇) − g(q)) and τ = torqfun(t, q, q̇, *args) (n,), zero
    torque when torqfun is None. q0, qd0 (n,): initial state, zeros when None. Integrated
    by scipy.integrate.solve_ivp with ``method``, ``rtol``, ``atol``, ``max_step``; results
    at the solver's steps or at ``t_eval``. As the seeds warn, Coulomb friction makes the
    equations discontinuous and the integration slow: consider ``robot.nofriction()``.
    Returns (t (k,), q (k, n), qd (k, n)). Raises SimulationError (with the time) if torqfun
    returns anything but n finite torques or the solver fails.
    """
    from scipy.integrate import solve_ivp  # lazily: only fdyn integrates

    n = robot.n
    q0 = np.zeros(n) if q0 is None else np.asarray(q0, dtype=np.float64)
    qd0 = np.zeros(n) if qd0 is None else np.asarray(qd0, dtype=np.float64)
    if q0.shape != (n,) or qd0.shape != (n,):
        raise ValueError(f"q0 and qd0 must have {n} elements")
    zero = np.zeros(n)

    def rhs(t, x):
        q, qd = x[:n], x[n:]
        tau = zero if torqfun is None else np.asarray(torqfun(t, q, qd, *args), np.float64)
        if tau.shape != (n,) or not np.isfinite(tau).all():
            raise SimulationError(f"fdyn: torqfun must return {n} finite torques, got {tau!r}",
                                  time=float(t))
        return np.concatenate([qd, robot.accel(q, qd, tau)])

    sol = solve_ivp(rhs, (0.0, float(T)), np.concatenate([q0, qd0]), method=method,
                    t_eval=t_eval, rtol=rtol, atol=atol, max_step=max_step)
    if not sol.success:
        raise SimulationError(f"fdyn: {sol.message}", time=float(sol.t[-1]))
    return sol.t, sol.y[:n].T.copy(), sol.y[n:].T.copy()
