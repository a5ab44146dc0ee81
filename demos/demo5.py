"""demo5: resolved-rate control -- the tool's XY path against the demanded circle."""
import numpy as np

from _figures import DIAGRAMS, parse_args, pyplot, save

import blocksim


def main():
    args = parse_args(__doc__)
    r = blocksim.run(DIAGRAMS / "demo5.yaml", overrides=args.set + ["simulation.output_interval=0.01"])
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 5.5))
    ax.plot(r["xd"], r["yd"], "k--", lw=1, label="demanded circle (r = 0.05 m)")
    ax.plot(r["p"][:, 0], r["p"][:, 1], label="tool path")
    ax.plot(*r["p"][0, :2], "o", label="start")
    rss = 0.05 * 0.6 / np.hypot(0.6, 1.0)
    th = np.linspace(0, 2 * np.pi, 200)
    ax.plot(0.5 + rss * np.cos(th), rss * np.sin(th), ":", lw=1,
            label=f"steady state, r = 0.05*0.6/sqrt(1.36) = {rss:.4f} m")
    ax.set_xlim(0.4, 0.6)
    ax.set_ylim(-0.1, 0.1)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(True, alpha=0.3)
    ax.set_title("Puma 560 resolved-rate control, gain 0.6")
    save(fig, args.out, "demo5.png")


if __name__ == "__main__":
    main()
