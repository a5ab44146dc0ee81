"""from_file / to_file and results.csv: round trips through the files, the header naming of
vector and matrix elements, paths relative to the diagram, and load-time file errors."""
import csv
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.engine import csvio
from blocksim.errors import DiagramError, DiagramErrors

ROOT = Path(__file__).resolve().parents[2]


def write_measurement(path, t, columns):
    """A CSV written independently of blocksim.engine.csvio (the csv module, repr of floats)."""
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["t", *columns])
        for k, tk in enumerate(t):
            w.writerow([repr(float(tk))] + [repr(float(v[k])) for v in columns.values()])


ROUND_TRIP = """
blocksim: 1
blocks:
  F: {type: from_file, file: data/meas.csv, method: METHOD}
  W: {type: to_file, file: copy.csv}
wires: [F -> W]
simulation: {stop: 2, output_interval: 0.05}
record: {y: F.y}
"""


@pytest.mark.parametrize("method", ["linear", "previous"])
def test_csv_round_trip_from_file_to_file(tmp_path, method):
    t = np.linspace(0, 2, 11) ** 1.5 / 2 ** 0.5  # uneven time points on [0, 2]
    a, b = np.sin(3 * t), np.exp(-t)
    (tmp_path / "data").mkdir()
    write_measurement(tmp_path / "data" / "meas.csv", t, {"a": a, "b": b})
    diagram = tmp_path / "round.yaml"
    diagram.write_text(ROUND_TRIP.replace("METHOD", method))
    r = blocksim.run(diagram, out=tmp_path / "run")
    # expected: numpy's interpolation of the same samples (linear), or the held sample
    if method == "linear":
        expected = np.column_stack([np.interp(r.t, t, a), np.interp(r.t, t, b)])
    else:
        k = np.searchsorted(t, r.t, side="right") - 1
        expected = np.column_stack([a[k], b[k]])
    np.testing.assert_allclose(r["y"], expected, rtol=0, atol=1e-14)
    # to_file wrote the recorded rows, read back with the csv module
    with open(tmp_path / "run" / "copy.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["t", "u1[0]", "u1[1]"]
    table = np.array(rows[1:], dtype=float)
    np.testing.assert_array_equal(table[:, 0], r.t)  # full precision: exactly equal
    np.testing.assert_array_equal(table[:, 1:], r["y"])


def test_npz_input_output_and_columns(tmp_path):
    t = np.linspace(0, 1, 6)
    q = np.column_stack([t, 2 * t, 3 * t])
    np.savez(tmp_path / "in.npz", t=t, q=q, s=t ** 2, other=np.zeros(3))
    (tmp_path / "d.yaml").write_text("""
blocksim: 1
blocks:
  Q: {type: from_file, file: in.npz, columns: q}
  S: {type: from_file, file: in.npz, columns: [s, q]}
  W: {type: to_file, file: out.npz, inputs: 2}
wires: [Q -> W.u1, S -> W.u2]
simulation: {stop: 1, output_interval: 0.1}
record: {q: Q.y, s: S.y}
""")
    r = blocksim.run(tmp_path / "d.yaml", out=tmp_path / "run")
    assert r["q"].shape == (11, 3) and r["s"].shape == (11, 4)  # one signal keeps its shape
    np.testing.assert_allclose(r["q"], np.outer(r.t, [1, 2, 3]), atol=1e-14)
    np.testing.assert_allclose(r["s"][:, 0], np.interp(r.t, t, t ** 2), atol=1e-14)
    with np.load(tmp_path / "run" / "out.npz") as out:
        np.testing.assert_array_equal(out["t"], r.t)
        np.testing.assert_array_equal(out["u1"], r["q"])
        np.testing.assert_array_equal(out["u2"], r["s"])


def test_results_csv_names_every_element(tmp_path):
    (tmp_path / "m.yaml").write_text("""
blocksim: 1
blocks:
  M: {type: constant, value: [[1, 2, 3], [4, 5, 6]]}
  C: {type: clock}
  V: {type: sine, amplitude: [1, 2]}
simulation: {stop: 1, output_interval: 0.25}
record: {M: M.y, time: C.t, q: V.y}
""")
    out = tmp_path / "run"
    cli = subprocess.run([sys.executable, "-m", "blocksim", "run", str(tmp_path / "m.yaml"),
                          "--csv", "--quiet", "--out", str(out)], capture_output=True,
                         text=True, cwd=ROOT)
    assert cli.returncode == 0, cli.stderr
    header, table, _ = csvio.read_csv(out / "results.csv")
    assert header == ["t", "M[0,0]", "M[0,1]", "M[0,2]", "M[1,0]", "M[1,1]", "M[1,2]",
                      "time", "q[0]", "q[1]"]
    with np.load(out / "results.npz") as npz:
        np.testing.assert_array_equal(table[:, 0], npz["t"])
        np.testing.assert_array_equal(table[:, 1:7], npz["M"].reshape(-1, 6))
        np.testing.assert_array_equal(table[:, 8:], npz["q"])
    assert table[0, 6] == 6.0  # M[1,2] = row 1, column 2
    # and a results.csv is a valid from_file input: q[0], q[1] form the vector q again, and
    # one element can be played alone
    groups = csvio.group_columns(header)
    assert groups["q"] == ([8, 9], (2,)) and groups["M"][1] == (2, 3)
    (tmp_path / "replay.yaml").write_text("""
blocksim: 1
blocks:
  Q: {type: from_file, file: run/results.csv, columns: q}
  E: {type: from_file, file: run/results.csv, columns: ["M[1,2]", "q[1]"]}
simulation: {stop: 1, output_interval: 0.25}
record: {q: Q.y, e: E.y}
""")
    r = blocksim.run(tmp_path / "replay.yaml")
    np.testing.assert_array_equal(r["q"], table[:, 8:])
    np.testing.assert_array_equal(r["e"], table[:, [6, 9]])


def test_version():
    cli = subprocess.run([sys.executable, "-m", "blocksim", "--version"], capture_output=True,
                         text=True, cwd=ROOT)
    assert cli.returncode == 0 and cli.stdout.strip() == f"blocksim {blocksim.__version__}"


def test_from_file_path_is_relative_to_the_including_file(tmp_path):
    sub = tmp_path / "parts"
    sub.mkdir()
    write_measurement(sub / "drive.csv", [0, 1], {"u": [0, 5]})
    (sub / "source.yaml").write_text("""
blocks:
  F: {type: from_file, file: drive.csv}
outputs: {y: F.y}
""")
    (tmp_path / "top.yaml").write_text("""
blocksim: 1
blocks:
  S: {type: subsystem, file: parts/source.yaml}
simulation: {stop: 1}
record: {y: S/F.y}
""")
    r = blocksim.run(tmp_path / "top.yaml")
    np.testing.assert_allclose(r["y"], 5 * r.t, atol=1e-14)


BAD = """
blocksim: 1
blocks:
  F: {type: from_file, file: FILE}
simulation: {stop: 1}
"""


@pytest.mark.parametrize("content, words", [
    (None, "no such file"),
    ("t,a\n0,1\n1,nan\n", "line 3: a is not a finite number"),
    ("t,a\n0,1\n\n1,inf\n", "line 4: a is not a finite number"),  # a blank line counts
    ("t,a\n0,1\n1,2\n1,3\n", "line 4: t must be strictly increasing"),
    ("t,a\n0,1\n0.5,2\n0.2,3\n", "line 4: t must be strictly increasing, got 0.2 after 0.5"),
    ("time,a\n0,1\n", "no time column"),
    ("t,a\n0,1\n1,x\n", "line 3: not a number: 'x'"),
    ("t,a\n0,1\n1\n", "line 3: 1 values for 2 columns"),
    ("t\n0\n1\n", "no signal besides t"),
    ("", "the file is empty"),
    ("t,a,a\n0,1,2\n", "line 1: column name(s) 'a' appear more than once"),
])
def test_bad_files_are_load_errors_at_the_block(tmp_path, content, words):
    if content is not None:
        (tmp_path / "m.csv").write_text(content)
    (tmp_path / "d.yaml").write_text(BAD.replace("FILE", "m.csv"))
    with pytest.raises((DiagramError, DiagramErrors)) as e:
        blocksim.load(tmp_path / "d.yaml")
    text = str(e.value)
    assert f"{tmp_path / 'd.yaml'}:4:" in text and "'F'" in text and words in text, text


@pytest.mark.parametrize("name", ["../x.csv", "sub/x.csv", "/tmp/x.csv", "x.txt", "a..csv",
                                  "x\\y.npz", ""])
def test_to_file_takes_a_file_name_only(tmp_path, name):
    (tmp_path / "d.yaml").write_text(f"""
blocksim: 1
blocks:
  C: {{type: constant, value: 1}}
  W: {{type: to_file, file: '{name}'}}
wires: [C -> W]
simulation: {{stop: 1}}
""")
    with pytest.raises((DiagramError, DiagramErrors)) as e:
        blocksim.load(tmp_path / "d.yaml")
    assert ":5:" in str(e.value) and "file name" in str(e.value)


@pytest.mark.parametrize("first, second, line, words", [
    ("results.npz", "a.csv", 5, "a file the run itself writes"),   # would replace the results
    ("a.csv", "RESULTS.CSV", 6, "a file the run itself writes"),  # --csv's file, any case
    ("a.csv", "A.csv", 6, "which block 'W' writes too"),        # one would overwrite the other
])
def test_to_file_names_are_the_blocks_own(tmp_path, first, second, line, words):
    (tmp_path / "d.yaml").write_text(f"""
blocksim: 1
blocks:
  C: {{type: constant, value: 1}}
  W: {{type: to_file, file: '{first}'}}
  V: {{type: to_file, file: '{second}'}}
wires: [C -> W, C -> V]
simulation: {{stop: 1}}
""")
    with pytest.raises((DiagramError, DiagramErrors)) as e:
        blocksim.load(tmp_path / "d.yaml")
    assert f":{line}:" in str(e.value) and words in str(e.value), str(e.value)


def test_cli_reports_a_bad_file_with_exit_2(tmp_path):
    (tmp_path / "m.csv").write_text("t,a\n0,1\n1,nan\n")
    (tmp_path / "d.yaml").write_text(BAD.replace("FILE", "m.csv"))
    cli = subprocess.run([sys.executable, "-m", "blocksim", "run", str(tmp_path / "d.yaml")],
                         capture_output=True, text=True, cwd=tmp_path)
    assert cli.returncode == 2 and "Traceback" not in cli.stderr
    assert cli.stderr.startswith(f"{tmp_path / 'd.yaml'}:4: error:"), cli.stderr


def _wide_csv(columns):
    names = ",".join(f"c{k}" for k in range(columns))
    ones = ",".join("1" for _ in range(columns))
    return f"t,{names}\n0,{ones}\n1,{ones}\n"


@pytest.mark.parametrize("content, words", [
    # a cell beyond the csv module's field limit (131,072 characters): csv.Error, a traceback
    ("t,a\n0," + "1" * 200_000 + "\n", "line 2: a value of more than 131,072 characters"),
    # an element index that would make a 10^11-element signal out of one column (issue 35
    # item 5: it was a plain column, accepted by check); a signal holds at most 10^7
    # elements, as an expression's value (blocksim.language.expr.MAX_ELEMENTS)
    ("t,q[99999999999]\n0,1\n1,2\n", "line 1: column 'q[99999999999]' is an element of an "
                                     "array of more than 10,000,000 elements"),
    ('t,q[0],"q[3162,3162]"\n0,1,1\n', "column 'q[3162,3162]' is an element of an array "
                                     "of more than 10,000,000"),  # 3163^2 = 10,004,569
    ('t,q[0],"q[3161,3161]"\n0,1,1\n1,2,2\n', None),  # 3162^2 = 9,998,244: two scalars
    # 5,000 digits: int() refused them (Python's 4,300-digit limit), a ValueError traceback
    ("t,q[" + "9" * 5000 + "]\n0,1\n", "column 'q[9999999999999999999999999999999999999"),
    ("t,q[" + "0" * 5000 + "1]\n0,1\n1,2\n", None),  # leading zeros: q[1], a plain column
    # 70 indices: numpy's reshape refused 71 dimensions, a ValueError traceback
    ('t,"q[' + ",".join(["0"] * 70) + ']"\n0,1\n', "has 70 indices, more than the 31"),
    # times whose step is beyond the largest float (1e308 - (-1e308) = inf): the slope was
    # 0 (y held, a wrong value) and numpy warned of an overflow
    ("t,a\n-1e308,1\n1e308,2\n", "line 3: the time step from -1e+308 to 1e+308 is more "
                                  "than the largest number"),
    # a step of 5e-324 s (the smallest float): slope 1 / 5e-324 = inf, y NaN at the run
    ("t,a\n0,1\n\n5e-324,2\n", "line 4: the slope from the time point before (over "
                                  "4.94066e-324 s) is more than the largest number"),
])
def test_odd_csv_files_are_load_errors_or_plain_columns(tmp_path, content, words):
    (tmp_path / "m.csv").write_text(content)
    (tmp_path / "d.yaml").write_text(BAD.replace("FILE", "m.csv"))
    if words is None:  # not a whole array: a column of its own name each
        model = blocksim.load(tmp_path / "d.yaml")
        columns = len(next(csv.reader(content.splitlines()))) - 1
        assert model.outputs[("F", "y")].shape == (() if columns == 1 else (columns,))
        return
    with pytest.raises((DiagramError, DiagramErrors)) as e:
        blocksim.load(tmp_path / "d.yaml")
    assert f"{tmp_path / 'd.yaml'}:4:" in str(e.value) and words in str(e.value), str(e.value)


def test_a_long_column_name_costs_what_its_length_costs():
    """A header cell may hold 131,072 characters (the csv module's field limit). The pattern
    of an element's name tried every split of a run of spaces between name and bracket
    (quadratic: 20,000 spaces took 0.8 s, 131,000 half a minute); now its '[' is found
    first. CPU time against a name as long without spaces (the machine's speed cancels)."""
    import time

    def cost(name):
        best = float("inf")
        for _ in range(3):
            t0 = time.process_time()
            assert csvio.group_columns(["t", name])[name] == ([1], ())
            best = min(best, time.process_time() - t0)
        return best

    n = 40_000
    assert cost(" a" + " " * n + "b[0 ") < 20 * cost("a" * (n + 6)) + 0.01


def test_a_csv_of_100000_columns_is_checked(tmp_path):
    # the check for repeated column names counted each name in the whole header: 10^10
    # comparisons, so `blocksim check` of this file never finished (a bound of 120 s here
    # against that hang, not a timing)
    (tmp_path / "m.csv").write_text(_wide_csv(100_000))
    (tmp_path / "d.yaml").write_text(BAD.replace("FILE", "m.csv"))
    cli = subprocess.run([sys.executable, "-m", "blocksim", "check", str(tmp_path / "d.yaml")],
                         capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0, cli.stderr
    assert "out: y(100000,)" in cli.stdout


def _npz_member(path, name, header_shape, data):
    """An NPZ whose array `name` has a header claiming `header_shape` over `data`'s bytes."""
    import io
    import zipfile

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": "<f8", "fortran_order": False, "shape": header_shape})
    with zipfile.ZipFile(path, "w") as z:
        t = io.BytesIO()
        np.lib.format.write_array(t, np.array([0.0, 1.0]))
        z.writestr("t.npy", t.getvalue())
        z.writestr(f"{name}.npy", buf.getvalue() + np.asarray(data, "<f8").tobytes())


@pytest.mark.parametrize("make, words", [
    # a structured array: float() of it was a TypeError traceback
    (lambda p: np.savez(p, t=np.array([0.0, 1.0]),
                        x=np.zeros(2, dtype=[("a", float), ("b", float)])),
     "array 'x' is not numbers"),
    # a header claiming 10^13 values over 16 bytes: numpy tried to allocate 73 TiB
    (lambda p: _npz_member(p, "x", (10**13,), [1.0, 2.0]),
     "array 'x' claims shape (10000000000000,) (80,000,000,000,000 bytes) but holds 16"),
    (lambda p: _npz_member(p, "x", (3,), [1.0, 2.0]), "array 'x' claims shape (3,)"),
])
def test_odd_npz_files_are_load_errors(tmp_path, make, words):
    make(tmp_path / "m.npz")
    (tmp_path / "d.yaml").write_text(BAD.replace("FILE", "m.npz"))
    with pytest.raises((DiagramError, DiagramErrors)) as e:
        blocksim.load(tmp_path / "d.yaml")
    assert f"{tmp_path / 'd.yaml'}:4:" in str(e.value) and words in str(e.value), str(e.value)
