"""docs/conditional.md followed as written, from an empty folder: its files written, its
commands run in order, the outputs it shows are the commands' outputs, and its numbers are
the ones worked out by hand (the meter's hours from the pulse's intervals, the held sine
values at the clock's edges, the shift speed interpolated in the table)."""
import math
from pathlib import Path

import numpy as np
import pytest
from docfiles import DOCS, blocks, check_ran, follow

ROOT = Path(__file__).resolve().parents[2]
PAGE = "conditional.md"


@pytest.fixture(scope="module")
def followed(tmp_path_factory):
    work = tmp_path_factory.mktemp("conditional")
    return work, follow(PAGE, work, ROOT)


def test_every_command_runs_as_the_page_says(followed):
    _, results = followed
    assert len(results) == 8
    check_ran(results, "")


def test_the_outputs_shown_are_the_commands_outputs(followed):
    _, results = followed
    everything = "\n".join(r.stdout for _, _, r in results)
    shown = [text for lang, name, text in blocks(PAGE) if not lang and not name]
    assert len(shown) == 5
    for text in shown:
        for line in text.splitlines():
            if line.strip() and line.strip() != "...":
                assert line in everything, line


def test_the_numbers_are_those_worked_out_by_hand(followed):
    work, results = followed
    out = "\n".join(r.stdout for _, _, r in results)
    # the machine runs on [1, 2), [5, 6), [9, 10): hours so far, and of the current run
    for t, total, current in ((1.5, 0.5, 0.5), (3.0, 1, 0), (5.5, 1.5, 0.5), (7.0, 2, 0),
                              (9.5, 2.5, 0.5), (10.0, 3, 0)):
        assert f"t = {t:4}: total {total:.6g}, current {current:.6g}" in out
    # the clock rises at 0.5 k: held sin(2 * 0.5 k) from there, -1 before 0.5
    held = {0.25: -1.0, 0.75: math.sin(1.0), 1.2: math.sin(2.0), 2.9: math.sin(5.0)}
    for t, value in held.items():
        assert f"t = {t}: held {value:+.6f}" in out
    # gear 2's row of the table (30, 45, 70 at throttle 0, 0.5, 1), linear between
    # what check says of the table: shift_up.csv's 3 rows of 3, from 15 to 100 km/h
    assert "table 3 x 3 (shift_up.csv), values 15 .. 100; linear, clip" in out
    speeds = np.interp([0, 0.25, 0.5, 0.75, 1], [0, 0.5, 1], [30, 45, 70])
    for throttle, speed in zip((0, 0.25, 0.5, 0.75, 1), speeds):
        assert f"throttle {throttle:.2f} -> shift up from gear 2 at {speed:g} km/h" in out
    with np.load(work / "runs" / "cart_bus" / "results.npz") as data:
        assert {"cart.pos", "cart.vel", "cart.target"} <= set(data.files)


def test_the_pages_figures_are_the_commands_drawings(followed):
    # the page shows docs/figures/NAME.png; the commands draw NAME.png from the same files
    work, _ = followed
    for name in ("sample_hold", "cart_bus"):
        assert (work / f"{name}.png").is_file()
        assert f"(figures/{name}.png)" in (DOCS / PAGE).read_text()
        assert (DOCS / "figures" / f"{name}.png").is_file()
