"""The editor's API, transport aside: each request of docs/editor.md as a method taking and
returning plain JSON data. One Session edits one diagram; the HTTP server (server.py) calls
it under a lock, one request at a time, except the run, which goes on in its own thread."""
from __future__ import annotations

from ..language.blockdoc import catalogue
from ..language.library import Library
from .document import PORT_BOX, EditError
from .edits import Diagram, default_name
from .runs import Run
from .view import Checked, level_view


class RequestError(ValueError):
    """A request the API cannot do (400), with the message the page shows."""


class Session:
    def __init__(self, path, runs_dir="runs"):
        self.doc = Diagram(path)
        self.library = Library()
        self.sections = {}  # robots built, kept between checks (compiler.Compilation)
        self.known_ports = {}  # (block, type) -> ports last seen, for blocks being set up
        self._checked = {}  # texts -> (Checked, {level: view}), the last few
        self.runs_dir = runs_dir
        self.run = None
        self._catalogue = None

    # -- reading -----------------------------------------------------------------------------
    def catalogue(self):
        if self._catalogue is None:
            self._catalogue = {"families": catalogue(self.library)}
        return self._catalogue

    def checked(self):
        """The diagram checked as its texts are now (the last few kept: a check as the user
        types tries a text and comes back)."""
        key = tuple(sorted((str(p), t) for p, t in self.doc.texts().items()))
        if key not in self._checked:
            while len(self._checked) >= 4:
                self._checked.pop(next(iter(self._checked)))
            self._checked[key] = (Checked(self.doc, self.library, self.sections,
                                          self.known_ports), {})
        return self._checked[key]

    def level_view(self, level):
        """The view of a level for the texts as they are (kept until they change: an edit
        asks where the boxes stand, then answers with the same view)."""
        checked, views = self.checked()
        if level.names not in views:
            views[level.names] = level_view(self.doc, level, checked)
        return dict(views[level.names], dirty=self.doc.dirty, can_undo=self.doc.can_undo,
                    can_redo=self.doc.can_redo)

    def level(self, names):
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise RequestError("level must be a list of subsystem names")
        try:
            return self.doc.level(tuple(names))
        except EditError as e:
            raise RequestError(str(e)) from None

    def view(self, names=()):
        view = self.level_view(self.level(list(names)))
        view["run"] = self.run.status() if self.run else None
        return view

    # -- editing -----------------------------------------------------------------------------
    def edit(self, request):
        """Apply one edit (request["op"], see docs/editor.md) to request["level"]; returns the
        level's new view, with `made` (the names of new blocks) for add and paste."""
        names = request.get("level", [])
        level = self.level(names)
        op = request.get("op")
        handler = getattr(self, f"_op_{op}", None) if isinstance(op, str) else None
        if handler is None:
            raise RequestError(f"unknown edit {op!r}")
        try:
            made = handler(level, request)
        except EditError as e:
            raise RequestError(str(e)) from None
        except (KeyError, TypeError, ValueError) as e:
            raise RequestError(f"bad {op} request: {e}") from None
        view = self.view(names)
        if made is not None:
            view["made"] = made
        return view

    def positions(self, level):
        """Where the level's blocks stand now (layout coordinates)."""
        view = self.level_view(level)
        return {b["key"]: (b["x"], b["y"]) for b in view["boxes"]
                if b["kind"] in ("block", "subsystem")}

    def _op_add(self, level, r):
        btype = r["type"]
        if btype != "subsystem" and btype not in self.library.types:
            raise RequestError(f"unknown block type '{btype}'")
        return [self.doc.add_block(level, btype, _xy(r), self.positions(level),
                                   name=r.get("name") or default_name(btype))]

    def _op_delete(self, level, r):
        wires = self._wires(level)
        indices, ports = [], []
        for wid in r.get("wires", []):
            wire = wires.get(wid)
            if wire is None:
                raise RequestError(f"no wire {wid}")
            if "index" in wire:
                indices.append(wire["index"])
            else:  # a wire of a subsystem's port box: its `inputs` / `outputs` entry
                ports.append(wire)
        blocks = [b for b in r.get("blocks", []) if not PORT_BOX.match(b)]
        self.doc.delete(level, blocks, indices, [(*w["port"], w["text"]) for w in ports])

    def _wires(self, level):
        return {w["id"]: w for w in self.level_view(level)["wires"]}

    def _op_rename(self, level, r):
        self.doc.rename(level, r["block"], r["name"].strip())

    def _op_param(self, level, r):
        self.doc.set_param(level, r["block"], r["param"], _written(r))

    def _op_entry(self, level, r):
        # records are the top diagram's (a subsystem's own are ignored): named flat there
        where = self.doc.level() if r["section"] == "record" else level
        self.doc.set_entry(where, r["section"], r.get("key"), _written(r))

    def _op_connect(self, level, r):
        boxes = {b["key"]: b for b in self.level_view(level)["boxes"]}
        src, dst = _end_text(boxes, r["src"], "outputs"), _end_text(boxes, r["dst"], "inputs")
        self.doc.connect(level, src, dst)

    def _op_move(self, level, r):
        moved = {k: _xy(v) for k, v in r["positions"].items() if not PORT_BOX.match(k)}
        self.doc.move(level, moved, self.positions(level))

    def _op_paste(self, level, r):
        clip = r["clip"]
        if not isinstance(clip, dict) or not isinstance(clip.get("blocks"), list):
            raise RequestError("nothing to paste")
        return self.doc.paste(level, clip, _xy(r.get("offset", [20, 20])), self.positions(level))

    def copy(self, request):
        level = self.level(request.get("level", []))
        return self.doc.copy(level, request.get("blocks", []), self.positions(level))

    def trial(self, request):
        """The problems a parameter's text would give, without keeping it (the inspector
        checks as the user types): request as a `param` or `entry` edit."""
        level = self.level(request.get("level", []))
        kept = self.doc.texts(), self.doc.position, list(self.doc.history)
        try:
            if request.get("op") == "entry":
                self.doc.set_entry(level, request["section"], request.get("key"),
                                   _written(request))
            else:
                self.doc.set_param(level, request["block"], request["param"], _written(request))
            problems = self.level_view(level)["problems"]
        except EditError as e:
            problems = [{"text": str(e), "block": request.get("block"), "path": None}]
        finally:
            self.doc._restore(kept[0])
            self.doc.position, self.doc.history = kept[1], kept[2]
        return {"problems": problems}

    def undo(self, request):
        self.doc.undo()
        return self.view(request.get("level", []))

    def redo(self, request):
        self.doc.redo()
        return self.view(request.get("level", []))

    def save(self, request):
        try:
            written = self.doc.save()
        except EditError as e:
            raise RequestError(str(e)) from None
        except OSError as e:
            raise RequestError(f"cannot write {e.filename or self.doc.shown}: "
                               f"{e.strerror or e}") from None
        view = self.view(request.get("level", []))
        view["saved"] = [str(p) for p in written]
        return view

    # -- running -----------------------------------------------------------------------------
    def start_run(self, request=None):
        if self.run is not None and self.run.running:
            raise RequestError("a run is going on: stop it first")
        self.run = Run(self.doc, self.runs_dir)
        self.run.start()
        return self.run.status()

    def run_status(self):
        return self.run.status() if self.run else {"state": "idle"}

    def stop_run(self, request=None):
        if self.run is not None:
            self.run.stop()
        return self.run_status()

    def results(self):
        if self.run is None or self.run.running:
            raise RequestError("no finished run")
        return self.run.results()


def _xy(value):
    if isinstance(value, dict):
        value = [value["x"], value["y"]]
    x, y = (float(v) for v in value)
    return x, y


def _written(r):
    """A field's value from a request: None (remove it), YAML text, or ('literal', text)
    for a parameter taken as a string."""
    text = r.get("text")
    if text is None or (isinstance(text, str) and not text.strip()):
        return None
    if not isinstance(text, str):
        raise RequestError("text must be a string")
    return ("literal", text) if r.get("literal") else text


def _end_text(boxes, end, side):
    """A wire end as a diagram writes it, from a port id 'Block.port' ('in:u.u' for a
    subsystem's port box): the port left out where the block has one on that side."""
    block, _, port = end.rpartition(".")
    box = boxes.get(block)
    if box is None or port not in [p["name"] for p in box[side]]:
        raise RequestError(f"no {side[:-1]} port {end}")
    if PORT_BOX.match(block):
        return block
    return block if len(box[side]) == 1 else f"{block}.{port}"

