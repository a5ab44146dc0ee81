"""Input that would hang or exhaust memory is refused (exit 2, FILE:LINE) within seconds:
subsystem files nested without end or multiplied by reuse, expressions whose cost explodes
while every array in them stays small (issue 16, items 13 and 14); a recording that cannot
fit in memory, and a run that holds no more than the check counted."""
import os
import subprocess
import sys
import time

import pytest

from blocksim.cli import main
from blocksim.language.diagram import MAX_BLOCKS, MAX_SUBSYSTEM_DEPTH
from blocksim.language.expr import MAX_WORK, FUNCTIONS, MATRIX_FUNCTIONS, LimitError, evaluate


def check(path, capsys):
    t0 = time.perf_counter()
    code = main(["check", str(path)])
    elapsed = time.perf_counter() - t0
    print(f"{path.name}: refused in {elapsed:.2f} s")  # closing-note figure
    return code, capsys.readouterr().err


def passthrough(inner):
    return (f"blocks:\n  S: {{type: subsystem, file: {inner}}}\n"
            "inputs: {u: S.u}\noutputs: {y: S.y}\n")


LEAF = "blocks:\n  G: {type: gain, K: 1}\ninputs: {u: G.u}\noutputs: {y: G.y}\n"
TOP = ("blocksim: 1\nblocks:\n  C: {type: constant, value: 1}\n"
       "  S: {type: subsystem, file: f0.yaml}\nwires: [C -> S]\nsimulation: {stop: 1}\n")


def test_chain_of_400_nested_files(tmp_path, capsys):
    for i in range(400):
        (tmp_path / f"f{i}.yaml").write_text(passthrough(f"f{i + 1}.yaml") if i < 399 else LEAF)
    (tmp_path / "top.yaml").write_text(TOP)
    code, err = check(tmp_path / "top.yaml", capsys)
    assert code == 2 and "Traceback" not in err
    # f0 is level 1, f99 level 100: its subsystem block, which would add level 101, is named
    assert f"f{MAX_SUBSYSTEM_DEPTH - 1}.yaml:2: error:" in err, err
    assert f"nested deeper than {MAX_SUBSYSTEM_DEPTH} levels" in err


def test_nesting_at_the_limit_is_fine(tmp_path, capsys):
    depth = MAX_SUBSYSTEM_DEPTH
    for i in range(depth):
        (tmp_path / f"f{i}.yaml").write_text(passthrough(f"f{i + 1}.yaml") if i < depth - 1
                                              else LEAF)
    (tmp_path / "top.yaml").write_text(TOP)
    assert main(["check", str(tmp_path / "top.yaml")]) == 0, capsys.readouterr().err


def test_diamond_of_files_is_refused_before_expanding(tmp_path, capsys):
    """Each level includes the next twice: 21 levels expand to 2^20 gains + 2^20 - 1 sums."""
    levels = 21
    for i in range(levels - 1):
        (tmp_path / f"f{i}.yaml").write_text(
            f"blocks:\n  A: {{type: subsystem, file: f{i + 1}.yaml}}\n"
            f"  B: {{type: subsystem, file: f{i + 1}.yaml}}\n  S: {{type: sum, signs: '++'}}\n"
            "wires: [A -> S.u1, B -> S.u2]\ninputs: {u: [A.u, B.u]}\noutputs: {y: S.y}\n")
    (tmp_path / f"f{levels - 1}.yaml").write_text(LEAF)
    (tmp_path / "top.yaml").write_text(TOP)
    code, err = check(tmp_path / "top.yaml", capsys)
    assert code == 2 and "Traceback" not in err
    assert f"top.yaml:4: error: block 'S': including 'f0.yaml' here adds {2 ** 21 - 1:,} " \
           f"blocks" in err, err
    assert f"more than {MAX_BLOCKS:,}" in err


def test_inline_subsystems_count_toward_the_depth(tmp_path, capsys):
    inner = "{blocks: {G: {type: gain, K: 1}}, inputs: {u: G.u}, outputs: {y: G.y}}"
    for _ in range(30):  # 30 inline levels inside each file
        inner = (f"{{blocks: {{S: {{type: subsystem, diagram: {inner}}}}}, "
                 "inputs: {u: S.u}, outputs: {y: S.y}}")
    (tmp_path / "f0.yaml").write_text(f"blocks:\n  S: {{type: subsystem, file: f1.yaml}}\n"
                                      "inputs: {u: S.u}\noutputs: {y: S.y}\n")
    for i in range(1, 5):
        nxt = f"file: f{i + 1}.yaml" if i < 4 else f"diagram: {inner}"
        (tmp_path / f"f{i}.yaml").write_text(
            f"blocks:\n  S: {{type: subsystem, diagram: {{blocks: {{T: {{type: subsystem, "
            f"{nxt}}}}}, inputs: {{u: T.u}}, outputs: {{y: T.y}}}}}}\n"
            "inputs: {u: S.u}\noutputs: {y: S.y}\n")
    (tmp_path / "top.yaml").write_text(TOP)
    code, err = check(tmp_path / "top.yaml", capsys)  # 1 + 4*2 + 30 + ... > 30, < 100 levels
    assert code == 0, err
    (tmp_path / "f4.yaml").write_text((tmp_path / "f4.yaml").read_text()
                                      .replace(f"diagram: {inner}", "file: f0.yaml"))
    code, err = check(tmp_path / "top.yaml", capsys)
    assert code == 2 and "includes itself" in err


# -- expressions: the work of one evaluation is bounded ----------------------------------------
def test_chain_of_large_matrix_products_is_refused_quickly():
    names = {"A": evaluate("ones(3000, 3000) / 3000", {})}  # 9e6 elements: a legal size
    t0 = time.perf_counter()
    with pytest.raises(LimitError, match="more than 1e\\+09 operations") as e:
        evaluate("A @ A @ A @ A @ A @ A @ A @ A", names)
    print(f"A@A... refused in {time.perf_counter() - t0:.3f} s")
    assert "'A @ A'" in str(e.value)


@pytest.mark.parametrize("n, allowed", [(990, True), (1010, False)])
@pytest.mark.parametrize("text", ["ones(n, 1000) @ ones(1000, 1000)",  # m·k·n
                                  "inv(eye(cbrt))"])  # n³
def test_work_limit_boundary(text, n, allowed):
    assert 1000 ** 3 == MAX_WORK
    text = text.replace("cbrt", str(n)).replace("n,", f"{n},")
    if allowed:
        evaluate(text, {}, functions=FUNCTIONS | MATRIX_FUNCTIONS)
    else:
        with pytest.raises(LimitError, match="operations"):
            evaluate(text, {}, functions=FUNCTIONS | MATRIX_FUNCTIONS)


def test_many_cheap_operations_add_up():
    # 200 additions of 5e6-element arrays read 2e9 elements
    with pytest.raises(LimitError, match="operations"):
        evaluate(" + ".join(["zeros(5e6)"] * 200), {})


def test_function_block_expression_too_costly_is_refused(tmp_path, capsys):
    path = tmp_path / "f.yaml"
    path.write_text("blocksim: 1\nparameters: {A: 'ones(3000, 3000) / 3000'}\nblocks:\n"
                    "  C: {type: constant, value: A}\n"
                    "  F: {type: function, expr: 'u @ u @ u @ u'}\n"
                    "  T: {type: terminator}\nwires: [C -> F, F -> T]\nsimulation: {stop: 1}\n")
    code, err = check(path, capsys)
    assert code == 2 and "block 'F'" in err and "operations" in err, err


# -- a diagram's values are bounded together, not only each expression -----------------------
def test_list_of_costly_expressions_shares_one_budget():
    # each item costs 1000*1000*200 = 2e8 operations for its product (m·k·n), within the
    # limit alone; six of them (1.2e9) are not, although each would pass on its own
    item = "sum(ones(1000, 1000) @ ones(1000, 200))"
    assert evaluate(item, {}) == 1000 * 1000 * 200  # each element of the product is 1000
    with pytest.raises(LimitError, match="operations together with"):
        evaluate([item] * 6, {})


def parameters_file(tmp_path, values):
    lines = [f"  p{i}: '{v}'" for i, v in enumerate(values)]
    path = tmp_path / "d.yaml"
    path.write_text("blocksim: 1\nparameters:\n" + "\n".join(lines) + "\nblocks:\n"
                    "  C: {type: constant, value: 1}\n  T: {type: terminator}\n"
                    "wires: [C -> T]\nsimulation: {stop: 1}\n")
    return path


def test_many_costly_parameters_share_one_budget(tmp_path, capsys, monkeypatch):
    # with a budget of 10,000 operations, each sum(ones(60, 60)) costs 2 (the sizes read)
    # + 3600 (the elements summed): two fit, the third does not, at its own line
    monkeypatch.setattr("blocksim.language.expr.MAX_WORK", 10_000)
    code, err = check(parameters_file(tmp_path, ["sum(ones(60, 60))"] * 2), capsys)
    assert code == 0, err
    code, err = check(parameters_file(tmp_path, ["sum(ones(60, 60))"] * 3), capsys)
    assert code == 2 and "d.yaml:5: error: parameter 'p2'" in err, err
    assert "together with the diagram's other values" in err


def test_many_large_parameters_share_one_element_limit(tmp_path, capsys, monkeypatch):
    # a limit of 100 elements for the values together: 4 x 25 fit, a fifth 25 does not
    monkeypatch.setattr("blocksim.language.expr.MAX_TOTAL_ELEMENTS", 100)
    code, err = check(parameters_file(tmp_path, ["zeros(25)"] * 3), capsys)  # + C's value
    assert code == 0, err
    code, err = check(parameters_file(tmp_path, ["zeros(25)"] * 5), capsys)
    assert code == 2 and "d.yaml:7: error: parameter 'p4'" in err, err
    assert "together would hold more than 100 elements" in err


BIG_RECORD = """blocksim: 1
blocks:
  C: {type: constant, value: "zeros(1000, 1000)"}
simulation: {stop: 100, solver: rk4, step: 0.001}
record: {m: C.y}
"""

GRID_X100 = """blocksim: 1
blocks:
  C: {type: constant, value: zeros(100)}
  S: {type: scope}
wires: [C -> S]
simulation: {stop: 9e6, output_interval: 1}
record: {v: C.y}
"""


def test_recording_more_than_memory_holds_is_refused_up_front(tmp_path, capsys):
    # 100,001 rows of a 1000 x 1000 signal: 800 GB, a MemoryError after the run had
    # started; refused before, from the sizes, as a grid of too many rows is
    path = tmp_path / "big.yaml"
    path.write_text(BIG_RECORD)
    code, err = check(path, capsys)
    assert code == 2 and "Traceback" not in err
    assert f"{path}:5: error: recording 1,000,001 values a row over the 100,001 rows " \
           "planned needs about 1.6 TB" in err, err
    assert "more than the" in err and "of memory available" in err


def test_a_grid_of_9e6_rows_of_100_values_is_refused_where_memory_is_short(tmp_path, capsys,
                                                                           monkeypatch):
    # the grid's 9e6 + 1 times and a row for stop (planned in case the grid misses it) of t,
    # 100 recorded values and the scope's 100, in the recording and in the results copied out
    # of it: 2 x 9,000,002 x 201 x 8 bytes = 28.9 GB; with 8 GB available that is refused at
    # the record entry (the larger share ties: the first); with 64 GB it fits
    from blocksim.util import memory
    path = tmp_path / "grid.yaml"
    path.write_text(GRID_X100)
    monkeypatch.setattr(memory, "available", lambda: 8e9)
    code, err = check(path, capsys)
    assert code == 2 and f"{path}:7: error: recording 201 values a row over the 9,000,002 " \
                          "rows planned needs about 28.9 GB" in err, err
    monkeypatch.setattr(memory, "available", lambda: 64e9)
    assert check(path, capsys)[0] == 0


# the grid of 1/256 s over 1 s: 257 times (k / 256 s, k = 0 .. 256) and a row planned for stop,
# each of t and 1000 values; the memory check counts the recording and the results copied
# out of it: 2 x 258 x 1001 x 8 bytes
GRID = """blocksim: 1
blocks:
  C: {type: constant, value: "zeros(1000)"}
simulation: {stop: 1, output_interval: 0.00390625}
record: {c: C.y}
"""


def test_a_run_holds_no_more_memory_than_the_check_counted(tmp_path, monkeypatch):
    # the recording doubled past the planned rows (for 9e6 rows x 100 signals, up to 1.9 x
    # the results, then the results copied out of it: a MemoryError in a run that passed
    # the check). Here at a small scale: the recording preallocates 64 rows, not 65,536,
    # and doubled to 512 rows for 257 (6.2 MB held where the check counted 4.1 MB). Normal
    # mode, measured by tracemalloc (numpy's arrays are traced), with the check told that
    # just what it counts (and half a MB for the run's other needs) is free
    import tracemalloc

    import blocksim
    from blocksim.engine.recorder import Recorder
    from blocksim.util import memory
    counted, other = 2 * 258 * 1001 * 8, 2**19
    path = tmp_path / "grid.yaml"
    path.write_text(GRID)
    monkeypatch.setattr(memory, "available", lambda: counted + other)
    monkeypatch.setattr(Recorder, "MAX_PREALLOCATED", 64)
    model = blocksim.load(path, ["simulation.mode=normal"])  # not refused: it fits
    tracemalloc.start()
    try:
        result = blocksim.execute(model)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(result.t) == 257
    assert peak <= counted + other, f"{peak / 1e6:.2f} MB held, {counted / 1e6:.2f} MB counted"


PEAK = """
import sys
import blocksim
from blocksim.util import memory
memory.available = lambda: int(sys.argv[2])
def peak():  # the process's largest size so far (its address space)
    for line in open("/proc/self/status"):
        if line.startswith(("VmPeak:", "VmSize:")):
            yield int(line.split()[1]) * 1024
overrides = ["simulation.mode=accelerated", "blocks.C.value=zeros(10)",
             "simulation.output_interval=1.9073486328125e-06"]
blocksim.execute(blocksim.load(sys.argv[1], overrides + ["simulation.stop=0.01"]))
model = blocksim.load(sys.argv[1], overrides)
before = max(peak())
rows = len(blocksim.execute(model).t)
print(rows, max(peak()) - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_compiled_run_holds_no_more_memory_than_the_check_counted(tmp_path):
    # compiled code's recording doubled past the planned rows too (its rows_add). The grid of
    # 2**19 intervals: 524,289 rows of 11 values, the check counting 2 x 524,290 x 11 x 8 bytes
    # (92 MB); the recording held 2**20 rows (92 MB) and the results copied out of it 46 MB
    # more. Measured as the growth of the process's peak size, in a process of its own (its
    # code compiled and loaded by a short run first); arrays this large are mapped one by one
    # (glibc maps anything over 32 MB), so the size follows them (a page or so over each)
    counted = 2 * 524_290 * 11 * 8
    path = tmp_path / "grid.yaml"
    path.write_text(GRID)
    proc = subprocess.run([sys.executable, "-c", PEAK, str(path), str(counted + 2**20)],
                          capture_output=True, text=True, env={**os.environ, "MPLBACKEND": "Agg"})
    assert proc.returncode == 0, proc.stderr
    rows, grown = map(int, proc.stdout.split())
    assert rows == 524_289
    assert grown <= counted + 2**20, f"{grown / 1e6:.1f} MB, {counted / 1e6:.1f} MB counted"


@pytest.mark.parametrize("header", [
    "t,q[99999999999]",                 # an array of 10^11 elements
    "t,q[" + "9" * 5000 + "]",          # int() refused the digits: a traceback
    't,"q[' + ",".join(["0"] * 70) + ']"',  # numpy refused 71 dimensions: a traceback
])
def test_a_csv_column_with_a_huge_index_is_refused_by_check(tmp_path, capsys, header):
    """issue 35 item 5: from_file's column names index elements of a signal, which holds
    at most 10^7 elements (expr.MAX_ELEMENTS) in at most 31 dimensions besides the rows."""
    (tmp_path / "m.csv").write_text(header + "\n0,1\n1,2\n")
    (tmp_path / "d.yaml").write_text("blocksim: 1\nblocks:\n  F: {type: from_file, file: m.csv}"
                                     "\nsimulation: {stop: 1}\n")
    code, err = check(tmp_path / "d.yaml", capsys)
    assert code == 2 and "Traceback" not in err
    assert err.startswith(f"{tmp_path / 'd.yaml'}:3: error: block 'F' parameter 'file': "
                          "m.csv: line 1: column 'q["), err
