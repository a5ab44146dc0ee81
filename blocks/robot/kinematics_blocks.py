"""Kinematics blocks of a serial-link robot (fkine, jacob0, jacobn) and Jacobian inversion.

The robot blocks call the robot's kernels (`blocks.robot._kernels` as C, numba or plain Python:
`backend`) directly with the arguments of `robot.kernel_args()` and the bound port views as
`out`: one compiled call per evaluation, no argument checks and no allocation in the block.
"""
from pathlib import Path

import numpy as np

from blocksim.accel.lowering import Lowering, needs_lapack
from blocksim.block import Block, In, Out, PortError
from blocksim.errors import SimulationError
from blocksim.params import Param

from ..conditioning import ConditionWatch, pinv_cond


def robot_param():
    return Param("robot", "resource", doc="name of an entry of the diagram's robots section",
                 section="robots")



def joint_names(prefix, shape):
    """Element names of a joint vector of `shape` (n,), numbered from 1 as the toolbox
    numbers joints (q1..qn, tau1..taun): scopes label their lines with them. () else."""
    shape = tuple(shape)
    return tuple(f"{prefix}{j}" for j in range(1, shape[0] + 1)) if len(shape) == 1 else ()

# the kernels' row functions in plain C: compiled diagrams call them (accelerated mode)
KERNEL_ROWS = Path(__file__).with_name("_kernel_rows.c")


class RobotBlock(Block):
    """Base of the blocks that take a robot: `self.robot`, `self.n` and the kernel arguments.

    Run data: the robot's kernel arguments RP (n, NP), RW and Rg (3,) (`_kernel(p)`), and
    whatever a subclass's `_more(p)` adds ({name: array}), so a perturbed robot changes
    numbers, not code: normal mode calls the kernels on them (self.v.RP ...), compiled code
    calls the row functions of the C kernels (`_kernel_rows.c`, compiled into the diagram)
    on P_RP, P_RW, P_Rg, the functions normal mode's kernel calls run."""

    params = (robot_param(),)
    _values = ("robot",)  # the parameters _kernel and _more read (a change is a value)

    def __init__(self, name, params):
        super().__init__(name, params)
        self.n = self.robot.n
        self._k = self.robot.kernel_args()[0]

    @property
    def robot(self):
        return self.p.robot

    def _kernel(self, p):
        """(P, W, g): the kernel arguments of the robot of parameters `p`."""
        return p.robot.kernel_args()[1:]

    def _more(self, p):
        return {}

    _facts = ()  # the names among derive's outputs that are structure

    def declare(self, d):
        for name, value in self.derive(self.p).items():
            if name not in self._facts:
                d.derived(name, np.shape(value))
        d.value(*self._values)
        d.fact(*self._facts)

    def derive(self, p):
        P, W, g = self._kernel(p)
        return {"RP": P, "RW": W, "Rg": g, **self._more(p)}

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._P, self._W, self._g = self.v.RP, self.v.RW, self.v.Rg

    def _rows(self, code, **more):
        """The Lowering of `code` ({calc: C}) that calls row functions: each piece sees the
        robot's arrays RP (n, NP), RW, Rg, a work array `work` and zeros Z (n) and F0 (6)."""
        n = self.n
        head = (f"const double *RP = P_RP, *RW = P_RW, *Rg = P_Rg; "
                f"double work[ROW_WORK({n})]; const double Z[{n}] = {{0}}, F0[6] = {{0}}; "
                "(void)RP; (void)RW; (void)Rg; (void)work; (void)Z; (void)F0;\n")
        return Lowering({calc: head + body if body else body for calc, body in code.items()},
                        support=(KERNEL_ROWS,), **more)

    def _call(self, row, *x, out, fext="F0", flag=0):
        """C: row function `row` on one configuration, joint arrays x (up to 3), into out;
        its result in `status_`."""
        xs = ", ".join([*x, *["NULL"] * (3 - len(x))])
        return (f"Call k_ = {{RP, RW, Rg, {fext}, {{{xs}}}, {out}, {self.n}, 1, 0, {flag}}}; "
                f"int status_ = {row}(&k_, 0, work); (void)status_;")


class FKine(RobotBlock):
    """Forward kinematics T = base · A1(q1) · ... · An(qn) · tool (4, 4) of input q (n)."""

    type = "fkine"

    def ports(self):
        return [In("q", shape=(self.n,))], [Out("T", shape=(4, 4))]

    def output(self, t):
        self._k.fkine(self._P, self._W, self.u[0], self.y[0])

    def lower(self, c):
        return self._rows({"output": self._call("fkine_row", "in_q", out="out_T")})


class Jacob0(RobotBlock):
    """Geometric Jacobian J (6, n) in the world frame: [v; w] = J · qd at the tool point.

    Column k is [z_k x (p_e - o_k); z_k] for a revolute joint, [z_k; 0] for a
    prismatic one (z_k, o_k axis and origin of joint k, p_e the tool point). Input q (n)."""

    type = "jacob0"
    in_tool = False

    def ports(self):
        return [In("q", shape=(self.n,))], [Out("J", shape=(6, self.n))]

    def output(self, t):
        self._k.jacobian(self._P, self._W, self.u[0], self.in_tool, self.y[0])

    def lower(self, c):
        return self._rows({"output": self._call("jacobian_row", "in_q", out="out_J",
                                                flag=int(self.in_tool))})


class Jacobn(Jacob0):
    """Geometric Jacobian J (6, n) in the tool frame: jacob0 rotated into the tool frame.

    Both halves of jacob0's columns are rotated into the tool frame,
    Jn = diag(R^T, R^T) · J0 (R the tool orientation). Input q (n)."""

    type = "jacobn"
    in_tool = True


class JacobDot(RobotBlock):
    """Jacobian rate times joint rates, Jdot(q, qd)·qd (6), as jacob_dot in the Robotics Toolbox.

    The tool point's acceleration [a; alpha] in the world frame when qdd = 0, so that the
    Cartesian acceleration is J0(q)·qdd + Jdot·qd (rows as jacob0's: m/s^2, rad/s^2): the
    term a Cartesian computed-torque or acceleration-resolved controller subtracts.
    Inputs q, qd (n); output Jdot_qd (6).
    """

    type = "jacob_dot"

    def ports(self):
        n = self.n
        return [In("q", shape=(n,)), In("qd", shape=(n,))], [Out("Jdot_qd", shape=(6,))]

    def output(self, t):
        q, qd = self.u
        self._k.jacob_dot(self._P, self._W, q, qd, self.y[0])

    def lower(self, c):
        return self._rows({"output": self._call("jacob_dot_row", "in_q", "in_qd",
                                                out="out_Jdot_qd")})


class IJacob(Block):
    """Inverse of a Jacobian J (r, c) -> Jinv (c, r).

    method inv:  Jinv = J^-1 (J must be square; a singular J is a simulation error).
    method pinv: Jinv = J^+, the Moore-Penrose pseudo-inverse by SVD (numpy.linalg.pinv,
                 singular values below 1e-15 · the largest are treated as zero).
    method dls:  damped least squares with damping lambda,
                 Jinv = J^T (J J^T + lambda^2 I_r)^-1 = (J^T J + lambda^2 I_c)^-1 J^T
                 (the two forms are equal; the block solves the smaller r x r or c x c
                 system). lambda = 0 gives the pseudo-inverse of a full-rank J.

    With inv and pinv the block watches the condition number of every J it inverts (inv:
    ‖J‖₁·‖J⁻¹‖₁; pinv: σ_max/σ_min): when the run fails after J was nearly singular
    (condition number above 1000, e.g. a robot passing a singularity), the error says
    when, and how badly. dls bounds the inverse near singularities instead.
    """

    type = "ijacob"
    params = (
        Param("method", "choice", "inv", "inversion method", choices=("inv", "pinv", "dls")),
        Param("damping", "scalar", 0.0, "damping lambda of dls", minimum=0.0),
    )

    def ports(self):
        return [In("J")], [Out("Jinv")]

    def infer(self, shapes):
        J = shapes["J"]
        if len(J) != 2:
            raise PortError("J", f"expected a matrix, got shape {J}")
        r, c = J
        if self.p.method == "inv" and r != c:
            raise PortError("J", f"method inv needs a square Jacobian, got shape {J}: "
                                 "use method pinv or dls")
        if self.p.method == "dls":  # the r x r or c x c matrix to factor, and its diagonal
            self._wide = r <= c
            m = r if self._wide else c
            self._A = np.empty((m, m))
            self._diag = self._A.reshape(-1)[::m + 1]
        return {"Jinv": (c, r)}

    # run data: lambda^2 (dls); compiled code watches the condition numbers in its workspace
    # (ConditionWatch.WORK), handed back after a failed run
    def declare(self, d):
        d.derived("lam2", ())
        d.value("damping")
        d.work("watch", ConditionWatch.WORK)

    def derive(self, p):
        return {"lam2": p.damping ** 2}

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._calc = {"inv": self._inv, "pinv": self._pinv, "dls": self._dls}[self.p.method]
        self._watch = ConditionWatch("the Jacobian it inverts")

    def output(self, t):
        try:
            self._calc(t)
        except np.linalg.LinAlgError as e:
            raise SimulationError(f"cannot invert the Jacobian ({e})", block=self.name,
                                  port="Jinv", time=t) from None

    def initialize(self, t):
        self._watch.reset()  # a new run: forget the inversions of an earlier one

    def notes(self):
        return self._watch.notes()

    def _inv(self, t):
        J, Jinv = self.u[0], self.y[0]
        np.copyto(Jinv, np.linalg.inv(J))
        self._watch.inverse(t, J, Jinv)

    def _pinv(self, t):
        Jinv, cond = pinv_cond(self.u[0])
        np.copyto(self.y[0], Jinv)
        self._watch.see(t, cond)

    def _dls(self, t):
        J, A = self.u[0], self._A
        lam2 = self.v.lam2
        if self._wide:  # Jinv = J^T (J J^T + lam2 I)^-1 = ((J J^T + lam2 I)^-1 J)^T
            np.matmul(J, J.T, out=A)
            self._diag += lam2
            np.copyto(self.y[0], np.linalg.solve(A, J).T)
        else:  # Jinv = (J^T J + lam2 I)^-1 J^T
            np.matmul(J.T, J, out=A)
            self._diag += lam2
            np.copyto(self.y[0], np.linalg.solve(A, J.T))

    # ---- compiled form: numpy.linalg's LAPACK calls and numpy's matmul (syrk) as numpy
    # makes them (rt_inv, rt_pinv, rt_solve, rt_matmul_ex)
    def lower(self, c):
        needs_lapack()
        r, cols = c.shape_in["J"]
        fail = 'if (info != 0) {{ FAIL("cannot invert the Jacobian (%s)", info > 0 ? "{}" : ' \
               '"no LAPACK"); return; }}'
        see = ConditionWatch.C_SEE
        if self.p.method == "inv":  # kappa_1: numpy's column sums of |J| and |J^-1|
            code = (f"long long info = rt_inv(in_J, {r}, out_Jinv);\n"
                    + fail.format("Singular matrix") + "\n"
                    f"double cond = rt_norm1(in_J, {r}, {r}, {r}, 1, 0) * "
                    f"rt_norm1(out_Jinv, {r}, {r}, {r}, 1, 0);\n{see}")
        elif self.p.method == "pinv":
            code = (f"double cond; long long info = rt_pinv(in_J, {r}, {cols}, out_Jinv, &cond);"
                    "\n" + fail.format("SVD did not converge") + f"\n{see}")
        else:
            m = r if self._wide else cols
            gram = f"rt_matmul_ex(in_J, {cols}, 1, in_J, 1, {cols}, {r}, {cols}, {r}, A);" \
                if self._wide else \
                f"rt_matmul_ex(in_J, 1, {cols}, in_J, {cols}, 1, {cols}, {r}, {cols}, A);"
            # wide: solve(A, J).T (through Xs); tall: solve(A, J.T), straight into Jinv
            if self._wide:
                work, rhs, nrhs, into = f"Xs[{r * cols}]", "in_J", cols, "Xs"
                copy = c.loop(r * cols, f"out_Jinv[i] = Xs[(i % {r}) * {cols} + i / {r}];")
            else:
                work, rhs, nrhs, into, copy = f"Jt[{r * cols}]", "Jt", r, "out_Jinv", ""
            code = (f"double A[{m * m}], {work};\n{gram}\n"
                    + c.loop(m, f"A[i * {m + 1}] += P_lam2[0];") + "\n"
                    + ("" if self._wide else c.loop(
                        r * cols, f"Jt[i] = in_J[(i % {r}) * {cols} + i / {r}];") + "\n")
                    + f"long long info = rt_solve(A, {m}, {rhs}, {nrhs}, {into});\n"
                    + fail.format("Singular matrix") + "\n" + copy)
        return Lowering({"output": code, "initialize": ""})

    def compiled_work(self, work):
        self._watch.load(work.watch)
