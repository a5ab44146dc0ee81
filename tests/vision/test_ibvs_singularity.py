"""A visual servo that fails says why (issue 26, item 6). data/ibvs_singular.yaml is demo6
started with the Puma's elbow nearly stretched: the arm passes the elbow singularity, the
joint rates inv(Jn) commands grow without bound and the camera ends up with a target point
behind it. The error names the ill-conditioned inversions before it (block, time, condition
number), and meta.json's visibility report agrees with the error."""
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocks.conditioning import ILL_CONDITIONED, ConditionWatch, pinv_cond
from blocks.robot import load_robot
from blocksim.errors import SimulationError

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[2]
PUMA = load_robot("puma560")
# the Puma's elbow singularity: the wrist centre on the line of the upper arm, where
# a3·cos(q3) - d4·sin(q3) = 0 with a3 = 0.0203, d4 = 0.4318 (robots spec), the stretched
# branch q3 = atan2(a3, d4) - pi/2
ELBOW = math.atan2(0.0203, 0.4318) - math.pi / 2


@pytest.fixture(scope="module")
def failed(tmp_path_factory):
    out = tmp_path_factory.mktemp("ibvs")
    with pytest.raises(SimulationError) as info:
        blocksim.run(DATA / "ibvs_singular.yaml", out=out)
    return info.value, out


def test_the_arm_passes_the_elbow_singularity_before_the_camera_fails(failed):
    error, _ = failed
    assert ELBOW == pytest.approx(-1.524, abs=5e-4)          # the q3 = -1.524
    assert error.block == "camera" and "behind the camera" in error.message
    q3 = error.result["q"][:, 2]
    crossings = np.flatnonzero(np.diff(np.sign(q3 - ELBOW)))
    assert len(crossings) and error.result.t[crossings[0]] < error.time


def test_the_error_names_the_ill_conditioned_inversions_before_it(failed):
    """The note's condition numbers against numpy's 1-norm condition number of Jn at the
    recorded joint angles: the block saw every recorded instant (and the solver's stages
    between them), so its worst is at least the recorded rows' worst, and its earliest one
    above 1000 is no later than the first such recorded row."""
    error, _ = failed
    (note,) = error.notes
    assert note.startswith("block 'ijacob': the Jacobian it inverts was nearly singular from t = ")
    assert f"\n  note: {note}" in str(error)
    first_t, first_cond, worst, worst_t = map(float, re_numbers(note))
    rows = error.result
    cond = np.array([np.linalg.cond(PUMA.jacobn(q), 1) for q in rows["q"]])
    assert worst >= cond.max() * (1 - 1e-3)
    assert first_cond > ILL_CONDITIONED
    assert first_t <= rows.t[np.argmax(cond > ILL_CONDITIONED)] < error.time
    assert first_t <= worst_t


def re_numbers(note):
    import re
    found = re.search(r"from t = (\S+) \(condition number (\S+); the worst, (\S+), at "
                      r"t = ([^)]+)\)", note)
    return found.groups()


def test_meta_json_agrees_with_the_error(failed):
    """The point that went behind the camera is reported as leaving the image at the
    failure's time, although no recorded row holds that instant."""
    error, out = failed
    meta = json.loads((out / "meta.json").read_text())
    assert meta["status"] == "failed" and meta["error"] == str(error)
    assert meta["notes"] == error.notes
    camera = meta["blocks"]["camera"]
    assert camera["all_visible"] is False
    behind = [i for i, p in enumerate(camera["points"]) if p.get("behind_camera")]
    assert behind and behind == [int(i) for i in re_points(error.message)]
    for i in behind:
        assert camera["points"][i]["left_image"] is True
        assert camera["points"][i]["first_outside"] == pytest.approx(error.time)
    assert any("behind the camera at t = " in m for m in meta["messages"])


def re_points(message):
    import re
    return re.findall(r"(\d+) \(Z = ", message)


def test_the_command_line_prints_the_note(tmp_path):
    r = subprocess.run([sys.executable, "-m", "blocksim", "run", str(DATA / "ibvs_singular.yaml"),
                        "--out", str(tmp_path / "run"), "--no-plots"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 3
    assert "behind the camera" in r.stderr and "note: block 'ijacob'" in r.stderr
    assert "Traceback" not in r.stderr


FUNCTION_INV = """
blocksim: 1
blocks:
  Clock: {type: clock}
  M:     {type: function, expr: "[[1, 0], [0, 1 - t]]", inputs: [t]}
  Inv:   {type: function, expr: "inv(A) @ [1, 1]", inputs: [A]}
wires: [Clock -> M, M -> Inv]
simulation: {solver: euler, step: 1e-4, stop: 2}
record: {x: Inv.y}
"""


def test_inv_in_a_function_block_is_watched_too(tmp_path):
    """inv(diag(1, 1 - t)) is singular at t = 1: the run fails there, and the note gives the
    first evaluation with a condition number above 1000: κ₁ = 1/(1 - t) by hand, t the
    first multiple of the step beyond 0.999."""
    path = tmp_path / "d.yaml"
    path.write_text(FUNCTION_INV)
    model = blocksim.load(path)
    with pytest.raises(SimulationError) as info:
        blocksim.execute(model)
    error = info.value
    assert error.block == "Inv" and error.time == pytest.approx(1.0)
    (note,) = error.notes
    assert note.startswith("block 'Inv': a matrix its expression inverts was nearly singular")
    watch = next(b for b in model.blocks if b.name == "Inv")._watch
    t_first, cond = watch.first
    assert t_first == pytest.approx(0.9991, abs=1e-9)
    assert cond == pytest.approx(1 / (1 - t_first), rel=1e-9)
    # a second run of the same model starts afresh, and ends the same way
    with pytest.raises(SimulationError) as again:
        blocksim.execute(model)
    assert again.value.notes == error.notes


def test_a_failure_after_well_conditioned_inversions_has_no_note(tmp_path):
    """M = diag(1, 2 - t)·sqrt(0.4 - t): condition number 2 - t <= 2 while it shrinks, and
    not a number from t = 0.4 on, where the run fails."""
    path = tmp_path / "d.yaml"
    path.write_text(FUNCTION_INV.replace('"[[1, 0], [0, 1 - t]]"',
                                         '"[[1, 0], [0, 2 - t]] * sqrt(0.4 - t)"'))
    with pytest.raises(SimulationError) as info:
        blocksim.run(path)
    assert info.value.time == pytest.approx(0.4, abs=1e-3)
    assert info.value.notes == [] and "note:" not in str(info.value)


@pytest.mark.parametrize("seed", range(5))
def test_condition_numbers_against_numpy(seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(6, 6)) @ np.diag(10.0 ** rng.uniform(-4, 0, 6))
    watch = ConditionWatch("A")
    watch.inverse(0.5, A, np.linalg.inv(A))
    assert watch.worst == pytest.approx(np.linalg.cond(A, 1), rel=1e-9)
    W = rng.normal(size=(6, 7))
    Winv, cond = pinv_cond(W)
    np.testing.assert_allclose(Winv, np.linalg.pinv(W), atol=1e-12)
    assert cond == pytest.approx(np.linalg.cond(W), rel=1e-9)


def test_a_watched_inv_is_still_priced_as_n_cubed(tmp_path):
    """The function block's inv is a wrapper; the evaluator's work limit still counts n³."""
    path = tmp_path / "d.yaml"
    path.write_text(FUNCTION_INV.replace('"inv(A) @ [1, 1]"', '"inv(eye(1010))[0, 0] * A"'))
    with pytest.raises(blocksim.errors.DiagramError, match="operations"):
        blocksim.load(path)
