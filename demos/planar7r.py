"""planar7r: the 7-R arm tracking a line (seed 001, section 5) -- the paper's Fig. 8
(configurations every 0.1 s over the tip trace) and Fig. 9 (task and joint velocities)."""
import numpy as np

from _figures import DIAGRAMS, parse_args, pyplot, save

import blocksim
from blocks.planar import kin_link, kinmodel


def main():
    args = parse_args(__doc__)
    r = blocksim.run(DIAGRAMS / "planar7r.yaml", overrides=args.set + ["simulation.output_interval=0.01"])
    L = np.ones(7)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for k in range(0, len(r.t), 10):  # every 0.1 s
        pts = kin_link(r["q"][k], L)
        ax.plot(pts[:, 0], pts[:, 1], color="0.6", lw=0.8)
    ax.plot(r["xd"][:, 0], r["xd"][:, 1], "k--", lw=1, label="desired line")
    ax.plot(r["x"][:, 0], r["x"][:, 1], "r", lw=1.5, label="tip")
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    ax.set_title("7-R planar arm, configurations every 0.1 s (cf. seed 001, Fig. 8)", fontsize=10)
    save(fig, args.out, "planar7r_fig8.png")

    xdot = np.array([kinmodel(q, qd, L)[1] @ qd for q, qd in zip(r["q"], r["qd"])])
    fig, (a, b) = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
    a.plot(r.t, xdot[:, 0], label="x'")
    a.plot(r.t, xdot[:, 1], label="y'")
    a.set_ylabel("task velocity (m/s)")
    a.legend(fontsize=8)
    b.plot(r.t, r["qd"])
    b.set_ylabel("joint velocity (rad/s)")
    b.set_xlabel("t (s)")
    b.legend([f"q{j + 1}'" for j in range(7)], ncol=4, fontsize=7)
    for axis in (a, b):
        axis.grid(True, alpha=0.3)
    a.set_title("Task and joint velocities (cf. seed 001, Fig. 9)", fontsize=10)
    save(fig, args.out, "planar7r_fig9.png")


if __name__ == "__main__":
    main()
