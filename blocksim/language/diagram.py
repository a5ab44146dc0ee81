"""Diagram files -> a flat, located `DiagramSpec` (nothing evaluated, nothing built yet).

Loading checks the document's structure (strict keys with did-you-mean suggestions, block
names, wire syntax), flattens subsystems into `outer/inner` names, resolves wires through
subsystem ports, and applies `--set` overrides by dotted path. Every raw value keeps where it
came from (`Loc`) so that later stages can report `FILE:LINE`. Loading never executes code.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import DiagramError, Problems, suggest
from ..util.gcpause import without_gc
from .buses import BUS_TYPES, Buses, bus_spec
from .yamlio import YList, YMap, load_yaml_file, load_yaml_text

FORMAT_VERSION = 1
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_END = r"([A-Za-z_][A-Za-z0-9_/]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?"
WIRE_RE = re.compile(
    rf"\s*{_END}(?:\[\s*(-?\d*)\s*(:)?\s*(-?\d*)\s*\])?\s*->\s*{_END}\s*\Z")
SIGNAL_RE = re.compile(rf"\s*{_END}(?:\[\s*(-?\d*)\s*(:)?\s*(-?\d*)\s*\])?\s*\Z")

# a diagram's keys; a subsystem's are the same (its `inputs:` and `outputs:` are its ports;
# the top level's are the diagram's own, which an exported diagram reads and gives)
TOP_KEYS = ("blocksim", "name", "description", "parameters", "robots", "blocks", "wires",
            "simulation", "record", "layout", "inputs", "outputs")
SUBSYSTEM_KEYS = TOP_KEYS
# the options of an enabled subsystem (a triggered one has only `initial`)
CONDITIONAL_OPTIONS = ("outputs_when_disabled", "states_when_enabling", "initial")
# the keys of a subsystem block (`{type: subsystem, ...}`), and a trigger's edges
SUBSYSTEM_BLOCK_KEYS = ("file", "diagram", "parameters", "enable", "trigger",
                        *CONDITIONAL_OPTIONS)
TRIGGER_EDGES = ("rising", "falling", "either")
# what a file given as the top-level diagram may be instead
TOP_KEY_HINTS = {"blocksim-sweep": "this is a sweep file: `blocksim sweep FILE` runs it"}
# the keys of a top-level input written as a mapping: its targets and the value it reads
# when the diagram runs on its own
INPUT_KEYS = ("to", "value")
INPORT = "inport"  # the type of the block each top-level input makes (engine/compiler/inports.py)
MAX_SUBSYSTEM_DEPTH = 100  # subsystems nested in subsystems (files and inline diagrams)
MAX_BLOCKS = 100_000  # blocks once every subsystem is expanded
YAML_BOOL_HINT = ("YAML 1.1 reads unquoted yes/no/on/off/true/false as booleans: quote the "
                  "word, e.g. 'on'")
SIMULATION_KEYS = ("start", "stop", "solver", "rtol", "atol", "max_step", "step",
                   "output_interval", "refine", "event_tol", "max_consecutive_events",
                   "max_steps", "mode")


@dataclass(frozen=True)
class Loc:
    """Where a value came from: a file and line, or a `--set` option."""
    file: str
    line: int | None = None

    def error(self, message, **kw):
        return DiagramError(message, file=self.file, line=self.line, **kw)


@dataclass
class Value:
    """A raw YAML value (unevaluated) and its location."""
    raw: object
    loc: Loc


@dataclass
class Scope:
    """A parameter namespace: a diagram's `parameters:` (evaluated in order), optionally
    overridden by the including subsystem block's `parameters:` (evaluated in `parent`)."""
    params: dict
    overrides: dict = field(default_factory=dict)
    parent: int | None = None


@dataclass
class BlockSpec:
    name: str
    type: str
    params: dict  # name -> Value
    loc: Loc
    scope: int


@dataclass
class SubsystemSpec:
    """A subsystem block, kept after flattening for `--set blocks.S.parameters.NAME`, for
    the hierarchy `blocksim check` shows and for `blocksim draw`: its inner scope, where it
    came from, and its ports mapped to inner endpoints (flat names)."""
    name: str
    source: str  # the included file as written, or "inline"
    scope: int
    loc: Loc
    inputs: dict = field(default_factory=dict)  # port name -> [Endpoint]
    outputs: dict = field(default_factory=dict)  # port name -> Endpoint
    # an enabled or triggered subsystem's control: its outputs are then those of the block
    # named as the subsystem (engine/conditional.py), which runs the inner blocks
    condition: ConditionSpec | None = None


@dataclass(frozen=True)
class ConditionSpec:
    """What makes a subsystem conditional, as written: `enable: SIGNAL` and/or `trigger:
    {signal: SIGNAL, edge: EDGE}`, each signal an Endpoint of the including diagram."""
    kind: str  # "enable" or "trigger"
    signal: Endpoint  # the enable signal, or the trigger signal
    edge: str = ""  # the trigger's edge
    enable: Endpoint | None = None  # a triggered subsystem's enable signal, if any


@dataclass(frozen=True)
class Endpoint:
    block: str
    port: str | None
    index: object  # None, an int, or a (start, stop) slice pair
    loc: Loc

    def text(self):
        """As a diagram writes it: 'Robot.q[0:3]'."""
        return self.block + (f".{self.port}" if self.port else "") + index_text(self.index)


def index_text(index):
    """An endpoint's index as written: '', '[2]', '[1:]', '[0:3]'."""
    if index is None:
        return ""
    if isinstance(index, int):
        return f"[{index}]"
    return "[" + ":".join("" if i is None else str(i) for i in index) + "]"


@dataclass
class WireSpec:
    src: Endpoint
    dst: Endpoint
    loc: Loc


@dataclass
class DiagramSpec:
    name: str
    description: str
    file: str
    scopes: list
    robots: dict  # name -> dict option -> Value (and its Loc under key None)
    blocks: dict  # flat name -> BlockSpec
    wires: list  # resolved through subsystem ports: both ends are blocks
    simulation: dict  # key -> Value
    record: dict  # name -> Value (signal text)
    subsystems: dict = field(default_factory=dict)  # flat name -> SubsystemSpec
    written_wires: list = field(default_factory=list)  # as written: ends may be subsystems
    buses: dict = field(default_factory=dict)  # flat name -> buses.BusSpec (bus, bus_select)
    # the overrides applied (for meta.json): path -> the last item that set it, in the order
    # of those last writes. Applying them in that order gives this spec again, and a model
    # set a million times in a loop keeps one entry per path, not a million
    overrides: dict = field(default_factory=dict)
    layout: dict = field(default_factory=dict)  # flat block or subsystem name -> (x, y)
    # the diagram's own ports (top-level `inputs:` / `outputs:`), as a subsystem's: input
    # name -> [Endpoint] it feeds (from the inport block of that name), output name ->
    # Endpoint
    inputs: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)
    # the blocks whose BlockSpec is this spec's own (None: all); a copy shares the others'
    # with the spec it was copied from until one of the two changes them (`block_to_change`)
    own: set | None = field(default=None, repr=False, compare=False)

    def copy(self):
        """A copy whose containers `apply_overrides` may change without touching this spec
        (the raw values themselves are shared: nothing mutates them). A batch of runs loads
        a diagram once and applies each run's overrides to a copy. The blocks' specs are
        shared until the copy changes one (Model.set costs the same in a diagram of any
        size): from now on this spec shares them too, and copies one before it changes it."""
        self.own = set()
        return DiagramSpec(
            name=self.name, description=self.description, file=self.file,
            scopes=[Scope(dict(s.params), dict(s.overrides), s.parent) for s in self.scopes],
            robots={name: dict(options) for name, options in self.robots.items()},
            blocks=dict(self.blocks), own=set(),
            wires=self.wires, simulation=dict(self.simulation), record=dict(self.record),
            subsystems=self.subsystems,
            written_wires=self.written_wires, buses=self.buses, overrides=dict(self.overrides),
            layout=self.layout, inputs=self.inputs, outputs=self.outputs)

    def block_to_change(self, name):
        """The BlockSpec of block `name`, this spec's own (a copy of the shared one the
        first time), for `apply_overrides` to change."""
        block = self.blocks[name]
        if self.own is not None and name not in self.own:
            block = self.blocks[name] = BlockSpec(block.name, block.type, dict(block.params),
                                                  block.loc, block.scope)
            self.own.add(name)
        return block


def bool_hint(value):
    """The hint for a value YAML turned into a boolean where a word was meant, else None."""
    return YAML_BOOL_HINT if isinstance(value, bool) else None


def check_name(value, loc):
    """The diagram's `name` (it names the run directory runs/<name>/): a string, or a
    number taken as its text; one path component."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise loc.error(f"'name' must be a string, got {_kind(value)}", hint=bool_hint(value))
    if value in (".", "..") or "/" in value or "\\" in value or "\0" in value \
            or not value.strip():
        raise loc.error(f"'name' {value!r} cannot name a run directory (runs/<name>/)",
                        hint="use a plain name without '/', e.g. name: arm_test")
    return value


def _shown(value):
    """A YAML scalar as written: true / false for booleans, else its repr."""
    return str(value).lower() if isinstance(value, bool) else repr(value)


def _kind(value):
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    return {"YMap": "a mapping", "YList": "a list", "dict": "a mapping",
            "list": "a list"}.get(type(value).__name__, f"a {type(value).__name__}")


def _loc(node, key, file):
    line = node.key_line(key) if isinstance(node, YMap) else getattr(node, "line", None)
    return Loc(file, line)


def _item_loc(node, i, file):
    return Loc(file, node.item_line(i) if isinstance(node, YList) else getattr(node, "line", None))


def _check_keys(node, allowed, what, file, problems, hints=None):
    for key in node:
        if key not in allowed:
            problems.add(_loc(node, key, file).error(
                f"unknown key '{key}' in {what}{suggest(key, allowed)}",
                hint=(hints or {}).get(key)))


def parse_endpoint(text, loc, pattern=SIGNAL_RE):
    """'Block.port[i:j]' -> Endpoint; raises DiagramError on bad syntax."""
    m = pattern.match(text) if isinstance(text, str) else None
    if not m:
        raise loc.error(f"invalid signal {text!r}: expected 'block.port' or 'block.port[i:j]'",
                        hint=bool_hint(text))
    return Endpoint(m.group(1), m.group(2), _index(m.group(3), m.group(4), m.group(5), loc), loc)


def _index(start, colon, stop, loc):
    if colon:
        return (int(start) if start else None, int(stop) if stop else None)
    if start:
        return int(start)
    if start is not None or stop:
        raise loc.error("empty index '[]'")
    return None


def parse_wire(text, loc):
    m = WIRE_RE.match(text) if isinstance(text, str) else None
    if not m:
        raise loc.error(f"invalid wire {text!r}: expected 'src.port -> dst.port'",
                        hint="the port may be omitted on a side whose block has exactly one port")
    src = Endpoint(m.group(1), m.group(2), _index(m.group(3), m.group(4), m.group(5), loc), loc)
    dst = Endpoint(m.group(6), m.group(7), None, loc)
    return WireSpec(src, dst, loc)


class _Loader:
    """Reads a diagram file and its subsystems into one flat DiagramSpec."""

    def __init__(self):
        self.problems = Problems()
        self.documents = {}  # resolved path -> loaded document (a file included many times)
        self.paths = {}  # (including file, file as written) -> resolved path
        self.sizes = {}  # resolved path -> blocks the file expands to
        self.expanded = 0  # blocks so far, every subsystem expanded
        self.scopes = []
        self.blocks = {}
        self.wires = []
        self.specs = {}  # flat name -> SubsystemSpec
        self.subsystems = {}  # the same, for those whose ports could be read
        self.buses = {}  # flat name -> BusSpec
        self.hidden_wires = []  # into conditional subsystems' blocks: not drawn
        self.robots = {}
        self.layout = {}  # flat name -> (x, y)
        self.texts = {}  # resolved path -> text that stands in for the file (unsaved edits)
        self.top_ports = ({}, {}, {})  # the diagram's own inputs, outputs, input values

    # -- documents ---------------------------------------------------------------------------
    def document(self, doc, file, prefix, parent_scope, overrides, stack, top):
        if not isinstance(doc, YMap):
            raise DiagramError("a diagram must be a YAML mapping", file=file,
                               line=getattr(doc, "line", 1))
        allowed = TOP_KEYS if top else SUBSYSTEM_KEYS
        _check_keys(doc, allowed, "the diagram" if top else "the subsystem", file, self.problems,
                    TOP_KEY_HINTS if top else None)
        if top:
            if "blocksim" not in doc:
                self.problems.add(DiagramError("missing 'blocksim: 1' (the format version)",
                                               file=file, line=doc.line))
            elif doc["blocksim"] != FORMAT_VERSION or isinstance(doc["blocksim"], bool):
                self.problems.add(_loc(doc, "blocksim", file).error(
                    f"unsupported format version {_shown(doc['blocksim'])} (this blocksim reads 1)"))
        params = {}
        raw_params = doc.get("parameters") or YMap()
        if not isinstance(raw_params, YMap):
            self.problems.add(_loc(doc, "parameters", file).error("'parameters' must be a mapping"))
            raw_params = YMap()
        for key, raw in raw_params.items():
            loc = _loc(raw_params, key, file)
            if not isinstance(key, str) or not NAME_RE.match(key):
                self.problems.add(loc.error(f"invalid parameter name {key!r}",
                                            hint=bool_hint(key)))
                continue
            params[key] = Value(raw, loc)
        scope = len(self.scopes)
        self.scopes.append(Scope(params, overrides, parent_scope))

        if "robots" in doc:
            if not top:
                self.problems.add(_loc(doc, "robots", file).error(
                    "robots must be declared in the top-level diagram"))
            else:
                self.robot_section(doc["robots"], file, _loc(doc, "robots", file))

        blocks = doc.get("blocks")
        if not isinstance(blocks, YMap) or not blocks:
            self.problems.add(_loc(doc, "blocks", file).error("'blocks' must be a non-empty mapping")
                              if "blocks" in doc else
                              DiagramError("missing 'blocks'", file=file, line=doc.line))
            blocks = YMap()
        for name, body in blocks.items():
            self.block(name, body, blocks, file, prefix, scope, stack)
        placed = list(blocks)
        if top:
            self.top_ports = self.ports_of(doc, file, "", blocks)
            placed += port_keys(*self.top_ports[:2])
        if "layout" in doc:
            self.positions(doc["layout"], placed, file, prefix, _loc(doc, "layout", file))

        wires = doc.get("wires") or YList()
        if not isinstance(wires, YList):
            self.problems.add(_loc(doc, "wires", file).error("'wires' must be a list"))
            wires = YList()
        for i, text in enumerate(wires):
            loc = _item_loc(wires, i, file)
            try:
                w = parse_wire(text, loc)
            except DiagramError as e:
                self.problems.add(e)
                continue
            self.wires.append(WireSpec(_prefixed(w.src, prefix), _prefixed(w.dst, prefix), loc))

        if not top:
            return self.ports_of(doc, file, prefix)[:2]
        return None

    def positions(self, node, blocks, file, prefix, loc):
        """`layout:` block name -> [x, y], the top left corner of its box in points (y
        down), as `blocksim edit` writes it and `blocksim draw` places the boxes; the top
        level's own ports are `in:NAME` and `out:NAME` there."""
        if node is None:
            return
        if not isinstance(node, YMap):
            self.problems.add(loc.error("'layout' must be a mapping of block name -> [x, y]"))
            return
        for name, xy in node.items():
            at = _loc(node, name, file)
            if name not in blocks:
                self.problems.add(at.error(f"'layout' places an unknown block '{name}'"
                                           f"{suggest(name, blocks)}"))
            elif not (isinstance(xy, list) and len(xy) == 2 and all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) < 1e9
                    for v in xy)):
                self.problems.add(at.error(f"the position of '{name}' must be [x, y], two "
                                           f"numbers (points), got {xy!r}", block=prefix + name))
            else:
                self.layout[prefix + name] = (float(xy[0]), float(xy[1]))

    def robot_section(self, node, file, loc):
        if not isinstance(node, YMap):
            self.problems.add(loc.error("'robots' must be a mapping of name -> model options"))
            return
        for name, body in node.items():
            rloc = _loc(node, name, file)
            if not isinstance(name, str) or not NAME_RE.match(name):
                self.problems.add(rloc.error(f"invalid robot name {name!r}",
                                             hint=bool_hint(name)))
                continue
            if not isinstance(body, YMap):
                self.problems.add(rloc.error(f"robot '{name}' must be a mapping of options"))
                continue
            opts = {k: Value(v, _loc(body, k, file)) for k, v in body.items()}
            self.robots[name] = {"__loc__": rloc, **opts}

    def block(self, name, body, node, file, prefix, scope, stack):
        loc = _loc(node, name, file)
        if not isinstance(name, str) or not NAME_RE.match(name):
            self.problems.add(loc.error(f"invalid block name {name!r}: names match "
                                        "[A-Za-z_][A-Za-z0-9_]*", hint=bool_hint(name)))
            return
        if not isinstance(body, YMap) or "type" not in body:
            self.problems.add(loc.error(f"block '{name}' needs a mapping with a 'type'"))
            return
        flat = prefix + name
        btype = body["type"]
        params = {k: Value(v, _loc(body, k, file)) for k, v in body.items() if k != "type"}
        if btype == INPORT:
            self.problems.add(loc.error(
                f"block '{name}' is of type {INPORT}: a diagram's inputs are declared under "
                "`inputs:` (name: the block input it feeds), which makes their blocks",
                block=flat))
            return
        if btype == "subsystem":
            self.subsystem(flat, params, loc, file, scope, stack, prefix)
            return
        if btype in BUS_TYPES:
            items = body.get("elements")
            spec = bus_spec(flat, btype, params, loc,
                            lambda k: _item_loc(items, k, file), self.problems)
            if spec is not None:
                self.buses[flat] = spec
            return
        if not isinstance(btype, str):
            self.problems.add(_loc(body, "type", file).error(
                f"block type must be a name, got {btype!r}", hint=bool_hint(btype)))
            return
        self.expanded += 1
        if self.expanded > MAX_BLOCKS:  # stops loading: a file included too many times over
            chain = " -> ".join(p.name for p in stack if p is not None)
            raise loc.error(f"the diagram has more than {MAX_BLOCKS:,} blocks once its "
                            "subsystems are expanded", block=flat,
                            hint=f"while expanding {chain}" if chain else None)
        self.blocks[flat] = BlockSpec(flat, btype, params, loc, scope)

    def subsystem(self, flat, params, loc, file, scope, stack, prefix):
        unknown = set(params) - set(SUBSYSTEM_BLOCK_KEYS)
        for key in sorted(unknown):
            self.problems.add(params[key].loc.error(
                f"unknown key '{key}' in subsystem '{flat}'"
                f"{suggest(key, SUBSYSTEM_BLOCK_KEYS)}", block=flat))
        condition = _condition(flat, params, prefix, self.problems)
        if ("file" in params) == ("diagram" in params):
            self.problems.add(loc.error("a subsystem needs exactly one of 'file' or 'diagram'",
                                        block=flat))
            return
        overrides = {}
        pnode = params.get("parameters")
        if pnode is not None:
            if not isinstance(pnode.raw, YMap):
                self.problems.add(pnode.loc.error("'parameters' must be a mapping", block=flat))
            else:
                overrides = {k: Value(v, _loc(pnode.raw, k, file)) for k, v in pnode.raw.items()}
        if "file" in params:
            target = params["file"]
            if not isinstance(target.raw, str):
                self.problems.add(target.loc.error("'file' must be a path", block=flat))
                return
            path = self.resolve(file, target.raw)
            if path in stack:
                self.problems.add(target.loc.error(
                    f"subsystem file {target.raw!r} includes itself "
                    f"({' -> '.join(p.name for p in stack + [path] if p is not None)})",
                    block=flat))
                return
            if not path.is_file():
                what = "not a file" if path.exists() else "not found"
                self.problems.add(target.loc.error(f"subsystem file {what}: {target.raw}",
                                                   block=flat))
                return
            doc = self.load(path)
            if doc is None:
                return
            size = self.size_of(path, len(stack))
            if self.expanded + size > MAX_BLOCKS:  # refused before expanding anything
                raise target.loc.error(
                    f"including {target.raw!r} here adds {size:,} blocks: the diagram would "
                    f"have more than {MAX_BLOCKS:,} once its subsystems are expanded",
                    block=flat, hint="a file included several times in each of many nested "
                                     "levels multiplies its blocks")
            inner_file, inner_stack = str(path), stack + [path]
        else:
            doc, inner_file, inner_stack = params["diagram"].raw, file, stack + [None]
            if not isinstance(doc, YMap):
                self.problems.add(params["diagram"].loc.error(
                    f"'diagram' must be a mapping (the inner diagram's keys), got {_kind(doc)}",
                    block=flat, hint="or name a diagram file with `file:`"))
                return
        if len(inner_stack) - 1 > MAX_SUBSYSTEM_DEPTH:  # the top diagram is not a level
            self.problems.add(loc.error(f"subsystems nested deeper than {MAX_SUBSYSTEM_DEPTH} "
                                        "levels", block=flat))
            return
        source = params["file"].raw if "file" in params else "inline"
        self.specs[flat] = SubsystemSpec(flat, source, len(self.scopes), loc)
        ports = self.document(doc, inner_file, flat + "/", scope, overrides, inner_stack, top=False)
        if ports is not None:
            self.specs[flat].inputs, self.specs[flat].outputs = ports
            self.subsystems[flat] = self.specs[flat]
            if condition is not None:
                self.conditional(self.specs[flat], condition, params, loc, scope)

    def conditional(self, sub, condition, params, loc, scope):
        """An enabled or triggered subsystem's block and the wires into it (_conditional)."""
        sub.condition = condition
        try:
            block, wires, hidden = _conditional(sub, condition, params, loc, scope)
        except DiagramError as e:
            self.problems.add(e)
            return
        self.expanded += 1
        self.blocks[sub.name] = block
        self.wires += wires
        self.hidden_wires += hidden

    def resolve(self, file, target):
        """The absolute path of subsystem file `target` named in `file` (cached: a file
        included many times is resolved once)."""
        key = (file, target)
        if key not in self.paths:
            self.paths[key] = (Path(file).parent / target).resolve()
        return self.paths[key]

    def size_of(self, path, depth):
        """Blocks that subsystem file `path` expands to, its own subsystems included; counted
        from the documents (each file once), not by expanding them. Levels beyond the
        nesting limit and cycles count nothing here: expanding reports them."""
        if path not in self.sizes:
            self.sizes[path] = 0  # a file including itself adds nothing while it is counted
            doc = self.load(path)
            size = self.size_of_doc(doc, str(path), depth) if isinstance(doc, YMap) else 0
            self.sizes[path] = size
        return self.sizes[path]

    def size_of_doc(self, doc, file, depth):
        blocks = doc.get("blocks")
        if not isinstance(blocks, YMap) or depth > MAX_SUBSYSTEM_DEPTH:
            return 0
        size = 0
        for body in blocks.values():
            if not isinstance(body, YMap) or body.get("type") != "subsystem":
                size += 1
            elif isinstance(body.get("file"), str):
                path = self.resolve(file, body["file"])
                size += self.size_of(path, depth + 1) if path.is_file() else 0
            elif isinstance(body.get("diagram"), YMap):
                size += self.size_of_doc(body["diagram"], file, depth + 1)
        return size

    def load(self, path):
        """A subsystem file's document, read once however often it is included; None when it
        cannot be read (the problem is reported the first time)."""
        if path not in self.documents:
            try:
                self.documents[path] = (load_yaml_text(self.texts[path], str(path))
                                        if path in self.texts else load_yaml_file(path))
            except DiagramError as e:
                self.problems.add(e)
                self.documents[path] = None
        return self.documents[path]

    def ports_of(self, doc, file, prefix, top_blocks=None):
        """(inputs, outputs, values) of a subsystem or, given its `blocks:` mapping, of the
        top level: input name -> [Endpoint], output name -> Endpoint, and the values the
        top's inputs written as {to: ..., value: ...} read when it runs on its own."""
        inputs, outputs, values = {}, {}, {}
        for key, dest in (("inputs", inputs), ("outputs", outputs)):
            node = doc.get(key) or YMap()
            if not isinstance(node, YMap):
                self.problems.add(_loc(doc, key, file).error(f"'{key}' must be a mapping"))
                continue
            for name, target in node.items():
                loc = _loc(node, name, file)
                if top_blocks is not None and not self.top_port_name(name, key, top_blocks,
                                                                     loc):
                    continue
                if key == "inputs" and isinstance(target, YMap):
                    target = self.input_mapping(name, target, values, file, top_blocks)
                    if target is None:
                        continue
                targets = target if (key == "inputs" and isinstance(target, list)) else [target]
                try:
                    eps = [_prefixed(parse_endpoint(t, loc), prefix) for t in targets]
                except DiagramError as e:
                    self.problems.add(e)
                    continue
                dest[name] = eps if key == "inputs" else eps[0]
        return inputs, outputs, values

    def top_port_name(self, name, key, blocks, loc):
        """Whether `name` may name one of the diagram's own ports (an identifier; an input
        becomes a block of that name, so no block or subsystem may have it)."""
        if not isinstance(name, str) or not NAME_RE.match(name):
            self.problems.add(loc.error(f"invalid {key[:-1]} name {name!r}: names match "
                                        "[A-Za-z_][A-Za-z0-9_]*", hint=bool_hint(name)))
            return False
        if key == "inputs" and name in blocks:
            self.problems.add(loc.error(
                f"input '{name}' has the name of a block: the diagram's inputs are blocks "
                "of their own (type inport), named by the input", block=name,
                hint="rename the input or the block"))
            return False
        return True

    def input_mapping(self, name, node, values, file, top_blocks):
        """The targets of a top-level input written as {to: targets, value: value}, its
        value kept in `values`; None when it is wrong (reported)."""
        loc = Loc(file, node.line)
        if top_blocks is None:
            self.problems.add(loc.error(
                f"input '{name}' of a subsystem names its targets only (a block's input or "
                "a list of them): the value an input reads alone is for a diagram's own "
                "inputs"))
            return None
        _check_keys(node, INPUT_KEYS, f"input '{name}'", file, self.problems)
        if "to" not in node:
            self.problems.add(loc.error(f"input '{name}' needs 'to': the block input it "
                                        "feeds, or a list of them"))
            return None
        if "value" in node:
            values[name] = Value(node["value"], _loc(node, "value", file))
        return node["to"]

    def inports(self):
        """The blocks of the diagram's own inputs, first among the blocks: an inport each,
        named by the input, reading the value written for it (when one is)."""
        inputs, _, values = self.top_ports
        made = {name: BlockSpec(name, INPORT, {"value": values[name]} if name in values else {},
                                targets[0].loc, 0)
                for name, targets in inputs.items() if targets}
        self.blocks = {**made, **self.blocks}

    # -- wires through subsystem ports ---------------------------------------------------
    def resolve_wires(self):
        """The written wires resolved into wires between blocks: through subsystem ports,
        and through buses (a wire out of a bus_select comes from the signal its element
        carries)."""
        self.written_wires = list(self.wires)
        # the diagram's own inputs feed their targets from the inport blocks named by them
        self.wires += [WireSpec(Endpoint(name, "y", None, ep.loc), ep, ep.loc)
                       for name, targets in self.top_ports[0].items() for ep in targets]
        buses = Buses(self.buses)
        through = lambda ep: through_outputs(self.subsystems, ep)  # noqa: E731
        plain = []
        hidden = set(map(id, self.hidden_wires))  # already into the subsystem's own block
        for w in [*self.wires, *self.hidden_wires]:
            try:
                src = through(w.src)
                dsts = [w.dst] if id(w) in hidden else through_inputs(self.subsystems, w.dst)
                for dst in dsts:
                    if dst.block in self.buses:
                        buses.connect(src, dst, w.loc)
                    else:
                        plain.append(WireSpec(src, dst, w.loc))
            except DiagramError as e:
                self.problems.add(e)
        buses.check(through, self.problems)
        subs = self.subsystems
        held = lambda dst: (subs[dst.block].condition.kind  # noqa: E731
                            if dst.block in subs and dst.port in subs[dst.block].outputs else None)
        self.wires = buses.wires(plain, through, self.problems, held)


def port_keys(inputs, outputs):
    """The names of the top level's own port boxes (in `layout:` and drawings)."""
    return [f"in:{name}" for name in inputs] + [f"out:{name}" for name in outputs]


def _condition(flat, params, prefix, problems):
    """The ConditionSpec of a subsystem block's `enable:` / `trigger:`, or None (its
    problems added)."""
    if "enable" not in params and "trigger" not in params:
        for key in CONDITIONAL_OPTIONS:
            if key in params:
                problems.add(params[key].loc.error(
                    f"'{key}' is for an enabled or triggered subsystem (add 'enable:' or "
                    "'trigger:')", block=flat))
        return None
    if "trigger" in params:
        for key in CONDITIONAL_OPTIONS[:2]:
            if key in params:
                problems.add(params[key].loc.error(
                    f"'{key}' is for an enabled subsystem: a triggered one holds its "
                    "outputs and states between runs", block=flat))
    try:
        enable = None
        if "enable" in params:
            enable = _prefixed(parse_endpoint(params["enable"].raw, params["enable"].loc),
                               prefix)
        if "trigger" not in params:
            return ConditionSpec("enable", enable)
        signal, edge = _trigger(params["trigger"])
        return ConditionSpec("trigger", _prefixed(signal, prefix), edge, enable)
    except DiagramError as e:
        e.block = e.block or flat
        problems.add(e)
        return None


def _trigger(value):
    """(signal Endpoint, edge) of `trigger: {signal: SIGNAL, edge: EDGE}` (or `trigger:
    SIGNAL`, a rising edge)."""
    raw = value.raw
    if not isinstance(raw, YMap):
        return parse_endpoint(raw, value.loc), "rising"
    for key in raw:
        if key not in ("signal", "edge"):
            raise _loc(raw, key, value.loc.file).error(
                f"unknown key '{key}' in a trigger{suggest(key, ('signal', 'edge'))}")
    if "signal" not in raw:
        raise value.loc.error("a trigger needs 'signal: BLOCK.PORT'")
    edge = raw.get("edge", "rising")
    if edge not in TRIGGER_EDGES:
        raise _loc(raw, "edge", value.loc.file).error(
            f"edge must be one of {', '.join(TRIGGER_EDGES)}, got {_shown(edge)}"
            f"{suggest(edge, TRIGGER_EDGES)}")
    return parse_endpoint(raw["signal"], _loc(raw, "signal", value.loc.file)), edge


def _conditional(sub, condition, params, loc, scope):
    """The block an enabled or triggered subsystem compiles to, named as it, and the wires
    into it: from its control signals (written wires: they are drawn) and from the inner
    outputs behind its ports (hidden: not written)."""
    for port in sub.outputs:
        if port in ("enable", "trigger"):
            raise sub.outputs[port].loc.error(
                f"output port '{port}' has the name of the subsystem's control input: "
                "call it otherwise", block=sub.name)
    here = lambda raw: Value(raw, loc)  # noqa: E731
    block = {"kind": here(condition.kind), "signal": here(condition.signal.text()),
             "outputs": here(list(sub.outputs))}
    if condition.kind == "trigger":
        block["edge"] = here(condition.edge)
        if condition.enable is not None:
            block["enable"] = here(condition.enable.text())
    block.update((k, params[k]) for k in CONDITIONAL_OPTIONS if k in params)
    controls = [(condition.kind, condition.signal)]
    if condition.kind == "trigger" and condition.enable is not None:
        controls.append(("enable", condition.enable))
    wires = [WireSpec(signal, Endpoint(sub.name, port, None, signal.loc), signal.loc)
             for port, signal in controls]
    hidden = [WireSpec(ep, Endpoint(sub.name, port, None, ep.loc), ep.loc)
              for port, ep in sub.outputs.items()]
    return BlockSpec(sub.name, "subsystem", block, loc, scope), wires, hidden


def through_outputs(subsystems, ep):
    """The inner block output a subsystem's output port stands for (through nested
    subsystems): `Plant.x` -> `Plant/Position.y`. `subsystems` maps flat names to
    SubsystemSpecs; an endpoint on an ordinary block comes back unchanged."""
    while ep.block in subsystems:
        outputs = subsystems[ep.block].outputs
        port = _only_port(ep, outputs, "output")
        if subsystems[ep.block].condition is not None:  # the outputs of its own block
            return Endpoint(ep.block, port, ep.index, ep.loc)
        inner = outputs[port]
        if ep.index is not None and inner.index is not None:
            raise ep.loc.error(f"cannot index subsystem output '{ep.text()}' that is itself indexed")
        ep = Endpoint(inner.block, inner.port, ep.index if ep.index is not None else inner.index, ep.loc)
    return ep


def through_inputs(subsystems, ep):
    """The inner block inputs a subsystem's input port feeds (through nested subsystems), as
    a list; an endpoint on an ordinary block comes back alone."""
    sub = subsystems.get(ep.block)
    if sub is None or (sub.condition is not None and ep.port in ("enable", "trigger")):
        return [ep]  # a block's input, or the control input of a conditional subsystem
    inputs = sub.inputs
    port = _only_port(ep, inputs, "input")
    return [inner for target in inputs[port]
            for inner in through_inputs(subsystems, Endpoint(target.block, target.port, None,
                                                             ep.loc))]


def resolve_signal(spec, ep):
    """What a written signal stands for, through subsystem outputs and buses: a block's
    output (an Endpoint) or a bus (a buses.Bundle)."""
    through = lambda e: through_outputs(spec.subsystems, e)  # noqa: E731
    return Buses(spec.buses).resolve(through(ep), through)


def _only_port(ep, ports, side):
    if ep.port is None:
        if len(ports) != 1:
            raise ep.loc.error(f"subsystem '{ep.block}' has {len(ports)} {side}s: name one "
                               f"({', '.join(ports) or 'none declared'})", block=ep.block)
        return next(iter(ports))
    if ep.port not in ports:
        raise ep.loc.error(f"subsystem '{ep.block}' has no {side} '{ep.port}'"
                           f"{suggest(ep.port, ports) or f' ({side}s: ' + ', '.join(ports) + ')'}",
                           block=ep.block, port=ep.port)
    return ep.port


def _prefixed(ep, prefix):
    return Endpoint(prefix + ep.block, ep.port, ep.index, ep.loc) if prefix else ep


@without_gc
def load_diagram(source, overrides=(), *, text=None, via="--set", texts=None):
    """Read a diagram file (or `text` with `source` as its display name) into a DiagramSpec.

    `overrides` is a sequence of "dotted.path=value" strings (the CLI's --set) or
    (path, value) pairs with an already parsed value; `via` names where they came from in
    messages ("--set" for the CLI, "overrides" for the Python API). `texts` maps resolved
    paths to text read instead of those files (the editor's unsaved subsystem files).
    Raises DiagramError(s).
    """
    spec, problems = _read(source, text, texts)
    problems.check()
    apply_overrides(spec, overrides, via)
    return spec


@without_gc
def read_diagram(source, *, texts=None):
    """What `load_diagram` reads of a diagram file, however many problems it has: (the
    DiagramSpec of what could be read, the Problems). An editor shows a diagram being built
    (no blocks yet, a wire to a block not yet added) with its problems beside it. A file
    that is not a YAML mapping still raises."""
    return _read(source, None, texts)


def _read(source, text, texts):
    file = str(source)
    loader = _Loader()
    loader.texts = texts or {}
    path = Path(source).resolve() if text is None else None
    if path in loader.texts:
        doc = load_yaml_text(loader.texts[path], file)
    else:
        doc = load_yaml_text(text, file) if text is not None else load_yaml_file(source)
    loader.document(doc, file, "", None, {}, [path], top=True)
    loader.inports()
    loader.resolve_wires()
    name, description = Path(file).stem, ""
    try:
        if "name" in doc:
            name = check_name(doc["name"], _loc(doc, "name", file))
        if "description" in doc:
            description = _description(doc["description"], _loc(doc, "description", file))
    except DiagramError as e:
        loader.problems.add(e)
    spec = DiagramSpec(
        name=name,
        description=description,
        file=file,
        scopes=loader.scopes,
        robots=loader.robots,
        blocks=loader.blocks,
        wires=loader.wires,
        simulation=_section(doc, "simulation", SIMULATION_KEYS, file, loader.problems),
        record=_section(doc, "record", None, file, loader.problems),
        subsystems=loader.specs,
        written_wires=loader.written_wires,
        layout=loader.layout,
        inputs=loader.top_ports[0],
        outputs=loader.top_ports[1],
        buses=loader.buses,
    )
    return spec, loader.problems


def _description(value, loc):
    if value is None:
        return ""
    if isinstance(value, (YMap, YList, dict, list)):
        raise loc.error(f"'description' must be text, got {_kind(value)}")
    return str(value)


def _section(doc, key, allowed, file, problems):
    node = doc.get(key)
    if node is None:
        return {}
    if not isinstance(node, YMap):
        problems.add(_loc(doc, key, file).error(f"'{key}' must be a mapping"))
        return {}
    if allowed:
        _check_keys(node, allowed, f"'{key}'", file, problems)
    return {k: Value(v, _loc(node, k, file)) for k, v in node.items() if not allowed or k in allowed}


# ---- --set overrides ---------------------------------------------------------------------
def parse_override(text, via="--set"):
    """'a.b.c=value' -> ('a.b.c', parsed YAML value)."""
    if not isinstance(text, str) or "=" not in text:
        what = "KEY=VALUE" if via == "--set" else "'path=value' strings or a dict {path: value}"
        raise DiagramError(f"{via} expects {what}, got {text!r}", file=via)
    key, _, raw = text.partition("=")
    key = key.strip()
    value = load_yaml_text(raw, override_origin(via, key)) if raw.strip() else ""
    return key, value


def override_origin(via, key):
    """How a message names one override: `--set KEY` on the command line, `overrides['KEY']`
    from Python."""
    return f"--set {key}" if via == "--set" else f"{via}[{key!r}]"


def apply_overrides(spec, overrides, via="--set"):
    """Apply overrides in order; unknown paths are errors, omitted valid keys are added.
    An item is "path=value" text, a (path, value) pair, or a (path, value, Loc) triple whose
    Loc says where the override was written (a sweep file's line); otherwise the location
    is the override itself. Whether a block parameter or robot option exists is checked
    where the schemas are known (compiler, robots section), at that location."""
    problems = Problems()
    for item in overrides:
        try:
            loc = None
            if isinstance(item, str):
                key, value = parse_override(item, via)
            elif (isinstance(item, (tuple, list)) and len(item) in (2, 3)
                  and isinstance(item[0], str) and (len(item) == 2 or isinstance(item[2], Loc))):
                key, value, *located = item
                loc = located[0] if located else None
            else:
                raise DiagramError(f"an override must be 'path=value' or a (path, value) pair "
                                   f"with a dotted path such as 'simulation.stop', got {item!r}",
                                   file=via)
            _apply_one(spec, key, value, loc or Loc(override_origin(via, key)))
            spec.overrides.pop(key, None)
            spec.overrides[key] = item if isinstance(item, str) else [key, value]
        except DiagramError as e:
            problems.add(e)
    problems.check()


def _apply_one(spec, key, value, loc):
    parts = key.split(".")
    head = parts[0]
    if head == "simulation" and len(parts) == 2:
        if parts[1] not in SIMULATION_KEYS:
            raise loc.error(f"unknown simulation setting '{parts[1]}'{suggest(parts[1], SIMULATION_KEYS)}")
        spec.simulation[parts[1]] = Value(value, loc)
    elif head == "parameters" and len(parts) == 2:
        params = spec.scopes[0].params
        if parts[1] not in params:
            raise loc.error(f"the diagram has no parameter '{parts[1]}'{suggest(parts[1], params)}",
                            hint=_declared(params, "the diagram"))
        params[parts[1]] = Value(value, loc)
    elif head == "record" and len(parts) == 2:
        spec.record[parts[1]] = Value(value, loc)
    elif head == "inputs" and len(parts) == 2:
        if parts[1] not in spec.inputs:
            raise loc.error(f"the diagram has no input '{parts[1]}'"
                            f"{suggest(parts[1], spec.inputs)}",
                            hint=f"the diagram declares {', '.join(spec.inputs) or 'no inputs'}")
        spec.block_to_change(parts[1]).params["value"] = Value(value, loc)
    elif head == "name" and len(parts) == 1:
        spec.name = check_name(value, loc)
    elif head == "description" and len(parts) == 1:
        spec.description = _description(value, loc)
    elif head == "blocks" and len(parts) >= 3 and parts[1] in spec.subsystems:
        _set_subsystem(spec, spec.subsystems[parts[1]], parts[2:], value, loc)
    elif head == "blocks" and len(parts) == 4 and parts[1] in spec.blocks:
        _set_entry(spec.block_to_change(parts[1]), parts[2], parts[3], value, loc)
    elif head == "blocks" and len(parts) == 3:
        block = spec.blocks.get(parts[1])
        if block is None:
            raise loc.error(f"unknown block '{parts[1]}'"
                            f"{suggest(parts[1], [*spec.blocks, *spec.subsystems])}")
        if parts[2] == "type":
            raise loc.error("a block's type cannot be overridden", block=parts[1])
        spec.block_to_change(parts[1]).params[parts[2]] = Value(value, loc)
    elif head == "robots" and len(parts) == 3:
        robot = spec.robots.get(parts[1])
        if robot is None:
            raise loc.error(f"unknown robot '{parts[1]}'{suggest(parts[1], spec.robots)}")
        robot[parts[2]] = Value(value, loc)
    else:
        raise loc.error(f"unknown setting '{key}'", hint="settable paths: simulation.KEY, "
                        "parameters.NAME, blocks.BLOCK.PARAM, blocks.BLOCK.PARAM.KEY (an entry "
                        "of a mapping), blocks.SUBSYSTEM.parameters.NAME, "
                        "robots.ROBOT.OPTION, record.NAME, inputs.NAME")


def _set_entry(block, param, key, value, loc):
    """`--set blocks.B.PARAM.KEY=value`: one entry of a block parameter that is a mapping
    (an fmu block's `parameters:`), the others kept; the entry remembers where it was set
    (`key_locs`), so that the block's check of it names the override."""
    current = block.params.get(param)
    raw = current.raw if current is not None else None
    if raw is not None and not isinstance(raw, dict):
        raise loc.error(f"'{param}' is not a mapping: '{key}' cannot be set in it",
                        block=block.name, param=param)
    entries = YMap(raw or {}, line=getattr(raw, "line", loc.line),
                   file=getattr(raw, "file", loc.file))
    entries.key_lines = dict(getattr(raw, "key_lines", {}))
    entries.key_locs = {**getattr(raw, "key_locs", {}), key: loc}
    entries[key] = value
    block.params[param] = Value(entries, current.loc if current is not None else loc)


def _set_subsystem(spec, sub, rest, value, loc):
    """`--set blocks.S.parameters.NAME=value`: a value for one of the subsystem's declared
    parameters, evaluated in the including diagram like the block's own `parameters:`;
    `--set blocks.S.initial=value` (and an enabled subsystem's other options): its block's."""
    options = () if sub.condition is None else \
        CONDITIONAL_OPTIONS if sub.condition.kind == "enable" else CONDITIONAL_OPTIONS[2:]
    if len(rest) == 1 and rest[0] in options:
        spec.block_to_change(sub.name).params[rest[0]] = Value(value, loc)
        return
    if rest[0] != "parameters" or len(rest) != 2:
        raise loc.error(f"a subsystem's '{'.'.join(rest)}' cannot be set", block=sub.name,
                        hint=f"set its parameters (blocks.{sub.name}.parameters.NAME), "
                             + "".join(f"blocks.{sub.name}.{o}, " for o in options)
                             + f"or its inner blocks (blocks.{sub.name}/BLOCK.PARAM)")
    scope = spec.scopes[sub.scope]
    name = rest[1]
    if name not in scope.params:
        raise loc.error(f"the subsystem has no parameter '{name}'{suggest(name, scope.params)}",
                        block=sub.name, hint=_declared(scope.params, sub.source if
                                                       sub.source != "inline" else
                                                       "its inline diagram"))
    scope.overrides[name] = Value(value, loc)


def _declared(params, who):
    return f"{who} declares {', '.join(params) if params else 'no parameters'}"
