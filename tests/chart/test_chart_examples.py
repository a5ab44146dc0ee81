"""The docs page's examples (docs/charts.md) against independent truth: the gearbox's shifts
against a hand-written event-driven reference (closed-form speeds, no blocksim code), the
supervisor's timing, its reference against jtraj's quintic, and its fault at the located
instant the tracking error reaches emax."""
import math
from pathlib import Path

import numpy as np
import pytest

import blocksim

DIAGRAMS = Path(__file__).parents[2] / "diagrams"


def gearbox_reference(stop=100.0, hold=5.0, forces=(6000.0, 3600.0, 2400.0, 1700.0)):
    """(time, gear) of every shift and the final speed, by events: between events the speed
    is v(t) = v_inf + (v0 - v_inf) exp(-(c/m)(t - t0)), v_inf = throttle*F_gear/c; a shift's
    condition holds from the later of its crossing and the hold time after the last shift
    (the speed is monotone between events, so a condition once true stays true); the shift
    tables are interpolated in throttle (numpy.interp) on the gear's row."""
    m, c = 1200.0, 40.0
    bp = [0.0, 0.5, 1.0]
    up = [[5, 8, 12], [10, 15, 22], [16, 24, 32]]
    down = [[3, 5, 8], [7, 11, 16], [12, 18, 25]]
    gear, entered, t, v = 1, 0.0, 0.0, 0.0
    shifts = []
    while t < stop:
        throttle, end = (0.8, 40.0) if t < 40.0 else (0.05, stop)
        v_inf, rate = throttle * forces[gear - 1] / c, c / m
        v0, t_seg = v, t

        def speed(s):
            return v_inf + (v0 - v_inf) * math.exp(-rate * (s - t_seg))

        rules = []  # in the chart's priority order: up first
        if gear < 4:
            rules.append((+1, np.interp(throttle, bp, up[gear - 1]), gear + 1))
        if gear > 1:
            rules.append((-1, np.interp(throttle, bp, down[gear - 2]), gear - 1))
        best = None
        for sign, level, new in rules:
            start = max(t, entered + hold)
            if start >= end:
                continue
            if sign * (speed(start) - level) > 0:
                when = start
            elif sign * (v_inf - level) > 0:  # it gets there: v(s) = level
                when = max(start, t_seg - math.log((level - v_inf) / (v0 - v_inf)) / rate)
            else:
                continue
            if when < end and (best is None or when < best[0]):
                best = (when, new)
        if best is None:
            v, t = speed(end), end
            continue
        v, t = speed(best[0]), best[0]
        gear, entered = best[1], best[0]
        shifts.append((t, gear))
    return shifts, v


def test_the_gearbox_shifts_as_the_event_driven_reference():
    result = blocksim.run(DIAGRAMS / "gearbox.yaml", {"simulation.mode": "normal"})
    shifts, v_end = gearbox_reference()
    assert [g for _, g in shifts] == [2, 3, 4, 3, 2]
    got = [(t, g) for t, g in zip(result.t[1:], result["gear"][1:])
           if g != result["gear"][list(result.t).index(t) - 1]]
    assert [g for _, g in got] == [g for _, g in shifts]
    np.testing.assert_allclose([t for t, _ in got], [t for t, _ in shifts], rtol=0, atol=1e-7)
    # the first three shifts wait for the hold time: exact time events
    assert [t for t, _ in got[:3]] == [5.0, 10.0, 15.0]
    np.testing.assert_allclose(result["v"][-1], v_end, rtol=1e-8)


def shifts_of(result):
    """(time, gear) of every change of gear in a run's rows."""
    gear = result["gear"]
    return [(t, g) for t, g, before in zip(result.t[1:], gear[1:], gear[:-1]) if g != before]


@pytest.mark.parametrize("mode", ["normal", "accelerated"])
def test_the_gearbox_set_to_other_values_shifts_as_the_reference(mode, monkeypatch):
    """Model.set of the parameters the chart's timers (hold: after) and actions (forces:
    its entry actions) read, on a model already run: the next run keeps the compiled code
    (the timers and the actions' constants are the chart's run data) and shifts as the
    reference with those values (it kept the first run's before)."""
    from blocksim.accel import codegen

    model = blocksim.load(DIAGRAMS / "gearbox.yaml", {"simulation.mode": mode})
    blocksim.execute(model)
    generated = []
    monkeypatch.setattr(codegen, "generate",
                        lambda *a, _g=codegen.generate: generated.append(1) or _g(*a))
    forces = [6600.0, 3960.0, 2640.0, 1870.0]
    result = blocksim.execute(model.set({"parameters.hold": 3, "parameters.forces": forces}))
    assert result.meta["mode"]["mode"] == mode and not generated
    shifts, v_end = gearbox_reference(hold=3.0, forces=forces)
    got = shifts_of(result)
    assert [g for _, g in got] == [g for _, g in shifts]
    np.testing.assert_allclose([t for t, _ in got], [t for t, _ in shifts], rtol=0, atol=1e-7)
    np.testing.assert_allclose(result["v"][-1], v_end, rtol=1e-8)


def quintic(q0, qf, tf, t):
    """jtraj's rest-to-rest quintic (Corke, RVC eq. 3.4 with zero end velocities and
    accelerations): q0 + (qf - q0)(10 tau^3 - 15 tau^4 + 6 tau^5), tau = t/tf."""
    tau = np.clip(t / tf, 0.0, 1.0)[:, None]
    return q0 + (qf - q0) * (10 * tau**3 - 15 * tau**4 + 6 * tau**5)


QF = np.array([np.pi / 4, np.pi / 2, -np.pi / 2, 0, 0, 0])


def test_the_supervisor_idles_moves_and_holds(tmp_path):
    result = blocksim.run(DIAGRAMS / "supervisor.yaml", {"simulation.mode": "normal"},
                          out=tmp_path)
    with np.load(tmp_path / "results.npz") as z:
        t, states = z["chart_t"], z["chart_state"]
    names = [result.meta["chart_states"][k] for k in states]
    assert names == ["Supervisor.Idle", "Supervisor.Active", "Supervisor.Active.Move",
                     "Supervisor.Active.Hold"]
    assert list(t) == [0.0, 0.5, 0.5, 4.5]  # after: wait, then after: tf, exactly
    moving = (result.t >= 0.5) & (result.t <= 4.5)
    np.testing.assert_allclose(result["qdes"][moving],
                               quintic(np.zeros(6), QF, 4.0, result.t[moving] - 0.5),
                               rtol=0, atol=1e-12)
    assert np.all(result["qdes"][result.t < 0.5] == 0.0)
    assert np.all(result["qdes"][result.t >= 4.5] == QF)
    assert np.max(np.abs(result["e"])) < 0.05 and not result["fault"].any()


def test_the_supervisor_faults_when_the_error_reaches_emax(tmp_path):
    """A 40 N m kick on joint 2 from t = 2.5 s: Fault is entered at the instant the largest
    joint error reaches emax = 0.05 rad (located: the error there is emax to 1e-8), and from
    then on the demand is the pose the arm had at that instant."""
    result = blocksim.run(DIAGRAMS / "supervisor.yaml", {"simulation.mode": "normal",
                                                         "parameters.kick": 40}, out=tmp_path)
    with np.load(tmp_path / "results.npz") as z:
        t, states = z["chart_t"], z["chart_state"]
    assert result.meta["chart_states"][states[-1]] == "Supervisor.Fault"
    t_fault = float(t[-1])
    assert 2.5 < t_fault < 4.5
    row = int(np.flatnonzero(result.t == t_fault)[0])
    q = result["q"][row]
    demand = quintic(np.zeros(6), QF, 4.0, np.array([t_fault - 0.5]))[0]
    assert abs(np.max(np.abs(demand - q)) - 0.05) < 1e-8
    np.testing.assert_array_equal(result["qdes"][row:], np.broadcast_to(q, (len(result.t) - row, 6)))
    assert result["fault"][row:].all() and not result["fault"][:row].any()
