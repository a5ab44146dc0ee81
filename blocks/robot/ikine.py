"""Inverse kinematics: numerical (damped least squares) and closed form for spherical wrists.

``ikine(robot, T, ...)`` solves fkine(q) = T iteratively for any serial robot (seed 000 and
003, ``ikine``); ``ikine6s(robot, T, config)`` (alias ``ikine560``) is the closed-form
solution of a 6-axis Puma-type arm with a spherical wrist, choosing one of its 8 solutions by
the configuration letters l/r, u/d, n/f (seed 003, ``ikine6s``; seed 000, ``ikine560``).

Both accept one pose T (4, 4) -> q (n,) or a sequence (m, 4, 4) -> (m, n). Both raise
``IKineError`` (a ValueError) when there is no answer: it carries the residual, the number of
iterations, the best joint vector found and, for a sequence, the index of the failing pose.
Angles in radians, lengths in the robot's units (metres for the shipped models).
"""

import numpy as np


class IKineError(ValueError):
    """No inverse-kinematic solution: the pose is out of reach, or the iteration stalled.

    Attributes: ``residual`` (the final error norm, or how far out of reach the pose is, in
    metres), ``iterations`` (0 for the closed form), ``q`` (the best joint vector found, or
    None), ``index`` (position in a pose sequence, or None).
    """

    def __init__(self, message, residual=None, iterations=None, q=None, index=None):
        super().__init__(message)
        self.residual = residual
        self.iterations = iterations
        self.q = q
        self.index = index


def _poses(T):
    """T as a (m, 4, 4) float array and whether a single pose was given."""
    T = np.asarray(T, dtype=np.float64)
    if T.shape[-2:] != (4, 4) or T.ndim not in (2, 3):
        raise ValueError(f"T must be a 4x4 transform or a (m, 4, 4) sequence, got {T.shape}")
    return T.reshape(-1, 4, 4), T.ndim == 2


def _with_index(err, index, single):
    """``err`` re-raised with the sequence index in its message and attribute."""
    if single:
        return err
    return IKineError(f"pose {index}: {err}", err.residual, err.iterations, err.q, index)


# ---------------------------------------------------------------- numerical solution
def _tool_error(Tq, Tt):
    """Pose error e (6,) of the current pose Tq towards the target Tt, in the tool frame.

    e = [Rᵀ(p_t − p); φ] with φ the rotation vector (axis·angle) of Rᵀ·R_t. Its gradient
    along the joint velocity is exact for the unmasked error: d(½|e|²)/dt = −eᵀ·J_n·q̇
    (φᵀ is a left eigenvector of the SO(3) Jacobian, and Rᵀ's rotation is orthogonal to e).
    """
    R = Tq[:3, :3]
    e = np.empty(6)
    e[:3] = R.T @ (Tt[:3, 3] - Tq[:3, 3])
    from scipy.spatial.transform import Rotation  # lazily: its import costs ~0.5 s

    e[3:] = Rotation.from_matrix(R.T @ Tt[:3, :3]).as_rotvec()
    return e


class _Limits:
    """Joint limits from ``qlim``; joints whose limits are nan are free.

    ``apply(q)`` brings q inside the limits and leaves a joint already inside as it is: a
    revolute joint outside is moved by the fewest whole turns (2π) that bring it inside (the
    same joint pose, nearest to where it was), and clamped to the nearer limit (by angular
    distance) when no turn does; a prismatic joint outside is clamped.
    """

    def __init__(self, robot):
        lim = robot.qlim
        self.set = np.isfinite(lim).all(axis=1)
        self.lo = np.where(self.set, lim[:, 0], -np.inf)
        self.hi = np.where(self.set, lim[:, 1], np.inf)
        self.revolute = (robot.sigma == 0) & self.set
        self.any = bool(self.set.any())

    def apply(self, q):
        """(q inside the limits, mask of the joints that had to be clamped)."""
        if not self.any:
            return q, np.zeros(q.shape, dtype=bool)
        q = q.copy()
        r = self.revolute
        v, lo, hi = q[r], self.lo[r], self.hi[r]
        turn = 2 * np.pi
        turns = np.where(v > hi, -np.ceil((v - hi) / turn),
                         np.where(v < lo, np.ceil((lo - v) / turn), 0.0))
        moved = v + turns * turn
        inside = (moved >= lo) & (moved <= hi)
        over = np.mod(v - hi, turn)                              # angular distance above hi
        under = np.mod(lo - v, turn)                             # angular distance below lo
        q[r] = np.where(inside, moved, np.where(over <= under, hi, lo))
        clamped = np.zeros(q.shape, dtype=bool)
        clamped[r] = ~inside
        clamped |= (q < self.lo) | (q > self.hi)
        return np.clip(q, self.lo, self.hi), clamped


def _step(H, g, q, limits):
    """q + Δq with H·Δq = g, kept inside the joint limits by holding clamped joints.

    A joint the step would take past a limit is held at that limit and the step re-solved for
    the remaining joints with the held joints' displacement d_h moved to the right-hand side:
    H_ff·Δq_f = g_f − H_fh·d_h (repeated while new joints reach a limit).
    """
    qn, clamped = limits.apply(q + np.linalg.solve(H, g))
    free = np.ones(q.shape, dtype=bool)
    while (clamped & free).any():
        free &= ~clamped
        if not free.any():
            break
        held = ~free
        d = qn[held] - q[held]
        x = qn.copy()
        x[free] = q[free] + np.linalg.solve(H[np.ix_(free, free)],
                                            g[free] - H[np.ix_(free, held)] @ d)
        qn, clamped = limits.apply(x)
    return qn


def _solve_one(robot, Tt, q, W, limits, ilimit, tol, lam):
    """Levenberg–Marquardt iteration for one pose; returns (q, residual, iterations)."""
    Tq = robot.fkine(q)
    e = _tool_error(Tq, Tt)
    cost = e @ (W * e)
    n = robot.n
    eye = np.eye(n)
    for it in range(1, ilimit + 1):
        if np.sqrt(cost) < tol:
            return q, np.sqrt(cost), it - 1
        J = robot.jacobn(q)
        JW = J.T * W
        A = JW @ J
        g = JW @ e
        qn = _step(A + lam * (np.diag(np.diag(A)) + eye), g, q, limits)
        en = _tool_error(robot.fkine(qn), Tt)
        cn = en @ (W * en)
        if cn < cost:
            q, e, cost = qn, en, cn
            lam = max(lam / 3.0, 1e-12)
        else:
            lam *= 4.0
            if lam > 1e12:                       # no step reduces the error: a local minimum
                return q, np.sqrt(cost), it
    return q, np.sqrt(cost), ilimit


# ikine's defaults: trial steps per attempt, convergence tolerance, first damping, restarts
# and the restarts' seed (the ikine block's compiled form runs with the same)
ILIMIT, TOL, LAM, RESTARTS, SEED = 500, 1e-10, 1e-2, 10, 0


def restart_box(robot, limits, q0):
    """(lo, hi): where ikine's restarts draw from, uniformly: within the limits, [-pi, pi]
    for a revolute joint without limits, q0 for a prismatic joint without limits."""
    lo = np.where(limits.set, limits.lo, np.where(robot.sigma == 0, -np.pi, q0))
    hi = np.where(limits.set, limits.hi, np.where(robot.sigma == 0, np.pi, q0))
    return lo, hi


def ikine(robot, T, q0=None, mask=None, ilimit=ILIMIT, tol=TOL, lam=LAM, restarts=RESTARTS,
          seed=SEED):
    """Joint coordinates q with fkine(q) = T, by damped least squares (Levenberg–Marquardt).

    Minimises ½·eᵀ·W·e with e (6,) the pose error in the end-effector (tool) frame,
    e = [Rᵀ(p_T − p(q)); φ], φ the rotation vector of R(q)ᵀ·R_T, and W = diag(mask). Each step
    solves (JᵀWJ + λ·(diag(JᵀWJ) + 1))·Δq = JᵀW·e with J = jacobn(q); a step that lowers the
    error is taken and λ divided by 3, otherwise λ is multiplied by 4 and the step retried.
    When λ exceeds 1e12 (no step lowers the error: a local minimum) or after ``ilimit`` trial
    steps the attempt stalls, and the iteration restarts from a random joint vector (uniform
    within the limits, in [−π, π] for a revolute joint without limits, q0 for a prismatic
    joint without limits; ``numpy.random.default_rng(seed)``) up to ``restarts`` times.

    T: (4, 4) -> q (n,); or a sequence (m, 4, 4) -> (m, n), where each solution is the initial
    estimate for the next pose. q0: initial estimate (n,), zeros when None (a singular pose
    for many arms, which the damping tolerates). mask: 6 weights for [x y z, rotation about
    x y z] of the error in the end-effector frame (seeds 000/003: 1 to match that Cartesian
    DOF, 0 to ignore it; for an arm with fewer than 6 joints give as many ones as joints, e.g.
    [1, 1, 0, 0, 0, 0] for a planar two-link arm). tol: convergence when sqrt(eᵀWe) < tol
    (metres and radians, unweighted sum). lam: initial damping λ.

    Joint limits: where ``qlim`` is set every iterate stays inside it, so the answer is the
    solution the iteration reaches from q0 within the limits (a joint inside its limits is
    never moved by a turn: the Puma's q6 may lie anywhere in ±266°). Only a revolute joint
    that a step (or q0) takes outside is moved, by the fewest turns of 2π that bring it inside
    (the same joint pose); when no turn does, the joint is clamped to the nearer limit, held
    there, and the step re-solved for the other joints. Joints without limits are not wrapped
    (the answer may be q + 2kπ). Joint offsets are handled by fkine.

    Raises IKineError (residual, iterations = trial steps of all attempts, q = best estimate,
    index for sequences) when every attempt stalls above tol: the pose is out of reach, not
    reachable within the limits, or not allowed by the mask.
    """
    Ts, single = _poses(T)
    n = robot.n
    q = np.zeros(n) if q0 is None else np.array(q0, dtype=np.float64)
    if q.shape != (n,):
        raise ValueError(f"q0 must have {n} elements, got shape {q.shape}")
    W = np.ones(6) if mask is None else np.asarray(mask, dtype=np.float64)
    if W.shape != (6,) or (W < 0).any() or not W.any():
        raise ValueError("mask must be 6 non-negative weights, not all zero")
    limits = _Limits(robot)
    rng = np.random.default_rng(seed)
    lo, hi = restart_box(robot, limits, q)
    q = limits.apply(q)[0]
    out = np.empty((len(Ts), n))
    for i, Tt in enumerate(Ts):
        start, total, best = q, 0, None
        for attempt in range(restarts + 1):
            qs, res, its = _solve_one(robot, Tt, start, W, limits, int(ilimit), tol, lam)
            total += its
            if best is None or res < best[1]:
                best = (qs, res)
            if res < tol:
                break
            start = rng.uniform(lo, hi)
        q, res = best
        if not res < tol:
            raise _with_index(IKineError(
                f"ikine did not converge: error {res:.3g} (tol {tol:g}) after {total} "
                f"iterations in {restarts + 1} attempts; the pose may be out of reach or "
                f"outside the joint limits, or the mask does not allow it",
                residual=res, iterations=total, q=q), i, single)
        out[i] = q
    return out[0] if single else out


# ---------------------------------------------------------------- closed form, spherical wrist
def _sign(x):
    return 1.0 if x >= 0 else -1.0


def _rx(alpha):
    c, s = np.cos(alpha), np.sin(alpha)
    return np.array([[1.0, 0, 0], [0, c, -s], [0, s, c]])


def _rz(theta):
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s, 0.0], [s, c, 0], [0, 0, 1]])


def _wrap(x):
    """Angles wrapped to (−π, π]."""
    return np.pi - np.mod(np.pi - x, 2 * np.pi)


def _check_6s(robot):
    """Raise ValueError unless the robot has the Puma-type structure ikine6s solves."""
    def unit(x):
        return abs(abs(x) - 1.0) < 1e-9

    sa = np.sin(robot.alpha)
    problems = []
    if robot.n != 6 or robot.config != "RRRRRR":
        problems.append(f"needs 6 revolute joints, has {robot.config}")
    elif robot.mdh:
        problems.append("needs standard DH parameters")
    else:
        if not robot.isspherical():
            problems.append("the wrist is not spherical (joints 4-6 axes do not intersect)")
        if abs(robot.a[0]) > 1e-12 or not unit(sa[0]):
            problems.append("joint 1 must have a = 0 and alpha = ±pi/2")
        if abs(sa[1]) > 1e-9 or np.cos(robot.alpha[1]) < 0:
            problems.append("joints 2 and 3 must be parallel (alpha_2 = 0)")
        if not unit(sa[2]):
            problems.append("joint 3 must have alpha = ±pi/2")
    if problems:
        raise ValueError(f"ikine6s: robot {robot.name!r} is not a Puma-type arm with a "
                         f"spherical wrist: " + "; ".join(problems))


def _config(config):
    """(left, up, flip) booleans from configuration letters; defaults l, u, n."""
    c = str(config).lower()
    if set(c) - set("lrudnf"):
        raise ValueError(f"config letters are l/r, u/d, n/f; got {config!r}")
    for a, b in ("lr", "ud", "nf"):
        if a in c and b in c:
            raise ValueError(f"config {config!r} has both {a!r} and {b!r}")
    return "r" not in c, "d" not in c, "f" in c


def _solve_6s(robot, T, left, up, flip):
    """θ (6,) joint angles (offsets not removed) for one pose T06 (base and tool removed)."""
    a, d, alpha = robot.a, robot.d, robot.alpha
    s1, s3, s4, s5 = (_sign(np.sin(x)) for x in alpha[[0, 2, 3, 4]])
    R = T[:3, :3]
    # wrist centre o_5: o_6 = o_5 + R06·Rx(α6)ᵀ·[a6, 0, d6]
    w = T[:3, 3] - R @ (_rx(alpha[5]).T @ np.array([a[5], 0.0, d[5]]))
    # In frame 1 the wrist centre is (x1, y1, D): x1, y1 in the plane of joints 2 and 3,
    # D = d2 + d3 the shoulder offset; in the base frame
    # w_xy = Rz(θ1)·[x1, −s1·D], w_z = d1 + s1·y1.
    D = d[1] + d[2]
    rho2 = w[0] ** 2 + w[1] ** 2
    if rho2 < D * D:
        raise IKineError(f"ikine6s: pose out of reach: the wrist centre is "
                         f"{np.sqrt(rho2):.6g} from the joint-1 axis, less than the shoulder "
                         f"offset {abs(D):.6g}", residual=abs(D) - np.sqrt(rho2), iterations=0)
    # left arm: the shoulder offset lies to the left of the line from the joint-1 axis to
    # the wrist centre seen from above, i.e. (w_xy × offset)_z = −s1·D·x1 > 0
    x1 = np.sqrt(rho2 - D * D) * (-1.0 if left else 1.0) * _sign(s1 * D)
    th1 = np.arctan2(w[1], w[0]) - np.arctan2(-s1 * D, x1)
    y1 = s1 * (w[2] - d[0])
    # planar two-link problem: (x1, y1) = a2·(c2, s2) + L·(cos(θ2+ψ), sin(θ2+ψ)),
    # link 3 + wrist as one segment of length L at the fixed angle β to link 3's x axis
    L = np.hypot(a[2], d[3])
    beta = np.arctan2(-s3 * d[3], a[2])
    c = (x1 * x1 + y1 * y1 - a[1] ** 2 - L * L) / (2 * a[1] * L)
    if abs(c) > 1.0 + 1e-12:
        reach = np.hypot(x1, y1)
        limit = a[1] + L if c > 0 else abs(a[1] - L)
        raise IKineError(f"ikine6s: pose out of reach: shoulder-to-wrist distance "
                         f"{reach:.6g}, the arm reaches {abs(a[1] - L):.6g} to {a[1] + L:.6g}",
                         residual=abs(reach - limit), iterations=0)
    # elbow up: the elbow is above the shoulder–wrist line in the base frame, which holds
    # when sin ψ has the sign of −s1·sign(x1)
    psi = np.arccos(np.clip(c, -1.0, 1.0)) * (-1.0 if up else 1.0) * s1 * _sign(x1)
    th2 = np.arctan2(y1, x1) - np.arctan2(L * np.sin(psi), a[1] + L * np.cos(psi))
    th3 = psi - beta
    # wrist: M = R03ᵀ·R06·Rx(α6)ᵀ = Rz(θ4)·Rx(α4)·Rz(θ5)·Rx(α5)·Rz(θ6), α4, α5 = ±π/2:
    R03 = np.eye(3)
    for j, th in enumerate((th1, th2, th3)):
        R03 = R03 @ _rz(th) @ _rx(alpha[j])
    M = R03.T @ R @ _rx(alpha[5]).T
    # M[0,2] = s5·sinθ5·cosθ4, M[1,2] = s5·sinθ5·sinθ4, M[2,2] = −s4·s5·cosθ5,
    # M[2,0] = s4·sinθ5·cosθ6, M[2,1] = −s4·sinθ5·sinθ6.
    # Rx(α4)·Rz(θ5)·Rx(α4)ᵀ = Ry(−s4·θ5), so the wrist is the ZYZ Euler rotation
    # (θ4, β = −s4·θ5, ±θ6); not flipped is β ≥ 0, as the toolbox's tr2eul without 'flip'
    sin5 = -s4 * np.hypot(M[0, 2], M[1, 2]) * (-1.0 if flip else 1.0)
    th5 = np.arctan2(sin5, -s4 * s5 * M[2, 2])
    if abs(sin5) > 1e-12:
        g = _sign(sin5)
        th4 = np.arctan2(s5 * g * M[1, 2], s5 * g * M[0, 2])
        th6 = np.arctan2(-s4 * g * M[2, 1], s4 * g * M[2, 0])
    else:                                # wrist singularity: only θ4 + ±θ6 is determined
        th4 = 0.0
        Rs = (_rz(th4) @ _rx(alpha[3]) @ _rz(th5) @ _rx(alpha[4])).T @ M
        th6 = np.arctan2(Rs[1, 0], Rs[0, 0])
    return np.array([th1, th2, th3, th4, th5, th6])


def ikine6s(robot, T, config="lun"):
    """Closed-form inverse kinematics of a 6-axis Puma-type arm with a spherical wrist.

    Robot class (standard DH, 6 revolute joints): a1 = 0, α1 = ±π/2 (waist), α2 = 0 (shoulder
    and elbow parallel), α3 = ±π/2, spherical wrist (a4 = a5 = d5 = 0, α4, α5 = ±π/2); any
    d1, a2, a3, shoulder offset d2 + d3, d4, and a6, d6, α6. The Puma 560 is one.

    Method: the wrist centre o5 = p − R·Rx(α6)ᵀ·[a6, 0, d6] fixes θ1 (two solutions, left
    and right of the shoulder offset) and then θ2, θ3 as a planar two-link problem (two
    solutions, elbow up and down); R03ᵀ·R·Rx(α6)ᵀ = Rz(θ4)Rx(α4)Rz(θ5)Rx(α5)Rz(θ6) gives
    the wrist angles (two solutions, the flipped one is (θ4 + π, −θ5, θ6 + π)).

    config: letters, defaults 'l', 'u', 'n' (seed 003):
      'l' / 'r' — arm left / right: seen from above (base z), looking from the joint-1 axis
      towards the wrist centre, the shoulder offset (d2 + d3 along z1) lies to the left / right;
      'u' / 'd' — elbow up / down: the elbow joint lies above / below the straight line from
      the shoulder (origin of frame 1) to the wrist centre (in the base frame's z);
      'n' / 'f' — wrist not flipped / flipped: the wrist's ZYZ Euler angle β = −s4·θ5 (s4
      the sign of sin α4, θ = q + offset) is ≥ 0 / < 0, as the toolbox's tr2eul without and
      with 'flip' (for the Puma, α4 = π/2: θ5 ≤ 0 / θ5 > 0).
    For a robot without shoulder offset (d2 + d3 = 0) left and right are the waist angles
    θ1 and θ1 + π: 'l' reaches the wrist centre backwards over the shoulder (along −x1),
    'r' forwards (along +x1).

    T: pose (4, 4) in the world (base and tool are removed first) -> q (6,) with joint
    offsets removed and every angle wrapped to (−π, π]; a sequence (m, 4, 4) -> (m, 6).
    At the wrist singularity (θ5 = 0) only θ4 ± θ6 is determined: θ4 is set to 0, as the
    toolbox does, for either wrist letter.
    The letters are those of the toolbox (release 7's ikine560, ikine6s of later releases,
    roboticstoolbox-python's ``Puma560().ikine_a``); MATLAB's ikine6s given no wrist letter
    computes the flipped wrist, so its ``ikine6s(T)`` is ``ikine6s(T, 'luf')`` here.
    Raises ValueError for robots outside the class, IKineError (residual = distance out of
    reach, iterations 0) for a pose out of reach.
    """
    _check_6s(robot)
    left, up, flip = _config(config)
    Ts, single = _poses(T)
    Binv = np.linalg.inv(robot.base)
    Tinv = np.linalg.inv(robot.tool)
    out = np.empty((len(Ts), 6))
    for i, Tw in enumerate(Ts):
        try:
            th = _solve_6s(robot, Binv @ Tw @ Tinv, left, up, flip)
        except IKineError as err:
            raise _with_index(err, i, single) from None
        out[i] = _wrap(th - robot.offset)
    return out[0] if single else out


ikine560 = ikine6s
