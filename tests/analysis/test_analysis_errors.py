"""Bad input to trim and linearize, from the command line and from Python: each is one clear
message with exit 2 (a mistake in what was asked) or 3 (the model fails there), never a
traceback and never a silent choice."""
from pathlib import Path

import pytest

import blocksim
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
    with pytest.raises(TypeError, match=r"inputs is a list of signal names such as "
                                        r"\['Force.y'\], got None"):
        blocksim.linearize(MSD, inputs=None, outputs=["Position.y"])
    with pytest.raises(TypeError, match="at is a time in seconds .a number., got '1'"):
        blocksim.linearize(MSD, ["Force.y"], ["Position.y"], at="1")
    with pytest.raises(TypeError, match="outputs holds signal names .* got 3"):
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
