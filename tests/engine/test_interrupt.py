"""Ctrl-C during a run: exit code 130, the rows recorded so far written, marked incomplete.
SIGTERM (batch schedulers, containers, Dask) is handled the same way, with exit code 143."""
import json
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

LONG = """
blocksim: 1
name: long
blocks:
  One: {type: constant, value: 1}
  I: {type: integrator}
wires: [One -> I]
simulation: {stop: 1.0e9, solver: euler, step: 1.0e-3, max_steps: 1.0e13}  # long on purpose
record: {x: I.y}
"""


@pytest.mark.parametrize("sig, code, why", [(signal.SIGINT, 130, "KeyboardInterrupt"),
                                             (signal.SIGTERM, 143, "terminated (SIGTERM)")])
def test_signal_keeps_partial_results(tmp_path, sig, code, why):
    path = tmp_path / "long.yaml"
    path.write_text(LONG)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "blocksim", "run", str(path), "--out", str(out),
                             "--quiet"], stderr=subprocess.PIPE, text=True)
    time.sleep(2.0)  # well into the simulation (start-up takes a fraction of that)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "Traceback" not in err
    meta = json.loads((out / "meta.json").read_text())
    assert meta["complete"] is False and meta["status"] == "interrupted"
    assert meta["error"] == why
    res = np.load(out / "results.npz")
    assert len(res["t"]) > 10
    np.testing.assert_allclose(res["x"], res["t"], atol=1e-6)  # x' = 1 by Euler: exact
    assert not list(out.glob(".*")), "no half-written temporary files"
