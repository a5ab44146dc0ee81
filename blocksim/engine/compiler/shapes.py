"""Pass 5, shapes: every output's shape, from the declared ones along the wires.

Input: the DiagramSpec (locations), `Built` (blocks and ports), the drivers of pass 3, the
problems list. Output: out_shapes, (block, output port) -> shape tuple. Each block's `infer`
is called once all its inputs' shapes are known (also where a block checks them).
"""
from __future__ import annotations

import heapq

from ...block import PortError
from ...errors import Problems
from ...language.diagram import index_text
from ...params import ParamError
from .wires import driver_text


def propagate_shapes(spec, built, drivers, problems):
    """A loop whose shape nothing outside fixes stalls the propagation; then the first block
    of it (in declaration order) with an initial value assumes the shapes its x0 implies
    (`initial_shapes`: scalar x0, scalar signal) and the propagation is repeated. When the
    loop comes back with other shapes for that block (a scalar x0 in a loop of vectors),
    those replace the assumption, until the shapes agree."""
    shapes = _Shapes(spec, built, drivers)
    assumed = {}  # block name -> {output port: shape}
    pending = set()
    for _ in range(2 * len(built.ports) + 2):
        shapes.problems = Problems()
        pending = shapes.propagate(assumed)
        changed = {name: {port: shapes.out[(name, port)] for port in known}
                   for name, known in assumed.items()
                   if any(shapes.out[(name, port)] != shape for port, shape in known.items())}
        if changed:
            assumed.update(changed)
            continue
        if shapes.problems:
            for error in shapes.problems.errors:
                if assumed:
                    error.hint = _join(error.hint, _assumption_note(assumed))
                problems.add(error)
            return shapes.out
        if not pending:
            return shapes.out
        candidate = next((name for name in built.ports if name in pending
                          and name not in assumed and built.blocks[name].initial_shapes()),
                         None)
        if candidate is None:
            break
        assumed[candidate] = {port: tuple(shape) for port, shape in
                              built.blocks[candidate].initial_shapes().items()}
    _report_shape_loops(spec, built, drivers, shapes.out, pending, problems)
    return shapes.out


class _Shapes:
    """One propagation: out shapes so far and the problems it found."""

    def __init__(self, spec, built, drivers):
        self.spec, self.built, self.drivers = spec, built, drivers
        self.out = {}
        self.problems = Problems()
        self.names = list(built.ports)
        self.position = {name: k for k, name in enumerate(self.names)}
        # per block, the outputs its wired inputs read (one entry per input port); per
        # output, the blocks that read it (once per input port)
        self.sources = {name: [] for name in self.names}
        self.consumers = {}
        for name, (ins, _) in built.ports.items():
            for port in ins.values():
                drv = drivers.get((name, port.name))
                if drv is not None:
                    self.sources[name].append((drv[0], drv[1]))
                    self.consumers.setdefault((drv[0], drv[1]), []).append(name)

    def propagate(self, assumed):
        """One pass from the declared and assumed output shapes; returns the blocks left
        pending (their inputs' shapes never became known).

        A worklist: a block is inferred once every wire into it carries a known shape, and
        each inferred output makes its consumers count one wire fewer, so every block is
        asked once (linear in blocks and wires, in any listing order). The blocks are taken
        in the order repeated passes over the declaration order would take them: the ready
        ones after the current position in this pass, the others in the next pass."""
        self.out = {}
        for name, (_, outs) in self.built.ports.items():
            for port in outs.values():
                if port.shape is not None:
                    self.out[(name, port.name)] = tuple(port.shape)
            for port, shape in assumed.get(name, {}).items():
                self.out[(name, port)] = shape
        waiting = {name: sum(1 for src in sources if src not in self.out)
                   for name, sources in self.sources.items()}
        this_pass = [self.position[name] for name, n in waiting.items() if n == 0]
        heapq.heapify(this_pass)
        next_pass = []
        pending = set(self.built.ports)
        while this_pass or next_pass:
            if not this_pass:
                this_pass, next_pass = next_pass, []
                heapq.heapify(this_pass)
            at = heapq.heappop(this_pass)
            name = self.names[at]
            pending.discard(name)
            outputs = [(name, port) for port in self.built.ports[name][1]]
            unknown = [key for key in outputs if key not in self.out]
            self.infer_block(name, self.input_shapes(name))
            for output in (key for key in unknown if key in self.out):
                for consumer in self.consumers.get(output, ()):
                    waiting[consumer] -= 1
                    if waiting[consumer] == 0:
                        k = self.position[consumer]
                        heapq.heappush(this_pass if k > at else next_pass, k)
        return pending

    def input_shapes(self, name):
        """Shapes of all inputs of a block, or None while some driver's shape is unknown."""
        shapes = {}
        for port in self.built.ports[name][0].values():
            drv = self.drivers.get((name, port.name))
            if drv is None:
                shapes[port.name] = tuple(port.shape) if port.shape is not None else ()
                continue
            src_shape = self.out.get((drv[0], drv[1]))
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
        error = index_error(shape, index, f"{drv[0]}.{drv[1]}")
        if error is not None:
            self.problems.add(drv[3].error(error, block=drv[0], port=drv[1]))
        if len(shape) != 1:
            return shape
        return () if isinstance(index, int) else (len(range(shape[0])[slice(*index)]),)

    def infer_block(self, name, shapes):
        ins, outs = self.built.ports[name]
        block = self.built.blocks[name]
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
            inputs = ", ".join(f"{p} <- {driver_text(self.drivers, name, p) or 'default'} "
                               f"{shapes[p]}" for p in ins)
            self.problems.add(loc.error(f"{e.message} (inputs: {inputs})", block=name,
                                        port=e.port))
            return
        except ParamError as e:
            bspec = self.spec.blocks[name]
            loc = bspec.params[e.param].loc if e.param in bspec.params else bspec.loc
            self.problems.add(loc.error(e.message, block=name, param=e.param))
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
