"""`blocksim export FILE --fmu OUT.fmu [--fmi 2|3]`: a diagram as a co-simulation FMU, its own
solver inside doStep. References: fmpy (the field's FMI library: its validation and its
co-simulation master), `blocksim run` of the diagram, and the FMU imported back with the
`fmu` block."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.cli import main

fmpy = pytest.importorskip("fmpy")
from fmpy.validation import validate_fmu  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PID = ROOT / "diagrams" / "pid_controller.yaml"
FIXED = ["simulation.solver=rk4", "simulation.step=1e-3"]


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    """pid_controller.yaml (theta in, volts out) as FMI 2.0 and 3.0 FMUs, rk4 at 1 ms."""
    out = tmp_path_factory.mktemp("fmus")
    paths = {}
    for fmi in (2, 3):
        paths[fmi] = out / f"pid{fmi}.fmu"
        sets = [a for s in FIXED for a in ("--set", s)]
        assert main(["export", str(PID), "--fmu", str(paths[fmi]), "--fmi", str(fmi),
                     *sets]) == 0
    return paths


@pytest.mark.parametrize("fmi", [2, 3])
def test_fmpy_validates_and_simulates_it_as_run(fmus, fmi):
    """fmpy's co-simulation (communication step 10 ms, theta at its start value 0) gives
    the volts `blocksim run` records on the same grid: the same solver and steps, the same
    numbers (to 1e-12)."""
    assert validate_fmu(str(fmus[fmi])) == []
    desc = fmpy.read_model_description(str(fmus[fmi]))
    assert {v.name: (v.causality, v.variability) for v in desc.modelVariables} == {
        "time": ("independent", "continuous"), "theta": ("input", "continuous"),
        "volts": ("output", "continuous"),
        # the step's level; the gains and the limits (Vmax) reach the PID's zero crossings
        # (clamping): fixed
        "Ref.after": ("parameter", "tunable"), "Vmax": ("parameter", "fixed"),
        **{f"PID.{k}": ("parameter", "fixed") for k in ("Kp", "Ki", "Kd", "N")}}
    fmu = fmpy.simulate_fmu(str(fmus[fmi]), fmi_type="CoSimulation", output_interval=0.01,
                            stop_time=12)
    run = blocksim.run(PID, overrides=[*FIXED, "simulation.output_interval=0.01"])
    assert np.array_equal(fmu["time"], run["t"])
    assert np.abs(fmu["volts"] - run["volts"]).max() <= 1e-12 * 12


BACK = """\
blocksim: 1
name: back
blocks:
  Theta: {type: constant, value: 0}
  Pid:   {type: fmu, file: FILE, interface: co_simulation, step: 0.01}
wires:
  - Theta -> Pid.theta
simulation: {stop: 11.995, solver: rk4, step: 0.01, output_interval: 0.01}
record: {volts: Pid.volts}
"""


def test_imported_back_equals_the_diagram(fmus, tmp_path):
    """The FMU in an fmu block (co-simulation, 10 ms) gives the diagram's own volts at every
    hit (stop 11.995: the last doStep ends at 12 s, the exported diagram's stop)."""
    diagram = tmp_path / "back.yaml"
    diagram.write_text(BACK.replace("FILE", str(fmus[2])))
    back = blocksim.run(diagram)
    run = blocksim.run(PID, overrides=[*FIXED, "simulation.output_interval=0.01",
                                       "simulation.stop=11.99"])
    assert np.array_equal(back["t"][:-1], run["t"])
    assert np.abs(back["volts"][:-1] - run["volts"]).max() <= 1e-12 * 12


def test_a_step_past_the_stop_is_an_error(fmus):
    """The exported diagram ends at its stop time (12 s): fmpy's step beyond is an error,
    logged by the FMU. (In a process of its own: fmpy's C logger keeps the last importer's
    callback, which an earlier fmu block's run in this process may have freed.)"""
    code = ("import fmpy\n"
            f"fmpy.simulate_fmu({str(fmus[2])!r}, fmi_type='CoSimulation', "
            "output_interval=0.01, stop_time=12.5)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode != 0
    assert "fmi2DoStep failed" in done.stderr
    assert "a step to 12.01 s: the diagram ends at its stop time, 12 s" in done.stdout + done.stderr


FIXED_SCRIPT = """\
import sys, fmpy
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import FMU2Slave
path = sys.argv[1]
desc = fmpy.read_model_description(path)
refs = {v.name: v.valueReference for v in desc.modelVariables}
fmu = FMU2Slave(guid=desc.guid, unzipDirectory=fmpy.extract(path),
                modelIdentifier=desc.coSimulation.modelIdentifier, instanceName="pid")
fmu.instantiate(loggingOn=True)  # fmpy's logger prints the FMU's lines
fmu.setupExperiment(startTime=0.0)
fmu.setReal([refs["PID.Ki"]], [2.0])
fmu.enterInitializationMode()
fmu.exitInitializationMode()
volts = [fmu.getReal([refs["volts"]])[0]]
for j in range(200):
    if j == 100:
        try:
            fmu.setReal([refs["PID.Ki"]], [5.0])
        except FMICallException:
            print("refused", flush=True)
    fmu.doStep(currentCommunicationPoint=j * 0.01, communicationStepSize=0.01)
    volts.append(fmu.getReal([refs["volts"]])[0])
fmu.terminate()
fmu.freeInstance()
print("volts", *map(repr, volts), flush=True)
"""


def test_a_fixed_parameter_is_set_before_initialisation_only(fmus):
    """PID.Ki (fixed: it reaches the clamping's zero crossings) set before initialisation
    gives `blocksim run --set blocks.PID.Ki=2` (to 1e-12, same steps); set after it, the FMU
    refuses it (fmi2Error, logged) and keeps running with the value it had. (In a process of
    its own, as the test above, for fmpy's logger.)"""
    done = subprocess.run([sys.executable, "-c", FIXED_SCRIPT, str(fmus[2])],
                          capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    assert "refused" in lines
    assert any("PID.Ki is a fixed parameter: it can be set only before initialisation ends"
               in line for line in lines)
    volts = np.array([float(v) for v in lines[-1].split()[1:]])
    run = blocksim.run(PID, overrides=[*FIXED, "simulation.output_interval=0.01",
                                       "simulation.stop=2", "blocks.PID.Ki=2"])
    assert np.abs(volts - run["volts"]).max() <= 1e-12 * 12
