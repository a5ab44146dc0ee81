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

from sweep_lag import lag, write_sweep

# a sweep that cannot finish: tau = 1e-4 makes the lag stiff for rk45 in normal mode, some
# 3e13 steps to t = 1e9 (max_steps raised so that nothing stops it)
ENDLESS = ("set: {simulation.stop: 1e9, simulation.max_steps: 1e15, simulation.mode: normal,"
           " simulation.output_interval: 1e8}\ngrid:\n  parameters.tau: [1e-4, 1]\n"
           "metrics: {final_x: final(x)}\n")


def test_a_second_sweep_into_a_busy_directory_is_refused_naming_the_first(tmp_path, capsys):
    # two sweeps into one --out both exited 0 and mixed their run folders (8 of 30 rows
    # pointed at the other sweep's results): the directory is locked while a sweep runs.
    # The first sweep cannot finish (the test raced a slow one), the second comes once the
    # first has begun its table
    path = write_sweep(tmp_path, ENDLESS)
    other = write_sweep(tmp_path, "grid:\n  parameters.tau: [1, 2]\n", name="other.yaml")
    out = tmp_path / "out"
    first = subprocess.Popen([sys.executable, "-m", "blocksim", "sweep", str(path), "--workers",
                              "1", "--out", str(out), "--quiet"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not (out / "summary.csv").exists() and first.poll() is None:
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
    assert err.startswith(f"{out / 'sweep.json'}") and "Traceback" not in err, err
    assert "error: cannot resume: sweep.json " in err


def _line_of(path, text):
    """The 1-based line of `path` that holds `text` (the expected location of an error)."""
    return next(k + 1 for k, line in enumerate(path.read_text().splitlines()) if text in line)


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished sweep of three runs: (sweep file, its directory's files as text)."""
    folder = tmp_path_factory.mktemp("finished")
    path = write_sweep(folder, "grid:\n  parameters.tau: [1, 2, 3]\n"
                               "metrics: {final_x: final(x)}\n")
    out = folder / "out"
    blocksim.sweep(path, workers=1, out=out, keep="metrics")
    return path, {name: (out / name).read_text() for name in ("sweep.json", "summary.csv")}


def _edited(tmp_path, finished, name, edit):
    """The finished sweep's files in tmp_path/out, file `name` edited by `edit(text)`."""
    out = tmp_path / "out"
    out.mkdir()
    for file, text in finished[1].items():
        (out / file).write_text(edit(text) if file == name else text)
    return out


def _with_key(key, value):
    def edit(text):
        data = json.loads(text)
        data[key] = value
        return json.dumps(data, indent=2)
    return edit


@pytest.mark.parametrize("name, edit, at, says", [
    ("sweep.json", _with_key("rows", 3), '"rows"', "has 'rows', which a sweep does not write"),
    ("sweep.json", _with_key("rows", ["ok", "x"]), '"rows"', "has 'rows'"),
    ("sweep.json", _with_key("counts", 3), '"counts"', "has 'counts' as a JSON number, where a "
                                                        "sweep writes an object"),
    ("sweep.json", _with_key("counts", {"runs": 3, "ok": 2, "failed": 0, "interrupted": 0}),
     '"counts"', "not runs, ok, failed and interrupted that add up"),
    ("sweep.json", _with_key("columns", "run,status"), '"columns"', "'columns' as a JSON string"),
    ("sweep.json", _with_key("status", "done"), '"status"', 'has status "done", not one of'),
    ("sweep.json", lambda text: text.replace('"metrics": [\n    "final_x"', '"metrics": [\n    "x"'),
     '"metrics": [', 'has metrics ["x"], where this sweep has ["final_x"]'),
    # summary.csv: a metric that is text, a varied value that is not the run's, a row twice,
    # a row gone from a finished sweep, another header
    ("summary.csv", lambda text: text.replace(",0.8646", ",x0.8646"), "x0.8646",
     "has final_x 'x0.8646"),
    ("summary.csv", lambda text: text.replace("\n1,2,", "\n1,7,"), "1,7,",
     "gives run 1 parameters.tau = '7', where this sweep has '2'"),
    ("summary.csv", lambda text: text.replace("\n2,3,", "\n1,2,ok,,1,2,3\n2,3,"), "1,2,ok,,1,2,3",
     "has run '1' where run 2 belongs"),
    ("summary.csv", lambda text: "\n".join(text.splitlines()[:3]) + "\n", None,
     "holds 2 rows (2 ok, 0 failed, 0 interrupted), where sweep.json counts 3 runs (3 ok"),
    ("summary.csv", lambda text: text.replace("final_x", "final_y", 1), "final_y",
     "has the header"),
    ("summary.csv", lambda text: text.replace(",ok,", ",okay,", 1), "okay",
     "has status 'okay', not one of"),
    ("summary.csv", lambda text: text.replace("\n1,2,", '\n1,"2,'), '1,"2,',
     "cannot be read as CSV"),
])
def test_resume_refuses_a_sweep_directory_its_sweep_did_not_write(tmp_path, capsys, finished,
                                                                  name, edit, at, says):
    # each of these ran 'nothing to run' and exited 0 (sweep.json), or ran the row again as
    # if it had not been written (summary.csv): resumed from, a table that is not the sweep's
    # passes for its results. Refused: the file, the line (the one holding `at`, found in
    # the edited file), what is wrong
    out = _edited(tmp_path, finished, name, edit)
    before = (out / "summary.csv").read_text()
    assert main(["sweep", str(finished[0]), "--workers", "1", "--out", str(out),
                 "--resume"]) == 2
    err = capsys.readouterr().err
    where = f"{out / name}" + ("" if at is None else f":{_line_of(out / name, at)}")
    assert f"{where}: error: cannot resume: {name} " in err and says in err, err
    assert "Traceback" not in err and (out / "summary.csv").read_text() == before


def test_resume_reruns_the_row_a_killed_sweep_was_writing(tmp_path, finished):
    # a sweep killed outright (its sweep.json still 'running') while writing its last row
    # leaves that row without its line break: the run is run again, the others are kept
    def running(text):
        return _with_key("status", "running")(text)
    out = _edited(tmp_path, finished, "sweep.json", running)
    (out / "summary.csv").write_text(finished[1]["summary.csv"][:-12])
    rerun = []
    resumed = blocksim.sweep(finished[0], workers=1, out=out, resume=True, keep="metrics",
                             progress=lambda p: p.outcome and rerun.append(p.outcome.index))
    assert rerun == [2]
    assert (out / "summary.csv").read_text() .splitlines()[1:3] == \
        finished[1]["summary.csv"].splitlines()[1:3]
    assert resumed.column("final_x")[2] == pytest.approx(lag(1, 3, 2), rel=1e-9)


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
    lines[1] = lines[1].split(",ok,")[0] + ",failed,,,,"  # run 0 to run again
    (out / "summary.csv").write_text("\n".join(lines) + "\n")
    counts = {"runs": 6, "ok": 5, "failed": 1, "interrupted": 0}
    (out / "sweep.json").write_text(_with_key("counts", counts)((out / "sweep.json").read_text()))

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
