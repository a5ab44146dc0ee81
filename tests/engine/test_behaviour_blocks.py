"""A block type written once (Block.behaviour): a discrete accumulator declared in the
expression language alone runs in both modes with the same numbers, the values a sum by hand
gives, and a new value of its parameter reaches both modes without a new build."""
import numpy as np
import pytest

import blocksim
from blocksim.block import Block, In, Out, Sample
from blocksim.language import library
from blocksim.language.behaviour import Behaviour
from blocksim.params import Param


class Accumulator(Block):
    """y[k] = xd[k], xd[k+1] = xd[k] + K*u[k] at the hits k*period: K times the sum of the
    samples before."""

    type = "accumulator"
    params = (Param("K", "value", 1.0, "gain of each sample"),
              Param("period", "scalar", 0.1, "sample period (s)", positive=True))
    behaviour = Behaviour(outputs={"y": "xd"}, update="xd + K * u", state="u")

    def __init__(self, name, params):
        super().__init__(name, params)
        self.sample = Sample(self.p.period)

    def ports(self):
        return [In("u")], [Out("y", feedthrough=())]

    def infer(self, shapes):
        self._shape = shapes["u"]
        return {"y": self._shape}

    def declare(self, d):
        d.param("K", self._shape)

    def discrete_state(self):
        return np.zeros(int(np.prod(self._shape, dtype=int)))


DIAGRAM = """blocksim: 1
blocks:
  C: {type: clock}
  V: {type: constant, value: [1, -2]}
  G: {type: product, ops: "**"}
  A: {type: accumulator, K: [0.5, 3], period: 0.1}
wires: [C -> G.u1, V -> G.u2, G -> A]
simulation: {stop: 1, solver: rk4, step: 0.05, output_interval: 0.1}
record: {y: A.y}
"""


@pytest.fixture
def diagram(monkeypatch, tmp_path):
    monkeypatch.setattr(library, "_registered", {})
    blocksim.register_block(Accumulator)
    path = tmp_path / "acc.yaml"
    path.write_text(DIAGRAM)
    return path


def test_an_accumulator_written_once_runs_in_both_modes(diagram):
    normal = blocksim.run(diagram, overrides={"simulation.mode": "normal"})
    compiled = blocksim.run(diagram, overrides={"simulation.mode": "accelerated"})
    assert compiled.meta["mode"]["mode"] == "accelerated"
    np.testing.assert_array_equal(compiled["y"], normal["y"])
    # by hand: at the hit t_j = 0.1 j, y is the state before that hit's update (as a unit
    # delay's): K * [1, -2] * 0.1 * (0 + 1 + ... + (j - 1))
    j = np.round(normal.t / 0.1)
    expected = np.outer(0.1 * (j - 1) * j / 2, [0.5 * 1, 3 * -2])
    np.testing.assert_allclose(normal["y"], expected, rtol=1e-12, atol=1e-12)


def test_a_new_value_reaches_the_behaviour_in_both_modes(diagram):
    for mode in ("normal", "accelerated"):
        model = blocksim.load(diagram, overrides={"simulation.mode": mode})
        first = blocksim.execute(model)["y"]
        model.set({"blocks.A.K": [1.0, 6]})  # twice each: the views read the new values
        np.testing.assert_allclose(blocksim.execute(model)["y"], first * 2, rtol=1e-12)


class Twice(Block):
    """y = 2 x: an input named like a state, on a block without one."""

    type = "twice"
    behaviour = Behaviour(outputs={"y": "2 * x"})

    def ports(self):
        return [In("x")], [Out("y")]

    def infer(self, shapes):
        return {"y": shapes["x"]}


def test_an_input_named_x_is_read_as_the_input_where_the_block_has_no_state(
        monkeypatch, tmp_path):
    monkeypatch.setattr(library, "_registered", {})
    blocksim.register_block(Twice)
    path = tmp_path / "twice.yaml"
    path.write_text("blocksim: 1\nblocks:\n  V: {type: constant, value: [1.5, -4]}\n"
                    "  T: {type: twice}\nwires: [V -> T.x]\nsimulation: {stop: 0.1}\n"
                    "record: {y: T.y}\n")
    for mode in ("normal", "accelerated"):
        result = blocksim.run(path, overrides={"simulation.mode": mode})
        np.testing.assert_array_equal(result["y"][-1], [3.0, -8.0])  # by hand: 2 * value


class Lag(Block):
    """dx/dt = u - x, with outputs named like the states: z = 3 x, xd = x + u."""

    type = "lag_named_like_states"
    behaviour = Behaviour(outputs={"z": "3 * x", "xd": "x + u"}, derivative="u - x")

    def ports(self):
        return [In("u", shape=(1,))], [Out("z", shape=(1,), feedthrough=()),
                                       Out("xd", shape=(1,))]

    def continuous_state(self):
        return np.zeros(1)


class Misnamed(Twice):
    """initialize writes a port the block does not have."""

    type = "misnamed"
    behaviour = Behaviour(outputs={"y": "2 * x"}, initialize={"w": "x"})


class Unshaped(Twice):
    """Its states take the shape of a port it does not have."""

    type = "unshaped"
    behaviour = Behaviour(outputs={"y": "2 * x"}, state="w")


LAG = """blocksim: 1
blocks:
  S: {type: step, time: 0, after: [1]}
  L: {type: lag_named_like_states}
wires: [S -> L]
simulation: {stop: 2, solver: rk45, rtol: 1e-10, atol: 1e-12}
record: {z: L.z, xd: L.xd}
"""


def test_output_ports_named_like_the_states_are_written_as_ports(monkeypatch, tmp_path):
    """Outputs z and xd are the ports, not the indicators or the discrete state (normal mode
    wrote z into the block's missing indicators and failed; accelerated mode wrote C's z),
    and linearize takes their rows."""
    monkeypatch.setattr(library, "_registered", {})
    blocksim.register_block(Lag)
    path = tmp_path / "lag.yaml"
    path.write_text(LAG)
    for mode in ("normal", "accelerated"):
        result = blocksim.run(path, overrides={"simulation.mode": mode})
        assert result.meta["mode"]["mode"] == mode
        x = 1 - np.exp(-result.t)  # by hand: a unit step through 1/(s + 1) from rest
        np.testing.assert_allclose(result["z"][:, 0], 3 * x, atol=1e-8)
        np.testing.assert_allclose(result["xd"][:, 0], x + 1, atol=1e-8)
    lin = blocksim.linearize(path, inputs=["S.y"], outputs=["L.z", "L.xd"], at=0)
    # A = -1, B = 1; z = 3 x, xd = x + u (by hand)
    np.testing.assert_array_equal([lin.A[0, 0], lin.B[0, 0]], [-1, 1])
    np.testing.assert_array_equal(lin.C[:, 0], [3, 1])
    np.testing.assert_array_equal(lin.D[:, 0], [0, 1])


@pytest.mark.parametrize("kind, said", [
    (Misnamed, "initialize w 'x': the block has no output port of that name"),
    (Unshaped, "state 'w': the block has no port of that name")])  # was a bare KeyError
def test_a_text_for_a_port_the_block_lacks_names_it(monkeypatch, tmp_path, kind, said):
    monkeypatch.setattr(library, "_registered", {})
    blocksim.register_block(kind)
    path = tmp_path / "misnamed.yaml"
    path.write_text("blocksim: 1\nblocks:\n  V: {type: constant, value: 1}\n"
                    f"  M: {{type: {kind.type}}}\nwires: [V -> M.x]\nsimulation: {{stop: 1}}\n")
    with pytest.raises(blocksim.DiagramError, match=r"misnamed.yaml:4: error: block 'M'.*"
                       + said):
        blocksim.load(path)
