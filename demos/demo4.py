"""demo4: torque feedforward held every 0.1 s -- tracking error and the held torque."""
from _figures import DIAGRAMS, parse_args, pyplot, save

import blocksim


def main():
    args = parse_args(__doc__)
    r = blocksim.run(DIAGRAMS / "demo4.yaml", overrides=args.set + ["simulation.output_interval=0.01"])
    plt = pyplot()
    fig, (a, b) = plt.subplots(2, 1, figsize=(7, 5.5), sharex=True)
    a.plot(r.t, 1e3 * (r["qdes"] - r["q"]))
    a.set_ylabel("qdes - q (mrad)")
    a.legend([f"joint {j + 1}" for j in range(6)], ncol=3, fontsize=7)
    a.set_title("Puma 560 torque feedforward (rne held by a 0.1 s ZOH) + PD feedback")
    b.step(r.t, r["tau_ff"][:, :3], where="post")
    b.set_ylabel("feedforward tau (N m)")
    b.set_xlabel("t (s)")
    b.legend(["joint 1", "joint 2", "joint 3"], fontsize=7)
    for ax in (a, b):
        ax.grid(True, alpha=0.3)
    save(fig, args.out, "demo4.png")


if __name__ == "__main__":
    main()
