"""Accelerated mode around the run: the cache (a corrupt entry rebuilt, two processes
compiling at once, a --set reusing the compiled code), the choice of mode (refused with the
blocks named, auto's fallbacks, no compiler), what the command line and meta.json say, a
block's fault named as normal mode names it, and Ctrl-C keeping the rows."""
import itertools
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import blocksim
from blocksim.accel import build, mode, runner
from blocksim.accel.codegen import generate
from blocksim.accel.mode import decide, simulate_model
from blocksim.batch.run import prepare
from blocksim.block import Block, In, Out
from blocksim.cli import main
from blocksim.engine.simulator import simulate
from blocksim.language import library
from terminal import OnTerminal

ROOT = Path(__file__).resolve().parents[2]
MSD = ROOT / "diagrams" / "msd.yaml"


def _accelerated(path, *overrides):
    return simulate_model(blocksim.load(path, [*overrides, "simulation.mode=accelerated"]))


def _x(path, *overrides):
    return simulate(blocksim.load(path, overrides))[1]["x"]


def _replace(path, data):
    """The file at `path` replaced by one holding `data` (a loaded library is mapped: its
    file must not change under it)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _run_in_a_new_process(out, *options):
    """`blocksim run msd.yaml --mode accelerated` in a process of its own: its meta.json."""
    proc = subprocess.run([sys.executable, "-m", "blocksim", "run", str(MSD), "--mode",
                           "accelerated", "--no-plots", "--quiet", "--out", str(out), *options],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "meta.json").read_text())


def test_a_corrupt_or_half_written_entry_is_compiled_again(fresh_cache, tmp_path):
    """The next process finds the damaged entry (a process keeps the library it loaded)."""
    assert _run_in_a_new_process(tmp_path / "a")["mode"]["cache_hit"] is False
    (library,) = fresh_cache.glob("*.so")
    good = library.read_bytes()
    other = _run_in_a_new_process(tmp_path / "b", "--solver", "rk23")  # another structure
    stale = next(p for p in fresh_cache.glob("*.so") if p != library).read_bytes()
    # corrupt, cut short (half written), another key's working library under this name
    for k, damaged in enumerate((b"\x7fELF garbage", good[:len(good) // 2], stale)):
        _replace(library, damaged)
        meta = _run_in_a_new_process(tmp_path / f"c{k}")
        assert meta["mode"]["cache_hit"] is False and library.read_bytes() != damaged
        assert meta["mode"]["compile_time"] > 0 and other["mode"]["cache_hit"] is False
        np.testing.assert_array_equal(np.load(tmp_path / f"c{k}" / "results.npz")["x"], _x(MSD))


def test_two_processes_compiling_one_structure_both_succeed(fresh_cache, tmp_path):
    command = [sys.executable, "-m", "blocksim", "run", str(MSD), "--mode", "accelerated",
               "--no-plots", "--quiet", "--out"]
    procs = [subprocess.Popen(command + [str(tmp_path / f"out{k}")], stderr=subprocess.PIPE,
                              text=True) for k in range(2)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    results = [np.load(tmp_path / f"out{k}" / "results.npz") for k in range(2)]
    np.testing.assert_array_equal(results[0]["x"], results[1]["x"])
    np.testing.assert_array_equal(results[0]["x"], _x(MSD))
    assert [p.suffix for p in fresh_cache.iterdir()] == [".so"]  # one entry, no temporary file


def test_a_set_changes_a_value_without_compiling_again(fresh_cache):
    _, _, first = _accelerated(MSD)
    assert first["mode"]["cache_hit"] is False
    _, data, info = _accelerated(MSD, "parameters.k=8")
    assert info["mode"]["cache_hit"] is True and info["mode"]["compile_time"] == 0.0
    np.testing.assert_array_equal(data["x"], _x(MSD, "parameters.k=8"))
    # a stiffer spring: x settles at F/k = 1/8, not 1/4 (the static balance k x = F)
    assert abs(data["x"][-1] - 1 / 8) < 0.01 and abs(_x(MSD)[-1] - 1 / 4) < 0.01


def test_a_perturbed_robot_or_a_payload_changes_numbers_not_code(fresh_cache):
    """The robot is packed parameters: another robot of the same shape reuses the compiled
    diagram, and its run is normal mode's, bit for bit (the same C kernels)."""
    demo1 = ROOT / "diagrams" / "demo1.yaml"
    _, data, first = _accelerated(demo1)
    assert first["mode"]["cache_hit"] is False
    for other in (["robots.p560.perturb=0.2", "robots.p560.seed=3"],
                  ["robots.p560.payload={mass: 2, com: [0, 0, 0.1]}"]):
        _, changed, info = _accelerated(demo1, *other)
        assert info["mode"]["cache_hit"] is True
        assert not np.array_equal(changed["q"], data["q"])
        np.testing.assert_array_equal(changed["q"], simulate(blocksim.load(demo1, other))[1]["q"])


def test_a_change_of_structure_compiles_again(fresh_cache):
    _accelerated(MSD)
    _, _, info = _accelerated(MSD, "simulation.solver=dop853")
    assert info["mode"]["cache_hit"] is False


class _Doubler(Block):
    """y = 2 u: a plain-Python plugin block, without a compiled form."""

    def ports(self):
        return [In("u")], [Out("y")]

    def output(self, t):
        np.multiply(self.u[0], 2.0, out=self.y[0])


PLUGINS = """blocksim: 1
blocks:
  C: {type: clock}
  Twice: {type: doubler_a}
  Again: {type: doubler_b}
wires: [C -> Twice, Twice -> Again]
simulation: {stop: 1, output_interval: 0.5}
record: {y: Again.y}
"""


@pytest.fixture
def plugins(monkeypatch, tmp_path):
    """A diagram of two plain-Python plugin blocks (types doubler_a, doubler_b)."""
    monkeypatch.setattr(library, "_registered", {})
    for name in ("doubler_a", "doubler_b"):
        blocksim.register_block(type(name, (_Doubler,), {}), name=name)
    path = tmp_path / "plugins.yaml"
    path.write_text(PLUGINS)
    return path


def test_accelerated_is_refused_naming_every_block_without_a_compiled_form(plugins, capsys):
    assert main(["run", str(plugins), "--mode", "accelerated", "--no-plots"]) == 2
    err = capsys.readouterr().err
    assert "plugins.yaml:4: error: block 'Twice': accelerated mode: block type 'doubler_a' " \
           "has no compiled form" in err
    assert "block 'Again': accelerated mode: block type 'doubler_b'" in err
    assert "Traceback" not in err


def test_check_code_names_the_blocks_without_a_compiled_form(plugins, capsys):
    """`check --code` printed a NotCompilable traceback; it says which blocks have no C."""
    assert main(["check", str(plugins), "--code"]) == 2
    out, err = capsys.readouterr()
    assert "plugins.yaml:4: error: block 'Twice': accelerated mode: block type 'doubler_a' " \
           "has no compiled form" in err and "block 'Again'" in err
    assert "hint: --code prints the C of a diagram whose blocks all have a compiled form" in err
    assert not out and "Traceback" not in err


def test_auto_falls_back_to_normal_mode_with_a_note(plugins, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", str(plugins), "--out", str(out), "--no-plots"]) == 0
    assert "note: normal mode: no compiled form for Twice (doubler_a), Again (doubler_b)" in \
        capsys.readouterr().err
    mode = json.loads((out / "meta.json").read_text())["mode"]
    assert mode["mode"] == "normal" and "no compiled form" in mode["why"]


def test_without_a_compiler_auto_runs_normal_mode_and_accelerated_says_what_to_install(
        monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    model = blocksim.load(MSD)
    decision = decide(model)
    assert decision.mode == "normal" and "no C compiler found" in decision.note
    assert main(["run", str(MSD), "--mode", "accelerated", "--no-plots"]) == 2
    err = capsys.readouterr().err
    assert "accelerated mode is not available: no C compiler found" in err and "install" in err


def test_the_compiler_is_looked_for_again_when_the_path_changes(monkeypatch, tmp_path):
    """A process that ran once with a PATH without cc (a test hiding ffmpeg, a user's
    script) finds cc again when PATH has it back."""
    model = blocksim.load(MSD)
    with monkeypatch.context() as m:
        m.setenv("PATH", str(tmp_path))
        assert "no C compiler found" in decide(model, sweep=True).note
    assert decide(model, sweep=True).mode == "accelerated"


def test_auto_compiles_a_long_run_and_a_sweep_and_begins_a_short_one_in_normal_mode(
        fresh_cache):
    short = blocksim.load(MSD)
    decision = decide(short)
    assert decision.mode == "normal" and "short run on paper" in decision.why
    # it looks for cached code first, then compiles past the compile time it expects (msd's
    # 8 blocks: 0.6 s + 8 x 15 ms, the constants the module documents)
    assert [kind for _, kind in decision.checks] == ["cached", "compile"]
    assert decision.checks[0][0] < decision.checks[1][0] == pytest.approx(0.72)
    assert decide(short, sweep=True).mode == "accelerated"
    long = blocksim.load(MSD, ["simulation.stop=20000"])  # max_step 400 s: 50 steps at least
    assert decide(long).mode == "normal" and decide(long).checks
    long = blocksim.load(MSD, ["simulation.stop=20000", "simulation.max_step=0.01"])
    assert decide(long).mode == "accelerated" and "long run" in decide(long).why
    _accelerated(MSD)  # cached now; a short run still begins in normal mode
    assert decide(blocksim.load(MSD)).checks


@pytest.fixture
def ticking(monkeypatch):
    """auto's clock (accel/mode.py), a stand-in that moves 10 us each time it is read (once
    a step): when a run switches follows its steps, not the machine's speed or load (msd
    takes 166 steps, 1000 with rk4: past 1 ms, not past 0.72 s, the compile time auto
    expects; under load its rk4 run went past that on the machine's clock)."""
    monkeypatch.setattr(mode, "time", SimpleNamespace(
        perf_counter=itertools.count(0.0, 1e-5).__next__))


def _counting_generate(monkeypatch):
    """Calls of the code generator, counted in the returned list."""
    from blocksim.accel import codegen
    calls = []
    monkeypatch.setattr(codegen, "generate",
                        lambda m, lows=None: calls.append(1) or generate(m, lows))
    return calls


def _same_run(a, b):
    """Two runs' rows, records and events are the same bits."""
    (ta, da, ia), (tb, db, ib) = a, b
    assert np.array_equal(ta, tb) and da.keys() == db.keys()
    for k in da:
        assert np.array_equal(da[k], db[k], equal_nan=True), k
    assert all(np.array_equal(x, y) for x, y in zip(ia["events"][:2], ib["events"][:2]))
    assert ia["stats"] == ib["stats"]


def test_a_short_run_generates_no_source_until_it_runs_past_the_start_of_cached_code(
        fresh_cache, monkeypatch, tmp_path, ticking):
    """auto begins a short run in normal mode without generating its source (what a
    `blocksim run` of demo1 costs); past START_SECONDS it looks for compiled code of its
    structure, and when it is cached runs it from the start: the results are the compiled
    run's, the summary says so, and the model remembers, so its next runs (after a
    Model.set too, whose new values keep its generated source) start compiled."""
    calls = _counting_generate(monkeypatch)
    monkeypatch.setattr(mode, "START_SECONDS", 1e6)  # never reached: the run ends in normal mode
    seen = []
    t, data, info = simulate_model(blocksim.load(MSD), progress=seen.append)
    assert info["mode"]["mode"] == "normal" and "short run on paper" in info["mode"]["why"]
    assert calls == [] and not fresh_cache.exists() and seen[-1] == t[-1] == 20
    _same_run((t, data, info), simulate(blocksim.load(MSD)))
    refused = tmp_path / "refused.yaml"  # a function block without a compiled form
    refused.write_text(
        "blocksim: 1\nrobots: {p560: {model: puma560}}\nblocks:\n"
        "  Q: {type: constant, value: [0.1, 0.1, 0.1, 0.1, 0.1, 0.1]}\n"
        "  F: {type: function, expr: 'fkine(p560, q)[0, 3]', inputs: [q]}\n"
        "  I: {type: integrator}\nwires: [Q -> F, F -> I]\nsimulation: {stop: 1}\n")
    decision = decide(blocksim.load(refused))
    assert decision.note == "note: normal mode: no compiled form for F (function)"
    assert not decision.checks

    compiled = _accelerated(MSD)  # msd compiled into the cache
    assert calls == [1]
    monkeypatch.setattr(mode, "START_SECONDS", 1e-6)  # passed at the first step
    model = blocksim.load(MSD)
    assert decide(model).checks and calls == [1]
    seen = []
    switched = simulate_model(model, progress=seen.append)
    how = switched[2]["mode"]
    assert how["mode"] == "accelerated" and how["cache_hit"] and calls == [1, 1]
    assert re.fullmatch(r"ran [0-9.]+ ms in normal mode, and compiled code for this "
                        r"diagram's structure is cached", how["why"]) and how["normal_time"] > 0
    _same_run(switched, compiled)
    assert seen[-1] == 20
    assert decide(model).why == "compiled code for this diagram's structure is cached"
    model.set("blocks.Spring.K", 3.0)  # new values: the model knows it ran long, and its
    decision = decide(model)           # source is the structure's (not generated again)
    assert decision.mode == "accelerated" and not decision.checks and calls == [1, 1]

    other = blocksim.load(MSD, ["simulation.solver=rk4"])  # another structure, not cached
    t, data, info = simulate_model(other)
    assert info["mode"]["mode"] == "normal" and calls == [1, 1, 1]  # looked, went on


def test_a_run_past_the_compile_time_is_compiled_and_run_again(fresh_cache, monkeypatch,
                                                              ticking):
    """A run short on paper that lasts in normal mode as long as compiling would (a stiff
    or event-heavy diagram) is compiled and run again: ski rental, at most twice the cost
    of having compiled at once."""
    monkeypatch.setattr(mode, "normal_seconds", lambda model: 0.0)
    monkeypatch.setattr(mode, "compile_seconds", lambda model: 1e-3)  # msd: 166 steps
    monkeypatch.setattr(mode, "START_SECONDS", 1e6)
    t, data, info = simulate_model(blocksim.load(MSD))
    how = info["mode"]
    assert how["mode"] == "accelerated" and not how["cache_hit"] and how["compile_time"] > 0
    assert how["why"].endswith(" in normal mode, about what compiling takes")
    assert how["normal_time"] >= 1e-3
    _same_run((t, data, info), _accelerated(MSD))
    other = blocksim.load(MSD, ["simulation.solver=rk4"])  # not compiled yet
    assert decide(other).checks
    other.__dict__["_normal_past"] = 1e-3  # as if a run of it had switched at the compile time
    decision = decide(other)
    assert decision.mode == "accelerated" and "a long run" in decision.why


def test_a_failure_to_prepare_compiled_code_leaves_the_run_in_normal_mode_with_a_note(
        fresh_cache, monkeypatch, ticking):
    _accelerated(MSD)  # something is cached: the run looks for its code

    def fails(model, lows):
        raise PermissionError("the cache is not readable")
    monkeypatch.setattr(mode, "_generated", fails)
    monkeypatch.setattr(mode, "START_SECONDS", 1e-6)
    t, data, info = simulate_model(blocksim.load(MSD))
    assert info["complete"] and info["mode"]["mode"] == "normal"
    assert info["mode"]["note"] == ("note: normal mode: its compiled code could not be "
                                    "prepared (PermissionError: the cache is not readable)")
    _same_run((t, data, info), simulate(blocksim.load(MSD)))


def test_a_compile_that_fails_after_a_switch_runs_normal_mode_with_a_note(fresh_cache,
                                                                         monkeypatch, ticking):
    monkeypatch.setattr(mode, "normal_seconds", lambda model: 0.0)
    monkeypatch.setattr(mode, "compile_seconds", lambda model: 1e-3)
    monkeypatch.setattr(mode, "START_SECONDS", 1e6)

    def rejected(source, key):
        raise build.CompileFailed("cc failed on the generated code: (its message)")
    monkeypatch.setattr(build, "build", rejected)
    t, data, info = simulate_model(blocksim.load(MSD))
    how = info["mode"]
    assert how["mode"] == "normal" and how["normal_time"] >= 1e-3 and info["complete"]
    assert how["note"] == "note: normal mode: cc failed on the generated code: (its message)"
    _same_run((t, data, info), simulate(blocksim.load(MSD)))


@pytest.mark.parametrize("path", [
    ROOT / "diagrams" / "bouncing_ball.yaml", ROOT / "diagrams" / "pid_motor.yaml",
    ROOT / "diagrams" / "demo4.yaml", ROOT / "tests" / "accel" / "corpus" / "discrete_hits.yaml",
    ROOT / "tests" / "accel" / "corpus" / "delay_loop.yaml",
    ROOT / "tests" / "accel" / "corpus" / "backlash_turns.yaml",
    ROOT / "tests" / "accel" / "corpus" / "sources_tables.yaml"], ids=lambda p: p.stem)
def test_a_switched_run_is_the_compiled_run(path, monkeypatch):
    """What the abandoned normal-mode start changed (block states, random draws, delay
    histories, events so far) does not reach the compiled run that replaces it: the
    switch comes half-way through the simulated time (the Trial's clock is the test's)."""
    compiled = _accelerated(path)
    model = blocksim.load(path, ["simulation.mode=auto"])
    clock = [0.0]
    monkeypatch.setattr(mode, "time", SimpleNamespace(perf_counter=lambda: clock[0]))
    monkeypatch.setattr(mode, "START_SECONDS", 1.0)
    half = model.settings.stop / 2

    def progress(t):  # the clock moves on once the normal-mode run is half-way
        if t >= half:
            clock[0] = 2.0
    switched = simulate_model(model, progress)
    assert switched[2]["mode"]["mode"] == "accelerated"
    assert switched[2]["mode"]["normal_time"] == 2  # switched at the half-way step
    _same_run(switched, compiled)


def test_check_says_which_mode_and_prints_the_code(capsys):
    assert main(["check", str(MSD), "--mode", "accelerated"]) == 0
    assert "mode: accelerated (simulation.mode is accelerated)" in capsys.readouterr().out
    assert main(["check", str(MSD), "--code"]) == 0
    code = capsys.readouterr().out
    # the gain's behaviour (y = K * u) lowered; K is a value (the block's P_K), not in the code
    assert "/* ---- block 2: InvMass (gain): y = K * u */" in code
    assert "static void dg_cont(" in code and "(out_y)[0] = (P_K)[0] * (in_u)[0];" in code


def test_the_summary_meta_and_report_give_the_mode(fresh_cache, tmp_path, capsys,
                                                  monkeypatch, ticking):
    monkeypatch.setattr(mode, "START_SECONDS", 1e-6)  # auto takes the cached code at once
    out = tmp_path / "run"
    assert main(["run", str(MSD), "--mode", "accelerated", "--out", str(out)]) == 0
    assert "accelerated (compiled in " in capsys.readouterr().out
    meta = json.loads((out / "meta.json").read_text())["mode"]
    assert meta["mode"] == "accelerated" and meta["cache_hit"] is False and meta["compile_time"] > 0
    assert "accelerated (compiled in" in (out / "report.html").read_text()
    assert main(["run", str(MSD), "--out", str(out)]) == 0  # auto: the cached code
    assert re.search(r"accelerated \(cached, after [0-9.e-]+ s in normal mode\)",
                     capsys.readouterr().out)
    mode_of = json.loads((out / "meta.json").read_text())["mode"]
    assert mode_of["cache_hit"] is True and mode_of["normal_time"] > 0
    assert re.search(r"accelerated \(cached\): ran [0-9.]+ ms in normal mode, and compiled",
                     (out / "report.html").read_text())


def test_a_division_by_zero_is_named_by_block_and_time_as_in_normal_mode():
    path = ROOT / "tests" / "accel" / "corpus" / "fault_division.yaml"
    t, data, info = _accelerated(path)
    error = info["error"]
    assert (error.block, error.port, error.time) == ("Div", "y", 1.0)
    assert "division by zero" in str(error)
    assert np.isinf(data["q"][-1]) and t[-1] == 1.0  # the row at the fault is kept
    assert str(simulate(blocksim.load(path))[2]["error"]) == str(error)


def test_a_square_root_of_a_negative_number_is_named_by_block_and_time():
    path = ROOT / "tests" / "accel" / "corpus" / "fault_sqrt.yaml"
    error = _accelerated(path)[2]["error"]
    assert (error.block, error.port) == ("Root", "y") and 1.0 < error.time < 1.001
    assert "sqrt of u = -" in str(error) and "is undefined (domain: u >= 0)" in str(error)


def test_progress_moves_while_compiled_code_runs(monkeypatch):
    # chunks of no time: compiled code looks at its clock every 16 steps, so each chunk is
    # 16 steps (chunks of 10 us were as many steps as the machine's speed made them)
    monkeypatch.setattr(runner, "CHUNK_SECONDS", 0.0)
    seen = []
    model = blocksim.load(MSD, ["simulation.mode=accelerated", "simulation.max_step=0.001"])
    simulate_model(model, progress=seen.append)
    assert len(seen) > 10 and seen == sorted(seen) and seen[-1] == 20.0


LONG = """
blocksim: 1
name: long
blocks:
  One: {type: constant, value: 1}
  I: {type: integrator}
wires: [One -> I]
simulation: {stop: 1.0e6, solver: euler, step: 1.0e-3, max_steps: 1.0e13, output_interval: 10,
             mode: accelerated}  # 10^9 steps, 10^5 rows: a recording that fits in memory
record: {x: I.y}
"""


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_and_sigterm_keep_the_rows_of_compiled_code(fresh_cache, tmp_path, sig, code):
    """The signal arrives once the run's own progress bar (its stderr a terminal) shows its
    compiled code 100 s into the run: never during the compile, however loaded the machine."""
    path, out = tmp_path / "long.yaml", tmp_path / "out"
    path.write_text(LONG)
    with OnTerminal("run", path, "--out", out) as run:
        run.until_simulated(100.0)
        run.proc.send_signal(sig)
        assert run.drain() == code, run.text
    meta = json.loads((out / "meta.json").read_text())
    assert meta["status"] == "interrupted" and meta["mode"]["mode"] == "accelerated"
    res = np.load(out / "results.npz")
    assert len(res["t"]) > 10
    np.testing.assert_allclose(res["x"], res["t"], rtol=1e-12)  # x' = 1 by Euler: exact


PLUGIN_RUN = """
import sys
import numpy as np
import blocksim
from blocksim.block import Block, In, Out

class Doubler(Block):
    def ports(self):
        return [In("u")], [Out("y")]

    def output(self, t):
        np.multiply(self.u[0], 2.0, out=self.y[0])

blocksim.register_block(Doubler, name="doubler")
result = blocksim.run(sys.argv[1])
assert np.allclose(result["y"], 2 * result.t)
print(result.meta["mode"]["why"])
print(sorted(m for m in sys.modules if m.startswith("blocksim.accel.")))
"""


def test_a_run_that_does_not_compile_imports_no_compiler(tmp_path):
    """Under auto a diagram with a block without a compiled form (a plain-Python plugin) runs
    in normal mode without importing the code generator or the build cache (their import is
    a cost every such run would pay for nothing)."""
    path = tmp_path / "d.yaml"
    path.write_text("blocksim: 1\nblocks:\n  C: {type: clock}\n  D: {type: doubler}\n"
                    "wires: [C -> D]\nsimulation: {stop: 1, output_interval: 0.5}\n"
                    "record: {y: D.y}\n")
    proc = subprocess.run([sys.executable, "-c", PLUGIN_RUN, str(path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    why, modules = proc.stdout.splitlines()
    assert why == "no compiled form for D (doubler)"
    assert "blocksim.accel.codegen" not in modules and "blocksim.accel.build" not in modules


def test_running_one_model_again_generates_its_code_once(fresh_cache, monkeypatch):
    """blocksim.execute of one Model in a loop generates its C source once; Model.set of
    new values keeps it (values are the Context's, the source the structure's), and the
    run has the new values (x settles at F/k, as a fresh load with them gives)."""
    from blocksim.accel import codegen
    calls = []
    monkeypatch.setattr(codegen, "generate",
                        lambda m, lows=None: calls.append(1) or generate(m, lows))
    model = blocksim.load(MSD, ["simulation.mode=accelerated"])
    first = [blocksim.execute(model)["x"] for _ in range(3)]
    assert len(calls) == 1
    np.testing.assert_array_equal(first[2], first[0])
    model.set("parameters.k", 8)
    again = blocksim.execute(model)
    assert len(calls) == 1
    np.testing.assert_array_equal(again["x"], _x(MSD, "parameters.k=8"))
    assert abs(again["x"][-1] - 1 / 8) < 0.01 and abs(first[0][-1] - 1 / 4) < 0.01


def test_a_model_keeps_its_bound_compiled_run_between_runs(monkeypatch):
    """execute of one Model binds its compiled run once and runs it again (the same rt),
    with the same results bit for bit, also after a change of values (its arguments
    pointed at again) and after a run recording more than KEEP_BYTES dropped it."""
    model = blocksim.load(MSD, ["simulation.mode=accelerated"])
    first = blocksim.execute(model)
    rt = model.__dict__["_bound"].rt
    again = blocksim.execute(model)
    assert model.__dict__["_bound"].rt == rt
    np.testing.assert_array_equal(again["x"], first["x"])
    model.set("simulation.stop", 5)
    shorter = blocksim.execute(model)
    assert model.__dict__["_bound"].rt == rt and shorter.t[-1] == 5
    np.testing.assert_array_equal(shorter["x"], _x(MSD, "simulation.stop=5"))
    model.set("blocks.Force.time", 0.5)  # its time event's array new, the settings the same
    later = blocksim.execute(model)
    assert model.__dict__["_bound"].rt == rt
    np.testing.assert_array_equal(later["x"], _x(MSD, "simulation.stop=5",
                                                 "blocks.Force.time=0.5"))
    monkeypatch.setattr(runner, "KEEP_BYTES", 0)
    blocksim.execute(model)
    assert "_bound" not in model.__dict__
    np.testing.assert_array_equal(blocksim.execute(model)["x"], later["x"])


def test_a_cache_that_cannot_be_written_is_a_message_not_a_traceback(monkeypatch, tmp_path,
                                                                     capsys):
    """BLOCKSIM_CACHE_DIR naming a file: accelerated mode says so (exit 2, the diagram
    named); a run auto switches to compiled code goes on in normal mode with a note."""
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("BLOCKSIM_CACHE_DIR", str(tmp_path / "file"))
    monkeypatch.setattr(build, "_LOADED", {})
    assert main(["run", str(MSD), "--mode", "accelerated", "--no-plots",
                 "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert "msd.yaml: error: accelerated mode: cannot write the compiled-code cache" in err
    assert "Traceback" not in err
    monkeypatch.setattr(mode, "normal_seconds", lambda model: 0.0)
    monkeypatch.setattr(mode, "compile_seconds", lambda model: 1e-3)  # it switches
    t, data, info = simulate_model(blocksim.load(MSD))
    assert info["complete"] and info["mode"]["mode"] == "normal"
    assert info["mode"]["note"].startswith("note: normal mode: cannot write the compiled-code "
                                           "cache")


@pytest.mark.parametrize("name", ["x" * 300, "/".join(["y" * 200] * 25)],
                         ids=["a folder name of 300 characters", "a path of 5,000 characters"])
def test_a_cache_path_too_long_is_a_message_not_a_traceback(monkeypatch, tmp_path, capsys, name):
    """Names past the file system's limits (255 bytes a name, 4,096 a path on Linux and
    macOS): looking into the cache raised OSError 'File name too long' (a traceback).
    Accelerated mode says so at the diagram (exit 2); auto, compiling a long run, goes on in
    normal mode with a note; an accelerated sweep's rows fail with the message."""
    monkeypatch.setenv("BLOCKSIM_CACHE_DIR", str(tmp_path / name))
    monkeypatch.setattr(build, "_LOADED", {})
    assert main(["run", str(MSD), "--mode", "accelerated", "--no-plots",
                 "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert "msd.yaml: error: accelerated mode: cannot read the compiled-code cache" in err
    assert err.rstrip().endswith("File name too long") and "Traceback" not in err
    monkeypatch.setattr(mode, "normal_seconds", lambda model: 60.0)  # long: it compiles
    t, data, info = simulate_model(blocksim.load(MSD))
    assert info["complete"] and info["mode"]["mode"] == "normal"
    assert info["mode"]["note"].startswith("note: normal mode: cannot read the compiled-code "
                                           "cache")
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(f"blocksim-sweep: 1\ndiagram: {MSD}\ngrid:\n  parameters.k: [1, 2]\n"
                     "metrics:\n  x: x[-1]\n")
    rows = prepare(sweep, overrides=["simulation.mode=accelerated"]).run(workers=1).rows
    assert [r["status"] for r in rows] == ["failed", "failed"]
    assert all("cannot read the compiled-code cache" in r["message"] and
               "internal error" not in r["message"] for r in rows)
