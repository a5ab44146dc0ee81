"""Sweeps in the calling process: grids and Monte Carlo against the closed form, failure
isolation, resume, the files of a sweep directory, the ad-hoc command line."""
import csv
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import blocksim
from blocksim.cli import main

from sweep_lag import METRICS, lag, table_rows, write_sweep

GRID = """\
grid:
  parameters.tau: [0.5, 1, 2]
  blocks.U.value: [1, -3]
""" + METRICS

MONTE_CARLO = """\
samples: 6
random:
  parameters.tau: uniform(0.5, 2)
  blocks.U.value: normal(0, 1)
seed: 7
""" + METRICS


def results(table):
    """The table without the wall times (which differ from run to run)."""
    return [{k: v for k, v in row.items() if k != "wall_s"} for row in table.rows]


def test_grid_metrics_equal_the_closed_form(tmp_path):
    table = blocksim.sweep(write_sweep(tmp_path, GRID), workers=1, out=tmp_path / "out")
    assert table.columns == ["run", "parameters.tau", "blocks.U.value", "status", "message",
                             "wall_s", "steps", "final_x", "x_at_1", "peak"]
    # the product in run order, the first grid key slowest
    assert [(r["parameters.tau"], r["blocks.U.value"]) for r in table.rows] == [
        (0.5, 1), (0.5, -3), (1, 1), (1, -3), (2, 1), (2, -3)]
    for row in table.rows:
        tau, u = row["parameters.tau"], row["blocks.U.value"]
        assert row["status"] == "ok" and row["message"] == "" and row["steps"] > 0
        assert row["final_x"] == pytest.approx(lag(u, tau, 2.0), rel=1e-7)
        assert row["x_at_1"] == pytest.approx(lag(u, tau, 1.0), rel=1e-7)
        assert row["peak"] == pytest.approx(abs(lag(u, tau, 2.0)), rel=1e-7)
    # the files: summary.csv equals the table, sweep.json carries it with the metadata
    out = tmp_path / "out"
    with open(out / "summary.csv") as f:
        rows = list(csv.DictReader(f))
    assert [float(r["final_x"]) for r in rows] == table.column("final_x")
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["complete"] is True and meta["counts"] == {"runs": 6, "ok": 6, "failed": 0,
                                                            "interrupted": 0}
    assert table_rows(out)[3]["final_x"] == table.rows[3]["final_x"]
    assert "rows" not in meta  # the rows are summary.csv's: sweep.json stays small
    assert meta["varied"] == [{"key": "parameters.tau", "kind": "grid"},
                              {"key": "blocks.U.value", "kind": "grid"}]
    assert meta["execution"]["compiles"] + meta["execution"]["reparameterised"] == 6
    assert {f["kind"] for f in meta["figures"]} == {"heatmap"}
    assert all((out / f["file"]).stat().st_size > 1000 for f in meta["figures"])
    res = np.load(out / "runs" / "3" / "results.npz")
    np.testing.assert_allclose(res["x"], [lag(-3, 1.0, t) for t in res["t"]], atol=1e-8)
    run_meta = json.loads((out / "runs" / "3" / "meta.json").read_text())
    assert run_meta["sweep"]["values"] == {"parameters.tau": 1, "blocks.U.value": -3}
    assert run_meta["configuration"]["parameters"]["tau"] == 1


def test_monte_carlo_draws_are_the_seed_sequence_and_reproducible(tmp_path):
    path = write_sweep(tmp_path, MONTE_CARLO)
    first = blocksim.sweep(path, workers=1)
    second = blocksim.sweep(path, workers=1)
    assert results(first) == results(second)
    # run i draws from SeedSequence(seed).spawn(runs)[i], in the order of `random:`
    children = np.random.SeedSequence(7).spawn(6)
    for row, child in zip(first.rows, children):
        rng = np.random.default_rng(child)
        tau, u = rng.uniform(0.5, 2), rng.normal(0, 1)
        assert (row["parameters.tau"], row["blocks.U.value"]) == (tau, u)
        assert row["final_x"] == pytest.approx(lag(u, tau, 2.0), rel=1e-7, abs=1e-12)
    assert first.meta["seeds"]["seed"] == 7


def test_a_blowing_up_run_is_isolated(tmp_path, capsys):
    # tau = -0.002: x grows as exp(500 t) and overflows near t = 1.4 (at a looser tolerance,
    # which reaches the overflow in fewer steps)
    path = write_sweep(tmp_path, "set: {simulation.rtol: 1e-6, simulation.atol: 1e-9}\n"
                                 "grid:\n  parameters.tau: [1, -0.002, 2]\n"
                                 "metrics: {final_x: final(x)}\n")
    code = main(["sweep", str(path), "--workers", "1", "--out", str(tmp_path / "out")])
    assert code == 3
    err = capsys.readouterr()
    with open(tmp_path / "out" / "summary.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["status"] for r in rows] == ["ok", "failed", "ok"]
    assert "not finite" in rows[1]["message"] and rows[1]["final_x"] == ""
    assert float(rows[2]["final_x"]) == pytest.approx(lag(1, 2.0, 2.0), rel=1e-5)
    assert "run 1 (parameters.tau=-0.002) failed" in err.err
    assert "3 runs, 2 ok, 1 failed" in err.out
    # the failed run's partial results are kept (--keep all)
    meta = json.loads((tmp_path / "out" / "runs" / "1" / "meta.json").read_text())
    assert meta["complete"] is False and meta["status"] == "failed"


def test_keep_failed_writes_only_the_failed_runs(tmp_path):
    path = write_sweep(tmp_path, "set: {simulation.rtol: 1e-6, simulation.atol: 1e-9}\n"
                                 "grid:\n  parameters.tau: [1, -0.002]\n")
    table = blocksim.sweep(path, workers=1, out=tmp_path / "out", keep="failed")
    assert table.column("status") == ["ok", "failed"]
    assert sorted(p.name for p in (tmp_path / "out" / "runs").iterdir()) == ["1"]


def test_resume_reruns_only_unfinished_rows(tmp_path):
    path = write_sweep(tmp_path, GRID.replace(METRICS, "metrics: {final_x: final(x)}\n"))
    whole = blocksim.sweep(path, workers=1)
    out = tmp_path / "out"

    def stop_after_two(p):
        if p.done == 2:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt) as info:
        blocksim.sweep(path, workers=1, out=out, progress=stop_after_two)
    # the runs finished at the interruption are kept: the first two, and those of a compiled
    # batch that had ended (the runs go in batches, in order, the next while one is read)
    status = info.value.table.column("status")
    interrupted = [i for i, s in enumerate(status) if s == "interrupted"]
    assert status[:2] == ["ok", "ok"] and interrupted and set(status) == {"ok", "interrupted"}
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["complete"] is False and meta["counts"]["interrupted"] == len(interrupted)

    rerun = []
    resumed = blocksim.sweep(path, workers=1, out=out, resume=True,
                             progress=lambda p: p.outcome and rerun.append(p.outcome.index))
    assert rerun == interrupted
    assert results(resumed) == results(whole)
    assert json.loads((out / "sweep.json").read_text())["complete"] is True
    # nothing left to do: nothing runs
    rerun.clear()
    assert results(blocksim.sweep(path, workers=1, out=out, resume=True)) == results(whole)
    assert rerun == []
    # another sweep in the same directory is not resumed
    with pytest.raises(blocksim.DiagramError, match="holds a different sweep"):
        blocksim.sweep(path, workers=1, out=out, resume=True, overrides=["simulation.stop=3"])


def test_the_table_as_a_dataframe(tmp_path, monkeypatch):
    pandas = pytest.importorskip("pandas")  # in the test extra: runs in CI
    table = blocksim.sweep(write_sweep(tmp_path, GRID), workers=1)
    frame = table.to_pandas()
    assert isinstance(frame, pandas.DataFrame) and list(frame.columns) == table.columns
    assert frame["final_x"].tolist() == table.column("final_x")
    assert frame["status"].tolist() == ["ok"] * 6
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas fails, as when absent
    with pytest.raises(ImportError, match="pip install pandas"):
        table.to_pandas()


def test_the_versions_of_a_sweep_do_not_depend_on_what_was_imported_before(tmp_path,
                                                                            monkeypatch):
    """sweep.json listed matplotlib only when something had imported it earlier in the
    process: it lists the libraries installed, each at the version its module gives."""
    import matplotlib
    import networkx
    import scipy
    path = write_sweep(tmp_path, "grid:\n  parameters.tau: [1]\n")
    imported = blocksim.sweep(path, workers=1).meta["versions"]
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if never imported
    assert blocksim.sweep(path, workers=1).meta["versions"] == imported
    for module in (np, scipy, matplotlib, networkx):
        assert imported[module.__name__] == module.__version__


def test_the_summary_counts_the_runs_in_each_mode(tmp_path, capsys):
    """The mode printed is the runs' own: a grid over simulation.mode runs some of each."""
    write_sweep(tmp_path, GRID)
    out = tmp_path / "modes"
    code = main(["sweep", str(tmp_path / "lag.yaml"), "--grid",
                 "simulation.mode=normal,accelerated,accelerated", "--workers", "1",
                 "--out", str(out), "--quiet", "--keep", "metrics"])
    assert code == 0
    execution = json.loads((out / "sweep.json").read_text())["execution"]
    assert execution["modes"] == {"accelerated": 2, "normal": 1}
    assert "(2 accelerated, 1 normal, in-process)" in capsys.readouterr().out


def test_adhoc_command_line_sweep(tmp_path, capsys):
    write_sweep(tmp_path, GRID)
    out = tmp_path / "adhoc"
    code = main(["sweep", str(tmp_path / "lag.yaml"), "--grid", "parameters.tau=0.5,2",
                 "--grid", "blocks.U.value=linspace(1, 2, 2)", "--metric", "fx=final(x)",
                 "--workers", "1", "--out", str(out), "--quiet", "--keep", "metrics"])
    assert code == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("lag_sweep: 4 runs, 4 ok, 0 failed")
    assert captured.err == ""
    # the time printed is sweep.json's (it was the command's own clock, a different span)
    execution = json.loads((out / "sweep.json").read_text())["execution"]
    # and it says the mode the runs went in (a sweep compiles: one compile serves every run)
    assert execution["modes"] == {"accelerated": 4}
    assert f" in {execution['wall_s']:.3g} s (accelerated, in-process)" in captured.out
    with open(out / "summary.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["parameters.tau"], r["blocks.U.value"]) for r in rows] == [
        ("0.5", "1.0"), ("0.5", "2.0"), ("2", "1.0"), ("2", "2.0")]
    for r in rows:
        assert float(r["fx"]) == pytest.approx(
            lag(float(r["blocks.U.value"]), float(r["parameters.tau"]), 2.0), rel=1e-7)
    assert not (out / "runs").exists()  # --keep metrics


def sigterm_after_a_row(path, out, *options):
    """Run `blocksim sweep path` in a fresh process and send it SIGTERM once summary.csv
    shows a finished row; (process, stdout, stderr) once it exits. The sweeps given here
    cannot finish (a run of theirs cannot), so the signal always finds one running."""
    proc = subprocess.Popen([sys.executable, "-m", "blocksim", "sweep", str(path), "--workers",
                             "1", "--out", str(out), "--keep", "metrics", *options],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "MPLBACKEND": "Agg"})
    while proc.poll() is None:
        time.sleep(0.2)
        if (out / "summary.csv").exists() and ",ok," in (out / "summary.csv").read_text():
            break
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate()
    return proc, stdout, stderr


def test_sigterm_writes_the_finished_rows(tmp_path):
    # normal mode (what a signal does to compiled code is tested in
    # tests/accel/test_accel_runs.py). Run 3 cannot finish: tau = 1e-4 makes the lag stiff
    # for rk45, some 3e13 steps to t = 1e9 (max_steps raised so that nothing stops it), so
    # the signal comes while the sweep runs (500 runs that could finish raced the polling)
    path = write_sweep(tmp_path, "set: {simulation.max_steps: 1e15}\nzip:\n"
                                 "  parameters.tau: [1000, 1500, 2000, 1e-4, 2500]\n"
                                 "  simulation.stop: [1e4, 1e4, 1e4, 1e9, 1e4]\n"
                                 "  simulation.output_interval: [100, 100, 100, 1e8, 100]\n"
                                 "metrics: {final_x: final(x)}\n")
    out = tmp_path / "out"
    proc, stdout, stderr = sigterm_after_a_row(path, out, "--mode", "normal")
    assert proc.returncode == 143, stderr  # 128 + SIGTERM, as blocksim run
    assert "Traceback" not in stderr
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["complete"] is False and meta["status"] == "interrupted"
    with open(out / "summary.csv") as f:
        rows = list(csv.DictReader(f))
    done = [r for r in rows if r["status"] == "ok"]
    assert len(rows) == 5 and 0 < len(done) <= 3
    assert [r["status"] for r in rows[3:]] == ["interrupted"] * 2
    for r in done:
        assert float(r["final_x"]) == pytest.approx(lag(1, float(r["parameters.tau"]), 1e4),
                                                    rel=1e-7)
    assert f"interrupted: sweep: 5 runs, {len(done)} ok" in stdout


def test_sigterm_on_a_large_grid_writes_every_row_and_exits(tmp_path):
    # 100,200 runs (334 x 300): at the signal the finished rows are in summary.csv already;
    # what is left is appending the rows not run, sweep.json, the heat map and the report.
    # Rewriting the whole table (and drawing a line or heat map a row at a time) took
    # minutes for a million rows. The last tau, 1e-12, makes its 300 runs stiff for rk45
    # (some 3e10 steps to t = 0.1): the sweep cannot finish before the signal
    path = write_sweep(tmp_path, "set: {simulation.stop: 0.1, simulation.output_interval: 0.1,"
                                 " simulation.max_steps: 1e15}\ngrid:\n"
                                 "  parameters.tau: where(linspace(1, 2, 334) < 2, "
                                 "linspace(1, 2, 334), 1e-12)\n"
                                 "  blocks.U.value: linspace(0, 1, 300)\n"
                                 "metrics: {final_x: final(x)}\n")
    out = tmp_path / "out"
    proc, stdout, stderr = sigterm_after_a_row(path, out)
    assert proc.returncode == 143, stderr
    rows = table_rows(out)
    assert [r["run"] for r in rows] == list(range(334 * 300))
    done = [r for r in rows if r["status"] == "ok"]
    assert 0 < len(done) <= 333 * 300 and rows[0]["status"] == "ok"
    assert {r["status"] for r in rows[333 * 300:]} == {"interrupted"}
    for r in done:
        assert r["final_x"] == pytest.approx(
            lag(r["blocks.U.value"], r["parameters.tau"], 0.1), rel=1e-7, abs=1e-12)
    assert json.loads((out / "sweep.json").read_text())["counts"]["ok"] == len(done)
    assert (out / "final_x.png").is_file() and (out / "report.html").is_file()


def test_zip_varies_values_together_and_draws_a_line(tmp_path):
    path = write_sweep(tmp_path, "set: {simulation.rtol: 1e-6, simulation.atol: 1e-9}\n"
                                 "zip:\n  parameters.tau: [0.5, 1, -0.002]\n"
                                 "  blocks.U.value: [2, 3, 1]\n"
                                 "metrics: {final_x: final(x)}\n")
    table = blocksim.sweep(path, workers=1, out=tmp_path / "out", keep="metrics")
    assert [(r["parameters.tau"], r["blocks.U.value"], r["status"]) for r in table.rows] == [
        (0.5, 2, "ok"), (1, 3, "ok"), (-0.002, 1, "failed")]
    assert table.rows[1]["final_x"] == pytest.approx(lag(3, 1.0, 2.0), rel=1e-5)
    # one figure per varied path (two zipped paths): the metric against each, failed runs marked
    assert [(f["kind"], f["paths"]) for f in table.meta["figures"]] == [
        ("line", ["parameters.tau"]), ("line", ["blocks.U.value"])]
    assert (tmp_path / "out" / "final_x_vs_parameters_tau.png").stat().st_size > 1000


def test_an_output_directory_that_cannot_be_written_is_exit_2_before_any_run(tmp_path, capsys):
    write_sweep(tmp_path, GRID)
    (tmp_path / "taken").write_text("a file, not a directory")
    code = main(["sweep", str(tmp_path / "lag.yaml"), "--grid", "parameters.tau=0.5,2",
                 "--workers", "1", "--out", str(tmp_path / "taken")])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"--out: error: cannot write the results to '{tmp_path / 'taken'}'")
    assert "Traceback" not in err


def test_figures_that_cannot_be_drawn_cost_a_warning_not_the_rows(tmp_path, capsys,
                                                                  monkeypatch):
    def broken(table, out_dir):
        raise MemoryError("no room for the figure")
    monkeypatch.setattr("blocksim.batch.run.write_figures", broken)
    path = write_sweep(tmp_path, GRID)
    out = tmp_path / "out"
    assert main(["sweep", str(path), "--workers", "1", "--out", str(out), "--quiet"]) == 0
    warning = "warning: could not draw the metric figures: no room for the figure"
    assert capsys.readouterr().err.splitlines() == [warning]  # one line, no traceback
    with open(out / "summary.csv") as f:
        assert [r["status"] for r in csv.DictReader(f)] == ["ok"] * 6
    assert json.loads((out / "sweep.json").read_text())["complete"] is True
    assert (out / "report.html").is_file()


def test_a_new_sweep_into_the_same_directory_removes_the_previous_ones_files(tmp_path):
    path = write_sweep(tmp_path, GRID)  # 6 runs, 3 metrics, a heat map each
    out = tmp_path / "out"
    blocksim.sweep(path, workers=1, out=out)
    (out / "runs" / "5" / "notes.txt").write_text("mine")
    smaller = write_sweep(tmp_path, "grid:\n  parameters.tau: [1, 2]\n"
                                    "metrics: {final_x: final(x)}\n", name="smaller.yaml")
    blocksim.sweep(smaller, workers=1, out=out)
    assert sorted(p.name for p in (out / "runs").iterdir()) == ["0", "1", "5"]
    assert list((out / "runs" / "5").iterdir()) == [out / "runs" / "5" / "notes.txt"]
    assert sorted(p.name for p in out.glob("*.png")) == ["final_x.png"]


def test_summary_csv_is_appended_in_run_order_never_rewritten(tmp_path):
    # each row is written once, as soon as the runs before it are done: every version of the
    # file seen while the sweep runs is the start of the final one (rewriting the whole
    # table every few seconds cost a large sweep most of its time, and minutes at a signal)
    out = tmp_path / "out"
    seen = []
    blocksim.sweep(write_sweep(tmp_path, GRID), workers=1, out=out,
                   progress=lambda p: seen.append((out / "summary.csv").read_text()))
    final = (out / "summary.csv").read_text()
    assert seen[0] == final.splitlines(keepends=True)[0]  # the header, before any run
    assert all(final.startswith(text) for text in seen)
    assert [len(text.splitlines()) for text in seen] == list(range(1, 8))  # a row per run
    assert len(final.splitlines()) == 7


def test_a_large_grid_is_planned_without_a_row_per_run_in_memory(tmp_path):
    # 201,000 runs: the plan makes each run when it is needed and the table is columns of
    # numbers (here about 50 bytes a run: status, wall time, steps, one metric, the todo
    # list); a dict per run and per row was 1-2 kB a run (3.7 GB for a million). Three
    # paths of 50, 60 and 67 values (each value is compiled once when the sweep is checked:
    # 400 x 500 took five times as long)
    import tracemalloc

    def stop(progress):
        raise KeyboardInterrupt  # when the runs would start: the plan and table exist
    write_sweep(tmp_path, "")  # lag.yaml
    grid = {"parameters.tau": "linspace(1, 2, 50)", "blocks.U.value": "linspace(0, 1, 60)",
            "blocks.I.x0": "linspace(0, 1, 67)"}
    tracemalloc.start()
    try:
        with pytest.raises(KeyboardInterrupt) as info:
            blocksim.sweep(tmp_path / "lag.yaml", grid=grid, metrics={"final_x": "final(x)"}, workers=1,
                           progress=stop)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(info.value.table) == 201_000
    assert info.value.table.rows[200_999]["blocks.I.x0"] == 1.0
    assert peak < 100 * 201_000


def test_a_new_sweep_into_the_same_directory_does_not_show_the_previous_report(tmp_path):
    # report.html and diagram.svg are written at a sweep's end: while the next sweep into
    # the directory runs (or after it was killed), the previous sweep's report must not
    # stand next to the new rows as if it were theirs
    out = tmp_path / "out"
    blocksim.sweep(write_sweep(tmp_path, GRID), workers=1, out=out)
    assert (out / "report.html").is_file() and (out / "diagram.svg").is_file()
    seen = []

    def look(progress):
        seen.append(sorted(p.name for p in out.iterdir()))
    smaller = write_sweep(tmp_path, "grid:\n  parameters.tau: [1, 2]\n"
                                    "metrics: {final_x: final(x)}\n", name="smaller.yaml")
    blocksim.sweep(smaller, workers=1, out=out, progress=look)
    # as the new sweep's runs start: its table, the (emptied) runs folder, nothing else
    assert seen[0] == [".sweep.lock", "runs", "summary.csv", "sweep.json"]  # and its lock
    assert (out / "report.html").is_file() and (out / "diagram.svg").is_file()  # its own


def test_a_run_over_the_time_limit_is_failed_timed_out(tmp_path, capsys, monkeypatch):
    # tau = 1e-4 makes the lag stiff for rk45: some 3e7 steps of 3e-4 s to t = 1e4 (max_steps
    # raised so that nothing else stops it), the others a few hundred; with `timeout: 3` its
    # row is failed "timed out" and the other runs are untouched (the limit is checked as the
    # run goes, at every solver step). The run's clock is a stand-in that moves 1 ms each
    # time it is read (once a step): the limit falls after 3,000 steps, however fast or
    # loaded the machine (with the real clock the test waited 3 s and hung on a machine's
    # speed)
    from types import SimpleNamespace

    from blocksim.batch import worker
    clock = [0.0]

    def perf_counter():
        clock[0] += 1e-3
        return clock[0]
    monkeypatch.setattr(worker, "time", SimpleNamespace(perf_counter=perf_counter,
                                                        process_time=time.process_time))
    path = write_sweep(tmp_path, "timeout: 3\nset: {simulation.stop: 1e4, simulation.max_steps: "
                                 "1e9, simulation.mode: normal, simulation.output_interval: "
                                 "100}\ngrid:\n  parameters.tau: [1000, 1e-4, 2000]\n"
                                 "metrics: {final_x: final(x)}\n")
    out = tmp_path / "out"
    assert main(["sweep", str(path), "--workers", "1", "--out", str(out), "--quiet"]) == 3
    rows = table_rows(out)
    assert [r["status"] for r in rows] == ["ok", "failed", "ok"]
    assert rows[1]["message"].startswith("timed out: the run took longer than 3 s")
    assert 2_990 <= rows[1]["steps"] <= 3_010 and rows[1]["wall_s"] > 3  # 1 ms a step
    for r in (rows[0], rows[2]):
        assert r["final_x"] == pytest.approx(lag(1, r["parameters.tau"], 1e4), rel=1e-7)
    assert json.loads((out / "sweep.json").read_text())["timeout"] == 3
    # --timeout on the command line replaces the file's, and is no reason to refuse --resume
    assert main(["sweep", str(path), "--workers", "1", "--out", str(out), "--quiet",
                 "--resume", "--timeout", "2"]) == 3
    assert [r["status"] for r in table_rows(out)] == ["ok", "failed", "ok"]
    assert 1_990 <= table_rows(out)[1]["steps"] <= 2_010
    assert main(["sweep", str(path), "--workers", "1", "--out", str(out), "--timeout", "0"]) == 2
    assert "--timeout: error: timeout must be a positive number of seconds" in \
        capsys.readouterr().err
