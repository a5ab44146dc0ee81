"""diagrams/fmu_motor.yaml: the DC-motor FMU of docs/fmu.md in a PID loop, against the same
equations written as a state_space block, the steady state and the plant's poles worked out
by hand; the committed source FMU is what its C and description build."""
import zipfile
from pathlib import Path

import numpy as np
import pytest

import blocksim

pytest.importorskip("fmpy")
ROOT = Path(__file__).resolve().parents[2]
DIAGRAM = ROOT / "diagrams" / "fmu_motor.yaml"
J, b, K, R, L = 0.01, 0.1, 0.01, 1.0, 0.5  # diagrams/fmu/dc_motor.yaml's start values


def test_the_committed_fmu_is_its_sources_built(tmp_path):
    from blocksim.fmi.build import build_fmu, model_from_yaml
    fresh = build_fmu(model_from_yaml(ROOT / "diagrams" / "fmu" / "dc_motor.yaml"),
                      tmp_path / "dc_motor.fmu", 2, binary=False)
    committed = ROOT / "diagrams" / "fmu" / "dc_motor.fmu"
    with zipfile.ZipFile(fresh) as a, zipfile.ZipFile(committed) as c:
        assert a.namelist() == c.namelist()
        for name in a.namelist():
            assert a.read(name) == c.read(name), f"{name}: rebuild dc_motor.fmu (docs/fmu.md)"


def test_the_fmu_motor_equals_the_motor_as_a_state_space_block(tmp_path):
    """x = (i, w, theta), u = (V, tau_load): A, B from the motor's equations (by hand)."""
    r = blocksim.run(DIAGRAM, overrides=["simulation.output_interval=0.05"])
    text = DIAGRAM.read_text().replace(
        "  Motor: {type: fmu, file: fmu/dc_motor.fmu, interface: model_exchange}",
        f"""  Motor: {{type: state_space, A: [[{-R / L}, {-K / L}, 0], [{K / J}, {-b / J}, 0], [0, 1, 0]],
           B: [[{1 / L}, 0], [0, {-1 / J}], [0, 0]], C: [[0, 1, 0]], D: [[0, 0]]}}
  In: {{type: mux, inputs: 2}}""").replace("PID -> Motor.V", "PID -> In.u1").replace(
        "Load -> Motor.tau_load", "Load -> In.u2\n  - In -> Motor").replace(
        "Motor.speed", "Motor.y")
    text = text.replace("angle: Motor.angle, current: Motor.current, ", "")
    ss = tmp_path / "ss.yaml"
    ss.write_text(text)
    s = blocksim.run(ss, overrides=["simulation.output_interval=0.05"])
    assert np.abs(r["speed"] - s["speed"][:, 0]).max() < 1e-7  # state_space: y of shape (1,)


def test_the_loop_settles_where_the_motor_equations_say():
    """At rest w = 1 (integral action), J dw/dt = 0 gives i = (b w + tau)/K = 11 A and
    L di/dt = 0 gives V = R i + K w = 11.01 V; the overshoot and the load's dip as docs/fmu.md
    gives them."""
    r = blocksim.run(DIAGRAM)
    assert abs(r["speed"][-1] - 1) < 1e-4
    assert abs(r["current"][-1] - 11.0) < 2e-3 and abs(r["volts"][-1] - 11.01) < 2e-3
    assert 1.0085 < r["speed"].max() < 1.0095
    assert 0.9725 < r["speed"][r.t > 3].min() < 0.9735


def test_linearize_through_the_fmu_gives_the_motors_poles():
    """P(s) = K / ((J s + b)(L s + R) + K^2): poles are the roots of J L s^2 + (J R + b L) s +
    b R + K^2 (and the angle's 0), DC gain K / (b R + K^2), from the FMU's directional
    derivatives (exact, not differenced)."""
    from blocksim.analysis.linear_model import linearization
    lin = linearization(blocksim.load(DIAGRAM), ["Motor.V"], ["Motor.speed"], ["Motor.V"])
    assert lin.exact == ["Motor"] and not lin.differenced
    poles = np.sort(np.linalg.eigvals(lin.A).real)
    expected = np.sort(np.r_[np.roots([J * L, J * R + b * L, b * R + K ** 2]).real, 0.0])
    assert np.allclose(poles, expected, atol=1e-9)
    # speed per volt at rest: the (i, w) block of A only (the angle integrates w)
    gain = lin.C[:, :2] @ np.linalg.solve(-lin.A[:2, :2], lin.B[:2])
    assert np.isclose(gain[0, 0], K / (b * R + K ** 2), rtol=1e-12)


@pytest.mark.parametrize("mode", ["normal", "accelerated"])
def test_a_run_from_an_operating_point_starts_the_fmu_there(mode):
    """trim holds the motor at rest against the load (by hand: i = tau/K = 1 A, V = R i =
    1 V); a run started there (--op) sets those states into the FMU, so it stays, in both
    modes; without the operating point the FMU starts from its own start values (i = 0)."""
    sets = ["blocks.Load.time=0", "blocks.Ref.after=0"]
    point = blocksim.trim(DIAGRAM, overrides=sets)
    r = blocksim.run(DIAGRAM, overrides=sets + [f"simulation.mode={mode}"], op=point)
    assert np.allclose(r["current"], 1.0, atol=1e-9) and np.allclose(r["speed"], 0, atol=1e-9)
    plain = blocksim.run(DIAGRAM, overrides=sets + [f"simulation.mode={mode}"])
    assert plain["current"][0] == 0.0
