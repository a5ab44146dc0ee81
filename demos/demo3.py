"""demo3: computed-torque control of the Puma 560 -- tracking error per joint, with the
exact model and with the 10 % perturbed model."""
from _figures import DIAGRAMS, parse_args, pyplot, save

import blocksim


def main():
    args = parse_args(__doc__)
    grid = ["simulation.output_interval=0.02"]
    pert = blocksim.run(DIAGRAMS / "demo3.yaml", overrides=args.set + grid)
    exact = blocksim.run(DIAGRAMS / "demo3.yaml", overrides=args.set + grid + ["robots.p560p.perturb=0"])
    plt = pyplot()
    fig, axes = plt.subplots(3, 2, figsize=(8, 6.5), sharex=True)
    for j, ax in enumerate(axes.ravel()):
        ax.plot(pert.t, 1e3 * pert["e"][:, j], label="10 % perturbed model")
        ax.plot(exact.t, 1e3 * exact["e"][:, j], label="exact model")
        ax.set_title(f"joint {j + 1}", fontsize=9)
        ax.grid(True, alpha=0.3)
        if j % 2 == 0:
            ax.set_ylabel("e (mrad)")
    for ax in axes[-1]:
        ax.set_xlabel("t (s)")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle("Puma 560 computed-torque control: tracking error qdes - q")
    save(fig, args.out, "demo3.png")


if __name__ == "__main__":
    main()
