"""Hybrid systems: the bouncing ball, the thermostat, stick-slip on a belt, and the Puma
falling with full (Coulomb) friction -- events against the regularised band."""
import math

import numpy as np

from _figures import DIAGRAMS, parse_args, pyplot, save

import blocksim


def bouncing_ball(plt, out, sets):
    tight = ["simulation.rtol=1e-12", "simulation.atol=1e-12", "simulation.event_tol=1e-13",
             "simulation.output_interval=0.005"]
    r = blocksim.run(DIAGRAMS / "bouncing_ball.yaml", overrides=tight + sets)
    h, g, cr = 10.0, 9.81, 0.8
    impacts = r.events_t[r.events_block == r.meta["event_blocks"].index("Velocity")]
    k = np.arange(1, len(impacts))
    expected = math.sqrt(2 * h / g) + np.concatenate(
        [[0.0], np.cumsum(2 * cr ** k * math.sqrt(2 * g * h) / g)])
    fig, (a, b) = plt.subplots(2, 1, figsize=(7, 5.5), sharex=True)
    a.plot(r.t, r["p"], lw=1)
    a.plot(impacts, np.zeros_like(impacts), "k|", ms=8, label=f"{len(impacts)} impacts")
    a.set_ylabel("height (m)")
    a.set_title("Bouncing ball: h = 10 m, restitution 0.8, at rest after the impact "
                "slower than 1 mm/s", fontsize=10)
    a.legend(fontsize=8)
    b.semilogy(impacts, np.maximum(np.abs(impacts - expected), 1e-16), "o", ms=3)
    b.set_ylabel("|t_k - closed form| (s)")
    b.set_title("impact times against t(k+1) = t(k) + 2 cr^k sqrt(2gh)/g (rtol 1e-12)",
                fontsize=9)
    b.set_xlabel("t (s)")
    for ax in (a, b):
        ax.grid(True, alpha=0.3)
    save(fig, out, "bouncing_ball.png")


def thermostat(plt, out, sets):
    r = blocksim.run(DIAGRAMS / "thermostat.yaml", overrides=sets)
    fig, (a, b) = plt.subplots(2, 1, figsize=(7, 5), sharex=True,
                               gridspec_kw={"height_ratios": [2, 1]})
    a.plot(r.t / 60, r["T"])
    a.axhline(19.5, color="gray", ls=":", lw=1)
    a.axhline(20.5, color="gray", ls=":", lw=1)
    a.set_ylabel("room (°C)")
    a.set_title("Thermostat: relay with a 1 K hysteresis band, room time constant 10 min",
                fontsize=10)
    b.step(r.t / 60, r["heater"], where="post")
    b.set_ylabel("heating (K)")
    b.set_xlabel("t (min)")
    for ax in (a, b):
        ax.grid(True, alpha=0.3)
    save(fig, out, "thermostat.png")


def stick_slip(plt, out, sets):
    r = blocksim.run(DIAGRAMS / "stick_slip.yaml", overrides=sets)
    stuck = r["slip"][:, 0] == 0.0
    fig, (a, b) = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
    a.plot(r.t, r["belt"], label="belt")
    a.plot(r.t, r["v"], label="mass")
    a.set_ylabel("speed (m/s)")
    a.set_title("Stick-slip on an oscillating belt (Coulomb 2 N, viscous 0.5 N s/m)",
                fontsize=10)
    a.set_ylim(-1.15, 1.6)
    a.legend(fontsize=8, loc="upper right", ncol=2)
    b.plot(r.t, r["slip"][:, 0])
    b.fill_between(r.t, -1.6, 1.6, where=stuck, color="tab:green", alpha=0.15,
                   label="stuck: relative speed exactly 0")
    b.set_ylabel("relative speed (m/s)")
    b.set_xlabel("t (s)")
    b.set_ylim(-1.7, 2.4)
    b.legend(fontsize=8, loc="upper right")
    for ax in (a, b):
        ax.grid(True, alpha=0.3)
    save(fig, out, "stick_slip.png")


def demo1_friction(plt, out, sets):
    full = ["robots.p560.friction=full", *sets]
    events = blocksim.run(DIAGRAMS / "demo1.yaml", overrides=full)
    band = blocksim.run(DIAGRAMS / "demo1.yaml", overrides=full + ["blocks.Robot.coulomb=band"])
    fig, (a, b) = plt.subplots(2, 1, figsize=(7, 5.5), sharex=True)
    for j, colour in ((1, "tab:blue"), (2, "tab:orange")):
        a.plot(events.t, events["q"][:, j], color=colour, label=f"q{j + 1}, events")
        a.plot(band.t, band["q"][:, j], color=colour, ls="--", label=f"q{j + 1}, band 1e-3")
    a.set_ylabel("q (rad)")
    a.set_title(f"Puma 560 falling with full friction: events {events.meta['solver']['nsteps']} "
                f"steps, band {band.meta['solver']['nsteps']} steps", fontsize=10)
    a.legend(fontsize=8, ncol=2)
    speed = lambda r: np.maximum(np.abs(r["qd"]).max(axis=1), 1e-12)  # noqa: E731
    b.semilogy(events.t, speed(events), label="events (exactly 0 once all stuck)")
    b.semilogy(band.t, speed(band), "--", label="band (creeps)")
    b.set_ylim(1e-12, 10)
    b.set_ylabel("max |qd| (rad/s), floored at 1e-12")
    b.set_xlabel("t (s)")
    b.legend(fontsize=8)
    for ax in (a, b):
        ax.grid(True, alpha=0.3)
    save(fig, out, "demo1_friction.png")


def main():
    args = parse_args(__doc__)
    plt = pyplot()
    bouncing_ball(plt, args.out, args.set)
    thermostat(plt, args.out, args.set)
    stick_slip(plt, args.out, args.set)
    demo1_friction(plt, args.out, args.set)


if __name__ == "__main__":
    main()
