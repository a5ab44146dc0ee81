"""A diagram's own inputs and outputs (top-level `inputs:` / `outputs:`, as a subsystem
declares them): each input is an inport block named by it, which reads its written value,
`--set inputs.NAME=...`, or zeros of the shape the inputs it feeds declare; each output names
a signal. Expected values are worked out by hand from the diagrams below."""
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.cli import main

ROOT = Path(__file__).resolve().parents[2]

CONTROLLER = """\
blocksim: 1
name: ctl
inputs:
  r: Err.u1
  y: {to: [Err.u2, Twice], value: 0.5}
outputs:
  u: K.y
  twice: Twice.y
blocks:
  Err:   {type: sum, signs: "+-"}
  K:     {type: gain, K: 2}
  Twice: {type: gain, K: 2}
wires:
  - Err -> K
simulation: {stop: 1, solver: rk4, step: 0.5}
record: {u: K.y, e: Err.y}
"""


@pytest.fixture
def controller(tmp_path):
    path = tmp_path / "ctl.yaml"
    path.write_text(CONTROLLER)
    return path


def test_inputs_read_their_values_alone(controller):
    """u = 2 (r - y): r reads 0 (no value written), y its value 0.5: u = -1."""
    result = blocksim.run(controller)
    assert np.all(result["u"] == -1.0) and np.all(result["e"] == -0.5)
    result = blocksim.run(controller, overrides={"inputs.r": 3, "inputs.y": 1})
    assert np.all(result["u"] == 4.0)  # 2 (3 - 1)


def test_an_input_set_on_a_loaded_model_is_a_value(controller):
    """Model.set("inputs.NAME", v) writes the inport's value into the model's run values by
    the values route (the same compilation: nothing compiled again), in both modes:
    u = 2 (3 - 1), as a load with those values gives."""
    for mode in ("normal", "accelerated"):
        model = blocksim.load(controller, {"simulation.mode": mode})
        compilation = model.compilation
        model.set({"inputs.r": 3, "inputs.y": 1})
        assert model.compilation is compilation
        result = blocksim.execute(model)
        assert np.all(result["u"] == 4.0) and result.meta["mode"]["mode"] == mode


def test_inputs_are_inport_blocks_and_outputs_name_signals(controller):
    model = blocksim.load(controller)
    assert list(model.inports) == ["r", "y"]
    assert [b.name for b in model.blocks][:2] == ["r", "y"]  # first among the blocks
    assert all(b.type == "inport" for b in model.inports.values())
    # y feeds two inputs; the wires come from the inport
    assert model.drivers[("Err", "u2")][:2] == model.drivers[("Twice", "u")][:2] == ("y", "y")
    view, text = model.outports["u"]
    assert text == "K.y" and np.shares_memory(view, model.outputs[("K", "y")])
    assert model.outports["twice"][1] == "Twice.y"


def test_an_input_takes_the_shape_its_inputs_declare():
    """demo3's controller: q feeds Sum.u2 (any shape) and rne.q, which declares (6,)."""
    model = blocksim.load(ROOT / "diagrams" / "demo3_controller.yaml")
    for name in ("q", "qd"):
        block = model.inports[name]
        assert block.y[0].shape == (6,) and np.all(block.p.value == 0.0)
    assert model.outports["tau"][0].shape == (6,)


def test_a_subsystem_file_runs_on_its_own(tmp_path):
    """A file written as a subsystem (its ports declared) is a diagram with inputs: run
    alone, its input reads 0, so y = 3*0 + 1."""
    (tmp_path / "lag.yaml").write_text("""\
blocksim: 1
inputs: {u: Sum.u1}
outputs: {y: Sum.y}
blocks:
  Sum: {type: sum, signs: "++"}
  One: {type: constant, value: 1}
  G:   {type: gain, K: 3}
wires: [One -> G, G -> Sum.u2]
simulation: {stop: 1, solver: euler, step: 0.5}
record: {y: Sum.y}
""")
    assert np.all(blocksim.run(tmp_path / "lag.yaml")["y"] == 3.0)


def test_inputs_and_outputs_through_a_subsystem(tmp_path):
    """The diagram's input feeds a subsystem's port, its output is a subsystem's output:
    y = 2 * (value 1.5) = 3."""
    (tmp_path / "d.yaml").write_text("""\
blocksim: 1
inputs: {u: {to: S.a, value: 1.5}}
outputs: {y: S.b}
blocks:
  S:
    type: subsystem
    diagram:
      inputs: {a: G.u}
      outputs: {b: G.y}
      blocks: {G: {type: gain, K: 2}}
simulation: {stop: 1, solver: euler, step: 0.5}
record: {y: S.b}
""")
    model = blocksim.load(tmp_path / "d.yaml")
    assert model.drivers[("S/G", "u")][:2] == ("u", "y")
    assert np.shares_memory(model.outports["y"][0], model.outputs[("S/G", "y")])
    assert np.all(blocksim.execute(model)["y"] == 3.0)


def test_check_lists_the_ports(controller, capsys):
    assert main(["check", str(controller)]) == 0
    out = capsys.readouterr().out
    assert "input  r            -> Err.u1 (), alone it reads 0" in out
    assert "input  y            -> Err.u2, Twice (), alone it reads 0.5" in out
    assert "output u            <- K.y ()" in out


def test_port_mistakes_are_named_at_their_lines(controller, capsys):
    text = CONTROLLER.replace("  u: K.y\n", "  u: K.z\n")
    controller.write_text(text)
    assert main(["check", str(controller)]) == 2
    err = capsys.readouterr().err
    line = text.splitlines().index("  u: K.z") + 1
    assert f"ctl.yaml:{line}: error: " in err and "no output named 'z'" in err
    controller.write_text(CONTROLLER)
    assert main(["check", str(controller), "--set", "inputs.rr=1"]) == 2
    err = capsys.readouterr().err
    assert "the diagram has no input 'rr' (did you mean 'r'?)" in err
