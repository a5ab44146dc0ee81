"""Accelerated mode computes what normal mode computes: every diagram in diagrams/ and the
hybrid and discrete corpus (tests/accel/corpus/) run in both modes, with figures on (so the
sinks' dense points and the values before events are compared too), must take the same
steps (accepted, rejected, evaluations), have the same events at the same instants (to
event_tol), the same rows and values within 1e-12 relative, and fail (if they fail) with the
same message. The second algorithm is normal mode itself, the reference implementation.

A diagram with blocks that have no compiled form yet is an expected failure naming them
(strict: the lowering that makes it pass must remove it from NOT_LOWERED)."""
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.accel.mode import simulate_model
from blocksim.engine.simulator import simulate

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).parent / "corpus"
DIAGRAMS = sorted((ROOT / "diagrams").glob("*.yaml")) + sorted(CORPUS.glob("*.yaml"))

# block types each diagram uses that have no compiled form yet
NOT_LOWERED = {}


def _case(path):
    missing = NOT_LOWERED.get(path.name)
    marks = [pytest.mark.xfail(strict=True, reason="no compiled form yet: " + ", ".join(missing))] \
        if missing else []
    return pytest.param(path, marks=marks, id=path.name)


def close(a, b, what):
    """a equals b within 1e-12 relative to b's largest magnitude (at least 1)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape, f"{what}: shapes {a.shape} and {b.shape}"
    finite = np.isfinite(b)
    assert np.array_equal(finite, np.isfinite(a)), f"{what}: not finite in different places"
    scale = max(1.0, float(np.max(np.abs(b[finite]), initial=0.0)))
    np.testing.assert_allclose(a[finite], b[finite], rtol=1e-12, atol=1e-12 * scale,
                               err_msg=what)


def both(path, overrides=()):
    """(accelerated, normal) (t, data, info) of the diagram at `path`, figures on."""
    model = blocksim.load(path, [*overrides, "simulation.mode=accelerated"])
    accelerated = simulate_model(model, plots=True)
    assert accelerated[2]["mode"]["mode"] == "accelerated"
    return accelerated, normal_run(path, overrides, plots=True)


def normal_run(path, overrides=(), plots=False):
    """(t, data, info) of the diagram in normal mode, run as `blocksim run` runs it (the
    implicit solvers get the state Jacobian the run entry point assembles)."""
    return simulate_model(blocksim.load(path, [*overrides, "simulation.mode=normal"]),
                          plots=plots)


def assert_same(accelerated, normal, event_tol):
    (t, data, info), (t0, data0, info0) = accelerated, normal
    assert info["stats"] == info0["stats"]
    assert str(info["error"]) == str(info0["error"])
    assert info["complete"] == info0["complete"]
    close(t, t0, "t")
    assert data.keys() == data0.keys()
    for name in data0:
        close(data[name], data0[name], name)
    times, blocks, names = info["events"]
    times0, blocks0, names0 = info0["events"]
    assert names == names0 and np.array_equal(blocks, blocks0)
    np.testing.assert_allclose(times, times0, rtol=0, atol=event_tol)
    journal, journal0 = info["journal"], info0["journal"]  # a chart's states entered
    assert np.array_equal(journal[:, 1:], journal0[:, 1:])
    np.testing.assert_allclose(journal[:, 0], journal0[:, 0], rtol=0, atol=event_tol)
    assert info["sink_data"].keys() == info0["sink_data"].keys()
    for name, (ts, inputs, rows) in info0["sink_data"].items():
        ts1, inputs1, rows1 = info["sink_data"][name]
        close(ts1, ts, f"{name} t")
        assert (rows is None and rows1 is None) or np.array_equal(rows, rows1)
        for k, (u1, u) in enumerate(zip(inputs1, inputs)):
            close(u1, u, f"{name} u{k + 1}")


@pytest.mark.parametrize("path", [_case(p) for p in DIAGRAMS])
def test_both_modes_agree(path):
    accelerated, normal = both(path)
    assert_same(accelerated, normal, blocksim.load(path).settings.event_tol)


@pytest.mark.parametrize("solver", ["euler", "rk2", "rk4", "rk23", "dop853", "radau", "bdf",
                                    "lsoda"])
def test_every_solver_agrees_on_a_hybrid_diagram(solver):
    """The bouncing ball (a reset, a limit, 348 events) under every solver: the compiled
    fixed-step and embedded steppers, and scipy's on compiled evaluations."""
    path = ROOT / "diagrams" / "bouncing_ball.yaml"
    overrides = [f"simulation.solver={solver}", "simulation.step=0.002"]
    accelerated, normal = both(path, overrides)
    assert accelerated[2]["events"][0].size > 10
    assert_same(accelerated, normal, 1e-10)


@pytest.mark.parametrize("solver", ["euler", "rk4", "rk23", "rk45", "dop853", "radau"])
def test_refined_rows_agree(solver):
    """simulation.refine 3 (corpus refine_rows.yaml: cut steps, a source switch, a stop
    block inside a step), with figures and without, on fixed-step, embedded and stiff
    solvers: the rows inside the steps come from the same dense output."""
    path = CORPUS / "refine_rows.yaml"
    overrides = [f"simulation.solver={solver}", "simulation.step=0.01"]
    accelerated, normal = both(path, overrides)
    assert_same(accelerated, normal, 1e-10)
    plain = simulate(blocksim.load(path, [*overrides, "simulation.refine=1"]))
    assert len(accelerated[0]) > 2.5 * len(plain[0]) and accelerated[0][-1] < 4.2
    model = blocksim.load(path, [*overrides, "simulation.mode=accelerated"])
    assert_same(simulate_model(model), normal_run(path, overrides), 1e-10)


def test_the_record_without_figures_holds_the_sinks_rows():
    """Without figures the sinks are recorded with the results (one table of rows)."""
    path = ROOT / "diagrams" / "thermostat.yaml"
    model = blocksim.load(path, ["simulation.mode=accelerated"])
    accelerated = simulate_model(model, plots=False)
    normal = simulate(blocksim.load(path), plots=False)
    assert_same(accelerated, normal, 1e-10)
    assert accelerated[2]["sink_data"]["Scope"][2] is None


@pytest.mark.parametrize("name", ["backlash_turns.yaml", "pid_sliding.yaml"])
@pytest.mark.parametrize("solver", ["rk4", "rk23", "dop853", "radau"])
def test_blocks_watching_an_inputs_rate_agree_under_other_solvers(name, solver):
    """A backlash's turns (extrema of its input) and a clamping PID's sliding along a limit
    are located from an input's rate (engine/rates.py): computed in compiled code for the
    explicit solvers, by the simulator around compiled evaluations for scipy's."""
    accelerated, normal = both(CORPUS / name, [f"simulation.solver={solver}",
                                               "simulation.step=0.01"])
    assert accelerated[2]["events"][0].size >= 5
    assert_same(accelerated, normal, 1e-10)


@pytest.mark.parametrize("name, solver", [
    ("delay_sources.yaml", "rk4"), ("delay_sources.yaml", "rk23"),
    ("delay_sources.yaml", "dop853"), ("delay_sources.yaml", "radau"),
    ("delay_loop.yaml", "bdf"), ("delay_loop.yaml", "lsoda"), ("delay_tiny.yaml", "rk4"),
    ("delay_tiny.yaml", "radau")])
def test_histories_agree_under_other_solvers(name, solver):
    """Transport delays rebuild their input from the dense output's degree (3 for rk4's and
    rk23's cubic, 7 for dop853, the order for bdf and lsoda): their histories, the pieces cut
    to the tolerance, the echoed jumps (also one float after their jump: delay_tiny.yaml)
    and the history's growth (rk4's 1000 steps) agree.
    Under scipy's solvers the simulator samples the steps and the compiled histories take
    the samples the compiled outputs read."""
    accelerated, normal = both(CORPUS / name, [f"simulation.solver={solver}",
                                               "simulation.step=0.004"])
    assert_same(accelerated, normal, 1e-10)


@pytest.mark.parametrize("path", [ROOT / "diagrams" / "stick_slip.yaml",
                                  CORPUS / "robot_stick_slip.yaml"], ids=lambda p: p.name)
@pytest.mark.parametrize("solver", ["radau", "bdf", "lsoda"])
def test_stick_slip_agrees_under_scipys_solvers(path, solver):
    """The robot's stick-slip friction under scipy's steppers: the handlers run
    interpreted, and the compiled indicators read the holding torques the compiled outputs
    left in the workspace, so those outputs are evaluated after each handler as well."""
    accelerated, normal = both(path, [f"simulation.solver={solver}"])
    assert accelerated[2]["events"][0].size >= 4
    assert_same(accelerated, normal, blocksim.load(path).settings.event_tol)


@pytest.mark.parametrize("path", sorted(CORPUS.glob("fault_*.yaml")), ids=lambda p: p.name)
@pytest.mark.parametrize("solver", ["radau", "bdf", "lsoda"])
def test_faults_under_the_stiff_solvers_are_reported_as_in_normal_mode(path, solver):
    """A fault in compiled code (a domain error, an index out of range, a singular matrix, a
    point behind the camera) under scipy's solvers stops the run at the evaluation where
    normal mode's block raises: same block, port, time, message and notes, same rows."""
    accelerated, normal = both(path, [f"simulation.solver={solver}"])
    error, error0 = accelerated[2]["error"], normal[2]["error"]
    assert error0 is not None  # every fault_* diagram fails in normal mode
    assert (error.block, error.port, error.time) == (error0.block, error0.port, error0.time)
    assert error.notes == error0.notes
    assert_same(accelerated, normal, blocksim.load(path).settings.event_tol)


@pytest.mark.parametrize("solver", ["euler", "rk2", "rk4"])
@pytest.mark.parametrize("name", ["msd.yaml", "demo3.yaml"])
def test_fixed_step_runs_are_the_same_bits(name, solver):
    """The fixed-step stepper's sums are the same operations in the same order in both
    modes (no BLAS call in either): the states agree bit for bit, over a linear diagram and
    the Puma under computed torque."""
    path = ROOT / "diagrams" / name
    accelerated, normal = both(path, [f"simulation.solver={solver}", "simulation.step=0.001"])
    assert accelerated[2]["stats"] == normal[2]["stats"]
    np.testing.assert_array_equal(accelerated[0], normal[0])
    for channel, values in normal[1].items():
        np.testing.assert_array_equal(accelerated[1][channel], values, err_msg=channel)


# FMU diagrams (the session's test FMUs, tests/conftest.py): same steps, events, values
FMU_CASES = {
    "dahlquist": """
blocks:
  P: {type: fmu, file: FMU, parameters: {k: 3.0}, start: {x: 2.0}}
record: {x: P.x}""",
    "vanderpol": """
blocks:
  V: {type: fmu, file: FMU, parameters: {mu: 1.5}}
record: {x0: V.x0, x1: V.x1}""",
    "bouncing_ball": """
blocks:
  B: {type: fmu, file: FMU, parameters: {e: 0.8}, start: {h: 2.0}}
  S: {type: scope, inputs: 1}
wires: [B.h -> S]
record: {h: B.h, v: B.v, n: B.bounces}""",
    "stair": """
blocks:
  S: {type: fmu, file: FMU}
  G: {type: gain, K: 2}
  I: {type: integrator}
wires: [S.step -> G, G -> I]
record: {step: S.step, x: S.x, i: I.y}""",
    "feedthrough": """
blocks:
  U: {type: sine, amplitude: [1.0, 2.0], frequency: 1}
  F: {type: fmu, file: FMU, parameters: {gain: -1.5, n: 3}}
  I: {type: integrator, x0: [0.0, 0.0]}
wires: [U -> F.u, F.y -> I]
record: {y: F.y, i: I.y}""",
    "ticker": """
blocks:
  T: {type: fmu, file: FMU, parameters: {rate: 1.1}}
record: {count: T.count, x: T.x}""",
    "stiff": """
blocks:
  P: {type: fmu, file: FMU, parameters: {k: 50.0}}
  G: {type: gain, K: -2.0}
wires: [P.x2 -> G, G -> P.u]
record: {x1: P.x1, x2: P.x2}""",
    "sawtooth": """
blocks:
  S: {type: fmu, file: FMU, interface: co_simulation, step: 0.3}
  I: {type: integrator}
wires: [S.x -> I]
record: {x: S.x, count: S.count, area: I.y}""",
    "lag": """
blocks:
  U: {type: pulse, period: 0.3, width: 0.5}
  L: {type: fmu, file: FMU, interface: co_simulation, step: 0.05}
  M: {type: fmu, file: FMU}
wires: [U -> L.u, L.y -> M.u]
record: {cs: L.y, me: M.y}""",
}


@pytest.mark.parametrize("name, fmi, solver", [
    (name, fmi, solver) for name in FMU_CASES
    for fmi, solver in ((2, "rk45"), (3, "rk45"), (2, "rk4"), (3, "radau"))
    # FMI 2.0 spells the feedthrough's array as scalar ports: the FMI 3.0 cases cover it
    if not (name == "feedthrough" and fmi == 2)])
def test_fmu_diagrams_agree(fmu_diagram, name, fmi, solver):
    """The compiled loop (rk4, rk45) calls the FMU through dlopen/dlsym, normal mode through
    fmpy; under scipy's radau the handlers run interpreted and the compiled evaluations call
    normal mode's instance (one instance per run either way), and the state Jacobian (its
    directional derivatives joined with the gain's through the wires) is the same."""
    settings = "step: 0.01" if solver == "rk4" else "rtol: 1e-8, atol: 1e-10"
    path = fmu_diagram(name, fmi, f"blocksim: 1\nname: {name}\n{FMU_CASES[name]}\n"
                                  f"simulation: {{stop: 3, solver: {solver}, {settings}}}\n")
    accelerated, normal = both(path)
    if name in ("bouncing_ball", "stair"):
        assert normal[2]["events"][0].size >= 3
    if solver == "radau" and name in ("stiff", "dahlquist", "vanderpol"):
        assert normal[2]["stats"]["jacobian"] == accelerated[2]["stats"]["jacobian"] == "exact"
    assert_same(accelerated, normal, blocksim.load(path).settings.event_tol)


@pytest.mark.parametrize("solver", ["rk4", "dop853", "radau"])
def test_charts_agree_under_other_solvers(solver):
    """A continuous chart's located conditions, timers and journal: in compiled code for the
    explicit solvers, the chart's own (interpreted) handlers around compiled evaluations for
    scipy's."""
    accelerated, normal = both(CORPUS / "chart_modes.yaml", [f"simulation.solver={solver}",
                                                             "simulation.step=0.01"])
    assert len(normal[2]["journal"]) > 10
    assert_same(accelerated, normal, 1e-10)
