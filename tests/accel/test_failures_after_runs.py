"""What a failed compiled run leaves for after the run is what normal mode leaves: the notes of
the blocks that watched what they computed (the condition numbers of the matrices ijacob and
a function block's inv and pinv invert) in meta.json, and the camera's visibility report
marking the points whose going behind it stopped the run. The reference is normal mode on
the same diagram."""
import json
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.cli import main
from blocksim.errors import SimulationError

CORPUS = Path(__file__).parent / "corpus"


def _failed_run(path, mode, out, **overrides):
    """meta.json and the error of a run of `path` in `mode` that fails."""
    with pytest.raises(SimulationError) as info:
        blocksim.run(path, overrides={"simulation.mode": mode, **overrides}, out=out,
                     plots=False)
    return json.loads((out / "meta.json").read_text()), info.value


@pytest.mark.parametrize("name", ["fault_camera.yaml", "fault_singular_jacobian.yaml",
                                  "fault_function_conditioning.yaml",
                                  "fault_conditioning_solver.yaml"])
@pytest.mark.parametrize("solver", [None, "radau", "bdf", "lsoda"])
def test_a_failed_compiled_run_reports_what_normal_mode_reports(tmp_path, name, solver):
    """The diagram's own solver (compiled loop), and scipy's (compiled evaluations)."""
    overrides = {"simulation.solver": solver} if solver else {}
    meta, error = _failed_run(CORPUS / name, "accelerated", tmp_path / "fast", **overrides)
    meta0, error0 = _failed_run(CORPUS / name, "normal", tmp_path / "slow", **overrides)
    assert meta["mode"]["mode"] == "accelerated" and meta0["mode"]["mode"] == "normal"
    assert str(error) == str(error0) and error.notes == error0.notes
    assert meta.get("notes") == meta0.get("notes")
    assert meta.get("blocks") == meta0.get("blocks")


def test_the_camera_marks_the_points_behind_it_in_both_modes(tmp_path):
    """Points 0 and 1 (world z = 1.5) reach Z = 0 when the camera rises to 1.5 m; point 2
    (z = 1.7) is still in front (fault_camera.yaml's numbers)."""
    meta, error = _failed_run(CORPUS / "fault_camera.yaml", "accelerated", tmp_path)
    points = meta["blocks"]["Camera"]["points"]
    assert error.time == pytest.approx(1.5)
    assert [p.get("behind_camera", False) for p in points] == [True, True, False]
    assert meta["blocks"]["Camera"]["all_visible"] is False


def test_the_notes_say_when_the_jacobian_became_nearly_singular(tmp_path):
    """J = [[1, 0], [0, cos t]]: kappa = 1/|cos t| (for both inv's 1-norm and pinv's 2-norm),
    above 1000 once |cos t| < 1e-3, i.e. within 1e-3 of pi/2 = 1.5708; the rk4 grid of
    0.001 s first evaluates there at t = 1.5700 (cos = 7.96e-4)."""
    _, error = _failed_run(CORPUS / "fault_singular_jacobian.yaml", "accelerated", tmp_path)
    assert len(error.notes) == 2
    for note in error.notes:
        assert "nearly singular from t = 1.57 (condition number 1.26e+03" in note


@pytest.mark.parametrize("name, culprit", [
    ("fault_delay.yaml", "block 'Root' port 'y': square root of a negative number at t = 1.1"),
    ("fault_singular_probe.yaml", "block 'F' port 'y': LinAlgError: Singular matrix at t = 2")])
def test_a_failure_the_diagnosis_recomputes_blocks_for_exits_3_with_its_rows(tmp_path, capsys,
                                                                           name, culprit):
    """After a compiled run fails, the diagnosis recomputes blocks interpreted: a transport
    delay (whose history only the compiled run has: an IndexError) and an inv meeting a
    singular matrix just after the failure (LinAlgError) were tracebacks with no run
    directory. Both modes exit 3 with the same message and the rows so far. The culprits:
    sqrt(1 - (t - 0.1)) < 0 from t = 1.1 on the rk4 grid of 0.01; floor(t) - 2 = 0 from
    t = 2 (the diagram's descriptions)."""
    outputs = {}
    for run_mode in ("normal", "accelerated"):
        out = tmp_path / run_mode
        code = main(["run", str(CORPUS / name), "--mode", run_mode, "--no-plots", "--out",
                     str(out)])
        err = capsys.readouterr().err
        assert code == 3 and culprit in err and "Traceback" not in err
        meta = json.loads((out / "meta.json").read_text())
        assert meta["complete"] is False and meta["mode"]["mode"] == run_mode
        with np.load(out / "results.npz") as results:
            outputs[run_mode] = err.replace(str(out), "OUT"), results["t"], results["i"]
    (err, t, i), (err0, t0, i0) = outputs["accelerated"], outputs["normal"]
    assert err == err0 and len(t) > 10
    np.testing.assert_allclose(t, t0, rtol=1e-12)
    np.testing.assert_allclose(i, i0, rtol=1e-12)
