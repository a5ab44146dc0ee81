"""The sweep directory as a user shares it: one sweep at a time, and nothing written,
deleted or embedded outside it."""
import os
import socket
import subprocess
import sys
import time

import pytest

import blocksim
from blocksim.cli import main

from sweep_lag import write_sweep

SLOW = ("set: {simulation.stop: 400}\ngrid:\n  parameters.tau: linspace(0.5, 2, 200)\n"
        "metrics: {final_x: final(x)}\n")


def test_a_second_sweep_into_a_busy_directory_is_refused_naming_the_first(tmp_path, capsys):
    # two sweeps into one --out both exited 0 and mixed their run folders (8 of 30 rows
    # pointed at the other sweep's results): the directory is locked while a sweep runs
    path = write_sweep(tmp_path, SLOW)
    other = write_sweep(tmp_path, "grid:\n  parameters.tau: [1, 2]\n", name="other.yaml")
    out = tmp_path / "out"
    first = subprocess.Popen([sys.executable, "-m", "blocksim", "sweep", str(path), "--workers",
                              "1", "--out", str(out), "--quiet"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (out / "summary.csv").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert main(["sweep", str(other), "--workers", "1", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert f"'{out}' is in use by another sweep" in err
        assert f"pid {first.pid} on {socket.gethostname()}, started " in err
        with pytest.raises(blocksim.DiagramError, match="in use by another sweep"):
            blocksim.sweep(path, workers=1, out=out, resume=True)
    finally:
        first.kill()
        first.wait()
    # killed outright, the first sweep left its lock file, but holds no lock any more
    assert blocksim.sweep(other, workers=1, out=out).counts()["ok"] == 2
    assert not [p for p in os.listdir(out) if p.endswith(".lock")]  # removed when done
