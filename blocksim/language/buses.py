"""Buses: named bundles of signals, resolved into plain wires when a diagram is loaded.

A `bus` block bundles signals, one input per element, named by it (`B.pos`), and outputs the
bundle (`B.bus`); a `bus_select` takes a bundle (`Sel.bus`) and has an output per element
it picks, named by it (`Sel.vel`). Neither computes anything: the loader replaces every
wire out of a bus_select by a wire from the signal its element carries (through subsystem
ports, and buses inside buses), so a run pays nothing for them and every element's shape
is checked where it arrives, as any wire's. A bus recorded (`record: {s: B}`) is recorded
element by element, as `s.pos`, `s.vel`.

Endpoints here are the loader's (`diagram.Endpoint`: block, port, index, loc); the caller
passes `through`, which maps an endpoint through subsystem outputs.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from ..errors import DiagramError, suggest

BUS_TYPES = ("bus", "bus_select")
DOCS = {  # `blocksim blocks bus` and `bus_select` (they are the loader's, not classes)
    "bus": """\
A named bundle of signals, one input per element; resolved into plain wires when loaded.

    State: {type: bus, elements: [pos, vel, mode]}
    wires: [Robot.q -> State.pos, Robot.qd -> State.vel, Sup.mode -> State.mode,
            State -> Control.state]

elements: the names of the signals bundled; each is an input port (`State.pos`) and must
be wired. The bundle is the output `bus` (`State` alone names it). A bus goes into a
bus_select, into another bus's element (a bus inside a bus), through subsystem ports (a
subsystem's input may take a bus; an inner bus may be a subsystem's output) and into
`record:`, where `{s: State}` is recorded element by element as `s.pos`, `s.vel`,
`s.mode` (nested: `s.outer.inner`). It cannot go into a block's input: pick its
elements with a bus_select. Nothing runs for it: every wire out of a bus_select becomes a
wire from the signal the element carries, so each element's shape is checked where it
arrives, and a run costs what the same diagram wired without the bus costs.
""",
    "bus_select": """\
Picks elements of a bus by name: an output per element, named by it.

    Pick: {type: bus_select, elements: [vel, mode]}
    wires: [State -> Pick, Pick.vel -> Kd, Pick.mode -> Switch.u2]

elements: the names picked (each must be an element of the bus wired to the input
`bus`); outputs `Pick.vel`, `Pick.mode`, which may be indexed (`Pick.vel[0:3]`). An
element that is itself a bus is a bus again (into another bus_select, a subsystem or
`record:`). A name the bus does not have is an error at load, with the closest name.
""",
}
PORT = "bus"  # the bundle's port: a bus's output, a bus_select's input
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass
class BusSpec:
    """A bus or bus_select block: its elements (the bus's inputs, the select's outputs) and,
    once the wires are read, what feeds its inputs: port -> (source endpoint, wire loc)."""
    name: str
    type: str
    elements: tuple
    loc: object
    element_locs: tuple
    inputs: dict = field(default_factory=dict)

    @property
    def ports(self):
        """(input names, output names)."""
        return ((self.elements, (PORT,)) if self.type == "bus" else ((PORT,), self.elements))


@dataclass(frozen=True)
class Bundle:
    """A bus as a signal: element -> a block output (an endpoint) or a Bundle, in order."""
    bus: str
    elements: dict

    def leaves(self, prefix):
        """(name, endpoint) of every element, nested ones as prefix.outer.inner."""
        for name, value in self.elements.items():
            if isinstance(value, Bundle):
                yield from value.leaves(f"{prefix}.{name}")
            else:
                yield f"{prefix}.{name}", value


def bus_spec(name, btype, params, loc, element_locs, problems):
    """The BusSpec of a bus or bus_select block (`params`: key -> diagram.Value), or None
    with its problems added."""
    for key in params:
        if key != "elements":
            problems.add(params[key].loc.error(f"unknown key '{key}' in a {btype}"
                                               f"{suggest(key, ('elements',))}", block=name))
    value = params.get("elements")
    if value is None:
        problems.add(loc.error(f"a {btype} needs 'elements': a list of names", block=name))
        return None
    elements = [value.raw] if isinstance(value.raw, str) else value.raw
    if not isinstance(elements, list) or not elements or \
            not all(isinstance(e, str) and _NAME.match(e) for e in elements):
        problems.add(value.loc.error("'elements' must be a list of names (identifiers), e.g. "
                                     "[pos, vel]", block=name))
        return None
    twice = sorted({e for e in elements if elements.count(e) > 1})
    if twice:
        problems.add(value.loc.error(f"element(s) {', '.join(twice)} named twice", block=name))
        return None
    if btype == "bus_select" and PORT in elements:
        problems.add(value.loc.error(f"'{PORT}' names the bus_select's input: pick an element "
                                     "of another name", block=name))
        return None
    locs = tuple(element_locs(k) for k in range(len(elements))) if isinstance(value.raw, list) \
        else (value.loc,)
    return BusSpec(name, btype, tuple(elements), loc, locs)


class Buses:
    """The buses of a diagram while it is loaded: what feeds them, and the signals their
    outputs stand for."""

    def __init__(self, specs):
        self.specs = specs  # name -> BusSpec

    def connect(self, src, dst, loc):
        """Note the wire src -> dst into a bus's input (dst on a bus or bus_select)."""
        spec = self.specs[dst.block]
        inputs = spec.ports[0]
        port = dst.port
        if port is None:
            if len(inputs) != 1:
                raise loc.error(f"bus '{dst.block}' has {len(inputs)} inputs (its elements): "
                                f"name one, e.g. '{dst.block}.{inputs[0]}'", block=dst.block)
            port = inputs[0]
        if port not in inputs:
            what = "element" if spec.type == "bus" else "input"
            raise loc.error(f"{spec.type} '{dst.block}' has no {what} '{port}'"
                            f"{suggest(port, inputs) or ' (' + ', '.join(inputs) + ')'}",
                            block=dst.block, port=port)
        if port in spec.inputs:
            raise loc.error(f"input '{dst.block}.{port}' has two drivers (also wired at line "
                            f"{spec.inputs[port][1].line})", block=dst.block, port=port)
        spec.inputs[port] = (src, loc)

    def resolve(self, ep, through, seen=()):
        """The block output (an endpoint) or the bus (a Bundle) that `ep`, an endpoint
        already mapped through subsystem outputs, stands for."""
        spec = self.specs.get(ep.block)
        if spec is None:
            return ep
        if ep.block in seen:
            raise ep.loc.error("buses feed each other in a loop: "
                               + " -> ".join([*seen, ep.block]), block=ep.block)
        seen = (*seen, ep.block)
        outputs = spec.ports[1]
        port = ep.port if ep.port is not None else (outputs[0] if len(outputs) == 1 else None)
        if port not in outputs:
            raise ep.loc.error(f"{spec.type} '{ep.block}' has no output '{ep.port}'"
                               f"{suggest(ep.port, outputs) or ' (' + ', '.join(outputs) + ')'}"
                               if port is not None else
                               f"bus_select '{ep.block}' has {len(outputs)} outputs (its "
                               f"elements): name one, e.g. '{ep.block}.{outputs[0]}'",
                               block=ep.block, port=ep.port)
        if spec.type == "bus":
            if ep.index is not None:
                raise ep.loc.error(f"a bus cannot be indexed ('{ep.text()}'): pick an element "
                                   "with a bus_select", block=ep.block)
            return Bundle(ep.block, {e: self._element(spec, e, through, seen)
                                     for e in spec.elements})
        bundle = self._selected(spec, through, seen)
        if port not in bundle.elements:
            raise _missing(spec, port, bundle.elements)
        value = bundle.elements[port]
        if ep.index is None:
            return value
        if isinstance(value, Bundle):
            raise ep.loc.error(f"element '{port}' of bus '{bundle.bus}' is itself a bus: "
                               "it cannot be indexed", block=ep.block)
        if value.index is not None:
            raise ep.loc.error(f"cannot index '{ep.text()}': the element is '{value.text()}', "
                               "itself indexed", block=ep.block)
        return dataclasses.replace(value, index=ep.index)

    def _element(self, spec, element, through, seen):
        if element not in spec.inputs:
            raise spec.loc.error(f"bus element '{spec.name}.{element}' is not connected",
                                 block=spec.name, port=element,
                                 hint=f"wire a signal to it: `SRC.PORT -> {spec.name}.{element}`")
        src, _ = spec.inputs[element]
        return self.resolve(through(src), through, seen)


    def _selected(self, spec, through, seen):
        """The bundle a bus_select picks from."""
        if PORT not in spec.inputs:
            raise spec.loc.error("input is not connected: a bus_select takes a bus",
                                 block=spec.name, port=PORT)
        src, loc = spec.inputs[PORT]
        bundle = self.resolve(through(src), through, seen)
        if not isinstance(bundle, Bundle):
            raise loc.error(f"bus_select '{spec.name}' is fed '{src.text()}', which is not a "
                            "bus", block=spec.name, hint="a bus_select picks elements of a bus "
                                                         "(a `bus` block's output)")
        return bundle

    def names_of(self, src, through, seen=()):
        """The element names of the bus `src` carries (read off the buses' declarations,
        nothing resolved), or None when it is no bus or not yet known."""
        spec = self.specs.get(through(src).block) if src is not None else None
        if spec is None or spec.name in seen:
            return None
        if spec.type == "bus":
            return spec.elements
        return self.names_of(self._source(spec, through(src).port, through, seen), through,
                           (*seen, spec.name))

    def _source(self, select, element, through, seen):
        """The endpoint that feeds `element` of the bus a bus_select takes, or None."""
        src = select.inputs.get(PORT, (None,))[0]
        spec = self.specs.get(through(src).block) if src is not None else None
        if spec is None or spec.name in seen:
            return None
        if spec.type == "bus":
            return spec.inputs.get(element, (None,))[0]
        return self._source_in(self._source(spec, through(src).port, through,
                                            (*seen, spec.name)), element, through)

    def _source_in(self, src, element, through):
        """The endpoint feeding `element` of the bus block `src` is, or None."""
        spec = self.specs.get(through(src).block) if src is not None else None
        return spec.inputs.get(element, (None,))[0] if spec and spec.type == "bus" else None

    def wires(self, plain, through, problems, held):
        """The wires `plain` into blocks with their sources resolved through the buses; a
        bus wired into a block is an error (`held(dst)`: the kind of the conditional
        subsystem whose output `dst` holds, or None)."""
        out = []
        for w in plain:
            names = self.names_of(w.src, through)
            if names is not None:
                problems.add(_bus_into(w, names, held(w.dst)))
                continue
            try:
                out.append(dataclasses.replace(w, src=self.resolve(w.src, through)))
            except DiagramError as e:
                problems.add(e)
        return out

    def check(self, through, problems):
        """Every bus complete and every bus_select's elements in the bus it takes, whether
        or not anything reads them."""
        for spec in self.specs.values():
            if spec.type == "bus":
                for element in spec.elements:
                    if element not in spec.inputs:
                        problems.add(spec.loc.error(
                            f"bus element '{spec.name}.{element}' is not connected",
                            block=spec.name, port=element,
                            hint=f"wire a signal to it: `SRC.PORT -> {spec.name}.{element}`"))
                continue
            names = self.names_of(spec.inputs.get(PORT, (None,))[0], through)
            if names is None:
                try:
                    self._selected(spec, through, (spec.name,))
                except DiagramError as e:
                    problems.add(e)
                continue
            for element in spec.elements:
                if element not in names:
                    problems.add(_missing(spec, element, names))


def _bus_into(wire, names, held):
    """The error of a bus wired into a block's input: `held`, the kind of the conditional
    subsystem whose output the block holds ('enable', 'trigger'), or None."""
    dst = wire.dst
    if held is not None:
        return wire.loc.error(
            f"output '{dst.port}' is a bus ({', '.join(names)}): "
            + ("an enabled" if held == "enable" else "a triggered")
            + " subsystem's outputs are signals, each held (or reset) while it does not run",
            block=dst.block, port=dst.port,
            hint="make an output per element and bundle them outside the subsystem")
    return wire.loc.error(
        f"'{wire.src.text()}' is a bus ({', '.join(names)}): it goes into a bus_select, a bus "
        "or a subsystem's input, not into a block's input", block=dst.block, port=dst.port,
        hint="pick its elements with {type: bus_select, elements: [...]}")


def _missing(select, element, names):
    """The error of a bus_select picking an element its bus does not have."""
    at = select.element_locs[select.elements.index(element)]
    return at.error(f"the bus has no element '{element}'{suggest(element, names)} (its "
                    f"elements: {', '.join(names)})", block=select.name)
