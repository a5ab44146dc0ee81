"""Analytic systems built from blocks, run through every solver, against their closed forms.

The expected values are the textbook solutions written in each test; tolerances follow each
method's order (fixed step: the measured convergence order; adaptive: a small multiple of
the requested tolerance).
"""
import math
from fractions import Fraction

import numpy as np
import pytest

import blocksim

FIXED = {"euler": 1, "rk2": 2, "rk4": 4}
ADAPTIVE = ("rk23", "rk45", "dop853")
STIFF = ("radau", "bdf", "lsoda")


DECAY = """
blocksim: 1
parameters: {a: 1.5}
blocks:
  I: {type: integrator, x0: 1}
  G: {type: gain, K: -a}
wires: [I -> G, G -> I]
simulation: {stop: 2}
record: {x: I.y}
"""


def decay_error(run_diagram, solver, **kw):
    r = run_diagram(DECAY, **{"simulation.solver": solver, **kw})
    exact = np.exp(-1.5 * r.t)  # x' = -a x, x(0) = 1  =>  x = exp(-a t)
    return np.max(np.abs(r["x"] - exact)), r


@pytest.mark.parametrize("solver,order", sorted(FIXED.items()))
def test_fixed_step_convergence_order(run_diagram, solver, order):
    h = {1: 1e-3, 2: 1e-2, 4: 5e-2}[order]
    e1, r1 = decay_error(run_diagram, solver, **{"simulation.step": h})
    e2, _ = decay_error(run_diagram, solver, **{"simulation.step": h / 2})
    measured = math.log2(e1 / e2)
    assert abs(measured - order) < 0.25, (solver, measured)
    # the fixed grid: start + k*h, exactly (no accumulation), ending on stop
    assert np.array_equal(r1.t, np.arange(len(r1.t)) * h) or np.allclose(r1.t, np.arange(len(r1.t)) * h, rtol=0, atol=1e-15)
    assert r1.t[-1] == 2.0


def test_euler_is_the_exact_recursion(run_diagram):
    h = 0.1
    r = run_diagram(DECAY, **{"simulation.solver": "euler", "simulation.step": h})
    k = np.arange(len(r.t))
    np.testing.assert_allclose(r["x"], (1 - h * 1.5) ** k, rtol=1e-13)  # x_k = (1 + h*lambda)^k


@pytest.mark.parametrize("solver", ADAPTIVE + STIFF)
def test_adaptive_decay(run_diagram, solver):
    err, r = decay_error(run_diagram, solver, **{"simulation.rtol": 1e-9, "simulation.atol": 1e-12})
    assert err < 2e-7, (solver, err)
    assert r.meta["solver"]["nsteps"] > 0 and r.meta["complete"]


OSCILLATOR = """
blocksim: 1
parameters: {w: 2.0}
blocks:
  V: {type: integrator, x0: 0}
  X: {type: integrator, x0: 1}
  G: {type: gain, K: -w**2}
wires: [V -> X, X -> G, G -> V]
simulation: {stop: 5, output_interval: 0.25}
record: {x: X.y, v: V.y}
"""


@pytest.mark.parametrize("solver", sorted(FIXED) + list(ADAPTIVE + STIFF))
def test_harmonic_oscillator(run_diagram, solver):
    step = {"euler": 1e-4, "rk2": 1e-3, "rk4": 1e-2}.get(solver)
    kw = {"simulation.solver": solver, "simulation.rtol": 1e-9, "simulation.atol": 1e-12}
    if step:
        kw["simulation.step"] = step
    r = run_diagram(OSCILLATOR, **kw)
    # x'' = -w^2 x, x(0) = 1, x'(0) = 0  =>  x = cos(w t), v = -w sin(w t)
    tol = {"euler": 5e-3}.get(solver, 1e-5)
    np.testing.assert_allclose(r["x"], np.cos(2 * r.t), atol=tol)
    np.testing.assert_allclose(r["v"], -2 * np.sin(2 * r.t), atol=2 * tol)
    # output grid: start + k*interval, exactly, ending at stop
    np.testing.assert_array_equal(r.t, np.arange(21) * 0.25)


LAG = """
blocksim: 1
blocks:
  S: {type: step, time: 1}
  P: {type: transfer_function, num: [1], den: [0.5, 1]}
wires: [S -> P]
simulation: {stop: 4}
record: {y: P.y, u: S.y}
"""


@pytest.mark.parametrize("solver", ["rk4"] + list(ADAPTIVE + STIFF))
def test_first_order_lag_step_lands_on_switch(run_diagram, solver):
    kw = {"simulation.solver": solver, "simulation.rtol": 1e-9, "simulation.atol": 1e-12,
          "simulation.step": 0.003}  # 1 is not on the rk4 grid: the step must still land on it
    r = run_diagram(LAG, **kw)
    assert 1.0 in r.t
    i = int(np.flatnonzero(r.t == 1.0)[0])
    assert r["u"][i] == 1.0 and r["u"][i - 1] == 0.0  # right-continuous at the switch
    # 1/(tau s + 1), tau = 0.5, unit step at 1: y = 1 - exp(-(t - 1)/tau) for t >= 1, else 0
    exact = np.where(r.t >= 1, 1 - np.exp(-(r.t - 1) / 0.5), 0.0)
    np.testing.assert_allclose(r["y"], exact, atol=1e-6)


MSD_INTEGRATORS = """
blocksim: 1
parameters: {m: 1.0, c: 0.4, k: 4.0}
blocks:
  F: {type: step, time: 1}
  S: {type: sum, signs: "+--"}
  A: {type: gain, K: 1/m}
  V: {type: integrator}
  X: {type: integrator}
  C: {type: gain, K: c}
  K: {type: gain, K: k}
wires: [F -> S.u1, C -> S.u2, K -> S.u3, S -> A, A -> V, V -> X, V -> C, X -> K]
simulation: {stop: 10, output_interval: 0.1, rtol: 1e-9, atol: 1e-12}
record: {x: X.y}
"""

MSD_STATE_SPACE = """
blocksim: 1
blocks:
  F: {type: step, time: 1}
  P: {type: state_space, A: [[0, 1], [-4, -0.4]], B: [[0], [1]], C: [[1, 0]], D: [[0]]}
  U: {type: reshape, shape: [1]}
  Y: {type: selector, indices: [0]}
wires: [F -> U, U -> P, P -> Y]
simulation: {stop: 10, output_interval: 0.1, rtol: 1e-9, atol: 1e-12}
record:
  x: P.y[0]
"""

# issue 23 item 7: a scalar drives a one-input state_space (B a column) directly, as in
# Simulink, and its one output is a scalar
MSD_STATE_SPACE_SCALAR = """
blocksim: 1
blocks:
  F: {type: step, time: 1}
  P: {type: state_space, A: [[0, 1], [-4, -0.4]], B: [[0], [1]], C: [[1, 0]], D: 0}
wires: [F -> P]
simulation: {stop: 10, output_interval: 0.1, rtol: 1e-9, atol: 1e-12}
record: {x: P.y}
"""

MSD_TF = """
blocksim: 1
blocks:
  F: {type: step, time: 1}
  P: {type: transfer_function, num: [1], den: [1, 0.4, 4]}
wires: [F -> P]
simulation: {stop: 10, output_interval: 0.1, rtol: 1e-9, atol: 1e-12}
record: {x: P.y}
"""


def msd_exact(t):
    """Step response of m x'' + c x' + k x = u(t - 1), m = 1, c = 0.4, k = 4 (underdamped):
    x = (1/k) [1 - e^{-z w s} (cos(wd s) + z w / wd sin(wd s))], s = t - 1 >= 0."""
    w = 2.0
    z = 0.4 / (2 * w)
    wd = w * math.sqrt(1 - z * z)
    s = np.clip(t - 1, 0, None)
    return np.where(t >= 1, (1 - np.exp(-z * w * s) * (np.cos(wd * s) + z * w / wd * np.sin(wd * s))) / 4, 0.0)


@pytest.mark.parametrize("text", [MSD_INTEGRATORS, MSD_STATE_SPACE, MSD_STATE_SPACE_SCALAR,
                                  MSD_TF],
                         ids=["integrators", "state_space", "state_space_scalar",
                              "transfer_function"])
def test_mass_spring_damper_three_ways(run_diagram, text):
    r = run_diagram(text)
    if text is MSD_STATE_SPACE_SCALAR:
        assert r["x"].shape == r.t.shape  # a scalar signal: one value per row
    np.testing.assert_allclose(np.ravel(r["x"]), msd_exact(r.t), atol=1e-7)


def test_scalar_loop_through_a_siso_state_space(run_diagram):
    """Unity feedback around the plant 1/(s^2 + 0.4 s + 4) with a scalar reference: the loop's
    signals are scalars (nothing else fixes their shape). The closed loop P/(1 + P) =
    1/(s^2 + 0.4 s + 5): its step response from scipy.signal.step."""
    from scipy import signal
    r = run_diagram("""
blocksim: 1
blocks:
  R: {type: step, time: 0}
  E: {type: sum, signs: "+-"}
  P: {type: state_space, A: [[0, 1], [-4, -0.4]], B: [[0], [1]], C: [[1, 0]], D: 0}
wires: [R -> E.u1, P -> E.u2, E -> P]
simulation: {stop: 5, output_interval: 0.05, rtol: 1e-10, atol: 1e-12}
record: {x: P.y, e: E.y}
""")
    assert r["x"].shape == r.t.shape and r["e"].shape == r.t.shape
    _, expected = signal.step(([1.0], [1.0, 0.4, 5.0]), T=r.t)
    np.testing.assert_allclose(r["x"], expected, atol=1e-7)


ZOH = """
blocksim: 1
blocks:
  C: {type: clock}
  Z: {type: zoh, period: 0.1}
  D: {type: unit_delay, period: 0.2}
wires: [C -> Z, Z -> D]
simulation: {stop: 1, output_interval: 0.05, solver: rk45}
record: {z: Z.y, d: D.y}
"""


@pytest.mark.parametrize("solver", ["euler", "rk4", "rk45", "radau"])
def test_zoh_staircase_and_multirate_delay(run_diagram, solver):
    r = run_diagram(ZOH, **{"simulation.solver": solver, "simulation.step": 0.03})
    for t, z, d in zip(r.t, r["z"], r["d"]):
        k = math.floor(Fraction(t).limit_denominator(1000) / Fraction(1, 10))
        # zoh: holds u(t_k) = t_k = 0.1 k on [t_k, t_k+1), right-continuous at hits
        assert z == pytest.approx(0.1 * k, abs=1e-12), (t, z)
        # unit_delay (0.2 s) of the zoh: at hit 0.2 j it outputs its input at 0.2 (j - 1),
        # which is 0.2 (j - 1); x0 = 0 before and at the first hit
        j = math.floor(Fraction(t).limit_denominator(1000) / Fraction(1, 5))
        assert d == pytest.approx(max(0.2 * (j - 1), 0.0), abs=1e-12), (t, d)


STOP = """
blocksim: 1
blocks:
  C: {type: clock}
  F: {type: function, expr: "max(t - 1.2345, 0)", inputs: [t]}
  X: {type: stop}
  I: {type: integrator}
  One: {type: constant, value: 1}
wires: [C -> F, F -> X, One -> I]
simulation: {stop: 5, max_step: 0.5}
record: {x: I.y}
"""


def test_stop_block_located_to_solver_accuracy(run_diagram):
    r = run_diagram(STOP)
    assert r.meta["complete"]
    assert r.t[-1] == pytest.approx(1.2345, abs=1e-9)
    assert r["x"][-1] == pytest.approx(1.2345, abs=1e-9)  # x = t


NAN = """
blocksim: 1
blocks:
  C: {type: clock}
  F: {type: function, expr: "sqrt(1 - t)", inputs: [t]}
  I: {type: integrator}
wires: [C -> F, F -> I]
simulation: {stop: 3, max_step: 0.1}
record: {x: I.y}
"""


def test_nan_mid_run_names_block_and_keeps_partial_results(tmp_path):
    path = tmp_path / "nan.yaml"
    path.write_text(NAN)
    out = tmp_path / "out"
    with pytest.raises(blocksim.SimulationError) as info:
        blocksim.run(path, out=out)
    err = info.value
    assert err.block == "F" and err.port == "y"
    assert 0.9 < err.time <= 1.1
    res = np.load(out / "results.npz")
    import json
    meta = json.loads((out / "meta.json").read_text())
    assert meta["complete"] is False and meta["status"] == "failed"
    assert len(res["t"]) > 5 and res["t"][-1] < 1.1
    assert np.all(np.isfinite(res["x"]))


def test_cli_exit_code_3_on_nan(tmp_path, capsys):
    from blocksim.cli import main
    path = tmp_path / "nan.yaml"
    path.write_text(NAN)
    code = main(["run", str(path), "--out", str(tmp_path / "o"), "--quiet", "--no-plots"])
    err = capsys.readouterr().err
    assert code == 3 and "block 'F'" in err and "port 'y'" in err and "Traceback" not in err
    assert (tmp_path / "o" / "results.npz").exists()


def test_record_names_that_clash_with_numpy_keywords(tmp_path):
    text = DECAY.replace("record: {x: I.y}", "record: {file: I.y, allow_pickle: G.y}")
    path = tmp_path / "d.yaml"
    path.write_text(text)
    blocksim.run(path, out=tmp_path / "o")
    res = np.load(tmp_path / "o" / "results.npz")
    assert set(res.files) == {"t", "file", "allow_pickle"}
    np.testing.assert_allclose(res["allow_pickle"], -1.5 * res["file"])


SINGULAR = """
blocksim: 1
blocks:
  C: {type: clock}
  M: {type: function, expr: "inv([[1, 0], [0, 1 - t]])", inputs: [t]}
  T: {type: terminator}
wires: [C -> M, M -> T]
simulation: {stop: 2, solver: rk4, step: 0.25}
record: {m: M.y}
"""


def test_a_failing_block_computation_is_a_simulation_error_naming_the_block(tmp_path):
    path = tmp_path / "sing.yaml"
    path.write_text(SINGULAR)
    with pytest.raises(blocksim.SimulationError) as info:
        blocksim.run(path)
    assert info.value.block == "M" and "LinAlgError" in str(info.value)
    assert info.value.result.t[-1] < 1.0 and not info.value.result.complete
