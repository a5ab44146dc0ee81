"""The implicit solvers' state Jacobian d(dx/dt)/dx, assembled from the blocks' exact
Jacobians along the wires (analysis/state_jacobian.py), against Jacobians worked out by
hand; runs that use it take fewer evaluations than scipy's differences of the whole diagram
and reach the same values; a block on a path without a declared Jacobian leaves the run to
the differences, as before."""
import numpy as np
import pytest

import blocksim
from blocksim.analysis.evaluation import Evaluator
from blocksim.analysis.state_jacobian import StateJacobian, path_blocks
from blocksim.engine.simulator import simulate

# a damped pendulum, stiff for c >> sqrt(k): q' = w, w' = -k sin(q) - c w
PENDULUM = """
blocksim: 1
name: pendulum
parameters: {{k: 1.0, c: 100.0}}
blocks:
  Angle: {{type: integrator, x0: 1.0}}
  Rate: {{type: integrator, x0: 0.5}}
  Accel: {{type: function, expr: "-k*sin(q) - c*w", inputs: [q, w]}}
  Scope: {{type: scope, inputs: 1}}
wires: [Rate -> Angle, Angle -> Accel.q, Rate -> Accel.w, Accel -> Rate, Angle -> Scope]
simulation: {{stop: 4, solver: {solver}, rtol: 1e-8, atol: 1e-10, mode: normal}}
record: {{q: Angle.y, w: Rate.y}}
"""


def _write(tmp_path, text, name="d.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _state(model, block):
    return model.state_slices[block][0].start


def test_the_pendulums_jacobian_is_the_hand_derived_one(tmp_path):
    """At (q, w) = (1, 0.5): d(q', w')/d(q, w) = [[0, 1], [-k cos q, -c]] (by hand), from the
    integrators' and the function block's exact Jacobians joined along the wires; the scope
    is on no path to a derivative."""
    model = blocksim.load(_write(tmp_path, PENDULUM.format(solver="radau")))
    assert path_blocks(model) == {"Angle", "Rate", "Accel"}
    Evaluator(model, 0.0).start()
    jacobian = StateJacobian(model)
    assert jacobian.applies(0.0)
    J = jacobian(0.0)
    q, w = _state(model, "Angle"), _state(model, "Rate")
    expected = np.zeros((2, 2))
    expected[q, w] = 1.0
    expected[w, q], expected[w, w] = -np.cos(1.0), -100.0
    np.testing.assert_allclose(J, expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize("solver", ["radau", "bdf", "lsoda"])
def test_runs_with_the_exact_jacobian_take_fewer_evaluations(tmp_path, solver):
    """The run (blocksim.run: the entry point hands the solver the Jacobian) against the
    same diagram simulated with scipy's differences (the engine alone): fewer evaluations of
    the diagram (nfev, a count), the same values within the solvers' tolerance."""
    path = _write(tmp_path, PENDULUM.format(solver=solver))
    exact = blocksim.run(path)
    _, differenced, info = simulate(blocksim.load(path))
    assert exact.meta["solver"]["jacobian"] == "exact"
    assert info["stats"]["jacobian"] == "differences"
    assert exact.meta["solver"]["nfev"] < info["stats"]["nfev"]
    for name in ("q", "w"):
        assert abs(exact[name][-1] - differenced[name][-1]) < 1e-7


def test_a_block_without_a_jacobian_on_a_path_leaves_the_differences(tmp_path):
    """w' = -log(q) through a math block's log (no declared Jacobian: it checks its domain by
    hand; a product has one now, from its behaviour): the run differences the diagram
    exactly as the engine does alone (the same evaluations, the same values)."""
    path = _write(tmp_path, """
blocksim: 1
name: product_loop
blocks:
  Angle: {type: integrator, x0: 1.0}
  Rate: {type: integrator, x0: 0.5}
  Damp: {type: math, fn: log}
  Neg: {type: gain, K: -1}
wires: [Rate -> Angle, Angle -> Damp, Damp -> Neg, Neg -> Rate]
simulation: {stop: 2, solver: radau, rtol: 1e-8, atol: 1e-10, mode: normal}
record: {q: Angle.y}
""")
    run = blocksim.run(path)
    t, data, info = simulate(blocksim.load(path))
    assert run.meta["solver"]["jacobian"] == "differences"
    assert run.meta["solver"]["nfev"] == info["stats"]["nfev"]
    np.testing.assert_array_equal(run["q"], data["q"])


def test_a_sampled_block_cuts_the_path(tmp_path):
    """x' = -x + zoh(x*x): the product feeds only the zoh, whose output is held between its
    hits, so the product is on no path and d(x')/dx = -1 (by hand) is exact."""
    path = _write(tmp_path, """
blocksim: 1
name: held
blocks:
  X: {type: integrator, x0: 0.5}
  Square: {type: product, ops: "**"}
  Hold: {type: zoh, period: 0.1}
  Sum: {type: sum, signs: "-+"}
wires: [X -> Square.u1, X -> Square.u2, Square -> Hold, X -> Sum.u1, Hold -> Sum.u2,
        Sum -> X]
simulation: {stop: 1, solver: bdf, rtol: 1e-8, atol: 1e-10, mode: normal}
record: {x: X.y}
""")
    model = blocksim.load(path)
    assert path_blocks(model) == {"X", "Sum"}
    Evaluator(model, 0.0).start()
    np.testing.assert_array_equal(StateJacobian(model)(0.0), [[-1.0]])
    assert blocksim.run(path).meta["solver"]["jacobian"] == "exact"


def test_a_diagram_with_an_enabled_subsystem_is_differenced(tmp_path):
    """A gain inside an enabled subsystem: its gate switches the gain on and off during the
    run, which the gain's Jacobian does not know; the subsystem's own block (which holds
    its outputs) is on the path and declares none, so the run differences the diagram as
    the engine does alone (the same evaluations, the same values)."""
    path = _write(tmp_path, """
blocksim: 1
name: enabled
blocks:
  Ref: {type: step, time: 0.5}
  Err: {type: sum, signs: "+-"}
  En: {type: pulse, period: 1, width: 0.5}
  Ctl:
    type: subsystem
    enable: En.y
    diagram: {inputs: {e: K}, outputs: {u: K.y}, blocks: {K: {type: gain, K: 3}}}
  Plant: {type: transfer_function, num: [1], den: [1, 1]}
wires: [Ref -> Err.u1, Plant -> Err.u2, Err -> Ctl.e, Ctl.u -> Plant]
simulation: {stop: 2, solver: radau, rtol: 1e-8, atol: 1e-10, mode: normal}
record: {y: Plant.y}
""")
    assert path_blocks(blocksim.load(path)) == {"Err", "Ctl", "Ctl/K", "Plant"}
    run = blocksim.run(path)
    t, data, info = simulate(blocksim.load(path))
    assert run.meta["solver"]["jacobian"] == "differences"
    assert run.meta["solver"]["nfev"] == info["stats"]["nfev"]
    np.testing.assert_array_equal(run["y"], data["y"])
