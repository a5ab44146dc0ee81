"""docs/linear.md followed as written: its shell commands run in order from a folder holding
diagrams/pid_motor.yaml (`# exit N` marks a command that must fail with that code), the
outputs it shows are the commands' outputs, and its numbers agree with the loop worked out
by hand: C(s) G(s) of the PID and the motor, python-control's margins of it."""
import re
import shutil
from pathlib import Path

import control
import numpy as np
import pytest
from docfiles import DOCS, blocks, check_ran, follow

ROOT = Path(__file__).resolve().parents[2]
PAGE = "linear.md"


def shown_outputs():
    """The page's output blocks (no language, no file name), as lists of lines."""
    return [[line for line in text.splitlines() if line.strip() and line.strip() != "..."]
            for lang, name, text in blocks(PAGE) if not lang and not name]


@pytest.fixture(scope="module")
def followed(tmp_path_factory):
    work = tmp_path_factory.mktemp("linear")
    (work / "diagrams").mkdir()
    shutil.copy(ROOT / "diagrams" / "pid_motor.yaml", work / "diagrams")
    results = follow(PAGE, work, ROOT)
    return work, results


def output_of(results, *words):
    return next(r.stdout for c, _, r in results if all(w in c for w in words))


def test_every_command_runs_as_the_page_says(followed):
    _, results = followed
    assert len(results) >= 7
    check_ran(results, "'Position.y' is an output")


def test_the_outputs_shown_are_the_commands_outputs(followed):
    _, results = followed
    everything = "\n".join(r.stdout for _, _, r in results)
    for lines in shown_outputs():
        for line in lines:
            if line.startswith("largest difference"):  # rounding: checked below
                continue
            assert line in everything, line


def test_the_numbers_are_those_of_the_loop_worked_out_by_hand(followed):
    work, results = followed
    s = control.tf("s")

    def loop(Kp):  # the PID Kp + Ki/s + Kd N s/(s + N) and the motor K/(tau s + 1) and 1/s
        return (Kp + 5 / s + 2.5 * 50 * s / (s + 50)) * 2 / (0.5 * s + 1) / s

    for Kp, words in ((8, ("--bode",)), (20, ("kp20",))):
        gm, pm, _, wp = control.margin(loop(Kp))
        assert np.isinf(gm)
        assert f"phase margin {pm:.4g} deg at {wp:.4g} rad/s" in output_of(results, *words)
    closed = control.feedback(loop(20), 1)
    text = DOCS.joinpath(PAGE).read_text()
    p = sorted(closed.poles(), key=lambda z: (z.real, z.imag))
    assert f"−{-p[0].real:.1f}, −{-p[1].real:.2f} ± {abs(p[1].imag):.2f}j and " \
           f"−{-p[3].real:.2f}" in text
    assert "PID.x[0] = 2\n" in output_of(results, "trim", "Load.time=0")
    assert "Ref.y = 1" in output_of(results, "--free Ref.y")
    check = output_of(results, "step_check.py")
    run, linear = map(float, re.findall(r"run ([\d.]+) %, linear model ([\d.]+) %", check)[0])
    assert run == linear == pytest.approx(100 * (control.step_info(closed)["Overshoot"] / 100),
                                          abs=0.05)
    assert float(re.search(r"largest difference: (\S+) rad", check).group(1)) < 1e-8
    assert "phase margin 72.5 deg at 10.48 rad/s, gain margin inf" in output_of(results, "margins.py")
    assert (work / "tuning" / "loop.png").stat().st_size > 10_000
    assert (DOCS / "figures" / "pid_motor_loop.png").is_file()
