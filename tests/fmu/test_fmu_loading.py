"""Loading an fmu block reads the zip and its XML only, and says what is wrong at the file and
line that wrote it (exit 2); `blocksim check` and `blocksim blocks fmu` list what it has."""
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

pytest.importorskip("fmpy")


def _check(path):
    return subprocess.run([sys.executable, "-m", "blocksim", "check", str(path)],
                          capture_output=True, text=True)


def test_check_lists_ports_parameters_states_and_runs_nothing(fmu_diagram, tmp_path, monkeypatch):
    """check names the FMU's ports, parameters and states without unpacking or loading it
    (the cache stays empty)."""
    monkeypatch.setenv("BLOCKSIM_CACHE_DIR", str(tmp_path / "cache"))
    path = fmu_diagram("bouncing_ball", 3, """
blocksim: 1
name: bb_check
blocks:
  B: {type: fmu, file: FMU, parameters: {e: 0.5}}
simulation: {stop: 1}
""")
    done = _check(path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "out: h(), v(), bounces()" in out and "1 zero crossing" in out
    assert "parameters: g = 9.81, e = 0.5, v_min = 0.1" in out and "states: h, v" in out
    assert not (tmp_path / "cache").exists()


def _bad(tmp_path, block, name="bad.yaml"):
    path = tmp_path / name
    path.write_text(f"blocksim: 1\nname: bad\nblocks:\n  P: {block}\nsimulation: {{stop: 1}}\n")
    return _check(path)


@pytest.mark.parametrize("block, message", [
    ("{type: fmu, file: none.fmu}", "no such file"),
    ("{type: fmu, file: text.fmu}", "not an FMU (not a zip file"),
    ("{type: fmu, file: empty.fmu}", "has no modelDescription.xml"),
])
def test_not_an_fmu(tmp_path, block, message):
    (tmp_path / "text.fmu").write_text("hello")
    with zipfile.ZipFile(tmp_path / "empty.fmu", "w") as zf:
        zf.writestr("readme.txt", "nothing")
    done = _bad(tmp_path, block)
    assert done.returncode == 2
    assert "bad.yaml:4: error: " in done.stderr and message in done.stderr
    assert "Traceback" not in done.stderr


def test_interface_not_provided_says_which_are(fmus, tmp_path):
    shutil.copy(fmus["dahlquist", 2], tmp_path / "d.fmu")
    done = _bad(tmp_path, "{type: fmu, file: d.fmu, interface: co_simulation, step: 0.1}")
    assert done.returncode == 2
    assert "d.fmu does not provide co_simulation: it provides model_exchange" in done.stderr


def test_no_binary_for_this_platform_lists_those_present(fmus, tmp_path):
    """An FMU whose binaries are for another platform only, and that has no sources."""
    with zipfile.ZipFile(fmus["dahlquist", 2]) as src, \
            zipfile.ZipFile(tmp_path / "other.fmu", "w") as dst:
        for item in src.infolist():
            if item.filename.startswith("sources/"):
                continue
            name = item.filename.replace("binaries/linux64/", "binaries/win64/")
            dst.writestr(name.replace(".so", ".dll"), src.read(item))
    done = _bad(tmp_path, "{type: fmu, file: other.fmu}")
    assert done.returncode == 2
    assert "has no binary for this platform (linux64) and no sources to compile: " \
           "binaries for win64" in done.stderr


@pytest.mark.parametrize("entry, message", [
    ("parameters: {kk: 2}", "the FMU has no parameter 'kk' (did you mean 'k'?)"),
    ("parameters: {k: true}", "parameter 'k': is a Real: expected a number, got True"),
    ("parameters: {k: -1}", "parameter 'k': -1 is below its min 0"),
    ("parameters: {k: 2000}", "parameter 'k': 2000 is above its max 1000"),
    ("start: {y: 1}", "the FMU has no variable 'y'"),
])
def test_parameter_and_start_problems_at_their_line(fmus, tmp_path, entry, message):
    shutil.copy(fmus["dahlquist", 3], tmp_path / "d.fmu")
    path = tmp_path / "p.yaml"
    key, value = entry.split(": ", 1)
    path.write_text("blocksim: 1\nname: p\nblocks:\n  P:\n    type: fmu\n    file: d.fmu\n"
                    f"    {key}:\n      {value.strip('{}')}\nsimulation: {{stop: 1}}\n")
    done = _check(path)
    assert done.returncode == 2
    assert "p.yaml:8: error: " in done.stderr and message in done.stderr, done.stderr


@pytest.mark.parametrize("key", ["parameters", "start"])
def test_values_not_a_mapping_at_their_line(fmus, tmp_path, key):
    """`parameters: [1, 2]` was reported as '<diagram>: error' (no file or line)."""
    shutil.copy(fmus["dahlquist", 2], tmp_path / "d.fmu")
    done = _bad(tmp_path, f"{{type: fmu, file: d.fmu, {key}: [1, 2]}}")
    assert done.returncode == 2
    assert f"bad.yaml:4: error: block 'P' parameter '{key}': takes a mapping of" \
        in done.stderr, done.stderr


def test_integer_and_boolean_values_are_checked(fmus, tmp_path):
    shutil.copy(fmus["feedthrough", 2], tmp_path / "f.fmu")
    done = _bad(tmp_path, "{type: fmu, file: f.fmu, parameters: {n: 1.5}}")
    assert "parameter 'n': is an Integer: expected a whole number, got 1.5" in done.stderr
    done = _bad(tmp_path, "{type: fmu, file: f.fmu, parameters: {enabled: 1}}")
    assert "parameter 'enabled': is a Boolean: expected true or false, got 1" in done.stderr


def test_source_fmu_is_compiled_at_first_use(tmp_path, monkeypatch):
    """An FMU with sources only is built with the machine's C compiler when the run starts;
    it then runs as the binary one (Dahlquist's closed form)."""
    import numpy as np

    import blocksim
    from blocksim.fmi.build import build_fmu, model_from_yaml
    from pathlib import Path
    monkeypatch.setenv("BLOCKSIM_CACHE_DIR", str(tmp_path / "cache"))
    models = Path(__file__).parent / "models"
    build_fmu(model_from_yaml(models / "dahlquist.yaml"), tmp_path / "src.fmu", 3, binary=False)
    with zipfile.ZipFile(tmp_path / "src.fmu") as zf:
        assert not any(n.startswith("binaries/") for n in zf.namelist())
    path = tmp_path / "s.yaml"
    path.write_text("blocksim: 1\nname: s\nblocks:\n  P: {type: fmu, file: src.fmu, "
                    "parameters: {k: 3}}\nsimulation: {stop: 1, rtol: 1e-10, atol: 1e-12}\n"
                    "record: {x: P.x}\n")
    r = blocksim.run(path)
    assert abs(r["x"][-1] - np.exp(-3.0)) < 1e-9


@pytest.mark.parametrize("mode", ["normal", "accelerated"])
def test_source_fmu_with_cc_split_as_a_command_or_failing(tmp_path, mode):
    """CC is read as accelerated mode reads it: CC="gcc -O1" builds the sources (it was
    'no C compiler found (gcc -O1)'); a compiler that fails ends the run at its block,
    naming it, with no traceback (it was a BuildError traceback)."""
    from blocksim.fmi.build import build_fmu, model_from_yaml
    from pathlib import Path
    models = Path(__file__).parent / "models"
    build_fmu(model_from_yaml(models / "dahlquist.yaml"), tmp_path / "src.fmu", 2, binary=False)
    (tmp_path / "s.yaml").write_text(
        "blocksim: 1\nname: s\nblocks:\n  P: {type: fmu, file: src.fmu}\n"
        f"simulation: {{stop: 1, mode: {mode}}}\nrecord: {{x: P.x}}\n")

    def run(cc, cache):
        env = {**os.environ, "CC": cc, "BLOCKSIM_CACHE_DIR": str(tmp_path / cache)}
        return subprocess.run([sys.executable, "-m", "blocksim", "run", "s.yaml", "--no-plots",
                               "--out", cache + "-out"], cwd=tmp_path, env=env,
                              capture_output=True, text=True)
    failed = run("/bin/false", "bad")
    # normal mode: the run fails at its start (exit 3); accelerated: before the compiled run,
    # as a compile that fails (exit 2)
    assert failed.returncode == (3 if mode == "normal" else 2), failed.stderr
    assert "Traceback" not in failed.stderr and "'P'" in failed.stderr, failed.stderr
    assert "src.fmu has no binary for this platform and its sources do not build" \
        in failed.stderr, failed.stderr
    done = run("gcc -O1", "good")
    assert done.returncode == 0, done.stderr


def test_blocks_fmu_documents_the_block():
    done = subprocess.run([sys.executable, "-m", "blocksim", "blocks", "fmu"],
                          capture_output=True, text=True)
    assert done.returncode == 0
    assert "model_exchange" in done.stdout and "co_simulation" in done.stdout
    assert "a.b[2]` -> `a_b_2`" in done.stdout


def test_blocks_fmu_file_lists_the_fmus_variables(fmus, tmp_path, monkeypatch):
    """`blocksim blocks fmu FILE` lists what tests/fmu/models/feedthrough.yaml declares (the
    FMI 3.0 array ports with shape and start, the output's dependency, the parameters with
    their start values and bounds, no states) and sawtooth.yaml's early return, reading the
    zip and XML only (the cache stays empty); a missing file is FILE: error, exit 2."""
    monkeypatch.setenv("BLOCKSIM_CACHE_DIR", str(tmp_path / "cache"))

    def blocks(*args):
        return subprocess.run([sys.executable, "-m", "blocksim", "blocks", *map(str, args)],
                              capture_output=True, text=True)
    done = blocks("fmu", fmus["feedthrough", 3])
    assert done.returncode == 0, done.stderr
    lines = [" ".join(line.split()) for line in done.stdout.splitlines()]
    assert lines[0].startswith("FMU feedthrough") and "FMI 3.0, feedthrough; provides " \
        "model_exchange" in lines[0]
    assert lines[1:] == ["inputs:", "u (2,) real start [0, 0]", "outputs:",
                         "y (2,) real depends on u", "parameters:",
                         "gain = 2 (min -10, max 10)", "n = 1 (min 0, max 5)",
                         "enabled = true", "states: none"]
    done = blocks("fmu", fmus["sawtooth", 3])
    assert "provides co_simulation; early return from doStep" in done.stdout
    assert "states: x" in done.stdout
    assert not (tmp_path / "cache").exists()
    done = blocks("fmu", tmp_path / "none.fmu")
    assert done.returncode == 2 and done.stderr.startswith(f"{tmp_path / 'none.fmu'}: error: ")
    done = blocks("gain", fmus["sawtooth", 3])
    assert done.returncode == 2 and "block type 'gain' describes no file" in done.stderr
