"""demo1: the Puma 560 collapsing under gravity -- joint angles and total energy."""
import numpy as np

from _figures import DIAGRAMS, parse_args, pyplot, save

import blocksim
from blocks.robot import load_robot


def main():
    args = parse_args(__doc__)
    r = blocksim.run(DIAGRAMS / "demo1.yaml", overrides=args.set + ["simulation.output_interval=0.02"])
    robot = load_robot("puma560").configure(friction="viscous")
    g = np.asarray(robot.gravity)
    ke = np.array([0.5 * v @ robot.inertia(q) @ v for q, v in zip(r["q"], r["qd"])])
    pe = np.array([sum(l.m * g @ (F @ np.append(l.r, 1))[:3]
                       for l, F in zip(robot.links, robot.fkine_all(q)[1:])) for q in r["q"]])
    plt = pyplot()
    fig, (a, b) = plt.subplots(2, 1, figsize=(7, 5.5), sharex=True)
    a.plot(r.t, r["q"])
    a.set_ylabel("q (rad)")
    a.legend([f"q{j + 1}" for j in range(6)], ncol=6, fontsize=8)
    a.set_title("Puma 560 falling from qz under gravity (viscous friction)")
    b.plot(r.t, ke + pe - (ke + pe)[0], label="E(t) - E(0)")
    b.plot(r.t, ke, "--", label="kinetic")
    b.set_ylabel("energy (J)")
    b.set_xlabel("t (s)")
    b.legend(fontsize=8)
    for ax in (a, b):
        ax.grid(True, alpha=0.3)
    save(fig, args.out, "demo1.png")


if __name__ == "__main__":
    main()
