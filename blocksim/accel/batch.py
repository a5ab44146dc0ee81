"""A sweep's runs as arguments of the compiled code, without compiling the diagram again.

A sweep's runs differ in values. `FastRuns`, made from the first run's Model and compiled
code, turns a run's overrides into a `RunArgs`, what the run's arguments differ in from the
first run's: it evaluates only the parameters the overrides change (and those computed from
them), rebuilds only the blocks whose parameters read them, checks that each rebuilt block
keeps its structure (ports, shapes, states, indicators, sample time, compiled code) and packs
their numbers, initial states, time events and data. `pool.Batch` runs many of them in one
compiled call.

Overrides of top-level parameters (`parameters.NAME`), of a top-level block's parameters
(`blocks.B.NAME`) and of numeric simulation settings qualify (`qualifies`); anything else (a
robot, a subsystem, the solver), a value that changes the structure or an invalid value
gives None: the caller runs it the general way, which reports exactly what normal mode
reports.
"""
from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from ..block import Sample, overrides
from ..errors import Problems
from ..params import names_file
from ..language import expr
from ..language.diagram import Value
from ..engine.compiler.blocks import build_block
from ..engine.compiler.settings import check_rates, simulation_settings
from ..rundata import Structural, values_of
from .build import build
from .boundary import STIFF
from .codegen import _joined, block_series, clock_series, generate
from .compilable import block_lowering
from .lowering import LoweringError

# simulation settings a run may change without another structure
SETTINGS = ("start", "stop", "rtol", "atol", "max_step", "step", "output_interval",
            "refine", "event_tol", "max_consecutive_events", "max_steps")


def qualifies(path):
    """Whether an override of `path` can be a FastRuns argument (it may still give None:
    a value that changes the structure, a block inside a subsystem)."""
    parts = path.split(".")
    return (len(parts) == 2 and (parts[0] == "parameters" or
                                 (parts[0] == "simulation" and parts[1] in SETTINGS))
            or len(parts) == 3 and parts[0] == "blocks")


def names_in(raw):
    """The names an unevaluated value reads (its expressions' identifiers, or a chart
    action's: statements); None when it cannot be told (then it reads anything)."""
    if isinstance(raw, str):
        text = "\n".join(line.strip() for line in raw.strip().splitlines())
        for mode in ("eval", "exec"):
            try:
                tree = ast.parse(text, mode=mode)
                return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
            except SyntaxError:
                continue
        return None
    if isinstance(raw, (list, tuple)):
        found = set()
        for item in raw:
            names = names_in(item)
            if names is None:
                return None
            found |= names
        return found
    if isinstance(raw, dict):
        return names_in(list(raw.values()))
    return set()


@dataclass
class RunArgs:
    """What one run's arguments differ in from the first run's (None: the first run's)."""
    params: np.ndarray | None = None
    x0: np.ndarray | None = None
    xd0: np.ndarray | None = None
    settings: object = None  # engine Settings
    data: list | None = None  # arrays, in slot order
    events: tuple | None = None  # (times, block indices)
    series: np.ndarray | None = None
    clock_j: np.ndarray | None = None
    blocks: dict | None = None  # name -> the blocks rebuilt with the run's values


class FastRuns:
    """Runs of `model`'s structure (compiled as `generated`, loaded as `library`) with
    other values: `args(overrides)` gives a run's RunArgs, or None."""

    @classmethod
    def of(cls, model, compilation):
        """The FastRuns of a model just run in accelerated mode (its code is loaded); None
        for scipy's stiff solvers, whose loop is the simulator's."""
        if model.settings.solver in STIFF:
            return None
        generated = generate(model)
        return cls(build(generated.source).library, model, generated, compilation)

    def __init__(self, library, model, generated, compilation):
        self.lib, self.m, self.g = library, model, generated
        self.spec, self.values = compilation.spec, compilation.values
        self.blocks = {b.name: b for b in model.blocks}
        self.index = {b.name: k for k, b in enumerate(model.blocks)}
        self.ports = compilation.built.ports
        self.code = {name: self._code(block) for name, block in self.blocks.items()}
        starts = [generated.offsets[b.name].p0 for b in model.blocks]
        self.psize = {b.name: end - start for b, start, end in
                      zip(model.blocks, starts, starts[1:] + [generated.values.params.size])}
        self.reads = {name: self._reads(bspec, type(self.blocks[name]))
                      for name, bspec in self.spec.blocks.items()}
        top = self.spec.scopes[0].params if self.spec.scopes else {}
        self.param_reads = {k: names_in(v.raw) for k, v in top.items()}
        self.setting_reads = set()
        for value in self.spec.simulation.values():
            self.setting_reads |= names_in(value.raw) or set()

    def _code(self, block):
        return block_lowering(self.m, block, self.g.contexts[block.name], self.index).code

    @staticmethod
    def _reads(bspec, cls):
        """The names a block's parameters read (those evaluated as expressions); None: any."""
        kinds = {p.name: p.kind for p in cls.params}
        found = set()
        for key, value in bspec.params.items():
            if kinds.get(key) == "array_or_file" and names_file(value.raw):
                continue
            if kinds.get(key) in ("value", "scalar", "int", "vectors", "array_or_file"):
                names = names_in(value.raw)
                if names is None:
                    return None
                found |= names
            elif kinds.get(key) in ("string", "data"):
                # literal, or expressions (a function block's; a chart's conditions, timers
                # and actions, whose parameters are folded into its numbers)
                found |= names_in(value.raw) or set()
            elif kinds.get(key) not in ("choice", "names", "bool", "path"):
                return None  # a resource (a robot), or unknown
        return found

    # -- one run ------------------------------------------------------------------------------
    def args(self, overrides):
        """The RunArgs of the run with `overrides` [(path, raw, Loc)], or None."""
        try:
            return self._prepare(overrides)
        except Exception:  # noqa: BLE001 - whatever it is, the general way reports it
            return None

    def _prepare(self, overrides):
        params, blocks, settings = {}, {}, {}
        for path, raw, loc in overrides:
            parts = path.split(".")
            if not qualifies(path):
                return None
            if parts[0] == "parameters":
                params[parts[1]] = Value(raw, loc)
            elif parts[0] == "simulation":
                settings[parts[1]] = Value(raw, loc)
            elif parts[1] in self.spec.blocks and self.spec.blocks[parts[1]].scope == 0:
                blocks.setdefault(parts[1], {})[parts[2]] = Value(raw, loc)
            else:
                return None
        names, changed = self._parameters(params)
        if names is None:
            return None
        values = _with(self.values, scopes=[names, *self.values.scopes[1:]])
        s = None
        if settings or changed & self.setting_reads:
            problems = Problems()
            s = simulation_settings({**self.spec.simulation, **settings},
                                    lambda r: expr.evaluate(r, names, dotted=values.dotted),
                                    problems, self.spec.file)
            if problems or s.solver != self.m.settings.solver:
                return None
        rebuilt = {}
        for name, bspec in self.spec.blocks.items():
            reads = self.reads[name]
            if name in blocks or reads is None or reads & changed:
                spec = _with(bspec, params={**bspec.params, **blocks.get(name, {})})
                block = self._rebuild(spec, values)
                if block is None:
                    return None
                rebuilt[name] = block
        problems = Problems()  # the new values' lengths of time at the new settings' times
        check_rates(s or self.m.settings, [rebuilt.get(b.name, b) for b in self.m.blocks], (),
                    problems, self.spec)
        if problems:
            return None
        return self._args(rebuilt, s)

    def _parameters(self, overrides):
        """The top-level parameters with `overrides` and what depends on them: (names,
        changed names), or (None, None)."""
        top = self.spec.scopes[0].params if self.spec.scopes else {}
        base = self.values.scopes[0] if self.values.scopes else {}
        if not overrides:
            return base, set()
        names, changed = dict(base), set()
        for key, value in top.items():
            reads = self.param_reads[key] if key not in overrides else names_in(
                overrides[key].raw)
            if key in overrides or reads is None or reads & changed:
                raw = overrides[key] if key in overrides else value
                evaluated = expr.evaluate(raw.raw, names, dotted=self.values.dotted,
                                          functions=self.values.functions)
                if np.isnan(np.asarray(evaluated, dtype=float)).any():
                    return None, None
                names[key] = evaluated
                changed.add(key)
        return names, changed

    def _rebuild(self, bspec, values):
        """The block of `bspec` with `values`, bound into the first run's layout, or None
        when its structure differs from the first run's block."""
        old = self.blocks[bspec.name]
        problems = Problems()
        block = build_block(type(old), bspec, self.spec, values, problems)
        ins, outs = block.ports()
        if problems or ({p.name: p for p in ins}, {p.name: p for p in outs}) != \
                self.ports[bspec.name]:
            return None
        shapes = {p: tuple(np.shape(u)) for p, u in zip(self.ports[bspec.name][0], old.u)
                  if u is not None}
        inferred = block.infer(shapes)
        if any(tuple(inferred[p]) != tuple(np.shape(old.y[k])) for k, p in
               enumerate(self.ports[bspec.name][1]) if p in inferred):
            return None
        if (type(block.sample) is not type(old.sample)
                or _size(block.continuous_state()) != old.x.size
                or _size(block.discrete_state()) != old.xd.size
                or not np.array_equal(_dirs(block), _dirs(old))):
            return None
        block.y_flat, block.z, block.du = old.y_flat, old.z, old.du  # du: watched rates
        slots = self.m.slots.get(bspec.name)
        if slots is not None:  # its declared run data, from its values
            try:
                arrays, facts = values_of(block, slots.data, block.p)
            except Structural:
                return None
            if facts != slots.facts:
                return None
            block.v = SimpleNamespace(**{k: np.array(a) for k, a in arrays.items()})
            block.packed = _joined([block.v.__dict__[a.name] for a in slots.data.arrays])
        block.bind(old.u, old.y, old.x, old.dx, old.xd)
        if slots is None:
            block.packed = np.zeros(0)
        try:
            same = self._code(block) == self.code[bspec.name]
        except LoweringError:  # its compiled form fails with these values: the general way
            return None
        return block if same and block.packed.size == self.psize[bspec.name] else None

    def _args(self, rebuilt, settings):
        """The RunArgs of a run with the blocks `rebuilt` and `settings` (None: the first
        run's): the time events, series and data arrays only when they may have changed."""
        m, v = self.m, self.g.values
        out = RunArgs(settings=settings, blocks=rebuilt)
        s = settings or m.settings
        if rebuilt:
            out.params, out.x0, out.xd0 = v.params.copy(), m.x0.copy(), m.xd0.copy()
        for name, block in rebuilt.items():
            p0 = self.g.offsets[name][0]
            out.params[p0:p0 + self.psize[name]] = block.packed
            cs, ds = m.state_slices[name]
            out.x0[cs] = _flat(block.continuous_state())
            out.xd0[ds] = _flat(block.discrete_state())
        blocks = [rebuilt.get(b.name, b) for b in m.blocks]
        for name, low_data in self.g.data_names.items():  # per-run arrays: new values, span
            if low_data and (name in rebuilt or settings is not None):
                out.data = list(v.data) if out.data is None else out.data
                found = blocks[self.index[name]].run_data(s.start, s.stop)
                d0 = self.g.offsets[name][2]
                for k, n in enumerate(low_data):
                    out.data[d0 + k] = np.ascontiguousarray(found[n], dtype=float).ravel()
        if settings is not None or any(overrides(b, "events") for b in rebuilt.values()):
            events = sorted(((float(t), self.index[b.name]) for b in blocks
                             for t in b.events(s.start, s.stop)), key=lambda e: e[0])
            out.events = (np.array([t for t, _ in events], dtype=float),
                          np.array([k for _, k in events], dtype=np.intc))
        if settings is not None or any(isinstance(b.sample, Sample) or
                                       self.g.series_counts[b.name] for b in rebuilt.values()):
            clocks = [b for b in blocks if isinstance(b.sample, Sample)]
            series, out.clock_j = clock_series(clocks, s)
            out.series = np.vstack([series, block_series(blocks, self.g.series_counts, s)])
        return out


def _with(obj, **changes):
    """A shallow copy of `obj` with `changes` (dataclasses.replace without running
    __init__ again: a run makes several)."""
    new = copy.copy(obj)
    new.__dict__.update(changes)
    return new


def _size(x):
    return 0 if x is None else int(np.size(x))


def _flat(x):
    return np.zeros(0) if x is None else np.asarray(x, dtype=float).ravel()


def _dirs(block):
    d = block.zero_crossings()
    return np.zeros(0, np.int8) if d is None else np.asarray(d, dtype=np.int8).ravel()
