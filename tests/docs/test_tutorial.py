"""docs/tutorial.md, run as a newcomer would: its files written out, every shell command run
in order (`# exit N` marks a command that must fail with that code), and its claims checked
against closed forms."""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from docfiles import blocks, write_files

ROOT = Path(__file__).resolve().parents[2]


def commands():
    """(command, expected exit code) of every shell line of the tutorial, in order."""
    out = []
    for lang, _, text in blocks("tutorial.md"):
        if lang != "sh":
            continue
        for line in text.splitlines():
            if line.strip():
                command, _, comment = line.partition("#")
                code = re.match(r"\s*exit (\d+)", comment)
                out.append((command.strip(), int(code.group(1)) if code else 0))
    return out


@pytest.fixture(scope="module")
def tutorial(tmp_path_factory):
    """A folder where the tutorial has been followed to its end; the outputs of each step."""
    work = tmp_path_factory.mktemp("tutorial")
    write_files("tutorial.md", work)
    bin_dir = work / ".bin"  # `blocksim` is this tree's, as after `pip install -e .`
    bin_dir.mkdir()
    shim = bin_dir / "blocksim"
    shim.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m blocksim \"$@\"\n")
    shim.chmod(0o755)
    # a script, not a symlink: a symlink to a virtual environment's python, placed outside
    # the environment, no longer finds the environment's packages (pyvenv.cfg is looked up
    # beside the link)
    python = bin_dir / "python"
    python.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} \"$@\"\n")
    python.chmod(0o755)
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(ROOT),
           "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    results = []
    for command, expected in commands():
        r = subprocess.run(command, shell=True, cwd=work, env=env, capture_output=True,
                           text=True, timeout=300)
        results.append((command, expected, r))
    return work, results


def test_every_yaml_and_python_block_is_a_file_the_commands_use():
    named = {(lang, name) for lang, name, _ in blocks("tutorial.md") if lang in ("yaml", "python")}
    assert all(name for _, name in named), "every YAML / Python block of the tutorial is a file"
    used = " ".join(c for c, _ in commands()) + " ".join(
        text for lang, _, text in blocks("tutorial.md") if lang == "yaml")
    for _, name in named:
        assert name in used, f"{name} is never run"


def test_every_command_runs_as_the_tutorial_says(tutorial):
    _, results = tutorial
    assert len(results) >= 10
    for command, expected, r in results:
        assert r.returncode == expected, f"{command}\n{r.stdout}\n{r.stderr}"
        assert "Traceback" not in r.stderr, command
        if expected == 2:
            assert "did you mean 'k'" in r.stderr


def test_the_mass_spring_damper_matches_its_closed_form(tutorial):
    work, _ = tutorial
    # x'' + 0.4 x' + 4 x = step(t - 1): wn = 2, s = 0.2, wd = sqrt(4 - 0.04), tau = t - 1,
    # x = (1 - exp(-s tau) (cos wd tau + s/wd sin wd tau)) / 4 for tau >= 0
    data = np.load(work / "runs" / "msd_precise" / "results.npz")
    t = data["t"]
    tau = np.clip(t - 1, 0, None)
    wd = np.sqrt(4 - 0.04)
    x = (1 - np.exp(-0.2 * tau) * (np.cos(wd * tau) + 0.2 / wd * np.sin(wd * tau))) / 4
    np.testing.assert_allclose(data["x"], x, atol=1e-7)
    assert {p.name for p in (work / "runs" / "msd").iterdir()} == {
        "results.npz", "meta.json", "Scope.png", "diagram.svg", "report.html"}


def test_the_digital_loop_holds_the_mass_at_the_reference(tutorial):
    work, results = tutorial
    data = np.load(work / "runs" / "control" / "results.npz")
    # integral action: no steady-state error, x -> ref = 0.5; then F = k x = 4 * 0.5 = 2 N
    assert abs(data["x"][-1] - 0.5) < 1e-3 and abs(data["F"][-1] - 2.0) < 1e-2
    # the force is held between samples (T = 0.05 s): constant on [kT, (k+1)T)
    t, F = data["t"], data["F"]
    k = np.floor(np.round(t / 0.05, 9))
    for sample in range(20):
        assert np.ptp(F[k == sample]) == 0.0
    out = next(r.stdout for c, _, r in results if c == "python plot_control.py")
    assert "x = 0.5000 m" in out and (work / "control.png").is_file()
    check = next(r.stdout for c, _, r in results if c == "blocksim check control.yaml")
    assert "hierarchy:" in check and "Plant            subsystem (plant.yaml)  m = 1, c = 4, k = 4" in check
