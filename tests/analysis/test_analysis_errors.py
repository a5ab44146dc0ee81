"""Bad input to trim and linearize, from the command line and from Python: each is one clear
message with exit 2 (a mistake in what was asked) or 3 (the model fails there), never a
traceback and never a silent choice."""
import json
import re
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.block import Block, In, Out
from blocksim.cli import main

ROOT = Path(__file__).resolve().parents[2]
MSD = str(ROOT / "diagrams" / "msd.yaml")

# a mass-spring (1/(s^2 + 0.4 s + 4)) whose position also feeds sqrt(x - 1) into an
# integrator W off the path: at rest W's derivative is sqrt(-1), NaN
NAN_BRANCH = """
blocksim: 1
name: nan_branch
blocks:
  Force: {type: constant, value: 0}
  Mass: {type: transfer_function, num: [1], den: [1, 0.4, 4]}
  Root: {type: function, expr: "sqrt(u - 1)"}
  W: {type: integrator}
wires: [Force -> Mass, Mass -> Root, Root -> W]
simulation: {stop: 1}
"""


def cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_one_state_fixed_twice_is_refused(tmp_path, capsys):
    for fixes in (["Velocity.x=1", "Velocity.x=0"], ["Position.x=1", "Position.x[0]=1"],
                  ["Position.y=1", "x=1"]):  # x is the record name of Position.y
        args = [a for f in fixes for a in ("--fix", f)]
        code, _, err = cli(capsys, "trim", MSD, *args, "--free", "Force.y", "--out", tmp_path)
        assert code == 2, err
        assert f"is fixed twice ({fixes[0]} and {fixes[1]}): give each element one value" in err
    assert not (tmp_path / "operating_point.yaml").exists()


def test_a_point_whose_derivatives_are_not_finite_is_refused_naming_them(tmp_path, capsys):
    path = tmp_path / "nan.yaml"
    path.write_text(NAN_BRANCH)
    code, out, err = cli(capsys, "linearize", path, "--input", "Force.y", "--output",
                         "Mass.y", "--out", tmp_path)
    assert code == 3, out + err
    assert "the state derivatives are not finite (W.x[0] = nan)" in err
    assert not (tmp_path / "linear.npz").exists()


def test_the_python_api_says_what_it_expected():
    with pytest.raises(TypeError, match=r"inputs is a list of names such as "
                                        r"\['Force.y'\], got None"):
        blocksim.linearize(MSD, inputs=None, outputs=["Position.y"])
    with pytest.raises(TypeError, match="at is a time in seconds .a number., got '1'"):
        blocksim.linearize(MSD, ["Force.y"], ["Position.y"], at="1")
    with pytest.raises(TypeError, match="outputs holds names .* got 3"):
        blocksim.linearize(MSD, ["Force.y"], ["Position.y", 3])
    with pytest.raises(TypeError, match="pade is the order .* a whole number, got 2.5"):
        blocksim.linearize(MSD, ["Force.y"], ["Position.y"], pade=2.5)
    with pytest.raises(TypeError, match="fix maps paths .* got the path 1"):
        blocksim.trim(MSD, fix={1: 1})
    # one name is a name, not a list of letters; a time may be any real number
    system = blocksim.linearize(MSD, "Force.y", "Position.y", at=0)
    assert system.input_labels == ["Force_y"] and system.output_labels == ["Position_y"]
    point = blocksim.trim(MSD, fix=[("Position.x", 0.25)], free="Force.y")
    assert float(point.inputs["Force.y"]) == pytest.approx(1.0)  # k x = F: 4 * 0.25


def test_the_pade_order_is_refused_beyond_what_double_precision_holds(tmp_path, capsys):
    from blocksim.analysis.linear_model import MAX_PADE
    path = tmp_path / "delayed.yaml"
    path.write_text("blocksim: 1\nblocks:\n  In: {type: constant, value: 0}\n"
                    "  Delay: {type: transport_delay, delay: 0.2}\n"
                    "wires: [In -> Delay]\nsimulation: {stop: 1}\n")
    for order in (1000, MAX_PADE + 1):  # 1000 was a ZeroDivisionError in python-control
        code, _, err = cli(capsys, "linearize", path, "--input", "In.y", "--output", "Delay.y",
                           "--pade", order, "--out", tmp_path)
        assert code == 2 and f"--pade {order}: the order is a whole number from 0 to 10" in err
        assert "as MATLAB's pade warns" in err
    assert MAX_PADE == 10  # MATLAB's pade: "Padé approximations with order N>10 should be avoided"
    code, out, _ = cli(capsys, "linearize", path, "--input", "In.y", "--output", "Delay.y",
                       "--pade", MAX_PADE, "--out", tmp_path)
    assert code == 0 and "continuous model: 10 states" in out
    with pytest.raises(SystemExit):
        main(["linearize", "--help"])
    assert f"(0 to {MAX_PADE})" in " ".join(capsys.readouterr().out.split())


def test_a_period_that_is_not_a_multiple_of_a_blocks_period_says_which_would_do(tmp_path,
                                                                                capsys):
    path = tmp_path / "mixed.yaml"  # a unit delay at 0.1 s before a lag 1/(s + 1), fed back
    path.write_text("blocksim: 1\nblocks:\n  Ref: {type: constant, value: 1}\n"
                    "  Error: {type: sum, signs: '+-'}\n"
                    "  Hold: {type: unit_delay, period: 0.1}\n"
                    "  Plant: {type: transfer_function, num: [1], den: [1, 1]}\n"
                    "wires: [Ref -> Error.u1, Error -> Hold, Hold -> Plant, Plant -> Error.u2]\n"
                    "simulation: {stop: 1}\n")
    args = ["linearize", path, "--input", "Error.u1", "--output", "Plant.y", "--at", 0,
            "--out", tmp_path]
    # the hint used to be 'give --period T' whether or not a period was given
    code, _, err = cli(capsys, *args, "--period", 0.05)
    assert code == 2, err
    assert ("block 'Hold': its period is 0.1 s and it has no continuous-time equivalent, "
            "needed for the model at period 0.05 s, which is not a whole multiple of 0.1 s") in err
    assert "hint: give --period 0.1 (or a whole multiple of it)" in err
    # at twice its period the unit delay updates twice on a held input: x[k+1] = u[k] exactly
    # (it went through a continuous equivalent, which a pole at z = 0 does not have)
    code, out, err = cli(capsys, *args, "--period", 0.2)
    assert code == 0, err
    A = np.load(tmp_path / "linear.npz")["A"]
    # by hand, states (Hold, Plant): Hold <- Error = -Plant; Plant sampled with a zero-order
    # hold over 0.2 s: Plant <- e^-0.2 Plant + (1 - e^-0.2) Hold
    np.testing.assert_allclose(A, [[0, -1], [1 - np.exp(-0.2), np.exp(-0.2)]], rtol=1e-14)


def test_a_bode_file_that_cannot_be_a_figure_is_refused_before_any_work(tmp_path, capsys):
    args = ["linearize", MSD, "--input", "Force.y", "--output", "Position.y", "--out", tmp_path]
    (tmp_path / "afile").write_text("")
    for bode, words in ((tmp_path / "bode.txt", "the file name must end in .svg, .png, .pdf"),
                        (tmp_path / "bode", "the file name must end in .svg, .png, .pdf"),
                        (tmp_path, "that is a directory; give a file name ending in"),
                        (tmp_path / "afile" / "b.png", "cannot write there")):
        code, out, err = cli(capsys, *args, "--bode", bode)  # were matplotlib tracebacks
        assert code == 2 and f"--bode: error: --bode {bode}: {words}" in err, err
        assert out == "" and not (tmp_path / "linear.npz").exists()


def test_a_loop_opening_on_a_wire_in_no_loop_is_refused(tmp_path, capsys):
    code, _, err = cli(capsys, "linearize", ROOT / "diagrams" / "pid_motor.yaml", "--input",
                       "Error.u1", "--output", "Position.y", "--open", "Error.u1", "--out",
                       tmp_path)
    assert code == 2
    assert ("--open Error.u1: the wire Ref -> Error.u1 is in no loop (nothing from Error "
            "leads back to Ref), so there is no loop to open") in err


def test_a_200_state_loop_is_written_with_its_margins(tmp_path, capsys):
    import yaml

    from loops import chain
    _, L = chain()
    doc = {"blocksim": 1, "name": "chain", "blocks": {
        "Ref": {"type": "constant", "value": 0}, "Error": {"type": "sum", "signs": "+-"},
        "Plant": {"type": "state_space", "A": L.A.tolist(), "B": L.B.tolist(),
                  "C": L.C.tolist(), "D": 0}},
        "wires": ["Ref -> Error.u1", "Error -> Plant", "Plant -> Error.u2"],
        "simulation": {"stop": 1}}
    path = tmp_path / "chain.yaml"
    path.write_text(yaml.safe_dump(doc, default_flow_style=True, width=1 << 30))
    code, out, err = cli(capsys, "linearize", path, "--input", "Error.u1", "--output",
                         "Plant.y", "--open", "Error.u2", "--out", tmp_path)
    assert code == 0, err  # was a LinAlgError in python-control's margin, nothing written
    # the margins are checked against the loop's closed form in test_frequency.py
    assert "margins: gain margin 0.7871 (-2.08 dB) at 0.2969 rad/s; phase margin -128.4 deg" \
           " at 0.3685 rad/s" in out
    assert "B =\n  (200 x 1: see linear.json)" in out  # not 200 lines of it
    with np.load(tmp_path / "linear.npz") as npz:
        np.testing.assert_array_equal(npz["A"], L.A)


def test_what_cannot_be_computed_is_a_note_and_the_model_is_written(tmp_path, capsys,
                                                                    monkeypatch):
    from blocksim.analysis import frequency

    def fails(system):
        raise np.linalg.LinAlgError("did not converge")
    monkeypatch.setattr(frequency, "margins", fails)
    code, out, err = cli(capsys, "linearize", ROOT / "diagrams" / "pid_motor.yaml", "--input",
                         "Error.u1", "--output", "Position.y", "--open", "Error.u2", "--bode",
                         tmp_path / "loop.png", "--out", tmp_path)
    assert code == 0, err
    assert "note: the margins could not be computed: did not converge" in out
    assert "DC gain: inf" in out and "margins:" not in out
    data = json.loads((tmp_path / "linear.json").read_text())
    assert data["notes"] == ["the margins could not be computed: did not converge"]
    assert "margins" not in data and (tmp_path / "loop.png").stat().st_size > 10_000


def test_a_state_order_must_name_every_state_once(tmp_path, capsys):
    from loops import CARTPOLE
    path = tmp_path / "cartpole.yaml"
    path.write_text(CARTPOLE)
    args = ["linearize", path, "--input", "F.y", "--output", "X.y", "Th.y", "--out", tmp_path]
    for order, words in (
            ("X,Xd,Th", "the order leaves out Thd.x[0]: name all 4 states, or none for the "
                        "diagram's order"),
            ("X,Xd,Th,Thd,X.x[0]", "X.x[0] is named twice (X and X.x[0]): name each state once"),
            ("X,Xdd,Th,Thd", "the model has no state or block with states 'Xdd' (did you mean "
                             "'Xd'?)\n  hint: its states: Xd.x[0], X.x[0], Thd.x[0], Th.x[0]")):
        code, _, err = cli(capsys, *args, "--states", order)
        assert code == 2 and f"--states: error: --states: {words}" in err, err
    code, out, err = cli(capsys, *args, "--states", "X,Xd", "Th", "Thd")  # commas or spaces
    assert code == 0, err
    code, out, err = cli(capsys, *args, "--states", "X Xd  Th, Thd")  # also in one argument
    assert code == 0, err
    with np.load(tmp_path / "linear.npz") as npz:
        assert npz["states"].tolist() == ["X.x[0]", "Xd.x[0]", "Th.x[0]", "Thd.x[0]"]
    assert "        X.x[0]   Xd.x[0]   Th.x[0]  Thd.x[0]\nX.x[0]" in out
    # the gain from F to the pole rate is 0 at s = 0 (th' = -2 s F/(s^2 - 21.582)); it was
    # printed 2.15e-7, a limit taken near s = 0
    code, out, err = cli(capsys, "linearize", path, "--input", "F.y", "--output", "X.y",
                         "Thd.y", "--out", tmp_path)
    assert "DC gain: [[inf],\n [ 0.]]" in out, out


class Cancelling(Block):
    """y = (u + 1000)^2 - 1e6 - 2000 u: u^2 by hand, through terms of 1e6 that cancel (their
    rounding, 1e-10, is what central differences of it see); declares no Jacobian."""

    type = "cancelling_square"

    def ports(self):
        return [In("u")], [Out("y")]

    def infer(self, shapes):
        return {"y": shapes["u"]}

    def output(self, t):
        u = self.u[0]
        self.y[0][...] = (u + 1000.0) ** 2 - 1e6 - 2000.0 * u


def test_a_differenced_block_states_its_error_and_shows_no_noise_as_a_value(tmp_path, capsys):
    blocksim.register_block(Cancelling)
    path = tmp_path / "square.yaml"
    for u in (0.3, 0.7, 1.9):
        path.write_text("blocksim: 1\nblocks:\n"
                        f"  U: {{type: constant, value: [1e-9, -2e-9, {u}]}}\n"
                        "  Sq: {type: cancelling_square}\nwires: [U -> Sq]\n"
                        "simulation: {stop: 1}\n")
        code, out, err = cli(capsys, "linearize", path, "--input", "U.y", "--output", "Sq.y",
                             "--out", tmp_path)
        assert code == 0, err
        estimate = float(re.search(
            r"differenced \(central differences\): Sq \(error estimate (\S+) of a block's "
            r"largest entry; an entry within its estimate of 0 is 0\)", out).group(1))
        D = np.load(tmp_path / "linear.npz")["D"]
        # by hand dy/du = 2u: 2e-9 and -4e-9 are within the differences' error, so 0, not
        # the rounding they gave (-1.1e-13 and 1.1e-13, the first with the wrong sign); the
        # third is within the estimate stated (which differences at equal steps missed:
        # their rounding is in step at u = 0.7)
        np.testing.assert_array_equal(D - np.diag(np.diag(D)), 0)
        assert D[0, 0] == D[1, 1] == 0.0
        assert abs(D[2, 2] - 2 * u) <= estimate * 2 * u and estimate < 1e-3
        assert json.loads((tmp_path / "linear.json").read_text())["difference_error"] == \
            pytest.approx(estimate, rel=0.5)
