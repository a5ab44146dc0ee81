"""Sweeps in accelerated mode: the runs after the first reuse the compiled code with new
arguments (accel/batch.py), in batches integrated by one compiled call on C threads
(accel/pool.py), and their rows equal normal mode's, bit for bit, whatever the sweep varies:
parameters (those function blocks read included), a block's parameters (a transport delay's
too: its history starts afresh each run), settings, a random source's seed; values that
change the compiled code (an anti-windup choice) or make a run fail go the general way and
still agree; on one thread or several."""
import copy
import json
import os
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.accel import batch
from blocksim.accel.arguments import arguments
from blocksim.accel.build import build
from blocksim.accel.codegen import generate
from blocksim.accel.mode import simulate_model
from blocksim.accel.pool import Batch
from blocksim.batch.run import prepare
from blocksim.language import expr

ROOT = Path(__file__).resolve().parents[2]


def sweep_table(tmp_path, text, mode, workers=1):
    path = tmp_path / "sweep.yaml"
    path.write_text(text.replace("DIAGRAMS", str(ROOT / "diagrams")).replace(
        "CORPUS", str(ROOT / "tests" / "accel" / "corpus")))
    return prepare(path, overrides=[f"simulation.mode={mode}"]).run(workers=workers,
                                                                     keep="failed")


def sweep_rows(tmp_path, text, mode, workers=1):
    return sweep_table(tmp_path, text, mode, workers).rows


PID_MONTE_CARLO = """
blocksim-sweep: 1
diagram: DIAGRAMS/pid_motor.yaml
set:
  blocks.PID.anti_windup: back_calculation
samples: 12
random:
  parameters.K: uniform(1.5, 2.5)
  parameters.tau: uniform(0.4, 0.6)
  blocks.PID.Kp: uniform(6, 10)
  simulation.stop: uniform(8, 12)
seed: 3
metrics:
  overshoot: max(theta) - 10
  final: volts[-1]
"""

# the PID's own anti-windup, clamping: it watches the rate of e (each run of a batch has
# buffers of its own for that rate)
PID_CLAMPING = PID_MONTE_CARLO.replace("set:\n  blocks.PID.anti_windup: back_calculation\n", "")

NOISE_SEEDS = """
blocksim-sweep: 1
diagram: CORPUS/discrete_hits.yaml
grid:
  blocks.Noise.seed: [1, 2, 3]
  blocks.Hold.period: [0.1, 0.07]
metrics:
  i: i[-1]
  noise: mean(noise)
"""

ANTI_WINDUP = """
blocksim-sweep: 1
diagram: DIAGRAMS/pid_motor.yaml
grid:
  blocks.PID.anti_windup: [none, back_calculation]
  parameters.Vmax: [6, 12, 9]
metrics:
  overshoot: max(theta) - 10
"""

# after the first run, three that change the compiled code (the general way), then runs the
# fast path takes: the runs after a batch of only general runs are still run
GENERAL_FIRST = """
blocksim-sweep: 1
diagram: DIAGRAMS/pid_motor.yaml
zip:
  blocks.PID.anti_windup: [none, back_calculation, back_calculation, back_calculation, none,
                           none, none]
  parameters.Vmax: [6, 7, 8, 9, 10, 11, 12]
metrics:
  overshoot: max(theta) - 10
"""

PULSE_EDGES = """
blocksim-sweep: 1
diagram: CORPUS/sources_late_start.yaml
grid:
  blocks.Beat.period: [0.2, 0.15]
  blocks.Beat.delay: [0.1, 0.17]
metrics:
  i: i[-1]
  s: mean(s)
"""

DELAYS = """
blocksim-sweep: 1
diagram: CORPUS/delay_sources.yaml
grid:
  blocks.Late.delay: [0.7, 0.35]
  blocks.Echo.delay: [0.3, 0.1, 0.45]
metrics:
  high: max(i[-1])
  low: min(i[-1])
  all: mean(all)
"""

# every parameter the function blocks read changes from run to run (zipped, not a grid: this
# diagram takes some 2 s a run in normal mode)
EXPRESSIONS = """
blocksim-sweep: 1
diagram: CORPUS/expression_functions.yaml
set:
  simulation.stop: 0.6
zip:
  parameters.w: [1.3, 0.7, 1.1]
  parameters.lim: [0.35, 0.5, 0.42]
  parameters.K: ["[[2, 0.5, 0.1], [0.3, 3, 0.2], [0.1, 0.4, 4]]", "3 * eye(3) + 0.1",
                 "[[3, 0.2, 0], [0.1, 2, 0.4], [0.3, 0, 5]]"]
metrics:
  m: matrices[-1, 0]
  r: rounding[-1, 2]
  e: elementary[-1, 1]
"""

# the chart's timer and the drag it sets the car against change (its after times and
# its actions' constants are its numbers); the shifts come at other instants, with a chain
GEARBOX = """
blocksim-sweep: 1
diagram: DIAGRAMS/gearbox.yaml
grid:
  parameters.hold: [3, 5]
  parameters.c: [40, 45]
metrics:
  v: v[-1]
  gear: mean(gear)
"""

FAILING = """
blocksim-sweep: 1
diagram: CORPUS/fault_division.yaml
grid:
  simulation.stop: [0.5, 2, 0.75, 3]
metrics:
  q: q[-1]
"""

# runs failing where the diagnosis recomputes a transport delay, whose history only the
# compiled run has (they were 'internal error: IndexError')
FAILING_DELAYED = """
blocksim-sweep: 1
diagram: CORPUS/fault_delay.yaml
grid:
  simulation.stop: [0.5, 2]
  blocks.D.delay: [0.1, 0.3]
metrics:
  i: i[-1]
"""


@pytest.fixture(scope="module")
def normal_rows(tmp_path_factory):
    """The rows of a sweep in normal mode, swept once for the module (the same for one
    thread or two)."""
    found = {}

    def rows(text):
        if text not in found:
            found[text] = sweep_rows(tmp_path_factory.mktemp("normal"), text, "normal")
        return found[text]
    return rows


@pytest.mark.parametrize("workers", [1, 2], ids=["one thread", "two threads"])
@pytest.mark.parametrize("text", [PID_MONTE_CARLO, PID_CLAMPING, NOISE_SEEDS, ANTI_WINDUP,
                                  GENERAL_FIRST, PULSE_EDGES, DELAYS, EXPRESSIONS, GEARBOX,
                                  FAILING, FAILING_DELAYED],
                         ids=["pid monte carlo", "pid clamping", "noise seeds, periods",
                              "anti-windup", "general runs first", "pulse edges", "delays",
                              "function blocks' parameters", "a chart's parameters",
                              "failing", "failing delayed"])
def test_sweep_rows_equal_normal_mode(tmp_path, text, workers, monkeypatch, normal_rows):
    fast = []
    args = batch.CompiledRuns.args

    def counted(self, overrides):
        result = args(self, overrides)
        fast.append(result is not None)
        return result
    monkeypatch.setattr(batch.CompiledRuns, "args", counted)
    normal = normal_rows(text)
    table = sweep_table(tmp_path, text, "accelerated", workers)
    accelerated = table.rows
    assert table.meta["execution"]["where"] == ("in-process" if workers == 1 else
                                                "in-process, 2 threads")
    assert len(normal) == len(accelerated)
    for a, n in zip(accelerated, normal):
        assert (a["status"], a["message"], a["steps"]) == (n["status"], n["message"], n["steps"])
        for key in n:
            if key not in ("wall_s", "status", "message", "steps"):
                np.testing.assert_array_equal(a[key], n[key], err_msg=key)
    if text in (PID_MONTE_CARLO, PID_CLAMPING, NOISE_SEEDS, PULSE_EDGES, DELAYS, EXPRESSIONS,
                GEARBOX):
        assert all(fast)  # after the first, every run took the fast path
    if text == GENERAL_FIRST:
        assert fast == [False] * 3 + [True] * 3
    if text is FAILING:
        assert [r["status"] for r in accelerated] == ["ok", "failed", "ok", "failed"]
    if text is FAILING_DELAYED:  # sqrt(1 - (t - delay)) < 0 from t = 1 + delay (< 2)
        assert [r["status"] for r in accelerated] == ["ok", "ok", "failed", "failed"]
        assert "block 'Root' port 'y': square root of a negative number at t = 1.1" in \
            accelerated[2]["message"]


def test_a_value_refused_at_the_times_it_runs_over_goes_the_general_way(tmp_path):
    """issue 35 item 5: a delay below the time's resolution is refused when a diagram is
    compiled: 2e-16 s runs up to t = 0.5 (floats 1.1e-16 apart on [0.5, 1)), not up to
    t = 3 (4.4e-16 apart). The sweep's check takes each value with the others' first, so
    only the run combining them meets it; made from the first run's compiled arguments, it
    ran ('ok' where normal mode failed)."""
    text = DELAYS.replace("blocks.Late.delay: [0.7, 0.35]", "simulation.stop: [0.5, 3]").replace(
        "[0.3, 0.1, 0.45]", "[0.3, 2e-16]")
    normal = sweep_rows(tmp_path, text, "normal")
    accelerated = sweep_rows(tmp_path, text, "accelerated")
    statuses = [r["status"] for r in normal]
    assert [r["status"] for r in accelerated] == statuses and statuses.count("failed") == 1
    failed = statuses.index("failed")
    assert accelerated[failed]["message"] == normal[failed]["message"]
    assert "parameter 'delay': 2e-16 s is below the time's resolution: near t = 3 floats " \
           "are 4.44e-16 s apart" in normal[failed]["message"]


def test_a_changed_compiled_form_is_not_reused(tmp_path):
    """The anti-windup choice changes the PID's code: those runs are compiled apart."""
    rows = sweep_rows(tmp_path, ANTI_WINDUP, "accelerated")
    overshoots = {r["overshoot"] for r in rows}
    assert len(overshoots) == len(rows)  # six different responses


def test_a_batch_runs_each_sample_with_its_own_steps_and_failure():
    """One compiled call, two threads: runs of different lengths and step sizes, two of them
    failing (a division by zero at t = 1 lies inside stop 2 and 5, not 0.5 and 0.75), each
    equal to the same run on its own (simulate_model), bit for bit."""
    path = ROOT / "tests" / "accel" / "corpus" / "fault_division.yaml"
    model = blocksim.load(path, ["simulation.mode=accelerated"])
    simulate_model(model, sweep=True)  # compiled (or loaded)
    generated = generate(model)
    library = build(generated.source).library
    stops, steps = [0.5, 2, 0.75, 5, 0.3], [0.25, 0.25, 0.05, 0.25, 0.1]
    args = []
    for stop, step in zip(stops, steps):  # each run's values written by the values route
        model.set({"simulation.stop": stop, "simulation.step": step})
        args.append(copy.copy(arguments(model, generated)))
    pool_batch = Batch(library, model, generated, capacity=8)
    pool_batch.fill(args)
    pool_batch.start(2)
    pool_batch.finish()
    results = pool_batch.results()
    for k, (stop, step) in enumerate(zip(stops, steps)):
        done, stats, wall, cpu, start, end = results.run(k)
        alone = simulate_model(blocksim.load(path, [f"simulation.stop={stop}",
                                                    f"simulation.step={step}",
                                                    "simulation.mode=accelerated"]))
        if stop > 1:
            assert done is False and start == end and alone[2]["error"] is not None
            continue
        t, data = results.of(k)
        assert done is True and stats["nsteps"] == alone[2]["stats"]["nsteps"] == \
            round(stop / step)
        np.testing.assert_array_equal(t, alone[0])
        np.testing.assert_array_equal(data["q"], alone[1]["q"])
        assert t[-1] == stop and wall >= 0 and cpu >= 0
    pool_batch.close()


def test_a_batchs_threads_run_its_next_batches_and_end_with_it():
    """The threads a batch makes wait for its next start (none made per batch: two alive
    after three batches) and end when it is freed; the runs of its next batches, in another
    order and on one thread or two, are the first batch's bit for bit."""
    path = ROOT / "tests" / "accel" / "corpus" / "fault_division.yaml"
    model = blocksim.load(path, ["simulation.mode=accelerated"])
    simulate_model(model, sweep=True)
    generated = generate(model)
    library = build(generated.source).library
    args = []
    for stop, step in [(0.5, 0.25), (0.75, 0.05), (0.3, 0.1), (5, 0.25)]:
        model.set({"simulation.stop": stop, "simulation.step": step})
        args.append(copy.copy(arguments(model, generated)))
    pool_batch = Batch(library, model, generated, capacity=4)
    before = len(os.listdir("/proc/self/task"))
    found = []
    for order, threads in [([0, 1, 2, 3], 2), ([3, 2, 1, 0], 1), ([2, 0, 3, 1], 2)]:
        pool_batch.fill([args[k] for k in order])
        pool_batch.start(threads)
        pool_batch.finish()
        results = pool_batch.results()
        found.append({k: (results.run(j)[0], *results.of(j)) for j, k in enumerate(order)})
    assert len(os.listdir("/proc/self/task")) == before + 2
    for k in range(4):
        done, t, data = found[0][k]
        assert done is (k != 3)  # stop 5 passes the division by zero at t = 1
        for other in found[1:]:
            assert other[k][0] is done
            np.testing.assert_array_equal(other[k][1], t)
            np.testing.assert_array_equal(other[k][2]["q"], data["q"])
    pool_batch.close()
    assert len(os.listdir("/proc/self/task")) == before


def test_a_run_over_the_time_limit_is_timed_out_inside_its_batch(tmp_path, monkeypatch):
    """A sweep with a per-run limit still runs in compiled batches: the batch ends the run
    that goes over it, its row failed 'timed out' with its steps so far, as normal mode
    writes it; the runs beside it in the batch are untouched and their metrics still
    computed for the whole batch at once. With `keep: failed` the timed-out run's results
    (its rows so far) are read from its batch: it is not run again.

    The run over the limit cannot finish in any time: tau = 1e-4 makes the lag stiff for
    rk45, some 3e13 steps to t = 1e9. The others take a few hundred steps, and the code is
    compiled before (the first run's compile counts against the limit: under load it went
    over 1 s)."""
    from blocksim.batch.reductions import BatchMetrics
    limits, at_once = [], []
    set_limit, of_batch = Batch.limit, BatchMetrics.of_batch
    monkeypatch.setattr(Batch, "limit", lambda self, s: (limits.append(s), set_limit(self, s)))
    monkeypatch.setattr(BatchMetrics, "of_batch",
                        lambda self, *a: at_once.append(of_batch(self, *a)) or at_once[-1])
    (tmp_path / "lag.yaml").write_text(  # tau x' = 1 - x, x(0) = 0: x = 1 - exp(-t/tau)
        "blocksim: 1\nname: lag\nparameters: {tau: 1.0}\nblocks:\n"
        "  U: {type: constant, value: 1}\n  S: {type: sum, signs: '+-'}\n"
        "  G: {type: gain, K: 1/tau}\n  I: {type: integrator}\n"
        "wires: [U -> S.u1, S -> G, G -> I, I -> S.u2]\n"
        "simulation: {stop: 1e4, rtol: 1e-10, atol: 1e-12, max_steps: 1e15, "
        "output_interval: 100}\nrecord: {x: I.y}\n")
    blocksim.execute(blocksim.load(tmp_path / "lag.yaml", ["simulation.mode=accelerated"]))
    path = tmp_path / "sweep.yaml"
    path.write_text("blocksim-sweep: 1\ndiagram: lag.yaml\ntimeout: 1\nzip:\n"
                    "  parameters.tau: [1000, 1500, 2000, 2500, 1e-4]\n"
                    "  simulation.stop: [1e4, 1e4, 1e4, 1e4, 1e9]\n"
                    "  simulation.output_interval: [100, 100, 100, 100, 1e8]\n"
                    "metrics: {final_x: final(x), peak: max(x)}\n")
    sweep = prepare(path, overrides=["simulation.mode=accelerated"])
    rows = sweep.run(workers=1, keep="metrics").rows
    assert limits and set(limits) == {1.0}  # the batches were told the limit
    assert [r["status"] for r in rows] == ["ok"] * 4 + ["failed"]
    assert rows[4]["message"] == ("timed out: the run took longer than 1 s (the sweep's "
                                  "per-run limit, timeout)")
    assert rows[4]["wall_s"] >= 1.0 and rows[4]["steps"] > 0  # its steps so far
    for r in rows[:4]:
        exact = 1 - np.exp(-1e4 / r["parameters.tau"])
        assert r["final_x"] == pytest.approx(exact, rel=1e-7)
        assert r["peak"] == pytest.approx(exact, rel=1e-7)
    assert at_once and all(v is not None for found in at_once for v in found.values())
    limits.clear()
    out = tmp_path / "out"
    rows = sweep.run(workers=1, keep="failed", out=out).rows
    assert [r["status"] for r in rows] == ["ok"] * 4 + ["failed"] and set(limits) == {1.0}
    meta = json.loads((out / "runs" / "4" / "meta.json").read_text())
    assert meta["status"] == "interrupted" and meta["error"] == rows[4]["message"]
    with np.load(out / "runs" / "4" / "results.npz") as f:  # its rows up to the limit
        assert meta["rows"] == len(f["t"]) > 0 and np.all(np.diff(f["t"]) > 0)
    assert not (out / "runs" / "0").exists()


def test_names_read_by_a_raw_value():
    """The names the values route follows (compiler/revalue.py): text that does not parse
    reads none (evaluating it reports why)."""
    assert expr.names_in("K * sin(w*t) + 1") == {"K", "sin", "w", "t"}
    assert expr.names_in(["K", 2, ["tau", "1/m"]]) == {"K", "tau", "m"}
    assert expr.names_in(3.5) == set()
    assert expr.names_in("not ( valid") == set()
    # a chart's states and transitions: mappings of actions (statements) and conditions
    assert expr.names_in({"A": {"entry": "g = 1; f = F[0]\n  k += dk"}, "T": [
        {"when": "v > up[0]", "after": "hold"}]}) == {"g", "f", "F", "k", "dk", "v", "up",
                                                      "hold"}


def test_a_batch_holds_no_more_rows_than_its_bytes_allow(tmp_path, monkeypatch):
    # a batch holds its runs' rows in C and again read into Python: 9e6-row runs of 100
    # signals went 2 and more to a batch (8 a thread in the first), a MemoryError traceback
    # in a sweep whose runs each passed the memory check. Batches now hold what RESULT_BYTES
    # allows, by each run's planned rows, and a run over it goes alone, the general way.
    # Here with RESULT_BYTES 20,000: the lag recorded every 0.01 s (t and x) over 2 s plans
    # 201 + 1 rows, 2 x 8 x 2 x 202 = 6,464 bytes: 3 runs a batch; over 20 s, 2,002 rows,
    # 64,064 bytes: alone. The first grid key is the slowest: stop alternates 2, 20
    from blocksim.batch import batches

    monkeypatch.setattr(batches, "RESULT_BYTES", 20_000)
    filled, alone = [], []
    fill, run_one = Batch.fill, batches.run_one
    monkeypatch.setattr(Batch, "fill", lambda self, args: (filled.append(len(args)),
                                                           fill(self, args)))
    monkeypatch.setattr(batches, "run_one", lambda job, i, *a: (alone.append(i),
                                                               run_one(job, i, *a))[1])
    (tmp_path / "lag.yaml").write_text(
        "blocksim: 1\nname: lag\nparameters: {tau: 1.0}\nblocks:\n"
        "  U: {type: constant, value: 1}\n  S: {type: sum, signs: '+-'}\n"
        "  G: {type: gain, K: 1/tau}\n  I: {type: integrator}\n"
        "wires: [U -> S.u1, S -> G, G -> I, I -> S.u2]\n"
        "simulation: {stop: 2, rtol: 1e-10, atol: 1e-12, output_interval: 0.01}\n"
        "record: {x: I.y}\n")
    path = tmp_path / "sweep.yaml"
    path.write_text("blocksim-sweep: 1\ndiagram: lag.yaml\ngrid:\n"
                    "  parameters.tau: linspace(1, 2, 20)\n  simulation.stop: [2, 20]\n"
                    "metrics: {final_x: final(x)}\n")
    rows = prepare(path, overrides=["simulation.mode=accelerated"]).run(
        workers=1, keep="metrics").rows
    assert filled and max(filled) == 3 and sum(filled) == 19  # run 0 compiled the code
    assert alone == [0] + list(range(1, 40, 2))
    for r in rows:  # x(t) = 1 - exp(-t / tau)
        exact = 1 - np.exp(-r["simulation.stop"] / r["parameters.tau"])
        assert r["status"] == "ok" and r["final_x"] == pytest.approx(exact, rel=1e-8)


KEPT_EVENTS = """
blocksim-sweep: 1
diagram: CORPUS/integrator_limits_reset.yaml
grid:
  blocks.Wave.frequency: [1.5, 2.5, 0.7]
  blocks.Limited.upper: [0.6, 0.3]
metrics:
  top: max(limited)
"""

KEPT_CAMERA = """
blocksim-sweep: 1
diagram: CORPUS/fault_camera.yaml
grid:
  simulation.stop: [1.0, 1.2, 2.0, 1.4]
metrics:
  u: uv[-1, 0, 0]
"""


@pytest.mark.parametrize("text", [NOISE_SEEDS, KEPT_EVENTS, KEPT_CAMERA],
                         ids=["noise seeds, periods", "events", "camera report"])
def test_kept_results_of_compiled_batches_are_the_general_ways(tmp_path, text, monkeypatch):
    """`--keep all`, the default, went to worker processes, one Model per run (6x slower
    than the compiled batches `--keep metrics` got): every run's results now come out of
    its batch, in this process, and are what the general way (one Model a run, in this
    process) writes: results.npz's rows, sinks and events, meta.json's configuration,
    overrides, seeds, solver counts, events and the blocks' reports (the camera's
    visibility; a run past t = 1.5 fails, its results kept from its own run)."""
    from blocksim.batch import run as sweep_run

    filled = []
    fill = Batch.fill
    monkeypatch.setattr(Batch, "fill", lambda self, args: (filled.append(len(args)),
                                                           fill(self, args)))
    path = tmp_path / "sweep.yaml"
    path.write_text(text.replace("CORPUS", str(ROOT / "tests" / "accel" / "corpus")))
    sweep = prepare(path, overrides=["simulation.mode=accelerated"])
    batched = sweep.run(workers=2, out=tmp_path / "batched")  # keep: all
    assert batched.meta["execution"]["where"] == "in-process, 2 threads" and filled
    monkeypatch.setattr(sweep_run, "in_batches", lambda *args: False)
    general = sweep.run(workers=1, out=tmp_path / "general")
    assert batched.column("status") == general.column("status")
    for i in range(len(general)):
        a, b = (tmp_path / name / "runs" / str(i) for name in ("batched", "general"))
        with np.load(a / "results.npz") as fa, np.load(b / "results.npz") as fb:
            assert sorted(fa.files) == sorted(fb.files)
            for name in fb.files:
                np.testing.assert_array_equal(fa[name], fb[name], err_msg=f"run {i}: {name}")
        meta_a, meta_b = (json.loads((d / "meta.json").read_text()) for d in (a, b))
        for meta in (meta_a, meta_b):  # what the time, the cache, the modules loaded change
            del meta["created"], meta["wall_time"], meta["versions"]
            meta["mode"].pop("compile_time", None), meta["mode"].pop("cache_hit", None)
        assert meta_a == meta_b, i
    if text is KEPT_CAMERA:
        meta = json.loads((tmp_path / "batched" / "runs" / "1" / "meta.json").read_text())
        assert "points" in meta["blocks"]["Camera"]
    if text is KEPT_EVENTS:
        with np.load(tmp_path / "batched" / "runs" / "1" / "results.npz") as f:
            assert len(f["events_t"]) > 0
