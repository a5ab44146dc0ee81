"""A compiled diagram as the graph `blocksim draw` lays out: boxes with ports, and wires.

The compiled `Model` is flat (`outer/inner` names); the boxes follow the diagram as written
instead: at each level its blocks and its subsystems, a subsystem either one box with its
declared ports or (expanded) a frame holding the graph of its inside, whose inputs and
outputs appear as port boxes on the frame's left and right. Wires come from the diagram's
written wires (ends may be subsystem ports); the compiled model adds what the text does not
say: port lists, signal shapes, and which wires are same-instant dependencies (a wire from a
computed output into an input that output depends on), which the layout never draws as
feedback.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..language.buses import Bundle
from ..language.diagram import INPORT, index_text, resolve_signal, through_inputs

# parameters that only shape ports or figures: the box already shows them, or they say nothing
# about the dynamics
_HIDDEN_PARAMS = frozenset({"inputs", "title", "labels", "xlim", "ylim", "fps", "view"})
MAX_PARAM_LINES = 3
MAX_PARAM_CHARS = 30


@dataclass
class Box:
    """One box: a block, a collapsed subsystem, an expanded subsystem (`frame`, with `inner`),
    a subsystem's input / output port inside its frame (`inport` / `outport`), or a `bus` /
    `bus_select` (a bar, as Simulink draws them)."""
    key: str  # unique in the whole drawing
    kind: str
    name: str
    type: str
    params: list  # "K = 100" lines
    inputs: list  # port names, in port order
    outputs: list
    inner: Graph | None = None
    input_marks: list | None = None  # drawn at the input ports instead of their names (+, −)
    position: tuple | None = None  # (x, y) of its top left corner from the diagram's `layout:`
    # a conditional subsystem's control inputs (the last inputs), drawn on its top edge as
    # Simulink draws its Enable and Trigger ports: their labels ("enable", "trigger ↑")
    controls: list = field(default_factory=list)


@dataclass
class Wire:
    src: str  # box key
    src_port: int
    dst: str
    dst_port: int
    label: str  # the signal's shape, "" for a scalar
    dependency: bool  # the destination needs the source at the same instant
    index: str = ""  # the elements the wire takes from its source, as written: "[0]", "[1:3]"


@dataclass
class Graph:
    boxes: dict = field(default_factory=dict)  # key -> Box, in the order written
    wires: list = field(default_factory=list)


def build_graph(model, expand=False):
    """The top level of `model` (compiled from `model.spec`) as a Graph; with `expand`, every
    subsystem is a frame holding its inside."""
    ports = {b.name: tuple([p.name for p in side] for side in b.ports()) for b in model.blocks}
    marks = {b.name: b.input_marks() for b in model.blocks}
    return _Builder(model.spec, ports, marks, model, expand).level("")


def build_level(spec, ports, marks, prefix="", model=None):
    """One level of a diagram that need not compile (an editor's): `prefix` '' for the top,
    'S/' inside subsystem S, whose input and output ports are boxes then (as in an expanded
    frame); nested subsystems are boxes. `ports` maps the flat names of the blocks whose
    ports are known to (input names, output names), `marks` to their `input_marks()`; a wire
    to a block or port not among them is left out. With the compiled `model`, wires carry
    their shapes and same-instant dependencies, as `build_graph` gives them."""
    builder = _Builder(spec, ports, marks, model, expand=False)
    if not prefix:
        return builder.level("")
    return builder.inside(spec.subsystems[prefix[:-1]])


def _shape_text(shape):
    return "" if tuple(shape) == () else str(tuple(int(n) for n in shape))


class _Builder:
    def __init__(self, spec, ports, marks, model, expand):
        self.spec = spec
        self.model = model
        self.expand = expand
        self.ports = ports
        self.marks = marks
        if model is not None:
            self.computed = {(n.block.name, p) for n in model.nodes for p in n.ports}
            self.needed = {(n.block.name, i) for n in model.nodes for i in n.inputs}
            self.blocks = {b.name: b for b in model.blocks}

    # -- one level of the diagram ----------------------------------------------------------
    def level(self, prefix):
        """The graph of one level; at the top, the diagram's own inputs and outputs are
        port boxes as a subsystem's inside its frame (their inports are not boxes)."""
        graph = Graph()
        for name, spec in self.spec.blocks.items():
            # (a conditional subsystem's own block is drawn as the subsystem)
            if _parent(name) == prefix and spec.type != INPORT and name not in self.spec.subsystems:
                graph.boxes[name] = self.block_box(name, spec)
        for name, sub in self.spec.subsystems.items():
            if _parent(name) == prefix:
                graph.boxes[name] = self.subsystem_box(sub)
        for name, bus in self.spec.buses.items():
            if _parent(name) == prefix:
                ins, outs = bus.ports
                graph.boxes[name] = Box(name, bus.type, _leaf(name), bus.type, [], list(ins),
                                        list(outs))
        # boxes in the order the diagram lists them (subsystems among the blocks)
        graph.boxes = {n: graph.boxes[n] for n in sorted(graph.boxes, key=self.line)}
        for w in self.spec.written_wires:
            if _parent(w.src.block) == prefix and w.src.block in graph.boxes:
                wire = self.wire(graph, w.src, w.dst)
                if wire is not None:
                    graph.wires.append(wire)
        if not prefix:
            self.port_boxes(graph, "", self.spec.inputs, self.spec.outputs)
        return graph

    def line(self, name):
        spec = (self.spec.blocks.get(name) or self.spec.subsystems.get(name)
                or self.spec.buses[name])
        return spec.loc.line or 0

    def block_box(self, name, spec):
        ins, outs = self.ports.get(name, ([], []))
        marked = self.marks.get(name)
        marks, shown = marked if marked else (None, None)
        params = {k: v for k, v in spec.params.items() if k != shown}
        return Box(name, "block", _leaf(name), spec.type, _param_lines(params), ins, outs,
                   input_marks=list(marks) if marks else None,
                   position=self.spec.layout.get(name))

    def subsystem_box(self, sub):
        params = (([f"file: {sub.source}"] if sub.source != "inline" else [])
                  + _param_lines(self.spec.scopes[sub.scope].overrides))
        ins, outs = list(sub.inputs), list(sub.outputs)
        controls, kind = _controls(sub.condition), "subsystem"
        if controls:
            ins += [port for port, _ in controls]
            kind = f"{'enabled' if sub.condition.kind == 'enable' else 'triggered'} subsystem"
        labels = [label for _, label in controls]
        if not self.expand:
            return Box(sub.name, "subsystem", _leaf(sub.name), kind, params, ins, outs,
                       position=self.spec.layout.get(sub.name), controls=labels)
        return Box(sub.name, "frame", _leaf(sub.name), kind, params, ins, outs,
                   self.inside(sub), controls=labels)

    def inside(self, sub):
        """The graph inside subsystem `sub`, its ports as boxes wired to what they stand for."""
        return self.port_boxes(self.level(sub.name + "/"), sub.name, sub.inputs, sub.outputs)

    def port_boxes(self, graph, owner, inputs, outputs):
        """`graph` with a box for each input and output port of `owner` (a subsystem's
        name, '' for the diagram's own), wired to what they stand for."""
        for port, targets in inputs.items():
            key = f"{owner}:in:{port}" if owner else f"in:{port}"
            graph.boxes[key] = Box(key, "inport", port, "input", [], [], [port],
                                   position=None if owner else self.spec.layout.get(key))
            shape = self.input_shape(targets[0]) if targets else ""
            for ep in targets:
                end = self.end(graph, ep, output=False)
                if end is not None:
                    graph.wires.append(Wire(key, 0, *end, shape, self.dependency_in(ep)))
        for port, ep in outputs.items():
            key = f"{owner}:out:{port}" if owner else f"out:{port}"
            graph.boxes[key] = Box(key, "outport", port, "output", [], [port], [],
                                   position=None if owner else self.spec.layout.get(key))
            end = self.end(graph, ep, output=True)
            if end is not None:
                graph.wires.append(Wire(*end, key, 0, self.output_shape(ep),
                                        self.computed_out(ep), index_text(ep.index)))
        return graph

    # -- wires -----------------------------------------------------------------------------
    def wire(self, graph, src, dst):
        """The Wire between two written endpoints, or None when an end is not known."""
        s, d = self.end(graph, src, output=True), self.end(graph, dst, output=False)
        if s is None or d is None:
            return None
        dependency = self.computed_out(src) and self.dependency_in(dst)
        return Wire(*s, *d, self.output_shape(src), dependency, index_text(src.index))

    def end(self, graph, ep, output):
        """(box key, port index) of a written endpoint (the port may be omitted when the box
        has one port on that side), or None when the box or its port is not known (the
        compiler reports it)."""
        box = graph.boxes.get(ep.block)
        names = box.outputs if output and box else box.inputs if box else []
        if ep.port is None:
            return (ep.block, 0) if len(names) == 1 else None
        return (ep.block, names.index(ep.port)) if ep.port in names else None

    def through_output(self, ep):
        """The flat block output behind a written source (through subsystem outputs and
        buses), with the index applied on the way; None for a bus."""
        ep = resolve_signal(self.spec, ep)
        if isinstance(ep, Bundle):
            return None
        return ep.block, ep.port if ep.port is not None else self.ports[ep.block][1][0], ep.index

    def through_inputs(self, ep):
        """The flat block inputs a written destination feeds (through subsystem inputs)."""
        return [(t.block, t.port if t.port is not None else self.ports_of(t.block)[0][0])
                for t in through_inputs(self.spec.subsystems, ep)]

    def ports_of(self, name):
        """(inputs, outputs) names of a block or a bus."""
        return self.spec.buses[name].ports if name in self.spec.buses else self.ports[name]

    def output_shape(self, ep):
        if self.model is None:
            return ""
        if self.through_output(ep) is None:
            return ""  # a bus: drawn as a bus
        block, port, index = self.through_output(ep)
        shape = self.model.outputs[(block, port)].shape
        if index is None:
            return _shape_text(shape)
        if isinstance(index, int):
            return ""
        return _shape_text((len(range(shape[0])[slice(*index)]),))

    def input_shape(self, ep):
        if self.model is None:
            return ""
        block, port = self.through_inputs(ep)[0]
        if block in self.spec.buses:
            return ""
        view = self.blocks[block].u[self.ports[block][0].index(port)]
        return _shape_text(view.shape) if view is not None else ""

    def computed_out(self, ep):
        if self.model is None:
            return False
        out = self.through_output(ep)
        return out is None or out[:2] in self.computed

    def dependency_in(self, ep):
        return self.model is not None and any(t[0] in self.spec.buses or t in self.needed
                                              for t in self.through_inputs(ep))


EDGE_MARKS = {"rising": "↑", "falling": "↓", "either": "↕"}


def _controls(condition):
    """(input port, label) of a conditional subsystem's control inputs, in port order."""
    if condition is None:
        return []
    if condition.kind == "enable":
        return [("enable", "enable")]
    return [("trigger", f"trigger {EDGE_MARKS[condition.edge]}")] + (
        [("enable", "enable")] if condition.enable is not None else [])


def _parent(name):
    return name.rpartition("/")[0] + "/" if "/" in name else ""


def _leaf(name):
    return name.rpartition("/")[2]


def _param_lines(params):
    """'key = value' lines for the parameters set in the file (as written), at most a few,
    each shortened to fit a box."""
    lines = []
    for key, value in params.items():
        if key in _HIDDEN_PARAMS or key == "diagram":
            continue
        lines.append(_shorten(f"{key} = {_value_text(value.raw)}"))
    if len(lines) > MAX_PARAM_LINES:
        lines = lines[:MAX_PARAM_LINES - 1] + [f"(+{len(lines) - MAX_PARAM_LINES + 1} more)"]
    return lines


def _value_text(raw):
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, float):
        return f"{raw:g}"
    if isinstance(raw, (list, tuple)):
        return "[" + ", ".join(_value_text(v) for v in raw) + "]"
    if isinstance(raw, dict):
        return "{" + ", ".join(f"{k}: {_value_text(v)}" for k, v in raw.items()) + "}"
    text = " ".join(str(raw).split())
    return text if text else '""'  # an empty string (a scope's unit) shows as written


def _shorten(text):
    return text if len(text) <= MAX_PARAM_CHARS else text[:MAX_PARAM_CHARS - 1] + "…"
