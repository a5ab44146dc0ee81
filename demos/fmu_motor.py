"""fmu_motor: a DC motor imported as an FMU, in a PID speed loop (docs/fmu.md)."""
from _figures import DIAGRAMS, parse_args, pyplot, save

import blocksim


def main():
    args = parse_args(__doc__)
    plt = pyplot()
    r = blocksim.run(DIAGRAMS / "fmu_motor.yaml",
                     overrides=args.set + ["simulation.output_interval=0.002"])
    fig, (a, b) = plt.subplots(2, 1, figsize=(7, 5.5), sharex=True)
    a.plot(r.t, r["ref"], "k--", lw=1, label="reference")
    a.plot(r.t, r["speed"], color="tab:blue", label="speed (the FMU's output)")
    a.set_ylabel("speed (rad/s)")
    a.set_title("DC-motor FMU in a PID speed loop: 1 rad/s step at 0.5 s, 0.01 N m load at 3 s")
    a.legend(fontsize=8, loc="lower right")
    b.plot(r.t, r["volts"], color="tab:red", label="PID output V")
    b.plot(r.t, r["current"], color="tab:green", label="armature current i (A)")
    b.set_ylim(-20, 40)
    b.set_ylabel("V, A")
    b.set_xlabel("t (s)")
    b.legend(fontsize=8, loc="upper right")
    for ax in (a, b):
        ax.grid(True, alpha=0.3)
    save(fig, args.out, "fmu_motor.png")


if __name__ == "__main__":
    main()
