"""--set / overrides= as a newcomer uses them: typos refused with a did-you-mean, a
subsystem's own parameters settable like a block's, the hierarchy shown by `blocksim check`,
and messages from the Python API that speak of overrides= rather than --set."""
import numpy as np
import pytest

import blocksim
from blocksim.cli import main

LAG = """blocksim: 1
parameters: {tau: 1.0}
blocks:
  S: {type: sum, signs: "+-"}
  G: {type: gain, K: 1/tau}
  I: {type: integrator}
wires: [S -> G, G -> I, I -> S.u2]
inputs: {u: S.u1}
outputs: {y: I.y}
"""

TOP = """blocksim: 1
parameters: {level: 2}
blocks:
  U: {type: constant, value: level}
  F: {type: subsystem, file: lag.yaml, parameters: {tau: 0.5}}
  Outer:
    type: subsystem
    diagram:
      parameters: {k: 3}
      blocks:
        Inner: {type: subsystem, file: lag.yaml, parameters: {tau: k}}
      inputs: {u: Inner.u}
      outputs: {y: Inner.y}
wires: [U -> F, U -> Outer]
simulation: {stop: 3, output_interval: 0.5, rtol: 1e-10, atol: 1e-12}
record: {y: F/I.y, z: Outer/Inner/I.y}
"""


@pytest.fixture
def diagram(tmp_path):
    (tmp_path / "lag.yaml").write_text(LAG)
    path = tmp_path / "top.yaml"
    path.write_text(TOP)
    return path


def lag(t, level, tau):
    """First-order lag tau*y' = level - y from y(0) = 0."""
    return level * (1 - np.exp(-t / tau))


def test_subsystem_parameters_are_set_like_a_blocks(diagram):
    r = blocksim.run(diagram)
    np.testing.assert_allclose(r["y"], lag(r.t, 2, 0.5), atol=1e-8)
    np.testing.assert_allclose(r["z"], lag(r.t, 2, 3), atol=1e-8)
    r = blocksim.run(diagram, overrides={"blocks.F.parameters.tau": 2,
                                         "blocks.Outer.parameters.k": "level / 4",
                                         "parameters.level": 4})
    np.testing.assert_allclose(r["y"], lag(r.t, 4, 2), atol=1e-8)
    np.testing.assert_allclose(r["z"], lag(r.t, 4, 1), atol=1e-8)   # k = level / 4 = 1
    r = blocksim.run(diagram, overrides=["blocks.Outer/Inner.parameters.tau=0.25"])
    np.testing.assert_allclose(r["z"], lag(r.t, 2, 0.25), atol=1e-8)


@pytest.mark.parametrize("setting, message", [
    ("parameters.levle=3",
     "--set parameters.levle: error: the diagram has no parameter 'levle' (did you mean 'level'?)"
     "\n  hint: the diagram declares level"),
    ("blocks.F.parameters.tua=2",
     "--set blocks.F.parameters.tua: error: block 'F': the subsystem has no parameter 'tua' "
     "(did you mean 'tau'?)\n  hint: lag.yaml declares tau"),
    ("blocks.Outer.parameters.kk=2",
     "block 'Outer': the subsystem has no parameter 'kk' (did you mean 'k'?)\n"
     "  hint: its inline diagram declares k"),
    ("blocks.F.file=other.yaml", "block 'F': a subsystem's 'file' cannot be set"),
    ("blocks.Fx.K=1", "unknown block 'Fx' (did you mean 'F'?)"),
])
def test_set_typos_are_refused(diagram, capsys, setting, message):
    assert main(["run", str(diagram), "--set", setting, "--out", str(diagram.parent / "r")]) == 2
    assert message in capsys.readouterr().err
    assert not (diagram.parent / "r").exists()


def test_check_shows_the_hierarchy(diagram, capsys):
    assert main(["check", str(diagram), "--set", "blocks.F.parameters.tau=0.75"]) == 0
    out = capsys.readouterr().out
    tree = out.split("hierarchy:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line.split()[0] for line in tree] == [
        "U", "F", "S", "G", "I", "Outer", "Inner", "S", "G", "I"]
    indents = [len(line) - len(line.lstrip()) for line in tree]
    assert indents == [2, 2, 4, 4, 4, 2, 4, 6, 6, 6]
    assert "F                subsystem (lag.yaml)  tau = 0.75" in tree[1]
    assert "subsystem (inline)  k = 3" in tree[5] and "tau = 3" in tree[6]


def test_python_api_errors_speak_of_overrides(diagram):
    with pytest.raises(blocksim.DiagramError) as info:
        blocksim.load(diagram, overrides={"parameters.levle": 3})
    assert str(info.value).startswith("overrides['parameters.levle']: error:")
    with pytest.raises(blocksim.DiagramError, match=r"^overrides\['blocks.U.value'\]: error: "
                                                    "block 'U' parameter 'value': syntax error"):
        blocksim.load(diagram, overrides=["blocks.U.value=sin("])
    with pytest.raises(blocksim.DiagramError, match="^overrides: error: overrides expects"):
        blocksim.load(diagram, overrides=["simulation.stop"])
    with pytest.raises(blocksim.DiagramError, match="a .path, value. pair"):
        blocksim.load(diagram, overrides={("simulation", "stop"): 1})
    assert "--set" not in str(info.value)


def test_record_names_a_subsystems_output_port(diagram, capsys):
    r = blocksim.run(diagram, overrides={"record.out": "F.y", "record.nested": "Outer",
                                         "record.part": "Outer/Inner.y"})
    np.testing.assert_array_equal(r["out"], r["y"])   # F.y is F/I.y
    np.testing.assert_array_equal(r["nested"], r["z"])  # Outer's only output: Outer/Inner/I.y
    np.testing.assert_array_equal(r["part"], r["z"])
    with pytest.raises(blocksim.DiagramError, match="subsystem 'F' has no output 'x' "
                                                    "\\(outputs: y\\)"):
        blocksim.load(diagram, overrides={"record.bad": "F.x"})


@pytest.mark.parametrize("call, error, message", [
    (lambda d: blocksim.run(123), TypeError, r"run\(\) takes a diagram file .* got int"),
    (lambda d: blocksim.load(None), TypeError, r"load\(\) takes a diagram file .* got NoneType"),
    (lambda d: blocksim.load(d, overrides=5), TypeError, "overrides= takes a dict"),
    (lambda d: blocksim.run(d, out=3), TypeError, "out= takes a directory"),
    (lambda d: blocksim.run(blocksim.load(d), overrides={"parameters.level": 1}), ValueError,
     "overrides= applies when a diagram file is loaded"),
    (lambda d: blocksim.execute(str(d)), TypeError, r"execute\(\) takes a Model"),
])
def test_python_api_checks_its_arguments(diagram, call, error, message):
    with pytest.raises(error, match=message):
        call(diagram)
