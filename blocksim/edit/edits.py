"""The edits a canvas makes, on a Document: add, delete, rename, a parameter or a section
entry, wire, move, copy and paste. Each is one step of the document's history, made of
`source` edits of one level's mapping (its `blocks`, `wires`, `layout`, subsystem ports) and,
for names, of the top diagram's `record:`."""
from __future__ import annotations

import re

from ..errors import DiagramError
from ..language.diagram import NAME_RE, Loc, parse_wire
from . import source
from .document import PORT_BOX, Document, EditError


class Diagram(Document):
    """A Document with the canvas's edits."""

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

    def add_block(self, level, btype, position, positions, name=None):
        """A new block of `btype` at `position` (x, y), with no parameters (a subsystem: a
        gain between an input and an output); `positions` are where the level's boxes stand
        now (written to `layout:` when the level has none yet). Returns its name."""
        name = self.unique_name(level, name or default_name(btype))
        body = new_subsystem() if btype == "subsystem" else {"type": btype}

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

    def delete(self, level, blocks=(), wires=(), ports=()):
        """Remove blocks (with every wire, layout entry, subsystem port target and top-level
        record entry naming them), wires (by their index in the level's `wires:`) and the
        wires of a subsystem's ports inside it ((side, port, target) for `inputs` or
        `outputs`), as one edit."""
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
            for side, port, target in ports:
                self._drop_port_wire(level, side, port, target)
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

    def _drop_port_wire(self, level, side, port, target):
        current = self.data(level, side, port)
        if isinstance(current, list):
            for i in reversed(range(len(current))):
                if current[i] == target:
                    self._delete(level, (side, port, i))
        elif current is not None:
            self._delete(level, (side, port))

    def move(self, level, moved, positions):
        """Boxes moved to new (x, y); `positions` where every box stands now."""
        self._edit(lambda: self._place(level, moved, positions))

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
        """What `paste` needs of blocks `names`: each one's mapping (as data), where it
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


def default_name(btype):
    """The name a new block of `btype` gets, as Simulink names them: 'transfer_function'
    -> 'TransferFunction'."""
    return "".join(part.capitalize() for part in btype.split("_")) or "Block"


def new_subsystem():
    """A new subsystem, as Simulink starts one: its input passed through to its output."""
    return {"type": "subsystem",
            "diagram": {"blocks": {"Gain": {"type": "gain", "K": 1}},
                        "inputs": {"u": "Gain.u"}, "outputs": {"y": "Gain.y"}}}
