"""The fmu block in normal mode against closed forms and fmpy's own simulation of the same
FMUs (tests/fmu/models, built by conftest.py), FMI 2.0 and 3.0."""
import math

import numpy as np
import pytest

import blocksim

pytest.importorskip("fmpy")


@pytest.fixture
def run(fmu_diagram):
    return lambda name, fmi, text, **kw: blocksim.run(fmu_diagram(name, fmi, text), **kw)


@pytest.mark.parametrize("fmi", [2, 3])
@pytest.mark.parametrize("solver", ["rk4", "rk45", "dop853", "radau", "bdf", "lsoda"])
def test_dahlquist_every_solver(run, fmi, solver):
    """x' = -k x, x(0) = 1.5: x(t) = 1.5 exp(-k t) (closed form), with every kind of solver."""
    step = "step: 0.01" if solver == "rk4" else "rtol: 1e-9, atol: 1e-12"
    r = run("dahlquist", fmi, f"""
blocksim: 1
name: dq
blocks:
  P: {{type: fmu, file: FMU, parameters: {{k: 2.5}}, start: {{x: 1.5}}}}
simulation: {{stop: 1, solver: {solver}, {step}}}
record: {{x: P.x}}
""")
    exact = 1.5 * np.exp(-2.5 * r.t)
    tol = 1e-7 if solver in ("rk4", "radau", "bdf", "lsoda") else 1e-9
    assert np.abs(r["x"] - exact).max() < tol


@pytest.mark.parametrize("fmi", [2, 3])
def test_van_der_pol_against_fmpy(run, fmus, fmi):
    """fmpy's CVode run of the same FMU (rtol 1e-10) at the same times."""
    from fmpy import simulate_fmu
    r = run("vanderpol", fmi, """
blocksim: 1
name: vdp
blocks:
  V: {type: fmu, file: FMU, parameters: {mu: 2.0}}
simulation: {stop: 5, solver: dop853, rtol: 1e-11, atol: 1e-12, output_interval: 0.5}
record: {x0: V.x0, x1: V.x1}
""")
    ref = simulate_fmu(str(fmus["vanderpol", fmi]), stop_time=5, output_interval=0.5,
                       relative_tolerance=1e-10, start_values={"mu": 2.0})
    assert np.allclose(ref["time"], r.t)
    assert np.abs(r["x0"] - ref["x0"]).max() < 1e-6
    assert np.abs(r["x1"] - ref["x1"]).max() < 1e-6


@pytest.mark.parametrize("fmi", [2, 3])
@pytest.mark.parametrize("solver", ["rk45", "rk4", "radau"])
def test_bouncing_ball_impacts(run, fmi, solver):
    """Impacts located at the closed form's times t1 = sqrt(2h/g), t_k+1 = t_k + 2 e^k v1/g
    (v1 = sqrt(2 g h)) to the event tolerance, with an explicit, a fixed and a stiff solver;
    the bounce count is the FMU's Integer output."""
    step = "step: 0.01" if solver == "rk4" else "rtol: 1e-9, atol: 1e-12"
    r = run("bouncing_ball", fmi, f"""
blocksim: 1
name: bb
blocks:
  B: {{type: fmu, file: FMU, parameters: {{e: 0.8}}, start: {{h: 2.0}}}}
simulation: {{stop: 3, solver: {solver}, {step}}}
record: {{h: B.h, v: B.v, n: B.bounces}}
""")
    g, e, h = 9.81, 0.8, 2.0
    t, v1, expected = math.sqrt(2 * h / g), math.sqrt(2 * g * h), []
    for k in range(20):
        if t > 3:
            break
        expected.append(t)
        t += 2 * e ** (k + 1) * v1 / g
    times = r.events_t
    assert len(times) == len(expected)
    tol = 1e-6 if solver == "rk4" else 1e-7  # the state's error at the impact, not the root finder's
    assert np.abs(times - expected).max() < tol
    assert r["n"][-1] == len(expected)


@pytest.mark.parametrize("fmi", [2, 3])
def test_stair_time_events_are_hit_exactly(run, fmi):
    """The FMU's nextEventTime 1, 2, 3 become time events: the fixed-step solver lands on
    them exactly (step 0.3 does not divide them), the stair steps there and x = the integral
    of 1 + floor(t) is exact (RK4 on a piecewise constant derivative)."""
    r = run("stair", fmi, """
blocksim: 1
name: stair
blocks:
  S: {type: fmu, file: FMU}
simulation: {stop: 3.5, solver: rk4, step: 0.3}
record: {step: S.step, x: S.x}
""")
    assert list(r.events_t) == [1.0, 2.0, 3.0]
    exact = np.array([sum(min(max(t - k, 0.0), 1.0) * (k + 1) for k in range(4)) for t in r.t])
    assert np.abs(r["x"] - exact).max() < 1e-12
    assert r["step"][-1] == 4.0 and 1.0 in r.t and 3.0 in r.t


def test_feedthrough_ports_fmi2_scalars_and_fmi3_arrays(run):
    """FMI 2.0 spells the array as scalars u[1], u[2] (ports u_1, u_2); FMI 3.0 keeps one
    port u of shape (2,). y = gain u + n (the model's equation), Integer and Boolean
    parameters set by value."""
    r3 = run("feedthrough", 3, """
blocksim: 1
name: ft3
blocks:
  C: {type: constant, value: [1.0, -2.0]}
  F: {type: fmu, file: FMU, parameters: {gain: 3, n: 2, enabled: true}}
wires: [C -> F.u]
simulation: {stop: 0.1}
record: {y: F.y}
""")
    assert r3["y"].shape[1:] == (2,)
    assert np.array_equal(r3["y"][-1], [5.0, -4.0])
    r2 = run("feedthrough", 2, """
blocksim: 1
name: ft2
blocks:
  A: {type: constant, value: 1.0}
  B: {type: constant, value: -2.0}
  F: {type: fmu, file: FMU, parameters: {gain: 3, n: 2, enabled: false}}
wires: [A -> F.u_1, B -> F.u_2]
simulation: {stop: 0.1}
record: {y1: F.y_1, y2: F.y_2}
""")
    assert r2["y1"][-1] == 0.0 and r2["y2"][-1] == 0.0  # enabled false: y = 0


@pytest.mark.parametrize("fmi", [2, 3])
def test_co_simulation_against_closed_form_and_fmpy(run, fmus, fmi):
    """A lag stepped by the FMU's doStep (exact for u held): at hit k+1,
    y = 1 - exp(-(t - t_u)/tau) after u stepped to 1 at the hit t_u = 0.3 (the step source
    switches at 0.25, sampled at the next hit); fmpy's co-simulation of the same FMU with the
    same held input gives the same values."""
    from fmpy import simulate_fmu
    r = run("lag", fmi, """
blocksim: 1
name: lag
blocks:
  U: {type: step, time: 0.25}
  L: {type: fmu, file: FMU, interface: co_simulation, step: 0.1, parameters: {tau: 0.5}}
wires: [U -> L.u]
simulation: {stop: 1, output_interval: 0.1}
record: {y: L.y}
""")
    t = np.round(r.t, 12)
    exact = np.where(t > 0.3, 1 - np.exp(-(t - 0.3) / 0.5), 0.0)
    assert np.abs(r["y"] - exact).max() < 1e-12
    # a step at 0.3 (a repeated time is a jump for fmpy's input)
    signal = np.array([(0.0, 0.0), (0.3, 0.0), (0.3, 1.0), (1.0, 1.0)],
                      dtype=[("time", float), ("u", float)])
    ref = simulate_fmu(str(fmus["lag", fmi]), fmi_type="CoSimulation", stop_time=1,
                       output_interval=0.1, input=signal, start_values={"tau": 0.5})
    assert np.abs(np.interp(r.t, ref["time"], ref["y"]) - r["y"]).max() < 1e-12


@pytest.mark.parametrize("fmi", [2, 3])
def test_model_exchange_and_co_simulation_agree(run, fmi):
    """The same lag by model exchange under a zoh input equals the co-simulation at the hits
    (both exact up to the solver's tolerance)."""
    body = """
blocksim: 1
name: lag_{kind}
blocks:
  U: {{type: sine, amplitude: 1, frequency: 1}}
  H: {{type: zoh, period: 0.05}}
  L: {{type: fmu, file: FMU, interface: {kind}{step}}}
wires: [U -> H, H -> L.u]
simulation: {{stop: 1, output_interval: 0.05, rtol: 1e-10, atol: 1e-12}}
record: {{y: L.y}}
"""
    me = run("lag", fmi, body.format(kind="model_exchange", step=""))
    cs = run("lag", fmi, body.format(kind="co_simulation", step=", step: 0.05"))
    # the CS output at a hit is the state the last doStep reached: ME's value there
    assert np.abs(me["y"] - cs["y"]).max() < 1e-8


SAWTOOTH = """
blocksim: 1
name: saw
blocks:
  S: {{type: fmu, file: FMU, interface: co_simulation, step: 0.3}}
simulation: {{stop: 2.5, mode: {mode}}}
record: {{x: S.x, count: S.count}}
"""


@pytest.mark.parametrize("mode", ["normal", "accelerated"])
@pytest.mark.parametrize("fmi", [2, 3])
def test_co_simulation_returns_early_where_the_fmu_offers_it(run, fmi, mode):
    """The sawtooth (x' = 1, x drops to 0 and count rises at t = 1, 2: by hand) stepped every
    0.3 s. FMI 3.0 doStep returns early at each drop: the block's outputs change there (an
    event of the block at exactly 1 and 2), and the next doStep goes on from there to
    the hit after it. FMI 2.0 handles the drop inside the step: the outputs change at the
    next hit only. Either way each row holds the closed form at the last update <= its time
    (x = tau - drops, count = drops up to tau)."""
    r = run("sawtooth", fmi, SAWTOOTH.format(mode=mode))
    drops = np.array([1.0, 2.0])
    updates = np.arange(9) * 0.3
    if fmi == 3:
        updates = np.union1d(updates, drops)
        np.testing.assert_allclose(r.events_t, drops, rtol=0, atol=1e-12)
    else:
        assert r.events_t.size == 0
    tau = updates[np.searchsorted(updates, r.t + 1e-9, side="right") - 1]
    count = np.searchsorted(drops, tau + 1e-9, side="right")
    np.testing.assert_allclose(r["count"], count, rtol=0, atol=0)
    np.testing.assert_allclose(r["x"], tau - count, rtol=0, atol=1e-12)


def test_fault_names_block_time_status_and_log(fmu_diagram, tmp_path):
    """An FMU that returns Error (the Dahlquist model past fail_time) ends the run: exit 3's
    SimulationError names the block, the time, the function, the status and the FMU's log
    line; the rows so far are kept."""
    path = fmu_diagram("dahlquist", 2, """
blocksim: 1
name: dq_fail
blocks:
  P: {type: fmu, file: FMU, parameters: {fail_time: 0.5}}
simulation: {stop: 1, solver: rk4, step: 0.01}
record: {x: P.x}
""")
    with pytest.raises(blocksim.SimulationError) as info:
        blocksim.run(path, out=tmp_path / "run")
    e = info.value
    assert e.block == "P" and 0.5 <= e.time <= 0.52
    assert "fmi2GetReal returned Error" in str(e) and "dahlquist_fmi2.fmu" in str(e)
    assert any("left the model's range" in n for n in e.notes)
    assert e.result.t[-1] <= 0.5 and len(e.result.t) > 40


def test_linearize_through_directional_derivatives(fmu_diagram):
    """The Van der Pol FMU linearised at (x0, x1) = (2, 0): its directional derivatives give
    A = [[0, 1], [-2 mu x0 x1 - 1, mu (1 - x0^2)]] = [[0, 1], [-1, -3 mu]] (by hand)."""
    path = fmu_diagram("vanderpol", 3, """
blocksim: 1
name: vdp_lin
blocks:
  V: {type: fmu, file: FMU, parameters: {mu: 0.5}}
simulation: {stop: 1}
""")
    model = blocksim.load(path)
    from blocksim.analysis.evaluation import Evaluator
    Evaluator(model, 0.0).start()
    block = model.blocks[0]
    J = block.jacobian()
    assert J is not None
    assert np.allclose(J.A, [[0, 1], [-1, -1.5]], atol=1e-14)
    assert np.allclose(J.C, np.eye(2))  # outputs are the states


@pytest.mark.parametrize("mode", ["normal", "accelerated"])
@pytest.mark.parametrize("fmi", [2, 3])
def test_the_fmus_warnings_join_the_runs_messages(fmu_diagram, tmp_path, fmi, mode):
    """The bouncing ball logs a warning when it comes to rest (v_min 2 m/s, e 0.5: after
    the second impact, at t1 + 2 e v1/g with t1 = sqrt(2h/g), v1 = sqrt(2 g h), h = 1):
    it is one of the run's messages, in meta.json too, in both modes (the compiled run's
    instance logs into a buffer the block reads), once: a run's messages are its own."""
    import json
    import math
    path = fmu_diagram("bouncing_ball", fmi, f"""
blocksim: 1
name: bb_rest
blocks:
  B: {{type: fmu, file: FMU, parameters: {{e: 0.5, v_min: 2.0}}}}
simulation: {{stop: 2, rtol: 1e-10, atol: 1e-12, mode: {mode}}}
record: {{h: B.h}}
""")
    model = blocksim.load(path)
    blocksim.execute(model)  # a first run of the same model: its lines are not the next's
    r = blocksim.execute(model, out=tmp_path / "run")
    assert r.meta["mode"]["mode"] == mode
    g, h = 9.81, 1.0
    t_rest = math.sqrt(2 * h / g) + 2 * 0.5 * math.sqrt(2 * g * h) / g
    (line,) = [m for m in r.messages if "comes to rest" in m]
    assert line.startswith("B: [Warning] the ball comes to rest at t = ")
    assert abs(float(line.rsplit("= ", 1)[1]) - t_rest) < 1e-6
    assert line in json.loads((tmp_path / "run" / "meta.json").read_text())["messages"]


@pytest.mark.parametrize("fmi", [2, 3])
def test_step_events_end_the_step_where_the_fmu_asks(run, fmi):
    """completedIntegratorStep asks for an event after the first accepted step at which
    x = 1.1 t has passed the next whole number k: with RK4 steps of 0.3 that is the step
    ending at 0.3 ceil(k / 0.33), i.e. 1.2, 2.1, 3.0 (by hand); the event counts it."""
    r = run("ticker", fmi, """
blocksim: 1
name: ticker
blocks:
  T: {type: fmu, file: FMU, parameters: {rate: 1.1}}
simulation: {stop: 3.5, solver: rk4, step: 0.3}
record: {count: T.count, x: T.x}
""")
    expected = [0.3 * math.ceil(k / 0.33) for k in (1, 2, 3)]
    assert np.allclose(r.events_t, expected, rtol=0, atol=1e-12)
    assert r["count"][-1] == 3
    assert np.allclose(r["count"][np.searchsorted(r.t, expected)], [1, 2, 3])
