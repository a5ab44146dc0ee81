"""Invalid sweeps: exit 2, every problem as FILE:LINE at once, before anything runs."""
import pytest

import blocksim
from blocksim.cli import main

from sweep_lag import lag, write_sweep

BAD = """\
grid:
  blocks.Nope.K: [1, 2]
  blocks.G.Kx: [1, 2]
samples: 3
random:
  parameters.tau: unifrom(0.5, 2)
  blocks.U.value: uniform(2, 1)
seed: 1
metrics:
  bad: max(abs(q))
  vector: abs(x)
  fine: final(x)
"""


def test_every_problem_is_reported_at_once_before_anything_runs(tmp_path, capsys):
    path = write_sweep(tmp_path, BAD)
    out = tmp_path / "out"
    assert main(["sweep", str(path), "--workers", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    f = str(path)
    expected = [
        (f"{f}:4: error:", "unknown block 'Nope'"),  # an override path the diagram lacks
        (f"{f}:5: error:", "unknown parameter 'Kx' (type gain) (did you mean 'K'?)"),
        (f"{f}:8: error:", "unknown distribution 'unifrom' (did you mean 'uniform'?)"),
        (f"{f}:9: error:", "uniform(a, b) needs a <= b"),
        (f"{f}:12: error:", "metric 'bad': unknown name 'q'"),
        (f"{f}:13: error:", "metric 'vector' gives an array (of shape (3,) for 3 recorded "
                            "times), not one number"),
    ]
    lines = [line for line in err.splitlines() if ": error:" in line]
    assert len(lines) == len(expected), err
    for where, what in expected:
        assert any(line.startswith(where) and what in line for line in lines), (where, err)
    assert "Traceback" not in err
    assert not out.exists()  # nothing ran, nothing was written


@pytest.mark.parametrize("body, line, message", [
    ("grid:\n  parameters.tua: [1, 2]\n", 4, "no parameter 'tua' (did you mean 'tau'?)"),
    ("grid:\n  simulation.stpo: [1, 2]\n", 4, "unknown simulation setting 'stpo'"),
    # 1/tau in gain G: the diagram's line, and the sweep value that fails there
    ("grid:\n  parameters.tau: [1, -1, 0]\n", 4, "division by zero in '1/tau'\n  hint: with "
                                                  "parameters.tau = 0 (SWEEP:4)"),
    ("grid:\n  parameters.tau: 3\n", 4, "expected a list of values"),
    ("zip:\n  parameters.tau: [1, 2]\n  blocks.U.value: [1]\n", 3, "equal lengths"),
    ("samples: 2\nrandom:\n  parameters.tau: normal(1, -1)\nseed: 1\n", 5, "std >= 0"),
    ("samples: 2\nrandom:\n  parameters.tau: choice(1, 2)\nseed: 1\n", 5, "1 positional argument"),
    ("samples: 2\nrandom:\n  parameters.tau: integers(1, 1)\nseed: 1\n", 5, "needs a < b"),
    ("samples: 2\nrandom:\n  parameters.tau: uniform(1, 2)\n", 4, "needs 'seed:'"),
    ("grid:\n  parameters.tau: [1]\nmetrics:\n  m: max(x\n", 6, "syntax error"),
    ("grid:\n  parameters.tau: [1]\nmetrics:\n  m: __import__('os')\n", 6, "not allowed"),
    ("grid:\n  parameters.tau: [1]\nset:\n  parameters.tau: 2\n", 4, "both in 'set'"),
    ("grid:\n  parameters.tau: [1]\nsweeps: 3\n", 5, "unknown key 'sweeps'"),
])
def test_invalid_sweep_is_exit_2_with_its_line(tmp_path, capsys, body, line, message):
    path = write_sweep(tmp_path, body)
    assert main(["sweep", str(path), "--workers", "1", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{path}:{line}: error:" in err or "lag.yaml:7: error" in err, err
    assert message.replace("SWEEP", str(path)) in err, err
    assert not (tmp_path / "out").exists()


def test_python_api_raises_the_same_errors(tmp_path):
    path = write_sweep(tmp_path, "grid:\n  blocks.Nope.K: [1, 2]\n")
    with pytest.raises(blocksim.DiagramError, match=r"sweep.yaml:4: error: unknown block 'Nope'"):
        blocksim.sweep(path, workers=1)
    with pytest.raises(blocksim.DiagramError, match="either a number of local workers"):
        blocksim.sweep(path, workers=2, scheduler="tcp://127.0.0.1:1")
    with pytest.raises(blocksim.DiagramError, match="keep must be one of"):
        blocksim.sweep(path, keep="some")


def test_python_arguments_of_the_wrong_kind(tmp_path):
    """issue 35 item 16: overrides="path=value" was read letter by letter ("overrides
    expects 'path=value' strings ..., got 's'", once per letter); a grid or metrics not
    a dict was an AttributeError. One override alone is that override, as for blocksim.run."""
    write_sweep(tmp_path, "")
    diagram = tmp_path / "lag.yaml"
    table = blocksim.sweep(diagram, grid={"parameters.tau": [1, 2]}, metrics={"last": "x[-1]"},
                           overrides="simulation.stop=0.5", workers=1)
    assert [r["status"] for r in table.rows] == ["ok", "ok"]
    listed = blocksim.sweep(diagram, grid={"parameters.tau": [1, 2]}, metrics={"last": "x[-1]"},
                            overrides=["simulation.stop=0.5"], workers=1)
    assert [r["last"] for r in table.rows] == [r["last"] for r in listed.rows] == \
        pytest.approx([lag(1, tau, 0.5) for tau in (1, 2)], rel=1e-8)  # the lag's closed form
    with pytest.raises(TypeError, match=r"grid= takes a dict \{path: values\}, got str"):
        blocksim.sweep(diagram, grid="parameters.tau=1,2", metrics={"last": "x[-1]"})
    with pytest.raises(TypeError, match=r"metrics= takes a dict \{name: expression\}"):
        blocksim.sweep(diagram, grid={"parameters.tau": [1, 2]}, metrics="x[-1]")
    with pytest.raises(TypeError, match="overrides= takes a dict"):
        blocksim.sweep(diagram, grid={"parameters.tau": [1, 2]}, overrides=5)


def test_command_line_mistakes(tmp_path, capsys):
    path = write_sweep(tmp_path, "grid:\n  parameters.tau: [1]\n")
    assert main(["sweep", str(tmp_path / "none.yaml")]) == 2
    assert main(["sweep", str(path), "--grid", "parameters.tau=1,2"]) == 2
    assert main(["sweep", str(tmp_path / "lag.yaml"), "--workers", "1"]) == 2
    assert main(["sweep", str(tmp_path / "lag.yaml"), "--grid", "parameters.tau"]) == 2
    err = capsys.readouterr().err
    assert "no such sweep or diagram file" in err
    assert "--grid/--metric are for a diagram file" in err
    assert "needs a grid (--grid KEY=V1,V2,...)" in err
    assert "--grid expects KEY=V1,V2" in err


@pytest.mark.parametrize("version", ["true", "'1'", "2"])
def test_the_format_version_is_the_number_1(tmp_path, capsys, version):
    # `blocksim-sweep: true` was read as version 1 (True == 1 in Python), as the diagram's
    # `blocksim:` is not
    path = write_sweep(tmp_path, "grid:\n  parameters.tau: [1]\n")
    path.write_text(path.read_text().replace("blocksim-sweep: 1", f"blocksim-sweep: {version}"))
    assert main(["sweep", str(path), "--workers", "1", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{path}:1: error: unsupported sweep format version" in err, err
