"""`blocksim export FILE --fmu OUT.fmu --interface model_exchange`: the importer integrates
the diagram's continuous states; zero crossings are its event indicators, sample hits and
scheduled events its time events, the diagram's event handling its event update.
References: fmpy (its validation, and its model-exchange simulation with CVode), `blocksim
run` of the same diagram, and the FMU imported back with the `fmu` block."""
import numpy as np
import pytest

import blocksim
from blocksim.cli import main

fmpy = pytest.importorskip("fmpy")
from fmpy.validation import validate_fmu  # noqa: E402

from test_export_fmu import ROOT  # noqa: E402

MSD = ROOT / "diagrams" / "msd.yaml"
BALL = ROOT / "diagrams" / "bouncing_ball.yaml"

PLANT = """\
blocksim: 1
name: motor_plant
description: pid_motor's plant, its drive voltage in and its angle out
parameters: {K: 2.0, tau: 0.5}
inputs:
  volts: Drive.u1
outputs:
  theta: Position.y
blocks:
  Load:     {type: step, time: 6, after: -2}
  Drive:    {type: sum, signs: "++"}
  Motor:    {type: transfer_function, num: [K], den: [tau, 1]}
  Position: {type: integrator}
wires:
  - Load -> Drive.u2
  - Drive -> Motor
  - Motor -> Position
simulation: {stop: 12, rtol: 1e-8, atol: 1e-10}
"""

# pid_motor.yaml with its plant (the motor and the load) replaced by the exported plant
LOOP = """\
blocksim: 1
name: loop
parameters: {Vmax: 12.0}
blocks:
  Ref:   {type: step, time: 0.5, after: 10}
  Error: {type: sum, signs: "+-"}
  PID:   {type: pid, Kp: 8, Ki: 5, Kd: 2.5, N: 50, lower: -Vmax, upper: Vmax,
          anti_windup: clamping}
  Plant: {type: fmu, file: FILE, interface: model_exchange}
wires:
  - Ref -> Error.u1
  - Plant.theta -> Error.u2
  - Error -> PID
  - PID -> Plant.volts
simulation: {stop: 12, rtol: 1e-8, atol: 1e-10, output_interval: 0.05}
record: {theta: Plant.theta, volts: PID.u}
"""


def _export(diagram, out, fmi, interface="model_exchange"):
    assert main(["export", str(diagram), "--fmu", str(out), "--fmi", str(fmi),
                 "--interface", interface]) == 0
    return out


@pytest.fixture(scope="module")
def msd(tmp_path_factory):
    out = tmp_path_factory.mktemp("me")
    return {fmi: _export(MSD, out / f"msd{fmi}.fmu", fmi) for fmi in (2, 3)}


def _events(t, *columns):
    """The instants fmpy recorded twice (before and after an event)."""
    twice = np.nonzero(t[1:] == t[:-1])[0]
    return t[twice], [(c[twice], c[twice + 1]) for c in columns]


@pytest.mark.parametrize("fmi", [2, 3])
def test_fmpy_validates_and_integrates_it_as_run(msd, fmi):
    """fmpy's CVode (rtol 1e-8) on the FMU's states gives the x, v of `blocksim run` at
    rtol 1e-10 on the same grid to 1e-6; the force step at t = 1 is a time event."""
    assert validate_fmu(str(msd[fmi])) == []
    desc = fmpy.read_model_description(str(msd[fmi]))
    assert desc.modelExchange is not None and desc.coSimulation is None
    assert desc.numberOfEventIndicators == 0
    fmu = fmpy.simulate_fmu(str(msd[fmi]), solver="CVode", relative_tolerance=1e-8,
                            output_interval=0.05, record_events=True)
    x = fmu["x"] if fmi == 3 else np.column_stack([fmu["x[1]"], fmu["x[2]"]])
    events, _ = _events(fmu["time"])
    assert list(events) == [1.0]
    keep = np.r_[True, fmu["time"][1:] != fmu["time"][:-1]]  # the rows after each event
    run = blocksim.run(MSD, overrides=["simulation.rtol=1e-10", "simulation.atol=1e-12",
                                       "simulation.output_interval=0.05"])
    assert np.array_equal(fmu["time"][keep], run["t"])
    # the states in the diagram's order: Velocity's, then Position's
    assert np.abs(x[keep] - np.column_stack([run["v"], run["x"]])).max() <= 1e-6


def test_bouncing_ball_impacts_at_the_runs_times(tmp_path):
    """The floor crossing is an event indicator; fmpy's CVode locates it and the FMU's
    event update resets the velocity: the impacts (v jumping from falling to rising) come at
    the times `blocksim run` finds them, the first 20 to 1e-8 and all 43 to 1e-6 (each
    impact inherits the last one's error; the last ones, 1e-4 s apart, magnify it). Both
    sides tight, so that what is compared is where the events fall: CVode at rtol 1e-12
    (at 1e-8 its integration error alone moves the first impact by 1.6e-8 s), blocksim's
    event_tol 1e-13 (its default, 1e-10, locates each impact up to 1e-10 late)."""
    fmu_file = _export(BALL, tmp_path / "ball.fmu", 3)
    assert validate_fmu(str(fmu_file)) == []
    assert fmpy.read_model_description(str(fmu_file)).numberOfEventIndicators > 0
    fmu = fmpy.simulate_fmu(str(fmu_file), solver="CVode", relative_tolerance=1e-12,
                            output_interval=0.01, record_events=True)
    t, [(v0, v1)] = _events(fmu["time"], fmu["x"][:, 0])
    impacts = t[(v0 < 0) & (v1 > 0)]
    run = blocksim.run(BALL, overrides=["simulation.event_tol=1e-13"])
    resets = np.unique(run.events_t[run.events_block == 0])  # Velocity is hybrid block 0
    after = run["v"][np.searchsorted(run["t"], resets, side="right") - 1]
    assert len(impacts) == np.count_nonzero(after > 0) == 43
    error = np.abs(impacts - resets[after > 0])
    assert error[:20].max() <= 1e-8 and error.max() <= 1e-6
    assert impacts[0] == pytest.approx(np.sqrt(2 * 10 / 9.81), abs=1e-10)  # sqrt(2h/g)


@pytest.mark.parametrize("fmi", [2, 3])
def test_plant_imported_back_closes_pid_motors_loop(tmp_path, fmi):
    """pid_motor's plant exported (model exchange; its load step at 6 s a time event),
    imported with the fmu block under pid_motor's PID: the loop's angle and drive equal
    `blocksim run` of pid_motor.yaml to 1e-6; the output depends on the states alone, so
    the loop through it is no algebraic loop."""
    plant = tmp_path / "plant.yaml"
    plant.write_text(PLANT)
    fmu_file = _export(plant, tmp_path / f"plant{fmi}.fmu", fmi, "both")
    assert validate_fmu(str(fmu_file)) == []
    loop = tmp_path / "loop.yaml"
    loop.write_text(LOOP.replace("FILE", str(fmu_file)))
    back = blocksim.run(loop)
    run = blocksim.run(ROOT / "diagrams" / "pid_motor.yaml",
                       overrides=["simulation.output_interval=0.05"])
    assert np.array_equal(back["t"], run["t"])
    assert np.abs(back["theta"] - run["theta"]).max() <= 1e-6
    assert np.abs(back["volts"] - run["volts"]).max() <= 1e-6


SAMPLED = """\
blocksim: 1
name: sampled
inputs:
  u: Sum.u2
outputs:
  y: Delay.y
blocks:
  Ref:   {type: step, time: 0.25, after: 1}
  Sum:   {type: sum, signs: "++"}
  Delay: {type: unit_delay, period: 0.1}
wires:
  - Ref -> Sum.u1
  - Sum -> Delay
simulation: {stop: 1}
record: {y: Delay.y}
"""


def test_sample_hits_are_time_events(tmp_path):
    """A diagram without continuous states: its unit delay's hits (k * 0.1, summed exactly:
    the third is 0.30000000000000004, which fmpy's grid reaches as 0.3) and the step at
    0.25 are the FMU's time events; fmpy's rows equal `blocksim run`'s on the same grid
    (y = 1 from the hit at 0.4, the first after the step)."""
    diagram = tmp_path / "sampled.yaml"
    diagram.write_text(SAMPLED)
    fmu_file = _export(diagram, tmp_path / "sampled.fmu", 2)
    assert validate_fmu(str(fmu_file)) == []
    fmu = fmpy.simulate_fmu(str(fmu_file), fmi_type="ModelExchange", output_interval=0.05,
                            record_events=True)
    last = np.r_[fmu["time"][1:] != fmu["time"][:-1], True]  # each time's row after events
    run = blocksim.run(diagram, overrides=["simulation.output_interval=0.05"])
    assert np.allclose(fmu["time"][last], run["t"], rtol=0, atol=1e-12)
    assert np.array_equal(fmu["y"][last], run["y"])
    assert run["y"][run["t"] >= 0.4 - 1e-12].min() == 1.0 == 1 - run["y"][run["t"] < 0.4].max()


def test_refusals_name_the_block(tmp_path, capsys):
    """What an importer's solver cannot do for the diagram is refused at the block, exit 2:
    a block watching its inputs' rates (pid with clamping; co-simulation still exports)."""
    pid = ROOT / "diagrams" / "pid_controller.yaml"
    assert main(["export", str(pid), "--fmu", str(tmp_path / "pid.fmu"),
                 "--interface", "model_exchange"]) == 2
    err = capsys.readouterr().err
    assert "pid_controller.yaml:18: error: block 'PID': cannot export for model exchange" in err
    assert "--interface co_simulation" in err
    assert not (tmp_path / "pid.fmu").exists()
    _export(pid, tmp_path / "pid.fmu", 2, "co_simulation")
