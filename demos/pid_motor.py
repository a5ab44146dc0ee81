"""pid_motor: a DC-motor position loop with a saturating PID, with and without anti-windup."""
from _figures import DIAGRAMS, parse_args, pyplot, save

import blocksim

VARIANTS = (("none", "no anti-windup", "tab:red"),
            ("clamping", "clamping", "tab:blue"),
            ("back_calculation", "back-calculation (Kb = 1)", "tab:green"))


def main():
    args = parse_args(__doc__)
    plt = pyplot()
    fig, (a, b) = plt.subplots(2, 1, figsize=(7, 5.5), sharex=True)
    for i, (anti_windup, label, colour) in enumerate(VARIANTS):
        r = blocksim.run(DIAGRAMS / "pid_motor.yaml",
                         overrides=args.set + [f"blocks.PID.anti_windup={anti_windup}",
                                               "simulation.output_interval=0.005"])
        if i == 0:
            a.plot(r.t, r["ref"], "k--", lw=1, label="reference")
        overshoot = 100 * (r["theta"][r.t < 6].max() - 10) / 10
        peak = f"overshoot {overshoot:.0f} %" if overshoot >= 0.5 else "no overshoot"
        a.plot(r.t, r["theta"], color=colour, label=f"{label}: {peak}")
        b.plot(r.t, r["volts"], color=colour, label=label)
    a.set_ylabel("position (rad)")
    a.set_title("DC motor, 10 rad step at 0.5 s, load at 6 s; PID output limited to ±12 V")
    a.legend(fontsize=8, loc="lower right")
    b.set_ylabel("PID output (V)")
    b.set_xlabel("t (s)")
    b.legend(fontsize=8, loc="upper right")
    for ax in (a, b):
        ax.grid(True, alpha=0.3)
    save(fig, args.out, "pid_motor.png")


if __name__ == "__main__":
    main()
