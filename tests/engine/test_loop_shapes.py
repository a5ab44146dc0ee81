"""Shapes of feedback loops: when nothing outside a loop fixes its signal's shape, the
initial value (x0) of a block in it does; a scalar x0 in a loop of vectors broadcasts; a
loop that stays undetermined is one error naming its blocks in order and showing an x0."""
import numpy as np
import pytest

import blocksim
from blocksim.cli import main


def write(tmp_path, text):
    path = tmp_path / "d.yaml"
    path.write_text(text)
    return path


ACCUMULATOR = """blocksim: 1
blocks:
  One: {type: constant, value: %s}
  Sum: {type: sum, signs: "++"}
  Delay: {type: %s, x0: 0, period: 0.1}
wires:
  - One -> Sum.u1
  - Delay -> Sum.u2
  - Sum -> Delay
simulation: {stop: 1, output_interval: 0.05}
record: {y: Delay.y}
"""


def hits_after_start(t, period=0.1):
    """y[k] = y[k-1] + 1 from y[0] = 0: the delay outputs k from hit k = t/period on (held,
    right-continuous), i.e. the number of hits in (0, t]."""
    return np.floor(np.round(t / period, 9))


def test_the_textbook_accumulator_is_a_scalar_loop(tmp_path):
    r = blocksim.run(write(tmp_path, ACCUMULATOR % (1, "unit_delay")))
    assert r["y"].shape == r.t.shape
    np.testing.assert_array_equal(r["y"], hits_after_start(r.t))


def test_a_scalar_x0_broadcasts_in_a_loop_of_vectors(tmp_path):
    r = blocksim.run(write(tmp_path, ACCUMULATOR % ("[1, 2]", "unit_delay")))
    assert r["y"].shape == (len(r.t), 2)
    np.testing.assert_array_equal(r["y"], hits_after_start(r.t)[:, None] * [1, 2])


def test_integrator_with_scalar_x0_broadcasts_to_its_input(tmp_path):
    r = blocksim.run(write(tmp_path, """blocksim: 1
blocks:
  V: {type: constant, value: [1, -2, 3]}
  I: {type: integrator, x0: 1}
wires: [V -> I]
simulation: {stop: 2, output_interval: 0.5}
record: {y: I.y}
"""))
    np.testing.assert_allclose(r["y"], 1 + r.t[:, None] * [1, -2, 3], atol=1e-12)


def test_integrator_loop_takes_x0s_shape(tmp_path):
    # y' = -y from y(0) = 2 in a loop that only the integrator's x0 can shape
    r = blocksim.run(write(tmp_path, """blocksim: 1
blocks:
  I: {type: integrator, x0: 2}
  G: {type: gain, K: -1}
wires: [I -> G, G -> I]
simulation: {stop: 1, rtol: 1e-10, atol: 1e-12, output_interval: 0.25}
record: {y: I.y}
"""))
    np.testing.assert_allclose(r["y"], 2 * np.exp(-r.t), rtol=1e-8)


def test_a_loop_without_initial_value_names_its_blocks_and_the_fix(tmp_path, capsys):
    path = write(tmp_path, """blocksim: 1
blocks:
  Ref: {type: constant, value: 1}
  Err: {type: sum, signs: "+-"}
  Slew: {type: rate_limiter, rising: 1, falling: -1}
  K: {type: gain, K: 2}
wires: [Ref -> Err.u1, Err -> K, K -> Slew, Slew -> Err.u2]
simulation: {stop: 1}
""")
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1, err
    assert f"{path}:4: error: block 'Err': cannot determine the shape of the signals in the " \
           "loop Err -> K -> Slew -> Err" in err
    assert "x0: 0" in err and "x0: [0, 0, 0]" in err


def test_a_wrong_guess_from_x0_is_explained(tmp_path):
    path = write(tmp_path, """blocksim: 1
blocks:
  Delay: {type: unit_delay, period: 0.1}
  Pick: {type: function, expr: "[u[1], u[0]]"}
wires: [Delay -> Pick, Pick -> Delay]
simulation: {stop: 1}
""")
    with pytest.raises(blocksim.DiagramError) as info:
        blocksim.load(path)
    text = str(info.value)
    assert "block 'Pick'" in text and "'Delay' took its shape () from x0" in text
    assert "x0: [0, 0, 0]" in text


def _reversed_chain(n):
    """A constant through n gains, the gains listed against the dataflow (the last first)."""
    blocks = [f"  G{k}: {{type: gain, K: 1}}" for k in reversed(range(n))]
    wires = ["  - C -> G0"] + [f"  - G{k - 1} -> G{k}" for k in range(1, n)]
    return ("blocksim: 1\nblocks:\n" + "\n".join(blocks)
            + "\n  C: {type: constant, value: [1, 2]}\nwires:\n" + "\n".join(wires)
            + f"\nsimulation: {{stop: 1}}\nrecord: {{y: G{n - 1}.y}}\n")


def test_shape_propagation_asks_each_block_once_in_any_listing_order(tmp_path, monkeypatch):
    # listed against the dataflow, one pass over the blocks in declaration order settled one
    # block, so the passes asked input_shapes n^2/2 times (10,000 blocks: 48 s of `check`)
    from blocksim.engine.compiler import shapes
    calls = []
    original = shapes._Shapes.input_shapes

    def counted(self, name):
        calls.append(name)
        return original(self, name)
    monkeypatch.setattr(shapes._Shapes, "input_shapes", counted)
    n = 400
    model = blocksim.load(write(tmp_path, _reversed_chain(n)))
    assert len(calls) <= n + 1  # each gain and the constant, once
    assert model.outputs[(f"G{n - 1}", "y")].shape == (2,)  # the constant's shape, carried
