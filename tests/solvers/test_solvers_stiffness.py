"""Step budget and stiffness detection of the explicit adaptive methods (issue 16, item 12).

Truth: for a linear problem y' = λ y every stage is k = λ·Y, so the stage-difference
estimate of h·λ is exact; the stability intervals of the three pairs on the negative real
axis are computed here from their tableaus (|R(-x)| = 1); a problem whose step is held by
stability is y' = -1e7 (y - sin t), stiff by any definition (Hairer & Wanner II, IV.1).
"""
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.engine.solvers import StepBudgetError, StiffnessError, make_stepper
from blocksim.engine.solvers.tableaus import BS23, DOP853, DP54

from stepping import Oscillator

PAIRS = {"rk23": BS23, "rk45": DP54, "dop853": DOP853}


def stability_interval(tableau):
    """x > 0 where |R(-x)| first reaches 1, R(z) = 1 + z bᵀ(I - zA)⁻¹1 of the propagated
    solution (the FSAL row of A is b)."""
    S = tableau.stages
    A, b = tableau.A[:S, :S], tableau.A[S - 1, :S]
    xs = np.linspace(1e-3, 10, 20001)
    growth = [abs(1 - x * b @ np.linalg.solve(np.eye(S) + x * A, np.ones(S))) for x in xs]
    return xs[np.argmax(np.array(growth) > 1.0)]


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_bound_is_just_inside_the_stability_interval(name):
    i, j, bound = PAIRS[name].stiffness
    edge = stability_interval(PAIRS[name])
    assert 0.9 * edge < bound < edge, (bound, edge)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_estimate_is_h_lambda_on_a_linear_problem(name):
    lam = -50.0
    stepper = make_stepper(name, lambda t, y: lam * y, 0.0, np.array([1.0, -2.0]), 1.0,
                           rtol=1e-6, atol=1e-9, max_step=1.0)
    for _ in range(5):
        stepper.step()
        h = stepper.t - stepper.t_old
        assert stepper.stiffness_estimate() == pytest.approx(abs(lam) * h, rel=1e-9)


def stiff(t, y, out=np.empty(1)):
    out[0] = -1e7 * (y[0] - np.sin(t))
    return out


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_stiff_problem_stops_early_with_advice(name):
    stepper = make_stepper(name, stiff, 0.0, np.array([1.0]), 100.0, max_step=2.0,
                           max_steps=10_000_000, t_final=100.0)
    with pytest.raises(StiffnessError, match="stiff.*radau, bdf or lsoda") as e:
        while stepper.t < 100.0:
            stepper.step()
    assert stepper.nsteps < 5000  # refused after a few hundred steps, not ten million
    assert 0 < e.value.time < 1e-2


def test_mildly_stiff_problem_within_budget_runs_to_the_end():
    """λ = -1e3 over 10 s needs ~3000 stability-held steps: detected, but well within the
    budget, so the explicit method is left to finish (and its answer is right)."""
    lam = -1e3
    stepper = make_stepper("rk45", lambda t, y: lam * (y - np.cos(t)), 0.0, np.array([0.0]),
                           10.0, rtol=1e-6, atol=1e-9, max_step=0.2, max_steps=10_000_000)
    while stepper.t < 10.0:
        stepper.step()
    # y' = λ(y - cos t): y = (λ² cos t - λ sin t)/(λ² + 1) + C e^{λt}, the transient long gone
    exact = (lam ** 2 * np.cos(10.0) - lam * np.sin(10.0)) / (lam ** 2 + 1)
    assert stepper.y[0] == pytest.approx(exact, abs=1e-6)


@pytest.mark.parametrize("name", ["rk45", "rk4", "radau"])
def test_step_budget_stops_any_solver(name):
    stepper = make_stepper(name, Oscillator(), 0.0, Oscillator.y0, 100.0, rtol=1e-10,
                           atol=1e-12, max_step=1.0, step=0.01, max_steps=50)
    with pytest.raises(StepBudgetError, match="more than 50 steps.*max_steps"):
        while stepper.t < 100.0:
            stepper.step()
    assert stepper.nsteps == 51  # the step beyond the budget is refused


@pytest.mark.parametrize("name", ["euler", "rk4"])
def test_a_run_of_exactly_max_steps_steps_completes(name):
    """max_steps is the most steps a run may take (the compiler accepts step = span /
    max_steps): 10 steps of 0.1 s reach t = 1 with max_steps = 10; 9 do not suffice."""
    for budget, finishes in ((10, True), (9, False)):
        stepper = make_stepper(name, Oscillator(), 0.0, Oscillator.y0, 1.0, step=0.1,
                               max_steps=budget)
        try:
            while stepper.t < 1.0:
                stepper.step()
        except StepBudgetError:
            assert not finishes
        else:
            assert finishes and stepper.nsteps == 10


STIFF_DIAGRAM = """\
blocksim: 1
blocks:
  Clk: {type: clock}
  F: {type: function, inputs: [x, t], expr: "-1e7*x + sin(t)"}
  X: {type: integrator, x0: 1}
wires: [X -> F.x, Clk -> F.t, F -> X]
simulation: {stop: 100, solver: rk45}
record: {x: X.y}
"""


def test_stiff_diagram_on_rk45_is_exit_3_with_partial_results(tmp_path):
    path = tmp_path / "stiff.yaml"
    path.write_text(STIFF_DIAGRAM)
    out = tmp_path / "out"
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "blocksim", "run", str(path), "--out",
                           str(out), "--quiet"], capture_output=True, text=True, timeout=60)
    print(f"stiff rk45 refused after {time.perf_counter() - t0:.2f} s")  # closing-note figure
    assert proc.returncode == 3, proc.stderr
    assert "stiff" in proc.stderr and "radau" in proc.stderr and "Traceback" not in proc.stderr
    meta = json.loads((out / "meta.json").read_text())
    assert meta["complete"] is False and meta["rows"] > 1
    # the same diagram on an implicit solver finishes
    proc = subprocess.run([sys.executable, "-m", "blocksim", "run", str(path), "--out",
                           str(out), "--quiet", "--solver", "radau"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_a_run_heading_for_the_step_budget_stops_early_with_the_projection(tmp_path):
    # the mass-spring-damper to t = 1e12 at rtol 1: its steps settle near 0.2 s, so it
    # needs about 5e12 steps; it used to run to simulation.max_steps before saying so
    # (10^7 steps, ~20 minutes). The steps' pace is projected every PROJECT_EVERY steps
    from blocksim.engine.solvers.base import PROJECT_EVERY

    msd = Path(__file__).resolve().parents[2] / "diagrams" / "msd.yaml"
    with pytest.raises(blocksim.SimulationError) as e:
        blocksim.run(msd, overrides={"simulation.stop": 1e12, "simulation.rtol": 1,
                                     "simulation.max_steps": 2_000_000,
                                     "simulation.mode": "normal"})
    message = str(e.value)
    assert "more than 2,000,000 steps" in message and "max_steps" in message, message
    assert "at the pace of the last" in message
    steps = e.value.result.meta["solver"]["nsteps"]
    assert steps <= 5 * PROJECT_EVERY  # stopped within a few projections, not at 2,000,000
    assert e.value.result.meta["complete"] is False


def test_a_projection_beyond_the_budget_at_a_pace_that_stopped_growing_stops():
    """issue 35 item 15: a run projected to need between 1 and 10 times max_steps went on to
    max_steps; at a radau step's cost (about 1 ms) that is hours. The pace (s a step) is
    taken every PROJECT_EVERY steps; numbers by hand: budget 10^6, t_final 100."""
    from blocksim.engine.solvers.base import FLAT, PROJECT_EVERY, PROJECT_FLAT, Projection

    def projections(paces):
        """Checks at PROJECT_EVERY steps apart with these paces; the number done, or the
        error raised."""
        p, t, n = Projection("radau", 10**6, 100.0, implicit=True), 0.0, 0
        p.check(n, t)
        for k, pace in enumerate(paces):
            n, t = n + PROJECT_EVERY, t + pace * PROJECT_EVERY
            try:
                p.check(n, t)
            except StepBudgetError as e:
                return k + 1, str(e)
        return len(paces), None

    # 2e-5 s a step: 5e6 steps still needed, 5 times the budget: the third such projection
    # stops the run; so it does when the pace wanders within FLAT of the first's
    done, message = projections([2e-5] * 10)
    assert done == PROJECT_FLAT and "more than 1,000,000 steps" in message
    assert "where() or sign() of a state" in message and "use an implicit" not in message
    assert projections([2e-5, 0.8 * FLAT * 2e-5, 0.8 * 2e-5] * 3)[0] == PROJECT_FLAT
    # a pace that keeps growing by more than FLAT may still finish: no stop (needed 5e6
    # falling, never 10 times the budget)
    assert projections([2e-5 * (1.01 * FLAT) ** k for k in range(6)]) == (6, None)
    # a flat pace that fits the budget: 1e-3 s a step needs 1e5 steps
    assert projections([1e-3] * 10) == (10, None)


SLIDING = """\
blocksim: 1
blocks:
  F: {type: function, expr: "where(u > 0, -1, 1)"}
  X: {type: integrator}
wires: [X -> F, F -> X]
simulation: {stop: 0.036, solver: SOLVER, max_steps: 100000, mode: normal}
record: {x: X.y}
"""


@pytest.mark.parametrize("solver", ["radau", "lsoda"])
def test_a_solution_sliding_on_a_jump_of_its_derivative_stops_early(tmp_path, monkeypatch,
                                                                   solver):
    """x' = where(x > 0, -1, 1) from 0 holds x at 0 (Filippov's sliding mode), which the
    implicit solvers follow with steps of about 1e-7 s (radau 6e-8, lsoda 1.2e-7): to
    t = 0.036 they need 6e5 and 3e5 of them, 3 to 6 times the budget of 10^5, under the
    10 times that stopped a run early: they ran to max_steps (10^7 by default: hours of
    radau). Projections every 100 steps here, to keep the test short."""
    from blocksim.engine.solvers import base
    monkeypatch.setattr(base, "PROJECT_EVERY", 100)
    path = tmp_path / "slide.yaml"
    path.write_text(SLIDING.replace("SOLVER", solver))
    with pytest.raises(blocksim.SimulationError) as e:
        blocksim.run(path, out=tmp_path / "out")
    assert "would need about" in str(e.value) and "chattering" in str(e.value)
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    assert meta["complete"] is False and 100 < meta["rows"] <= 10 * 100  # not 10^5
    assert abs(np.load(tmp_path / "out" / "results.npz")["x"]).max() < 1e-6
