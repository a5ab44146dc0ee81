"""Sweeps on Dask clusters: a local cluster the sweep starts, an existing one by address,
and what happens when a worker process dies. (Each cluster start costs a few seconds.)"""
import csv
import json
import logging

import pytest

import blocksim
from blocksim.cli import main
from blocksim.batch.execute import OnDask, _local_cluster
from blocksim.batch.spec import Run

from sweep_killer import always_die, die_once, innocent
from sweep_lag import METRICS, lag, table_rows, write_sweep
from test_sweep_runs import MONTE_CARLO, results

distributed = pytest.importorskip("distributed")


def test_monte_carlo_is_identical_on_two_local_workers(tmp_path):
    # normal mode: an accelerated sweep runs in compiled batches in this process
    path = write_sweep(tmp_path, MONTE_CARLO.replace("samples: 6", "samples: 12"))
    alone = blocksim.sweep(path, workers=1, overrides=["simulation.mode=normal"])
    shared = blocksim.sweep(path, workers=2, out=tmp_path / "out",
                            overrides=["simulation.mode=normal"])
    assert results(shared) == results(alone)
    assert shared.meta["execution"]["where"] == "2 local worker processes"
    # each worker compiled the diagram once and re-parameterised it for its other runs
    ex = shared.meta["execution"]
    assert ex["compiles"] == 2 and ex["reparameterised"] == 10
    assert len(list((tmp_path / "out" / "runs").iterdir())) == 12


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None,
                                  silence_logs=logging.ERROR) as c:
        yield c


def test_scheduler_address_runs_the_sweep_there(tmp_path, cluster, capsys):
    path = write_sweep(tmp_path, "set: {simulation.rtol: 1e-6, simulation.atol: 1e-9}\n"
                                 "grid:\n  parameters.tau: [0.5, -0.002, 2]\n"
                                 "  blocks.U.value: [1, -3]\n" + METRICS)
    out = tmp_path / "out"
    code = main(["sweep", str(path), "--scheduler", cluster.scheduler_address, "--out", str(out),
                 "--quiet"])
    assert code == 3  # the tau < 0 runs blow up; the others are fine
    assert f"Dask cluster {cluster.scheduler_address}" in capsys.readouterr().out
    with open(out / "summary.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["status"] for r in rows] == ["ok", "ok", "failed", "failed", "ok", "ok"]
    for r in rows:
        if r["status"] == "ok":
            u, tau = float(r["blocks.U.value"]), float(r["parameters.tau"])
            assert float(r["final_x"]) == pytest.approx(lag(u, tau, 2.0), rel=1e-5)
    local = blocksim.sweep(path, workers=1)
    assert [{k: v for k, v in row.items() if k not in ("wall_s", "message")}
            for row in table_rows(out)] == [{k: v for k, v in row.items()
                                             if k not in ("wall_s", "message")}
                                            for row in local.rows]


def test_compiled_batches_on_a_cluster_equal_normal_mode(tmp_path, cluster):
    """Without kept results, each worker runs its tasks as compiled batches: the rows are
    normal mode's, bit for bit."""
    path = write_sweep(tmp_path, MONTE_CARLO.replace("samples: 6", "samples: 40"))
    with distributed.Client(cluster.scheduler_address) as client:
        shared = blocksim.sweep(path, client=client, overrides=["simulation.mode=accelerated"])
    normal = blocksim.sweep(path, workers=1, overrides=["simulation.mode=normal"])
    assert results(shared) == results(normal)
    assert shared.counts()["ok"] == 40


def test_a_worker_that_dies_is_retried_once_then_failed(tmp_path):
    with _local_cluster(2) as client:
        survivor = client.submit(die_once, str(tmp_path / "marker"), pure=False)
        bystanders = client.map(innocent, range(4), pure=False)
        assert survivor.result(timeout=120) == "survived"
        assert client.gather(bystanders) == [0, 2, 4, 6]
        doomed = client.submit(always_die, pure=False)
        (outcome,) = OnDask(client, "test").outcomes(doomed, [Run(7, {}, [])])
        assert outcome.index == 7 and outcome.row["status"] == "failed"
        assert OnDask.died(doomed)
        # a batch of several whose worker died gives no rows: its runs go again one by one
        assert OnDask(client, "test").outcomes(doomed, [Run(7, {}, []), Run(8, {}, [])]) == []
        assert "died running this run, and again when it was retried" in outcome.row["message"]
        client.wait_for_workers(2, timeout=60)  # the nannies have restarted the killed ones


def test_runs_go_on_after_every_local_worker_is_killed(tmp_path, capfd):
    # both worker processes killed at once after the first run: the job (diagram, metrics)
    # lived only on them, so every later run failed with "FutureCancelledError ... already
    # forgotten / lost dependencies" and distributed's ERROR lines reached the terminal.
    # The nannies start new workers; the runs that had not started run there (the ones
    # that were running are retried), or, at worst, are left for --resume.
    psutil = pytest.importorskip("psutil")
    killed = []
    others = {child.pid for child in psutil.Process().children()}  # e.g. another cluster's

    def kill_the_workers(progress):
        if progress.outcome is not None and not killed:
            for child in psutil.Process().children():
                if child.pid not in others and "resource_tracker" not in " ".join(child.cmdline()):
                    child.kill()
                    killed.append(child.pid)
    path = write_sweep(tmp_path, "grid:\n  parameters.tau: linspace(0.5, 2, 24)\n" + METRICS)
    out = tmp_path / "out"
    table = blocksim.sweep(path, workers=2, out=out, progress=kill_the_workers,
                           overrides=["simulation.mode=normal"])  # on the worker processes
    assert len(killed) == 2
    # A run executing when both died can be charged twice: the scheduler may hand it to the
    # second worker (idle, its result done) before that one's death is noticed. Such a row
    # says so and --resume runs it again; every other run is ok or not run.
    failed = [row for row in table.rows if row["status"] == "failed"]
    assert len(failed) <= 2
    assert all("died running this run, and again when it was retried" in row["message"]
               for row in failed)
    if table.counts()["interrupted"] or failed:
        table = blocksim.sweep(path, workers=1, out=out, resume=True,
                               overrides=["simulation.mode=normal"])
    assert table.column("status") == ["ok"] * 24
    for row in table.rows:
        assert row["final_x"] == pytest.approx(lag(1, row["parameters.tau"], 2.0), rel=1e-7)
    assert "ERROR" not in capfd.readouterr().err
