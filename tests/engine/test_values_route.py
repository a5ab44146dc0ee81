"""The one route of new values (compiler/revalue.py): a model given new values in place runs
exactly as the diagram compiled afresh with them (the second algorithm here is the full
compiler), and a change of structure compiles anew."""
from pathlib import Path

import numpy as np
import pytest

from blocksim.engine.compiler import compile_diagram
from blocksim.language.diagram import apply_overrides, load_diagram
from blocksim.errors import DiagramError
from blocksim.engine.simulator import simulate

DEMO3 = Path(__file__).resolve().parents[2] / "diagrams" / "demo3.yaml"

DELAY = """
blocksim: 1
parameters: {step: 1.0}
blocks:
  U: {type: constant, value: step}
  D: {type: unit_delay, period: 0.1, x0: 5}
  K: {type: gain, K: [[1, 0], [0, 2]]}
  V: {type: constant, value: [1, 2]}
wires: [U -> D, V -> K]
simulation: {stop: 1, solver: rk4, step: 0.05}
record: {acc: D.y, k: K.y}
"""


def fresh(source, overrides, text=None):
    return simulate(compile_diagram(load_diagram(source, overrides, text=text)))


class Routed:
    """A model compiled once from `base`, each run's values written in by the route (a
    sweep's way: each change applies to `base`); counts how each was taken."""

    def __init__(self, base):
        self.base = base
        self.model = compile_diagram(base.copy())
        self.compiles, self.routed = 1, 0

    def run(self, overrides):
        if self.model.compilation.change(self.model, overrides, base=self.base):
            self.routed += 1
        else:
            self.compiles += 1
        return simulate(self.model)

    @property
    def robots(self):
        return self.model.compilation.resources["robots"]


def assert_same(a, b):
    (ta, da, ia), (tb, db, ib) = a, b
    assert ia["error"] is None and ib["error"] is None
    assert np.array_equal(ta, tb)
    assert da.keys() == db.keys()
    for name in da:
        assert np.array_equal(da[name], db[name]), name
    assert ia["stats"] == ib["stats"]


def test_gains_and_perturbed_robots_take_the_route():
    base = load_diagram(DEMO3, [("simulation.stop", 2)])
    routed = Routed(base)
    cases = [
        [("blocks.Kp.K", 100)],
        [("blocks.Kp.K", 50), ("blocks.Kd.K", 5)],
        [("robots.p560p.perturb", 0.2), ("robots.p560p.seed", 7)],  # new robot data
        [("robots.p560p.perturb", 0.0), ("simulation.rtol", "1e-6")],
        [],  # back to the diagram's own values: those an earlier run set are undone
    ]
    for overrides in cases:
        assert_same(routed.run(overrides), fresh(DEMO3, [("simulation.stop", 2)] + overrides))
    assert (routed.compiles, routed.routed) == (1, 5)
    # an unchanged robot is not rebuilt: the same object serves the next run
    robot = routed.robots["p560"]
    routed.run([("blocks.Kp.K", 70)])
    assert routed.robots["p560"] is robot


def test_discrete_state_and_signals_start_afresh():
    routed = Routed(load_diagram("delay.yaml", text=DELAY))
    first = routed.run([])
    # a unit delay outputs its x0 = 5 until its second hit (t = 0.1), then the input
    assert first[1]["acc"][0] == 5 and first[1]["acc"][-1] == 1.0
    again = routed.run([("parameters.step", 2.0)])
    assert again[1]["acc"][0] == 5 and again[1]["acc"][-1] == 2.0
    assert_same(again, fresh("delay.yaml", [("parameters.step", 2.0)], DELAY))
    assert (routed.compiles, routed.routed) == (1, 2)


CHART = """
blocksim: 1
parameters: {c0: 2, T: 0.5, vals: [10, 20, 30]}
blocks:
  Clock: {type: clock}
  C:
    type: chart
    inputs: {t: 1}
    outputs: {y: 1, z: 1}
    data: {count: c0}
    states:
      A: {initial: true, entry: "count = count + 1; y = count; z = vals[0]"}
      B: {entry: "y = 2*count; z = vals[1]"}
    transitions:
      - {from: A, to: B, when: "t > 1", after: T}
wires: [Clock -> C.t]
simulation: {stop: 2, solver: rk45}
record: {y: C.y, z: C.z}
"""


def test_a_chart_takes_the_parameters_its_data_timers_and_actions_read():
    """A chart reads the diagram's parameters in its data's initial values (c0), its timers
    (after: T) and its actions (vals): new values of them are values, not structure, and the
    chart runs with them (it kept the first run's before). By hand: count = c0 + 1 and y =
    count in A; B from max(T, 1): y = 2 count."""
    routed = Routed(load_diagram("chart.yaml", text=CHART))
    for overrides, y, switch, z in [([("parameters.c0", 5)], (6, 12), 1.0, (10, 20)),
                                    ([("parameters.T", 1.5), ("parameters.vals", [1, 2, 3])],
                                     (3, 6), 1.5, (1, 2))]:
        t, data, _ = result = routed.run(overrides)
        assert (data["y"][0], data["y"][-1]) == y and (data["z"][0], data["z"][-1]) == z
        assert t[np.argmax(data["y"] != y[0])] == pytest.approx(switch, abs=1e-9)
        assert_same(result, fresh("chart.yaml", overrides, CHART))
    assert (routed.compiles, routed.routed) == (1, 2)


def test_a_label_that_looks_like_an_expression_is_only_text():
    """msd's scope labels its axes [m, m/s]: text that seems to read the parameter m. A new m
    is a value for the gain that reads it (the route), not a change to the scope (every run
    of a sweep over m compiled anew); x(t) of the routed model is the fresh compile's."""
    path = Path(__file__).resolve().parents[2] / "diagrams" / "msd.yaml"
    routed = Routed(load_diagram(path))
    assert routed.model.compilation.built.blocks["Scope"].p.units == ["m", "m/s"]
    for m in (2.0, 0.5):
        assert_same(routed.run([("parameters.m", m)]), fresh(path, [("parameters.m", m)]))
    assert (routed.compiles, routed.routed) == (1, 2)


def test_a_structure_change_compiles_anew():
    routed = Routed(load_diagram("delay.yaml", text=DELAY))
    wide = [("blocks.K.K", [[1, 0], [0, 2], [3, 4]])]  # K.y becomes a 3-vector
    t, data, _ = routed.run(wide)
    np.testing.assert_allclose(data["k"][0], [1, 4, 11])
    assert routed.compiles == 2
    t, data, _ = routed.run([])
    np.testing.assert_allclose(data["k"][0], [1, 4])
    assert (routed.compiles, routed.routed) == (3, 0)
    routed.run([("parameters.step", 3.0)])  # the model compiled anew takes the route too
    assert (routed.compiles, routed.routed) == (3, 1)


def refusal(run, overrides):
    with pytest.raises(DiagramError) as e:
        run(overrides)
    return str(e.value)


@pytest.mark.parametrize("overrides", [
    [("blocks.D.period", 0)],  # a structure: compiled anew, refused
    [("simulation.step", -1)],  # a setting
    [("blocks.K.K", "[[1, 0], [0, nope]]")],  # a value
    [("parameters.step", "1 / 0")],  # a parameter, and the block reading it
])
def test_an_invalid_value_is_refused_as_at_load_and_leaves_the_model_usable(overrides):
    routed = Routed(load_diagram("delay.yaml", text=DELAY))
    assert refusal(routed.run, overrides) == \
        refusal(lambda o: fresh("delay.yaml", o, DELAY), overrides)
    assert_same(routed.run([("parameters.step", 4.0)]),
                fresh("delay.yaml", [("parameters.step", 4.0)], DELAY))
    assert routed.model.settings.step == 0.05 and routed.compiles == 1


def test_hybrid_blocks_get_their_indicators_back():
    # a bouncing ball's integrator resets at impacts (zero-crossing events); another
    # restitution coefficient is a value, not a structure
    ball = DEMO3.parent / "bouncing_ball.yaml"
    routed = Routed(load_diagram(ball))
    for cr in (0.8, 0.5):
        overrides = [("parameters.cr", cr), ("simulation.stop", 4)]
        mine, theirs = routed.run(overrides), fresh(ball, overrides)
        assert_same(mine, theirs)
        assert len(mine[2]["events"][0]) > 3  # several bounces
    assert (routed.compiles, routed.routed) == (1, 2)


ARM = """
blocksim: 1
parameters: {L1: 1.0, m1: 2.0, torque: 0.0}
robots:
  arm: {links: [{a: L1, m: m1, r: [-0.5, 0, 0]}, {a: 1, m: 1, r: [-0.5, 0, 0]}],
        gravity: [0, 0, 0]}
blocks:
  Tau: {type: constant, value: "[torque, 0]"}
  Robot: {type: robot, robot: arm}
wires: [Tau -> Robot]
simulation: {stop: 0.1}
record: {q: Robot.q}
"""


def test_a_robot_may_use_the_parameters_and_is_rebuilt_when_they_change():
    """An inline robot's link values may name top-level parameters. A change of one of them
    gets a new robot; one changing another parameter keeps it (the same object)."""
    routed = Routed(load_diagram("arm.yaml", text=ARM))
    robot = routed.robots["arm"]
    # link a_1 = L1 = 1, a_2 = 1: the tool at q = 0 is at x = L1 + 1 = 2 (planar 2R, DH)
    assert list(robot.a) == [1.0, 1.0] and robot.fkine(np.zeros(2))[0, 3] == 2.0
    routed.run([("parameters.torque", 1.0)])
    assert routed.robots["arm"] is robot
    routed.run([("parameters.L1", 1.5)])
    rebuilt = routed.robots["arm"]
    assert rebuilt is not robot and list(rebuilt.a) == [1.5, 1.0] and rebuilt.m[0] == 2.0
    assert_same(routed.run([("parameters.L1", 1.5), ("parameters.torque", 1.0)]),
                fresh("arm.yaml", [("parameters.L1", 1.5), ("parameters.torque", 1.0)], ARM))
    assert routed.robots["arm"] is rebuilt  # built once for those options
    assert routed.compiles == 1


def test_a_robot_cannot_use_a_parameter_that_needs_a_robot():
    text = ARM.replace("{L1: 1.0,", '{L1: "arm.qz[0] + 1",')
    with pytest.raises(DiagramError, match="arm.yaml:5: error: links\\[0\\].a: parameter 'L1' "
                                           "cannot be used here: robots are built before"):
        compile_diagram(load_diagram("arm.yaml", text=text))


READERS = """
blocksim: 1
parameters: {a: 2.0, b: a + 1, c: 0.5, T: 0.1}
blocks:
  S: {type: step, time: c, before: 0, after: 2*c}
  A: {type: gain, K: a}
  B: {type: gain, K: 2*a}
  C: {type: gain, K: b}
  D: {type: gain, K: c}
  I: {type: integrator, x0: 0}
  Z1: {type: unit_delay, period: T, x0: 0}
  Z2: {type: unit_delay, period: 0.1, x0: 1}
wires: [S -> A, A -> B, B -> C, C -> D, D -> I, I -> Z1, Z1 -> Z2]
simulation: {stop: 1, solver: rk4, step: 0.01}
record: {y: I.y, z: Z2.y}
"""


def test_the_dependency_map_reaches_exactly_the_blocks_reading_a_changed_name(tmp_path):
    """A diagram parameter read by several blocks' expressions (directly, and through another
    parameter) gives new values to exactly those: the others keep their very parameters
    (nothing evaluated again); a block whose text is set to read the name is reached by it
    from then on. The values are those written by hand from the diagram's expressions."""
    import blocksim
    path = tmp_path / "readers.yaml"
    path.write_text(READERS)
    model = blocksim.load(path, {"simulation.mode": "normal"})
    comp, signals = model.compilation, model.signals
    before = {b.name: b.p for b in model.blocks}
    model.set("parameters.a", 3)
    assert model.compilation is comp and model.signals is signals  # the route: no compile
    changed = {b.name for b in model.blocks if b.p is not before[b.name]}
    assert changed == {"A", "B", "C"}  # K: a, 2*a, b = a + 1
    assert [model.block(n).p.K for n in "ABC"] == [3, 6, 4]
    assert model.block("D").p.K == 0.5
    model.set("blocks.D.K", "a * c")  # D reads a now
    before = {b.name: b.p for b in model.blocks}
    model.set("parameters.a", 5)
    assert {b.name for b in model.blocks if b.p is not before[b.name]} == {"A", "B", "C", "D"}
    assert [model.block(n).p.K for n in "ABCD"] == [5, 10, 6, 2.5]
    model.set("parameters.c", 0.25)  # read by the step's time and final value, and D's K
    assert [model.block("S").p.time, model.block("S").p.after, model.block("D").p.K] == \
        [0.25, 0.5, 1.25]
    model.set("blocks.S.before", "c - 1")  # S entered again: two of its texts read c
    model.set("parameters.c", 0.5)
    assert [model.block("S").p.before, model.block("S").p.after] == [-0.5, 1.0]
    assert model.compilation is comp


@pytest.mark.parametrize("mode", ["normal", "accelerated"])
def test_values_set_through_the_map_equal_a_fresh_load_with_them(tmp_path, mode):
    """Model.set of the diagram's parameters, then a sample time that splits two delays that
    shared one (structure: compiled anew), each run equal bit for bit to the diagram loaded
    with those values (the second algorithm: the full compiler), in both modes."""
    import blocksim
    path = tmp_path / "readers.yaml"
    path.write_text(READERS)
    base = {"simulation.mode": mode}
    model = blocksim.load(path, base)
    comp = model.compilation
    given = {}
    for change in ({"parameters.a": 3}, {"parameters.c": 0.25, "blocks.D.K": "a * c"},
                   {"parameters.b": "a - 1"}):
        given.update(change)
        result = blocksim.execute(model.set(change))
        assert model.compilation is comp and result.meta["mode"]["mode"] == mode
        fresh_run = blocksim.run(path, {**base, **given})
        np.testing.assert_array_equal(result.t, fresh_run.t)
        for name in ("y", "z"):
            np.testing.assert_array_equal(result[name], fresh_run[name])
        # meta.json's configuration, made from the previous one's, is the fresh load's
        assert result.meta["configuration"] == fresh_run.meta["configuration"]
    given["parameters.T"] = 0.05  # Z1 no longer shares Z2's sample time
    result = blocksim.execute(model.set("parameters.T", 0.05))
    assert model.compilation is not comp
    fresh_run = blocksim.run(path, {**base, **given})
    np.testing.assert_array_equal(result.t, fresh_run.t)
    for name in ("y", "z"):
        np.testing.assert_array_equal(result[name], fresh_run[name])


def test_a_copy_of_a_spec_changes_its_own_blocks_only():
    """DiagramSpec.copy shares the blocks' specs until an override changes one (a set costs
    the same in a diagram of any size): the copy's change (a parameter, an entry of a
    mapping, an inport's value) leaves the spec it was copied from, and an earlier copy,
    as they were; the blocks no override touched stay shared."""
    spec = load_diagram("delay.yaml", text=DELAY)
    first = spec.copy()
    apply_overrides(first, [("blocks.K.K", 3)])
    second = first.copy()
    apply_overrides(second, [("blocks.K.K", 4), ("blocks.D.x0", 6)])
    assert [s.blocks["K"].params["K"].raw for s in (spec, first, second)] == \
        [[[1, 0], [0, 2]], 3, 4]
    assert [s.blocks["D"].params["x0"].raw for s in (spec, first, second)] == [5, 5, 6]
    assert second.blocks["U"] is first.blocks["U"] is spec.blocks["U"]
    assert first.blocks["K"] is not spec.blocks["K"]
    # a compile of the copy runs with its values, the original's with its own
    assert_same(simulate(compile_diagram(second)),
                fresh("delay.yaml", [("blocks.K.K", 4), ("blocks.D.x0", 6)], text=DELAY))
    np.testing.assert_array_equal(simulate(compile_diagram(spec))[1]["k"][0], [1, 4])
    # a spec changed after it was copied (one it changed itself before, one loaded) leaves
    # its copies as they were
    third = second.copy()
    apply_overrides(second, [("blocks.K.K", 7)])
    later = spec.copy()
    apply_overrides(spec, [("blocks.D.x0", 8)])
    assert (third.blocks["K"].params["K"].raw, later.blocks["D"].params["x0"].raw) == (4, 5)


@pytest.mark.parametrize("a, b", [
    ([3.0], [3.0]), ([3.0], [3.5]), ([np.nan], [np.nan]), ([0.0], [-0.0]), ([1, 2], [1.0, 2.0]),
    ([True], [1]), ([1 + 2j], [1 + 2j]), ([[1, 2], [3, 4]], [[1, 2], [3, 5]]), ([], []),
    (np.arange(100.0), np.arange(100.0)), (["a"], ["a"]), (2.0, 2.0), (np.nan, np.nan)])
def test_a_value_is_the_same_exactly_when_numpy_says_its_arrays_are_equal(a, b):
    """same_data's quick comparison of small arrays answers as numpy.array_equal (the
    reference) does: NaN unequal, -0.0 equal to 0.0, values equal across dtypes."""
    from blocksim.engine.compiler.values import same_data
    a, b = np.asarray(a), np.asarray(b)
    assert same_data(a, b) is bool(np.array_equal(a, b))
    assert not same_data(a, b.reshape(-1, 1))  # another shape: never the same


def test_a_declared_fact_that_changes_compiles_anew():
    """pid_motor's motor K/(tau s + 1) with tau = 0 is a pure gain K (no state): the order
    fact of its declared realisation (tf_texts) changes, which compiles anew (the texts for
    the old order would divide by den[0] = 0) and equals a fresh compile; tau = 0.25 and K
    = 3, the same order, take the route and equal a fresh compile bit for bit."""
    path = Path(__file__).resolve().parents[2] / "diagrams" / "pid_motor.yaml"
    base = [("simulation.stop", 2)]
    routed = Routed(load_diagram(path, base))
    for change in ([("parameters.tau", 0.25), ("parameters.K", 3)], [("parameters.tau", 0)]):
        assert_same(routed.run(change), fresh(path, base + change))
    assert (routed.compiles, routed.routed) == (2, 1)
