"""Enabled and triggered subsystems against their outputs derived by hand (piecewise closed
forms, values at the located edges), their events, linearisation in the current enable
state, and their FILE:LINE errors. The diagrams are the both-modes corpus's
(tests/accel/corpus/conditional_*.yaml), so accelerated mode is held to the same truth."""
import math
import textwrap
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.cli import main
from bad_diagrams import check_bad

CORPUS = Path(__file__).resolve().parents[1] / "accel" / "corpus"
ENABLED = CORPUS / "conditional_enabled.yaml"
TRIGGERED = CORPUS / "conditional_triggered.yaml"
PI = math.pi
EVENT_TOL = 1e-9  # the switch instants are located to 1e-10 relative (event_tol)


@pytest.fixture(scope="module")
def enabled():
    return blocksim.run(ENABLED)


@pytest.fixture(scope="module")
def triggered():
    return blocksim.run(TRIGGERED)


def away(t, instants):
    """Rows further than the event tolerance from every instant (at an instant a row holds
    the value after it, which a closed form evaluated there may place on either side)."""
    return np.min(np.abs(t[:, None] - np.asarray(instants)[None, :]), axis=1) > EVENT_TOL


def test_an_enabled_integrator_integrates_while_the_enable_is_positive(enabled):
    # dy/dt = c = 2 while sin t > 0, else y holds: y = c * (k pi + min(t - 2 pi k, pi)),
    # k = floor(t / 2 pi) (the time sin has been positive)
    t, c = enabled.t, 2.0
    k = np.floor(t / (2 * PI))
    rem = t - 2 * PI * k
    on = np.sin(t) > 0
    np.testing.assert_allclose(enabled["held"], c * (k * PI + np.minimum(rem, PI)), atol=1e-8)
    # outputs_when_disabled: reset -> initial (-1) while disabled, the state still held
    np.testing.assert_allclose(enabled["reset_out"], np.where(on, c * (k * PI + np.minimum(
        rem, PI)), -1.0), atol=1e-8)
    # states_when_enabling: reset -> c (t - 2 pi k) while enabled, held at c pi after
    ok = away(t, PI * np.arange(4))
    np.testing.assert_allclose(enabled["reset_states"][ok], np.where(on, c * rem, c * PI)[ok],
                               atol=1e-8)


def test_the_switch_instants_are_located_at_the_enables_zero_crossings(enabled):
    # sin t crosses 0 at k pi (the first, at 0, as sin leaves 0): 4 switches in 10 s each
    names = enabled.meta["event_blocks"]
    times = enabled.events_t[enabled.events_block == names.index("Held")]
    np.testing.assert_allclose(times, PI * np.arange(4), atol=EVENT_TOL)
    assert enabled.meta["events"]["per_block"]["Counter"] == 20  # on and off each second


def test_an_enabled_discrete_counter_runs_at_the_hits_where_it_is_enabled(enabled):
    # Simulink: a hit at t_j runs the subsystem when the enable is > 0 at t_j (decided
    # first at that instant). The pulse is 1 on [k, k + 0.5): hits k, ..., k + 0.4 run,
    # k + 0.5 does not; Sum counts the runs so far
    hits = np.round(0.1 * np.arange(101), 10)
    ran = hits[np.round(hits % 1, 10) < 0.5]
    expected = [np.sum(ran <= t + 1e-12) for t in enabled.t]
    np.testing.assert_array_equal(enabled["n"], expected)


def test_nested_enables_both_gate_the_inner_blocks(enabled):
    # 1 integrated while sin t > 0 and cos t > 0 (t in (2 pi k, 2 pi k + pi/2)), then
    # saturated at 1.5: min(k pi/2 + min(rem, pi/2), 1.5)
    t = enabled.t
    k = np.floor(t / (2 * PI))
    inner = k * PI / 2 + np.minimum(t - 2 * PI * k, PI / 2)
    np.testing.assert_allclose(enabled["nested"], np.minimum(inner, 1.5), atol=1e-8)


def held(t, edges, value, before):
    """The value at the last edge <= t, `before` before the first."""
    out = np.full(t.shape, float(before))
    for e in edges:
        out[t >= e] = value(e)
    return out


# sin(5 t - 0.5) rises through 0 at (0.5 + 2 pi k)/5, falls at (0.5 + pi + 2 pi k)/5
RISING = (0.5 + 2 * PI * np.arange(7)) / 5
FALLING = (0.5 + PI + 2 * PI * np.arange(6)) / 5


@pytest.mark.parametrize("name, edges, before", [
    ("rise", RISING, -7.0), ("fall", FALLING, 0.0),
    ("both", np.sort(np.r_[RISING, FALLING]), 0.0)])
def test_a_triggered_sample_and_hold_holds_the_input_at_each_edge(triggered, name, edges,
                                                                  before):
    # y = sin(1.3 t_k) from the edge t_k to the next, `initial` (-7 for rise) before
    t = triggered.t
    ok = away(t, edges)
    ref = held(t, edges, lambda e: math.sin(1.3 * e), before)
    np.testing.assert_allclose(triggered[name][ok], ref[ok], rtol=0, atol=1e-9)
    runs = triggered.meta["events"]["per_block"][name.capitalize()]
    assert runs == len(edges)


def test_a_unit_delay_inside_counts_the_runs(triggered):
    # Sum = 1 + the unit delay's output (the previous Sum): k after the k-th edge
    t = triggered.t
    ok = away(t, RISING)
    np.testing.assert_array_equal(triggered["n"][ok],
                                  held(t, RISING, lambda e: np.sum(RISING <= e), 0.0)[ok])


def test_an_edge_made_by_another_blocks_event_runs_it(triggered):
    # the relational output sin t > 0.5 rises at pi/6 + 2 pi k (its own located crossing):
    # the zoh inside samples the ramp 2 t there
    t = triggered.t
    edges = PI / 6 + 2 * PI * np.arange(2)
    ok = away(t, edges)
    np.testing.assert_allclose(triggered["cross"][ok], held(t, edges, lambda e: 2 * e, 0.0)[ok],
                               rtol=0, atol=1e-9)


def test_a_trigger_with_an_enable_runs_only_while_enabled(triggered):
    # the step enables it until t = 2: the rising edges 0.1 and 1.357 only
    t = triggered.t
    edges = RISING[RISING < 2]
    ok = away(t, RISING)
    np.testing.assert_allclose(triggered["gated"][ok],
                               held(t, edges, lambda e: math.sin(1.3 * e), 0.0)[ok], atol=1e-9)


def test_a_trigger_inside_an_enabled_subsystem_sees_only_its_enabled_edges(triggered):
    # edges while sin t > 0 (0.1, 1.357, 2.613, 6.383, 7.640); a saturation inside decides
    # its mode from its input at each run: clip(sin(1.3 t_k), -0.5, 0.5)
    t = triggered.t
    edges = RISING[np.sin(RISING) > 0]
    ok = away(t, RISING)
    ref = held(t, edges, lambda e: min(max(math.sin(1.3 * e), -0.5), 0.5), 0.0)
    np.testing.assert_allclose(triggered["nested"][ok], ref[ok], atol=1e-9)


def test_the_start_is_no_edge(tmp_path):
    # a pulse is high from t = 0 (its initialize sets it, after a first evaluation at 0):
    # Simulink runs nothing then; the first run is at the rising edge 0.5
    path = tmp_path / "d.yaml"
    path.write_text(textwrap.dedent("""\
        blocksim: 1
        blocks:
          Clock: {type: pulse, period: 0.5}
          Time: {type: clock}
          Hold:
            type: subsystem
            trigger: Clock.y
            initial: -1
            diagram: {inputs: {u: G}, outputs: {y: G.y}, blocks: {G: {type: gain, K: 1}}}
        wires: [Time -> Hold.u]
        simulation: {stop: 1.2, output_interval: 0.25}
        record: {held: Hold.y}
        """))
    run = blocksim.run(path)
    np.testing.assert_array_equal(run["held"], [-1, -1, 0.5, 0.5, 1.0, 1.0])


def test_a_model_runs_again_from_its_start():
    # flags, held outputs and the signals of blocks not run yet start afresh each run
    model = blocksim.load(ENABLED)
    first = blocksim.execute(model)
    second = blocksim.execute(model)
    for name in first.keys():
        np.testing.assert_array_equal(first[name], second[name], err_msg=name)


@pytest.mark.parametrize("mode", ["normal", "accelerated"])
def test_their_options_are_set_as_block_parameters_are(mode):
    # Held given outputs reset to 3 while disabled, and states reset on enabling: the
    # closed forms of the first test with -1 replaced by 3 and held states by reset ones
    model = blocksim.load(ENABLED, [f"simulation.mode={mode}", "simulation.stop=7"])
    model.set({"blocks.Held.outputs_when_disabled": "reset", "blocks.Held.initial": 3,
               "blocks.Held.states_when_enabling": "reset"})
    run = blocksim.execute(model)
    t, c = run.t, 2.0
    rem = t - 2 * PI * np.floor(t / (2 * PI))
    ok = away(t, PI * np.arange(3))
    np.testing.assert_allclose(run["held"][ok], np.where(np.sin(t) > 0, c * rem, 3.0)[ok],
                               atol=1e-8)
    with pytest.raises(blocksim.DiagramError, match="'edge' cannot be set"):
        model.set("blocks.Held.edge", "rising")


@pytest.mark.parametrize("mode", ["normal", "accelerated"])
def test_a_sweep_runs_them(mode, tmp_path):
    # at t = 4 (sin 4 < 0, disabled since pi): Held holds c pi, ResetOut reads its initial
    # (an accelerated sweep's rerun of the compiled code failed on the subsystem's block)
    grid = {"parameters.c": [1.0, 3.0], "blocks.ResetOut.initial": [-1, 4]}
    table = blocksim.sweep(ENABLED, grid=grid, workers=1, out=tmp_path,
                           metrics={"h": "final(held)", "r": "final(reset_out)"},
                           overrides={"simulation.mode": mode, "simulation.stop": 4})
    assert [row["status"] for row in table.rows] == ["ok"] * 4, table.rows
    for row in table.rows:
        assert row["h"] == pytest.approx(row["parameters.c"] * PI, abs=1e-8)
        assert row["r"] == row["blocks.ResetOut.initial"]


def test_the_report_lists_them_and_auto_mode_may_compile_them(tmp_path):
    from blocksim.accel.mode import decide
    assert "no compiled form" not in decide(blocksim.load(TRIGGERED)).why
    blocksim.run(TRIGGERED, out=tmp_path, plots=True, overrides={"simulation.stop": 2})
    page = (tmp_path / "report.html").read_text()
    assert "Enabled and triggered subsystems" in page
    # rising edges of sin(5 t - 0.5) before 2 s: 0.1, 1.357; the enable Sin.y > 0 switched at
    # pi (after 2 s): only its first decision, not an event
    for row in ("triggered by Clock.y, rising edges</td><td>initial = {y: -7}</td><td>2 runs",
                "triggered by Clock.y, rising edges, while Until.y &gt; 0", "enabled by Sin.y"):
        assert row in page, row


LOOP = """\
blocksim: 1
parameters: {active: 1}
blocks:
  Ref: {type: step, time: 100}
  Err: {type: sum, signs: "+-"}
  En: {type: constant, value: active}
  Ctl:
    type: subsystem
    enable: En.y
    diagram: {inputs: {e: K}, outputs: {u: K.y}, blocks: {K: {type: gain, K: 3}}}
  Plant: {type: transfer_function, num: [1], den: [1, 1]}
wires: [Ref -> Err.u1, Plant -> Err.u2, Err -> Ctl.e, Ctl.u -> Plant]
simulation: {stop: 1}
"""


@pytest.mark.parametrize("active, pole, gain", [(1, -4.0, 0.75), (0, -1.0, 0.0)])
def test_linearize_takes_an_enabled_subsystem_in_its_current_state(tmp_path, active, pole,
                                                                   gain):
    # 1/(s + 1) under u = 3 e: closed loop 3/(s + 4) (pole -4, DC gain 3/4); disabled, the
    # controller's output is held: the plant alone, pole -1, no path from Ref (gain 0)
    path = tmp_path / "loop.yaml"
    path.write_text(LOOP)
    system = blocksim.linearize(path, inputs=["Ref.y"], outputs=["Plant.y"],
                                overrides={"parameters.active": active})
    np.testing.assert_allclose(system.poles(), [pole])
    assert system.dcgain() == pytest.approx(gain)


def subsystem(*keys, source="{type: sine}", outputs="{y: C.y}", value=1):
    """A diagram body: a source V and a subsystem S with these keys (lines), its inside one
    constant C."""
    lines = "".join(f"    {key}\n" for key in keys)
    return (f"blocks:\n  V: {source}\n  S:\n    type: subsystem\n{lines}"
            f"    diagram: {{outputs: {outputs}, blocks: {{C: {{type: constant, value: {value}}}}}}}\n")


BAD = {
    "an enable that is not scalar": (
        subsystem("enable: V.y  # @LINE", source="{type: constant, value: [1, 2]}"),
        ["S.enable", "(2,)"]),
    "an unknown key in a trigger": (
        subsystem("trigger: {signal: V.y, edges: rising}  # @LINE"),
        ["unknown key 'edges' in a trigger (did you mean 'edge'?)"]),
    "an edge that does not exist": (
        subsystem("trigger: {signal: V.y, edge: risin}  # @LINE"),
        ["edge must be one of rising, falling, either, got 'risin' (did you mean 'rising'?)"]),
    "outputs_when_disabled on a triggered subsystem": (
        subsystem("trigger: V.y", "outputs_when_disabled: reset  # @LINE"),
        ["'outputs_when_disabled' is for an enabled subsystem"]),
    "initial without a control": (
        subsystem("initial: 1  # @LINE"),
        ["'initial' is for an enabled or triggered subsystem"]),
    "an enable signal of a block that does not exist": (
        subsystem("enable: W.y  # @LINE"), ["unknown block 'W'"]),
    "an initial value for a port that does not exist": (
        subsystem("enable: V.y", "initial: {z: 1}  # @LINE"),
        ["no output port named 'z' (ports: y)"]),
    "an initial value of the wrong shape": (
        subsystem("enable: V.y", "initial: [1, 2]  # @LINE", value="[1, 2, 3]"),
        ["for output 'y' (3,)"]),
    "continuous states inside a triggered subsystem": ("""\
        blocks:
          V: {type: sine}
          S:
            type: subsystem
            trigger: V.y
            diagram:
              inputs: {u: I}
              outputs: {y: I.y}
              blocks:
                I: {type: integrator}  # @LINE
        wires: [V -> S.u]
        """, ["has continuous states: inside triggered subsystem 'S' a block runs only at the "
              "trigger's edges"]),
    "a sample period inside a triggered subsystem": ("""\
        blocks:
          V: {type: sine}
          S:
            type: subsystem
            trigger: V.y
            diagram:
              inputs: {u: D}
              outputs: {y: D.y}
              blocks:
                D: {type: unit_delay, period: 0.1}  # @LINE
        wires: [V -> S.u]
        """, ["has a sample period of its own", "leave out 'period'"]),
    "a discrete block without a period outside a trigger": ("""\
        blocks:
          V: {type: sine}
          D: {type: zoh}  # @LINE
        wires: [V -> D]
        """, ["'period' is required: a discrete block runs without one only inside a "
              "triggered subsystem"]),
    "an output named as the control input": ("""\
        blocks:
          V: {type: sine}
          S:
            type: subsystem
            enable: V.y
            diagram:
              outputs:
                enable: C.y  # @LINE
              blocks: {C: {type: constant, value: 1}}
        """, ["output port 'enable' has the name of the subsystem's control input"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_conditional_subsystems(case, tmp_path, capsys):
    check_bad(*BAD[case], tmp_path, capsys)
