"""demo2: two-link arm with a flexible transmission -- joint angles against motor position."""
from _figures import DIAGRAMS, parse_args, pyplot, save

import blocksim


def main():
    args = parse_args(__doc__)
    r = blocksim.run(DIAGRAMS / "demo2.yaml", overrides=args.set + ["simulation.output_interval=0.01"])
    plt = pyplot()
    fig, (a, b) = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
    a.plot(r.t, r["m"][:, 0], "k--", label="motor 1 (rate-limited step)")
    a.plot(r.t, r["q"][:, 0], label="q1")
    a.plot(r.t, r["q"][:, 1], label="q2")
    a.set_ylabel("angle (rad)")
    a.set_ylim(-0.5, 1.5)
    a.legend(fontsize=8)
    a.set_title("Two-link arm, flexible transmission (K = 100, B = 20)")
    b.plot(r.t, r["tau"])
    b.set_ylabel("tau (N m)")
    b.set_xlabel("t (s)")
    b.legend(["tau1", "tau2"], fontsize=8)
    for ax in (a, b):
        ax.grid(True, alpha=0.3)
    save(fig, args.out, "demo2.png")


if __name__ == "__main__":
    main()
