"""A blocksim command in a process of its own whose stderr is a terminal, so that it draws
its progress bar: a test acts on the run (a signal) once the bar shows it has simulated so
far, never after a guessed time (a sleep that a loaded machine outruns, or a fast one)."""
import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time

import pytest

HANG_GUARD = 600.0  # seconds: against a run that hangs, far beyond any run of the tests


class OnTerminal:
    """`python -m blocksim *args` with its stderr a terminal 100 columns wide."""

    def __init__(self, *args):
        self.fd, child = pty.openpty()
        fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
        self.proc = subprocess.Popen([sys.executable, "-m", "blocksim", *map(str, args)],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=child, env={**os.environ, "MPLBACKEND": "Agg"})
        os.close(child)
        self.text = ""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.fd)

    def _read(self):
        """What the run wrote since the last read (waiting a moment); None once it ended."""
        if not select.select([self.fd], [], [], 0.2)[0]:
            return "" if self.proc.poll() is None else None
        try:
            chunk = os.read(self.fd, 4096)
        except OSError:  # the terminal closed: the run ended
            return None
        return chunk.decode(errors="replace") if chunk else None

    def _chunks(self):
        """What the run writes, as it writes it (kept in `text`), until it ends."""
        deadline = time.monotonic() + HANG_GUARD
        while time.monotonic() < deadline:
            chunk = self._read()
            if chunk is None:
                return
            self.text += chunk
            yield chunk

    def until_simulated(self, t_min):
        """Wait until the progress bar shows a simulated time of at least `t_min` (the run
        simulating, its rows recorded); fails when the run ends first."""
        for _ in self._chunks():
            if any(float(t) >= t_min for t in re.findall(r"t = ([0-9.e+-]+) ", self.text)):
                return
        pytest.fail(f"the run ended before t = {t_min}: {self.text[-500:]}")

    def drain(self):
        """The rest of what the run writes, until it ends; its exit code."""
        for _ in self._chunks():
            pass
        return self.proc.wait(timeout=HANG_GUARD)
