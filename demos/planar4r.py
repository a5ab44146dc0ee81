"""planar4r: the 4-R examples of seed 001, section 4.1 -- kinematics next to the published
numbers, and the null-space climb of manipulability to its end point (the paper's Fig. 2)."""
import math

import numpy as np

from _figures import parse_args, pyplot, save

from blocks.planar import idxman, kin_link, kinmodel, null_space_climb

# the 4-R arm of section 4.1 (also demos.md, planar4r)
L = np.array([1.0, 1.0, 1.0, 1.0])
Q = np.array([0.5, 1.0, -1.0, -1.0]) * math.pi / 2
PUBLISHED = {  # seed 001, section 4.1, as printed
    "x": (1.4142, 1.4142),
    "J qd (qd = ones)": (-1.4142, 4.2426),
    "J qdd (qdd = [1, 0, -1, 2])": (0.0, 1.4142),
}
CLIMB_END = (2.1066, -0.6146, -1.4075, -0.6424)  # demos.md (the paper prints the magnitudes)


def main():
    args = parse_args(__doc__)
    x, J, _ = kinmodel(Q, np.zeros(4), L)
    ours = {
        "x": x,
        "J qd (qd = ones)": J @ np.ones(4),
        "J qdd (qdd = [1, 0, -1, 2])": J @ np.array([1.0, 0.0, -1.0, 2.0]),
    }
    print("seed 001, section 4.1, q = [0.5, 1, -1, -1]*pi/2")
    print(f"{'quantity':<30} {'blocksim':>22} {'published':>22}")
    for key, value in ours.items():
        print(f"{key:<30} {np.array2string(np.round(value, 4) + 0.0, precision=4):>22} "
              f"{str(PUBLISHED[key]):>22}")

    q_end, w_end, steps = null_space_climb(Q, L, lambda q: idxman(q, L), gain=10.0, dt=1e-3,
                                           tol=1e-3)
    w0 = idxman(Q, L)[0]
    print(f"\nmanipulability climb (Euler, dt 0.001, gain 10, until |qd| < 0.001): {steps} steps")
    print(f"  end q      {np.array2string(q_end, precision=4)}")
    print(f"  demos.md   {list(CLIMB_END)}")
    print(f"  w: {w0:.4f} -> {w_end:.4f};  tip moved by "
          f"{np.linalg.norm(kinmodel(q_end, np.zeros(4), L)[0] - x):.2e} m")

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    for q, style, label in ((Q, "o--", "initial"), (q_end, "o-", "after the climb")):
        pts = kin_link(q, L)
        ax.plot(pts[:, 0], pts[:, 1], style, lw=2, ms=4, label=label)
    ax.plot(*x, "k*", ms=10, label="tip (fixed)")
    ax.set_aspect("equal")
    ax.grid(True, alpha=0.3)
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.legend(fontsize=8)
    ax.set_title("4-R arm: self-motion maximising manipulability (cf. seed 001, Fig. 2)", fontsize=9)
    save(fig, args.out, "planar4r.png")


if __name__ == "__main__":
    main()
