"""The C compiler as machines have it, through stand-in compilers (shell scripts): one that
never returns is stopped at the compile's time limit, its whole process group killed and no
temporary left (it blocked forever); one that fails printing nothing is said to have (the
reason was empty); CC with arguments is a command, as make and setuptools take it (it was
'no C compiler found'); and the temporaries of a compile killed outright (kill -9) are
removed by the next compile, while a live process's are kept (they stayed forever). No
test here depends on how long anything takes: the hanging compiler never finishes, so
the (small) limit the test sets is always passed."""
import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.accel import build, mode
from blocksim.accel.codegen import generate
from blocksim.accel.mode import simulate_model
from blocksim.cli import main
from blocksim.engine.simulator import simulate

MSD = Path(__file__).resolve().parents[2] / "diagrams" / "msd.yaml"


def _stand_in(folder, body):
    """An executable shell script `cc` in `folder` running `body`."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "cc"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return script


def _gone(pid):
    """Whether process `pid` has ended (a zombie no one reaps has ended too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    return stat.is_file() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"


def _wait_until(condition, what):
    """Wait for `condition()` (a bound against a hang, not a measure of speed)."""
    deadline = time.monotonic() + 120
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def test_a_compiler_that_never_returns_is_stopped_at_the_time_limit(fresh_cache, tmp_path,
                                                                    monkeypatch, capsys):
    pids = tmp_path / "pids"
    cc = _stand_in(tmp_path / "bin", f'sleep 1000000 &\necho "$$ $!" > "{pids}"\nwait\n')
    monkeypatch.setenv("CC", str(cc))
    monkeypatch.setenv("BLOCKSIM_COMPILE_TIMEOUT", "0.2")
    assert main(["run", str(MSD), "--mode", "accelerated", "--no-plots",
                 "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert f"msd.yaml: error: accelerated mode: {cc} did not finish within 0.2 s, the time a " \
           "compile may take (BLOCKSIM_COMPILE_TIMEOUT sets it)" in err
    for pid in map(int, pids.read_text().split()):  # the script and its child
        _wait_until(lambda: _gone(pid), f"compiler process {pid} still runs")
    assert list(fresh_cache.iterdir()) == []  # no temporary left
    # auto, a run long on paper: it compiles at once, and goes on in normal mode (the
    # failure forgotten, so that this process runs the compiler again)
    pids.unlink()
    monkeypatch.setattr(build, "_FAILED", {})
    monkeypatch.setattr(mode, "normal_seconds", lambda model: 60.0)
    t, data, info = simulate_model(blocksim.load(MSD))
    assert info["complete"] and info["mode"]["mode"] == "normal"
    assert info["mode"]["note"].startswith(f"note: normal mode: {cc} did not finish within")
    for pid in map(int, pids.read_text().split()):
        _wait_until(lambda: _gone(pid), f"compiler process {pid} still runs")


@pytest.mark.parametrize("value", ["soon", "0", "-1", "inf"])
def test_a_time_limit_that_is_not_a_positive_number_is_refused(fresh_cache, monkeypatch,
                                                               capsys, value):
    monkeypatch.setenv("BLOCKSIM_COMPILE_TIMEOUT", value)
    assert main(["run", str(MSD), "--mode", "accelerated", "--no-plots", "--quiet"]) == 2
    assert f"BLOCKSIM_COMPILE_TIMEOUT={value}: expected a positive number of seconds" in \
        capsys.readouterr().err


def test_a_compiler_that_fails_printing_nothing_is_said_to(fresh_cache, monkeypatch, capsys,
                                                          tmp_path):
    """CC=/bin/false (exit status 1, nothing printed): the reason was empty."""
    false = shutil.which("false")
    monkeypatch.setenv("CC", false)
    assert main(["run", str(MSD), "--mode", "accelerated", "--no-plots",
                 "--out", str(tmp_path / "a")]) == 2
    assert f"accelerated mode: {false} failed on the generated code: it exited with status 1 " \
           "and printed nothing" in capsys.readouterr().err
    assert list(fresh_cache.iterdir()) == []


def test_cc_with_arguments_is_a_command(fresh_cache, monkeypatch, tmp_path):
    """CC='"<folder with a space>/cc" --stand-in-flag' (quoted as a shell quotes): the stand-in
    gets the flag first, then runs the machine's cc on the rest; the run is compiled with it
    and gives normal mode's values. Its arguments are part of the compiler's identity: the
    code is cached apart from plain cc's."""
    real = shutil.which("cc") or shutil.which("gcc")
    args = tmp_path / "args"
    cc = _stand_in(tmp_path / "a folder", f'echo "$1" > "{args}"\n'
                                          f'[ "$1" = --stand-in-flag ] || exit 7\n'
                                          f'shift\nexec "{real}" "$@"\n')
    source = generate(blocksim.load(MSD)).source
    plain = build.key_of(source)
    monkeypatch.setenv("CC", f"{shlex.quote(str(cc))} --stand-in-flag")
    assert build.key_of(source) != plain
    t, data, info = simulate_model(blocksim.load(MSD, ["simulation.mode=accelerated"]))
    assert info["mode"]["mode"] == "accelerated" and not info["mode"]["cache_hit"]
    assert args.read_text().strip() == "--stand-in-flag"
    t0, data0, _ = simulate(blocksim.load(MSD))
    np.testing.assert_allclose(t, t0, rtol=1e-12)
    np.testing.assert_allclose(data["x"], data0["x"], rtol=1e-12, atol=1e-12)


KILLED = """
import blocksim
from blocksim.accel.mode import simulate_model
simulate_model(blocksim.load({msd!r}, ["simulation.mode=accelerated"]))
"""


def test_temporaries_of_a_compile_killed_outright_are_removed_by_the_next(fresh_cache,
                                                                         tmp_path,
                                                                         monkeypatch):
    """A process compiling (its stand-in compiler waiting) is killed with SIGKILL: its
    temporary source stays in the cache. The next compile removes it, and keeps the
    temporaries of a live process (this one) and of another host's processes, which may be
    compiling into a shared cache."""
    started = tmp_path / "started"
    cc = _stand_in(tmp_path / "bin", f'echo "$$" > "{started}"\nexec sleep 1000000\n')
    env = {**os.environ, "CC": str(cc), "PYTHONPATH": str(MSD.parents[1])}
    proc = subprocess.Popen([sys.executable, "-c", KILLED.format(msd=str(MSD))], env=env)
    try:
        _wait_until(lambda: bool(started.is_file() and started.read_text().strip())
                    or proc.poll() is not None, "the compile did not start")
        assert proc.poll() is None, "the process ended before its compiler started"
    finally:
        proc.kill()
        proc.wait()
        if started.is_file():  # the stand-in, left running in its own process group
            with contextlib.suppress(ProcessLookupError):
                os.killpg(int(started.read_text()), signal.SIGKILL)
    left = [p.name for p in fresh_cache.iterdir()]
    host = build._owner().split("-")[0]
    assert len(left) == 1 and left[0].endswith(".c") and f".{host}-{proc.pid}." in left[0]
    live = fresh_cache / f".{'0' * 32}.{build._owner()}.abcdefgh.c"
    elsewhere = fresh_cache / f".{'0' * 32}.{'0' * 8 if host != '0' * 8 else '1' * 8}-" \
                              f"{proc.pid}.abcdefgh.c"
    for path in (live, elsewhere):
        path.write_text("")
    built = build.build(generate(blocksim.load(MSD)).source)  # plain cc
    assert sorted(p.name for p in fresh_cache.iterdir()) == \
        sorted([live.name, elsewhere.name, f"{built.key}.so"])


def test_a_sweep_tries_a_failing_compile_once(fresh_cache, tmp_path, monkeypatch):
    """A sweep in auto mode whose compiler never returns runs in normal mode, and waits for
    that compiler once: each of its runs compiled again, and waited the whole time limit
    (300 s by default) for it, before going on in normal mode. The stand-in counts its
    calls; the same source and compiler fail the same way, so the failure is kept for the
    process (a new compiler is a new cache key, and is tried)."""
    calls = tmp_path / "calls"
    cc = _stand_in(tmp_path / "bin", f'echo "$$" >> "{calls}"\nexec sleep 1000000\n')
    monkeypatch.setenv("CC", str(cc))
    monkeypatch.setenv("BLOCKSIM_COMPILE_TIMEOUT", "0.2")
    table = blocksim.sweep(MSD, grid={"parameters.k": [3, 4, 5]}, metrics={"top": "max(x)"},
                           workers=1, overrides={"simulation.stop": 2})
    assert [row["status"] for row in table.rows] == ["ok"] * 3
    assert len(calls.read_text().split()) == 1
    with pytest.raises(build.CompileFailed, match="did not finish within 0.2 s"):
        build.build(generate(blocksim.load(MSD)).source)
    assert len(calls.read_text().split()) == 1
    false = _stand_in(tmp_path / "other", f'echo "$$" >> "{calls}"\nexit 1\n')
    monkeypatch.setenv("CC", str(false))
    with pytest.raises(build.CompileFailed, match="exited with status 1"):
        build.build(generate(blocksim.load(MSD)).source)
    assert len(calls.read_text().split()) == 2
