"""blocksim.trim against closed forms: a tank with a square-root outflow (Torricelli), its
level for a given inflow and the inflow for a given level; a level asked of a signal; the
point written, read back and run from; no equilibrium: the residual and the states that
would not settle."""
import numpy as np
import pytest

import blocksim
from blocksim.analysis.operating import OperatingPoint

TANK = """
blocksim: 1
name: tank
parameters: {A: 2.0, a: 0.05, g: 9.81, q: 0.1, h0: 1.0}
blocks:
  Inflow:  {type: constant, value: q}
  Net:     {type: sum, signs: "+-"}
  Area:    {type: gain, K: 1/A}
  Level:   {type: integrator, x0: h0}
  Outflow: {type: function, expr: "a*sqrt(2*g*h)", inputs: [h]}
  Double:  {type: gain, K: 2}
wires:
  - Inflow -> Net.u1
  - Outflow -> Net.u2
  - Net -> Area
  - Area -> Level
  - Level -> Outflow.h
  - Level -> Double
simulation: {stop: 200}
record: {h: Level.y, out: Outflow.y}
"""
A, a, g, q = 2.0, 0.05, 9.81, 0.1


@pytest.fixture
def tank(tmp_path):
    path = tmp_path / "tank.yaml"
    path.write_text(TANK)
    return path


@pytest.mark.parametrize("h0", [0.5, 1.0, 3.0])
def test_the_tank_level_is_torricellis_for_the_inflow(tank, h0):
    # A h' = q - a sqrt(2 g h) = 0  =>  h = (q/a)^2 / (2 g)
    point = blocksim.trim(tank, overrides={"parameters.h0": h0})
    assert point.converged and point.residual <= 1e-9
    assert point.states["Level"] == pytest.approx((q / a) ** 2 / (2 * g), rel=1e-9)


def test_the_inflow_that_holds_a_level_and_a_level_asked_of_a_signal(tank):
    # the level fixed, the inflow free: q = a sqrt(2 g h)
    point = blocksim.trim(tank, fix={"Level.x": 0.8}, free=["Inflow.y"])
    assert point.states["Level"] == 0.8
    assert q + point.inputs["Inflow.y"] == pytest.approx(a * np.sqrt(2 * g * 0.8), rel=1e-9)
    # a signal fixed instead (Double.y = 2 h): the same point, the state found
    spec = blocksim.trim(tank, fix=["Double.y=1.6"], free=["Inflow.y"])
    assert spec.states["Level"] == pytest.approx(0.8, rel=1e-9)
    assert spec.inputs["Inflow.y"] == pytest.approx(point.inputs["Inflow.y"], rel=1e-9)


def test_the_point_is_written_read_and_run_from(tank, tmp_path):
    point = blocksim.trim(tank, fix={"Level.x": 0.8}, free=["Inflow.y"])
    path = tmp_path / "operating_point.yaml"
    point.write(path)
    again = OperatingPoint.read(path)
    assert again.states == {"Level": pytest.approx(0.8)}
    assert again.inputs["Inflow.y"] == pytest.approx(point.inputs["Inflow.y"], rel=1e-15)
    assert again.converged and again.residual == point.residual
    result = blocksim.run(tank, op=path)
    np.testing.assert_allclose(result["h"], 0.8, rtol=1e-9)  # it stays there
    # the level's linear model there: A dh = dq - a g / sqrt(2 g h) dh
    sys = blocksim.linearize(tank, ["Inflow.y"], ["Level.y"], op=path)
    np.testing.assert_allclose(sys.A, [[-a * g / np.sqrt(2 * g * 0.8) / A]], rtol=1e-7)
    np.testing.assert_allclose(sys.B, [[1 / A]], rtol=1e-12)


def test_a_trim_without_an_equilibrium_reports_its_residual_and_the_states(tmp_path):
    path = tmp_path / "ramp.yaml"
    path.write_text("""
blocksim: 1
name: ramp
blocks:
  One:   {type: constant, value: 1}
  Pos:   {type: integrator}
  Speed: {type: integrator}
wires:
  - One -> Speed
  - Speed -> Pos
simulation: {stop: 1}
""")
    with pytest.raises(blocksim.errors.AnalysisError) as info:
        blocksim.trim(path)
    message = str(info.value)
    assert "did not converge" in message and "residual 1" in message
    assert "Speed.x[0] = 1" in message  # the speed would not settle: its rate stays 1
    assert not info.value.point.converged
