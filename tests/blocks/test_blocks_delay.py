"""transport_delay: its history (cubic pieces from three samples per step, segments at
breakpoints, old pieces dropped) driven by hand as the simulator drives it, then whole runs
through the solvers: a delayed sine against sin(w(t - delay)) and a delayed step whose edge
lands exactly `delay` later."""
from pathlib import Path

import numpy as np
import pytest
from harness import Rig

import blocksim
from blocksim.errors import DiagramError
from blocksim.params import ParamError
from blocks.delay import TransportDelay

ROOT = Path(__file__).resolve().parents[2]


def feed(rig, f, t0, t1, degree=3):
    """What the simulator does after an accepted step [t0, t1] of a solver whose dense output
    has the given degree: u at t0 + j h/degree, j = 1..degree."""
    for j in range(1, degree + 1):
        t = t0 + j * (t1 - t0) / degree if j < degree else t1
        rig.set(u=f(t))
        assert rig.block.remember(t, "end" if j == degree else "step") == ()


def started(delay, f, shape=(), x0=0.0):
    rig = Rig(TransportDelay, {"delay": delay, "x0": x0}, {"u": shape})
    rig.block.initialize(0.0)
    rig.set(u=f(0.0))
    assert rig.block.remember(0.0, "event") == ()  # the start: the first sample
    return rig


def test_before_start_plus_delay_outputs_x0_then_u_delayed():
    rig = started(0.5, np.sin, x0=7.0)
    assert rig.block.events(0.0, 10.0) == (0.5,)  # the jump from x0 to u(0) is landed on
    assert rig.block.events(0.0, 0.4) == ()
    assert rig.out(0.3) == 7.0
    for a, b in zip(np.arange(0, 2, 0.1), np.arange(0.1, 2.05, 0.1)):
        feed(rig, np.sin, a, b)
    rig.block.event(0.5)
    assert rig.out(0.5) == 0.0  # u(0) = sin 0, exactly (the first sample)
    assert rig.out(1.7) == pytest.approx(np.sin(1.2), abs=1e-6)


def test_pieces_are_cubic_accurate_not_linear():
    w, h = 3.0, 0.05
    rig = started(0.5, lambda t: np.sin(w * t))
    grid = np.arange(0, 5.0001, h)
    for a, b in zip(grid[:-1], grid[1:]):
        feed(rig, lambda t: np.sin(w * t), a, b)
    rig.block.event(0.5)
    t = np.linspace(0.5, 5.0, 997)
    err = np.max(np.abs([rig.out(s) - np.sin(w * (s - 0.5)) for s in t]))
    # cubic interpolation on nodes h/3 apart: |error| <= max|d4u/dt4| (h/3)^4 / 4! times the
    # maximum of |r(r-1)(r-2)(r-3)| on [0, 3], which is 1 (at r = 3/2 +- sqrt(5)/2); a straight
    # line between the accepted steps would be off by up to w^2 h^2 / 8 = 2.8e-3
    bound = w ** 4 * (h / 3) ** 4 / 24
    assert err <= bound
    assert err < 1e-3 * w ** 2 * h ** 2 / 8


def test_a_jump_at_an_event_is_a_breakpoint_announced_delay_later():
    before, after = (lambda t: 0.0), (lambda t: 2.0)
    rig = started(0.4, before)
    for a in np.arange(0, 1.0 - 1e-12, 0.25):
        feed(rig, before, a, a + 0.25)  # the steps land on 1.0 (a source switch)
        assert rig.block.remember(a + 0.25, "event") == ()  # events where u is continuous
    rig.set(u=2.0)
    assert rig.block.remember(1.0, "event") == (1.4,)  # the value after the event: a jump
    assert rig.block.remember(1.0, "event") == ()  # reported once
    for a in np.arange(1.0, 2.0 - 1e-12, 0.25):
        feed(rig, after, a, a + 0.25)
    rig.block.event(0.4)  # the start's segment
    # up to the breakpoint's echo the output reads the old segment, even a rounding past it
    assert rig.out(1.4) == 0.0 and rig.out(np.nextafter(1.4, 2.0)) == 0.0
    rig.block.event(1.4)
    assert rig.out(1.4) == 2.0  # right-continuous after the echo
    assert rig.out(1.9) == 2.0


def test_vector_signal_and_old_pieces_dropped():
    f = lambda t: np.array([np.sin(t), np.cos(2 * t)])  # noqa: E731
    rig = started(0.3, f, shape=(2,))
    history = rig.block._history
    grid = np.arange(0, 30.0001, 0.01)
    for a, b in zip(grid[:-1], grid[1:]):
        feed(rig, f, a, b)
    rig.block.event(0.3)
    np.testing.assert_allclose(rig.out(29.9), f(29.6), atol=1e-9)
    assert history.count < 600 and history.base > 2000  # memory stays bounded


@pytest.mark.parametrize("delay", [0, -1])
def test_delay_must_be_positive(delay):
    with pytest.raises(ParamError) as e:
        Rig(TransportDelay, {"delay": delay}, {"u": ()})
    assert e.value.param == "delay"


SINE_AND_STEP = """
blocksim: 1
blocks:
  S: {type: sine, frequency: 2}
  D: {type: transport_delay, delay: 0.7, x0: 0.3}
  St: {type: step, time: 1.3, after: 2}
  D2: {type: transport_delay, delay: 0.45}
  I: {type: integrator}
wires: [S -> D, St -> D2, D2 -> I]
simulation: {stop: 5, rtol: 1e-6, step: 0.01}
record: {y: D.y, step: D2.y, area: I.y}
"""


@pytest.mark.parametrize("solver", ["rk45", "dop853", "radau", "rk4"])
def test_delayed_sine_and_step(run_diagram, solver):
    r = run_diagram(SINE_AND_STEP, **{"simulation.solver": solver})
    t = r.t
    exact = np.where(t < 0.7, 0.3, np.sin(2 * (t - 0.7)))  # x0 until start + delay
    err = np.max(np.abs(r["y"] - exact))
    # no state: the adaptive solvers take max_step = 0.1 steps; the history's pieces follow
    # u to the tolerance (rtol 1e-6), where a straight line between the steps would be off
    # by w^2 h^2/8 = 5e-3 (the fixed-step run's h = 0.01 is exact to rounding)
    h = np.max(np.diff(t))
    assert err < 1e-6
    assert err < 1e-3 * (2 * h) ** 2 / 8
    # the step's edge lands exactly delay later: the row at 1.75 holds the new value, the
    # row before it the old one; the integral of the delayed step is exact
    k = int(np.argmin(np.abs(t - 1.75)))
    assert t[k] == 1.3 + 0.45 and r["step"][k] == 2.0 and r["step"][k - 1] == 0.0
    assert r["area"][-1] == pytest.approx(2 * (5 - 1.75), rel=1e-12)


CHIRP = """
blocksim: 1
blocks:
  C: {type: chirp, f0: 0.2, f1: 2, t1: 10}
  D: {type: transport_delay, delay: 0.7}
wires: [C -> D]
simulation: {stop: 10, rtol: 1e-10, atol: 1e-12, output_interval: 0.001}
record: {y: D.y}
"""


@pytest.mark.parametrize("solver", ["rk45", "dop853", "radau"])
def test_a_delayed_source_is_exact_to_the_tolerance_between_long_steps(run_diagram, solver):
    """Issue 23 item 2: a chirp 0.2 -> 2 Hz over 10 s delayed by 0.7 s. No state steers the
    steps (0.2 s, max_step), so pieces of the dense output's degree over a whole step were
    off by 1.9e-3 between them (rk45, rtol 1e-10). The history now follows u to the solver's
    tolerance: every row of y(t) = sin(2 pi (0.2 s + 0.09 s^2)), s = t - 0.7, within
    rtol |y| + atol, in the same 51 steps."""
    r = run_diagram(CHIRP, **{"simulation.solver": solver})
    s = r.t - 0.7
    exact = np.where(s < 0, 0.0, np.sin(2 * np.pi * (0.2 * s + (2 - 0.2) * s ** 2 / 20)))
    assert np.all(np.abs(r["y"] - exact) <= 1e-10 * np.abs(exact) + 1e-12)
    assert r.meta["solver"]["nsteps"] == 51


PULSES = """
blocksim: 1
blocks:
  P: {type: pulse, period: 0.3, width: 0.4}
  D: {type: transport_delay, delay: 0.25}
  I: {type: integrator}
wires: [P -> D, D -> I]
simulation: {stop: 30.25, max_step: 0.2}
record: {area: I.y}
"""


def test_every_breakpoint_of_a_pulse_train_is_echoed(run_diagram):
    r = run_diagram(PULSES)
    # 100 whole pulses of area 0.4*0.3, delayed by 0.25: each edge landed on, 0.25 later
    assert r["area"][-1] == pytest.approx(100 * 0.4 * 0.3, rel=1e-12)


@pytest.mark.parametrize("delay", [1e-9, 4e-15])
def test_a_delay_near_the_times_resolution_runs(run_diagram, delay):
    """A pulse train (period 0.5, on half of it) delayed by about one float's spacing near
    t = 20 (3.55e-15; a delay below it is refused: test_a_delay_below_the_times_resolution_
    is_refused): a step between a jump and its echo one float later left a piece of no
    length (0/0 in its slope): 'not finite' or an IndexError, exit 3. The integral of the
    output is that of the pulse train itself, 0.25 per period, to within 2 delays a pulse."""
    r = run_diagram(PULSES.replace("period: 0.3, width: 0.4", "period: 0.5, width: 0.5")
                    .replace("delay: 0.25", f"delay: {delay}").replace("30.25", "20"))
    assert r.complete
    assert r["area"][-1] == pytest.approx(40 * 0.25, abs=80 * delay + 1e-12)


@pytest.mark.parametrize("delay, stop, accepted", [
    # the spacing of floats is 2^(e - 52) for t in [2^e, 2^(e+1)): 2^-48 = 3.55e-15 at 20
    (2.0 ** -48, 20, True), (float(np.nextafter(2.0 ** -48, 0)), 20, False), (1e-15, 20, False),
    (1e-15, 1.9, True),   # 2^-52 = 2.2e-16 on [1, 2)
    (3.7e-6, -3e10 + 10, False), (3.9e-6, -3e10 + 10, True),  # 2^-18 = 3.81e-6 at |t| = 3e10
])
def test_a_delay_below_the_times_resolution_is_refused(tmp_path, delay, stop, accepted):
    """issue 35 item 5: at the run's largest |t| no time is `delay` after another when the
    delay is below the spacing of floats there; refused when the diagram is compiled (it
    was exit 3 once the run had begun), at the delay's line."""
    start = stop - 10 if stop < 0 else 0  # a start far before 0 counts by its |t|
    (tmp_path / "d.yaml").write_text(PULSES.replace("delay: 0.25", f"delay: {delay!r}")
                                     .replace("stop: 30.25", f"start: {start!r}, stop: {stop!r}"))
    if accepted:
        blocksim.load(tmp_path / "d.yaml")
        return
    with pytest.raises(DiagramError) as e:
        blocksim.load(tmp_path / "d.yaml")
    assert e.value.line == 5 and e.value.param == "delay" and e.value.block == "D"
    assert "below the time's resolution" in e.value.message


def test_a_delay_in_a_run_far_from_zero_runs():
    """A step at 1e10 + 0.5 delayed by 1 ms over [1e10, 1e10 + 1]: the input is 0 at the
    start, whose first step (1e-6) was below the round-off limit at 1e10, and the run
    failed there (exit 3). The area is stop minus the echo's time, t + delay rounded once
    (IEEE addition of the two floats)."""
    r = blocksim.run(ROOT / "tests" / "accel" / "corpus" / "start_far_from_zero.yaml")
    assert r.complete and r["area"][-1] == (1e10 + 1) - (10000000000.5 + 0.001)


DDE = """
blocksim: 1
blocks:
  X: {type: integrator, x0: 1}
  D: {type: transport_delay, delay: 1, x0: 1}
  G: {type: gain, K: -1}
wires: [X -> D, D -> G, G -> X]
simulation: {stop: 6, max_step: 1}
record: {x: X.y}
"""


def method_of_steps(t_end):
    """x' = -x(t - 1), x = 1 for t <= 0: on [k, k+1], x(t) = x(k) - integral_k^t x(s - 1) ds,
    polynomial piece by piece (numpy polynomials in t, integrated exactly)."""
    from numpy.polynomial import Polynomial as P
    pieces = [P([1.0])]  # on [-1, 0]
    for k in range(int(np.ceil(t_end))):
        prev = pieces[-1](P([-1.0, 1.0]))  # x(s - 1) as a polynomial in s
        antideriv = prev.integ()
        start = pieces[-1](k) if k else 1.0
        pieces.append(P([start + antideriv(k)]) - antideriv)
    return lambda t: np.array([pieces[min(int(np.floor(s)), len(pieces) - 2) + 1](s)
                               for s in np.atleast_1d(t)])


@pytest.mark.parametrize("solver, rtol", [
    (s, r) for s in ("rk45", "dop853", "radau", "bdf", "lsoda") for r in (1e-6, 1e-10)
] + [("rk23", 1e-6)])
def test_a_loop_through_the_delay_solves_the_delay_equation(run_diagram, solver, rtol):
    r = run_diagram(DDE, **{"simulation.solver": solver, "simulation.rtol": rtol,
                            "simulation.atol": rtol / 100})
    x = method_of_steps(6.0)
    # x = 1 - t on [0, 1], (t - 1)(t - 3)/2 on [1, 2], ...: degree k on [k-1, k]
    assert x(0.5)[0] == pytest.approx(0.5) and x(1.5)[0] == pytest.approx(-0.375)
    # the history is the dense output itself (its degree's worth of points per step), so the
    # error follows the tolerance, even with steps as long as the delay (max_step = 1)
    assert np.max(np.abs(r["x"] - x(r.t))) < 10 * rtol


SAMPLED = """
blocksim: 1
blocks:
  S: {type: sine, frequency: 3}
  Z: {type: zoh, period: 0.01}
  D: {type: transport_delay, delay: 0.105}
wires: [S -> Z, Z -> D]
simulation: {stop: 5, max_step: 0.05}
record: {z: Z.y, y: D.y}
"""


def test_a_sampled_input_makes_a_segment_per_hit_and_old_ones_go(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text(SAMPLED)
    # normal mode: the interpreted block's history is what is checked (auto switched to
    # compiled code when the run went slow under load, and left that history empty)
    model = blocksim.load(path, ["simulation.mode=normal"])
    r = blocksim.run(model)
    t = r.t
    # the delayed staircase: the hit k at 0.01 k reappears at 0.01 k + 0.105 exactly
    k = np.floor((t - 0.105) / 0.01 + 1e-9)
    expected = np.where(t < 0.105, 0.0, np.sin(3 * 0.01 * k))
    np.testing.assert_allclose(r["y"], expected, rtol=0, atol=1e-14)
    history = next(b for b in model.blocks if b.name == "D")._history
    assert history.seg_base > 250 and len(history.seg_time) < 250  # 500 segments made


DELAYED_PULSE = """
blocksim: 1
blocks:
  P: {type: pulse, period: 0.2, width: 0.5}
  D: {type: transport_delay, delay: 0.1}
  Z: {type: zoh, period: 0.1}
wires: [P -> D, D -> Z]
simulation: {stop: 2, output_interval: 0.1, max_step: 0.05}
record: {d: D.y, z: Z.y}
"""


def test_delayed_jumps_land_on_the_sample_hits_they_coincide_with(tmp_path):
    """A pulse high on [0.2k, 0.2k + 0.1), delayed by 0.1 and sampled every 0.1 s: y(t) =
    x0 = 0 before 0.1, then the pulse at t - 0.1, so rows t = 0, 0.1, 0.2, ... read 0, 1, 0,
    1, ... (right-continuous at the echoed jumps). Echoes computed as t + delay in floats put
    0.2 + 0.1 = 0.30000000000000004 after the hit at 0.3, which then read the old value."""
    path = tmp_path / "delayed.yaml"
    path.write_text(DELAYED_PULSE)
    r = blocksim.run(path)
    expected = (np.arange(21) % 2 == 1).astype(float)
    np.testing.assert_array_equal(r["d"], expected)
    np.testing.assert_array_equal(r["z"], expected)
