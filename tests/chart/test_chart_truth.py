"""The chart block against independent truth: the relay it replaces, closed forms of
transition instants, a hand-written event-driven reference."""
from pathlib import Path

import numpy as np

import blocksim

HERE = Path(__file__).parent
ROOT = HERE.parents[1]


def test_chart_thermostat_switches_when_the_relay_does():
    """diagrams/thermostat.yaml's relay (on when the error rises to band/2, off when it
    falls to -band/2) written as a two-state chart: the same switch times to 1e-10
    relative (the spec's check), the same steps."""
    chart = blocksim.run(HERE / "thermostat_chart.yaml", {"simulation.mode": "normal"})
    relay = blocksim.run(ROOT / "diagrams" / "thermostat.yaml", {"simulation.mode": "normal"})
    assert len(chart.events_t) == len(relay.events_t) > 30
    np.testing.assert_allclose(chart.events_t, relay.events_t, rtol=1e-10, atol=0)
    np.testing.assert_allclose(chart["T"], relay["T"], rtol=1e-10)
    np.testing.assert_allclose(chart["heater"], relay["heater"], rtol=0, atol=1e-12)


def test_a_ramp_crossing_a_level_then_a_timer(tmp_path):
    """x = t (a ramp of slope 1) crosses 0.37: A -> B at t = level/slope = 0.37, located to
    event_tol; B -> C `after: 0.25` at 0.37 + 0.25 exactly (a time event); B's `every: 0.1`
    action at 0.47, 0.57 and 0.57 + 0.1 ... until C is entered at 0.62 (twice)."""
    from charts import entries, mark, run_chart, trace
    chart = {"states": {"A": {"initial": True},
                        "B": {"during": [{"every": 0.1, "do": mark(7)}]},
                        "C": {"entry": mark(1)}},
             "transitions": [{"from": "A", "to": "B", "when": "x >= 0.37"},
                             {"from": "B", "to": "C", "after": 0.25}]}
    result = run_chart(tmp_path, chart, stop=1.0)
    (t0, a, _), (t1, b, _), (t2, c, _) = entries(tmp_path, result)
    assert (a, b, c) == ("A", "B", "C") and t0 == 0.0
    assert abs(t1 - 0.37) <= 1e-10
    assert t2 == t1 + 0.25
    assert trace(result) == [7, 7, 1]
    np.testing.assert_array_equal(result.events_t[1:3], [t1 + 0.1, t1 + 2 * 0.1])


def test_a_discrete_chart_acts_at_its_sample_hits(tmp_path):
    """sample 0.1: x >= 0.37 is first seen at the hit 0.4; B's during runs at the hits
    after the one that entered it (0.5, 0.6, ...), B -> C after 0.25 at the first hit at or
    after 0.4 + 0.25, 0.7."""
    from charts import entries, mark, run_chart, trace
    chart = {"sample": 0.1,
             "states": {"A": {"initial": True}, "B": {"during": mark(5)},
                        "C": {"entry": mark(1)}},
             "transitions": [{"from": "A", "to": "B", "when": "x >= 0.37"},
                             {"from": "B", "to": "C", "after": 0.25}]}
    result = run_chart(tmp_path, chart, stop=1.0)
    assert [(round(t, 12), s) for t, s, _ in entries(tmp_path, result)] == [
        (0.0, "A"), (0.4, "B"), (0.7, "C")]
    assert trace(result) == [5, 5, 1]


def test_linearize_holds_a_chart_constant_in_its_active_state():
    """The thermostat chart at t = 300 s (heater on, a run reaches it): the room's linear
    model is dT/dt = -T/tau with the heater constant, so from the outside temperature to
    the room the gain is 1/(tau s + 1): pole -1/tau, DC gain 1, by hand; the chart adds no
    dynamics and no feedback through the error."""
    sys = blocksim.linearize(HERE / "thermostat_chart.yaml", ["Outside.y"], ["Room.y"],
                             at=300.0, overrides={"simulation.mode": "normal"})
    np.testing.assert_allclose(np.ravel(sys.poles()), [-1 / 600], rtol=1e-9)
    np.testing.assert_allclose(sys.dcgain(), 1.0, rtol=1e-9)


def test_check_explains_a_chart(capsys):
    """`blocksim check` lists how the chart runs, its states with their leaf index and
    actions, and its transitions in the order they are tested."""
    from blocksim.cli import main
    assert main(["check", str(ROOT / "tests" / "accel" / "corpus" / "chart_modes.yaml")]) == 0
    out = capsys.readouterr().out
    pad = " " * 19  # under the block's line
    assert f"\n{pad}continuous: 6 comparison(s) located as zero crossings" in out
    assert f"\n{pad}    Slow [initial]             leaf 1   during: u = u/2" in out
    assert f"\n{pad}  5. Rest -> Run after(0.35)" in out


def test_the_specifications_example_chart(tmp_path):
    """The spec's example chart as written (`active: {Track: 1}` included) on err = 0.5 -
    0.1 t and go stepping to 1 at t = 1. By hand: Idle -> Track (its Coarse) at 1; Coarse
    -> Fine where |err| falls to 0.01, t = (0.5 - 0.01)/0.1 = 4.9; Fine -> Coarse where it
    rises past 0.05 again, t = 0.55/0.1 = 5.5; Track -> Fault at |err| = 1, t = 15; Fault
    -> Idle after 2 s, 17, and at that instant the chain Idle -> Track -> Fault (go is 1,
    |err| = 1.2 > 1). in_Track is 1 on [1, 15) only; u = 2 err while in Track, 0 else."""
    result = blocksim.run(HERE / "spec_example.yaml", out=tmp_path / "run")
    with np.load(tmp_path / "run" / "results.npz") as z:
        t, s = z["chart_t"], z["chart_state"]
    names = [n.split(".", 1)[1] for n in result.meta["chart_states"]]
    got = [(float(ti), names[si]) for ti, si in zip(t, s)]
    expected = [(0, "Idle"), (1, "Track"), (1, "Track.Coarse"), (4.9, "Track.Fine"),
                (5.5, "Track.Coarse"), (15, "Fault"), (17, "Idle"), (17, "Track"),
                (17, "Track.Coarse"), (17, "Fault")]
    assert [n for _, n in got] == [n for _, n in expected]
    np.testing.assert_allclose([ti for ti, _ in got], [ti for ti, _ in expected],
                               rtol=0, atol=1e-9)
    time, err, u, on = result.t, result["err"], result["u"], result["in_Track"]
    inside = (time > 1 + 1e-6) & (time < 15 - 1e-6)
    outside = (time < 1 - 1e-6) | (time > 15 + 1e-6)
    assert inside.any() and outside.any()
    assert np.all(on[inside] == 1.0) and np.all(on[outside] == 0.0)
    np.testing.assert_allclose(u[inside], 2 * err[inside], rtol=1e-12)
    assert np.all(u[outside] == 0.0)
