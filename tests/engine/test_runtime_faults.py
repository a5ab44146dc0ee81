"""A domain fault at run time names the block and what went wrong, found after the fault by
re-evaluating the failing instant with numpy's floating-point checks on (exit 3, partial
results written) -- not a solver's "step size too small"."""
import json

import numpy as np
import pytest

from blocksim.cli import main

QUOTIENT = """blocksim: 1
blocks:
  One: {type: constant, value: 1}
  Den: {type: ramp, slope: -1, initial: 0.5}
  Quotient: {type: product, ops: "*/"}
  I: {type: integrator}
wires: [One -> Quotient.u1, Den -> Quotient.u2, Quotient -> I]
simulation: {stop: 1}
record: {x: I.y}
"""

FUNCTION = """blocksim: 1
blocks:
  C: {type: clock}
  F: {type: function, expr: "%s", inputs: [t]}
  I: {type: integrator}
wires: [C -> F, F -> I]
simulation: {stop: 1}
record: {x: I.y}
"""


@pytest.mark.parametrize("solver", ["rk45", "rk4", "dop853"])
def test_division_by_zero_names_the_block(tmp_path, capsys, solver):
    # 1/(0.5 - t) is infinite at t = 0.5 exactly: its integral -log(1 - 2t) diverges there
    path = tmp_path / "q.yaml"
    path.write_text(QUOTIENT)
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--quiet", "--solver", solver]) == 3
    err = capsys.readouterr().err
    assert "simulation error: block 'Quotient' port 'y': division by zero at t = 0.5\n" in err
    assert "step size" not in err and "Traceback" not in err
    meta = json.loads((out / "meta.json").read_text())
    assert meta["complete"] is False
    data = np.load(out / "results.npz")
    assert 0.4 < data["t"][-1] < 0.5 and np.isfinite(data["x"]).all()


@pytest.mark.parametrize("expr, message, at", [
    ("log(t - 0.4)", "log of a negative number", 0.0),
    ("log(0.4 - t)", "log of zero", 0.4),
    ("log(0.4 - t) * 0 + 1 / (t - 0.25)", "division by zero", 0.25),
    ("sqrt(0.7 - t)", "square root of a negative number", 0.7),
    ("acos(t + 0.2)", "acos of a value outside [-1, 1]", 0.8),
])
def test_domain_faults_in_function_blocks_name_the_block(tmp_path, capsys, expr, message, at):
    path = tmp_path / "f.yaml"
    path.write_text(FUNCTION % expr)
    assert main(["run", str(path), "--out", str(tmp_path / "o"), "--quiet"]) == 3
    err = capsys.readouterr().err
    assert f"simulation error: block 'F' port 'y': {message} at t = " in err, err
    t = float(err.split(" at t = ")[1].split()[0])
    assert at <= t < at + 0.05
