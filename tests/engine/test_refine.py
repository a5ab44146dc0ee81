"""simulation.refine (Simulink's Refine factor): k rows per solver step, the k - 1 inside it
taken from the solver's dense output. Checked against the same solver driven by hand (its
steps and its interpolant), the analytic solution, and the rows and steps of the run
without refine."""
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.engine.solvers import make_stepper

DECAY = """
blocksim: 1
blocks:
  x: {type: integrator, x0: 1}
  k: {type: gain, K: -1}
wires: [x -> k, k -> x]
simulation: {stop: 2, solver: %s, rtol: 1e-8, atol: 1e-10}
record: {x: x.y}
"""


@pytest.mark.parametrize("solver", ["rk45", "dop853", "rk4"])
def test_refined_rows_are_the_solvers_dense_output_and_steps_are_unchanged(run_diagram, solver):
    """x' = -x, x(0) = 1 (x = e^-t): the run with refine 4 has the rows of the run without
    it at every 4th row, the same steps, and between them the interpolant of the step they
    lie in at t_old + j (t - t_old)/4, as the stepper driven by hand gives it."""
    plain = run_diagram(DECAY % solver)
    refined = run_diagram(DECAY % solver, **{"simulation.refine": 4})
    assert refined.meta["solver"]["nsteps"] == plain.meta["solver"]["nsteps"] > 10
    assert refined.meta["solver"]["refine"] == 4
    np.testing.assert_array_equal(refined.t[::4], plain.t)
    np.testing.assert_array_equal(refined["x"][::4], plain["x"])
    assert len(refined.t) == 4 * (len(plain.t) - 1) + 1

    # the same solver by hand (the simulator's defaults: max_step and step from the span)
    stepper = make_stepper(solver, lambda t, y: -y, 0.0, np.array([1.0]), 2.0, rtol=1e-8,
                           atol=1e-10, max_step=2.0 / 50, step=2.0 / 1000, origin=0.0)
    t, x = [0.0], [1.0]
    while stepper.t < 2.0:
        stepper.step()
        h = (stepper.t - stepper.t_old) / 4
        inside = [stepper.t_old + j * h for j in (1, 2, 3)]
        t += inside + [stepper.t]
        x += [float(stepper.dense(ti)[0]) for ti in inside] + [float(stepper.y[0])]
    np.testing.assert_array_equal(refined.t, t)
    np.testing.assert_allclose(refined["x"], x, rtol=0, atol=1e-15)
    # and the interpolant is the solution, to the solver's accuracy
    np.testing.assert_allclose(refined["x"], np.exp(-refined.t), rtol=0, atol=1e-7)


ROOT = Path(__file__).resolve().parents[2]
SWITCHED = """
blocksim: 1
blocks:
  u: {type: step, time: 0.3}
  x: {type: integrator, x0: 1}
  e: {type: sum, signs: "+-"}
wires: [u -> e.u1, x -> e.u2, e -> x]
simulation: {stop: 1, solver: rk45, rtol: 1e-8}
record: {x: x.y}
"""


@pytest.mark.parametrize("run", ["bouncing ball", "step"])
def test_refine_keeps_events_and_time_order(run_diagram, run):
    """Located crossings (the bouncing ball's impacts) and a time event (a step at 0.3 s):
    the refined run has the same steps and event rows; its rows are in time order."""
    def go(**overrides):
        if run == "step":
            return run_diagram(SWITCHED, **overrides)
        return blocksim.run(ROOT / "diagrams" / "bouncing_ball.yaml",
                            overrides={"simulation.stop": 5, **overrides})

    plain, refined = go(), go(**{"simulation.refine": 3})
    assert refined.meta["solver"]["nsteps"] == plain.meta["solver"]["nsteps"]
    np.testing.assert_array_equal(refined.events_t, plain.events_t)
    assert np.all(np.diff(refined.t) >= 0)
    assert set(plain.t) <= set(refined.t) and len(refined.t) > 2.5 * len(plain.t)
    for t in plain.events_t if run != "step" else [0.3]:
        assert np.sum(refined.t == t) == np.sum(plain.t == t) >= 1
    if run != "step":
        assert len(plain.events_t) >= 3


@pytest.mark.parametrize("setting, message", [
    ("refine: 2.5", "simulation.refine must be a whole number"),
    ("refine: 0", "simulation.refine must be a positive"),
    ("{refine: 4, output_interval: 0.1}", "use one of them"),
])
def test_bad_refine_is_refused(tmp_path, setting, message):
    text = DECAY % "rk45"
    if setting.startswith("{"):
        text = text.replace("atol: 1e-10}", "atol: 1e-10, " + setting[1:])
    else:
        text = text.replace("atol: 1e-10}", "atol: 1e-10, " + setting + "}")
    path = tmp_path / "d.yaml"
    path.write_text(text)
    with pytest.raises(blocksim.DiagramError) as e:
        blocksim.load(path)
    assert message in str(e.value) and "d.yaml:" in str(e.value)


def test_refine_runs_in_compiled_code_too(run_diagram):
    """Accelerated mode records the refined rows in its compiled loop: the same rows as normal
    mode (within 1e-12 relative: the same dense output), every k-th row a step's; under auto
    refine no longer sends a run to normal mode."""
    go = lambda mode, k: run_diagram(DECAY % "rk45", **{"simulation.refine": k,  # noqa: E731
                                                       "simulation.mode": mode})
    fast, normal, plain = go("accelerated", 3), go("normal", 3), go("accelerated", 1)
    assert fast.meta["mode"]["mode"] == "accelerated"
    np.testing.assert_array_equal(fast.t, normal.t)
    np.testing.assert_allclose(fast["x"], normal["x"], rtol=1e-12, atol=0)
    np.testing.assert_array_equal(fast.t[::3], plain.t)
    assert "refine" not in go("auto", 2).meta["mode"]["why"]
