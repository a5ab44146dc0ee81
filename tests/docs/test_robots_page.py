"""docs/robots.md is complete and true: every key the robot loaders accept (read from the
code), every built-in model with its aliases and poses (values compared with the models),
every robot function of expressions, and its diagrams run and do what the page says."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from docfiles import DOCS, blocks, write_files

import blocksim
from blocks.robot import load_robot, models, transl
from blocks.robot import section as robots_section
from blocks.robot.expressions import FUNCTIONS as ROBOT_FUNCTIONS
from blocks.robot.twists import section as twist_section
from blocksim.errors import DiagramError
from blocksim.language import expr

ROOT = Path(__file__).resolve().parents[2]
PAGE = (DOCS / "robots.md").read_text()


def section(title):
    """The text of the page's section `title` (any level), up to the next heading."""
    start = re.search(rf"^#+ {re.escape(title)}\n", PAGE, re.M)
    stop = re.search(r"^#+ ", PAGE[start.end():], re.M)
    return PAGE[start.end():start.end() + stop.start()] if stop else PAGE[start.end():]


def first_cells(text):
    """The first cell of every table row, header and rule left out."""
    cells = [line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| ")]
    return [c for c in cells if not set(c) <= set("-: ")][1:]


def keys(text):
    return {k for cell in first_cells(text) for k in re.findall(r"`(\w+)", cell)}


def test_every_robots_option_is_documented_and_nothing_else():
    accepted = set(robots_section.SOURCES + robots_section.OPTIONS + robots_section.INLINE_KEYS
                   + robots_section.TWIST_KEYS)
    assert keys(section("The `robots:` section")) == accepted
    assert "{mass: m, com: [x, y, z], frame: tool}" in section("The `robots:` section")


def test_every_link_key_of_a_robot_file_and_a_twist_robot_is_documented():
    assert keys(section("Link keys")) == set(models._LINK_KEYS)
    assert keys(section("A robot file")) == set(models._ROBOT_KEYS)
    twists = section("Twist robots")
    documented = [keys(part) for part in twists.split("Its optional `links:`")]
    assert documented[0] == set(twist_section.TWIST_KEYS)
    assert documented[1] == set(twist_section._LINK_SHAPES)
    assert "[Ixx, Iyy, Izz, Ixy, Iyz, Ixz]" in section("Link keys")


def test_every_built_in_model_its_aliases_and_poses_with_their_values():
    rows = {cells[1].strip("` "): cells for cells in
            (line.split("|") for line in section("Built-in models").splitlines()
             if line.startswith("| `"))}
    assert set(rows) == set(models.available())
    aliases = {alias: name for name, cells in rows.items()
               for alias in re.findall(r"`(\w+)`", cells[2])}
    assert aliases == models.ALIASES
    for name, cells in rows.items():
        robot = load_robot(name)
        poses = dict(re.findall(r"`(\w+): (\[[^`]*\])`", cells[5]))
        assert set(poses) == set(robot.poses), name
        for pose, text in poses.items():
            np.testing.assert_allclose(expr.evaluate(text, {}), robot.poses[pose], atol=1e-15)


def test_the_puma_position_the_page_gives_is_the_models():
    p = load_robot("puma560").fkine(np.zeros(6))
    assert "(0.4521, −0.15005, 0.4318)" in PAGE
    np.testing.assert_allclose(p[:3, 3], [0.4521, -0.15005, 0.4318], atol=5e-5)


def test_every_robot_function_is_documented_and_nothing_else():
    documented = {name for cell in first_cells(section("Robot functions in expressions"))
                  for name in re.findall(r"`(\w+)\(", cell)}
    assert documented == set(ROBOT_FUNCTIONS)


def test_an_unknown_option_lists_every_option(run_diagram):
    with pytest.raises(DiagramError) as info:
        run_diagram("""
blocksim: 1
robots:
  p560: {model: puma560, frcition: viscous}
blocks: {c: {type: constant, value: 1}}
simulation: {stop: 1}
""")
    listed = set(re.findall(r"\w+", info.value.hint.split(":", 1)[1]))
    assert listed == set(robots_section.SOURCES + robots_section.OPTIONS
                         + robots_section.INLINE_KEYS + robots_section.TWIST_KEYS)
    assert "did you mean 'friction'" in str(info.value)


@pytest.fixture(scope="module")
def page_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("robots_page")
    write_files("robots.md", folder)
    return folder


@pytest.mark.parametrize("yaml_text", [b for lang, name, b in blocks("robots.md")
                                       if lang == "yaml" and not name])
def test_every_example_section_builds(yaml_text, page_files, tmp_path):
    """The page's unnamed snippets are robots: sections: each builds in a diagram next to
    the page's robot file."""
    assert yaml_text.startswith("robots:"), yaml_text
    path = page_files / f"snippet_{tmp_path.name}.yaml"
    path.write_text(f"blocksim: 1\n{yaml_text}blocks: {{c: {{type: constant, value: 1}}}}\n"
                    "simulation: {stop: 0.1}\n")
    blocksim.load(path)


def test_the_robot_file_arm_falls_under_its_weight(page_files):
    """my_arm.yaml stood up by gravity: [0, 9.81, 0]. Holding it at qz (arm along x, masses
    2 kg at x = 0.5 and 1 kg at x = 0.9) takes tau1 = g·(2·0.5 + 1·0.9), tau2 = g·1·0.4
    (by hand); released, it swings down through q1 = -pi/2."""
    result = blocksim.run(page_files / "my_arm_falls.yaml")
    g = 9.81
    np.testing.assert_allclose(result["hold"][0], [g * 1.9, g * 0.4], rtol=1e-12)
    assert result["q1"].min() < -np.pi / 2
    np.testing.assert_array_equal(result["q1"], result["q"][:, 0])


def stanford_run(page_files, **overrides):
    return blocksim.run(page_files / "stanford_rrmc.yaml", overrides=overrides)


def test_the_stanford_example_runs_as_the_page_says(page_files):
    """The target fkine(stanford, qz) @ transl(0.1, 0, 0) is out of reach: the wrist centre
    (tool position minus d6 = 0.263 m along the tool's z) never comes nearer than d2 = 0.154 m
    to the base axis (the Stanford geometry); the run ends on that boundary, 0.09 m short, as
    the page says, and ikine says the same."""
    result = stanford_run(page_files)
    T = result["T"]
    wrist = T[:, :3, 3] - 0.263 * T[:, :3, 2]
    radius = np.hypot(wrist[:, 0], wrist[:, 1])
    assert radius.min() >= 0.154 - 1e-9
    assert radius[-1] == pytest.approx(0.154, abs=1e-3)
    assert np.linalg.norm(result["d"][-1][:3]) == pytest.approx(0.09, abs=0.01)
    stanford = load_robot("stanford")
    with pytest.raises(ValueError, match="did not converge"):
        stanford.ikine(stanford.fkine(np.zeros(6)) @ transl(0.1, 0, 0))


def test_the_stanford_example_reaches_a_target_within_reach(page_files):
    """The page's second command: with the plain inverse, the tool's position obeys
    dp/dt = K (pd - p) exactly (J0 q' = K d, and d's first three rows are pd - p), so
    pd - p(t) = e^(-K t) (pd - p0); the orientation error stays 0."""
    command = [c for lang, _, text in blocks("robots.md") if lang == "sh"
               for c in text.splitlines() if "--set" in c][0]
    sets = dict(s.split("=", 1) for s in re.findall(r'--set "?([^"]+?)"?(?= --set|$)', command))
    result = stanford_run(page_files, **sets, **{"simulation.rtol": 1e-9,
                                                  "simulation.atol": 1e-11})
    stanford = load_robot("stanford")
    q0 = np.array([0, 0.5, 0.2, 0, 0.5, 0])
    p0 = stanford.fkine(q0)[:3, 3]
    pd = p0 + [0.05, 0.05, -0.05]
    expected = pd - np.exp(-5 * result.t)[:, None] * (pd - p0)
    np.testing.assert_allclose(result["T"][:, :3, 3], expected, atol=1e-8)
    np.testing.assert_allclose(result["d"][:, 3:], 0, atol=1e-8)


def test_the_page_s_commands_run(page_files):
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(ROOT)}
    for lang, _, text in blocks("robots.md"):
        if lang != "sh":
            continue
        for line in filter(None, text.splitlines()):
            args = line.split(maxsplit=1)
            assert args[0] == "blocksim"
            r = subprocess.run(f"{sys.executable} -m blocksim {args[1]} --no-plots",
                               shell=True, cwd=page_files, env=env, capture_output=True,
                               text=True, timeout=300)
            assert r.returncode == 0, r.stderr
