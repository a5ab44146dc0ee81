"""One level of the edited diagram as the page draws it (plain JSON data), and its problems.

The diagram is read as `blocksim check` reads it (language.diagram.read_diagram, then the
compiler's passes), but a diagram being built is shown however far it gets: the blocks with
the ports they declare (a block with a missing parameter shows the ports it would have),
the wires that reach known ports, every problem with the text `check` prints and where it
belongs (a block, its parameter, a section's entry, a wire). The boxes, their texts and the
wires' routes are `blocksim draw`'s: draw.graph builds the level, draw.layout places it
(where `layout:` says, or in dataflow order) and routes it, draw.render measures the texts.
"""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from ..errors import DiagramError, DiagramErrors, Problems
from ..draw.graph import build_level
from ..draw.render import COLOURS, STYLES, box_texts, lay_out_graph
from ..engine.compiler.blocks import probe_ports
from ..engine.compiler.pipeline import Compilation
from ..language import expr
from ..language.diagram import Loc, index_text, parse_wire, read_diagram
from ..language.library import PluginError

_PORT_KEY = re.compile(r".*:(in|out):([A-Za-z_][A-Za-z0-9_]*)\Z")


class Checked:
    """The diagram read and compiled as far as it goes: the spec, the model (None unless
    it compiles), the port names and input marks of its blocks, every problem."""

    def __init__(self, doc, library, sections, known_ports):
        self.problems = []
        texts = doc.texts()
        self.spec, problems = read_diagram(doc.shown, texts=texts)
        self.problems += problems.errors
        self.model = None
        compilation = Compilation(self.spec, library)
        compilation.built_sections = sections
        with expr.shared_budget():
            if not problems:
                try:
                    self.model = compilation.compile()
                except (DiagramError, DiagramErrors) as e:
                    self.problems += e.errors if isinstance(e, DiagramErrors) else [e]
            else:
                compilation.problems = Problems()
                try:
                    compilation.values_and_blocks(check=False)
                except (DiagramError, DiagramErrors):
                    pass
                self.problems += compilation.problems.errors
        built = getattr(compilation, "built", None)
        values = getattr(compilation, "values", None)
        self.ports, self.marks = {}, {}
        for name, bspec in self.spec.blocks.items():
            if built is not None and name in built.ports:
                ins, outs = built.ports[name]
                self.ports[name] = (list(ins), list(outs))
                self.marks[name] = built.blocks[name].input_marks()
                continue
            cls = _class(library, bspec.type)
            probed = probe_ports(cls, bspec, self.spec, values) if cls and values else None
            if probed is None:
                probed = known_ports.get((name, bspec.type))
            if probed is not None:
                self.ports[name] = probed
        known_ports.update({(n, self.spec.blocks[n].type): p for n, p in self.ports.items()})
        self.ports.update((name, tuple(map(list, bus.ports)))  # buses: the loader's blocks
                          for name, bus in self.spec.buses.items())
        self.problems = _unique(self.problems)


def _class(library, btype):
    try:
        return library.block_class(btype)
    except PluginError:  # the problems say so
        return None


def _unique(errors):
    seen, out = set(), []
    for e in errors:
        if str(e) not in seen:
            seen.add(str(e))
            out.append(e)
    return out


def level_view(doc, level, checked):
    """The JSON of `level` of `doc` (see docs/editor.md, GET /api/diagram)."""
    prefix = level.prefix
    graph = build_level(checked.spec, checked.ports, checked.marks, prefix, checked.model) \
        if not prefix or prefix[:-1] in checked.spec.subsystems else None
    boxes, wires, dots, labels, drawing = [], [], [], [], None
    if graph is not None and graph.boxes:
        drawing, measure = lay_out_graph(graph)
        ox, oy = drawing.origin
        for placed in drawing.boxes:
            boxes.append(_box(placed, measure, prefix, ox, oy, checked.model))
        dots = [[x + ox, y + oy] for x, y in drawing.dots]
        labels = [[x + ox, y + oy, t] for x, y, t in drawing.labels]
    keys = {b["key"] for b in boxes}
    for wire in _level_wires(doc, level, checked):
        route = drawing.paths.get(wire.pop("route")) if drawing is not None else None
        if route is not None:
            wire["points"] = [[x + drawing.origin[0], y + drawing.origin[1]] for x, y in route]
        wire["shown"] = route is not None and wire["src"] in keys and wire["dst"] in keys
        wires.append(wire)
    return {
        "file": doc.shown, "level": list(level.names), "name": checked.spec.name,
        "positioned": isinstance(doc.data(level, "layout"), dict),
        "boxes": boxes, "wires": wires, "dots": dots, "labels": labels,
        "styles": {k: {"size": v[0], "weight": v[1], "style": v[2], "colour": v[3]}
                   for k, v in STYLES.items()},
        "fills": {k: v for k, v in COLOURS.items() if v != "none"},  # boxes as draw fills them
        "blocks": {name: {"type": body.get("type") if isinstance(body, dict) else None,
                          "values": _entries(doc, level, ("blocks", name), skip=("type",))}
                   for name, body in doc.blocks(level).items()},
        "sections": _sections(doc, level),
        "problems": [_problem(e, doc, level) for e in checked.problems],
        "dirty": doc.dirty, "can_undo": doc.can_undo, "can_redo": doc.can_redo,
    }


def _box(placed, measure, prefix, ox, oy, model):
    box = placed.box
    m = _PORT_KEY.match(box.key)
    key = f"{m.group(1)}:{m.group(2)}" if m else box.key[len(prefix):]
    texts = [[x + ox, y + oy, text, style, ha] for x, y, text, style, ha in box_texts(placed, measure)]
    ins, outs = _shapes(model, box)
    return {"key": key, "kind": box.kind, "type": box.type,
            "x": placed.x + ox, "y": placed.y + oy, "w": placed.w, "h": placed.h,
            "inputs": [{"name": n, "y": y + oy, "shape": s}
                       for n, y, s in zip(box.inputs, placed.in_ys, ins)],
            "outputs": [{"name": n, "y": y + oy, "shape": s}
                        for n, y, s in zip(box.outputs, placed.out_ys, outs)],
            "texts": texts}


def _shapes(model, box):
    """The shapes of a block's ports as text ('()', '(6,)'), when the diagram compiles."""
    block = {b.name: b for b in model.blocks}.get(box.key) if model is not None else None
    if block is None:
        return [""] * len(box.inputs), [""] * len(box.outputs)
    ins = [str(tuple(u.shape)) if u is not None else "" for u in block.u]
    outs = [str(tuple(model.outputs[(box.key, p)].shape)) if (box.key, p) in model.outputs
            else "" for p in box.outputs]
    return ins, outs


def _level_wires(doc, level, checked):
    """Every wire of the level: its id ('SRC.PORT->DST.PORT', the ports named even where
    the file leaves them out), where it is written (its index in `wires:`, or the subsystem
    port entry), and the key of its route in the drawing."""
    prefix = level.prefix
    subsystems = checked.spec.subsystems

    def end(block, port, side):
        """(port name, its index on the box) of an end on block `block` of this level."""
        flat = prefix + block
        names = (list((subsystems[flat].inputs, subsystems[flat].outputs)[side])
                 if flat in subsystems else checked.ports.get(flat, ([], []))[side])
        port = port if port is not None else (names[0] if len(names) == 1 else None)
        return port, names.index(port) if port in names else None

    out = []
    for i, text in enumerate(doc.wires(level)):
        try:
            w = parse_wire(text, Loc(doc.shown))
        except DiagramError:
            continue
        (sp, si), (dp, di) = end(w.src.block, w.src.port, 1), end(w.dst.block, w.dst.port, 0)
        out.append({"id": f"{w.src.block}.{sp}{index_text(w.src.index)}->{w.dst.block}.{dp}",
                    "index": i, "text": text, "src": w.src.block, "src_port": sp,
                    "dst": w.dst.block, "dst_port": dp,
                    "route": (prefix + w.src.block, si, prefix + w.dst.block, di)})
    sub = subsystems.get(prefix[:-1]) if prefix else None
    if prefix and sub is None:
        return out
    # the level's own ports: a subsystem's inside it, the diagram's at the top
    inputs, outputs = (sub.inputs, sub.outputs) if sub else (checked.spec.inputs,
                                                              checked.spec.outputs)
    owner = f"{sub.name}:" if sub else ""
    for port, targets in inputs.items():
        for t in targets:
            name = t.block[len(prefix):]
            tp, ti = end(name, t.port, 0)
            out.append({"id": f"in:{port}.{port}->{name}.{tp}", "port": ["inputs", port],
                        "text": t.text()[len(prefix):], "src": f"in:{port}", "src_port": port,
                        "dst": name, "dst_port": tp,
                        "route": (f"{owner}in:{port}", 0, t.block, ti)})
    for port, t in outputs.items():
        name = t.block[len(prefix):]
        sp, si = end(name, t.port, 1)
        out.append({"id": f"{name}.{sp}{index_text(t.index)}->out:{port}.{port}",
                    "port": ["outputs", port], "text": t.text()[len(prefix):], "src": name,
                    "src_port": sp, "dst": f"out:{port}", "dst_port": port,
                    "route": (t.block, si, f"{owner}out:{port}", 0)})
    return out


def _entries(doc, level, path, skip=()):
    """The entries of a mapping: key -> {"source": as written, "value": the data}."""
    data = doc.data(level, *path)
    src = doc.sources[level.file]
    if not isinstance(data, dict):
        return {}
    return {k: {"source": src.source_of(level.at(*path, k)), "value": v}
            for k, v in data.items() if k not in skip}


def _sections(doc, level):
    top = doc.level()
    out = {"parameters": _entries(doc, level, ("parameters",)),
           "inputs": _entries(doc, level, ("inputs",)),
           "outputs": _entries(doc, level, ("outputs",))}
    if not level.names:
        for key in ("simulation", "record", "robots"):
            out[key] = _entries(doc, top, (key,))
        for key in ("name", "description"):
            value = doc.data(top, key)
            out[key] = {"source": doc.sources[top.file].source_of((key,)), "value": value} \
                if value is not None else None
    return out


def _problem(error, doc, level):
    """A problem as the page shows it: the text `check` prints, and where it belongs on this
    level: `block` (a box of this level: the block, or the subsystem holding it), `path`
    (the entry of the level's mapping it concerns: ['blocks', 'Kp', 'K'],
    ['simulation', 'stop'], ['wires', 3]), found from the line it names, the block and
    parameter it carries and the names its message quotes."""
    text = str(error)
    out = {"text": text, "block": None, "path": None}
    block = getattr(error, "block", None)
    if block and block.startswith(level.prefix):
        out["block"] = block[len(level.prefix):].split("/")[0]
    path = _path_at(doc, level, getattr(error, "file", None), getattr(error, "line", None), text)
    if path is None and out["block"] is not None:
        param = getattr(error, "param", None)
        path = ["blocks", out["block"]] + ([param] if param else [])
    if path is None and not level.names:
        setting = re.match(r"[^:]*(?::\d+)?: error: simulation\.(\w+)", text)
        path = ["simulation", setting.group(1)] if setting else None
    missing = re.search(r"missing required parameter '(\w+)'", text)
    if path is not None and len(path) == 2 and path[0] == "blocks" and missing:
        path = path + [missing.group(1)]
    out["path"] = path
    if out["block"] is None and path and path[0] == "blocks" and len(path) > 1:
        out["block"] = path[1]
    return out


def _path_at(doc, level, file, line, text):
    """The path (in the level's mapping) of the entry written on `line` of `file`: the
    deepest key there, the one the message names when several share the line."""
    if file is None or line is None:
        return None
    src = doc.sources.get(level.file)
    if src is None or str(level.file) != _resolved(doc, file):
        return None
    base = src.node(level.base)
    found = []

    def visit(node, path):
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                here = path + [k.value]
                if k.start_mark.line + 1 == line:
                    found.append(here)
                visit(v, here)
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                if v.start_mark.line + 1 == line and not isinstance(v, yaml.MappingNode):
                    found.append(path + [i])
                visit(v, path + [i])
    visit(base, [])
    if not found:
        return None
    mentioned = set(re.findall(r"'([^']+)'", text)) | set(re.findall(r"\.(\w+)", text))
    named = [p for p in found if str(p[-1]) in mentioned]
    return max(named or found, key=len)


def _resolved(doc, file):
    return str(doc.path) if file == doc.shown else str(Path(file).resolve())
