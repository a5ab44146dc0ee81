"""docs/tutorial.md, run as a newcomer would: its files written out, every shell command run
in order (`# exit N` marks a command that must fail with that code), and its claims checked
against closed forms."""
from pathlib import Path

import numpy as np
import pytest
from docfiles import blocks, check_ran, commands, follow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tutorial(tmp_path_factory):
    """A folder where the tutorial has been followed to its end; the outputs of each step."""
    work = tmp_path_factory.mktemp("tutorial")
    results = follow("tutorial.md", work, ROOT)
    return work, results


def test_every_yaml_and_python_block_is_a_file_the_commands_use():
    named = {(lang, name) for lang, name, _ in blocks("tutorial.md") if lang in ("yaml", "python")}
    assert all(name for _, name in named), "every YAML / Python block of the tutorial is a file"
    used = " ".join(c for c, _ in commands("tutorial.md")) + " ".join(
        text for lang, _, text in blocks("tutorial.md") if lang == "yaml")
    for _, name in named:
        assert name in used, f"{name} is never run"


def test_every_command_runs_as_the_tutorial_says(tutorial):
    _, results = tutorial
    assert len(results) >= 10
    check_ran(results, "did you mean 'k'")


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
