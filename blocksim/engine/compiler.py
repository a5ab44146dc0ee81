"""DiagramSpec -> Model: everything is checked and laid out once, before simulating.

Stages (each collects all of its problems and reports them together):
1. robots (library sections) and parameters are evaluated;
2. blocks are built from validated parameters and declare their ports;
3. wires are resolved (one driver per input, every required input wired);
4. algebraic loops are found on the graph of output computations (an edge for every wire
   into an input that the consumer's output depends on at the same instant) and printed as
   the cycle, port by port; then shapes are propagated and checked at both ends of wires;
5. the computations are put in a deterministic dataflow order and split into constant,
   discrete-rate and continuous groups; one signal buffer gives every output a view, every
   input *is* its driver's view, and each block gets its slices of one state vector.
"""
from __future__ import annotations

import dataclasses
import heapq
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..language import expr
from ..block import ALL, CONSTANT, PortError, Sample
from ..language.diagram import NAME_RE, bool_hint, index_text, parse_endpoint, suggest, through_outputs
from ..errors import DiagramError, Problems
from ..util.gcpause import without_gc
from ..language.library import Library, PluginError
from .results import RUN_FILES
from ..params import ParamError
from .solvers import FIXED_STEP, SOLVERS

MAX_STEPS = 10_000_000  # default simulation.max_steps


# names results.npz uses besides the records: the time and the events of hybrid blocks
RESERVED_RECORDS = ("t", "events_t", "events_block")


@dataclass
class Settings:
    start: float
    stop: float
    solver: str
    rtol: float
    atol: float
    max_step: float
    step: float
    output_interval: float | None
    event_tol: float = 1e-10
    max_consecutive_events: int = 1000
    max_steps: int = MAX_STEPS  # most solver steps, result rows, sample hits of a run


@dataclass
class Node:
    """One output computation: a block method producing one or more of its output ports."""
    block: object
    calc: str
    ports: list
    inputs: tuple  # input names the outputs depend on at the same instant
    group: str = "continuous"  # constant / discrete / continuous
    order: int = 0  # declaration index (Model.nodes holds the nodes in dataflow order)

    @property
    def label(self):
        return f"{self.block.name}.{'/'.join(self.ports)}"


@dataclass
class Model:
    """A compiled diagram, ready to simulate (see simulator.simulate)."""
    name: str
    description: str
    file: str
    settings: Settings
    blocks: list
    nodes: list  # all output computations in dataflow order
    signals: np.ndarray
    x0: np.ndarray
    xd0: np.ndarray
    xbuf: np.ndarray
    dxbuf: np.ndarray
    xdbuf: np.ndarray
    outputs: dict  # (block name, port) -> view
    record: dict  # record name -> (view, signal text)
    sinks: list  # (block, [views])
    stops: list  # views
    events: list  # sorted (time, block)
    state_slices: dict  # block name -> (continuous slice, discrete slice)
    hybrid: tuple = ()  # (block, slice of zbuf) of blocks with indicators, in dataflow order
    zbuf: np.ndarray = field(default_factory=lambda: np.zeros(0))  # indicator values
    zdirs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    config: dict = field(default_factory=dict)
    seeds: dict = field(default_factory=dict)
    subsystems: dict = field(default_factory=dict)  # name -> (source, {parameter: value})
    spec: object = None  # the DiagramSpec compiled (its subsystem structure, for drawing)


def _simulation_defaults(sim, evaluate, problems, file):
    def num(key, default, positive=True):
        if key not in sim:
            return default
        v = sim[key]
        if isinstance(v.raw, bool):  # YAML reads yes/no/on/off/true/false as booleans
            problems.add(v.loc.error(f"simulation.{key}: expected a number, got the boolean "
                                     f"{str(v.raw).lower()}"))
            return default
        try:
            x = np.asarray(evaluate(v.raw), dtype=float)
            if x.size != 1:
                raise ValueError(f"expected a single number, got shape {x.shape}")
            x = float(x.reshape(()))
        except expr.Unavailable:  # a parameter it uses failed: reported there
            return default
        except (expr.ExprError, ValueError, TypeError) as e:
            problems.add(v.loc.error(f"simulation.{key}: {e}"))
            return default
        if not math.isfinite(x) or (positive and x <= 0):
            problems.add(v.loc.error(f"simulation.{key} must be a {'positive ' if positive else ''}"
                                     f"finite number, got {x:g}"))
            return default
        return x

    start = num("start", 0.0, positive=False)
    if "stop" not in sim:
        problems.add(DiagramError("simulation.stop is required", file=file,
                                  hint="add `simulation: {stop: 10}` (the end time, in s)"))
        stop = start + 1.0
    else:
        stop = num("stop", start + 1.0, positive=False)
        if stop <= start:
            problems.add(sim["stop"].loc.error(f"simulation.stop ({stop:g}) must be after start ({start:g})"))
            stop = start + 1.0
    solver = "rk45"
    if "solver" in sim:
        v = sim["solver"]
        if v.raw not in SOLVERS:
            problems.add(v.loc.error(f"unknown solver {v.raw!r}{suggest(v.raw, SOLVERS)}",
                                     hint=bool_hint(v.raw) or "solvers: " + ", ".join(SOLVERS)))
        else:
            solver = v.raw
    span = stop - start
    max_events = num("max_consecutive_events", 1000)
    if max_events != int(max_events):
        problems.add(sim["max_consecutive_events"].loc.error(
            f"simulation.max_consecutive_events must be a whole number, got {max_events:g}"))
    settings = Settings(start=start, stop=stop, solver=solver,
                        rtol=num("rtol", 1e-3), atol=num("atol", 1e-6),
                        max_step=num("max_step", span / 50), step=num("step", span / 1000),
                        output_interval=num("output_interval", None),
                        event_tol=num("event_tol", 1e-10),
                        max_consecutive_events=int(max_events))
    max_steps = num("max_steps", MAX_STEPS)
    if max_steps != int(max_steps):
        problems.add(sim["max_steps"].loc.error(
            f"simulation.max_steps must be a whole number, got {max_steps:g}"))
    else:
        settings.max_steps = int(max_steps)
        _check_budget(settings, sim, problems, file)
    return settings


def _check_budget(s, sim, problems, file):
    """Refuse settings that imply more solver steps or result rows than simulation.max_steps
    (a grid of 10^15 rows would try to allocate petabytes; a step of 1e-12 s never ends)."""
    span = s.stop - s.start
    fixed = s.solver in FIXED_STEP
    implied = [("step", "steps of the fixed-step solver", span / s.step)] if fixed else \
        [("max_step", "steps at least (no step is longer than max_step)", span / s.max_step)]
    if s.output_interval:
        implied.append(("output_interval", "result rows", span / s.output_interval + 1))
    for key, what, count in implied:
        if count > s.max_steps:
            where = sim.get(key) or sim.get("stop")  # a default comes from the stop time
            message = (f"simulation.{key} = {getattr(s, key):g} over {span:g} s means "
                       f"{count:.3g} {what}, more than simulation.max_steps = {s.max_steps:,}")
            hint = f"use a larger {key}, or raise simulation.max_steps if you mean it"
            problems.add(where.loc.error(message, hint=hint) if where else
                         DiagramError(message, file=file, hint=hint))


def _check_rates(settings, blocks, events, problems, spec):
    """Refuse discrete rates and source switches that would stop the solver more often than
    simulation.max_steps times: each is an event the solver must land on."""
    span = settings.stop - settings.start
    for block in blocks:
        if isinstance(block.sample, Sample) and span / block.sample.period > settings.max_steps:
            problems.add(spec.blocks[block.name].loc.error(
                f"sample period {block.sample.period:g} s over {span:g} s means "
                f"{span / block.sample.period:.3g} sample hits, more than "
                f"simulation.max_steps = {settings.max_steps:,}", block=block.name,
                hint="use a longer period, or raise simulation.max_steps if you mean it"))
    if len(events) > settings.max_steps:
        problems.add(DiagramError(
            f"the sources switch {len(events):,} times, more than simulation.max_steps = "
            f"{settings.max_steps:,}", file=spec.file,
            hint="raise simulation.max_steps if you mean it"))


class _Recording(dict):
    """Names for an expression that note in `used` the ones it reads (name -> value); the
    names in `late` exist but have no value yet (parameters that need a robot)."""

    def __init__(self, names, used, late):
        super().__init__(names)
        self.used, self.late = used, late

    def __contains__(self, key):
        return super().__contains__(key) or key in self.late

    def __getitem__(self, key):
        if key in self.late:
            raise expr.ExprError(f"parameter '{key}' cannot be used here: robots are built "
                                 "before the parameters that use a robot's pose (or that fail)")
        value = super().__getitem__(key)
        self.used[key] = value
        return value


class _Reported(Exception):
    """A problem already added to the compiler's list (stops the current item only)."""


class _Compiler:
    def __init__(self, spec, library):
        self.spec = spec
        self.lib = library
        self.problems = Problems()
        self.resources = {}  # section -> {name: object}
        self.constants = {}  # bare constant names (robot poses all robots agree on)
        self.dotted = {}  # robot name -> {pose: value}
        self.scope_names = []
        # robots built from the same raw options are the same data: kept between specs
        # re-parameterised into this compiler's layout (see `reparameterise`)
        self.built_sections = {}

    # -- stage 1: robots and parameters -----------------------------------------------------
    def evaluate(self, raw, names, loc, what):
        try:
            return expr.evaluate(raw, names, dotted=self.dotted)
        except expr.Unavailable:
            raise
        except expr.ExprError as e:
            raise loc.error(f"{what}: {e}") from None

    def build_sections(self):
        robots = {}
        if self.spec.robots:
            builder = self.lib.section_builder("robots")
            if builder is None:
                self.problems.add(next(iter(self.spec.robots.values()))["__loc__"].error(
                    "this block library has no robots"))
                return
            base_dir = _dir_of(self.spec.file)
            parameters, late = self.parameters_before_robots()
            for name, options in self.spec.robots.items():
                key = (base_dir, {k: v.raw for k, v in options.items() if k != "__loc__"})
                cached = self.built_sections.get(name)
                if cached is not None and _same_data(cached[0], key) and all(
                        _same_data(v, parameters.get(k)) for k, v in cached[2].items()):
                    robots[name], poses = cached[1]
                else:
                    used = {}
                    try:
                        robots[name], poses = builder(name, options,
                                                      self._section_eval(parameters, late,
                                                                         used),
                                                      base_dir=base_dir)
                    except DiagramError as e:
                        self.problems.add(e)
                        continue
                    self.built_sections[name] = (key, (robots[name], poses), used)
                self.dotted[name] = poses
        self.resources["robots"] = robots
        # A bare pose name is a constant only when every robot agrees on it.
        if self.dotted:
            common = set.intersection(*(set(p) for p in self.dotted.values()))
            for pose in common:
                values = [np.asarray(p[pose]) for p in self.dotted.values()]
                if all(v.shape == values[0].shape and np.array_equal(v, values[0]) for v in values):
                    self.constants[pose] = values[0]

    def parameters_before_robots(self):
        """The diagram's top-level parameters that robots may use: those whose values need
        no robot (a parameter may use a robot's pose, so parameters in general come after
        the robots). A parameter that fails here is left out; evaluate_scopes reports it."""
        names, late = {}, set()
        if self.spec.scopes:
            for key, value in self.spec.scopes[0].params.items():
                try:
                    names[key] = expr.evaluate(value.raw, names)
                except expr.ExprError:
                    late.add(key)
        return names, late

    def _section_eval(self, parameters, late, used):
        """The evaluator of a section's options (robots: links, gravity, base, perturb...)
        at their locations, with `parameters`; the ones an option uses go into `used`."""
        names = _Recording(parameters, used, late)
        return lambda value, what: self.evaluate(value.raw, names, value.loc, what)

    def evaluate_scopes(self):
        for scope in self.spec.scopes:
            names = dict(self.constants)
            parent = self.scope_names[scope.parent] if scope.parent is not None else None
            for key in scope.overrides:
                if key not in scope.params:
                    v = scope.overrides[key]
                    self.problems.add(v.loc.error(f"the subsystem has no parameter '{key}'"
                                                  f"{suggest(key, scope.params)}"))
            for key, value in scope.params.items():
                source, env = (scope.overrides[key], parent) if key in scope.overrides else (value, names)
                try:
                    expr.check_not_reserved(key)
                    if key in self.dotted:
                        raise expr.ExprError(f"'{key}' is also the name of a robot")
                    if any(key in poses for poses in self.dotted.values()):
                        raise expr.ExprError(f"'{key}' is a robot's named pose: a parameter "
                                             "may not reuse a constant's name")
                    evaluated = self.evaluate(source.raw, env, source.loc, f"parameter '{key}'")
                    if isinstance(evaluated, np.ndarray) and np.isnan(evaluated).any():
                        raise source.loc.error(f"parameter '{key}' is not a number (NaN)")
                    names[key] = evaluated
                except expr.Unavailable:  # it uses a failed parameter, reported already
                    names[key] = expr.FAILED
                except expr.ExprError as e:
                    self.problems.add(value.loc.error(f"parameter '{key}': {e}"))
                    names[key] = expr.FAILED
                except DiagramError as e:
                    self.problems.add(e)
                    names[key] = expr.FAILED
            self.scope_names.append(names)

    # -- stage 2: blocks ---------------------------------------------------------------------
    def build_blocks(self):
        self.blocks = {}
        self.ports = {}  # name -> (inputs {name: In}, outputs {name: Out})
        for spec in self.spec.blocks.values():
            try:
                cls = self.lib.block_class(spec.type)
            except PluginError as e:
                self.problems.add(spec.loc.error(str(e), block=spec.name))
                continue
            if cls is None:
                self.problems.add(spec.loc.error(
                    f"unknown block type '{spec.type}'{suggest(spec.type, self.lib.types)}",
                    block=spec.name, hint="`blocksim blocks` lists the block types"))
                continue
            try:
                block = self.build_block(cls, spec)
                ins, outs = block.ports()
            except (_Reported, expr.Unavailable):  # reported already
                continue
            except DiagramError as e:
                self.problems.add(e)
                continue
            except ParamError as e:
                loc = spec.params[e.param].loc if e.param in spec.params else spec.loc
                self.problems.add(loc.error(e.message, block=spec.name, param=e.param))
                continue
            self.blocks[spec.name] = block
            self.ports[spec.name] = ({p.name: p for p in ins}, {p.name: p for p in outs})

    def build_block(self, cls, spec):
        schema = {p.name: p for p in cls.params}
        names = self.scope_names[spec.scope]
        values, bad = {}, False
        for key, value in spec.params.items():
            if key not in schema:
                self.problems.add(value.loc.error(
                    f"unknown parameter '{key}' (type {spec.type}){suggest(key, schema)}",
                    block=spec.name, hint=f"parameters: {', '.join(schema) or 'none'}"))
                bad = True
        for name, param in schema.items():
            if name not in spec.params:
                if param.required:
                    self.problems.add(spec.loc.error(f"missing required parameter '{name}'",
                                                     block=spec.name))
                    bad = True
                    continue
                raw, loc = param.default, spec.loc
            else:
                raw, loc = spec.params[name].raw, spec.params[name].loc
            try:
                values[name] = self.param_value(param, raw, names, loc, spec)
            except expr.Unavailable:  # it uses a failed parameter, reported already
                bad = True
            except DiagramError as e:
                self.problems.add(e)
                bad = True
        if bad:
            raise _Reported
        values["_names"] = names
        values["_dotted"] = self.dotted  # ROBOT.pose in expressions (a function block's)
        return cls(spec.name, values)

    def param_value(self, param, raw, names, loc, spec):
        where = dict(block=spec.name, param=param.name)
        kind = param.kind
        if kind == "resource":
            table = self.resources.get(param.section, {})
            if not isinstance(raw, str) or raw not in table:
                raise loc.error(f"no {param.section[:-1] if param.section.endswith('s') else param.section}"
                                f" named {raw!r} in the diagram's '{param.section}' section"
                                f"{suggest(raw, table)}", **where)
            return table[raw]
        if raw is None and param.default is None:  # an optional parameter left unset
            return None
        if kind == "path":
            try:
                name = param.convert(raw)
            except ValueError as e:
                raise loc.error(str(e), **where) from None
            # relative to the file that wrote it; a --set value: to the diagram
            written_in = loc.file if loc.file and Path(loc.file).is_file() else self.spec.file
            return _dir_of(written_in) / name
        if kind in ("value", "scalar", "int") and raw is not param.default:
            try:
                raw = expr.evaluate(raw, names, dotted=self.dotted)
            except expr.Unavailable:
                raise
            except expr.ExprError as e:
                raise loc.error(str(e), **where) from None
        elif kind in ("value", "scalar", "int"):
            raw = np.asarray(raw, dtype=float) if not isinstance(raw, str) else raw
        try:
            return param.convert(raw)
        except ValueError as e:
            hint = bool_hint(raw) if kind in ("string", "choice") else None
            if kind == "names" and isinstance(raw, list):
                hint = next((bool_hint(v) for v in raw if bool_hint(v)), None)
            raise loc.error(str(e), hint=hint, **where) from None

    # -- stage 3: wires and shapes ----------------------------------------------------------
    def resolve_wires(self):
        self.drivers = {}  # (dst block, in port) -> (src block, out port, index, loc)
        wired = set()  # inputs with a wire whose source is wrong or failed: not unconnected
        for w in self.spec.wires:
            src, dst = self.wire_end(w.src, output=True), self.wire_end(w.dst, output=False)
            if dst is None:
                continue
            key = (w.dst.block, dst)
            if src is None:
                wired.add(key)
                continue
            if key in self.drivers:
                first = self.drivers[key][3]
                self.problems.add(w.loc.error(
                    f"input '{w.dst.block}.{dst}' has two drivers (also wired at line {first.line})",
                    block=w.dst.block, port=dst, hint="each input has exactly one driver"))
                continue
            self.drivers[key] = (w.src.block, src, w.src.index, w.loc)
        for name, (ins, _) in self.ports.items():
            for port in ins.values():
                if (name, port.name) not in self.drivers and (name, port.name) not in wired \
                        and not port.optional:
                    self.problems.add(self.spec.blocks[name].loc.error(
                        "input is not connected", block=name, port=port.name,
                        hint=f"wire a signal to it, or feed it a constant: e.g. the block "
                             f"`Zero: {{type: constant, value: 0}}` and the wire "
                             f"`Zero -> {name}.{port.name}`"))

    def wire_end(self, ep, output):
        """The port name of a wire's end, or None when it is wrong (reported here) or on a
        block that failed to build (reported already)."""
        try:
            return self.endpoint(ep, output)
        except _Reported:
            return None
        except DiagramError as e:
            self.problems.add(e)
            return None

    def endpoint(self, ep, output):
        if ep.block not in self.ports:
            if ep.block in self.spec.blocks:  # the block failed to build: already reported
                raise _Reported
            raise ep.loc.error(f"unknown block '{ep.block}'{suggest(ep.block, self.spec.blocks)}")
        ports = self.ports[ep.block][1 if output else 0]
        side = "output" if output else "input"
        if ep.port is None:
            if len(ports) != 1:
                raise ep.loc.error(f"block has {len(ports)} {side}s ({', '.join(ports) or 'none'}): "
                                   f"name one, e.g. '{ep.block}.{next(iter(ports), 'port')}'",
                                   block=ep.block)
            return next(iter(ports))
        if ep.port not in ports:
            raise ep.loc.error(f"no {side} named '{ep.port}'{suggest(ep.port, ports)}"
                               f" ({side}s: {', '.join(ports) or 'none'})",
                               block=ep.block, port=ep.port)
        return ep.port

    def propagate_shapes(self):
        """Output shapes from the declared ones along the wires (`infer` of each block once all
        its inputs are known). A loop whose shape nothing outside fixes stalls that; then the
        first block of it (in declaration order) with an initial value assumes the shapes
        its x0 implies (`initial_shapes`: scalar x0, scalar signal) and the propagation is
        repeated. When the loop comes back with other shapes for that block (a scalar x0 in a
        loop of vectors), those replace the assumption, until the shapes agree."""
        assumed = {}  # block name -> {output port: shape}
        found = self.problems
        for _ in range(2 * len(self.ports) + 2):
            self.problems = Problems()
            pending = self._propagate(assumed)
            attempt, self.problems = self.problems, found
            changed = {name: {port: self.out_shapes[(name, port)] for port in shapes}
                       for name, shapes in assumed.items()
                       if any(self.out_shapes[(name, port)] != shape
                              for port, shape in shapes.items())}
            if changed:
                assumed.update(changed)
                continue
            if attempt:
                for error in attempt.errors:
                    if assumed:
                        error.hint = _join(error.hint, self.assumption_note(assumed))
                    self.problems.add(error)
                return
            if not pending:
                return
            candidate = next((name for name in self.ports if name in pending
                              and name not in assumed and self.blocks[name].initial_shapes()),
                             None)
            if candidate is None:
                self.report_shape_loops(pending)
                return
            assumed[candidate] = {port: tuple(shape) for port, shape in
                                  self.blocks[candidate].initial_shapes().items()}
        self.report_shape_loops(pending)

    def _propagate(self, assumed):
        """One pass of shape inference from the declared and assumed output shapes; returns
        the blocks left pending (their inputs' shapes never became known)."""
        self.out_shapes = {}
        for name, (_, outs) in self.ports.items():
            for port in outs.values():
                if port.shape is not None:
                    self.out_shapes[(name, port.name)] = tuple(port.shape)
            for port, shape in assumed.get(name, {}).items():
                self.out_shapes[(name, port)] = shape
        pending = set(self.ports)
        order = list(self.ports)
        progress = True
        while pending and progress:
            progress = False
            for name in order:
                if name not in pending:
                    continue
                shapes = self.input_shapes(name)
                if shapes is None:
                    continue
                pending.discard(name)
                progress = True
                self.infer_block(name, shapes)
        return pending

    def assumption_note(self, assumed):
        """Which shapes came from initial values, and the x0 that would say otherwise."""
        parts = [f"'{name}' took its shape {shape} from x0" for name, shapes in assumed.items()
                 for shape in shapes.values()]
        return ("in a loop, " + ", ".join(parts) + ": if the signal is meant to be a vector, "
                "give x0 its shape, e.g. `x0: [0, 0, 0]` for three elements")

    def report_shape_loops(self, pending):
        """One error per loop whose shapes could not be determined, naming its blocks in
        order. networkx is imported only here, on the error path (see report_loops)."""
        import networkx as nx
        graph = nx.DiGraph()
        for (dst, _), drv in self.drivers.items():
            if dst in pending and drv[0] in pending:
                graph.add_edge(drv[0], dst)
        order = {name: i for i, name in enumerate(self.ports)}
        reported = False
        for comp in sorted(nx.strongly_connected_components(graph),
                           key=lambda c: min(order[n] for n in c)):
            if len(comp) == 1 and not graph.has_edge(*(2 * tuple(comp))):
                continue
            start = min(comp, key=order.get)
            cycle = [edge[0] for edge in nx.find_cycle(graph.subgraph(comp), source=start)]
            self.problems.add(self.spec.blocks[start].loc.error(
                "cannot determine the shape of the signals in the loop "
                + " -> ".join(cycle + [cycle[0]]) + ": nothing outside the loop fixes it and "
                "no block of it has an initial value (x0)", block=start,
                hint="start the loop with a block whose x0 has the signal's shape, e.g. "
                     "`{type: unit_delay, period: 0.1, x0: 0}` for a scalar or "
                     "`x0: [0, 0, 0]` for three elements (or an integrator with that x0)"))
            reported = True
        if not reported:
            for name in pending:
                missing = [p for p in self.ports[name][1] if (name, p) not in self.out_shapes]
                self.problems.add(self.spec.blocks[name].loc.error(
                    f"cannot determine the shape of output(s) {', '.join(missing)}",
                    block=name, hint="give an initial value with the signal's shape "
                                     "(e.g. an integrator's x0)"))

    def input_shapes(self, name):
        """Shapes of all inputs of a block, or None while some driver's shape is unknown."""
        shapes = {}
        ins = self.ports[name][0]
        for port in ins.values():
            drv = self.drivers.get((name, port.name))
            if drv is None:
                shapes[port.name] = tuple(port.shape) if port.shape is not None else ()
                continue
            src_shape = self.out_shapes.get((drv[0], drv[1]))
            if src_shape is None:
                return None
            shapes[port.name] = self.sliced_shape(src_shape, drv)
        return shapes

    def sliced_shape(self, shape, drv):
        """The shape a wire delivers: its driver's, or that of the element or slice it
        selects (a problem is added when it selects nothing)."""
        index = drv[2]
        if index is None:
            return shape
        error = _index_error(shape, index, f"{drv[0]}.{drv[1]}")
        if error is not None:
            self.problems.add(drv[3].error(error, block=drv[0], port=drv[1]))
        if len(shape) != 1:
            return shape
        return () if isinstance(index, int) else (len(range(shape[0])[slice(*index)]),)

    def infer_block(self, name, shapes):
        ins, outs = self.ports[name]
        block = self.blocks[name]
        ok = True
        for port in ins.values():
            want, got = port.shape, shapes[port.name]
            if want is not None and tuple(want) != got:
                drv = self.drivers.get((name, port.name))
                src = f"'{drv[0]}.{drv[1]}'" if drv else "its default"
                loc = drv[3] if drv else self.spec.blocks[name].loc
                self.problems.add(loc.error(
                    f"shape mismatch: {src} has shape {got} but input '{name}.{port.name}' "
                    f"expects {tuple(want)}", block=name, port=port.name))
                ok = False
        if not ok:
            return
        try:
            inferred = block.infer(shapes)
        except PortError as e:  # naming both ends of every wire into the block, with shapes
            drv = self.drivers.get((name, e.port))
            loc = drv[3] if drv else self.spec.blocks[name].loc
            inputs = ", ".join(f"{p} <- {self.driver_text(name, p) or 'default'} {shapes[p]}"
                               for p in ins)
            self.problems.add(loc.error(f"{e.message} (inputs: {inputs})", block=name,
                                        port=e.port))
            return
        except ParamError as e:
            spec = self.spec.blocks[name]
            loc = spec.params[e.param].loc if e.param in spec.params else spec.loc
            self.problems.add(loc.error(e.message, block=name, param=e.param))
            return
        for port in outs.values():
            if port.shape is None:
                self.out_shapes[(name, port.name)] = tuple(inferred[port.name])

    # -- stage 4: the computation graph ------------------------------------------------------
    def build_nodes(self):
        nodes, node_of = [], {}
        for name, block in self.blocks.items():
            ins, outs = self.ports[name]
            calcs = {}
            for port in outs.values():
                if port.aliased:
                    continue
                calcs.setdefault(port.calc, []).append(port)
            for calc, ports in calcs.items():
                deps = set()
                for port in ports:
                    deps.update(ins if port.feedthrough == ALL else port.feedthrough)
                node = Node(block, calc, [p.name for p in ports], tuple(d for d in ins if d in deps))
                node.order = len(nodes)
                nodes.append(node)
                for p in ports:
                    node_of[(name, p.name)] = node
        edges = {}  # (driver node, consumer node) -> (driver port, consumer port, wire location)
        for node in nodes:
            for inp in node.inputs:
                drv = self.drivers.get((node.block.name, inp))
                if drv is None:
                    continue
                src = node_of.get((drv[0], drv[1]))
                if src is not None:
                    edges[(src.order, node.order)] = (f"{drv[0]}.{drv[1]}",
                                                      f"{node.block.name}.{inp}", drv[3])
        order = _topological_order(len(nodes), edges)
        if order is None:
            self.report_loops(edges)
            self.problems.check()
        self.nodes = [nodes[i] for i in order]
        self.node_of = node_of

    def report_loops(self, edges):
        """One error per algebraic loop, printing the cycle port by port. networkx finds the
        strongly connected components and a cycle in each; it is imported only here, on the
        error path, because its import costs more than compiling most diagrams."""
        import networkx as nx
        graph = nx.DiGraph(list(edges))
        for comp in nx.strongly_connected_components(graph):
            if len(comp) == 1 and not graph.has_edge(*(2 * tuple(comp))):
                continue
            cycle = nx.find_cycle(graph.subgraph(comp))
            steps = [edges[edge[:2]] for edge in cycle]
            self.problems.add(steps[0][2].error(
                "algebraic loop (a cycle through direct-feedthrough ports):\n    "
                + "\n    ".join(f"{src} -> {dst}" for src, dst, _ in steps),
                hint="insert a unit_delay or zoh (or a block with state) in the loop, "
                     "or check the blocks' feedthrough"))

    # -- stage 5: layout -----------------------------------------------------------------------
    def layout(self):
        """One signal buffer and one state vector for the whole diagram, a view per output."""
        sizes = {}
        total = 0
        for name, (_, outs) in self.ports.items():
            for port in outs.values():
                if not port.aliased:
                    size = int(np.prod(self.out_shapes[(name, port.name)], dtype=int))
                    sizes[(name, port.name)] = (total, size)
                    total += size
        signals = np.zeros(total)
        # continuous and discrete states
        xc, xd = _initial_states(self.blocks)
        slices, nc, nd = {}, 0, 0
        for name, c, d in zip(self.blocks, xc, xd):
            slices[name] = (slice(nc, nc + c.size), slice(nd, nd + d.size))
            nc += c.size
            nd += d.size
        x0, xd0 = _joined(xc), _joined(xd)
        xbuf, dxbuf, xdbuf = x0.copy(), np.zeros_like(x0), xd0.copy()
        self.layout_indicators()
        views = {}
        for name, (_, outs) in self.ports.items():
            cs, ds = slices[name]
            for port in outs.values():
                shape = self.out_shapes[(name, port.name)]
                if port.state is not None:
                    base = xbuf[cs] if port.state is True else xbuf[cs][port.state]
                    views[(name, port.name)] = base.reshape(shape)
                elif port.dstate is not None:
                    base = xdbuf[ds] if port.dstate is True else xdbuf[ds][port.dstate]
                    views[(name, port.name)] = base.reshape(shape)
                else:
                    start, size = sizes[(name, port.name)]
                    views[(name, port.name)] = signals[start:start + size].reshape(shape)
        self.sizes, self.signals, self.views, self.slices = sizes, signals, views, slices
        self.x0, self.xd0, self.xbuf, self.dxbuf, self.xdbuf = x0, xd0, xbuf, dxbuf, xdbuf
        self.bind_blocks()

    def bind_blocks(self):
        """Give every block its views: inputs are their drivers' views, outputs and states
        are slices of the shared buffers laid out by `layout`."""
        sizes, views, signals, xbuf, dxbuf, xdbuf = (self.sizes, self.views, self.signals,
                                                     self.xbuf, self.dxbuf, self.xdbuf)
        for name, block in self.blocks.items():
            ins, outs = self.ports[name]
            own = [sizes[(name, p)] for p in outs if (name, p) in sizes]
            if own:  # the block's computed outputs, consecutive in port order
                block.y_flat = signals[own[0][0]:own[-1][0] + own[-1][1]]
            u = tuple(self.input_view(name, p, views) for p in ins.values())
            y = tuple(views[(name, p)] for p in outs)
            cs, ds = self.slices[name]
            block.bind(u, y, xbuf[cs], dxbuf[cs], xdbuf[ds])

    def layout_indicators(self):
        """One buffer for every block's zero-crossing indicators; each block gets its view
        `z`. Handlers run in dataflow order: blocks whose outputs are all state (an
        integrator) first, the others in the order their first output is computed."""
        first = {}
        for k, node in enumerate(self.nodes):
            first.setdefault(node.block.name, k)
        dirs, entries, total = [], [], 0
        # sorted() is stable: blocks of equal rank keep their declaration order
        for name in sorted(self.blocks, key=lambda b: first.get(b, -1)):
            block = self.blocks[name]
            d = block.zero_crossings()
            if d is None:
                continue
            d = np.asarray(d, dtype=np.int8).ravel()
            entries.append((block, slice(total, total + d.size)))
            dirs.append(d)
            total += d.size
        self.zbuf = np.zeros(total)
        self.zdirs = np.concatenate(dirs) if dirs else np.zeros(0, dtype=np.int8)
        for block, sl in entries:
            block.z = self.zbuf[sl]
        self.hybrid = tuple(entries)

    def input_view(self, name, port, views):
        drv = self.drivers.get((name, port.name))
        if drv is None:
            if port.default is None:  # the block supplies the value itself (e.g. table's t)
                return None
            shape = tuple(port.shape) if port.shape is not None else ()
            view = np.full(shape, float(port.default))
            view.flags.writeable = False
            return view
        return _indexed(views[(drv[0], drv[1])], drv[2])

    def classify(self):
        """Constant nodes are computed once; discrete ones at their hits; the rest always."""
        constant = set()
        for node in self.nodes:
            block = node.block
            name = block.name
            if block.sample == CONSTANT:
                constant.add(id(node))
                node.group = "constant"
                continue
            if isinstance(block.sample, Sample):
                node.group = "discrete"
                continue
            cs, ds = self.slices[name]
            stateless = cs.stop == cs.start and ds.stop == ds.start
            if stateless and not block.time_dependent and not block.stops:
                drivers = [self.drivers.get((name, i)) for i in self.ports[name][0]]
                srcs = [self.node_of.get((d[0], d[1])) for d in drivers if d is not None]
                if all(s is not None and id(s) in constant for s in srcs):
                    constant.add(id(node))
                    node.group = "constant"

    def records(self):
        record = {}
        for key, value in self.spec.record.items():
            if not isinstance(key, str) or not NAME_RE.match(key) or key in RESERVED_RECORDS:
                self.problems.add(value.loc.error(f"invalid record name {key!r}: use an identifier "
                                                  "other than " + ", ".join(RESERVED_RECORDS),
                                                  hint=bool_hint(key)))
                continue
            try:
                record[key] = (self.signal_view(value.raw, value.loc), value.raw)
            except DiagramError as e:
                self.problems.add(e)
        sinks, stops = [], []
        for name, block in self.blocks.items():
            ins = self.ports[name][0]
            if block.records_inputs:
                sinks.append((block, [block.u[i] for i in range(len(ins))]))
                block.signal_names = tuple(self.driver_text(name, port) for port in ins)
            if block.stops:
                stops.append(block.u[0])
        self.check_files(block for block, _ in sinks)
        return record, sinks, stops

    def check_files(self, sinks):
        """No two blocks write the same file, and none writes one of the run's own files
        (compared without case: some file systems do not tell them apart)."""
        owners = {name.lower(): None for name in RUN_FILES}
        for block in sinks:
            for file in block.files():
                key = file.lower()
                if key not in owners:
                    owners[key] = block.name
                    continue
                loc = self.spec.blocks[block.name].loc
                if owners[key] is None:
                    self.problems.add(loc.error(
                        f"writes '{file}', a file the run itself writes",
                        block=block.name, hint="the run's files: " + ", ".join(RUN_FILES)))
                else:
                    self.problems.add(loc.error(
                        f"writes '{file}', which block '{owners[key]}' writes too",
                        block=block.name, hint="give each block its own file name"))

    def driver_text(self, name, port):
        """The signal wired to an input as a diagram writes it ('Robot.q[0:3]'), or ''."""
        drv = self.drivers.get((name, port))
        return "" if drv is None else f"{drv[0]}.{drv[1]}{index_text(drv[2])}"

    def signal_view(self, text, loc):
        ep = through_outputs(self.spec.subsystems, parse_endpoint(text, loc))
        if ep.block not in self.ports:
            raise loc.error(f"unknown block '{ep.block}'{suggest(ep.block, self.ports)}")
        port = self.endpoint(ep, output=True)
        view = self.views[(ep.block, port)]
        if ep.index is None:
            return view
        error = _index_error(view.shape, ep.index, f"{ep.block}.{port}")
        if error is not None:
            raise loc.error(error)
        return _indexed(view, ep.index)

    # -- whole compilations ------------------------------------------------------------------
    def settings(self):
        return _simulation_defaults(self.spec.simulation, lambda raw: expr.evaluate(
            raw, self.scope_names[0] if self.scope_names else {}, dotted=self.dotted),
            self.problems, self.spec.file)

    def values_and_blocks(self, check=True):
        """Stages 1 and 2 on `self.spec` (robots, parameters, settings, blocks), each one's
        problems reported together (unless `check` is false: the caller goes on to the wires,
        whose problems are reported with the blocks'); returns the Settings."""
        self.build_sections()
        self.problems.check()
        self.evaluate_scopes()
        settings = self.settings()
        self.build_blocks()
        if check:
            self.problems.check()
        return settings

    def compile(self):
        """Every stage, on `self.spec`: the Model."""
        with expr.shared_budget():  # the diagram's values are bounded together
            return self._compile()

    def _compile(self):
        settings = self.values_and_blocks(check=False)
        self.resolve_wires()  # skips the ends on blocks that failed to build
        self.problems.check()
        self.build_nodes()  # algebraic loops first: a feedthrough cycle also stalls shape inference
        self.propagate_shapes()
        self.problems.check()
        self.layout()
        self.classify()
        return self.model(settings)

    def model(self, settings):
        record, sinks, stops = self.records()
        self.problems.check()
        spec = self.spec
        # by time only (stable: blocks switching at the same time keep declaration order)
        events = sorted(((float(t), b) for b in self.blocks.values()
                         for t in b.events(settings.start, settings.stop)), key=lambda e: e[0])
        _check_rates(settings, self.blocks.values(), events, self.problems, spec)
        self.problems.check()
        return Model(
            name=spec.name, description=spec.description, file=spec.file,
            settings=settings, blocks=list(self.blocks.values()), nodes=self.nodes,
            signals=self.signals, x0=self.x0, xd0=self.xd0, xbuf=self.xbuf, dxbuf=self.dxbuf,
            xdbuf=self.xdbuf, outputs=self.views, record=record, sinks=sinks, stops=stops,
            events=events, state_slices=self.slices, config=_config(spec, settings),
            hybrid=self.hybrid, zbuf=self.zbuf, zdirs=self.zdirs, spec=spec,
            subsystems={name: (sub.source, {k: self.scope_names[sub.scope][k]
                                            for k in spec.scopes[sub.scope].params})
                        for name, sub in spec.subsystems.items()},
        )

    _SPEC_STATE = ("spec", "problems", "resources", "constants", "dotted", "scope_names",
                   "blocks", "ports", "out_shapes", "x0", "xd0", "nodes", "node_of", "hybrid",
                   "zbuf", "zdirs")

    def reparameterise(self, spec):
        """A Model of `spec` in this compiler's layout (its buffers, views and execution
        order), or None when `spec` differs in structure from the spec compiled last: other
        wires or blocks, or a block whose type, ports (shapes, feedthrough, state aliases),
        inferred output shapes, state sizes, sample time or flags differ. Values are
        evaluated and checked as by `compile` (DiagramErrors are raised the same way); the
        robots of the `robots:` section are rebuilt only when their options changed."""
        if spec.wires is not self.spec.wires and spec.wires != self.spec.wires:
            return None
        if spec.blocks.keys() != self.spec.blocks.keys():
            return None
        kept = {name: getattr(self, name) for name in self._SPEC_STATE}
        try:
            with expr.shared_budget():
                model = self._reparameterise(spec)
        except BaseException:
            self.__dict__.update(kept)
            raise
        if model is None:
            self.__dict__.update(kept)
        return model

    def _reparameterise(self, spec):
        old_blocks, old_ports, old_shapes = self.blocks, self.ports, self.out_shapes
        self.spec, self.problems = spec, Problems()
        self.resources, self.constants, self.dotted, self.scope_names = {}, {}, {}, []
        settings = self.values_and_blocks()
        if any(_block_structure(block, self.ports[name])
               != _block_structure(old_blocks[name], old_ports[name])
               for name, block in self.blocks.items()):
            return None
        self.propagate_shapes()  # every block's `infer`, with the inputs' (unchanged) shapes
        self.problems.check()
        if self.out_shapes != old_shapes:
            return None
        xc, xd = _initial_states(self.blocks)
        for name, c, d in zip(self.blocks, xc, xd):
            cs, ds = self.slices[name]
            if c.size != cs.stop - cs.start or d.size != ds.stop - ds.start:
                return None
        self.x0, self.xd0 = _joined(xc), _joined(xd)
        # the buffers as a fresh layout has them
        self.signals[:] = 0.0
        self.xbuf[:] = self.x0
        self.dxbuf[:] = 0.0
        self.xdbuf[:] = self.xd0
        self.nodes = [dataclasses.replace(n, block=self.blocks[n.block.name]) for n in self.nodes]
        self.node_of = {(n.block.name, p): n for n in self.nodes for p in n.ports}
        zdirs = self.zdirs
        self.layout_indicators()  # the new blocks' zero-crossing indicators, before binding
        if not np.array_equal(self.zdirs, zdirs):
            return None
        self.bind_blocks()
        return self.model(settings)


def _join(hint, note):
    return f"{hint}; {note}" if hint else note


def _topological_order(n, edges):
    """Kahn's algorithm over nodes 0..n-1, always taking the lowest-numbered ready node
    (declaration order), so the schedule is deterministic; None when a cycle remains."""
    succ = [[] for _ in range(n)]
    indegree = [0] * n
    for a, b in edges:
        succ[a].append(b)
        indegree[b] += 1
    ready = [i for i in range(n) if indegree[i] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for j in succ[i]:
            indegree[j] -= 1
            if indegree[j] == 0:
                heapq.heappush(ready, j)
    return order if len(order) == n else None


def _index_error(shape, index, signal):
    """Why element or slice `index` cannot be taken of signal `signal` of `shape` (only a
    vector can be indexed, the element must exist, the slice must not be empty), or None."""
    if len(shape) != 1:
        return f"only vector signals can be indexed; '{signal}' has shape {tuple(shape)}"
    n = shape[0]
    if isinstance(index, int):
        if -n <= index < n:
            return None
        return f"index {index} is out of range for '{signal}' of length {n}"
    if len(range(n)[slice(*index)]) == 0:
        return f"slice {index_text(index)} of '{signal}' (length {n}) is empty"
    return None


def _indexed(view, index):
    """A *view* of element `index` (0-d) or slice `index` (start, stop) of a vector view;
    plain integer indexing would return a copy, frozen at compile time."""
    if index is None:
        return view
    if isinstance(index, int):
        i = index % view.shape[0]
        return view[i:i + 1].reshape(())
    return view[slice(*index)]


def _flat(x):
    return np.zeros(0) if x is None else np.asarray(x, dtype=float).ravel().copy()


def _initial_states(blocks):
    """([continuous], [discrete]): every block's flat initial states, in block order."""
    states = [(_flat(b.continuous_state()), _flat(b.discrete_state())) for b in blocks.values()]
    return [c for c, _ in states], [d for _, d in states]


def _joined(parts):
    return np.concatenate(parts) if parts else np.zeros(0)


def _dir_of(file):
    return Path(file).parent if file and not file.startswith("<") else Path.cwd()


@without_gc
def compile_diagram(spec, library=None):
    """Check and lay out a DiagramSpec; raises DiagramError(s) listing every problem found."""
    return _Compiler(spec, library or Library()).compile()


class ModelCache:
    """Compile once, then re-parameterise: a Model for each spec of a batch of runs.

    Runs of a sweep mostly change values (a gain, the stop time, a perturbed robot), not
    structure. `model(spec)` compiles the first spec fully and keeps the compiler (wires,
    execution order, buffers and views). For a later spec it re-evaluates only what values
    affect (robots whose options changed, parameters, settings, blocks) and binds the new
    blocks into the kept layout, when every block declares the same structure (see
    `_Compiler.reparameterise`); otherwise it compiles the spec fully and keeps that one.
    Consecutive models share their buffers: simulate one at a time, in one thread.
    """

    def __init__(self, library=None):
        self.library = library or Library()
        self.compiler = None
        self.compiles = 0
        self.reuses = 0

    def model(self, spec):
        """A Model for `spec` (a DiagramSpec); raises DiagramError(s) as compile_diagram."""
        if self.compiler is not None:
            model = self.compiler.reparameterise(spec)
            if model is not None:
                self.reuses += 1
                return model
        compiler = _Compiler(spec, self.library)
        model = compiler.compile()
        self.compiler = compiler
        self.compiles += 1
        return model


def _block_structure(block, ports):
    """What a block contributes to the layout and schedule; equal structures may share one."""
    ins, outs = ports
    return (type(block), tuple(ins.values()), tuple(outs.values()), block.sample,
            block.time_dependent, block.stops, block.records_inputs)


def _same_data(a, b):
    """Equality of plain data (raw YAML values, tuples of them) that may hold numpy arrays."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
                and a.shape == b.shape and bool(np.array_equal(a, b)))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same_data, a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_data(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def plain(v):
    """Raw YAML data (YMap, YList, numpy values inside) as plain JSON-able Python data."""
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, (np.ndarray, np.generic)):
        return v.tolist()
    return v


def _config(spec, settings):
    """The resolved configuration for meta.json (raw values after --set, plain JSON)."""
    return {
        "parameters": {k: plain(v.raw) for k, v in spec.scopes[0].params.items()} if spec.scopes else {},
        "robots": {n: {k: plain(v.raw) for k, v in o.items() if k != "__loc__"}
                   for n, o in spec.robots.items()},
        "blocks": {b.name: {"type": b.type, **{k: plain(v.raw) for k, v in b.params.items()}}
                   for b in spec.blocks.values()},
        "wires": [f"{w.src.text()} -> {w.dst.text()}" for w in spec.wires],
        "simulation": {k: getattr(settings, k) for k in settings.__dataclass_fields__},
        "record": {k: plain(v.raw) for k, v in spec.record.items()},
    }
