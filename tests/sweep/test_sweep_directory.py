"""The sweep directory as a user shares it: one sweep at a time, and nothing written,
deleted or embedded outside it."""
import json
import os
import socket
import subprocess
import sys
import time

import pytest

import blocksim
from blocksim.cli import main

from sweep_lag import write_sweep

SLOW = ("set: {simulation.stop: 400}\ngrid:\n  parameters.tau: linspace(0.5, 2, 200)\n"
        "metrics: {final_x: final(x)}\n")


def test_a_second_sweep_into_a_busy_directory_is_refused_naming_the_first(tmp_path, capsys):
    # two sweeps into one --out both exited 0 and mixed their run folders (8 of 30 rows
    # pointed at the other sweep's results): the directory is locked while a sweep runs
    path = write_sweep(tmp_path, SLOW)
    other = write_sweep(tmp_path, "grid:\n  parameters.tau: [1, 2]\n", name="other.yaml")
    out = tmp_path / "out"
    first = subprocess.Popen([sys.executable, "-m", "blocksim", "sweep", str(path), "--workers",
                              "1", "--out", str(out), "--quiet"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (out / "summary.csv").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert main(["sweep", str(other), "--workers", "1", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert f"'{out}' is in use by another sweep" in err
        assert f"pid {first.pid} on {socket.gethostname()}, started " in err
        with pytest.raises(blocksim.DiagramError, match="in use by another sweep"):
            blocksim.sweep(path, workers=1, out=out, resume=True)
    finally:
        first.kill()
        first.wait()
    # killed outright, the first sweep left its lock file, but holds no lock any more
    assert blocksim.sweep(other, workers=1, out=out).counts()["ok"] == 2
    assert not [p for p in os.listdir(out) if p.endswith(".lock")]  # removed when done


GRID = "grid:\n  parameters.tau: [1, 2]\nmetrics: {final_x: final(x)}\n"


def test_a_run_folder_that_is_a_symbolic_link_is_not_followed(tmp_path):
    # runs/<i> linked elsewhere: the previous results there were deleted and the new ones
    # written into the link's target; a dangling link was a traceback
    path = write_sweep(tmp_path, GRID)
    out = tmp_path / "out"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for name in ("results.npz", "meta.json", "keep.txt"):
        (elsewhere / name).write_text(f"not the sweep's {name}")
    (out / "runs").mkdir(parents=True)
    (out / "runs" / "0").symlink_to(elsewhere, target_is_directory=True)
    (out / "runs" / "1").symlink_to(tmp_path / "nowhere", target_is_directory=True)
    table = blocksim.sweep(path, workers=1, out=out)
    assert table.column("status") == ["ok", "ok"]
    assert sorted(p.name for p in elsewhere.iterdir()) == ["keep.txt", "meta.json",
                                                           "results.npz"]
    assert (elsewhere / "meta.json").read_text() == "not the sweep's meta.json"
    for i in (0, 1):
        folder = out / "runs" / str(i)
        assert folder.is_dir() and not folder.is_symlink()
        assert json.loads((folder / "meta.json").read_text())["sweep"]["run"] == i
    assert not (tmp_path / "nowhere").exists()


def test_the_runs_folder_as_a_symbolic_link_is_not_followed(tmp_path):
    path = write_sweep(tmp_path, GRID)
    out = tmp_path / "out"
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "0").mkdir(parents=True)
    (elsewhere / "0" / "results.npz").write_text("not the sweep's")
    out.mkdir()
    (out / "sweep.json").write_text("{}")  # a previous sweep: its runs are cleared
    (out / "runs").symlink_to(elsewhere, target_is_directory=True)
    blocksim.sweep(path, workers=1, out=out)
    assert (elsewhere / "0" / "results.npz").read_text() == "not the sweep's"
    assert sorted(p.name for p in elsewhere.iterdir()) == ["0"]
    assert (out / "runs").is_dir() and not (out / "runs").is_symlink()
    assert sorted(p.name for p in (out / "runs").iterdir()) == ["0", "1"]


def test_the_report_embeds_only_the_directorys_own_files(tmp_path):
    # a crafted sweep.json naming figures by absolute or ../ paths, and figures or a
    # drawing that are links to files outside: none of them may end up in report.html
    import base64

    path = write_sweep(tmp_path, GRID)
    out = tmp_path / "out"
    blocksim.sweep(path, workers=1, out=out)
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG\r\n\x1a\n" + b"SECRET-BYTES" * 10)
    meta = json.loads((out / "sweep.json").read_text())
    meta["figures"] = [{"file": str(secret), "metric": "a", "kind": "line", "paths": []},
                       {"file": "../secret.png", "metric": "b", "kind": "line", "paths": []},
                       {"file": "linked.png", "metric": "c", "kind": "line", "paths": []}]
    (out / "sweep.json").write_text(json.dumps(meta))
    (out / "linked.png").symlink_to(secret)
    (out / "diagram.svg").unlink()
    (out / "diagram.svg").symlink_to(secret)
    assert main(["report", str(out)]) == 0
    page = (out / "report.html").read_text()
    assert base64.b64encode(secret.read_bytes())[:40].decode() not in page
    assert "U0VDUkVULUJZVEVT" not in page  # base64 of SECRET-BYTES at any alignment
    assert "VDUkVULUJZVEVT" not in page and "TRUNSRVQtQllURV" not in page


@pytest.mark.parametrize("damage", [
    "[1, 2, 3]",                        # a list, not a sweep's mapping
    '{"fingerprint": 7, "rows": 3}',    # rows an integer
    '{"rows": ["ok", "ok"]}',           # rows holding strings
    "{not json",
])
def test_resume_on_a_damaged_sweep_json_is_exit_2(tmp_path, capsys, damage):
    # each of these was a traceback (exit 1)
    path = write_sweep(tmp_path, GRID)
    out = tmp_path / "out"
    out.mkdir()
    (out / "sweep.json").write_text(damage)
    assert main(["sweep", str(path), "--workers", "1", "--out", str(out), "--resume"]) == 2
    err = capsys.readouterr().err
    assert f"{out}: error: cannot resume: {out}/ " in err and "Traceback" not in err, err


def test_resume_reruns_the_rows_of_a_damaged_summary_csv(tmp_path):
    # rows that cannot be read back whole (a metric that is text, a cut-off line, a cell
    # beyond the csv module's limit) are run again; the others are kept
    path = write_sweep(tmp_path, "grid:\n  parameters.tau: [1, 2, 3]\n"
                                 "metrics: {final_x: final(x)}\n")
    out = tmp_path / "out"
    whole = blocksim.sweep(path, workers=1, out=out)
    lines = (out / "summary.csv").read_text().splitlines()
    lines[1] = lines[1].rsplit(",", 1)[0] + ",not a number"
    lines[3] = lines[3][:10]
    (out / "summary.csv").write_text("\n".join(lines) + "\n")
    rerun = []
    resumed = blocksim.sweep(path, workers=1, out=out, resume=True,
                             progress=lambda p: p.outcome and rerun.append(p.outcome.index))
    assert rerun == [0, 2]
    assert resumed.column("final_x") == whole.column("final_x")


def test_a_disk_filling_while_the_table_is_written_is_exit_3(tmp_path):
    # the sweep's files limited to 5 kB each (as a full disk would stop them): sweep.json
    # fits, the table of 200 rows does not; that was a traceback, now exit 3 naming the
    # directory, with the rows written so far kept
    import resource
    import signal

    path = write_sweep(tmp_path, "grid:\n  parameters.tau: linspace(1, 2, 20)\n"
                                 "  blocks.U.value: linspace(1, 2, 10)\n"
                                 "metrics: {final_x: final(x)}\n")
    out = tmp_path / "out"

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write fails (EFBIG) instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (5000, 5000))
    proc = subprocess.run([sys.executable, "-m", "blocksim", "sweep", str(path), "--workers",
                           "1", "--out", str(out), "--keep", "metrics", "--quiet"],
                          capture_output=True, text=True, timeout=300, preexec_fn=small_files)
    assert proc.returncode == 3, proc.stderr
    assert f"error: cannot write the sweep's files in '{out}'" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    rows = (out / "summary.csv").read_text().splitlines()
    assert rows[0].startswith("run,parameters.tau,blocks.U.value,status") and 10 < len(rows) < 200
    assert rows[-1].count(",") == rows[0].count(",")  # whole rows: what was cut is not there


def test_a_fault_once_the_runs_began_still_writes_the_finished_rows(tmp_path):
    # only Ctrl-C and a full disk wrote the rows before raising: any other fault (a lost
    # cluster, no memory for a batch) left the finished rows unwritten and sweep.json
    # 'running'. A progress callback that fails after three runs stands in for it
    path = write_sweep(tmp_path, "grid:\n  parameters.tau: linspace(1, 2, 10)\n"
                                 "metrics: {final_x: final(x)}\n")
    out, seen = tmp_path / "out", []

    def progress(p):
        if p.outcome is not None:
            seen.append(p.outcome.index)
            if len(seen) == 3:
                raise RuntimeError("the cluster went away")
    with pytest.raises(RuntimeError, match="went away") as e:
        blocksim.sweep(path, workers=1, out=out, keep="metrics", progress=progress)
    ok = e.value.table.counts()["ok"]  # the three, and those that had finished beside them
    assert 3 <= ok < 10
    rows = (out / "summary.csv").read_text().splitlines()
    assert len(rows) == 11 and sum(",ok," in r for r in rows) == ok
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["status"] == "interrupted" and meta["counts"]["ok"] == ok


def test_a_file_system_without_locks_runs_and_an_unopenable_lock_is_an_error(
        tmp_path, monkeypatch):
    import errno
    import fcntl

    path = write_sweep(tmp_path, "grid:\n  parameters.tau: [1, 2]\n")

    def no_locks(fd, how):
        raise OSError(errno.ENOLCK, "No locks available")
    with monkeypatch.context() as m:  # some network mounts: every sweep was 'in use'
        m.setattr(fcntl, "flock", no_locks)
        assert blocksim.sweep(path, workers=1, out=tmp_path / "a").counts()["ok"] == 2
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / ".sweep.lock").mkdir()  # a lock file that cannot be opened: traceback
    with pytest.raises(blocksim.DiagramError, match="cannot lock the sweep directory"):
        blocksim.sweep(path, workers=1, out=tmp_path / "b")


def test_a_resume_killed_outright_keeps_the_rows_it_resumed(tmp_path):
    # --resume rewrites summary.csv in run order: its first row to run again held back every
    # resumed row after it, so a resume killed outright (kill -9; SystemExit stands in here,
    # which nothing catches) left summary.csv with the header alone and the next resume ran
    # everything again. The resumed rows are kept aside until summary.csv holds them again
    path = write_sweep(tmp_path, "grid:\n  parameters.tau: linspace(1, 2, 6)\n"
                                 "metrics: {final_x: final(x)}\n")
    out = tmp_path / "out"
    whole = blocksim.sweep(path, workers=1, out=out, keep="metrics")
    lines = (out / "summary.csv").read_text().splitlines()
    lines[1] = lines[1].replace(",ok,", ",failed,")  # run 0 to run again
    (out / "summary.csv").write_text("\n".join(lines) + "\n")

    def killed(p):  # as the runs start, summary.csv begun
        raise SystemExit(9)
    with pytest.raises(SystemExit):
        blocksim.sweep(path, workers=1, out=out, keep="metrics", resume=True, progress=killed)
    assert ",ok," not in (out / "summary.csv").read_text()  # run 0 comes first: no row yet
    rerun = []
    resumed = blocksim.sweep(path, workers=1, out=out, keep="metrics", resume=True,
                             progress=lambda p: p.outcome and rerun.append(p.outcome.index))
    assert rerun == [0]
    assert resumed.column("final_x") == whole.column("final_x")
    assert not (out / ".summary.resumed.csv").exists()
