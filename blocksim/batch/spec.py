"""Sweep files (and the ad-hoc command-line form) -> a checked `SweepPlan`.

A plan holds the diagram, the fixed overrides (`set:`), the varied paths (`grid:`, `zip:`,
`random:` with `samples:` and `seed:`) and the metrics. `runs()` gives every run's values in
run order (a sequence that makes each run when asked for): the cartesian product of the grid (first key slowest), then the zip index, then
the Monte Carlo sample. Run i's random values come from
`numpy.random.SeedSequence(seed).spawn(runs)[i]`, drawn in the order the `random:` keys are
written, so the table does not depend on where or in which order runs execute.

`check(plan)` finds every problem before anything runs and raises them together as
`FILE:LINE: error: ...`: the sweep file's structure, values and distributions; the diagram
itself; every override path (by compiling the first run, and once more for each distinct
grid or zip value: a grid of numbers that only land in P, columns.direct, by their declared
rules all at once, the values they refuse on the route for its message); the metrics against the recorded signals' shapes.
"""
from __future__ import annotations

import ast
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..accel.mode import decide
from ..language import expr
from ..engine.compiler import compile_diagram, plain
from ..engine.loading import override_items
from ..language.diagram import Loc, apply_overrides, load_diagram, parse_override, suggest
from ..errors import DiagramError, DiagramErrors, Problems
from .columns import direct, numbers
from .draws import uniform_draws
from .metrics import Metrics
from ..language.yamlio import YList, YMap, load_yaml_file, load_yaml_text

FORMAT_VERSION = 1
KEYS = ("blocksim-sweep", "diagram", "name", "set", "grid", "zip", "samples", "random", "seed",
        "metrics", "timeout")
NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\Z")
MAX_RUNS = 1_000_000
DRAW_BLOCK = 16384  # runs whose draws are made together (Runs)
RESERVED_COLUMNS = ("run", "status", "message", "wall_s", "steps")


# ---- distributions --------------------------------------------------------------------------
@dataclass(frozen=True)
class Distribution:
    """`integers(a, b)` (numpy's: a <= k < b), `uniform(a, b)`, `normal(mean, std)` or
    `choice([v1, v2, ...])` (each value equally likely)."""
    name: str
    args: tuple
    text: str

    def draw_raw(self, rng):
        """One draw from `rng`; for choice, the index of the value drawn."""
        a = self.args
        if self.name == "uniform":
            return rng.uniform(a[0], a[1])
        if self.name == "normal":
            return rng.normal(a[0], a[1])
        if self.name == "integers":
            return rng.integers(a[0], a[1])
        return rng.integers(0, len(a[0]))


_ARITY = {"integers": 2, "uniform": 2, "normal": 2, "choice": 1}


def parse_distribution(text):
    """'uniform(0, 0.2)' -> Distribution; raises ExprError. Arguments are expressions of
    the built-in constants (`2**31 - 1`, `pi/4`), evaluated by the safe evaluator."""
    if not isinstance(text, str):
        raise expr.ExprError("expected a distribution such as uniform(0, 0.2), "
                             f"got {text!r}")
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as e:
        raise expr.ExprError(f"syntax error at column {e.offset or 1}: {e.msg}") from None
    if not (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name)):
        raise expr.ExprError(f"expected a distribution: {', '.join(_ARITY)}, e.g. uniform(0, 0.2)")
    name = tree.func.id
    if name not in _ARITY:
        raise expr.ExprError(f"unknown distribution '{name}'{suggest(name, _ARITY)} "
                             f"(distributions: {', '.join(_ARITY)})")
    if tree.keywords or len(tree.args) != _ARITY[name]:
        raise expr.ExprError(f"{name}() takes {_ARITY[name]} positional argument"
                             f"{'s' if _ARITY[name] > 1 else ''}")
    args = [expr.evaluate(ast.get_source_segment(text.strip(), a), {}) for a in tree.args]
    if name == "choice":
        values = np.asarray(args[0])
        if values.ndim != 1 or values.size == 0:
            raise expr.ExprError("choice() needs a non-empty list of numbers, e.g. choice([1, 2])")
        return Distribution(name, (tuple(values.tolist()),), text)
    lo, hi = (float(np.asarray(a).reshape(-1)[0]) if np.size(a) == 1 else None for a in args)
    if lo is None or hi is None:
        raise expr.ExprError(f"{name}() takes two numbers")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise expr.ExprError(f"{name}() needs finite arguments")
    if name == "normal":
        if hi < 0:
            raise expr.ExprError(f"normal(mean, std) needs std >= 0, got {hi:g}")
    elif name == "uniform":
        if hi < lo:
            raise expr.ExprError(f"uniform(a, b) needs a <= b, got {lo:g} > {hi:g}")
    else:
        if lo != int(lo) or hi != int(hi):
            raise expr.ExprError("integers(a, b) needs whole numbers")
        if not lo < hi:
            raise expr.ExprError(f"integers(a, b) draws a <= k < b and needs a < b, got {lo:g}, {hi:g}")
        if abs(lo) > 2**63 - 1 or abs(hi) > 2**63 - 1:
            raise expr.ExprError("integers(a, b) needs bounds within 64-bit integers")
        lo, hi = int(lo), int(hi)
    return Distribution(name, (lo, hi), text)


# ---- the plan --------------------------------------------------------------------------------
@dataclass
class Axis:
    """One varied path: `grid` / `zip` values (raw, as --set would take them, each with its
    location) or a `random` distribution."""
    key: str
    kind: str
    loc: Loc
    values: list = field(default_factory=list)
    locs: list = field(default_factory=list)
    dist: Distribution | None = None


@dataclass
class Run:
    index: int
    values: dict  # varied path -> value
    overrides: list  # (path, raw value, Loc), after the plan's fixed overrides


@dataclass
class SweepPlan:
    name: str | None
    file: str | None  # the sweep file; None for the ad-hoc form
    diagram: str
    fixed: list  # (path, raw value, Loc)
    axes: list  # grid axes, zip axes, random axes, each in written order
    samples: int | None = None
    seed: int | None = None
    metrics: dict = field(default_factory=dict)  # name -> (text, Loc)
    timeout: float | None = None  # seconds a run may take (`timeout:`; not in describe())
    # problems found while reading, raised by `check` together with the diagram's
    problems: Problems = field(default_factory=Problems)

    def of_kind(self, kind):
        return [a for a in self.axes if a.kind == kind]

    @property
    def varied(self):
        return [a.key for a in self.axes]

    def count(self):
        n = 1
        for a in self.of_kind("grid"):
            n *= len(a.values)
        zips = self.of_kind("zip")
        return n * (len(zips[0].values) if zips else 1) * (self.samples or 1)

    def runs(self):
        """Every run, in run order (a `Runs` sequence: each made when asked for)."""
        return Runs(self)

    def describe(self):
        """The resolved sweep (plain JSON) for sweep.json."""
        return {
            "set": {k: plain(v) for k, v, _ in self.fixed},
            "grid": {a.key: [plain(v) for v in a.values] for a in self.of_kind("grid")},
            "zip": {a.key: [plain(v) for v in a.values] for a in self.of_kind("zip")},
            "samples": self.samples,
            "random": {a.key: a.dist.text for a in self.of_kind("random")},
            "seed": self.seed,
            "metrics": {name: text for name, (text, _) in self.metrics.items()},
        }


class Runs(Sequence):
    """The runs of a plan as a sequence: run i made when asked for, from its digits (the grid
    point, first key slowest, then the zip index, then the sample) and its random draws. The
    draws are made DRAW_BLOCK runs at a time, when a run of the block is first asked for
    (a sweep's first batch does not wait for a million runs' draws), into one array per
    `random:` path (run i's come from its own SeedSequence child, as the module says): a
    large sweep holds a few numbers per run, never a dict per run."""

    def __init__(self, plan):
        self.plan = plan
        self.grid, self.zips = plan.of_kind("grid"), plan.of_kind("zip")
        self.rand = plan.of_kind("random")
        self.samples = plan.samples or 1
        n_zip = len(self.zips[0].values) if self.zips else 1
        # (axis, stride, size): value index of run i is (i // stride) % size
        self.listed = []
        stride = self.samples
        for a in self.zips:
            self.listed.append((a, stride, n_zip))
        stride *= n_zip
        for a in reversed(self.grid):
            self.listed.append((a, stride, len(a.values)))
            stride *= len(a.values)
        self.listed.sort(key=lambda item: self.plan.axes.index(item[0]))
        self.n = stride
        self._draws = None  # random path -> array of every run's draws (choice: the index)
        self._drawn_blocks = np.zeros(-(-self.n // DRAW_BLOCK), bool)  # blocks made
        self._levels = {}  # path -> its values as a float array (None: not all numbers)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self.n))]
        i = int(i)
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(f"run {i} of {self.n}")
        values, overrides = {}, []
        for a, stride, size in self.listed:
            j = (i // stride) % size
            values[a.key] = a.values[j]
            overrides.append((a.key, a.values[j], a.locs[j]))
        for a in self.rand:
            v = self.draw(a, i)
            values[a.key] = v
            overrides.append((a.key, v, a.loc))
        return Run(i, values, overrides)

    def take(self, index):
        """The runs `index` (an array of run indices), as a sequence made when asked for."""
        return _Taken(self, np.asarray(index))

    def level_codes(self, key):
        """(the values a grid or zip path takes, the index into them of each run), by
        arithmetic on the run indices; None for another path."""
        for a, stride, size in self.listed:
            if a.key == key:
                return a.values, (np.arange(self.n) // stride) % size
        return None

    def column(self, key, index):
        """The values of a varied path in the runs `index` (an array of run indices)."""
        for a, stride, size in self.listed:
            if a.key == key:
                return [a.values[j] for j in ((index // stride) % size).tolist()]
        axis = next(a for a in self.rand if a.key == key)
        drawn = self._drawn(index)[key][index].tolist()
        return [axis.dist.args[0][j] for j in drawn] if axis.dist.name == "choice" else drawn

    def indices(self, lo, hi):
        """The run indices of positions lo:hi of this sequence."""
        return np.arange(lo, hi, dtype=np.int64)

    def numbers(self, keys, index):
        """The values of the varied paths `keys` in the runs `index` (an array of run
        indices) as an (n, len(keys)) float array, a column at once; None when a value one
        of them takes is not a plain number (int or float: the route reads the others)."""
        out = np.empty((len(index), len(keys)))
        for j, key in enumerate(keys):
            listed = next(((a, stride, size) for a, stride, size in self.listed
                           if a.key == key), None)
            if listed is not None:
                a, stride, size = listed
                levels, codes = self._numbers(key, a.values), (index // stride) % size
            else:
                axis = next(a for a in self.rand if a.key == key)
                drawn = self._drawn(index)[key][index]
                if axis.dist.name != "choice":
                    out[:, j] = drawn
                    continue
                levels, codes = self._numbers(key, axis.dist.args[0]), drawn
            if levels is None:
                return None
            out[:, j] = levels[codes]
        return out

    def _numbers(self, key, values):
        """columns.numbers of the values a path takes, made once."""
        if key not in self._levels:
            self._levels[key] = numbers(values)
        return self._levels[key]

    def column_texts(self, key, index, text):
        """`column` as `text(value)` of each value: the text of each grid or zip level
        these runs take made once (those alone: summary.csv asks for a row at a time)."""
        for a, stride, size in self.listed:
            if a.key == key:
                levels, codes = np.unique((index // stride) % size, return_inverse=True)
                texts = [text(a.values[j]) for j in levels.tolist()]
                return [texts[k] for k in codes.tolist()]
        return [text(v) for v in self.column(key, index)]

    def draw(self, axis, i):
        """Run i's draw for a `random:` path."""
        v = self._drawn(np.array([i]))[axis.key][i]
        return axis.dist.args[0][int(v)] if axis.dist.name == "choice" else v.item()


    def _drawn(self, index):
        """Every run's draws {path: array}, those of the runs `index` (an array of run
        indices) made: their blocks of DRAW_BLOCK runs, when not made before."""
        if self._draws is None:
            kinds = {"uniform": np.float64, "normal": np.float64, "integers": np.int64,
                     "choice": np.int64}
            self._draws = {a.key: np.empty(self.n, kinds[a.dist.name]) for a in self.rand}
        blocks = np.unique(np.asarray(index) // DRAW_BLOCK)
        for b in blocks[~self._drawn_blocks[blocks]].tolist():
            runs = np.arange(b * DRAW_BLOCK, min((b + 1) * DRAW_BLOCK, self.n))
            for key, drawn in _draws_of(self.rand, self.plan.seed, runs).items():
                self._draws[key][runs] = drawn
            self._drawn_blocks[b] = True
        return self._draws


class _Taken(Sequence):
    """Some of a plan's runs (`Runs.take`)."""

    def __init__(self, runs, index):
        self.runs, self.index = runs, index

    def __len__(self):
        return len(self.index)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self.runs[i] for i in self.index[k].tolist()]
        return self.runs[int(self.index[k])]

    def indices(self, lo, hi):
        return self.index[lo:hi]

    def numbers(self, keys, index):
        return self.runs.numbers(keys, index)


def _draws_of(axes, seed, runs):
    """{path: the draw of each run of `runs` (an array of run indices)} (choice: the index of
    the value drawn); run i draws in the order of `axes` from
    numpy.random.default_rng(SeedSequence(seed, spawn_key=(i,))): uniform draws for the
    runs at once (draws.py), others run by run."""
    found = uniform_draws(seed, [(a.key, a.dist) for a in axes], runs)
    if found is not None:
        return found
    out = {a.key: [] for a in axes}
    for i in runs.tolist():
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(i,)))
        for a in axes:
            out[a.key].append(a.dist.draw_raw(rng))
    return out


# ---- reading a sweep file ---------------------------------------------------------------------
def read_sweep(path, sets=(), doc=None, cli=False):
    """A sweep file (its YAML `doc` when already loaded) -> SweepPlan; `sets` are extra
    fixed overrides ("path=value" or (path, value), as --set). Problems of single entries
    (a value, a distribution, a metric's name) leave the entry out and wait in
    `plan.problems` for `check`; problems that leave no plan to check are raised here."""
    file = str(path)
    doc = load_yaml_file(path) if doc is None else doc
    problems = Problems()
    if not isinstance(doc, YMap):
        raise DiagramError("a sweep file must be a YAML mapping", file=file,
                           line=getattr(doc, "line", 1))
    loc = _locator(doc, file)
    for key in doc:
        if key not in KEYS:
            problems.add(loc(key).error(f"unknown key '{key}' in the sweep{suggest(key, KEYS)}"))
    if "blocksim-sweep" not in doc:
        problems.add(DiagramError("missing 'blocksim-sweep: 1' (the sweep format version)",
                                  file=file, line=doc.line))
    elif doc["blocksim-sweep"] != FORMAT_VERSION or isinstance(doc["blocksim-sweep"], bool):
        problems.add(loc("blocksim-sweep").error(
            f"unsupported sweep format version {doc['blocksim-sweep']!r} (this blocksim reads 1)"))
    diagram = doc.get("diagram")
    if not isinstance(diagram, str) or not diagram.strip():
        problems.add(loc("diagram").error("'diagram' must name the diagram file (relative to "
                                          "this sweep file)") if "diagram" in doc else
                     DiagramError("missing 'diagram' (the diagram file to sweep)", file=file,
                                  line=doc.line))
        diagram = None
    else:
        target = Path(file).parent / diagram
        if not target.is_file():
            problems.add(loc("diagram").error(f"diagram file not found: {diagram}"))
            diagram = None
        else:
            diagram = str(target)
    name = doc.get("name", Path(file).stem)
    if not isinstance(name, str) or not NAME_RE.match(name):
        problems.add(loc("name").error(f"invalid sweep name {name!r}: letters, digits, _ . -"))
    fixed = _fixed(doc.get("set"), loc("set"), file, problems) + _set_items(sets, problems, cli)
    axes = []
    for kind in ("grid", "zip"):
        node = _mapping(doc, kind, file, problems)
        for key, raw in node.items():
            axes.append(_listed_axis(key, kind, raw, node, file, problems))
    axes = [a for a in axes if a is not None]
    zips = [a for a in axes if a.kind == "zip"]
    fatal = diagram is None
    if len({len(a.values) for a in zips}) > 1:
        lengths = ", ".join(f"{a.key}: {len(a.values)}" for a in zips)
        problems.add(loc("zip").error(f"the lists under 'zip' must have equal lengths ({lengths})"))
        fatal = True
    rand = _mapping(doc, "random", file, problems)
    for key, raw in rand.items():
        kloc = Loc(file, rand.key_line(key))
        try:
            axes.append(Axis(str(key), "random", kloc, dist=parse_distribution(raw)))
        except expr.ExprError as e:
            problems.add(kloc.error(f"random '{key}': {e}"))
    samples = _count(doc, "samples", loc, problems)
    seed = None
    if "seed" in doc:
        seed = doc["seed"]
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            problems.add(loc("seed").error(f"seed must be a non-negative integer, got {seed!r}"))
            seed = 0
    if rand and samples is None:
        problems.add(loc("random").error("'random' needs 'samples: N' (the draws per grid point)"))
    if samples is not None and not rand:
        problems.add(loc("samples").error("'samples' needs 'random:' (what to draw per sample)"))
    if rand and "seed" not in doc:
        problems.add(loc("random").error("a Monte Carlo sweep needs 'seed:' (the whole sweep's "
                                         "random stream)", hint="add e.g. `seed: 1`"))
    metrics = {}
    node = _mapping(doc, "metrics", file, problems)
    for key, text in node.items():
        mloc = Loc(file, node.key_line(key))
        metrics[key] = (text, mloc)
    timeout = None
    if "timeout" in doc:
        try:
            timeout = check_timeout(doc["timeout"])
        except ValueError as e:
            problems.add(loc("timeout").error(str(e)))
    plan = SweepPlan(name if isinstance(name, str) else None, file, diagram, fixed, axes,
                     samples, seed, metrics, timeout, problems)
    _check_names(plan, problems)
    if fatal:
        problems.check()
    return plan


def check_timeout(value):
    """A per-run time limit in seconds (a positive number) as a float; ValueError else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise ValueError(f"timeout must be a positive number of seconds, got {value!r}")
    return float(value)


def load_plan(source, grid=None, metrics=None, sets=(), cli=False):
    """A sweep file, or a diagram file with `grid` ({path: values}) and `metrics`
    ({name: expression}) -> SweepPlan. `sets` are fixed overrides ("path=value" or
    (path, value)). With `cli`, locations name the options (--grid, --metric, --set).
    Raises DiagramError(s)."""
    for argument, value, form in (("grid", grid, "{path: values}"),
                                  ("metrics", metrics, "{name: expression}")):
        if value is not None and not isinstance(value, dict):
            raise TypeError(f"{argument}= takes a dict {form}, got {type(value).__name__}")
    doc = load_yaml_file(source)
    if isinstance(doc, YMap) and "blocksim-sweep" in doc:
        if grid or metrics:
            raise DiagramError("a sweep file lists its own grid and metrics: "
                               f"{'--grid/--metric' if cli else 'grid=/metrics='} are for a "
                               "diagram file", file=str(source))
        return read_sweep(source, sets, doc, cli)
    if isinstance(doc, YMap) and "blocksim" in doc:
        return adhoc_plan(source, grid or {}, metrics or {}, sets, cli)
    raise DiagramError("neither a sweep file ('blocksim-sweep: 1') nor a diagram "
                       "('blocksim: 1')", file=str(source), line=getattr(doc, "line", None))


def grid_option(text):
    """--grid 'KEY=V1,V2,...' -> (KEY, [values]) with each value read as YAML (as --set
    reads its value); 'KEY=EXPRESSION' or 'KEY=[...]' -> (KEY, the expression or list)."""
    key, sep, raw = str(text).partition("=")
    key = key.strip()
    if not sep or not key:
        raise DiagramError(f"--grid expects KEY=V1,V2,..., got {text!r}", file="--grid")
    where = f"--grid {key}"
    values = [load_yaml_text(p, where) if p.strip() else None for p in _split_top_level(raw)]
    if len(values) == 1 and isinstance(values[0], (str, list)):
        return key, values[0]
    if any(v is None for v in values):
        raise DiagramError("empty value in the list", file=where)
    return key, values


def adhoc_plan(diagram, grid, metrics, sets=(), cli=False):
    """A sweep over a diagram without a sweep file: a grid and metrics (problems wait in
    `plan.problems` for `check`, as for a sweep file)."""
    problems = Problems()
    grid_at, metric_at = ("--grid {}", "--metric {}") if cli else ("grid[{!r}]", "metrics[{!r}]")
    axes = [_listed_axis(str(key), "grid", values, None, None, problems,
                         Loc(grid_at.format(key))) for key, values in grid.items()]
    axes = [a for a in axes if a is not None]
    plan_metrics = {name: (text, Loc(metric_at.format(name))) for name, text in metrics.items()}
    fixed = _set_items(sets, problems, cli)
    if not grid:
        problems.add(DiagramError("a sweep over a diagram needs a grid"
                                  + (" (--grid KEY=V1,V2,...)" if cli else " (grid={path: values})"),
                                  file=str(diagram)))
        problems.check()
    plan = SweepPlan(None, None, str(diagram), fixed, axes, None, None, plan_metrics,
                     problems=problems)
    _check_names(plan, problems)
    return plan


def _set_items(sets, problems, cli=False):
    """Fixed overrides given as "path=value" text or (path, value) pairs, located at the
    option (--set KEY) or the Python argument (overrides['KEY']); one text alone is one
    override (not its letters)."""
    items = override_items(sets)
    via = "--set" if cli else "overrides"
    fixed = []
    for item in items:
        try:
            key, value = parse_override(item, via) if isinstance(item, str) else item
            fixed.append((key, value, Loc(f"--set {key}" if cli else f"overrides[{key!r}]")))
        except DiagramError as e:
            problems.add(e)
    return fixed


def _split_top_level(text):
    """'1,2,[3,4],f(5,6)' -> ['1', '2', '[3,4]', 'f(5,6)']: commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _locator(doc, file):
    return lambda key: Loc(file, doc.key_line(key))


def _mapping(doc, key, file, problems):
    node = doc.get(key)
    if node is None:
        return YMap()
    if not isinstance(node, YMap):
        problems.add(Loc(file, doc.key_line(key)).error(f"'{key}' must be a mapping of "
                                                        "dotted paths"))
        return YMap()
    return node


def _fixed(node, loc, file, problems):
    if node is None:
        return []
    if not isinstance(node, YMap):
        problems.add(loc.error("'set' must be a mapping of dotted paths to values"))
        return []
    return [(str(k), v, Loc(file, node.key_line(k))) for k, v in node.items()]


def _listed_axis(key, kind, raw, node, file, problems, kloc=None):
    """A grid / zip entry: a list (each item one run's raw value, located at its line in a
    YAML list) or an expression giving an array (each row one value); None (and a problem)
    when it is neither."""
    kloc = kloc or Loc(file, node.key_line(key))
    file = kloc.file
    axis = Axis(str(key), kind, kloc)
    if isinstance(raw, np.ndarray) and raw.ndim >= 1:
        raw = raw.tolist()
    if isinstance(raw, (list, tuple)):
        items = list(raw)
        lines = [raw.item_line(i) if isinstance(raw, YList) else kloc.line for i in range(len(raw))]
        axis.locs = [Loc(file, line) for line in lines]
    elif isinstance(raw, str):
        try:
            value = expr.evaluate(raw, {})
        except expr.ExprError as e:
            problems.add(kloc.error(f"{kind} '{key}': {e}"))
            return None
        if value.ndim == 0:
            problems.add(kloc.error(f"{kind} '{key}': the expression gives one number, not a "
                                    "list of values"))
            return None
        items = value.tolist()
        axis.locs = [kloc] * len(items)
    else:
        problems.add(kloc.error(f"{kind} '{key}': expected a list of values or an expression "
                                "giving one (e.g. linspace(10, 40, 4))"))
        return None
    if not items:
        problems.add(kloc.error(f"{kind} '{key}': the list of values is empty"))
        return None
    axis.values = items
    return axis


def _count(doc, key, loc, problems):
    if key not in doc:
        return None
    n = doc[key]
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        problems.add(loc(key).error(f"'{key}' must be a positive integer, got {n!r}"))
        return None
    return n


def _check_names(plan, problems):
    seen = {}
    for key, _, loc in plan.fixed:
        seen.setdefault(key, ("set", loc))
    for a in plan.axes:
        if a.key in seen:
            where, first = seen[a.key]
            problems.add(a.loc.error(f"'{a.key}' is both in '{where}' (line {first.line}) and "
                                     f"in '{a.kind}': give it in one place"))
        seen[a.key] = (a.kind, a.loc)
    for name, (text, loc) in list(plan.metrics.items()):
        if not isinstance(name, str) or not name.isidentifier() or name in RESERVED_COLUMNS:
            problems.add(loc.error(f"invalid metric name {name!r}: an identifier other than "
                                   f"{', '.join(RESERVED_COLUMNS)}"))
            del plan.metrics[name]
        elif not isinstance(text, str):
            problems.add(loc.error(f"metric '{name}' must be an expression, got {text!r}"))
            del plan.metrics[name]
    if plan.count() > MAX_RUNS:
        problems.add(DiagramError(f"the sweep has {plan.count():,} runs, more than the limit of "
                                  f"{MAX_RUNS:,}", file=plan.file or plan.diagram))
        problems.check()


# ---- checking against the diagram -----------------------------------------------------------
@dataclass
class Checked:
    """A plan that passed every check: its diagram (loaded, fixed overrides applied), the
    model it was checked on (the first run's), the runs and the metrics."""
    plan: SweepPlan
    spec: object
    model: object
    runs: list
    metrics: Metrics
    mode: str = "normal"  # the first run's mode: normal or accelerated


def check(plan, library=None):
    """Load the plan's diagram and check every override path, value and metric before
    anything runs; raises DiagramError(s) listing every problem (the plan's own first)."""
    problems = plan.problems
    mode = "normal"
    try:
        spec = load_diagram(plan.diagram)
    except (DiagramError, DiagramErrors) as e:
        problems.add(e)
        problems.check()
    if plan.name is None:
        plan.name = f"{spec.name}_sweep"
    for item in plan.fixed:
        _note(problems, lambda: apply_overrides(spec, [item]))
    runs = plan.runs()
    bad = {a.key for a in plan.axes if not _path_ok(spec, a, runs[0], problems)}
    first = [o for o in runs[0].overrides if o[0] not in bad]
    model = _note(problems, lambda: compile_diagram(_with(spec, first), library))
    if model is not None:
        def change(trial):
            model.compilation.change(model, trial, base=spec)

        _check_grid(problems, plan, model, spec, first, bad)
        zips = [a for a in plan.of_kind("zip") if a.key not in bad]
        for j in range(1, len(zips[0].values) if zips else 0):
            replaced = {a.key: (a.values[j], a.locs[j]) for a in zips}
            trial = [(k, *replaced[k]) if k in replaced else (k, v, l) for k, v, l in first]
            _note(problems, lambda: change(trial),
                  ("with " + ", ".join(f"{k} = {v}" for k, (v, _) in replaced.items()),
                   zips[0].locs[j]))
        # the last model checked may be any value's: the first run's again, for the shapes
        if _note(problems, lambda: change(first) or True):  # accelerated mode refused
            decision = _note(problems, lambda: decide(model, sweep=True))  # before any run
            mode = decision.mode if decision is not None else mode
        shapes = _shapes(model)
    else:  # the diagram as the sweep file leaves it, for the recorded signals' shapes; the
        # first run was refused: the listed values are checked on it (which others are too)
        model = _note(Problems(), lambda: compile_diagram(spec.copy(), library))
        shapes = _shapes(model)
        if model is not None:
            _check_grid(problems, plan, model, spec, first, bad)
    metrics = Metrics({n: t for n, (t, _) in plan.metrics.items()}, shapes or spec.record)
    for name, message in metrics.problems.items():
        problems.add(plan.metrics[name][1].error(f"metric '{name}': {message}",
                                                 hint=_signals_hint(shapes, spec.record)))
    if model is not None:
        for name, message in metrics.check_shapes(shapes).items():
            problems.add(plan.metrics[name][1].error(f"metric '{name}' {message}"))
    problems.check()
    return Checked(plan, spec, model, runs, metrics, mode)


def _shapes(model):
    return {name: view.shape for name, (view, _) in model.record.items()} if model else {}


def _check_grid(problems, plan, model, spec, first, bad):
    """Each listed value of the grid once, with the first run's other values, written into
    `model` by the route of new values (a value that changes the structure: compiled
    anew). An error that several values of a path give at its line is said once, naming
    the first of them and how many more."""
    grid = [(a, direct(model, a.key)) for a in plan.of_kind("grid") if a.key not in bad]
    for a, found in grid:  # (found on the first run's model)
        refused = {}  # an error's _key -> the listed values that gave it, in order
        for j in _to_check(a, found):
            value, loc = a.values[j], a.locs[j]
            trial = [(k, value, loc) if k == a.key else (k, v, l) for k, v, l in first]
            _note(problems, lambda: model.compilation.change(model, trial, base=spec),
                  (f"with {a.key} = {value}", loc), (refused, value))
        for err in problems.errors:
            values = refused.get(_key(err), ())
            if len(values) > 1:
                err.message += f": the listed {values[0]} and {len(values) - 1} more"


def _to_check(axis, found):
    """The indices of a grid axis's values to check on the route: those its declared rules
    refuse when its path is a number of P alone (`found`, its columns.Direct: the route
    accepts every other value), else all of them."""
    values = numbers(axis.values) if found is not None else None
    if values is None:
        return range(len(axis.values))
    return np.flatnonzero(found.param.refused(values)).tolist()


def _path_ok(spec, axis, run, problems):
    """Whether a varied path names something the diagram has (`apply_overrides` checks
    the path; parameters of blocks and robots are checked when compiling)."""
    trial = [o for o in run.overrides if o[0] == axis.key]
    return _note(problems, lambda: _with(spec, trial)) is not None


def _signals_hint(shapes, names):
    if shapes:
        return "recorded signals: t, " + ", ".join(f"{n} {tuple(s)}" for n, s in shapes.items())
    return "recorded signals: t, " + ", ".join(names)


def _with(spec, overrides):
    copy = spec.copy()
    apply_overrides(copy, overrides)
    return copy


def _note(problems, action, context=None, tally=None):
    """action(), or None with its DiagramError(s) added to `problems`, each once (`_key`).
    `context` = (text, Loc) names the sweep value being checked; it becomes a hint of the
    errors located elsewhere (in the diagram, where the value is used). `tally` = (dict,
    value): the value joins the list, under its `_key`, of each error at the value's line."""
    try:
        return action()
    except (DiagramError, DiagramErrors) as e:
        known = {_key(x) for x in problems.errors}
        for err in (e.errors if isinstance(e, DiagramErrors) else [e]):
            key = _key(err)
            here = context is None or (err.file, err.line) == (context[1].file, context[1].line)
            if tally is not None and here:
                tally[0].setdefault(key, []).append(tally[1])
            if key in known:
                continue
            if not here:
                where = context[1].file + (f":{context[1].line}" if context[1].line else "")
                note = f"{context[0]} ({where})"
                err.hint = f"{err.hint}; {note}" if err.hint else note
            problems.add(err)
            known.add(key)
        return None


def _key(err):
    """What makes two errors one: the message, and whose and where it is."""
    return err.file, err.line, err.block, err.port, err.param, err.message
