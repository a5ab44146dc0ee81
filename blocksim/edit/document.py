"""The diagram being edited: its files' texts, the edits a canvas makes, undo, redo, save.

A diagram is a file and the subsystem files it includes. A *level* is the diagram shown on
the canvas at one time: the top, or the inside of a subsystem (named by the path of
subsystem blocks from the top), which is an inline `diagram:` mapping of the same file or
another file. Every edit is a few `source` edits of one level's mapping (its `blocks`,
`wires`, `layout`, its subsystem ports) and, for names, of the top diagram's `record:`; an
edit is one step of the history, whichever files it changed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import DiagramError
from ..language.diagram import NAME_RE, Loc, parse_wire
from ..language.yamlio import load_yaml_text
from ..util.atomic import atomic_path
from . import source
from .source import EditError, Source

NEW_DIAGRAM = "blocksim: 1\n"
# where a section goes when a diagram first gets it: after the last of these that it has
_BEFORE = {"parameters": ("blocksim", "name", "description"),
           "blocks": ("blocksim", "name", "description", "parameters", "robots"),
           "wires": ("blocksim", "name", "description", "parameters", "robots", "blocks"),
           "simulation": ("blocksim", "name", "description", "parameters", "robots", "blocks",
                          "wires", "inputs", "outputs"),
           "record": ("blocksim", "name", "description", "parameters", "robots", "blocks",
                      "wires", "simulation"),
           "layout": ("blocksim", "name", "description", "parameters", "robots", "blocks",
                      "wires", "inputs", "outputs", "simulation", "record")}
PORT_BOX = re.compile(r"(in|out):([A-Za-z_][A-Za-z0-9_]*)\Z")  # a subsystem's port on the canvas


@dataclass(frozen=True)
class Level:
    names: tuple  # subsystem blocks from the top: () is the top
    file: Path  # the file holding this level's diagram (resolved)
    base: tuple  # the path of its diagram mapping in that file
    prefix: str  # its blocks' flat names begin with this: "" or "Ctl/"

    def at(self, *path):
        return self.base + path


class Document:
    """The texts of a diagram's files as edited, with their history."""

    def __init__(self, path):
        self.path = Path(path).resolve()
        self.shown = str(path)  # the file as the user named it, for messages
        self.sources = {}  # resolved path -> Source
        self.saved = {}  # resolved path -> text on disk (None: the file does not exist)
        self.bom = {}
        self.history = [{}]  # snapshots of the texts each edit changed: (before, after)
        self.position = 0
        self._read(self.path, new=True)

    # -- files -----------------------------------------------------------------------------
    def _read(self, path, new=False):
        if path in self.sources:
            return self.sources[path]
        if not path.exists() and new:
            text, saved = NEW_DIAGRAM, None
        else:
            data = path.read_bytes()
            self.bom[path] = data.startswith(b"\xef\xbb\xbf")
            text = data.decode("utf-8-sig")
            saved = text
            load_yaml_text(text, str(path))  # a file blocksim cannot read is not edited
        self.sources[path] = Source(text)
        self.saved[path] = saved
        return self.sources[path]

    def texts(self):
        """Resolved path -> text, for every file read (what a check or a run reads)."""
        return {p: s.text for p, s in self.sources.items()}

    @property
    def dirty(self):
        return any(s.text != self.saved[p] for p, s in self.sources.items())

    def save(self):
        """Write every file that changed (atomically); returns the paths written."""
        written = []
        for path, src in self.sources.items():
            if src.text == self.saved[path]:
                continue
            data = src.text.encode("utf-8")
            if self.bom.get(path):
                data = b"\xef\xbb\xbf" + data
            with atomic_path(path) as tmp:
                tmp.write_bytes(data)
            self.saved[path] = src.text
            written.append(path)
        return written

    # -- levels ----------------------------------------------------------------------------
    def level(self, names=()):
        """The Level inside the subsystems `names` (raises EditError for a path that is not
        one)."""
        level = Level((), self.path, (), "")
        for name in names:
            data = self.data(level)
            body = (data.get("blocks") or {}).get(name) if isinstance(data, dict) else None
            if not isinstance(body, dict) or body.get("type") != "subsystem":
                raise EditError(f"'{level.prefix}{name}' is not a subsystem")
            if isinstance(body.get("diagram"), dict):
                level = Level(level.names + (name,), level.file,
                              level.at("blocks", name, "diagram"), level.prefix + name + "/")
            elif isinstance(body.get("file"), str):
                path = (level.file.parent / body["file"]).resolve()
                if not path.is_file():
                    raise EditError(f"subsystem file not found: {body['file']}")
                self._read(path)
                level = Level(level.names + (name,), path, (), level.prefix + name + "/")
            else:
                raise EditError(f"subsystem '{level.prefix}{name}' has no diagram to open")
        return level

    def data(self, level, *path):
        """The plain data at `path` in a level's diagram mapping, or None."""
        value = self.sources[level.file].data
        for step in level.at(*path):
            if isinstance(value, dict):
                value = value.get(step)
            elif isinstance(value, list) and isinstance(step, int) and -len(value) <= step < len(value):
                value = value[step]
            else:
                return None
        return value

    def blocks(self, level):
        blocks = self.data(level, "blocks")
        return blocks if isinstance(blocks, dict) else {}

    def wires(self, level):
        wires = self.data(level, "wires")
        return wires if isinstance(wires, list) else []

    # -- history ---------------------------------------------------------------------------
    def _edit(self, change):
        """Run `change()` (which replaces sources) as one step of the history."""
        before = self.texts()
        try:
            change()
        except EditError:
            self._restore(before)
            raise
        after = self.texts()
        changed = {p for p in after if before.get(p) != after[p]}
        if not changed:
            return False
        del self.history[self.position + 1:]
        self.history.append(({p: before.get(p) for p in changed}, {p: after[p] for p in changed}))
        self.position += 1
        return True

    def _restore(self, texts):
        for path, text in texts.items():
            if text is not None:
                self.sources[path] = Source(text)

    @property
    def can_undo(self):
        return self.position > 0

    @property
    def can_redo(self):
        return self.position + 1 < len(self.history)

    def undo(self):
        if self.can_undo:
            self._restore(self.history[self.position][0])
            self.position -= 1

    def redo(self):
        if self.can_redo:
            self.position += 1
            self._restore(self.history[self.position][1])

    # -- primitive edits of a level ----------------------------------------------------------
    def _set(self, level, path, value, written=None):
        src = self.sources[level.file]
        self.sources[level.file] = source.set_value(src, level.at(*path), value, written,
                                                    _BEFORE.get(path[0], ()))

    def _delete(self, level, path):
        if self.sources[level.file].node(level.at(*path)) is not None:
            self.sources[level.file] = source.delete(self.sources[level.file], level.at(*path))

    def _append(self, level, path, value):
        self.sources[level.file] = source.append(
            self.sources[level.file], level.at(*path), value,
            after=_BEFORE.get(path[0], ()))

    # -- edits -----------------------------------------------------------------------------
    def unique_name(self, level, wanted):
        """`wanted` (made a valid name), or it with the smallest number that is free."""
        base = re.sub(r"\W", "_", wanted) or "Block"
        if not re.match(r"[A-Za-z_]", base):
            base = "B" + base
        taken = set(self.blocks(level))
        if base not in taken:
            return base
        stem = base.rstrip("0123456789") or base
        n = 1
        while f"{stem}{n}" in taken:
            n += 1
        return f"{stem}{n}"

    def add_block(self, level, btype, position, positions, params=None, name=None):
        """A new block of `btype` at `position` (x, y); `positions` are where the level's
        boxes stand now (written to `layout:` when the level has none yet). Returns its name."""
        name = self.unique_name(level, name or default_name(btype))
        body = {"type": btype, **(params or {})}
        if btype == "subsystem" and not params:
            body = new_subsystem()

        def change():
            self._set(level, ("blocks", name), body)
            self._place(level, {name: position}, positions)
        self._edit(change)
        return name

    def set_param(self, level, block, param, written):
        """A block parameter as the user wrote it (YAML text, or for `literal` parameters
        the string itself, given as ("literal", text)); None or "" removes it (its default)."""
        if block not in self.blocks(level):
            raise EditError(f"no block '{level.prefix}{block}'")
        if param == "type":
            raise EditError("a block's type cannot be changed: add a block of the new type")
        self._edit(lambda: self._write(level, ("blocks", block, param), written))

    def _write(self, level, path, written):
        if written is None or (isinstance(written, str) and not written.strip()):
            self._delete(level, path)
        elif isinstance(written, tuple):  # ("literal", text): the string as it is
            self._set(level, path, written[1])
        else:
            self._set(level, path, parse_value(written), written)

    def set_entry(self, level, section, key, written):
        """One entry of a diagram section: `simulation`, `parameters`, `record`, `robots`,
        a subsystem's `inputs` / `outputs`, or the top's `name` / `description` (key None).
        `written` as for `set_param`; None removes the entry."""
        if section in ("name", "description"):
            self._edit(lambda: self._write(level, (section,), written))
            return
        if key is None or not isinstance(key, str) or not key.strip():
            raise EditError(f"a {section} entry needs a name")
        if section in ("parameters", "record", "robots", "inputs", "outputs") \
                and not NAME_RE.match(key):
            raise EditError(f"'{key}' is not a valid name (letters, digits, _)")
        self._edit(lambda: self._write(level, (section, key), written))

    def rename(self, level, old, new):
        """Block `old` renamed `new`, with its wires, its layout entry, the subsystem ports
        and the top's record entries that name it."""
        blocks = self.blocks(level)
        if old not in blocks:
            raise EditError(f"no block '{level.prefix}{old}'")
        if new == old:
            return
        if not isinstance(new, str) or not NAME_RE.match(new):
            raise EditError(f"'{new}' is not a valid block name: letters, digits and _, "
                            "not starting with a digit")
        if new in blocks:
            raise EditError(f"there is already a block '{level.prefix}{new}'")

        def change():
            src = self.sources[level.file]
            self.sources[level.file] = source.rename_key(src, level.at("blocks", old), new)
            for i, text in enumerate(self.wires(level)):
                renamed = _renamed_wire(text, old, new)
                if renamed != text:
                    self._set(level, ("wires", i), renamed)
            if isinstance(self.data(level, "layout"), dict) and old in self.data(level, "layout"):
                src = self.sources[level.file]
                self.sources[level.file] = source.rename_key(src, level.at("layout", old), new)
            self._rename_ports(level, old, new)
            self._rename_records(level.prefix + old, level.prefix + new)
        self._edit(change)

    def _rename_ports(self, level, old, new):
        for side in ("inputs", "outputs"):
            ports = self.data(level, side)
            for port, target in (ports.items() if isinstance(ports, dict) else ()):
                if isinstance(target, list):
                    for i, t in enumerate(target):
                        if _renamed_signal(t, old, new) != t:
                            self._set(level, (side, port, i), _renamed_signal(t, old, new))
                elif _renamed_signal(target, old, new) != target:
                    self._set(level, (side, port), _renamed_signal(target, old, new))

    def _rename_records(self, old, new):
        top = self.level()
        record = self.data(top, "record")
        for name, signal in (record.items() if isinstance(record, dict) else ()):
            if _renamed_signal(signal, old, new) != signal:
                self._set(top, ("record", name), _renamed_signal(signal, old, new))

    def delete(self, level, blocks=(), wires=()):
        """Remove blocks (with every wire, layout entry, subsystem port target and top-level
        record entry naming them) and wires (by their index in the level's `wires:`)."""
        known = self.blocks(level)
        for name in blocks:
            if name not in known:
                raise EditError(f"no block '{level.prefix}{name}'")

        def change():
            gone = set(blocks)
            doomed = set(wires)
            for i, text in enumerate(self.wires(level)):
                ends = _wire_blocks(text)
                if ends & gone:
                    doomed.add(i)
            for i in sorted(doomed, reverse=True):
                self._delete(level, ("wires", i))
            for name in blocks:
                self._delete(level, ("blocks", name))
                layout = self.data(level, "layout")
                if isinstance(layout, dict) and name in layout:
                    self._delete(level, ("layout", name))
                self._drop_ports(level, name)
                self._drop_records(level.prefix + name)
        self._edit(change)

    def _drop_ports(self, level, name):
        for side in ("inputs", "outputs"):
            ports = self.data(level, side)
            for port, target in list(ports.items() if isinstance(ports, dict) else ()):
                if isinstance(target, list):
                    for i in reversed(range(len(target))):
                        if _signal_block(target[i]) == name:
                            self._delete(level, (side, port, i))
                elif _signal_block(target) == name:
                    self._delete(level, (side, port))

    def _drop_records(self, flat):
        top = self.level()
        record = self.data(top, "record")
        for rname, signal in list(record.items() if isinstance(record, dict) else ()):
            named = _signal_block(signal) or ""
            if named == flat or named.startswith(flat + "/"):
                self._delete(top, ("record", rname))

    def connect(self, level, src, dst):
        """A wire from endpoint text `src` ('Block.port', or 'in:PORT' inside a subsystem)
        to `dst` ('Block.port', or 'out:PORT'); an input already wired is refused."""
        src_port = PORT_BOX.match(src.split(".")[0])
        dst_port = PORT_BOX.match(dst.split(".")[0])
        if src_port and src_port.group(1) == "in":
            self._edit(lambda: self._add_port_target(level, src_port.group(2), dst))
            return
        if dst_port and dst_port.group(1) == "out":
            self._edit(lambda: self._set(level, ("outputs", dst_port.group(2)), src))
            return
        for text in self.wires(level):
            try:
                wire = parse_wire(text, Loc(self.shown))
            except DiagramError:  # a wire that does not parse drives nothing
                continue
            if wire.dst.text() == dst or (wire.dst.block == dst.split(".")[0]
                                          and wire.dst.port is None):
                raise EditError(f"input {dst} is already wired (from {wire.src.text()}): "
                                "delete that wire first")
        self._edit(lambda: self._append(level, ("wires",), f"{src} -> {dst}"))

    def _add_port_target(self, level, port, target):
        current = self.data(level, "inputs", port)
        if current is None:
            self._set(level, ("inputs", port), target)
        elif isinstance(current, list):
            self._append(level, ("inputs", port), target)
        else:
            self._set(level, ("inputs", port), [current, target])

    def disconnect_port(self, level, side, port, target):
        """Remove the wire between a subsystem's port box and `target` ('Block.port')."""
        def change():
            current = self.data(level, side, port)
            if isinstance(current, list):
                for i in reversed(range(len(current))):
                    if current[i] == target:
                        self._delete(level, (side, port, i))
            else:
                self._delete(level, (side, port))
        self._edit(change)

    def move(self, level, moved, positions):
        """Boxes moved to new (x, y); `positions` where every box stands now."""
        self._edit(lambda: self._place(level, moved, positions))

    def _place(self, level, moved, positions):
        layout = self.data(level, "layout")
        moved = {k: [round(x), round(y)] for k, (x, y) in moved.items()}
        if not isinstance(layout, dict):  # the first position: every block gets its own
            names = [n for n in self.blocks(level) if n in positions or n in moved]
            self._set(level, ("layout",), {n: moved.get(n) or [round(v) for v in positions[n]]
                                           for n in names})
            return
        for name, xy in moved.items():
            if layout.get(name) != xy:
                self._set(level, ("layout", name), xy)

    def paste(self, level, clip, offset, positions):
        """Blocks copied (a `copy()` payload) added with fresh names, shifted by `offset`,
        with the wires that joined them. Returns the new names."""
        names = {}

        def change():
            for block in clip["blocks"]:
                name = self.unique_name(level, block["name"])
                names[block["name"]] = name
                self._set(level, ("blocks", name), block["body"])
            self._place(level, {names[b["name"]]: (b["x"] + offset[0], b["y"] + offset[1])
                                for b in clip["blocks"] if b.get("x") is not None},
                        positions)
            for text in clip["wires"]:
                for old, new in names.items():
                    text = _renamed_wire(text, old, "\0" + new)
                self._append(level, ("wires",), text.replace("\0", ""))
        self._edit(change)
        return list(names.values())

    def copy(self, level, names, positions):
        """What `paste` needs of blocks `names`: each one's mapping as YAML text, where it
        stands, and the wires between them."""
        blocks = self.blocks(level)
        chosen = [n for n in names if n in blocks]
        out = {"blocks": [], "wires": []}
        for name in chosen:
            xy = positions.get(name)
            out["blocks"].append({"name": name, "body": blocks[name],
                                  "x": xy[0] if xy else None, "y": xy[1] if xy else None})
        for text in self.wires(level):
            if isinstance(text, str) and _wire_blocks(text) and _wire_blocks(text) <= set(chosen):
                out["wires"].append(text)
        return out


# ---- names in wires and signals ------------------------------------------------------------
def _renamed_signal(text, old, new):
    """'Old.y[0]' -> 'New.y[0]' (a signal naming block `old`); other text unchanged."""
    if not isinstance(text, str):
        return text
    return re.sub(rf"^(\s*){re.escape(old)}(?=\s*(\.|\[|/|$))", lambda m: m.group(1) + new, text)


def _renamed_wire(text, old, new):
    if not isinstance(text, str) or "->" not in text:
        return text
    left, _, right = text.partition("->")
    return f"{_renamed_signal(left, old, new)}->{_renamed_signal(right, old, new)}"


def _signal_block(text):
    return re.match(r"\s*([A-Za-z_][A-Za-z0-9_/]*)", text).group(1) \
        if isinstance(text, str) and re.match(r"\s*[A-Za-z_]", text) else None


def _wire_blocks(text):
    if not isinstance(text, str) or "->" not in text:
        return set()
    left, _, right = text.partition("->")
    return {b for b in (_signal_block(left), _signal_block(right)) if b}


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def parse_value(written):
    """The value a field's YAML text stands for (as `--set` reads it); text that is not
    YAML on its own (an expression with ': ') is that text."""
    try:
        value = load_yaml_text(written, "the field")
    except Exception:  # noqa: BLE001 - a DiagramError: not YAML, so an expression as written
        return written.strip()
    return _plain(value) if value is not None else written.strip()


def default_name(btype):
    """The name a new block of `btype` gets, as Simulink names them: 'transfer_function'
    -> 'TransferFunction'."""
    return "".join(part.capitalize() for part in btype.split("_")) or "Block"


def new_subsystem():
    """A new subsystem, as Simulink makes one: an input passed through to an output."""
    return {"type": "subsystem",
            "diagram": {"blocks": {"Gain": {"type": "gain", "K": 1}},
                        "inputs": {"u": "Gain.u"}, "outputs": {"y": "Gain.y"}}}
