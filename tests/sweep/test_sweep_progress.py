"""The progress bar of `blocksim sweep` (on a terminal): what it shows after each run."""
import io
import itertools
import sys

import tqdm.std

from blocksim.batch.cli import _Bar
from blocksim.batch.run import Progress


def test_the_bar_shows_the_counts_of_the_run_it_has_just_counted(monkeypatch):
    screen = io.StringIO()
    monkeypatch.setattr(sys, "stderr", screen)
    # tqdm redraws at most every 0.1 s by its clock: a stand-in that moves a second each time
    # it is read (the test slept past the interval, on the machine's clock)
    monkeypatch.setattr(tqdm.std, "time", itertools.count(0.0, 1.0).__next__)
    bar = _Bar()
    bar.update(Progress(total=2, done=0, ok=0, failed=0, running=2, outcome=None))
    bar.update(Progress(total=2, done=1, ok=1, failed=0, running=1, outcome="run 0"))
    bar.update(Progress(total=2, done=2, ok=1, failed=1, running=0, outcome="run 1"))
    frames = screen.getvalue().split("\r")

    def last_frame(done):
        return [f for f in frames if f" {done}/2 " in f][-1]
    assert "ok 0, failed 0, running 2" in last_frame(0)
    assert "ok 1, failed 0, running 1" in last_frame(1)
    assert "ok 1, failed 1, running 0" in last_frame(2)
