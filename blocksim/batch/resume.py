"""--resume: the ok rows of the previous sweep in a directory, once its files prove whole.

The previous sweep.json must be the one a sweep of this version writes (every key, each of
its kind, nothing else) for this very sweep (its fingerprint, varied paths, metrics, columns
and run count), and summary.csv (and `.summary.resumed.csv`, left by a resume that was
killed) must hold the rows a sweep writes: the header, then one row per run in run order,
each with its run's varied values, a status, and numbers where numbers go. A file that does
not is refused (exit 2, naming the file, the line and what is wrong) rather than resumed
from: a resume that trusted an edited or damaged table ran "nothing" and exited 0. Only the
last row may be cut short (a sweep killed while writing it): that run is run again.
"""
from __future__ import annotations

import csv
import io
import json

from ..errors import DiagramError
from .table import CHUNK, STATUSES, number
from .worker import KEEP

HINT = "run the sweep into a new directory (--out), or without --resume"
_NUMBER = "number"  # a JSON number that is not a boolean

# sweep.json as a sweep writes it (batch/run.py: _meta, the counts and columns): each key's
# JSON kinds (None: null); a key missing, another key, or a value of another kind is damage
SWEEP_KEYS = {
    "blocksim-sweep": (int,), "name": (str,), "file": (str, None), "diagram": (str,),
    "created": (str,), "complete": (bool,), "status": (str,), "sweep": (dict,),
    "varied": (list,), "metrics": (list,), "seeds": (dict, None), "keep": (str,),
    "fingerprint": (str,), "execution": (dict,), "figures": (list,), "versions": (dict,),
    "timeout": (_NUMBER, None), "counts": (dict,), "columns": (list,),
}
EXECUTION_KEYS = {
    "where": (str, None), "modes": (dict,), "workers": (int,), "wall_s": (_NUMBER, None),
    "compiles": (int,), "reparameterised": (int,), "run_s": (_NUMBER,),
    "simulate_s": (_NUMBER,), "cpu_s": (_NUMBER,),
}
STATUS_WORDS = ("running", "finished", "interrupted")


class _Damaged(Exception):
    """What is wrong with a file, at `line` (None: the file as a whole)."""

    def __init__(self, message, line=None):
        super().__init__(message)
        self.line = line


def take_previous(table, sweep_json, summary, kept):
    """Take the ok rows of the previous sweep whose sweep.json is `sweep_json` into `table`,
    from `kept` (the rows a killed resume had taken, when it exists) and `summary` (its
    summary.csv). Nothing when there is no sweep.json; DiagramError when a file is not whole
    or holds another sweep."""
    try:
        text = sweep_json.read_text(encoding="utf-8")
    except FileNotFoundError:
        return
    except (OSError, UnicodeDecodeError) as e:
        raise _refusal(sweep_json, None, f"cannot read it: {e}") from None
    try:
        previous = check_sweep_json(text, table)
    except _Damaged as e:
        raise _refusal(sweep_json, e.line, str(e)) from None
    resumed = kept.exists()  # a resume was killed: summary.csv was being rewritten
    for path in (kept, summary):
        try:
            rows = _ok_rows(path, table, previous["counts"], whole=path == summary and
                            not resumed and previous["status"] != "running")
            for i, results in rows:
                table.set(i, results)
        except FileNotFoundError:
            if path == summary:
                raise _refusal(path, None, "is missing: the rows to resume are in it") \
                    from None
        except (OSError, UnicodeDecodeError) as e:
            raise _refusal(path, None, f"cannot read it: {e}") from None
        except _Damaged as e:
            raise _refusal(path, e.line, str(e)) from None


def _refusal(path, line, why):
    return DiagramError(f"cannot resume: {path.name} {why}", file=str(path), line=line,
                        hint=HINT)


def check_sweep_json(text, table):
    """The mapping in a previous sweep.json's `text` when it is this sweep's, whole; raises
    _Damaged (at the line of the key at fault)."""
    try:
        data = json.loads(text)
    except ValueError as e:
        raise _Damaged(f"is not JSON ({getattr(e, 'msg', e)})", getattr(e, "lineno", None)) \
            from None
    if not isinstance(data, dict):
        raise _Damaged(f"holds a JSON {_kind(data)}, not a sweep's object", 1)
    lines = text.splitlines()

    def line(key):  # the key's line: write_json indents the top level by two spaces
        head = f'  "{key}":'
        return next((k + 1 for k, s in enumerate(lines) if s.startswith(head)), None)
    fingerprint = data.get("fingerprint")
    if isinstance(fingerprint, str) and fingerprint != table.meta["fingerprint"]:
        raise _Damaged("holds a different sweep (the sweep file, its --set values or the "
                       "diagram changed)", line("fingerprint"))
    for key, problem in _problems(data, SWEEP_KEYS):
        raise _Damaged(problem, line(key))
    for _, problem in _problems(data["execution"], EXECUTION_KEYS, "execution."):
        raise _Damaged(problem, line("execution"))
    counts = data["counts"]
    if (set(counts) != {"runs", *STATUSES} or not all(_is(n, int) and n >= 0
                                                      for n in counts.values())
            or sum(counts[k] for k in STATUSES) != counts["runs"]):
        raise _Damaged(f"has counts {_shown(counts)}: not runs, ok, failed and interrupted "
                       "that add up", line("counts"))
    for key, words in (("status", STATUS_WORDS), ("keep", KEEP)):
        if data[key] not in words:
            raise _Damaged(f"has {key} {_shown(data[key])}, not one of {', '.join(words)}",
                           line(key))
    expected = {"blocksim-sweep": 1, "varied": table.meta["varied"],
                "metrics": table.meta["metrics"], "columns": table.columns}
    for key, value in expected.items():
        if data[key] != value:
            raise _Damaged(f"has {key} {_shown(data[key])}, where this sweep has "
                           f"{_shown(value)}", line(key))
    if counts["runs"] != len(table):
        raise _Damaged(f"counts {counts['runs']} runs, where this sweep has {len(table)}",
                       line("counts"))
    return data


def _problems(data, kinds, prefix=""):
    """(key, what is wrong) for each key of `data` missing, unknown or of another kind."""
    for key in sorted(kinds.keys() - data.keys()):
        yield key, f"has no '{prefix}{key}'"
    for key in sorted(data.keys() - kinds.keys()):
        yield key, f"has '{prefix}{key}', which a sweep does not write"
    for key, allowed in kinds.items():
        if key in data and not any(_is(data[key], k) for k in allowed):
            yield key, (f"has '{prefix}{key}' as a JSON {_kind(data[key])}, where a sweep "
                        "writes " + " or ".join(_KIND_NAMES[k] for k in allowed))


def _is(value, kind):
    """Whether a JSON value is of `kind` (None: null; int: a whole number; bool apart)."""
    if kind is None:
        return value is None
    if kind in (_NUMBER, int):
        return (isinstance(value, (int, float)) and not isinstance(value, bool)
                and (kind == _NUMBER or float(value).is_integer()))
    return isinstance(value, kind)


def _kind(value):
    return {dict: "object", list: "array", str: "string", bool: "boolean",
            type(None): "null"}.get(type(value), "number")


_KIND_NAMES = {None: "null", _NUMBER: "a number", int: "a whole number", str: "a string",
               bool: "a boolean", dict: "an object", list: "an array"}


def _shown(value):
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _ok_rows(path, table, counts, whole):
    """(run, results) of the ok rows of summary file `path`, after checking each row; with
    `whole` (the sweep ended: its table is final) also that every run has its row and the
    statuses add up to sweep.json's `counts`."""
    columns = table.columns
    at = {name: k for k, name in enumerate(columns)}
    varied = [(at[name], name) for name in table.varied]
    found = dict.fromkeys(STATUSES, 0)
    records = _records(path)
    header = next(records, None)
    if header is None:
        if whole:
            raise _Damaged("holds no header", 1)
        return
    line, cells = header
    if cells != columns:
        raise _Damaged(f"has the header {','.join(cells)!r}, where this sweep's is "
                       f"{','.join(columns)!r}", line)
    expected = []  # the varied cells of the runs from `first` on, as the table writes them
    first = 0
    for run, (line, cells) in enumerate(records):
        if run >= len(table):
            raise _Damaged(f"has more rows than the sweep's {len(table)} runs", line)
        if run - first >= len(expected):
            first = run
            stop = min(run + CHUNK, len(table))
            expected = list(csv.reader(io.StringIO(table.csv_lines(run, stop))))
        results = _row(cells, columns, at, table.metrics, line)
        if cells[0] != str(run):
            raise _Damaged(f"has run {cells[0]!r} where run {run} belongs (a sweep writes "
                           "each run once, in order)", line)
        for k, name in varied:
            if cells[k] != expected[run - first][k]:
                raise _Damaged(f"gives run {run} {name} = {cells[k]!r}, where this sweep "
                               f"has {expected[run - first][k]!r}", line)
        found[cells[at["status"]]] += 1
        if results is not None:
            yield run, results
    if whole:
        rows = sum(found.values())
        if rows != len(table) or any(found[k] != counts[k] for k in STATUSES):
            order = ("ok", "failed", "interrupted")
            raise _Damaged(f"holds {_rows(rows)} ({', '.join(f'{found[k]} {k}' for k in order)}"
                           f"), where sweep.json counts {counts['runs']} runs ("
                           + ", ".join(f"{counts[k]} {k}" for k in order) + ")")


def _rows(n):
    return f"{n} row" + ("" if n == 1 else "s")


def _row(cells, columns, at, metrics, line):
    """The results of an ok row at `line`, None for another status; _Damaged for a row a
    sweep does not write."""
    if len(cells) != len(columns):
        raise _Damaged(f"has a row of {len(cells)} cells, where the header has {len(columns)}",
                       line)
    status = cells[at["status"]]
    if status not in STATUSES:
        raise _Damaged(f"has status {status!r}, not one of {', '.join(STATUSES)}", line)
    values = {}
    for name in ("wall_s", "steps", *metrics):
        text = cells[at[name]]
        v = number(text)
        if text and (v is None or (name == "steps" and not (isinstance(v, int) and v >= 0))):
            raise _Damaged(f"has {name} {text!r}, not "
                           + ("a count of steps" if name == "steps" else "a number"), line)
        if not text and status == "ok":
            raise _Damaged(f"has an ok row without {name}", line)
        values[name] = v
    if status != "ok":
        return None
    return {"status": "ok", "message": "", "wall_s": float(values["wall_s"]),
            "steps": values["steps"], **{m: float(values[m]) for m in metrics}}


def _records(path):
    """(the line it starts on, cells) of each record of csv file `path`, leaving out a last
    one that has no line break after it (a sweep killed while writing it); _Damaged at a
    record the csv module cannot read."""
    with open(path, "rb") as f:
        f.seek(0, 2)
        if f.tell():
            f.seek(-1, 2)
            whole = f.read(1) == b"\n"
        else:
            whole = True
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f, strict=True)
        held, start = None, 1  # the record read last; the line the next one starts on
        try:
            for cells in reader:
                if held is not None:
                    yield held
                held, start = (start, cells), reader.line_num + 1
        except csv.Error as e:
            raise _Damaged(f"cannot be read as CSV ({e})", start) from None
        except UnicodeDecodeError as e:
            raise _Damaged(f"is not UTF-8 text ({e.reason})", start) from None
        if held is not None and whole:
            yield held
