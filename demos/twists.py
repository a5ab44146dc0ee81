"""twists: the worked examples of seed 004 (the twist toolbox after Murray, Li & Sastry) in
closed form -- SCARA (example 3.1, 3.3, 3.8), elbow manipulator (3.2), Stanford arm (3.9),
two- and three-link dynamics (pp. 212, 222) -- the Puma 560 described by twists, and
diagrams/scara.yaml (a twist-defined SCARA under computed-torque control) drawn as a figure.
The closed forms need sympy (the `symbolic` extra); without it only the numbers are printed."""
import numpy as np

from _figures import DIAGRAMS, parse_args, pyplot, save

import blocksim
from blocks.robot import load_robot, transl
from blocks.robot.twists import TwistRobot, poe, screw, spatial_jacobian, translation

try:
    import sympy as sp
    from blocks.robot.twists import symbolic as S
except ImportError:
    sp = None


def heading(text):
    print(f"\n=== {text}")


def show(name, expr):
    print(f"{name} =")
    sp.pprint(expr, use_unicode=False, wrap_line=False)


def rigid(p):
    return sp.Matrix([[1, 0, 0, p[0]], [0, 1, 0, p[1]], [0, 0, 1, p[2]], [0, 0, 0, 1]])


def closed_forms():
    l0, l1, l2, r0, r1, r2 = sp.symbols("l0 l1 l2 r0 r1 r2", positive=True)
    s = sp.symbols("s1:7", real=True)
    X, Y, Z = sp.Matrix([1, 0, 0]), sp.Matrix([0, 1, 0]), sp.Matrix([0, 0, 1])

    heading("Example 3.1 (p. 115): SCARA forward kinematics")
    tw = [S.screw(Z, [0, 0, 0]), S.screw(Z, [0, l1, 0]), S.screw(Z, [0, l1 + l2, 0]),
          S.translation(Z)]
    show("Rst", S.simplify(S.poe(tw, s[:4], rigid([0, l1 + l2, l0]))))
    print("seed 004 prints [cos(s1+s2+s3), -sin(s1+s2+s3), 0, -sin(s1+s2)*l2-sin(s1)*l1], ...")
    heading("Example 3.8 (p. 154): its spatial Jacobian")
    show("J", S.simplify(S.spatial_jacobian(tw, s[:4])))

    heading("Example 3.3 (p. 120): SCARA with the base frame at the tool's home pose")
    tw3 = [S.screw(Z, [0, -l1 - l2, 0]), S.screw(Z, [0, -l2, 0]), S.screw(Z, [0, 0, 0]),
           S.translation(Z)]
    show("gst", S.simplify(S.poe(tw3, s[:4], sp.eye(4))))

    heading("Example 3.2 (p. 117): elbow manipulator (the seed omits the result)")
    w = [0, l1 + l2, l0]
    tw = [S.screw(Z, [0, 0, l0]), S.screw(-X, [0, 0, l0]), S.screw(-X, [0, l1, l0]),
          S.screw(Z, w), S.screw(-X, w), S.screw(Y, w)]
    g = S.poe(tw, s, rigid(w))
    show("tool position", S.simplify(g[:3, 3]))
    print("orientation: Rz(s1) Rx(-s2-s3) Rz(s4) Rx(-s5) Ry(s6), the product of the axis rotations")

    heading("Example 3.9: Stanford arm, spatial Jacobian")
    w = [0, l1, l0]
    tw = [S.screw(Z, [0, 0, 0]), S.screw(-X, [0, 0, l0]), S.translation(Y), S.screw(Z, w),
          S.screw(-X, w), S.screw(Y, w)]
    show("J", S.simplify(S.spatial_jacobian(tw, s)))

    heading("Dynamics of a two-link planar robot (p. 212): dyn_getM, dyn_getF")
    m1, m2, m3 = sp.symbols("m1 m2 m3", positive=True)
    Ix, Iy, Iz = (sp.symbols(f"I{a}1:4", positive=True) for a in "xyz")
    tw = [sp.Matrix([0, 0, 0, 0, 0, 1]), sp.Matrix([0, -l1, 0, 0, 0, 1])]
    frames = [rigid([r1, 0, 0]), rigid([l1 + r2, 0, 0])]
    inertias = [sp.diag(m, m, m, Ix[i], Iy[i], Iz[i]) for i, m in enumerate((m1, m2))]
    M = S.simplify(S.mass_matrix(tw, frames, inertias, s[:2]))
    show("M", M)
    G = S.simplify(S.christoffel(M, s[:2]))
    for i in range(2):
        for j in range(2):
            for k in range(2):
                print(f"F{i + 1}{j + 1}{k + 1}: {G[i][j][k]}")

    heading("Example 4.3 (p. 222): three-link manipulator, M")
    robot = S.SymbolicRobot(
        [sp.Matrix([0, 0, 0, 0, 0, 1]), sp.Matrix([0, -l0, 0, -1, 0, 0]),
         sp.Matrix([0, -l0, l1, -1, 0, 0])], rigid([0, l1 + l2, l0]),
        frames=[rigid([0, 0, r0]), rigid([0, r1, l0]), rigid([0, l1 + r2, l0])],
        m=[m1, m2, m3], I=[sp.diag(Ix[i], Iy[i], Iz[i]) for i in range(3)])
    show("M", robot.inertia())


def numbers():
    rng = np.random.default_rng(1)
    z, x, y = np.eye(3)[2], np.eye(3)[0], np.eye(3)[1]

    heading("Example 3.9: the seed's doubt about the wrist twists (\"right or wrong??\")")
    l0, l1, s3 = 0.4, 0.35, 0.2
    for label, p in (("through (0, l1, l0)     ", [0, l1, l0]),
                     ("through (0, l1 + s3, l0)", [0, l1 + s3, l0])):
        tw = [screw(z, [0, 0, 0]), screw(-x, [0, 0, l0]), translation(y), screw(z, p),
              screw(-x, p), screw(y, p)]
        t = rng.uniform(-1, 1, (20, 6))
        t[:, :3] = [0.3, -0.2, s3]
        spread = np.ptp([poe(tw, q, transl(0, l1, l0))[:3, 3] for q in t], axis=0).max()
        print(f"wrist twists {label}: the wrist point moves {spread:.3g} m when joints 4-6 turn")
    print("constant twists at the home configuration are right: the PoE map moves the wrist "
          "axes with joint 3 itself")

    heading("Puma 560 described by twists (twists_from_dh)")
    puma = load_robot("puma560")
    tr = TwistRobot.from_dh(puma)
    for j, xi in enumerate(tr.twists):
        print(f"  xi{j + 1} = v {np.round(xi[:3], 4) + 0.0}, w {np.round(xi[3:], 4) + 0.0}")
    q, qd, qdd = rng.uniform(-2, 2, (3, 50, 6))
    print(f"max |fkine difference| {np.abs(tr.fkine(q) - puma.fkine(q)).max():.1e}, "
          f"jacob0 {np.abs(tr.jacob0(q) - puma.jacob0(q)).max():.1e}, "
          f"rne {np.abs(tr.rne(q, qd, qdd) - puma.rne(q, qd, qdd)).max():.1e} N.m "
          f"over 50 random states")
    Js = spatial_jacobian(tr.twists, q[0])
    print(f"spatial Jacobian = [[I, p^], [0, I]] jacob0: "
          f"{np.abs(tr.jacobs(q[0]) - Js).max():.1e}")


def figure(args):
    grid = ["simulation.output_interval=0.01"]
    pert = blocksim.run(DIAGRAMS / "scara.yaml", overrides=args.set + grid)
    exact = blocksim.run(DIAGRAMS / "scara.yaml", overrides=args.set + grid
                         + ["robots.scarap.perturb=0"])
    heading("diagrams/scara.yaml")
    print(f"max |e| with the 10 % perturbed model: {np.abs(pert['e']).max(axis=0)} (rad, m)")
    print(f"max |e| with the exact model:          {np.abs(exact['e']).max(axis=0)}")
    print(f"tool at t = {pert.t[-1]:g} s: {np.round(pert['p'][-1], 4)} m")
    plt = pyplot()
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(9, 4))
    ax0.plot(pert["p"][:, 0], pert["p"][:, 1])
    ax0.plot(*pert["p"][0, :2], "go", label="start")
    ax0.plot(*pert["p"][-1, :2], "rs", label="end")
    ax0.set_aspect("equal")
    ax0.set_xlabel("x (m)")
    ax0.set_ylabel("y (m)")
    ax0.set_title("tool path (example 3.1's SCARA)", fontsize=9)
    ax0.legend(fontsize=8)
    for j, label in enumerate(["e1 (mrad)", "e2 (mrad)", "e3 (mrad)", "e4 (mm)"]):
        ax1.plot(pert.t, 1e3 * pert["e"][:, j], label=label)
    ax1.set_xlabel("t (s)")
    ax1.set_title("tracking error, 10 % perturbed model", fontsize=9)
    ax1.legend(fontsize=8)
    for ax in (ax0, ax1):
        ax.grid(True, alpha=0.3)
    fig.suptitle("A SCARA defined by twists under computed-torque control")
    save(fig, args.out, "twists_scara.png")


def main():
    args = parse_args(__doc__)
    if sp is None:
        print("sympy is not installed (pip install blocksim[symbolic]): closed forms skipped")
    else:
        closed_forms()
    numbers()
    figure(args)


if __name__ == "__main__":
    main()
