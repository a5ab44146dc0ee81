"""Checking a bad diagram the way a user meets it: `blocksim check` exits 2 with
FILE:LINE errors, no traceback, the line the case marks with `# @LINE` named."""
import re
import textwrap

from blocksim.cli import main


def check_bad(text, needles, tmp_path, capsys):
    """`text` (a diagram body after `blocksim: 1`, dedented; `simulation:` added) fails
    `blocksim check` at its `# @LINE` line with every needle in the messages."""
    text = "blocksim: 1\n" + textwrap.dedent(text) + "simulation: {stop: 1}\n"
    line = next(i + 1 for i, t in enumerate(text.splitlines()) if "@LINE" in t)
    path = tmp_path / "d.yaml"
    path.write_text(text.replace("  # @LINE", ""))
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = {int(n) for n in re.findall(re.escape(str(path)) + r":(\d+): error:", err)}
    assert line in lines, err
    for needle in needles:
        assert needle in err, err
