"""`blocksim trim` and `blocksim linearize` from the command line: what they print, the files
they write (operating_point.yaml, linear.npz, linear.json, the Bode plot), `run --op`, and
every bad input the issue lists: a clear message, exit 2 or 3, no traceback."""
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml
from blocksim.cli import main
from loops import loop

ROOT = Path(__file__).resolve().parents[2]
PID_MOTOR = str(ROOT / "diagrams" / "pid_motor.yaml")
MSD = str(ROOT / "diagrams" / "msd.yaml")


def in_a_process(*args):
    """`blocksim *args` in a process of its own, as from a shell: its exit code and output."""
    r = subprocess.run([sys.executable, "-m", "blocksim", *map(str, args)],
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"})
    assert "Traceback" not in r.stderr, r.stderr
    return r


@pytest.fixture
def blocksim(capsys, monkeypatch):
    """`blocksim(*args, cwd=None)`: the command line's main() in this process (a process each
    cost ~0.6 s of imports; the exit codes from a shell are in_a_process's tests), with its
    exit code and output as a finished process has them."""
    def run(*args, cwd=None):
        if cwd is not None:
            monkeypatch.chdir(cwd)
        try:
            code = main([str(a) for a in args])
        except SystemExit as e:  # argparse's usage errors
            code = e.code
        out, err = capsys.readouterr()
        assert "Traceback" not in err, err
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)
    return run


def test_linearize_prints_the_model_and_writes_its_files(tmp_path, blocksim):
    r = blocksim("linearize", PID_MOTOR, "--input", "Error.u1", "--output", "Position.y",
                 "--open", "Error.u2", "--bode", tmp_path / "loop.png", "--out", tmp_path)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "linearised at the initial state, t = 0 s (an equilibrium, residual 0)" in out
    assert "continuous model: 4 states, 1 input, 1 output; loop opened at Error.u2" in out
    assert "exact Jacobians: Error, PID, Drive, Motor, Position" in out
    assert "differenced (central differences): none" in out
    assert "mode: PID linear" in out
    assert "poles: -50, -2, 0, 0" in out and "DC gain: inf" in out
    # python-control's margin of C(s)G(s): 72.5 deg at 10.48 rad/s, no phase crossover
    assert "phase margin 72.5 deg at 10.48 rad/s" in out and "gain margin inf" in out
    with np.load(tmp_path / "linear.npz") as npz:
        assert set(npz.files) == {"A", "B", "C", "D", "states", "inputs", "outputs"}
        assert npz["states"].tolist() == ["PID.x[0]", "PID.x[1]", "Motor.x[0]", "Position.x[0]"]
        assert npz["inputs"].tolist() == ["Error.u1"] and npz["outputs"].tolist() == ["Position.y"]
        A = npz["A"]
    data = json.loads((tmp_path / "linear.json").read_text())
    np.testing.assert_array_equal(data["A"], A)
    assert data["margins"]["phase_deg"] == pytest.approx(72.4954, abs=1e-3)
    assert data["opened"] == ["Error.u2"] and data["differenced"] == []
    assert (tmp_path / "loop.png").stat().st_size > 10_000


def test_a_discrete_model_stores_its_period(tmp_path, blocksim):
    r = blocksim("linearize", MSD, "--input", "Force.y", "--output", "Position.y",
                 "--period", "0.05", "--out", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "discrete model at the chosen period 0.05 s" in r.stdout
    assert "converted to it (zero-order hold): Velocity, Position" in r.stdout
    with np.load(tmp_path / "linear.npz") as npz:
        assert float(npz["dt"]) == 0.05
    assert json.loads((tmp_path / "linear.json").read_text())["dt"] == 0.05


def test_trim_writes_the_point_and_run_starts_from_it(tmp_path, blocksim):
    r = blocksim("trim", PID_MOTOR, "--set", "blocks.Load.time=0", "--out", tmp_path)
    assert r.returncode == 0, r.stderr
    # the load (-2 V from the start) is held by the integral term: PID.x[0] = 2 V
    assert "PID.x[0] = 2\n" in r.stdout and "mode: PID linear" in r.stdout
    point = yaml.safe_load((tmp_path / "operating_point.yaml").read_text())
    assert point["states"]["PID"] == [pytest.approx(2.0), 0.0] and point["converged"] is True
    run = blocksim("run", PID_MOTOR, "--set", "blocks.Load.time=0", "--set", "blocks.Ref.time=20",
                   "--op", tmp_path / "operating_point.yaml", "--out", tmp_path / "run",
                   "--no-plots", "--quiet")
    assert run.returncode == 0, run.stderr
    with np.load(tmp_path / "run" / "results.npz") as npz:
        np.testing.assert_allclose(npz["theta"], 0.0, atol=1e-9)  # the load does not move it
        np.testing.assert_allclose(npz["volts"], 2.0, rtol=1e-9)
    moved = blocksim("run", PID_MOTOR, "--set", "blocks.Load.time=0", "--set",
                     "blocks.Ref.time=20", "--out", tmp_path / "cold", "--no-plots", "--quiet")
    with np.load(tmp_path / "cold" / "results.npz") as npz:
        assert np.abs(npz["theta"]).max() > 0.01  # from rest the load pushes it away first


@pytest.mark.parametrize("args, code, words", [
    (["--input", "Eror.u1", "--output", "Position.y"], 2, "unknown block 'Eror' (did you mean 'Error'?)"),
    (["--input", "Error.ux1", "--output", "Position.y"], 2,
     "block 'Error' has no port 'ux1' (did you mean 'u1'?) (outputs: y; inputs: u1, u2)"),
    (["--input", "Error.u1", "--output", "thetta"], 2, "did you mean 'theta'?"),
    (["--input", "Error.u1", "--output", "Position.y", "--open", "Position.y"], 2,
     "'Position.y' is an output: a loop opening cuts the wire into an input port"),
    (["--input", "PID.u", "--output", "Position.y", "--open", "Drive.u1"], 2,
     "--input PID.u: the perturbation reaches none of the outputs (Position.y)"),
    (["--input", "Angles.y", "--output", "Position.y"], 2, "reaches none of the outputs"),
    (["--input", "Error.u1", "--output", "Position.y", "--at", "1", "--op", "x.yaml"], 2,
     "not allowed with argument"),
    (["--input", "Error.u1", "--output", "Position.y", "--set", "blocks.Ref.time=0"], 3,
     # the reference (10 rad) already there: the derivative filter moves at N e = 500
     "the initial state of pid_motor is not an equilibrium: residual 500 (the largest: "
     "PID.x[1] = 500"),
    (["--input", "Error.u1", "--output", "Position.y", "--op", "missing.yaml"], 2,
     "missing.yaml: error: file not found"),
])
def test_bad_linearize_commands_are_one_clear_message(tmp_path, blocksim, args, code, words):
    r = blocksim("linearize", PID_MOTOR, *args, "--out", tmp_path, cwd=tmp_path)
    assert r.returncode == code, r.stdout + r.stderr
    assert words in r.stderr


def test_a_delay_needs_a_pade_order_and_a_mixed_diagram_a_period_where_zoh_fails(tmp_path,
                                                                                 blocksim):
    path = loop(tmp_path / "mixed.yaml", [
        ("Hold", "{type: unit_delay, period: 0.1}"),
        ("Plant", "{type: transfer_function, num: [1], den: [1, 1]}")],
        back=("Delay", "{type: transport_delay, delay: 0.2}"), ref=1.0)
    r = blocksim("linearize", path, "--input", "Error.u1", "--output", "Plant.y", "--at", "0",
                 "--out", tmp_path)
    assert r.returncode == 2 and "Delay delays the signal" in r.stderr and "--pade N" in r.stderr
    r = blocksim("linearize", path, "--input", "Error.u1", "--output", "Plant.y", "--at", "0",
                 "--pade", "2", "--out", tmp_path)
    # a unit delay (a pole at z = 0) has no continuous-time equivalent
    assert r.returncode == 2 and ("block 'Hold': its period is 0.1 s and it has no "
                                  "continuous-time equivalent") in r.stderr
    assert "give --period 0.1 (or a whole multiple of it)" in r.stderr
    r = blocksim("linearize", path, "--input", "Error.u1", "--output", "Plant.y", "--at", "0",
                 "--pade", "2", "--period", "0.1", "--out", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "discrete model at the chosen period 0.1 s" in r.stdout
    assert "transport delays: Padé approximation of order 2" in r.stdout


def test_a_trim_that_does_not_converge_keeps_the_point_and_exits_3(tmp_path):
    r = in_a_process("trim", ROOT / "diagrams" / "thermostat.yaml", "--out", tmp_path)
    assert r.returncode == 3
    assert "trim did not converge: residual" in r.stderr and "Room.x[0]" in r.stderr
    point = yaml.safe_load((tmp_path / "operating_point.yaml").read_text())
    assert point["converged"] is False and point["residual"] > 1e-3


def test_bad_trim_and_operating_point_inputs(tmp_path, blocksim):
    r = in_a_process("trim", MSD, "--fix", "Velocity.x=[1, 2]", "--out", tmp_path)
    assert r.returncode == 2 and "--fix Velocity.x: 1 values wanted, got 2" in r.stderr
    r = blocksim("trim", MSD, "--free", "Forse.y", "--out", tmp_path)
    assert r.returncode == 2 and "did you mean 'Force'?" in r.stderr
    bad = tmp_path / "op.yaml"
    bad.write_text("states: {Velocity: 0, Positon: 1}\n")
    r = blocksim("run", MSD, "--op", bad, "--out", tmp_path / "run")
    assert r.returncode == 2 and "unknown block 'Positon' (did you mean 'Position'?)" in r.stderr
    bad.write_text("states: {Velocity: 0}\nstate: {}\n")
    r = blocksim("run", MSD, "--op", bad, "--out", tmp_path / "run")
    assert r.returncode == 2 and "op.yaml:2: error: unknown key 'state'" in r.stderr
    # constants added to signals are not compiled: accelerated mode is refused, auto is normal
    bad.write_text("states: {Velocity: 0, Position: 0.25}\ninputs: {Force.y: 1}\n")
    r = blocksim("run", MSD, "--op", bad, "--mode", "accelerated", "--out", tmp_path / "run")
    assert r.returncode == 2 and "runs in normal mode only" in r.stderr
    r = blocksim("run", MSD, "--op", bad, "--set", "blocks.Force.time=100", "--out",
                 tmp_path / "run", "--no-plots")
    assert r.returncode == 0, r.stderr
    with np.load(tmp_path / "run" / "results.npz") as npz:  # k x = F: held at 1/4
        np.testing.assert_allclose(npz["x"], 0.25, rtol=1e-9)
        np.testing.assert_allclose(npz["F"], 1.0)  # the record shows the force added


def test_the_margins_in_words_and_on_the_bode_plot(tmp_path, monkeypatch):
    import control
    from matplotlib.figure import Figure

    from blocksim.analysis import frequency
    # L(s) = 1/(s(s + 1)), by hand: |L(jw)| = 1 at w^2 = (sqrt(5) - 1)/2, w = 0.78615 rad/s,
    # phase -90 - atan(w) = -128.17 deg: a 51.83 deg margin; the phase only tends to -180
    loop = control.tf([1], [1, 1, 0], name="L")
    found = frequency.margins(loop)
    text = frequency.margins_text(found)
    assert text == ("gain margin inf (the phase never reaches -180 deg); "
                    "phase margin 51.83 deg at 0.7862 rad/s")
    # the plot carries the same words as its title (python-control's said 'at nan rad/s')
    saved, savefig = [], Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda f, *a, **k: (saved.append(f),
                                                               savefig(f, *a, **k)))
    frequency.bode(loop, tmp_path / "L.png", found)
    [figure] = saved
    assert figure.get_suptitle() == "L: " + text
    assert [a.get_title() for a in figure.axes] == ["", ""]
    assert (tmp_path / "L.png").stat().st_size > 10_000
