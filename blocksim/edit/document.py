"""The diagram being edited: its files' texts, its levels, undo, redo, save.

A diagram is a file and the subsystem files it includes. A *level* is the diagram shown on
the canvas at one time: the top, or the inside of a subsystem (named by the path of
subsystem blocks from the top), which is an inline `diagram:` mapping of the same file or
another file. An edit (edits.py) is one step of the history, whichever files it changed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import DiagramError
from ..language.yamlio import load_yaml_text
from ..util.atomic import atomic_path
from . import source
from .source import EditError, Source, plain

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

    @staticmethod
    def _on_disk(path):
        try:
            return path.read_bytes().decode("utf-8-sig")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError):
            return ""

    def texts(self):
        """Resolved path -> text, for every file read (what a check or a run reads)."""
        return {p: s.text for p, s in self.sources.items()}

    @property
    def dirty(self):
        return any(s.text != self.saved[p] for p, s in self.sources.items())

    def save(self):
        """Write every file that changed (atomically); returns the paths written. A file
        that changed on disk since it was read (another editor) is not overwritten."""
        changed = [p for p, src in self.sources.items() if src.text != self.saved[p]]
        for path in changed:
            if self._on_disk(path) != self.saved[path]:
                raise EditError(f"{path} changed on disk since it was opened: not saved "
                                "(save your edits elsewhere, or reopen the file)")
        written = []
        for path, src in self.sources.items():
            if path not in changed:
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

    def _write(self, level, path, written):
        if written is None or (isinstance(written, str) and not written.strip()):
            self._delete(level, path)
        elif isinstance(written, tuple):  # ("literal", text): the string as it is
            self._set(level, path, written[1])
        else:
            self._set(level, path, parse_value(written), written)


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


def parse_value(written):
    """The value a field's YAML text stands for (as `--set` reads it); text that is not
    YAML on its own (an expression with ': ') is that text."""
    try:
        value = load_yaml_text(written, "the field")
    except DiagramError:
        return written.strip()
    return plain(value) if value is not None else written.strip()
