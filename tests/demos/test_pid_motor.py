"""diagrams/pid_motor.yaml from the command line, anti-windup switched by --set: the saturated
phase against the motor's closed form at full voltage, windup's larger overshoot, the
load rejected by the integral."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("pid_motor")
    results = {}
    for anti_windup in ("none", "clamping", "back_calculation"):
        cli = subprocess.run(
            [sys.executable, "-m", "blocksim", "run", str(ROOT / "diagrams" / "pid_motor.yaml"),
             "--set", f"blocks.PID.anti_windup={anti_windup}", "--out", str(out / anti_windup),
             "--no-plots", "--quiet"],
            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert cli.returncode == 0, cli.stderr
        with np.load(out / anti_windup / "results.npz") as npz:
            results[anti_windup] = {k: npz[k] for k in npz.files}
    return results


def test_saturated_phase_is_the_motor_at_full_voltage(runs):
    for r in runs.values():
        t = r["t"]
        t_sat, t_exit = r["events_t"][:2]
        assert abs(t_sat - 0.5) < 1e-9  # the step saturates the drive at once
        during = (t >= 0.5) & (t < t_exit)  # at t_exit itself: the value after the event
        assert np.all(r["volts"][during] == 12.0)
        # tau w' + w = K V with V = 12: w = 24 (1 - e^{-t'/tau}), theta its integral
        s = t[during] - 0.5
        np.testing.assert_allclose(r["theta"][during], 24 * (s - 0.5 * (1 - np.exp(-s / 0.5))),
                                   atol=1e-6)
        assert np.all(np.abs(r["volts"]) <= 12.0)


def test_windup_overshoots_most(runs):
    peak = {k: r["theta"][r["t"] < 6].max() - 10 for k, r in runs.items()}
    assert peak["none"] > 2.0  # > 20 %: the wound-up integral
    assert peak["clamping"] < 0.5 * peak["none"]
    assert peak["back_calculation"] < 0.1
    # the wound-up integral holds the drive at its limit longer
    exits = {k: r["events_t"][1] for k, r in runs.items()}
    assert exits["none"] > exits["clamping"] > exits["back_calculation"]


def test_integral_rejects_the_load(runs):
    for r in runs.values():
        t = r["t"]
        assert r["theta"][(t > 6) & (t < 7)].min() < 9.9  # the load pushes the motor back
        assert abs(r["theta"][-1] - 10) < 5e-3  # and the integral returns it
        assert abs(r["volts"][-1] - 2.0) < 5e-3  # by supplying the load's 2 V
