"""Model.set's direct way (compiler/revalue.py): a number for a parameter that is one number
of P and nothing else (rundata.direct_param) is checked by its Param and written into P and
the block's parameters, without the general way's evaluation and staging. The second
algorithm is the general way itself (the direct way turned off): the values, the results,
meta.json and the refusals are the same; every other change still takes the general way."""
import numpy as np
import pytest

import blocksim
from blocksim.engine.compiler import revalue
from blocksim.errors import DiagramError

DIAGRAM = """
blocksim: 1
parameters: {k: 2.0}
blocks:
  Src: {type: sine, amplitude: 1, frequency: 3}
  G: {type: gain, K: k}
  One: {type: constant, value: 1}
  Zero: {type: constant, value: 0}
  Sw: {type: switch, threshold: 0.25}
  I: {type: integrator, x0: 1}
  Sat: {type: saturation, lower: -0.5, upper: 1.5}
wires: [Src -> G, One -> Sw.u1, G -> Sw.u2, Zero -> Sw.u3, Sw -> I, I -> Sat]
simulation: {stop: 2, solver: rk45}
record: {y: Sat.y, s: Sw.y}
"""

# (path, value): G.K (kind value) and Sw.threshold (kind scalar) are direct; a text, a
# later value of the diagram's parameter, then direct again over a text's value
STEPS = [("blocks.G.K", 3.5), ("blocks.Sw.threshold", 1), ("blocks.G.K", -2),
         ("parameters.k", 0.5), ("blocks.G.K", "4 * k"), ("parameters.k", 1.0),
         ("blocks.G.K", 1.25), ("blocks.Sw.threshold", -0.125)]
DIRECT = {"blocks.G.K", "blocks.Sw.threshold"}


@pytest.fixture(scope="module")
def diagram(tmp_path_factory):
    """direct.yaml, written once for the module (its tests only read it)."""
    path = tmp_path_factory.mktemp("direct") / "direct.yaml"
    path.write_text(DIAGRAM)
    return path


def ways(monkeypatch):
    """[the direct way's calls, the general way's calls] of Revalue from now on."""
    calls = [0, 0]
    direct, plan = revalue.Revalue._direct, revalue.Revalue._plan

    def counted_direct(self, *args):
        taken = direct(self, *args)
        calls[0] += taken
        return taken

    def counted_plan(self, *args):
        calls[1] += 1
        return plan(self, *args)

    monkeypatch.setattr(revalue.Revalue, "_direct", counted_direct)
    monkeypatch.setattr(revalue.Revalue, "_plan", counted_plan)
    return calls


def general_only(monkeypatch):
    """The direct way turned off: no parameter is direct."""
    monkeypatch.setattr(revalue, "direct_param", lambda *args: None)


def assert_same_values(a, b):
    """The two models' values, blocks' parameters, spec and configuration are the same."""
    assert a.context.P.tobytes() == b.context.P.tobytes()
    assert a.context.x0.tobytes() == b.context.x0.tobytes()
    for x, y in zip(a.blocks, b.blocks):
        px, py = vars(x.p), vars(y.p)
        assert px.keys() == py.keys(), x.name
        for name in px:
            if not name.startswith("_"):  # the same value, of the same type
                assert type(px[name]) is type(py[name]), (x.name, name)
                assert np.array_equal(px[name], py[name]), (x.name, name)
        assert px["_names"].keys() == py["_names"].keys()
        assert all(np.array_equal(px["_names"][n], py["_names"][n]) for n in px["_names"])
    assert list(a.spec.overrides.items()) == list(b.spec.overrides.items())
    assert {n: [(k, v.raw, v.loc) for k, v in s.params.items()]
            for n, s in a.spec.blocks.items()} == \
        {n: [(k, v.raw, v.loc) for k, v in s.params.items()] for n, s in b.spec.blocks.items()}
    assert a.config == b.config


def assert_same_results(r, s):
    assert r.t.tobytes() == s.t.tobytes()
    for name in ("y", "s"):
        assert r[name].tobytes() == s[name].tobytes(), name
    skip = ("created", "wall_time", "figures_time", "figure_times", "compile_time",
            "cache_hit")  # the times, and whether the first run compiled or found the code

    def kept(meta):
        return {k: kept(v) if isinstance(v, dict) and k == "mode" else v
                for k, v in meta.items() if k not in skip}
    assert kept(r.meta) == kept(s.meta)


@pytest.mark.parametrize("mode", ["normal", "accelerated"])
def test_a_direct_set_equals_the_general_way(diagram, monkeypatch, mode):
    """Each step set on one model by the route as it is and on another with the direct way
    turned off: the same values, spec, configuration, results bit for bit and meta.json,
    after each step (a general set after direct ones included)."""
    direct_model = blocksim.load(diagram, {"simulation.mode": mode})
    calls = ways(monkeypatch)
    direct_results = []
    for path, value in STEPS:
        direct_results.append(blocksim.execute(direct_model.set(path, value)))
    # the direct way took exactly the numbers for direct parameters
    assert calls == [sum(p in DIRECT and not isinstance(v, str) for p, v in STEPS),
                     sum(p not in DIRECT or isinstance(v, str) for p, v in STEPS)]
    assert direct_results[-1].meta["mode"]["mode"] == mode
    general_only(monkeypatch)
    general_model = blocksim.load(diagram, {"simulation.mode": mode})
    for (path, value), direct_result in zip(STEPS, direct_results):
        general_result = blocksim.execute(general_model.set(path, value))
        assert_same_results(direct_result, general_result)
    assert calls[0] == sum(p in DIRECT and not isinstance(v, str) for p, v in STEPS)
    assert_same_values(direct_model, general_model)
    # by hand: G.K = 1.25 and the threshold -0.125 at the end; G's output is K*sin(3t)
    assert float(direct_model.block("G").v.K) == 1.25
    assert direct_model.block("Sw").p.threshold == -0.125


@pytest.mark.parametrize("path, value", [
    ("blocks.G.K", float("nan")), ("blocks.G.K", float("inf")),
    ("blocks.Sw.threshold", -float("inf")), ("blocks.G.K", True), ("blocks.G.K", "nope"),
    ("blocks.G.K", 10 ** 400)])
def test_a_refused_value_says_what_the_general_way_says(diagram, monkeypatch, path, value):
    """A number the Param refuses (or a bool, a text, an integer too big for a float) is
    refused with the general way's message, and the model stays as it was."""
    def refused(model):
        before = (model.context.P.copy(), dict(model.spec.overrides), model.block("G").p)
        with pytest.raises(DiagramError) as e:
            model.set(path, value)
        assert model.context.P.tobytes() == before[0].tobytes()
        assert model.spec.overrides == before[1] and model.block("G").p is before[2]
        return str(e.value)

    said = refused(blocksim.load(diagram))
    general_only(monkeypatch)
    assert said == refused(blocksim.load(diagram))
    assert said.startswith("model.set['" + path)


def test_what_is_more_than_a_number_of_p_takes_the_general_way(diagram, monkeypatch):
    """An initial state (Python reads it), limits with a declared check, a list, a text, a
    diagram parameter, a setting, several changes one of which is not direct: the general
    way, each once."""
    model = blocksim.load(diagram)
    calls = ways(monkeypatch)
    for change in ({"blocks.I.x0": 2.0}, {"blocks.Sat.upper": 2.0}, {"blocks.Sw.threshold": [0.5]},
                   {"blocks.G.K": "3"}, {"parameters.k": 3.0}, {"simulation.stop": 1.5},
                   {"blocks.G.K": 2.0, "blocks.I.x0": 0.5}):
        model.set(change)
    assert calls == [0, 7]
    model.set({"blocks.G.K": 2.5, "blocks.Sw.threshold": 0.5})  # both direct: at once
    assert calls == [1, 7]
    assert float(model.block("G").v.K) == 2.5 and model.block("Sw").p.threshold == 0.5


def test_a_path_that_is_not_text_is_refused_as_before(diagram):
    """The direct way looks only at text paths: any other is apply_overrides' error."""
    model = blocksim.load(diagram)
    with pytest.raises(DiagramError, match="an override must be 'path=value'"):
        model.set(["blocks", "G", "K"], 1.0)
