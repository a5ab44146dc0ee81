"""Zero-crossing events end to end (hybrid.md), against closed forms derived here.

Every expected number below is derived in the test from the system's equations; the
simulator's own output is never the reference.
"""
import json
import math
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.cli import main
from blocksim.errors import SimulationError

ROOT = Path(__file__).resolve().parents[2]
BALL = ROOT / "diagrams" / "bouncing_ball.yaml"
THERMOSTAT = ROOT / "diagrams" / "thermostat.yaml"


def run_text(tmp_path, text, **overrides):
    path = tmp_path / "d.yaml"
    path.write_text(text)
    return blocksim.run(str(path), overrides=overrides or None)


def block_events(result, name):
    """Event times of one block, from Result.events_t / events_block."""
    return result.events_t[result.events_block == result.meta["event_blocks"].index(name)]


# ---- bouncing ball ------------------------------------------------------------------------------
H, G, CR = 10.0, 9.81, 0.8


def impact_times(n):
    """t1 = sqrt(2h/g); the k-th rebound leaves at speed cr^k sqrt(2gh) and flies 2 v/g:
    t(k+1) = t(k) + 2 cr^k sqrt(2gh)/g (hybrid.md)."""
    flights = 2 * CR ** np.arange(1, n) * math.sqrt(2 * G * H) / G
    return math.sqrt(2 * H / G) + np.concatenate([[0.0], np.cumsum(flights)])


TIGHT = {"simulation.rtol": 1e-12, "simulation.atol": 1e-12, "simulation.event_tol": 1e-13}


@pytest.mark.parametrize("solver, extra, impacts", [
    ("rk45", {}, 12), ("dop853", {}, 12), ("rk23", {}, 12),
    ("rk4", {"simulation.step": 2e-3}, 12), ("rk2", {"simulation.step": 2e-3}, 12),
    ("radau", {}, 12),
    # the multistep methods restart at order 1 after every impact: first impacts only
    ("bdf", {}, 6), ("lsoda", {}, 6),
])
def test_bouncing_ball_impact_times_on_every_solver_family(solver, extra, impacts):
    """Free flight is a quadratic in t, which every method of order >= 2 integrates and
    interpolates exactly: the located impacts match the closed form to 1e-9."""
    expected = impact_times(impacts)
    r = blocksim.run(str(BALL), overrides={**TIGHT, **extra, "simulation.solver": solver,
                                           "simulation.stop": expected[-1] + 0.1})
    got = block_events(r, "Velocity")
    assert len(got) == impacts
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)
    # the position never goes below the floor, at any recorded row
    assert r["p"].min() >= 0.0


def test_bouncing_ball_comes_to_rest_exactly():
    """The rest rule: the first impact slower than v_rest = 1e-3 m/s sets v = 0 for good.
    Impact k has speed cr^(k-1) sqrt(2gh), so the last impact is the first k with
    cr^(k-1) sqrt(2gh) < 1e-3, and every impact before it is on the closed-form times."""
    v1 = math.sqrt(2 * G * H)
    last = next(k for k in range(1, 200) if CR ** (k - 1) * v1 < 1e-3)
    r = blocksim.run(str(BALL), overrides={**TIGHT, "simulation.stop": 15})
    got = block_events(r, "Velocity")
    assert len(got) == last
    np.testing.assert_allclose(got, impact_times(last), rtol=0, atol=1e-9)
    after = r.t > got[-1]
    assert np.all(r["p"][after] == 0.0) and np.all(r["v"][after] == 0.0)
    assert r.complete and r.t[-1] == 15


def test_bouncing_ball_without_rest_rule_trips_the_zeno_guard(tmp_path):
    """Without the rest rule the impacts accumulate at t_inf = t1 + 2 v1 cr/(g (1 - cr)):
    more than max_consecutive_events events closer than 10*event_tol is a SimulationError
    naming the blocks and a time just before t_inf; the rows so far are kept."""
    v1 = math.sqrt(2 * G * H)
    t_inf = math.sqrt(2 * H / G) + 2 * v1 * CR / (G * (1 - CR))
    with pytest.raises(SimulationError) as e:
        blocksim.run(str(BALL), overrides={"parameters.v_rest": 0, "simulation.stop": 20,
                                           "simulation.max_consecutive_events": 50})
    err = e.value
    assert "consecutive events" in str(err) and "Velocity" in str(err)
    assert t_inf - 1e-3 < err.time <= t_inf + 1e-6
    assert not err.result.complete and err.result.t[-1] <= err.time


def test_cli_zeno_is_exit_3_with_partial_results(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["run", str(BALL), "--out", str(out), "--no-plots", "--set", "parameters.v_rest=0",
                 "--set", "simulation.stop=20", "--set", "simulation.max_consecutive_events=50"])
    assert code == 3
    meta = json.loads((out / "meta.json").read_text())
    assert meta["complete"] is False and meta["events"]["per_block"]["Velocity"] > 50
    data = np.load(out / "results.npz")
    assert len(data["events_t"]) == meta["events"]["total"]
    assert "consecutive events" in capsys.readouterr().err


# ---- relay: the thermostat's limit cycle -----------------------------------------------------
def test_thermostat_limit_cycle_period_matches_the_closed_form():
    """dT/dt = (T_out + q - T)/tau with q = heating while on: from T_low to T_high with the
    heater on takes tau ln((T_hot - T_low)/(T_hot - T_high)), T_hot = T_out + heating; back
    down with it off tau ln((T_high - T_out)/(T_low - T_out))."""
    tau, t_out, heating, setpoint, band = 600.0, 10.0, 30.0, 20.0, 1.0
    low, high, hot = setpoint - band / 2, setpoint + band / 2, t_out + heating
    on = tau * math.log((hot - low) / (hot - high))
    off = tau * math.log((high - t_out) / (low - t_out))
    r = blocksim.run(str(THERMOSTAT), overrides={"simulation.rtol": 1e-10,
                                                 "simulation.atol": 1e-10})
    switches = block_events(r, "Heater")
    # the first switch is on: the room starts at T0 = 15 < T_low and warms to T_high
    assert r["heater"][0] == heating
    np.testing.assert_allclose(switches[0], tau * math.log((hot - 15) / (hot - high)), rtol=1e-9)
    phases = np.diff(switches)
    np.testing.assert_allclose(phases[0::2], off, rtol=1e-8)
    np.testing.assert_allclose(phases[1::2], on, rtol=1e-8)
    # the relay's output switches exactly at the located crossings: right-continuous rows
    for ts in switches:
        k = np.searchsorted(r.t, ts)
        assert r.t[k] == ts
        assert r["heater"][k] != r["heater"][k - 1]


# ---- saturation, hit crossing, limited integrator ------------------------------------------
SATURATED_SINE = """
blocksim: 1
name: satsine
blocks:
  Wave: {type: sine, amplitude: 2}
  Clip: {type: saturation, lower: -1, upper: 1}
  Area: {type: integrator}
wires: [Wave -> Clip, Clip -> Area]
simulation: {stop: 6.283185307179586, solver: SOLVER, rtol: 1e-10, atol: 1e-12, step: 1e-3}
record: {y: Clip.y, area: Area.y}
"""


def clipped_sine_area(t):
    """The integral from 0 to t of clip(2 sin s, -1, 1), piece by piece between the kinks
    (2 sin s = +-1 at pi/6, 5pi/6, 7pi/6, 11pi/6): 2(1 - cos t) on [0, pi/6], ending at
    2 - sqrt 3; + (t - pi/6) while clipped at 1, ending at 2 - sqrt 3 + 2pi/3; +
    2(cos(5pi/6) - cos t) back on the sine, ending unchanged at 7pi/6 (the sine is odd
    about pi); - (t - 7pi/6) while clipped at -1, ending at 2 - sqrt 3; + 2(cos(11pi/6) -
    cos t), ending at 0 at 2pi. At pi: 2(2 - sqrt 3) + 2pi/3."""
    k1, k2, k3, k4 = np.pi * np.array([1, 5, 7, 11]) / 6
    low = 2 - math.sqrt(3)
    return np.select(
        [t <= k1, t <= k2, t <= k3, t <= k4],
        [2 * (1 - np.cos(t)), low + (t - k1), low + 2 * math.pi / 3 + 2 * (np.cos(k2) - np.cos(t)),
         low + 2 * math.pi / 3 - (t - k3)],
        low + 2 * (np.cos(k4) - np.cos(t)))


@pytest.mark.parametrize("solver", ["rk45", "rk4", "radau"])
def test_saturated_sine_integral_with_kinks_as_events(tmp_path, solver):
    """y = clip(2 sin t, -1, 1), kinks located as events; its integral on every recorded row
    against the closed form (`clipped_sine_area`), 0 at 2pi."""
    r = run_text(tmp_path, SATURATED_SINE.replace("SOLVER", solver))
    kinks = block_events(r, "Clip")
    np.testing.assert_allclose(kinks, np.pi * np.array([1, 5, 7, 11]) / 6, rtol=0, atol=1e-9)
    assert clipped_sine_area(np.pi) == pytest.approx(2 * (2 - math.sqrt(3)) + 2 * math.pi / 3)
    np.testing.assert_allclose(r["area"], clipped_sine_area(r.t), rtol=0, atol=1e-8)
    assert abs(r["area"][-1]) < 1e-8
    assert np.all(np.abs(r["y"]) <= 1.0)


def test_a_fixed_step_solver_lands_on_the_crossing_and_resumes_its_grid(tmp_path):
    """rk4 with step 0.1: every recorded time is a grid point k*0.1 or a located kink."""
    r = run_text(tmp_path, SATURATED_SINE.replace("SOLVER", "rk4").replace("1e-3", "0.1"))
    kinks = block_events(r, "Clip")
    np.testing.assert_allclose(kinks, np.pi * np.array([1, 5, 7, 11]) / 6, rtol=0, atol=1e-9)
    off_grid = [t for t in r.t if abs(t / 0.1 - round(t / 0.1)) > 1e-9]
    assert off_grid[:4] == pytest.approx(list(kinks), abs=1e-12)
    assert off_grid[4:] == [r.t[-1]]  # the stop time, 2*pi


def test_hit_crossing_counts_and_times(tmp_path):
    """sin t crosses 0 at t = k pi: falling at pi, 3pi, rising at 2pi (0 < t <= 10)."""
    text = """
blocksim: 1
name: hits
blocks:
  Wave: {type: sine}
  Any: {type: hit_crossing}
  Up: {type: hit_crossing, direction: rising}
  Down: {type: hit_crossing, direction: falling}
wires: [Wave -> Any, Wave -> Up, Wave -> Down]
simulation: {stop: 10, rtol: 1e-9, atol: 1e-12}
record: {any: Any.n, up: Up.n, down: Down.n}
"""
    r = run_text(tmp_path, text)
    assert (r["any"][-1], r["up"][-1], r["down"][-1]) == (3, 1, 2)
    np.testing.assert_allclose(block_events(r, "Any"), np.pi * np.array([1, 2, 3]), atol=1e-9)
    np.testing.assert_allclose(block_events(r, "Up"), [2 * np.pi], atol=1e-9)
    # a staircase: the count is 1 exactly from pi on (right-continuous)
    assert np.all(r["any"][(r.t >= np.pi) & (r.t < 2 * np.pi - 1e-9)] == 1)


@pytest.mark.parametrize("direction, expected", [("rising", [2, 4]), ("falling", [1, 3])])
def test_a_one_direction_hit_crossing_alone_counts_every_crossing(tmp_path, direction,
                                                                  expected):
    """sin t over (0, 15]: falling through 0 at pi, 3pi, rising at 2pi, 4pi (t = 0, where it
    starts at the offset, is no crossing). Alone in the diagram, the counter sees the
    crossings in the other direction only through its own bookkeeping: no event, no other
    block's handler, tells it that u changed side."""
    text = f"""
blocksim: 1
name: hits
blocks:
  Wave: {{type: sine}}
  Hits: {{type: hit_crossing, direction: {direction}}}
wires: [Wave -> Hits]
simulation: {{stop: 15, rtol: 1e-9, atol: 1e-12}}
record: {{n: Hits.n}}
"""
    r = run_text(tmp_path, text)
    assert r["n"][-1] == len(expected)
    np.testing.assert_allclose(block_events(r, "Hits"), np.pi * np.array(expected), atol=1e-9)


LIMITED = """
blocksim: 1
name: limited
blocks:
  Drive: {type: sine, phase: 1.5707963267948966}
  Pos: {type: integrator, upper: 0.5}
wires: [Drive -> Pos]
simulation: {stop: 3.141592653589793, rtol: 1e-10, atol: 1e-12, output_interval: 0.01}
record: {x: Pos.y}
"""


def test_limited_integrator_holds_and_leaves_when_the_input_turns(tmp_path):
    """dx/dt = cos t, x(0) = 0, upper 0.5: x = sin t until sin t = 0.5 (t = pi/6), held at
    0.5 while cos t > 0, released at t = pi/2 when cos t turns negative, then
    x = 0.5 + sin t - 1."""
    r = run_text(tmp_path, LIMITED)
    t = r.t
    exact = np.where(t < np.pi / 6, np.sin(t), np.where(t < np.pi / 2, 0.5, np.sin(t) - 0.5))
    np.testing.assert_allclose(r["x"], exact, atol=1e-9)
    np.testing.assert_allclose(block_events(r, "Pos"), [np.pi / 6, np.pi / 2], atol=1e-9)


RESET_BY_PULSE = """
blocksim: 1
blocks:
  Pulse: {type: pulse, amplitude: A, period: 1, width: 0.5, delay: 0.25}
  Level: {type: constant, value: B}
  Reset: {type: sum, signs: "++"}
  One:   {type: constant, value: 1}
  Clock: {type: integrator, reset: DIRECTION, x0: 0}
wires: [Pulse -> Reset.u1, Level -> Reset.u2, Reset -> Clock.reset, One -> Clock.u]
simulation: {stop: 3, output_interval: 0.125}
record: {y: Clock.y}
"""


@pytest.mark.parametrize("low, high, direction, resets", [
    # a 0/1 pulse (high on [0.25, 0.75) + k): up at 0.25 + k, down to 0 at 0.75 + k
    (0, 1, "rising", [0.25, 1.25, 2.25]),
    (0, 1, "falling", [0.75, 1.75, 2.75]),
    (0, 1, "either", [0.25, 0.75, 1.25, 1.75, 2.25, 2.75]),
    # a -1/0 pulse: up to 0 at 0.25 + k (rising), down from 0 at 0.75 + k (falling)
    (-1, 0, "rising", [0.25, 1.25, 2.25]),
    (-1, 0, "falling", [0.75, 1.75, 2.75]),
    # a -1/+1 pulse crosses 0 both ways
    (-1, 1, "either", [0.25, 0.75, 1.25, 1.75, 2.25, 2.75]),
])
def test_reset_edges_of_a_pulse_follow_simulink_triggers(tmp_path, low, high, direction, resets):
    """dy/dt = 1, y reset to 0 on the reset input's edges. Simulink's trigger edges: rising
    from negative to zero or above, or from zero to positive; falling the mirror image; so a
    0/1 pulse's drop 1 -> 0 is a falling edge (it was missed: only + to - counted). Closed
    form: y(t) = t - (the last reset at or before t), or t before the first."""
    text = (RESET_BY_PULSE.replace("A", str(high - low)).replace("B", str(low))
            .replace("DIRECTION", direction))
    r = run_text(tmp_path, text)
    last = np.array([max([0.0] + [s for s in resets if s <= t]) for t in r.t])
    np.testing.assert_allclose(r["y"], r.t - last, atol=1e-12)
    np.testing.assert_allclose(block_events(r, "Clock"), resets, atol=1e-12)


# ---- backlash: the turning points of its input are events -------------------------------------
def backlash_of_sine(t, half):
    """The output of a play of half-width `half` (< 1/2) driven by u = sin t from y(0) = 0:
    open (y = 0) until sin t = half (t = asin half), pushed up (y = sin t - half) to the peak
    at pi/2, then held at 1 - half until u has come down by the full width, cos tau =
    1 - 2 half at tau = t - pi/2 (Simulink: the output holds while disengaged), pushed down
    (y = sin t + half) to the trough at 3pi/2, held at -(1 - half) for the same tau, and so on
    with period 2 pi."""
    t = np.asarray(t, dtype=float)
    u = np.sin(t)
    tau1 = math.acos(1 - 2 * half)
    tau = np.mod(t - np.pi / 2, 2 * np.pi)
    periodic = np.select([tau < tau1, tau < np.pi, tau < np.pi + tau1],
                         [1 - half, u + half, -(1 - half)], u - half)
    return np.where(t < math.asin(half), 0.0, np.where(t < np.pi / 2, u - half, periodic))


def backlash_events(half, stop):
    """Engagements at asin half and pi/2 + tau1 + k pi, turns at pi/2 + k pi (k >= 0)."""
    tau1 = math.acos(1 - 2 * half)
    k = np.arange(int(stop / np.pi) + 2)
    times = np.concatenate([[math.asin(half)], np.pi / 2 + k * np.pi,
                            np.pi / 2 + tau1 + k * np.pi])
    return np.sort(times[times <= stop])


BACKLASH_SINE = """
blocksim: 1
name: play
blocks:
  S: {type: sine}
  B: {type: backlash, width: WIDTH}
wires: [S -> B]
simulation: {stop: 20, SETTINGS}
record: {y: B.y}
"""


@pytest.mark.parametrize("width", [0.6, 0.5])
@pytest.mark.parametrize("settings", ["solver: rk4, step: 0.01", "solver: rk45"])
def test_backlash_holds_after_each_turn_until_the_input_reengages(tmp_path, settings, width):
    """Issue 23 item 1: sine -> backlash of width 0.6. After the peak at pi/2 the output holds
    0.7 until sin t = 0.4 (t = pi - asin 0.4 = 2.730), not u - 0.3; with default rk45 steps
    (0.4 s: no state steers them) the turn near t = 5pi/2 + 2pi = 14.137 is not missed.
    Every row against the closed form over three periods (width 0.5 too: held at 0.75 until
    5pi/6); the turns and engagements are located events."""
    half = width / 2
    r = run_text(tmp_path, BACKLASH_SINE.replace("SETTINGS", settings)
                 .replace("WIDTH", str(width)))
    np.testing.assert_allclose(r["y"], backlash_of_sine(r.t, half), rtol=0, atol=1e-9)
    release = np.pi - math.asin(1 - width)  # 2.730 for 0.6, 5pi/6 for 0.5
    assert backlash_of_sine(release - 1e-9, half) == pytest.approx(1 - half)
    held = (r.t > np.pi / 2) & (r.t < release)
    assert held.sum() >= 3 and np.all(np.abs(r["y"][held] - (1 - half)) < 1e-12)
    expected = backlash_events(half, 20)
    got = block_events(r, "B")
    assert len(got) == len(expected), (got, expected)
    # located to simulation.event_tol, 1e-10 relative to max(1, |t|)
    assert np.all(np.abs(got - expected) <= 1e-10 * np.maximum(1.0, expected)), got - expected


@pytest.mark.parametrize("solver, rtol, accuracy", [
    ("rk45", 1e-11, 1e-9), ("dop853", 1e-11, 1e-9), ("radau", 1e-9, 1e-7),
    ("rk23", 1e-8, 1e-6)])  # a third-order method: 4000 steps at 1e-8, 34000 at 1e-11
def test_backlash_of_an_input_the_solver_integrates(tmp_path, solver, rtol, accuracy):
    """u = sin t as the state of x'' = -x (x(0) = 0, x'(0) = 1): the turning points come from
    the solver's dense output. Against the same closed form, to the solver's accuracy."""
    r = run_text(tmp_path, """
blocksim: 1
name: play
blocks:
  V: {type: integrator, x0: 1}
  X: {type: integrator}
  Minus: {type: gain, K: -1}
  B: {type: backlash, width: 0.6}
wires: [Minus -> V, V -> X, X -> Minus, X -> B]
simulation: {stop: 20, rtol: 1e-11, atol: 1e-12}
record: {y: B.y, x: X.y}
""", **{"simulation.solver": solver, "simulation.rtol": rtol})
    np.testing.assert_allclose(r["x"], np.sin(r.t), rtol=0, atol=accuracy)
    np.testing.assert_allclose(r["y"], backlash_of_sine(r.t, 0.3), rtol=0, atol=accuracy)
    np.testing.assert_allclose(block_events(r, "B"), backlash_events(0.3, 20), rtol=0,
                               atol=10 * accuracy)


def test_a_grid_row_at_a_located_event_holds_the_values_of_its_own_time(tmp_path):
    """Issue 23 item 4: exp(t) - exp(2) crosses 0 at t = 2, located to event_tol (here about
    1e-10 after it: max_step 0.13); the output_interval row t = 2 snaps to that event and
    recorded the values of the located instant (sin t 4.3e-11 off). Now every row holds
    the values at its own time (after the event: the count is already 1 at t = 2), sources
    and states alike (x = t from an integrator of 1)."""
    r = run_text(tmp_path, """
blocksim: 1
blocks:
  S: {type: sine}
  C: {type: clock}
  One: {type: constant, value: 1}
  X: {type: integrator}
  F: {type: function, expr: "exp(u) - exp(2)"}
  H: {type: hit_crossing}
wires: [C -> F, F -> H, One -> X]
simulation: {stop: 4, output_interval: 0.5, max_step: 0.13}
record: {s: S.y, n: H.n, c: C.t, x: X.y}
""")
    np.testing.assert_allclose(r.t, 0.5 * np.arange(9), rtol=0, atol=0)
    event = block_events(r, "H")[0]
    assert 0 < event - 2 <= 1e-10 * 2  # located just after the crossing, to event_tol
    np.testing.assert_allclose(r["s"], np.sin(r.t), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(r["c"], r.t)
    np.testing.assert_allclose(r["x"], r.t, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(r["n"], (r.t >= 2).astype(float))


# ---- the engine's bookkeeping ------------------------------------------------------------------
def test_a_diagram_without_hybrid_blocks_steps_as_a_bare_stepper():
    """With no indicators the simulator only restarts at time events: the msd diagram (a
    step at t = 1) takes exactly the steps of its own derivative integrated by hand from 0
    to 1, then restarted to 20."""
    from blocksim.engine.simulator import Simulation
    from blocksim.engine.solvers import make_stepper

    model = blocksim.load(str(ROOT / "diagrams" / "msd.yaml"))
    r = blocksim.run(model)
    s = model.settings
    sim = Simulation(model)
    sim.m.xdbuf[:] = model.xd0
    y = model.x0.copy()
    sim.at_event(s.start, y, first=True)
    stepper = make_stepper(s.solver, sim.f, 0.0, y, 1.0, rtol=s.rtol, atol=s.atol,
                           max_step=s.max_step, step=s.step, origin=s.start)
    steps = []
    while stepper.t < 1.0:
        stepper.step()
        steps.append(stepper.t)
    y = stepper.y.copy()
    sim.at_event(1.0, y)
    stepper.restart(1.0, y, 20.0)
    while stepper.t < 20.0:
        stepper.step()
        steps.append(stepper.t)
    np.testing.assert_array_equal(r.t[1:], steps)
    assert r.meta["solver"]["nsteps"] == len(steps)
    assert r.meta["events"] == {"total": 0, "per_block": {}}


def test_sinks_see_the_value_before_and_after_each_event(tmp_path):
    """A scope gets two rows at an event (before, after: a vertical edge) and dense points
    between steps; results.npz keeps one right-continuous row per time."""
    from blocksim.api import execute

    text = """
blocksim: 1
name: edges
blocks:
  S: {type: step, time: 0.5, after: 2}
  R: {type: relay, on: 1, off: 0.5}
  Ramp: {type: ramp}
  Sc: {type: scope, inputs: 2}
wires: [S -> Sc.u1, Ramp -> R, R -> Sc.u2]
simulation: {stop: 2}
record: {s: S.y, r: R.y}
"""
    model = blocksim.load(str((tmp_path / "d.yaml").write_text(text) and tmp_path / "d.yaml"))
    seen = {}
    block = next(b for b in model.blocks if b.name == "Sc")
    block.finalize = lambda run: seen.update(t=run.t, u=run.inputs)
    result = execute(model, out=tmp_path / "out", plots=True)
    t, (step, relay) = seen["t"], seen["u"]
    assert np.all(np.diff(t) >= 0) and len(t) >= 2000
    # the step switches at 0.5 exactly; the relay where the ramp reaches 1 (located)
    for when, signal, before, after in ((0.5, step, 0.0, 2.0), (1.0, relay, 0.0, 1.0)):
        near = np.flatnonzero(np.abs(t - when) < 1e-9)
        k = [i for i in near if i + 1 in near and t[i] == t[i + 1]]
        assert len(k) == 1, when
        assert (signal[k[0]], signal[k[0] + 1]) == (before, after)
    assert np.all(np.diff(result.t) > 0)
    assert result["s"][np.flatnonzero(result.t == 0.5)[0]] == 2.0


def test_event_settings_are_validated(tmp_path):
    from blocksim.errors import DiagramError, DiagramErrors

    text = LIMITED.replace("output_interval: 0.01", "event_tol: -1, max_consecutive_events: 2.5")
    with pytest.raises((DiagramError, DiagramErrors)) as e:
        run_text(tmp_path, text)
    assert "event_tol" in str(e.value) and "max_consecutive_events" in str(e.value)
