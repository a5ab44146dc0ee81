"""The progress bar of `blocksim sweep` (on a terminal): what it shows after each run."""
import io
import sys
import time

from blocksim.batch.cli import _Bar
from blocksim.batch.run import Progress


def test_the_bar_shows_the_counts_of_the_run_it_has_just_counted(monkeypatch):
    screen = io.StringIO()
    monkeypatch.setattr(sys, "stderr", screen)
    bar = _Bar()
    bar.update(Progress(total=2, done=0, ok=0, failed=0, running=2, outcome=None))
    time.sleep(0.15)  # past tqdm's 0.1 s between redraws
    bar.update(Progress(total=2, done=1, ok=1, failed=0, running=1, outcome="run 0"))
    time.sleep(0.15)
    bar.update(Progress(total=2, done=2, ok=1, failed=1, running=0, outcome="run 1"))
    frames = screen.getvalue().split("\r")

    def last_frame(done):
        return [f for f in frames if f" {done}/2 " in f][-1]
    assert "ok 0, failed 0, running 2" in last_frame(0)
    assert "ok 1, failed 0, running 1" in last_frame(1)
    assert "ok 1, failed 1, running 0" in last_frame(2)
