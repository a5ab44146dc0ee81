"""Ctrl-C during a run: exit code 130, the rows recorded so far written, marked incomplete.
SIGTERM (batch schedulers, containers, Dask) is handled the same way, with exit code 143."""
import json
import signal

import numpy as np
import pytest
from terminal import OnTerminal

LONG = """
blocksim: 1
name: long
blocks:
  One: {type: constant, value: 1}
  I: {type: integrator}
wires: [One -> I]
# long on purpose; normal mode: the interpreter's own handling of the signal (accelerated
# mode's is tests/accel/test_accel_runs.py's, which waits for the compiler first: under
# `auto` this run compiles, and a signal during the compile comes before any row)
simulation: {stop: 1.0e4, solver: euler, step: 1.0e-3, mode: normal}  # 10^7 steps: minutes
record: {x: I.y}
"""


@pytest.mark.parametrize("sig, code, why", [(signal.SIGINT, 130, "KeyboardInterrupt"),
                                             (signal.SIGTERM, 143, "terminated (SIGTERM)")])
def test_signal_keeps_partial_results(tmp_path, sig, code, why):
    # the signal once the run's progress bar shows it 1 s into the simulation (it slept 1 s
    # after the run directory appeared: on a loaded machine the run could still be starting)
    path = tmp_path / "long.yaml"
    path.write_text(LONG)
    out = tmp_path / "out"
    with OnTerminal("run", path, "--out", out) as run:
        run.until_simulated(1.0)
        run.proc.send_signal(sig)
        assert run.drain() == code, run.text
    assert "Traceback" not in run.text
    meta = json.loads((out / "meta.json").read_text())
    assert meta["complete"] is False and meta["status"] == "interrupted"
    assert meta["error"] == why
    res = np.load(out / "results.npz")
    assert len(res["t"]) > 10
    np.testing.assert_allclose(res["x"], res["t"], atol=1e-6)  # x' = 1 by Euler: exact
    assert not list(out.glob(".*")), "no half-written temporary files"


TWO_SCOPES = """
blocksim: 1
name: drawn
blocks:
  One: {type: constant, value: 1}
  I: {type: integrator}
  A: {type: scope}
  B: {type: scope}
wires: [One -> I, I -> A, I -> B]
simulation: {stop: 2, output_interval: 0.5}
record: {x: I.y}
"""


def test_interrupt_while_drawing_keeps_the_results(tmp_path, monkeypatch, capsys):
    """Ctrl-C while the figures are drawn (an animation can take minutes after a long run)
    still writes results.npz and meta.json, marked interrupted, and exits 130; the figure
    finished before the interrupt is kept and listed."""
    from blocks.sinks import Scope
    from blocksim.cli import main

    draw = Scope.finalize

    def interrupted_at_b(self, run):
        if self.name == "B":
            raise KeyboardInterrupt
        draw(self, run)
    monkeypatch.setattr(Scope, "finalize", interrupted_at_b)
    path, out = tmp_path / "drawn.yaml", tmp_path / "out"
    path.write_text(TWO_SCOPES)
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 130
    captured = capsys.readouterr()
    assert "partial results (incomplete) written" in captured.err
    assert "interrupted while drawing the figures" in captured.out
    meta = json.loads((out / "meta.json").read_text())
    assert meta["complete"] is False and meta["status"] == "interrupted"
    assert meta["files"] == ["A.png", "meta.json", "results.npz"]
    res = np.load(out / "results.npz")
    np.testing.assert_array_equal(res["t"], [0, 0.5, 1, 1.5, 2])  # every row: x' = 1
    np.testing.assert_allclose(res["x"], res["t"], atol=1e-12)
    assert sorted(p.name for p in out.iterdir()) == ["A.png", "meta.json", "results.npz"]
