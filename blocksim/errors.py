"""One exception family for everything a user can get wrong, and for run-time failures.

The library raises; only the CLI prints and chooses the exit code. A `DiagramError` carries
where the problem is (file, line, block, port, parameter) so that its text reads
``FILE:LINE: error: block 'Kp' parameter 'K': message`` with an optional hint line.
Static checks collect every problem in a `Problems` list and raise them together.
"""
from __future__ import annotations

import difflib


def suggest(word, options):
    """' (did you mean X?)' or ''."""
    close = difflib.get_close_matches(str(word), [str(o) for o in options], n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


class BlocksimError(Exception):
    """Base of all blocksim errors."""


def _subject(block=None, port=None, param=None):
    """What a message is about: `block 'Kp' port 'y' parameter 'K'` (the fields given)."""
    return " ".join(f"{what} '{name}'" for what, name in
                    (("block", block), ("port", port), ("parameter", param)) if name is not None)


class DiagramError(BlocksimError):
    """A problem with the diagram or the command line (exit code 2)."""

    def __init__(self, message, *, file=None, line=None, block=None, port=None,
                 param=None, hint=None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.block = block
        self.port = port
        self.param = param
        self.hint = hint

    def located(self, file=None, line=None, block=None):
        """Fill in the location fields that are still empty; returns self."""
        if self.file is None:
            self.file = file
        if self.line is None:
            self.line = line
        if self.block is None:
            self.block = block
        return self

    def __str__(self):
        where = self.file or "<diagram>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        subject = _subject(self.block, self.port, self.param)
        text = f"{where}: error: " + (f"{subject}: " if subject else "") + self.message
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class DiagramErrors(BlocksimError):
    """Several diagram problems found by one static check, reported together."""

    def __init__(self, errors):
        self.errors = list(errors)
        super().__init__("\n".join(str(e) for e in self.errors))


class Problems:
    """Collects DiagramErrors during a static pass; `check()` raises them all at once."""

    def __init__(self):
        self.errors = []
        self._texts = set()

    def add(self, error):
        """Add an error (or several); one already added (the same text) is not repeated."""
        for e in error.errors if isinstance(error, DiagramErrors) else [error]:
            if str(e) not in self._texts:
                self._texts.add(str(e))
                self.errors.append(e)

    def __bool__(self):
        return bool(self.errors)

    def check(self):
        if len(self.errors) == 1:
            raise self.errors[0]
        if self.errors:
            raise DiagramErrors(self.errors)


class OutputError(BlocksimError):
    """The run's files could not be written (a full disk): exit code 3. Files written
    before under the same names are left as they were."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message

    def __str__(self):
        return f"error: {self.message}"


class SimulationError(BlocksimError):
    """The simulation failed at run time (exit code 3): solver failure, non-finite signal."""

    def __init__(self, message, *, block=None, port=None, time=None):
        super().__init__(message)
        self.message = message
        self.block = block
        self.port = port
        self.time = time
        self.notes = []  # what blocks noted before the failure that may explain it

    def __str__(self):
        """`simulation error: block 'Q' port 'y': division by zero at t = 0.5`, then a
        `  note: ...` line per note."""
        subject = _subject(self.block, self.port)
        if not subject:
            at = f"at t = {self.time:.6g}: " if self.time is not None else ""
            text = f"simulation error: {at}{self.message}"
        else:
            at = f" at t = {self.time:.6g}" if self.time is not None else ""
            text = f"simulation error: {subject}: {self.message}{at}"
        return "".join([text, *(f"\n  note: {note}" for note in self.notes)])


class AnalysisError(BlocksimError):
    """A trim or a linearisation failed on the model's values (exit code 3): a point that is
    not an equilibrium, a trim that does not converge."""

    def __init__(self, message, *, hint=None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self):
        return f"error: {self.message}" + (f"\n  hint: {self.hint}" if self.hint else "")


class DiagramWarning(UserWarning):
    """Something in a diagram that is legal but probably not meant (a state no transition
    leads to): `FILE:LINE: warning: block 'S': message`, printed by the command line as one
    line; the diagram still runs."""

    def __init__(self, message, *, file=None, line=None, block=None):
        super().__init__(message)
        self.message, self.file, self.line, self.block = message, file, line, block

    def __str__(self):
        where = (self.file or "<diagram>") + (f":{self.line}" if self.line is not None else "")
        subject = _subject(self.block)
        return f"{where}: warning: " + (f"{subject}: " if subject else "") + self.message


class ReportWarning(UserWarning):
    """A figure, drawing or report could not be written; the results are intact (the
    command line prints it as one `warning:` line)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (sent by batch schedulers, containers, Dask), handled like Ctrl-C: the
    results so far are written; the command exits 143 (128 + SIGTERM) instead of 130."""

    def __str__(self):
        return "terminated (SIGTERM)"
