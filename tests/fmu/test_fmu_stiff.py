"""scipy's implicit solvers get an FMU's directional derivatives as the state Jacobian (the
run's, assembled along the wires): a stiff FMU written for the test against its closed
form, FMI 2.0 and 3.0; an FMU without directional derivatives is differenced as before."""
import dataclasses
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.engine.simulator import simulate

pytest.importorskip("fmpy")

MODELS = Path(__file__).parent / "models"
# eigenvalues -1 and -k = -1000, x(0) = (2, 0), u = 0 (tests/fmu/models/stiff.c)
STIFF = """
blocksim: 1
name: stiff
blocks:
  P: {{type: fmu, file: FMU}}
simulation: {{stop: 2, solver: {solver}, rtol: 1e-8, atol: 1e-10, mode: normal}}
record: {{x1: P.x1, x2: P.x2}}
"""


def _closed_form_error(r):
    """x1 = exp(-t) + exp(-k t), x2 = exp(-t) - exp(-k t) with k = 1000 (the eigenvectors
    [1, 1] and [1, -1] of the model's matrix)."""
    slow, fast = np.exp(-r.t), np.exp(-1000.0 * r.t)
    return max(np.abs(r["x1"] - (slow + fast)).max(), np.abs(r["x2"] - (slow - fast)).max())


@pytest.mark.parametrize("fmi", [2, 3])
@pytest.mark.parametrize("solver", ["radau", "bdf", "lsoda"])
def test_a_stiff_fmu_is_solved_with_its_directional_derivatives(fmu_diagram, fmi, solver):
    """The closed form within the solvers' tolerance; fewer evaluations (nfev) than scipy's
    differences of the same diagram (the engine alone), the same values within tolerance."""
    path = fmu_diagram("stiff", fmi, STIFF.format(solver=solver))
    r = blocksim.run(path)
    assert r.meta["solver"]["jacobian"] == "exact"
    assert _closed_form_error(r) < 1e-7
    _, differenced, info = simulate(blocksim.load(path))
    assert info["stats"]["jacobian"] == "differences"
    assert r.meta["solver"]["nfev"] < info["stats"]["nfev"]
    assert np.abs(r["x1"][-1] - differenced["x1"][-1]) < 1e-7


def test_an_fmu_without_directional_derivatives_is_differenced(tmp_path):
    """The same model built without directional derivatives: the run differences the
    diagram exactly as the engine does alone (same evaluations, same values), and still
    meets the closed form."""
    from blocksim.fmi.build import build_fmu, model_from_yaml
    model = dataclasses.replace(model_from_yaml(MODELS / "stiff.yaml"),
                                directional_derivatives=False)
    build_fmu(model, tmp_path / "plain.fmu", 2)
    path = tmp_path / "plain.yaml"
    path.write_text(STIFF.format(solver="radau").replace("FMU", "plain.fmu"))
    r = blocksim.run(path)
    t, data, info = simulate(blocksim.load(path))
    assert r.meta["solver"]["jacobian"] == "differences"
    assert r.meta["solver"]["nfev"] == info["stats"]["nfev"]
    np.testing.assert_array_equal(r["x1"], data["x1"])
    assert _closed_form_error(r) < 1e-7
