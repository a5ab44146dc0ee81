"""CI installs and tests the project as a user does (issue 23 item 6): in a fresh virtual
environment made with `python3 -m venv`, with the README's own test command, so that a test
that only passes outside a venv (the tutorial's symlinked python did) fails in CI too."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def readme_test_command():
    """The README's command that runs the tests (the sh block holding `pytest`)."""
    blocks = re.findall(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    return next(line for block in blocks for line in block.splitlines() if "pytest" in line)


def test_ci_runs_the_readme_command_in_a_fresh_virtual_environment():
    script = (ROOT / ".ci" / "run").read_text()
    lines = [line.strip() for line in script.splitlines()
             if line.strip() and not line.strip().startswith("#")]
    command = readme_test_command()
    assert command == 'pip install -e ".[fast,test]" && python -m pytest -rs -n auto --dist loadfile'
    made = next(i for i, line in enumerate(lines) if re.search(r"\bpython3 -m venv\b", line))
    entered = next(i for i, line in enumerate(lines) if re.search(r"\. .*/bin/activate\b", line))
    run = next(i for i, line in enumerate(lines) if line.startswith(command))
    assert made < entered < run
    # nothing is installed or tested with the machine's own python
    assert not [line for line in lines if re.search(r"python3? -m (pip|pytest)", line)
                and not line.startswith(command)]
