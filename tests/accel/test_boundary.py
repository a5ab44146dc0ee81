"""What Python and the compiled runtime agree on is written once (blocksim/accel/boundary.py):
the runtime's C uses every table's names and writes none of their numbers itself, the
Python side reads them by name, and the tables cover what the engine has (its solvers,
Settings)."""
import re
from pathlib import Path

import pytest

from blocksim.accel import boundary
from blocksim.accel.codegen import RUNTIME, RUNTIME_FILES
from blocksim.engine.compiler import Settings
from blocksim.engine.recorder import planned_rows
from blocksim.engine.solvers import SOLVERS

ROOT = Path(__file__).resolve().parents[2]
ACCEL = ROOT / "blocksim" / "accel"


def _c(name):
    """A runtime file without its comments."""
    text = (RUNTIME / name).read_text()
    return re.sub(r"/\*.*?\*/", "", re.sub(r"//[^\n]*", "", text), flags=re.S)


RUNTIME_C = {name: _c(name) for name in RUNTIME_FILES}
ALL_C = "\n".join(RUNTIME_C.values())


def _body(function):
    """The C body of a runtime function `function` (from its name to its closing brace at
    the start of a line)."""
    for text in RUNTIME_C.values():
        found = re.search(rf"\b{function}\s*\([^;{{]*\)\s*\{{(.*?)\n\}}", text, flags=re.S)
        if found:
            return found.group(1)
    raise AssertionError(f"no function {function} in the runtime")


@pytest.mark.parametrize("table", boundary.TABLES, ids=lambda t: t.prefix)
def test_the_runtime_uses_every_name_of_a_table(table):
    """Each entry is read or written by name in C (no entry only one side knows); VIEWS's
    are written into the generated tables of channels, and the settings, bind and
    outcome counts size arrays."""
    unused = [table.c_name(n) for n in table.names
              if not re.search(rf"\b{table.c_name(n)}\b", ALL_C)]
    assert not unused


# (function, array) pairs whose subscripts are a table's numbers, and patterns of literals
# that would stand for one
INDEXED = [("rt_configure", "s"), ("rt_bind", "b"), ("rt_info", "out"),
           ("rt_batch_outcomes", "o"), ("batch_begin", "buffers")]
LITERALS = [
    (r"RK_KIND\s*[=!<>]=?\s*\d", "a stepper kind"),
    (r"\bwhich\s*==\s*\d", "a row table or involved blocks"),
    (r"rt_set_error\(\s*rt\s*,\s*\d", "an error code"),
    (r"->error\s*=\s*\d", "an error code"),
    (r"\bstatus\s*=\s*\d", "a status"),
    (r"return\s+[0-3]\s*;\s*/\*\s*RT_", "a status"),
    (r"dg_remember\([^)]*,\s*\d\s*\)", "a remember kind"),
    (r"#define\s+(SNAP|PLOT_POINTS|MAX_ROUNDS|SAFETY|MIN_FACTOR|MAX_FACTOR|STIFF_TEST_EVERY"
     r"|STIFF_STEPS|NONSTIFF_STEPS)\b", "an engine constant"),
]


@pytest.mark.parametrize("function, array", INDEXED)
def test_the_runtime_indexes_the_tables_by_name(function, array):
    body = _body(function)
    literal = re.findall(rf"\b{array}\[\s*\d+\s*\]", body)
    assert not literal, f"{function} indexes {array} with numbers: {literal}"


@pytest.mark.parametrize("pattern, what", LITERALS, ids=[w for _, w in LITERALS])
def test_the_runtime_writes_no_number_a_table_owns(pattern, what):
    found = [(name, m.group(0)) for name, text in RUNTIME_C.items()
             for m in re.finditer(pattern, text)]
    assert not found, f"{what} written as a number: {found}"


def test_the_checks_find_what_they_look_for():
    """The patterns above match the literals they forbid (each would fail on them)."""
    samples = ["#if RK_KIND == 0", "which == 2 ? a : b", "rt_set_error(rt, 3, t)",
               "rt->error = 9;", "status = 1;", "return 1; /* RT_DONE */",
               "dg_remember(rt, t, 3)", "#define SNAP 1e-9"]
    for (pattern, _), sample in zip(LITERALS, samples):
        assert re.search(pattern, sample), (pattern, sample)
    assert re.findall(r"\bs\[\s*\d+\s*\]", "rt->start = s[0];")


@pytest.mark.parametrize("module", ["runner.py", "pool.py", "stiff.py"])
def test_python_reads_the_tables_by_name(module):
    text = (ACCEL / module).read_text()
    found = re.findall(r"\b(?:info|out|o)\[(?::\s*,\s*)?\d+\]|_rows\(\s*\d|_blocks\(\s*\d"
                       r"|STATUS\[|ERRORS\[|REMEMBER\[", text)
    assert not found, found


def test_the_solver_table_covers_the_engines_solvers():
    assert set(boundary.SOLVERS) == set(SOLVERS)
    kinds = {kind for kind, _ in boundary.SOLVERS.values()} - {"stiff"}
    assert kinds == set(boundary.KINDS.names)


def test_the_settings_row_follows_the_table():
    s = Settings(start=0.5, stop=2.0, solver="rk45", rtol=1e-4, atol=1e-7, max_step=0.1,
                 step=0.01, output_interval=None, refine=3, event_tol=1e-11,
                 max_consecutive_events=7, max_steps=99)
    row = boundary.settings_row(s, edges=True)
    S = boundary.SETTINGS
    assert len(row) == len(S)
    assert (row[S.start], row[S.stop], row[S.rtol], row[S.atol], row[S.max_step],
            row[S.step], row[S.output_interval], row[S.event_tol],
            row[S.max_consecutive_events], row[S.max_steps], row[S.edges],
            row[S.refine]) == (0.5, 2.0, 1e-4, 1e-7, 0.1, 0.01, 0.0, 1e-11, 7, 99, 1.0, 3)
    assert row[S.planned_rows] == planned_rows(s)


def test_the_generated_defines_are_distinct_names():
    names = [line.split()[1] for line in boundary.defines()]
    assert len(names) == len(set(names))
    assert "#define RT_E_NONE 0" in boundary.defines()
    assert "#define RT_NINFO 13" in boundary.defines()
