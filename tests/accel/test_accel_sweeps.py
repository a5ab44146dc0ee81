"""Sweeps in accelerated mode: the runs after the first reuse the compiled code with new
arguments (accel/batch.py), and their rows equal normal mode's, bit for bit, whatever the
sweep varies: parameters, a block's parameters, settings, a random source's seed; values
that change the compiled code (an anti-windup choice) or make a run fail go the general way
and still agree."""
from pathlib import Path

import numpy as np
import pytest

from blocksim.accel import batch
from blocksim.batch.run import prepare

ROOT = Path(__file__).resolve().parents[2]


def sweep_rows(tmp_path, text, mode):
    path = tmp_path / "sweep.yaml"
    path.write_text(text.replace("DIAGRAMS", str(ROOT / "diagrams")).replace(
        "CORPUS", str(ROOT / "tests" / "accel" / "corpus")))
    table = prepare(path, overrides=[f"simulation.mode={mode}"]).run(workers=1, keep="failed")
    return table.rows


PID_MONTE_CARLO = """
blocksim-sweep: 1
diagram: DIAGRAMS/pid_motor.yaml
set:
  blocks.PID.anti_windup: back_calculation
samples: 12
random:
  parameters.K: uniform(1.5, 2.5)
  parameters.tau: uniform(0.4, 0.6)
  blocks.PID.Kp: uniform(6, 10)
  simulation.stop: uniform(8, 12)
seed: 3
metrics:
  overshoot: max(theta) - 10
  final: volts[-1]
"""

NOISE_SEEDS = """
blocksim-sweep: 1
diagram: CORPUS/discrete_hits.yaml
grid:
  blocks.Noise.seed: [1, 2, 3]
  blocks.Hold.period: [0.1, 0.07]
metrics:
  i: i[-1]
  noise: mean(noise)
"""

ANTI_WINDUP = """
blocksim-sweep: 1
diagram: DIAGRAMS/pid_motor.yaml
grid:
  blocks.PID.anti_windup: [none, back_calculation]
  parameters.Vmax: [6, 12, 9]
metrics:
  overshoot: max(theta) - 10
"""

PULSE_EDGES = """
blocksim-sweep: 1
diagram: CORPUS/sources_late_start.yaml
grid:
  blocks.Beat.period: [0.2, 0.15]
  blocks.Beat.delay: [0.1, 0.17]
metrics:
  i: i[-1]
  s: mean(s)
"""

FAILING = """
blocksim-sweep: 1
diagram: CORPUS/fault_division.yaml
grid:
  simulation.stop: [0.5, 2, 0.75, 3]
metrics:
  q: q[-1]
"""


@pytest.mark.parametrize("text", [PID_MONTE_CARLO, NOISE_SEEDS, ANTI_WINDUP, PULSE_EDGES,
                                  FAILING],
                         ids=["pid monte carlo", "noise seeds, periods", "anti-windup",
                              "pulse edges", "failing"])
def test_sweep_rows_equal_normal_mode(tmp_path, text, monkeypatch):
    fast = []
    run = batch.FastRuns.run

    def counted(self, overrides):
        result = run(self, overrides)
        fast.append(result is not None)
        return result
    monkeypatch.setattr(batch.FastRuns, "run", counted)
    normal = sweep_rows(tmp_path, text, "normal")
    accelerated = sweep_rows(tmp_path, text, "accelerated")
    assert len(normal) == len(accelerated)
    for a, n in zip(accelerated, normal):
        assert (a["status"], a["message"], a["steps"]) == (n["status"], n["message"], n["steps"])
        for key in n:
            if key not in ("wall_s", "status", "message", "steps"):
                np.testing.assert_array_equal(a[key], n[key], err_msg=key)
    if text in (PID_MONTE_CARLO, NOISE_SEEDS, PULSE_EDGES):
        assert all(fast)  # after the first, every run took the fast path
    if text is FAILING:
        assert [r["status"] for r in accelerated] == ["ok", "failed", "ok", "failed"]


def test_a_changed_compiled_form_is_not_reused(tmp_path):
    """The anti-windup choice changes the PID's code: those runs are compiled apart."""
    rows = sweep_rows(tmp_path, ANTI_WINDUP, "accelerated")
    overshoots = {r["overshoot"] for r in rows}
    assert len(overshoots) == len(rows)  # six different responses


def test_names_read_by_a_raw_value():
    assert batch.names_in("K * sin(w*t) + 1") == {"K", "sin", "w", "t"}
    assert batch.names_in(["K", 2, ["tau", "1/m"]]) == {"K", "tau", "m"}
    assert batch.names_in(3.5) == set()
    assert batch.names_in("not ( valid") is None
