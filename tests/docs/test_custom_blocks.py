"""docs/custom-blocks.md, followed to the letter: its package (block module, pyproject entry
point, diagram, tests) is written out and installed as a real distribution (a .dist-info
folder on the path of a fresh interpreter, as pip would leave it), then used from YAML and
the CLI. A second, broken plugin shows that one failing import is a one-line warning."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from docfiles import files, write_files

ROOT = Path(__file__).resolve().parents[2]


def entry_points_of(pyproject):
    """The `blocksim.blocks` entry points declared in a pyproject.toml text."""
    section = pyproject.split('[project.entry-points."blocksim.blocks"]', 1)[1]
    section = section.split("\n[", 1)[0]
    return dict(re.findall(r'^(\w+)\s*=\s*"([^"]+)"', section, re.M))


def install(site, dist, version, entry_points):
    """A .dist-info folder with METADATA and entry_points.txt: what `pip install` leaves."""
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(
        "[blocksim.blocks]\n" + "".join(f"{k} = {v}\n" for k, v in entry_points.items()))


@pytest.fixture(scope="module")
def plugin(tmp_path_factory):
    """The doc's package under pkg/, installed into site/ with a broken neighbour."""
    base = tmp_path_factory.mktemp("plugin")
    pkg, site = base / "pkg", base / "site"
    write_files("custom-blocks.md", pkg)
    (pkg / "my_blocks" / "__init__.py").write_text("")
    eps = entry_points_of((pkg / "pyproject.toml").read_text())
    assert eps == {"first_order": "my_blocks.first_order:FirstOrder"}
    install(site, "my-blocks", "0.1.0", eps)
    install(site, "broken-blocks", "1.0", {"wobble": "broken_blocks.missing:Wobble",
                                           "gain": "broken_blocks.missing:Gain"})
    env = {**os.environ, "MPLBACKEND": "Agg",
           "PYTHONPATH": os.pathsep.join([str(site), str(pkg), str(ROOT)])}
    return pkg, env


def blocksim(env, *args, cwd=None):
    return subprocess.run([sys.executable, "-m", "blocksim", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_the_page_names_every_file_of_the_package():
    assert set(files("custom-blocks.md")) == {
        "my_blocks/first_order.py", "pyproject.toml", "filter.yaml", "tests/test_first_order.py"}


def test_plugin_is_listed_under_its_package_and_the_broken_one_is_one_warning(plugin):
    _, env = plugin
    r = blocksim(env, "blocks")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    head = lines.index("Plugins from my-blocks")
    assert lines[head + 1].split()[0] == "first_order"
    assert "First-order low-pass filter" in lines[head + 1]
    assert "gain" in r.stdout and "integrator" in r.stdout  # the built-ins are all there
    warnings = r.stderr.strip().splitlines()
    assert len(warnings) == 2, r.stderr
    assert any(w.startswith("warning: plugin block type 'wobble' from broken-blocks") and
               "ModuleNotFoundError" in w for w in warnings), warnings
    assert any("'gain' from broken-blocks" in w and "built-in" in w for w in warnings)
    r = blocksim(env, "blocks", "first_order")
    assert r.returncode == 0 and "plugin from my-blocks" in r.stdout
    assert "tau=1.0" in r.stdout and "1 - exp(-t/tau)" in r.stdout


def test_plugin_type_runs_from_yaml_and_the_pages_tests_pass(plugin, tmp_path):
    pkg, env = plugin
    r = blocksim(env, "run", str(pkg / "filter.yaml"), "--out", str(tmp_path / "run"),
                 "--quiet")
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr  # the broken plugin is never imported by this diagram
    import numpy as np
    data = np.load(tmp_path / "run" / "results.npz")
    np.testing.assert_allclose(data["y"], 1 - np.exp(-data["t"] / 0.5), atol=1e-7)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        str(pkg / "tests")], env=env, cwd=pkg, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "5 passed" in r.stdout, r.stdout + r.stderr


def test_a_diagram_using_the_broken_plugin_is_an_error_at_its_block(plugin, tmp_path):
    _, env = plugin
    path = tmp_path / "d.yaml"
    path.write_text("blocksim: 1\nblocks:\n  W: {type: wobble}\nsimulation: {stop: 1}\n")
    r = blocksim(env, "check", str(path))
    assert r.returncode == 2
    assert f"{path}:3: error: block 'W': plugin block type 'wobble' from broken-blocks" in r.stderr
    assert "Traceback" not in r.stderr
