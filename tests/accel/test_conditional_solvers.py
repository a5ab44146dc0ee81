"""Enabled and triggered subsystems agree in both modes under other solvers too: a
fixed-step one (crossings located inside its steps), dop853 (its dense output) and radau
(scipy's loop around compiled evaluations: the gates read flags the interpreted handlers
and decisions set, and a trigger's run is interpreted there)."""
from pathlib import Path

import pytest
from test_both_modes import assert_same, both

CORPUS = Path(__file__).parent / "corpus"


@pytest.mark.parametrize("name", ["conditional_enabled.yaml", "conditional_triggered.yaml"])
@pytest.mark.parametrize("solver", ["rk4", "dop853", "radau"])
def test_conditional_subsystems_agree_under_other_solvers(name, solver):
    accelerated, normal = both(CORPUS / name, [f"simulation.solver={solver}",
                                               "simulation.step=0.01"])
    assert accelerated[2]["events"][0].size >= 20
    assert_same(accelerated, normal, 1e-9)
