"""Tunable parameters of an exported diagram (blocksim export, accel/tunable.py): set from
the C library, main.c's NAME=VALUE arguments and an FMU's parameter variables.
References: `blocksim run --set` of the same diagram (normal mode), fmpy (validation,
co-simulation, CVode), and the same switch written into the diagram."""
import subprocess

import numpy as np
import pytest

import blocksim
from blocksim.cli import main
from blocksim.engine.csvio import read_csv

from test_export_c import _built, _run_csv, docs_program_angles
from test_export_fmu import ROOT

fmpy = pytest.importorskip("fmpy")
from fmpy.validation import validate_fmu  # noqa: E402

# msd.yaml with its states as the diagram's outputs, at rk4 1 ms (co-simulation's steps then
# fall on the communication grid: the FMU and blocksim run make the same steps)
MSD = (ROOT / "diagrams" / "msd.yaml").read_text().replace(
    "blocks:", "outputs: {pos: Position.y, vel: Velocity.y}\nblocks:", 1)
RK4 = ["simulation.solver=rk4", "simulation.step=1e-3", "simulation.output_interval=0.05"]


@pytest.fixture(scope="module")
def msd(tmp_path_factory):
    out = tmp_path_factory.mktemp("tunable")
    diagram = out / "msd.yaml"
    diagram.write_text(MSD)
    sets = [a for s in RK4 for a in ("--set", s)]
    fmus = {}
    for fmi in (2, 3):
        fmus[fmi] = out / f"msd{fmi}.fmu"
        assert main(["export", str(diagram), "--fmu", str(fmus[fmi]), "--fmi", str(fmi),
                     *sets]) == 0
    return diagram, fmus


def _run(diagram, *sets):
    return blocksim.run(diagram, overrides=[*RK4, *sets])


@pytest.mark.parametrize("fmi", [2, 3])
def test_fmpy_start_values_equal_run_set(msd, fmi):
    """fmpy's start value k = 8: co-simulation equals `blocksim run --set parameters.k=8`
    to 1e-12 (same solver, same steps); CVode on the model exchange gives its states to 1e-6
    at rtol 1e-8 (and to 1e-7 at rtol 1e-10: the rest is CVode's own error) against run at
    rtol 1e-12. The FMU's parameters are the diagram's literal ones and block parameters."""
    diagram, fmus = msd
    fmu = str(fmus[fmi])
    assert validate_fmu(fmu) == []
    desc = fmpy.read_model_description(fmu)
    params = {v.name: (v.variability, v.start) for v in desc.modelVariables
              if v.causality == "parameter"}
    assert params == {"m": ("tunable", "1.0"), "c": ("tunable", "0.4"),
                      "k": ("tunable", "4.0"), "Force.before": ("tunable", "0.0"),
                      "Force.after": ("tunable", "1.0")}
    run = _run(diagram, "parameters.k=8")
    cs = fmpy.simulate_fmu(fmu, fmi_type="CoSimulation", start_values={"k": 8},
                           output_interval=0.05)
    assert np.array_equal(cs["time"], run["t"])
    assert np.abs(cs["pos"] - run["x"]).max() <= 1e-12
    assert np.abs(cs["vel"] - run["v"]).max() <= 1e-12
    tight = blocksim.run(diagram, overrides=["parameters.k=8", "simulation.output_interval=0.05",
                                             "simulation.rtol=1e-12", "simulation.atol=1e-14",
                                             "simulation.solver=dop853"])
    for rtol, tol in ((1e-8, 1e-6), (1e-10, 1e-7)):
        me = fmpy.simulate_fmu(fmu, fmi_type="ModelExchange", start_values={"k": 8},
                               output_interval=0.05, relative_tolerance=rtol)
        keep = np.r_[True, me["time"][1:] != me["time"][:-1]]  # the rows after each event
        assert np.array_equal(me["time"][keep], tight["t"])
        assert np.abs(me["pos"][keep] - tight["x"]).max() <= tol
        assert np.abs(me["vel"][keep] - tight["v"]).max() <= (tol if rtol < 1e-8 else 2 * tol)
    # without it, the exported k = 4: far from k = 8's run
    assert np.abs(fmpy.simulate_fmu(fmu, fmi_type="CoSimulation", output_interval=0.05)["pos"]
                  - run["x"]).max() > 0.1


# the switch of k from 4 to 8 at t = 5 written into the diagram: the spring a product of
# the position and a step (the same multiplication as the gain's)
SWITCH = MSD.replace("  Spring:   {type: gain, K: k}",
                     "  Spring:   {type: product, ops: \"**\"}\n"
                     "  K:        {type: step, time: 5, before: 4, after: 8}").replace(
    "  - Position -> Spring", "  - Position -> Spring.u1\n  - K -> Spring.u2")


def test_tunable_changed_between_steps_equals_the_switch(msd, tmp_path):
    """fmpy's co-simulation stepped by hand, k set to 8 after the step ending at t = 5,
    equals blocksim run of the diagram whose spring switches from 4 to 8 at t = 5 (to
    1e-12); FMI 2.0."""
    from fmpy.fmi2 import FMU2Slave
    _, fmus = msd
    desc = fmpy.read_model_description(str(fmus[2]))
    refs = {v.name: v.valueReference for v in desc.modelVariables}
    unzipped = fmpy.extract(str(fmus[2]))
    fmu = FMU2Slave(guid=desc.guid, unzipDirectory=unzipped,
                    modelIdentifier=desc.coSimulation.modelIdentifier, instanceName="msd")
    fmu.instantiate()
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    rows = [fmu.getReal([refs["pos"], refs["vel"]])]
    for j in range(200):  # 10 s in 0.05 s steps
        if j == 100:
            fmu.setReal([refs["k"]], [8.0])
        fmu.doStep(currentCommunicationPoint=j * 0.05, communicationStepSize=0.05)
        rows.append(fmu.getReal([refs["pos"], refs["vel"]]))
    fmu.terminate()
    fmu.freeInstance()
    diagram = tmp_path / "switch.yaml"
    diagram.write_text(SWITCH)
    run = _run(diagram, "simulation.stop=10")
    rows = np.array(rows)
    assert rows.shape == (len(run["t"]), 2)
    assert np.abs(rows[:, 0] - run["x"]).max() <= 1e-12
    assert np.abs(rows[:, 1] - run["v"]).max() <= 1e-12
    # and the switch matters: without it, t = 7.5 s is elsewhere
    unswitched = _run(diagram, "simulation.stop=10", "blocks.K.after=4")
    assert abs(rows[150, 0] - unswitched["x"][150]) > 1e-3


def test_the_c_library_takes_parameters_and_refuses_others(tmp_path):
    """main.c's NAME=VALUE arguments (a top-level parameter read through 1/m, --set's
    spelling too) give `blocksim run --set`'s CSV (normal mode) to 1e-12 of each column's
    scale; a parameter that is not tunable, an unknown one, a malformed value and one the
    block's parameter would refuse at load are refused with exit 2 and a message."""
    out = tmp_path / "c"
    diagram = ROOT / "diagrams" / "msd.yaml"
    assert main(["export", str(diagram), "--c", str(out), "--set",
                 "simulation.output_interval=0.05"]) == 0
    program = _built(out)
    subprocess.run([str(program), "parameters.k=8", "m=2", "exported.csv"], cwd=out,
                   check=True)
    header, values = read_csv(out / "exported.csv")[:2]
    assert main(["run", str(diagram), "--csv", "--no-plots", "--quiet", "--mode", "normal",
                 "--out", str(tmp_path / "run"), "--set", "simulation.output_interval=0.05",
                 "--set", "parameters.k=8", "--set", "parameters.m=2"]) == 0
    run_header, run_values = read_csv(tmp_path / "run" / "results.csv")[:2]
    assert header == run_header and values.shape == run_values.shape
    scale = np.maximum(np.abs(run_values).max(axis=0), 1.0)
    assert np.all(np.abs(values - run_values) <= 1e-12 * scale)
    for arg, message in [
            ("Force.time=2", "msd: Force.time cannot be set: block Force (step) computes its "
                             "time events from time in Python"),
            ("zeta=1", "msd: no tunable parameter zeta"),
            ("k=eight", "msd: k: expected 1 number(s) separated by commas, got 'eight'"),
            # the gain's K is refused at load when not finite (Param.convert)
            ("k=inf", "msd: k refused: block Spring: K: value must be finite")]:
        done = subprocess.run([str(program), arg], cwd=out, capture_output=True, text=True)
        assert (done.returncode, done.stderr.strip()) == (2, message)


# pid_motor.yaml with the reference moved from 10 to 5 rad at t = 4 s (a second step)
MOVED = (ROOT / "diagrams" / "pid_motor.yaml").read_text().replace(
    "  Ref:      {type: step, time: 0.5, after: 10}",
    "  Ref1:     {type: step, time: 0.5, after: 10}\n"
    "  Ref2:     {type: step, time: 4, after: -5}\n"
    "  Ref:      {type: sum, signs: \"++\"}").replace(
    "  - Ref -> Error.u1", "  - Ref1 -> Ref.u1\n  - Ref2 -> Ref.u2\n  - Ref -> Error.u1")


def test_docs_tunable_walkthrough(tmp_path):
    """docs/export.md's program sets PID.Ki = 2 before the run, moves the reference to 5 at
    t = 4 s and is refused Ki again there; it prints what the page shows. Reference:
    `blocksim run` of pid_motor.yaml with Ki = 2, no load and its reference stepping to 5 at
    4 s (the same loop, continuous): the angles agree to the 1 ms Euler motor's error."""
    text = (ROOT / "docs" / "export.md").read_text()
    theta = docs_program_angles(tmp_path, text[text.index("## Tunable parameters"):], 0)
    diagram = tmp_path / "moved.yaml"
    diagram.write_text(MOVED)
    run = blocksim.run(diagram, overrides={"blocks.Load.after": 0, "blocks.PID.Ki": 2,
                                           "simulation.output_interval": 1.0})
    assert np.abs(np.array(theta) - run["theta"][1:9]).max() < 0.05


def test_variables_sharing_a_name_are_refused(tmp_path, capsys):
    """An FMU's variables need distinct names (fmpy's validation) and distinct C names
    (the model's source places them by name): an output `x` beside model exchange's states
    `x`, and a parameter named as an input, are refused at export (exit 2), nothing
    written. (Before, the first gave an FMU whose output read the states' place.)"""
    cases = [(MSD.replace("outputs: {pos: Position.y", "outputs: {x: Position.y"),
              "its output 'x' and its state 'x' would share the name 'x'"),
             (MSD.replace("blocks:", "inputs: {k: Sum.u1}\nblocks:", 1).replace(
                 "  - Force -> Sum.u1\n", ""),
              "its input 'k' and its parameter 'k' would share the name 'k'")]
    for k, (text, message) in enumerate(cases):
        diagram = tmp_path / f"clash{k}.yaml"
        diagram.write_text(text)
        out = tmp_path / f"clash{k}.fmu"
        assert main(["export", str(diagram), "--fmu", str(out)]) == 2
        assert message in capsys.readouterr().err
        assert not out.exists()


PID_CONTROLLER = ROOT / "diagrams" / "pid_controller.yaml"


@pytest.fixture(scope="module", params=["continuous", "discrete"])
def pid_program(request, tmp_path_factory):
    """pid_controller.yaml exported to C and built, once per module: its PID continuous,
    or discrete (10 ms, trapezoidal: its Ta, Tc and filter gain dgain are derived)."""
    out = tmp_path_factory.mktemp(f"pid_{request.param}")
    sets = ["simulation.output_interval=0.05"]
    if request.param == "discrete":
        sets += ["blocks.PID.period=0.01", "blocks.PID.method=trapezoidal"]
    assert main(["export", str(PID_CONTROLLER), "--c", str(out / "c"),
                 *(a for s in sets for a in ("--set", s))]) == 0
    return _built(out / "c"), sets, out


def test_pid_gains_and_limits_are_tunable(pid_program):
    """The PID's derivations (pid.py's declared texts: the filter rate Nf from Kd and N, the
    discrete filter gain dgain, the facts and the lower <= upper check) are computed again in
    C: main.c's PID.Kp=4 Vmax=6 (the limits -Vmax, Vmax), with the reference at 1 rad so
    that neither the gains nor the limits hide behind a saturation, and PID.Kd=1 PID.N=20,
    each give `blocksim run --set`'s CSV (normal mode) to 1e-12 of each column's scale. The
    sets matter: the run without them differs."""
    program, sets, out = pid_program
    cases = [["PID.Kp=4", "Vmax=6", "Ref.after=1"], ["PID.Kd=1", "PID.N=20", "Ref.after=1"]]
    for k, case in enumerate(cases):
        subprocess.run([str(program), *case, f"case{k}.csv"], cwd=program.parent, check=True)
        header, values = read_csv(program.parent / f"case{k}.csv")[:2]
        spelled = [("parameters." if a.startswith("Vmax") else "blocks.") + a for a in case]
        run_header, run = _run_csv(PID_CONTROLLER, out / f"run{k}", sets + spelled)
        assert header == run_header and values.shape == run.shape
        scale = np.maximum(np.abs(run).max(axis=0), 1.0)
        assert np.all(np.abs(values - run) <= 1e-12 * scale)
        unset = _run_csv(PID_CONTROLLER, out / f"unset{k}", sets + ["blocks.Ref.after=1"])[1]
        assert np.abs(unset[:, 2] - run[:, 2]).max() > 0.1


def test_pid_sets_that_change_its_structure_are_refused(pid_program):
    """A set whose facts would change the compiled structure (Vmax = inf: no finite limit
    left; Kp and then Kd to 0: no direct feedthrough), that pid's check refuses (Vmax = -1:
    upper < lower; the same words as blocksim run's) or that N's load check refuses is
    refused in C with the block's message (exit 2)."""
    program = pid_program[0]
    structure = "block PID: the values change its structure ({}): export again"
    for args, message in [
            (["Vmax=inf"], "Vmax refused: " + structure.format("limited")),
            (["PID.Kp=0", "PID.Kd=0"], "PID.Kd refused: " + structure.format("direct")),
            (["Vmax=-1"], "Vmax refused: block PID: upper: upper must be >= lower"),
            (["PID.N=0"], "PID.N refused: block PID: N: must be > 0, got 0")]:
        done = subprocess.run([str(program), *args], cwd=program.parent, capture_output=True,
                              text=True)
        assert (done.returncode, done.stderr.strip()) == (2, f"pid_controller: {message}")


# pid_motor.yaml with its angle and drive as the diagram's outputs, at rk4 1 ms
PID_MOTOR = (ROOT / "diagrams" / "pid_motor.yaml").read_text().replace(
    "blocks:", "outputs: {angle: Position.y, drive: PID.u}\nblocks:", 1)


def test_fmpy_motor_gain_and_time_constant_equal_run_set(tmp_path):
    """The motor's transfer function K/(tau s + 1) realised again in C from num and den
    (continuous.py's tf_texts): fmpy's co-simulation of pid_motor's FMU with start values
    K = 3, tau = 0.25 equals `blocksim run --set parameters.K=3 --set parameters.tau=0.25`
    to 1e-12 (same solver, same steps); tau = 0 (den's order would drop) is refused."""
    diagram = tmp_path / "pid_motor.yaml"
    diagram.write_text(PID_MOTOR)
    fmu = tmp_path / "pid_motor.fmu"
    assert main(["export", str(diagram), "--fmu", str(fmu), "--interface", "co_simulation",
                 *(a for s in RK4 for a in ("--set", s))]) == 0
    desc = fmpy.read_model_description(str(fmu))
    params = {v.name: v.variability for v in desc.modelVariables if v.causality == "parameter"}
    assert params["K"] == params["tau"] == "tunable"
    run = _run(diagram, "parameters.K=3", "parameters.tau=0.25")
    cs = fmpy.simulate_fmu(str(fmu), fmi_type="CoSimulation", output_interval=0.05,
                           start_values={"K": 3, "tau": 0.25})
    assert np.array_equal(cs["time"], run["t"])
    assert np.abs(cs["angle"] - run["theta"]).max() <= 1e-12
    assert np.abs(cs["drive"] - run["volts"]).max() <= 1e-12
    assert np.abs(cs["angle"] - _run(diagram)["theta"]).max() > 0.1  # and K, tau matter
    logged = []
    with pytest.raises(fmpy.fmi1.FMICallException, match="status 3"):
        fmpy.simulate_fmu(str(fmu), fmi_type="CoSimulation", output_interval=0.05,
                          start_values={"tau": 0}, logger=lambda *a: logged.append(a[-1]))
    assert (b"tau refused: block Motor: the values change its structure (den_order): "
            b"export again") in logged


BANDS = """\
blocksim: 1
name: bands
parameters:
  limit: 0.5
blocks:
  Wave: {type: sine, amplitude: 2, frequency: 0.5}
  Sat:  {type: saturation, lower: -limit, upper: limit}
  Band: {type: dead_zone, start: -0.3, end: 0.4}
  Hyst: {type: relay, on: 0.5, off: -0.5, on_value: 1, off_value: -1}
  Int:  {type: integrator, lower: -0.5, upper: 0.8}
wires:
  - Wave -> Sat
  - Wave -> Band
  - Wave -> Hyst
  - Wave -> Int
simulation: {stop: 4, output_interval: 0.05}
record: {s: Sat.y, b: Band.y, h: Hyst.y, i: Int.y}
"""


def test_thresholds_checked_by_declared_texts_are_tunable(tmp_path):
    """saturation, dead_zone, relay and integrator declare their checks (lower <= upper,
    start <= end, off <= on, x0 within the limits) and the integrator its fact (a finite
    limit) as texts, not Python: their thresholds are tunable. main.c's limit=1.5
    Band.end=1 Hyst.on=1.2 Hyst.off_value=-2 Int.upper=1 equals `blocksim run --set` bit
    for bit (normal mode); a set a check refuses is refused with blocksim run's words."""
    diagram = tmp_path / "bands.yaml"
    diagram.write_text(BANDS)
    assert main(["export", str(diagram), "--c", str(tmp_path / "c")]) == 0
    program = _built(tmp_path / "c")
    case = ["limit=1.5", "Band.end=1", "Hyst.on=1.2", "Hyst.off_value=-2", "Int.upper=1"]
    subprocess.run([str(program), *case, "out.csv"], cwd=program.parent, check=True)
    header, values = read_csv(program.parent / "out.csv")[:2]
    spelled = [("parameters." if a.startswith("limit") else "blocks.") + a for a in case]
    run_header, run = _run_csv(diagram, tmp_path / "run", spelled)
    assert header == run_header and np.array_equal(values, run)
    assert np.abs(run - _run_csv(diagram, tmp_path / "unset", [])[1]).max() > 0.5
    for arg, message in [("limit=-1", "limit refused: block Sat: upper: upper must be >= lower"),
                         ("Band.end=-1", "Band.end refused: block Band: end: end must be >= start"),
                         ("Hyst.on=-1", "Hyst.on refused: block Hyst: on: on must be >= off"),
                         ("Int.lower=0.1", "Int.lower refused: block Int: x0: x0 must lie "
                                           "within [lower, upper]")]:
        done = subprocess.run([str(program), arg], cwd=program.parent, capture_output=True,
                              text=True)
        assert (done.returncode, done.stderr.strip()) == (2, f"bands: {message}")
