"""demo6: image-based visual servoing -- feature trails in the image and the error norm."""
import numpy as np

from _figures import DIAGRAMS, parse_args, pyplot, save

import blocksim


def main():
    args = parse_args(__doc__)
    r = blocksim.run(DIAGRAMS / "demo6.yaml", overrides=args.set + ["simulation.output_interval=0.1"])
    desired = np.array([[256, 456], [456, 456], [456, 256], [256, 256]])
    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4.3))
    for k in range(4):
        a.plot(r["uv"][:, k, 0], r["uv"][:, k, 1], color=f"C{k}")
        a.plot(*r["uv"][0, k], "o", color=f"C{k}", ms=4)
        a.plot(*desired[k], "s", mfc="none", color=f"C{k}", ms=9)
    a.set_xlim(0, 512)
    a.set_ylim(512, 0)  # v points down, as in an image
    a.set_aspect("equal")
    a.set_xlabel("u (px)")
    a.set_ylabel("v (px)")
    a.set_title("feature trails (o start, squares desired)", fontsize=9)
    norm = np.linalg.norm(r["e"], axis=1)
    b.semilogy(r.t, norm)
    b.set_xlabel("t (s)")
    b.set_ylabel("|s* - s| (px)")
    b.set_title(f"feature error: {norm[0]:.1f} -> {norm[-1]:.1f} px (gain 0.1, depth 2 m)", fontsize=9)
    for ax in (a, b):
        ax.grid(True, alpha=0.3)
    save(fig, args.out, "demo6.png")


if __name__ == "__main__":
    main()
