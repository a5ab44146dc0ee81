"""The Python API as a notebook uses it: a loaded model changed with `set` and run again
(against a fresh load with the same overrides), the robot of a robot block, and results as a
table with named columns (against the recorded arrays) or a DataFrame."""
import sys
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim import DiagramError

ROOT = Path(__file__).resolve().parents[2]
DEMO3 = ROOT / "diagrams" / "demo3.yaml"
SHORT = {"simulation.stop": 1}


def same_run(a, b):
    np.testing.assert_array_equal(a.t, b.t)
    for name in a.data:
        np.testing.assert_array_equal(a[name], b[name])


def test_set_reruns_with_the_new_value_in_the_same_layout():
    model = blocksim.load(DEMO3, SHORT)
    before = blocksim.execute(model)
    signals = model.signals
    assert model.set("blocks.Kp.K", 400) is model
    assert model.signals is signals            # re-parameterised: buffers kept, not recompiled
    after = blocksim.execute(model)
    same_run(after, blocksim.run(DEMO3, {**SHORT, "blocks.Kp.K": 400}))
    assert np.abs(after["e"][-1]).max() < np.abs(before["e"][-1]).max()
    assert after.meta["overrides"][-1] == ["blocks.Kp.K", 400]
    # several values at once, an expression among them; blocksim.run takes the model too
    model.set({"blocks.Kd.K": "2*sqrt(400)", "simulation.stop": 0.5})
    same_run(blocksim.run(model), blocksim.run(DEMO3, {"blocks.Kp.K": 400,
                                                       "blocks.Kd.K": 40,
                                                       "simulation.stop": 0.5}))


def test_set_in_accelerated_mode_keeps_the_compiled_code(monkeypatch):
    """A value set into an accelerated model is written into its Context: the next run uses
    the same compiled code (no source generated again) and gives what a fresh load with
    that value gives, bit for bit."""
    from blocksim.accel import codegen

    path = ROOT / "diagrams" / "msd.yaml"
    accelerated = {"simulation.mode": "accelerated"}
    model = blocksim.load(path, accelerated)
    assert blocksim.execute(model).meta["mode"]["mode"] == "accelerated"
    generated = []
    monkeypatch.setattr(codegen, "generate",
                        lambda *a, _g=codegen.generate: generated.append(1) or _g(*a))
    values = [{"blocks.Spring.K": 40.0, "blocks.Position.x0": 0.0},
              {"blocks.Spring.K": 10.0, "blocks.Position.x0": 0.5}]
    mine = [blocksim.execute(model.set(v)) for v in values]
    assert not generated
    for result, v in zip(mine, values):
        assert result.meta["mode"]["mode"] == "accelerated"
        same_run(result, blocksim.run(path, {**accelerated, **v}))


def test_set_changing_structure_compiles_anew():
    path = ROOT / "diagrams" / "msd.yaml"
    model = blocksim.load(path)
    signals = model.signals
    # an upper limit makes the integrator a hybrid block with an indicator: another layout
    model.set({"blocks.Position.upper": 0.2, "record.F": "Force.y"})
    assert model.signals is not signals
    result = blocksim.run(model)
    same_run(result, blocksim.run(path, {"blocks.Position.upper": 0.2, "record.F": "Force.y"}))
    assert "F" in result.keys() and result["x"].max() == 0.2 < blocksim.run(path)["x"].max()


def test_meta_lists_the_last_value_of_each_path_set():
    """A model set again and again (an optimiser's loop) records one override per path, the
    last, in the order of the last writes; loading the diagram with that list gives the same
    run (the reproduction meta.json is for). It kept every set before: 10^5 sets made a set
    cost 0.9 ms and meta.json 10^5 entries long."""
    model = blocksim.load(DEMO3, SHORT)
    for k in range(300):
        model.set("blocks.Kp.K", 100 + k)
    model.set({"blocks.Kd.K": 30, "simulation.stop": 0.5})
    model.set("blocks.Kp.K", 250)
    result = blocksim.execute(model)
    assert result.meta["overrides"] == [["blocks.Kd.K", 30], ["simulation.stop", 0.5],
                                        ["blocks.Kp.K", 250]]
    same_run(result, blocksim.run(DEMO3, [tuple(o) for o in result.meta["overrides"]]))


def test_a_bad_value_leaves_the_model_as_it_was():
    model = blocksim.load(DEMO3, SHORT)
    first = blocksim.run(model)
    overrides = dict(model.spec.overrides)
    with pytest.raises(DiagramError) as e:
        model.set("blocks.Kp.K", [1, 2, 3])
    # said at the set (it was said at the wire, as if the diagram were wrong), the wire's
    # line a hint: the line of `Sum -> Kp` in the file
    wire = DEMO3.read_text().splitlines().index("  - Sum -> Kp") + 1
    assert str(e.value) == (
        "model.set['blocks.Kp.K']: error: block 'Kp' port 'u': gain of shape (3,) does not "
        "broadcast with a signal of shape (6,) (inputs: u <- Sum.y (6,))\n"
        f"  hint: in the diagram at {DEMO3}:{wire}")
    with pytest.raises(DiagramError) as e:
        model.set("blocks.Kpp.K", 1)
    assert str(e.value).startswith("model.set['blocks.Kpp.K']: error: unknown block 'Kpp'")
    assert model.spec.overrides == overrides
    same_run(blocksim.run(model), first)


def test_the_robot_of_a_robot_block():
    model = blocksim.load(DEMO3, SHORT)
    p560 = model.resources["robots"]["p560"]
    assert model.block("Robot").robot is p560 and model.block("rne").robot is \
        model.resources["robots"]["p560p"]
    # published: Puma 560 fkine(qz) translation (0.4521, -0.15005, 0.4318) m (RTB, standard DH)
    np.testing.assert_allclose(p560.fkine(p560.poses["qz"])[:3, 3], [0.4521, -0.15005, 0.4318],
                               atol=1e-12)
    with pytest.raises(KeyError, match="did you mean 'Robot'"):
        model.block("Robit")
    assert p560.B.any()
    model.set("robots.p560.friction", "none")   # the robot is rebuilt with its new option
    assert not model.block("Robot").robot.B.any() and model.resources["robots"]["p560"] is \
        model.block("Robot").robot


def test_results_as_a_table_with_named_columns():
    result = blocksim.run(DEMO3, SHORT)
    columns, values = result.table()
    assert columns[:8] == ["t", "q[0]", "q[1]", "q[2]", "q[3]", "q[4]", "q[5]", "qd[0]"]
    assert values.shape == (len(result.t), 1 + 5 * 6)
    np.testing.assert_array_equal(values[:, 0], result.t)
    for j in range(6):
        np.testing.assert_array_equal(values[:, columns.index(f"tau[{j}]")], result["tau"][:, j])


def test_to_dataframe_when_pandas_is_installed():
    pandas = pytest.importorskip("pandas")
    result = blocksim.run(DEMO3, SHORT)
    frame = result.to_dataframe()
    assert isinstance(frame, pandas.DataFrame) and frame.index.name == "t"
    np.testing.assert_array_equal(frame.index.to_numpy(), result.t)
    np.testing.assert_array_equal(frame["e[2]"].to_numpy(), result["e"][:, 2])


def test_to_dataframe_without_pandas_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas fails, as when absent
    result = blocksim.run(DEMO3, SHORT)
    with pytest.raises(ImportError, match="pip install pandas"):
        result.to_dataframe()
