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

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from . import expr
from .block import ALL, CONSTANT, Sample
from .diagram import NAME_RE, bool_hint, parse_endpoint, suggest
from .errors import DiagramError, Problems
from .library import Library
from .params import ParamError
from .block import PortError
from .solvers import FIXED_STEP, SOLVERS

MAX_STEPS = 10_000_000  # default simulation.max_steps


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
    max_steps: int = MAX_STEPS  # most solver steps, result rows, sample hits of a run


@dataclass
class Node:
    """One output computation: a block method producing one or more of its output ports."""
    block: object
    calc: str
    ports: list
    inputs: tuple  # input names the outputs depend on at the same instant
    group: str = "continuous"  # constant / discrete / continuous
    order: int = 0

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
    config: dict = field(default_factory=dict)
    seeds: dict = field(default_factory=dict)


def _simulation_defaults(sim, evaluate, problems):
    def num(key, default, positive=True):
        if key not in sim:
            return default
        v = sim[key]
        try:
            x = evaluate(v.raw)
            x = float(np.asarray(x, dtype=float).reshape(()))
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
        problems.add(DiagramError("simulation.stop is required", hint="add `simulation: {stop: 10}`"))
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
    settings = Settings(start=start, stop=stop, solver=solver,
                        rtol=num("rtol", 1e-3), atol=num("atol", 1e-6),
                        max_step=num("max_step", span / 50), step=num("step", span / 1000),
                        output_interval=num("output_interval", None))
    max_steps = num("max_steps", MAX_STEPS)
    if max_steps != int(max_steps):
        problems.add(sim["max_steps"].loc.error(
            f"simulation.max_steps must be a whole number, got {max_steps:g}"))
    else:
        settings.max_steps = int(max_steps)
        _check_budget(settings, sim, problems)
    return settings


def _check_budget(s, sim, problems):
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
            where = sim[key].loc if key in sim else sim["stop"].loc if "stop" in sim else None
            message = (f"simulation.{key} = {getattr(s, key):g} over {span:g} s means "
                       f"{count:.3g} {what}, more than simulation.max_steps = {s.max_steps:,}")
            hint = f"use a larger {key}, or raise simulation.max_steps if you mean it"
            problems.add(where.error(message, hint=hint) if where else
                         DiagramError(message, hint=hint))


def _check_rates(settings, blocks, events, problems, locs):
    """Refuse discrete rates and source switches that would stop the solver more often than
    simulation.max_steps times: each is an event the solver must land on."""
    span = settings.stop - settings.start
    for block in blocks:
        if isinstance(block.sample, Sample) and span / block.sample.period > settings.max_steps:
            problems.add(locs[block.name].error(
                f"sample period {block.sample.period:g} s over {span:g} s means "
                f"{span / block.sample.period:.3g} sample hits, more than "
                f"simulation.max_steps = {settings.max_steps:,}", block=block.name,
                hint="use a longer period, or raise simulation.max_steps if you mean it"))
    if len(events) > settings.max_steps:
        problems.add(DiagramError(
            f"the sources switch {len(events):,} times, more than simulation.max_steps = "
            f"{settings.max_steps:,}", hint="raise simulation.max_steps if you mean it"))


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

    # -- stage 1: robots and parameters -----------------------------------------------------
    def evaluate(self, raw, names, loc, what):
        try:
            return expr.evaluate(raw, names, dotted=self.dotted)
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
            for name, options in self.spec.robots.items():
                try:
                    robots[name], poses = builder(name, options, self._section_eval,
                                                  base_dir=_dir_of(self.spec.file))
                except DiagramError as e:
                    self.problems.add(e)
                    continue
                self.dotted[name] = poses
        self.resources["robots"] = robots
        # A bare pose name is a constant only when every robot agrees on it.
        if self.dotted:
            common = set.intersection(*(set(p) for p in self.dotted.values()))
            for pose in common:
                values = [np.asarray(p[pose]) for p in self.dotted.values()]
                if all(v.shape == values[0].shape and np.array_equal(v, values[0]) for v in values):
                    self.constants[pose] = values[0]

    def _section_eval(self, value, what):
        """Evaluate a section option (robots: gravity, base, perturb...) at its location."""
        return self.evaluate(value.raw, dict(self.constants), value.loc, what)

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
                except expr.ExprError as e:
                    self.problems.add(value.loc.error(f"parameter '{key}': {e}"))
                except DiagramError as e:
                    self.problems.add(e)
            self.scope_names.append(names)

    # -- stage 2: blocks ---------------------------------------------------------------------
    def build_blocks(self):
        self.blocks = {}
        self.ports = {}  # name -> (inputs {name: In}, outputs {name: Out})
        for spec in self.spec.blocks.values():
            cls = self.lib.block_class(spec.type)
            if cls is None:
                self.problems.add(spec.loc.error(
                    f"unknown block type '{spec.type}'{suggest(spec.type, self.lib.types)}",
                    block=spec.name, hint="`blocksim blocks` lists the block types"))
                continue
            try:
                block = self.build_block(cls, spec)
                ins, outs = block.ports()
            except _Reported:
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
                    f"unknown parameter '{key}' for a {spec.type} block{suggest(key, schema)}",
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
            except DiagramError as e:
                self.problems.add(e)
                bad = True
        if bad:
            raise _Reported
        values["_names"] = names
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
        if kind in ("value", "scalar", "int") and raw is not param.default:
            try:
                raw = expr.evaluate(raw, names, dotted=self.dotted)
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
        for w in self.spec.wires:
            try:
                src = self.endpoint(w.src, output=True)
                dst = self.endpoint(w.dst, output=False)
            except _Reported:
                continue
            except DiagramError as e:
                self.problems.add(e)
                continue
            key = (w.dst.block, dst)
            if key in self.drivers:
                first = self.drivers[key][3]
                self.problems.add(w.loc.error(
                    f"input '{w.dst.block}.{dst}' has two drivers (also wired at line {first.line})",
                    block=w.dst.block, port=dst, hint="each input has exactly one driver"))
                continue
            self.drivers[key] = (w.src.block, src, w.src.index, w.loc)
        for name, (ins, _) in self.ports.items():
            for port in ins.values():
                if (name, port.name) not in self.drivers and not port.optional:
                    self.problems.add(self.spec.blocks[name].loc.error(
                        "input is not connected", block=name, port=port.name,
                        hint="wire it, or feed it from a constant / terminator as needed"))

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
        self.out_shapes = {}
        for name, (_, outs) in self.ports.items():
            for port in outs.values():
                if port.shape is not None:
                    self.out_shapes[(name, port.name)] = tuple(port.shape)
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
        if self.problems:  # blocks downstream of a reported error stay unknown: no new news
            return
        for name in pending:
            missing = [p for p in self.ports[name][1] if (name, p) not in self.out_shapes]
            self.problems.add(self.spec.blocks[name].loc.error(
                f"cannot determine the shape of output(s) {', '.join(missing)}: every path into "
                "this block comes back from blocks whose shapes depend on it", block=name,
                hint="give an initial value with the signal's shape (e.g. an integrator's x0)"))

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
            shapes[port.name] = self.sliced_shape(src_shape, drv, name, port.name)
        return shapes

    def sliced_shape(self, shape, drv, dst, port):
        index = drv[2]
        if index is None:
            return shape
        if len(shape) != 1:
            self.problems.add(drv[3].error(f"only vector signals can be indexed; '{drv[0]}.{drv[1]}'"
                                           f" has shape {shape}", block=drv[0], port=drv[1]))
            return shape
        n = shape[0]
        if isinstance(index, int):
            if not -n <= index < n:
                self.problems.add(drv[3].error(f"index {index} is out of range for '{drv[0]}.{drv[1]}'"
                                               f" of length {n}", block=drv[0], port=drv[1]))
                return ()
            return ()
        length = len(range(n)[slice(*index)])
        if length == 0:
            self.problems.add(drv[3].error(f"slice [{index[0]}:{index[1]}] of '{drv[0]}.{drv[1]}' "
                                           f"(length {n}) is empty", block=drv[0], port=drv[1]))
        return (length,)

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
        except PortError as e:
            drv = self.drivers.get((name, e.port))
            loc = drv[3] if drv else self.spec.blocks[name].loc
            self.problems.add(loc.error(f"{e.message} (inputs: {self.describe_inputs(name, shapes)})",
                                        block=name, port=e.port))
            return
        except ParamError as e:
            spec = self.spec.blocks[name]
            loc = spec.params[e.param].loc if e.param in spec.params else spec.loc
            self.problems.add(loc.error(e.message, block=name, param=e.param))
            return
        for port in outs.values():
            if port.shape is None:
                self.out_shapes[(name, port.name)] = tuple(inferred[port.name])

    def describe_inputs(self, name, shapes):
        """'u1 <- C3.y (3,), u2 <- C2.y[0:2] (2,)': every input of a block, its driver and
        shape, so a shape error names both ends of every wire involved."""
        parts = []
        for port in self.ports[name][0]:
            drv = self.drivers.get((name, port))
            if drv is None:
                source = "default"
            else:
                index = drv[2]
                text = ("" if index is None else f"[{index}]" if isinstance(index, int)
                        else f"[{'' if index[0] is None else index[0]}:"
                             f"{'' if index[1] is None else index[1]}]")
                source = f"{drv[0]}.{drv[1]}{text}"
            parts.append(f"{port} <- {source} {shapes[port]}")
        return ", ".join(parts)

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
        xc, xd, slices = [], [], {}
        nc = nd = 0
        for name, block in self.blocks.items():
            c = _flat(block.continuous_state())
            d = _flat(block.discrete_state())
            slices[name] = (slice(nc, nc + c.size), slice(nd, nd + d.size))
            xc.append(c)
            xd.append(d)
            nc += c.size
            nd += d.size
        x0 = np.concatenate(xc) if xc else np.zeros(0)
        xd0 = np.concatenate(xd) if xd else np.zeros(0)
        xbuf, dxbuf, xdbuf = x0.copy(), np.zeros_like(x0), xd0.copy()
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
        for name, block in self.blocks.items():
            ins, outs = self.ports[name]
            own = [sizes[(name, p)] for p in outs if (name, p) in sizes]
            if own:  # the block's computed outputs, consecutive in port order
                block.y_flat = signals[own[0][0]:own[-1][0] + own[-1][1]]
            u = tuple(self.input_view(name, p, views) for p in ins.values())
            y = tuple(views[(name, p)] for p in outs)
            cs, ds = slices[name]
            block.bind(u, y, xbuf[cs], dxbuf[cs], xdbuf[ds])
        self.signals, self.views, self.slices = signals, views, slices
        self.x0, self.xd0, self.xbuf, self.dxbuf, self.xdbuf = x0, xd0, xbuf, dxbuf, xdbuf

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
            if not isinstance(key, str) or not NAME_RE.match(key) or key == "t":
                self.problems.add(value.loc.error(f"invalid record name {key!r}: use an identifier "
                                                  "other than 't'", hint=bool_hint(key)))
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
            if block.stops:
                stops.append(block.u[0])
        return record, sinks, stops

    def signal_view(self, text, loc):
        ep = self.spec.through_subsystems(parse_endpoint(text, loc))
        if ep.block not in self.ports:
            raise loc.error(f"unknown block '{ep.block}'{suggest(ep.block, self.ports)}")
        port = self.endpoint(ep, output=True)
        view = self.views[(ep.block, port)]
        if ep.index is None:
            return view
        if view.ndim != 1:
            raise loc.error(f"only vector signals can be indexed; '{ep.block}.{port}' has shape {view.shape}")
        n = view.shape[0]
        if isinstance(ep.index, int) and not -n <= ep.index < n:
            raise loc.error(f"index {ep.index} out of range for '{ep.block}.{port}' of length {n}")
        return _indexed(view, ep.index)


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


def _dir_of(file):
    from pathlib import Path
    return Path(file).parent if file and not file.startswith("<") else Path.cwd()


def compile_diagram(spec, library=None):
    """Check and lay out a DiagramSpec; raises DiagramError(s) listing every problem found."""
    c = _Compiler(spec, library or Library())
    c.build_sections()
    c.problems.check()
    c.evaluate_scopes()
    settings = _simulation_defaults(spec.simulation, lambda raw: expr.evaluate(
        raw, c.scope_names[0] if c.scope_names else {}, dotted=c.dotted), c.problems)
    c.build_blocks()
    c.problems.check()
    c.resolve_wires()
    c.problems.check()
    c.build_nodes()  # algebraic loops first: a feedthrough cycle also stalls shape inference
    c.propagate_shapes()
    c.problems.check()
    c.layout()
    c.classify()
    record, sinks, stops = c.records()
    c.problems.check()
    # by time only: blocks that switch at the same time keep their declaration order
    events = sorted(((float(t), b) for b in c.blocks.values()
                     for t in b.events(settings.start, settings.stop)), key=lambda e: e[0])
    _check_rates(settings, c.blocks.values(), events, c.problems,
                {name: b.loc for name, b in spec.blocks.items()})
    c.problems.check()
    return Model(
        name=spec.name, description=spec.description, file=spec.file, settings=settings,
        blocks=list(c.blocks.values()), nodes=c.nodes, signals=c.signals,
        x0=c.x0, xd0=c.xd0, xbuf=c.xbuf, dxbuf=c.dxbuf, xdbuf=c.xdbuf,
        outputs=c.views, record=record, sinks=sinks, stops=stops, events=events,
        state_slices=c.slices, config=_config(spec, settings),
    )


def _config(spec, settings):
    """The resolved configuration for meta.json (raw values after --set, plain JSON)."""
    def plain(v):
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, np.ndarray):
            return v.tolist()
        return v
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
