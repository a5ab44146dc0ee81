"""Dynamics blocks of a serial-link robot: the plant (forward dynamics), rne, gravload, inertia.

Conventions of `shared/spec/robots.md`: M(q) includes the motor inertia G^2·Jm, friction
F_j(qd) = |G_j|·(B_j·|G_j|·qd_j + Tc_j) with Tc_j = Tc+ (qd > 0), Tc- (qd < 0), 0 at rest.
Each block makes one call of a compiled kernel per evaluation, writing into its output view.
"""
from pathlib import Path

import numpy as np

from blocksim.accel.lowering import needs_lapack
from blocksim.block import FALLING, RISING, In, Out
from blocksim.errors import SimulationError
from blocksim.params import Param, ParamError

from .kinematics_blocks import RobotBlock, joint_names, robot_param

from ..linearisation import mode_words

STICK_SLIP = Path(__file__).with_name("_stick_slip.c")  # compiled stick-slip (coulomb: events)


def _joint_vector(p, name, n):
    """Parameter `name` broadcast to (n,) (a scalar applies to every joint)."""
    value = getattr(p, name)
    try:
        return np.broadcast_to(value, (n,)).astype(float)
    except ValueError:
        raise ParamError(name, f"expected a scalar or {n} joint values, got shape {value.shape}") from None


class Robot(RobotBlock):
    """Forward dynamics of a serial-link robot driven by joint torques: the robot plant.

    Input tau (n) (N·m; N for a prismatic joint):

        M(q)·qdd = tau - C(q, qd)·qd - g(q) - F(qd),   d[q; qd]/dt = [qd; qdd]

    with q(0) = q0, qd(0) = qd0 (a scalar applies to every joint). Outputs q (n) and qd (n)
    are the continuous state (no feedthrough); qdd (n) depends on tau at the same instant.
    F(qd) = |G|·(B·|G|·qd + Tc±) is the friction of the robot (its `friction:` option).

    Coulomb friction with `coulomb: events` (the default): true stick-slip. Each joint is in a
    mode, slipping forwards, backwards or stuck, that changes only at located events:
    - a slipping joint feels |G|·Tc+ (forwards) or |G|·Tc- (backwards); when its velocity
      comes to 0 the joint is checked for sticking;
    - a stuck joint has qd = 0 and qdd = 0 exactly: with S the stuck joints and F the others,
      qdd_F solves M_FF·qdd_F = b_F - Fc_F (b = tau - C·qd - g - viscous friction) and the
      holding torque h_S = b_S - M_SF·qdd_F is what friction must supply; the joint stays
      stuck while h lies within [|G|·Tc-, |G|·Tc+] and slips in the direction of the excess
      when h leaves that band (a located crossing);
    - when joints come to rest, the consistent set is chosen: stuck joints' holding torques
      inside their bands, joints released from rest accelerating in the direction of their
      excess torque, against their friction (the joint with the largest excess is released first; every combination is
      tried if that fails).
    `coulomb: band` keeps version 1's regularisation instead: sign(qd) is replaced by
    clip(qd/coulomb_band, -1, 1) (coulomb_band > 0 rad/s, default 1e-3; 0: the exact sign,
    discontinuous). Inside the band Coulomb friction is a viscous damper |G|·Tc/band, so a
    joint that should stick creeps, and the ODE gains a fast mode that limits an explicit
    solver's step. Robots without Coulomb friction (friction: viscous or none) are smooth
    and have no events.
    """

    type = "robot"
    params = (
        robot_param(),
        Param("q0", "value", 0.0, "initial joint coordinates (n,) or scalar"),
        Param("qd0", "value", 0.0, "initial joint velocities (n,) or scalar"),
        Param("coulomb", "choice", "events", "Coulomb friction: stick-slip located by events, "
              "or the regularised band of version 1", choices=("events", "band")),
        Param("coulomb_band", "scalar", 1e-3, "with coulomb: band, the velocity band (rad/s) in "
              "which Coulomb friction is a ramp; 0: the exact sign", minimum=0.0),
    )

    _values = ("robot", "q0", "qd0", "coulomb_band")
    _facts = ("coulomb", "frictionless", "band")

    def __init__(self, name, params):
        super().__init__(name, params)
        n = self.n
        self._initial()  # checks q0 and qd0
        facts = self._friction(self.p)
        self._smooth = np.array(facts["frictionless"])  # joints without Coulomb friction
        coulomb = facts["coulomb"]
        self._events = coulomb and self.p.coulomb == "events"
        self._regularised = coulomb and self.p.coulomb == "band" and facts["band"]
        if self._regularised:
            self.acceleration = self._band_acceleration
        if self._events:
            self.acceleration = self._stick_slip_acceleration
        self._tau = np.zeros(n)
        self._fext = np.zeros(6)

    # run data: the plant's kernel arguments (Coulomb friction left out with coulomb: events
    # or band), the Coulomb levels up (hi) and down, lo = -down (friction while slipping
    # backwards), 1/band, smooth (1 for a joint without Coulomb friction) and the rest modes'
    # tolerance; which joints have Coulomb friction, and whether any does, are structure
    @staticmethod
    def _friction(p):
        hi, down = p.robot.coulomb_levels()
        return {"coulomb": bool(np.any(hi) or np.any(down)),
                "frictionless": tuple(bool(s) for s in (hi == 0) & (down == 0)),
                "band": p.coulomb_band > 0}

    def _kernel(self, p):
        robot = p.robot.nofriction("coulomb") if self._events or self._regularised else p.robot
        return robot.kernel_args()[1:]

    def _more(self, p):
        hi, down = p.robot.coulomb_levels()
        lo = -down
        tol = 1e-12 * max(1.0, float(np.max(np.abs(np.concatenate([hi, lo])))))
        smooth = (hi == 0) & (lo == 0)
        return {"hi": hi, "down": down, "lo": lo, "smooth": smooth.astype(float), "tol": tol,
                "inv_band": 1.0 / p.coulomb_band if self._regularised else 0.0,
                **self._friction(p)}

    def _initial(self):
        n = self.n
        return np.concatenate([_joint_vector(self.p, "q0", n), _joint_vector(self.p, "qd0", n)])

    def ports(self):
        n = self.n
        return ([In("tau", shape=(n,), doc="joint torques/forces")],
                [Out("q", shape=(n,), feedthrough=(), state=slice(0, n),
                     elements=joint_names("q", (n,))),
                 Out("qd", shape=(n,), feedthrough=(), state=slice(n, 2 * n),
                     elements=joint_names("qd", (n,))),
                 Out("qdd", shape=(n,), feedthrough=("tau",), calc="acceleration",
                     elements=joint_names("qdd", (n,)))])

    def continuous_state(self):
        return self._initial()

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        n = self.n
        v = self.v
        self._hi, self._down, self._lo, self._inv_band = v.hi, v.down, v.lo, v.inv_band
        self._q, self._qd = x[:n], x[n:]
        self._dq, self._dqd = dx[:n], dx[n:]
        self._drive = self._tau if self._regularised or self._events else u[0]
        if self._events:
            self._hold = np.zeros(n)       # holding torque of the stuck joints
            self._M, self._h, self._zero = np.zeros((n, n)), np.zeros(n), np.zeros(n)
            self._set_modes(xd)

    def initialize(self, t):
        if self._events:  # a model simulated again starts from its initial modes
            self._set_modes(self.xd)

    def _accel(self, t):
        """qdd = M(q)^-1 (drive - C(q, qd)·qd - g(q) - F(qd)): one kernel call."""
        try:
            self._k.accel(self._P, self._W, self._g, self._q, self._qd, self._drive, self._fext,
                          self.y[2])
        except ValueError as e:
            raise SimulationError(f"forward dynamics failed: {e}", block=self.name, port="qdd",
                                  time=t) from None

    acceleration = _accel  # smooth friction: the kernel call is the whole computation

    def _band_acceleration(self, t):
        self._k.subtract_coulomb(self._qd, self.u[0], self._hi, self._down,
                                 self._inv_band[()], self._tau)
        self._accel(t)

    def derivative(self, t):
        np.copyto(self._dq, self._qd)
        np.copyto(self._dqd, self.y[2])

    # ---- compiled form: accel_row is the kernel accel's row function; the stick-slip
    # functions are _stick_slip.c's, W_hold the holding torques of the stuck joints (_hold)
    def declare(self, d):
        super().declare(d)
        if self._events:
            d.work("hold", self.n)

    def lower(self, c):
        n = self.n
        fail = ('if (status_ != 0) FAIL("forward dynamics failed: inertia matrix is not '
                'positive definite");')
        derivative = c.loop(n, f"dx[i] = x[{n} + i]; dx[{n} + i] = out_qdd[i];")
        if self._events:
            return self._lower_stick_slip(c, fail, derivative)
        if self._regularised:
            accel = (f"double drive[{n}]; subtract_coulomb_row({n}, x + {n}, in_tau, P_hi, "
                     "P_down, P_inv_band[0], drive);\n"
                     + self._call("accel_row", "x", f"x + {n}", "drive", out="out_qdd"))
        else:
            accel = self._call("accel_row", "x", f"x + {n}", "in_tau", out="out_qdd")
        return self._rows({"acceleration": accel + "\n" + fail, "derivative": derivative,
                           "initialize": ""})  # the modes of coulomb: events only

    def _lower_stick_slip(self, c, fail, derivative):
        needs_lapack()
        n = self.n
        plant = (f"StickSlip ss_ = {{RP, RW, Rg, P_hi, P_down, P_smooth, P_tol[0], {n}}}; "
                 "(void)ss_;\n")
        singular = ('FAIL("forward dynamics failed: the inertia matrix of the joints that are '
                    'not stuck is singular");')
        acceleration = (
            f"double drive[{n}]; int stuck = 0;\n"
            f"subtract_coulomb_row({n}, xd, in_tau, P_hi, P_down, 1.0, drive);\n"
            + c.loop(n, "stuck |= xd[i] == 0.0;") + "\n"
            "if (!stuck) { " + self._call("accel_row", "x", f"x + {n}", "drive", out="out_qdd")
            + f" {fail} }}\nelse if (ss_constrained(&ss_, x, x + {n}, drive, xd, out_qdd, "
            "W_hold)) "
            + singular)
        indicator = c.loop(n, (
            f"int stuck = xd[i] == 0.0; z[i] = P_smooth[i] != 0.0 ? 1.0 : xd[i] * x[{n} + i]; "
            f"z[{n} + i] = stuck ? W_hold[i] - P_hi[i] : 1.0; "
            f"z[{2 * n} + i] = stuck ? W_hold[i] - -P_down[i] : 1.0;"))
        crossing = (
            f"double *qd = x + {n}, *mode = xd, newm[{n}]; const double *smooth = P_smooth;"
            f"\nptrdiff_t idx[{n}], k = 0; char broke[{n}]; int stopped_any = 0;\n"
            + c.loop(n, (
                "int sticky = smooth[i] == 0.0; "
                "int stopped = crossed[i] != 0 && qd[i] != 0.0 && sticky; "
                "if (stopped) { qd[i] = 0.0; stopped_any = 1; } "
                "if (qd[i] == 0.0 && sticky && (mode[i] == 0.0 || stopped || "
                f"mode[i] * out_qdd[i] < 0)) {{ broke[k] = crossed[{n} + i] > 0 || "
                f"crossed[{2 * n} + i] < 0; idx[k++] = i; }} "
                "newm[i] = qd[i] != 0.0 ? rt_sign(qd[i]) : mode[i]; "
                "if (qd[i] == 0.0 && !sticky) newm[i] = 1.0;")) + "\n"
            f"if (k) {{ double choice[{n}];\n"
            f"  if (ss_rest_modes(&ss_, x, qd, in_tau, newm, idx, k, broke, choice)) {{ "
            f"{singular} return 0; }}\n"
            "  for (ptrdiff_t j = 0; j < k; j++) newm[idx[j]] = choice[j]; }\n"
            "changed = stopped_any;\n"
            + c.loop(n, "if (newm[i] != mode[i]) changed = 1; mode[i] = newm[i];"))
        code = {"acceleration": acceleration, "derivative": derivative, "initialize": "",
                "indicator": indicator, "crossing": crossing}
        low = self._rows({k: plant + v if v else v for k, v in code.items()})
        low.support += (STICK_SLIP,)
        return low

    # ---- stick-slip (coulomb: events) ----------------------------------------------------
    def discrete_state(self):
        # per joint: +1 slipping forwards, -1 backwards, 0 stuck; joints starting at rest
        # are decided at the start, when the input torque is known
        return np.sign(self._initial()[self.n:]) if self._events else None

    def zero_crossings(self):
        if not self._events:
            return None
        n = self.n
        # mode*qd (a slipping joint stops), h - |G|Tc+ and h - |G|Tc- (a stuck one breaks away)
        return [FALLING] * n + [RISING] * n + [FALLING] * n

    def mode_text(self):
        if not self._events:
            return None
        return mode_words(self.xd, {1.0: "slipping forwards", -1.0: "slipping backwards",
                                    0.0: "stuck (qdd = 0)"})

    def _set_modes(self, modes):
        """Cache the stuck and free joints of the modes (refreshed whenever they change)."""
        self._stuck = np.flatnonzero(modes == 0)
        self._free = np.flatnonzero(modes != 0)

    def _stick_slip_acceleration(self, t):
        self._k.subtract_coulomb(self.xd, self.u[0], self._hi, self._down, 1.0, self._tau)
        if not self._stuck.size:
            self._accel(t)
            return
        self._constrained(t, self._tau, self._stuck, self._free, self.y[2], self._hold)

    def _constrained(self, t, drive, stuck, free, qdd, hold):
        """qdd with the joints `stuck` held (qdd_S = 0) and their holding torques:
        M_FF·qdd_F = b_F, h_S = b_S - M_SF·qdd_F, b = drive - (C·qd + g + viscous).
        A singular M_FF is a SimulationError at time t, as in `_accel`."""
        k, P, W = self._k, self._P, self._W
        k.inertia(P, W, self._q, self._M)
        k.rne(P, W, self._g, self._q, self._qd, self._zero, self._fext, self._h)
        b = drive - self._h
        M = self._M
        qdd[:] = 0.0
        if free.size:
            try:
                qdd[free] = np.linalg.solve(M[np.ix_(free, free)], b[free])
            except np.linalg.LinAlgError:
                raise SimulationError("forward dynamics failed: the inertia matrix of the joints "
                                      "that are not stuck is singular", block=self.name,
                                      port="qdd", time=t) from None
        hold[stuck] = b[stuck] - M[np.ix_(stuck, free)] @ qdd[free]

    def indicator(self, t):
        n, z, mode = self.n, self.z, self.xd
        np.multiply(mode, self._qd, out=z[:n])
        np.copyto(z[:n], 1.0, where=self._smooth)  # no Coulomb friction: nothing to locate
        stuck = mode == 0
        z[n:2 * n] = np.where(stuck, self._hold - self._hi, 1.0)
        z[2 * n:] = np.where(stuck, self._hold - self._lo, 1.0)

    def crossing(self, t, crossed):
        n, qd, mode = self.n, self._qd, self.xd
        sticky = ~self._smooth
        stopped = (crossed[:n] != 0) & (qd != 0.0) & sticky
        qd[stopped] = 0.0                   # the located stop: qd is exactly 0 from here
        # at rest and to be decided: stuck ones, ones that just stopped, and ones released
        # from rest that accelerate against their friction (a released joint keeps slipping)
        rest = (qd == 0.0) & sticky & ((mode == 0) | stopped | (mode * self.y[2] < 0))
        new = np.where(qd != 0.0, np.sign(qd), mode)
        new[(qd == 0.0) & ~sticky] = 1.0    # no Coulomb friction: free, whatever its mode
        if rest.any():
            # a holding torque located leaving its band breaks the joint away, however
            # little it has left it by at the located instant
            broke = (crossed[n:2 * n] > 0) | (crossed[2 * n:] < 0)
            new[rest] = self._rest_modes(t, rest, new, broke[rest])
        changed = bool(stopped.any()) or not np.array_equal(new, mode)
        mode[:] = new
        self._set_modes(mode)
        return changed

    def _rest_modes(self, t, rest, moving_modes, broke):
        """Modes (0 stuck, +-1 slipping) of the joints at rest (mask `rest`): the consistent
        set (holding torques inside their bands, released joints accelerating with their
        friction's sign): first by releasing the worst violation at a time, else by trying
        every combination, most joints stuck first. `broke` marks the rest joints whose
        holding torque was located leaving its band: they count as outside it."""
        idx = np.flatnonzero(rest)
        tol = 1e-12 * max(1.0, float(np.max(np.abs(np.concatenate([self._hi, self._lo])))))

        def attempt(choice):
            modes = moving_modes.copy()
            modes[idx] = choice
            drive, qdd, hold = np.zeros(self.n), np.zeros(self.n), np.zeros(self.n)
            self._k.subtract_coulomb(modes, self.u[0], self._hi, self._down, 1.0, drive)
            self._constrained(t, drive, np.flatnonzero(modes == 0),
                              np.flatnonzero(modes != 0), qdd, hold)
            excess = np.maximum(hold - self._hi, self._lo - hold)[idx]
            excess[broke] = np.maximum(excess[broke], 2 * tol)
            excess[choice != 0] = -np.inf
            released_ok = np.all(choice[choice != 0] * qdd[idx][choice != 0] >= 0)
            return excess, hold[idx], released_ok

        choice = np.zeros(idx.size)
        for _ in range(idx.size + 1):
            excess, hold, released_ok = attempt(choice)
            worst = int(np.argmax(excess))
            if excess[worst] <= tol:
                if released_ok:
                    return choice
                break
            choice[worst] = 1.0 if hold[worst] > self._hi[idx[worst]] else -1.0
        from itertools import product
        options = sorted(product((0.0, 1.0, -1.0), repeat=idx.size),
                         key=lambda c: sum(v != 0 for v in c))
        for option in options:
            option = np.array(option)
            excess, _, released_ok = attempt(option)
            if released_ok and np.all(excess <= tol):
                return option
        return choice


class Rne(RobotBlock):
    """Inverse dynamics tau(q, qd, qdd) by recursive Newton-Euler, with motor inertia and friction.

        tau = M(q)·qdd + C(q, qd)·qd + g(q) + F(qd) + Jn(q)^T·fext

    Inputs q, qd, qdd (n); fext (6, optional, default 0) = [Fx Fy Fz Mx My Mz], the wrench
    the tool exerts on the environment, in the tool frame with the moment about the tool
    point (fext_frame tool), or in the last link's frame, the end effector without the tool,
    with the moment about its origin (fext_frame link, as roboticstoolbox-python's rne).
    gravity (3,): the upward acceleration that models gravity, world frame (default: the
    robot's, normally [0, 0, 9.81]). Output tau (n).
    """

    type = "rne"
    params = (
        robot_param(),
        Param("gravity", "value", (), "gravity vector [gx, gy, gz] (m/s^2; default: the robot's)"),
        Param("fext_frame", "choice", "tool", "the frame of fext: tool (moment about the tool "
              "point) or link (the last link's frame, as roboticstoolbox-python)",
              choices=("tool", "link")),
    )

    _values = ("robot", "gravity")

    def __init__(self, name, params):
        super().__init__(name, params)
        gravity = self.p.gravity
        if gravity.size and gravity.shape != (3,):
            raise ParamError("gravity", f"expected 3 values, got shape {gravity.shape}")

    def _kernel(self, p):  # the gravity given, fext in the frame asked
        gravity = p.gravity if p.gravity.size else None
        _, P, W, g = p.robot.kernel_args(gravity, fext_frame=p.fext_frame)
        return P, W, g

    def ports(self):
        n = self.n
        return ([In("q", shape=(n,)), In("qd", shape=(n,)), In("qdd", shape=(n,)),
                 In("fext", shape=(6,), optional=True,
                    doc=f"tool wrench [F; M], {self.p.fext_frame} frame")],
                [Out("tau", shape=(n,), elements=joint_names("tau", (n,)))])

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        # an unwired fext is a read-only zero vector: use a writable one (one compiled kernel)
        self._fext = u[3] if u[3].flags.writeable else np.zeros(6)

    def output(self, t):
        q, qd, qdd, _ = self.u
        self._k.rne(self._P, self._W, self._g, q, qd, qdd, self._fext, self.y[0])

    def lower(self, c):
        return self._rows({"output": self._call("rne_kernel_row", "in_q", "in_qd", "in_qdd",
                                                out="out_tau", fext="in_fext")})


class GravLoad(RobotBlock):
    """Gravity torque g(q) = rne(q, 0, 0) (n) at joint coordinates q (n), with the robot's
    gravity."""

    type = "gravload"

    def __init__(self, name, params):
        super().__init__(name, params)
        self._zero = np.zeros(self.n)
        self._fext = np.zeros(6)

    def ports(self):
        return [In("q", shape=(self.n,))], [Out("tau", shape=(self.n,),
                                                elements=joint_names("tau", (self.n,)))]

    def output(self, t):
        z = self._zero
        self._k.rne(self._P, self._W, self._g, self.u[0], z, z, self._fext, self.y[0])

    def lower(self, c):
        return self._rows({"output": self._call("rne_kernel_row", "in_q", "Z", "Z",
                                                out="out_tau")})


class Inertia(RobotBlock):
    """Joint-space inertia matrix M(q) (n, n) at joint coordinates q (n).

    Computed by the composite-rigid-body algorithm; the motor inertia G^2·Jm is on the
    diagonal.
    """

    type = "inertia"

    def ports(self):
        return [In("q", shape=(self.n,))], [Out("M", shape=(self.n, self.n))]

    def output(self, t):
        self._k.inertia(self._P, self._W, self.u[0], self.y[0])

    def lower(self, c):
        return self._rows({"output": self._call("inertia_kernel_row", "in_q", out="out_M")})


class Coriolis(RobotBlock):
    """Coriolis and centripetal matrix C(q, qd) (n, n) of a robot, as coriolis in the Robotics Toolbox.

    The matrix of the Christoffel symbols of M(q), C_ij = sum_k Gamma_ijk qd_k with
    Gamma_ijk = (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i) / 2, so that C·qd is the velocity
    torque rne(q, qd, 0) - g(q) (friction left out) and dM/dt - 2C is skew-symmetric.
    Inputs q, qd (n); output C (n, n).
    """

    type = "coriolis"

    def ports(self):
        n = self.n
        return [In("q", shape=(n,)), In("qd", shape=(n,))], [Out("C", shape=(n, n))]

    def output(self, t):
        q, qd = self.u
        self._k.coriolis(self._P, self._W, q, qd, self.y[0])

    def lower(self, c):
        return self._rows({"output": self._call("coriolis_row", "in_q", "in_qd", out="out_C")})


class Energy(RobotBlock):
    """Kinetic, potential and total energy of a robot at (q, qd), for checking a simulation.

    kinetic = qd^T M(q) qd / 2 (J), M with the motor inertia G^2·Jm (the rotors' energy);
    potential = sum_j m_j g·c_j(q) (J), c_j the world position of link j's centre of mass and
    g the robot's gravity vector, the upward acceleration that models gravity ([0, 0, 9.81]:
    potential m·9.81·z), so that its gradient is gravload(q); total = kinetic + potential.
    Without friction or input torque the total is constant (a frictionless arm falling under
    gravity); friction only lowers it. Inputs q, qd (n); outputs total, kinetic, potential
    (scalars, J; N·m for a prismatic joint's force times metres).
    """

    type = "energy"

    def __init__(self, name, params):
        super().__init__(name, params)
        n = self.n
        self._frames = np.empty((4 * (n + 1), 4))
        self._links = self._frames.reshape(n + 1, 4, 4)[1:]
        self._M = np.empty((n, n))
        self._Mqd = np.empty(n)

    def ports(self):
        n = self.n
        return ([In("q", shape=(n,)), In("qd", shape=(n,))],
                [Out("total", shape=()), Out("kinetic", shape=()), Out("potential", shape=())])

    def _more(self, p):
        """potential = sum over the link frames F_j (4, 4) of sum(F_j * Wg_j), with
        Wg_j[a, b] = g_a m_j [r_j; 1]_b (rows 0..2): g·m_j (R_j r_j + p_j)."""
        robot, n = p.robot, self.n
        weights = np.zeros((n, 4, 4))
        weights[:, :3, :] = np.einsum("a,jb->jab", robot.gravity,
                                      robot.m[:, None] * np.hstack([robot.r, np.ones((n, 1))]))
        return {"weights": weights}

    def output(self, t):
        q, qd = self.u
        k = self._k
        k.inertia(self._P, self._W, q, self._M)
        np.dot(self._M, qd, out=self._Mqd)
        kinetic = 0.5 * float(np.dot(qd, self._Mqd))
        k.fkine_all(self._P, self._W, q, self._frames)
        potential = float(np.vdot(self._links, self.v.weights))
        total, kin, pot = self.y
        total[()] = kinetic + potential
        kin[()] = kinetic
        pot[()] = potential

    # compiled: numpy's dot(M, qd) is a gemv for n > 1 (a product for n = 1), vdot a ddot
    # over the link frames' 16 n numbers, as rt_dot_mm and rt_dot call them
    def lower(self, c):
        n = self.n
        Mqd = "rt_dot_mm(M_, {0}, {0}, in_qd, 1, Mqd);".format(n) if n > 1 else \
            "Mqd[0] = M_[0] * in_qd[0];"
        return self._rows({"output": (
            f"double M_[{n * n}], Mqd[{n}], frames[{16 * (n + 1)}];\n"
            + self._call("inertia_kernel_row", "in_q", out="M_") + "\n"
            + f"{Mqd}\ndouble kinetic = 0.5 * rt_dot(in_qd, Mqd, {n});\n"
            + "{ " + self._call("fkine_all_row", "in_q", out="frames") + " }\n"
            + f"double potential = rt_dot(frames + 16, P_weights, {16 * n});\n"
            "out_total[0] = kinetic + potential; out_kinetic[0] = kinetic; "
            "out_potential[0] = potential;")})
