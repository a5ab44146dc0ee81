"""Reading the docs' fenced code blocks: a block whose info string names a file after the
language (```yaml msd.yaml) is that file's whole content; the other blocks are examples.
The `sh` blocks are commands a page's test runs in order (`# exit N`: must fail so)."""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
FENCE = re.compile(r"^```([\w+-]*)[ \t]*([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)


def blocks(page):
    """[(language, file name or '', text)] of the fenced blocks of docs/<page>, in order."""
    text = (DOCS / page).read_text()
    return [(m.group(1), m.group(2).strip(), m.group(3)) for m in FENCE.finditer(text)]


def files(page):
    """{file name: content} of the named blocks of a page."""
    return {name: text for _, name, text in blocks(page) if name}


def write_files(page, root):
    """Write a page's named blocks under `root`; returns their paths."""
    paths = []
    for name, text in files(page).items():
        path = Path(root) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths.append(path)
    return paths


def commands(page):
    """(command, expected exit code) of every shell line of a page, in order."""
    out = []
    for lang, _, text in blocks(page):
        if lang != "sh":
            continue
        for line in text.splitlines():
            if line.strip():
                command, _, comment = line.partition("#")
                code = re.match(r"\s*exit (\d+)", comment)
                out.append((command.strip(), int(code.group(1)) if code else 0))
    return out


def follow(page, work, root):
    """Follow a page in the folder `work`: its files written, its commands run in order, with
    `blocksim` and `python` this tree's (`root`) and this interpreter's, as after
    `pip install -e .`. Returns [(command, expected exit code, CompletedProcess)]."""
    write_files(page, work)
    bin_dir = Path(work) / ".bin"
    bin_dir.mkdir()
    # scripts, not symlinks: a symlink to a virtual environment's python, placed outside
    # the environment, no longer finds the environment's packages (pyvenv.cfg is looked up
    # beside the link)
    for name, module in (("blocksim", "-m blocksim "), ("python", "")):
        shim = bin_dir / name
        shim.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} {module}\"$@\"\n")
        shim.chmod(0o755)
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(root),
           "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    return [(command, expected, subprocess.run(command, shell=True, cwd=work, env=env,
                                               capture_output=True, text=True, timeout=300))
            for command, expected in commands(page)]


def check_ran(results, failure_words):
    """Every command exited as the page says, without a traceback; the failing ones
    (exit 2) said `failure_words`."""
    for command, expected, r in results:
        assert r.returncode == expected, f"{command}\n{r.stdout}\n{r.stderr}"
        assert "Traceback" not in r.stderr, command
        if expected == 2:
            assert failure_words in r.stderr, command
