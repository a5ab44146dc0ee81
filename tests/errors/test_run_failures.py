"""Failures at run time and around the run directory: exit 3 naming block, port and time with
the rows so far written (a function block's expression failing on the values it meets); the
run directory checked before simulating (exit 2); a disk that fills while the results are
written (exit 3, earlier results intact); meta.json that strict JSON parsers read.
"""
import json
import os
import resource
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from blocksim.engine import results
from blocksim.cli import main
from blocksim.errors import DiagramError


def write(tmp_path, text, name="d.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def cli(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# A function block whose expression is fine at t = 0 (so the diagram compiles and its output
# shape is found) and fails once t > 0: sign(t) jumps from 0 to 1.
FUNCTION = """\
blocksim: 1
blocks:
  Clk: {{type: clock}}
  C: {{type: constant, value: [1, 2, 3]}}
  F: {{type: function, inputs: [u, t], expr: "{expr}"}}
  I: {{type: integrator}}
wires: [C -> F.u, Clk -> F.t, F -> I]
simulation: {{stop: 1, solver: rk4, step: 0.01}}
record: {{x: I.y}}
"""

RUNTIME_FAILURES = {
    "index_not_whole": ("u[0.5 * sign(t)]", "must be an integer"),
    "index_out_of_range": ("u[2 + 2 * sign(t)]", "out of bounds"),
    "reshape_not_whole": ("sum(reshape(u, 3 + 0.5 * sign(t)))", "must be an integer"),
    "array_over_limit": ("sum(zeros(1 + 1e8 * sign(t)))", "more than the limit"),
}


@pytest.mark.parametrize("case", sorted(RUNTIME_FAILURES))
def test_function_failing_at_run_time_is_exit_3_with_partial_results(case, tmp_path, capsys):
    expr, needle = RUNTIME_FAILURES[case]
    path = write(tmp_path, FUNCTION.format(expr=expr))
    out = tmp_path / "out"
    code, _, err = cli(["run", str(path), "--out", str(out), "--quiet"], capsys)
    assert code == 3, err
    assert "Traceback" not in err
    assert "block 'F'" in err and "port 'y'" in err and needle in err, err
    assert "at t = 0.005" in err, err  # the first evaluation with t > 0: rk4 stage 2 at h/2
    meta = json.loads((out / "meta.json").read_text())
    assert meta["complete"] is False and meta["status"] == "failed"
    assert len(np.load(out / "results.npz")["t"]) >= 1  # t = 0 was recorded


# -- the run directory ------------------------------------------------------------------------
LONG = """\
blocksim: 1
blocks:
  One: {type: constant, value: 1}
  I: {type: integrator}
wires: [One -> I]
simulation: {stop: 1.0e9, solver: euler, step: 1.0e-3, max_steps: 1.0e13,  # hours of work
             output_interval: 1.0e6}  # 1001 rows: a recording that fits in memory
record: {x: I.y}
"""


@pytest.mark.parametrize("where", ["existing_file", "under_a_file", "dev_null"])
def test_out_that_cannot_be_written_is_refused_before_simulating(where, tmp_path, capsys):
    path = write(tmp_path, LONG)  # were it simulated first, this test would never end
    (tmp_path / "afile").write_text("x")
    out = {"existing_file": tmp_path / "afile", "under_a_file": tmp_path / "afile" / "run",
           "dev_null": "/dev/null"}[where]
    code, _, err = cli(["run", str(path), "--out", str(out), "--quiet"], capsys)
    assert code == 2, err
    assert err.startswith("--out: error: cannot write the results to"), err
    assert (tmp_path / "afile").read_text() == "x"


def test_out_without_write_permission_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    if os.geteuid() != 0:
        with pytest.raises(DiagramError, match="Permission denied"):
            results.check_out_dir(locked / "run")
        return
    # root ignores permissions: check as an unprivileged user in a forked child
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 1
        try:
            os.setgid(65534)
            os.setuid(65534)
            results.check_out_dir(locked / "run")
        except DiagramError as e:
            code = 0 if "Permission denied" in str(e) else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def _file_size_limit(nbytes):
    """preexec_fn: writes beyond nbytes fail with EFBIG, as on a full disk (SIGXFSZ ignored)."""
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return limit


def test_disk_full_while_writing_is_exit_3_and_keeps_earlier_results(tmp_path):
    path = write(tmp_path, """\
        blocksim: 1
        blocks:
          One: {type: constant, value: 1}
          I: {type: integrator}
        wires: [One -> I]
        simulation: {stop: 1}
        record: {x: I.y}
        """)
    out = tmp_path / "out"
    run = [sys.executable, "-m", "blocksim", "run", str(path), "--out", str(out), "--quiet"]
    assert subprocess.run(run, capture_output=True).returncode == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(before) == {"results.npz", "meta.json", "diagram.svg", "report.html"}
    # the second run records 10,001 rows (80 kB), more than the 4 kB the process may write
    proc = subprocess.run(run + ["--set", "simulation.output_interval=1e-4"],
                          capture_output=True, text=True, preexec_fn=_file_size_limit(4096))
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "cannot write the results" in proc.stderr and "unchanged" in proc.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no temporaries left


def test_meta_json_is_strict_json(tmp_path, capsys):
    path = write(tmp_path, """\
        blocksim: 1
        parameters: {big: .inf}
        blocks:
          A: {type: constant, value: 1}
          S: {type: saturation, lower: -.inf, upper: big}
          T: {type: terminator}
        wires: [A -> S, S -> T]
        simulation: {stop: 1}
        """)
    out = tmp_path / "out"
    assert cli(["run", str(path), "--out", str(out), "--quiet"], capsys)[0] == 0

    def refuse(name):
        raise ValueError(f"{name} is not JSON")
    meta = json.loads((out / "meta.json").read_text(), parse_constant=refuse)
    assert meta["configuration"]["parameters"]["big"] == "inf"
    assert meta["configuration"]["blocks"]["S"]["lower"] == "-inf"
    assert float(meta["configuration"]["parameters"]["big"]) == float("inf")


def test_a_directory_given_as_the_diagram_says_it_is_not_a_file(tmp_path, capsys):
    """A path that exists but is not a file (a directory) is named as such, not 'no such'."""
    from blocksim.cli import main
    assert main(["check", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "not a file" in err and "Traceback" not in err
    assert main(["check", str(tmp_path / "missing.yaml")]) == 2
    assert "no such file" in capsys.readouterr().err


BLOW_UP = """\
blocksim: 1
blocks:
  X: {{type: integrator, x0: 1}}
  F: {{type: function, expr: "{rhs}"}}
wires: [X -> F, F -> X]
simulation: {{stop: 2}}
record: {{x: X.y}}
"""


@pytest.mark.parametrize("rhs, message", [
    # x' = x^2, x(0) = 1: x = 1/(1 - t) escapes at t = 1 with every value finite until then
    ("u**2", "below the round-off limit; the state changing fastest there is this block's"),
    # f(0) = 1e300: the starting step underflowed to 0 (a ZeroDivisionError from the solver);
    # tried at the round-off limit (10 spacings of floats at t = 0, as scipy), x^3 overflows
    ("1e300 * u**3", "below the round-off limit; the derivative is not finite; the state "
                     "changing fastest there is this"),
])
def test_solver_failure_names_the_state_that_runs_away(rhs, message, tmp_path, capsys):
    path = write(tmp_path, BLOW_UP.format(rhs=rhs))
    code, _, err = cli(["run", str(path), "--no-plots", "--out", str(tmp_path / "out")], capsys)
    assert code == 3, err
    assert err.startswith("simulation error: block 'X': rk45: step size") and message in err, err
    assert "ZeroDivisionError" not in err and "Traceback" not in err
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    assert meta["complete"] is False
    if rhs == "u**2":  # the rows up to the escape: x = 1/(1 - t)
        with np.load(tmp_path / "out" / "results.npz") as r:
            t, x = r["t"], r["x"]
        assert 0.999 < t[-1] < 1.0
        np.testing.assert_allclose(x[t < 0.9], 1 / (1 - t[t < 0.9]), rtol=1e-2)
