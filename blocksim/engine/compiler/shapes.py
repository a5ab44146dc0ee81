"""Pass 5, shapes: every output's shape, from the declared ones along the wires.

Input: the DiagramSpec (locations), `Built` (blocks and ports), the drivers of pass 3, the
problems list. Output: out_shapes, (block, output port) -> shape tuple. Each block's `infer`
is called once all its inputs' shapes are known (also where a block checks them).
"""
from __future__ import annotations

import heapq

from ...block import PortError
from ...language.diagram import index_text
from ...params import ParamError
from .graph import strongly_connected_components, topological_order
from .wires import driver_text


def propagate_shapes(spec, built, drivers, problems):
    """The loops of the wiring and the blocks between them (its strongly connected
    components) are visited once each, in dataflow order: a block outside every loop is
    inferred when its inputs' shapes are known, a loop when the shapes coming into it are
    (`_Shapes.solve_loop`). Linear in blocks and wires. Blocks downstream of a problem stay
    without shapes and unreported; a problem whose block depends on a shape taken from an
    initial value says so."""
    shapes = _Shapes(spec, built, drivers)
    for members in shapes.components_in_order():
        inside = set(members)
        sources = [src for name in members for src in shapes.sources[name]]
        if any(src not in shapes.out for src in sources if src[0] not in inside):
            continue  # fed by a block that failed, or by a loop left undetermined
        if len(members) == 1 and all(src[0] not in inside for src in sources):
            name = members[0]
            shapes.infer_block(name, shapes.input_shapes(name, shapes.problems),
                               shapes.problems)
        else:
            shapes.solve_loop(members)
    for name, error in shapes.problems:
        assumed = shapes.assumed_upstream(name)
        if assumed:
            error.hint = _join(error.hint, _assumption_note(assumed))
        problems.add(error)
    if shapes.stalled:
        _report_shape_loops(spec, built, drivers, shapes.out, shapes.stalled, problems)
    return shapes.out


class _Shapes:
    """The shapes found so far, the shapes assumed from initial values, the problems found
    ((block, error) pairs) and the blocks of loops that stayed undetermined."""

    def __init__(self, spec, built, drivers):
        self.spec, self.built, self.drivers = spec, built, drivers
        self.out = {}
        self.assumed = {}  # block name -> {output port: shape}, in the order assumed
        self.problems = []
        self.stalled = set()
        self.names = list(built.ports)
        self.position = {name: k for k, name in enumerate(self.names)}
        # per block, the outputs its wired inputs read (one entry per input port); per
        # output, the blocks that read it (once per input port)
        self.sources = {name: [] for name in self.names}
        self.consumers = {}
        for name, (ins, outs) in built.ports.items():
            for port in outs.values():
                if port.shape is not None:
                    self.out[(name, port.name)] = tuple(port.shape)
            for port in ins.values():
                drv = drivers.get((name, port.name))
                if drv is not None:
                    self.sources[name].append((drv[0], drv[1]))
                    self.consumers.setdefault((drv[0], drv[1]), []).append(name)

    def components_in_order(self):
        """The strongly connected components of the wiring (block names in declaration
        order), each after those that feed it, the earliest declared first among the ready."""
        position, names = self.position, self.names
        succ = [[] for _ in names]
        for name, sources in self.sources.items():
            for src, _ in sources:
                succ[position[src]].append(position[name])
        components = sorted((sorted(c) for c in strongly_connected_components(succ)),
                            key=lambda c: c[0])
        component_of = [0] * len(names)
        for k, members in enumerate(components):
            for i in members:
                component_of[i] = k
        edges = [(component_of[a], component_of[b]) for a, after in enumerate(succ)
                 for b in after if component_of[a] != component_of[b]]
        return [[names[i] for i in components[k]]
                for k in topological_order(len(components), edges)]

    def solve_loop(self, members):
        """A loop's shapes, from those coming into it and the outputs its blocks declare.
        When the propagation around it stalls, its first block (in declaration order) with
        an initial value assumes the shapes its x0 implies (`initial_shapes`: scalar x0,
        scalar signal) and the propagation is repeated. When the loop comes back with other
        shapes for that block (a scalar x0 in a loop of vectors), those replace the
        assumption, until the shapes agree. A loop that stays undetermined is `stalled`;
        one whose shapes keep changing (a block that transposes or squares its input) is
        a problem."""
        assumed, tried = {}, {}  # tried: block -> the shapes assumed for it, in order
        pending = members
        for _ in range(2 * len(members) + 2):
            problems = []
            pending = self.propagate(members, assumed, problems)
            changed = {name: {port: self.out[(name, port)] for port in known}
                       for name, known in assumed.items()
                       if any(self.out[(name, port)] != shape for port, shape in known.items())}
            if changed:
                assumed.update(changed)
                for name, shapes in changed.items():
                    tried.setdefault(name, []).append(shapes)
                continue
            self.assumed.update(assumed)
            self.problems += problems
            if problems or not pending:
                return
            candidate = next((name for name in members if name in pending
                              and name not in assumed and self.built.blocks[name].initial_shapes()),
                             None)
            if candidate is None:
                break
            assumed[candidate] = {port: tuple(shape) for port, shape in
                                  self.built.blocks[candidate].initial_shapes().items()}
            tried[candidate] = [assumed[candidate]]
        else:
            self.problems.append(self.unsettled(members, tried))
            return
        self.stalled.update(pending)

    def unsettled(self, members, tried):
        """(block, error) for a loop whose shapes changed on every pass around it."""
        name = max(tried, key=lambda b: len(tried[b]))
        seen = " -> ".join(str(shape) for shapes in tried[name][-4:]
                           for shape in shapes.values())
        return name, self.spec.blocks[name].loc.error(
            f"the shapes in the loop of {', '.join(members)} do not settle: each pass "
            f"around it gives '{name}' another shape ({seen}, ...)", block=name,
            hint="give the loop's signal its shape where it starts, e.g. an x0 of that "
                 "shape, or check the blocks that change the shape in it")

    def propagate(self, members, assumed, problems):
        """One pass around a loop from its declared and assumed output shapes (and the
        known shapes coming into it); returns its blocks left pending (their inputs' shapes
        never became known).

        A worklist: a block is inferred once every wire into it carries a known shape, and
        each inferred output makes its consumers count one wire fewer, so every block of the
        loop is asked at most once per pass."""
        out = self.out
        for name in members:
            for port in self.built.ports[name][1].values():
                if port.shape is None:
                    out.pop((name, port.name), None)
            for port, shape in assumed.get(name, {}).items():
                out[(name, port)] = shape
        waiting = {name: sum(1 for src in self.sources[name] if src not in out)
                   for name in members}
        ready = [self.position[name] for name, n in waiting.items() if n == 0]
        heapq.heapify(ready)
        pending = set(members)
        while ready:
            name = self.names[heapq.heappop(ready)]
            pending.discard(name)
            unknown = [(name, port) for port in self.built.ports[name][1]
                       if (name, port) not in out]
            self.infer_block(name, self.input_shapes(name, problems), problems)
            for output in (key for key in unknown if key in out):
                for consumer in self.consumers.get(output, ()):
                    if consumer in waiting:
                        waiting[consumer] -= 1
                        if waiting[consumer] == 0:
                            heapq.heappush(ready, self.position[consumer])
        return pending

    def assumed_upstream(self, name):
        """The assumed shapes of the blocks whose outputs reach block `name` (or its own)."""
        if not self.assumed:
            return {}
        seen, todo = {name}, [name]
        while todo:
            for src, _ in self.sources[todo.pop()]:
                if src not in seen:
                    seen.add(src)
                    todo.append(src)
        return {block: shapes for block, shapes in self.assumed.items() if block in seen}

    def input_shapes(self, name, problems):
        """Shapes of all inputs of a block (every driver's shape is known)."""
        shapes = {}
        for port in self.built.ports[name][0].values():
            drv = self.drivers.get((name, port.name))
            if drv is None:
                shapes[port.name] = tuple(port.shape) if port.shape is not None else ()
            else:
                shapes[port.name] = self.sliced_shape(self.out[(drv[0], drv[1])], drv, name,
                                                      problems)
        return shapes

    def sliced_shape(self, shape, drv, name, problems):
        """The shape a wire into block `name` delivers: its driver's, or that of the element
        or slice it selects (a problem is added when it selects nothing)."""
        index = drv[2]
        if index is None:
            return shape
        error = index_error(shape, index, f"{drv[0]}.{drv[1]}")
        if error is not None:
            problems.append((name, drv[3].error(error, block=drv[0], port=drv[1])))
        if len(shape) != 1:
            return shape
        return () if isinstance(index, int) else (len(range(shape[0])[slice(*index)]),)

    def infer_block(self, name, shapes, problems):
        """Block `name`'s `infer` on its inputs' shapes; its undeclared outputs' shapes go to
        `out`, what is wrong to `problems`."""
        ins, outs = self.built.ports[name]
        block = self.built.blocks[name]
        ok = True
        for port in ins.values():
            want, got = port.shape, shapes[port.name]
            if want is not None and tuple(want) != got:
                drv = self.drivers.get((name, port.name))
                src = f"'{drv[0]}.{drv[1]}'" if drv else "its default"
                loc = drv[3] if drv else self.spec.blocks[name].loc
                problems.append((name, loc.error(
                    f"shape mismatch: {src} has shape {got} but input '{name}.{port.name}' "
                    f"expects {tuple(want)}", block=name, port=port.name)))
                ok = False
        if not ok:
            return
        try:
            inferred = block.infer(shapes)
        except PortError as e:  # naming both ends of every wire into the block, with shapes
            drv = self.drivers.get((name, e.port))
            loc = drv[3] if drv else self.spec.blocks[name].loc
            inputs = ", ".join(f"{p} <- {driver_text(self.drivers, name, p) or 'default'} "
                               f"{shapes[p]}" for p in ins)
            problems.append((name, loc.error(f"{e.message} (inputs: {inputs})", block=name,
                                             port=e.port)))
            return
        except ParamError as e:
            bspec = self.spec.blocks[name]
            loc = bspec.params[e.param].loc if e.param in bspec.params else bspec.loc
            problems.append((name, loc.error(e.message, block=name, param=e.param)))
            return
        for port in outs.values():
            if port.shape is None:
                self.out[(name, port.name)] = tuple(inferred[port.name])


def _assumption_note(assumed):
    """Which shapes came from initial values, and the x0 that would say otherwise."""
    parts = [f"'{name}' took its shape {shape} from x0" for name, shapes in assumed.items()
             for shape in shapes.values()]
    return ("in a loop, " + ", ".join(parts) + ": if the signal is meant to be a vector, "
            "give x0 its shape, e.g. `x0: [0, 0, 0]` for three elements")


def _report_shape_loops(spec, built, drivers, out_shapes, pending, problems):
    """One error per loop whose shapes could not be determined, naming its blocks in order.
    networkx is imported only here, on the error path (its import costs more than
    compiling most diagrams)."""
    import networkx as nx
    graph = nx.DiGraph()
    for (dst, _), drv in drivers.items():
        if dst in pending and drv[0] in pending:
            graph.add_edge(drv[0], dst)
    order = {name: i for i, name in enumerate(built.ports)}
    reported = False
    for comp in sorted(nx.strongly_connected_components(graph),
                       key=lambda c: min(order[n] for n in c)):
        if len(comp) == 1 and not graph.has_edge(*(2 * tuple(comp))):
            continue
        start = min(comp, key=order.get)
        cycle = [edge[0] for edge in nx.find_cycle(graph.subgraph(comp), source=start)]
        problems.add(spec.blocks[start].loc.error(
            "cannot determine the shape of the signals in the loop "
            + " -> ".join(cycle + [cycle[0]]) + ": nothing outside the loop fixes it and "
            "no block of it has an initial value (x0)", block=start,
            hint="start the loop with a block whose x0 has the signal's shape, e.g. "
                 "`{type: unit_delay, period: 0.1, x0: 0}` for a scalar or "
                 "`x0: [0, 0, 0]` for three elements (or an integrator with that x0)"))
        reported = True
    if not reported:
        for name in pending:
            missing = [p for p in built.ports[name][1] if (name, p) not in out_shapes]
            problems.add(spec.blocks[name].loc.error(
                f"cannot determine the shape of output(s) {', '.join(missing)}",
                block=name, hint="give an initial value with the signal's shape "
                                 "(e.g. an integrator's x0)"))


def _join(hint, note):
    return f"{hint}; {note}" if hint else note


def index_error(shape, index, signal):
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
