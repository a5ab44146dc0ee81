"""Safe YAML loading with line numbers and resource limits.

`load_yaml_file` / `load_yaml_text` give what `yaml.safe_load` gives (YAML 1.1 scalars: `1e-3`
stays a string), except that mappings are `YMap` and sequences `YList`, which remember the
file and the line of every key and item so that later errors can say `FILE:LINE`.

The document is built straight from the parser's event stream by an iterative builder (no
Python recursion, no `Node` tree). Nothing but plain data is ever constructed: explicit tags
other than the core ones (`!!python/...`, `!local`, `!!binary`...) are rejected when they are
read. Limits, each reported as a `DiagramError` with the line:

- a file over 10 MiB is refused before it is parsed;
- nesting deeper than 100 levels (aliases included) stops the build at level 101;
- aliases may add at most 100,000 nodes in total: the expanded size of every anchored node is
  computed once when it is complete, each alias adds that size, so a "billion laughs" bomb is
  rejected after reading a few lines, without expanding it;
- duplicate keys in one mapping are errors (`yaml.safe_load` keeps the last silently);
- integers longer than 4,300 characters are refused (a sexagesimal `1:2:3:...` scalar costs
  quadratic time to convert), and so is a mapping with more than 16 non-string keys sharing
  one hash (hash flooding makes dict insertion quadratic).

Merge keys (`<<: *base`) are supported as in `yaml.safe_load`. Aliases share one object, as in
`yaml.safe_load`. libyaml's event parser is used when PyYAML was built with it (about 20x
faster than the pure-Python one); both give the same events.
"""
from __future__ import annotations

import os
import re

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.events import (AliasEvent, DocumentStartEvent, MappingEndEvent, MappingStartEvent,
                         ScalarEvent, SequenceEndEvent, SequenceStartEvent, StreamEndEvent)
from yaml.nodes import ScalarNode
from yaml.parser import Parser
from yaml.reader import Reader, ReaderError
from yaml.resolver import Resolver
from yaml.scanner import Scanner

from ..errors import DiagramError

MAX_BYTES = 10 * 2**20
MAX_DEPTH = 100
MAX_ALIAS_NODES = 100_000
MAX_INT_CHARS = 4300
MAX_SAME_HASH = 16
MAX_KEY_CHARS = 1024  # YAML's limit on an implicit (one-line) key

_T = "tag:yaml.org,2002:"
_STR, _SEQ, _MAP, _MERGE = _T + "str", _T + "seq", _T + "map", _T + "merge"
_SCALAR_TAGS = {_T + t for t in ("null", "bool", "int", "float", "str", "timestamp")}
_SCALAR_ALLOWED = _SCALAR_TAGS | {"!"}  # "!" is the non-specific tag: plain str / seq / map
_SEQ_ALLOWED = {_SEQ, "!"}
_TAG_FORMS = {  # what an explicitly tagged scalar must look like
    "int": "an !!int is written like 12, -3, 0x1f, 0o17 or 0b101",
    "float": "a !!float is written like 1.5, -2e-3, .inf or .nan",
    "bool": "a !!bool is written like true/false, yes/no or on/off",
    "timestamp": "a !!timestamp is written like 2024-01-31 or 2024-01-31 12:00:00",
}
_MAP_ALLOWED = {_MAP, "!"}


class YMap(dict):
    """A YAML mapping: a dict that knows its file, its start line and the line of each key."""

    def __init__(self, items=(), *, line=None, file=None):
        super().__init__(items)
        self.line = line
        self.file = file
        self.key_lines = {}

    def key_line(self, key):
        """1-based line of `key`, or the mapping's own line when the key is absent."""
        return self.key_lines.get(key, self.line)


class YList(list):
    """A YAML sequence: a list that knows its file, its start line and the line of each item."""

    def __init__(self, items=(), *, line=None, file=None):
        super().__init__(items)
        self.line = line
        self.file = file
        self.item_lines = []

    def item_line(self, i):
        """1-based line of item `i`, or the sequence's own line when there is no such item."""
        try:
            return self.item_lines[i]
        except IndexError:
            return self.line


class _PurePythonEvents(Reader, Scanner, Parser):
    """PyYAML's own parser, used when libyaml is not available."""

    def __init__(self, text):
        Reader.__init__(self, text)
        Scanner.__init__(self)
        Parser.__init__(self)


if yaml.__with_libyaml__:
    from yaml._yaml import CParser as _Events
else:
    _Events = _PurePythonEvents


def load_yaml_file(path):
    """Read and load one YAML document from `path` (UTF-8, at most 10 MiB)."""
    name = os.fsdecode(path)
    try:
        size = os.stat(name).st_size
        if size > MAX_BYTES:
            raise _too_big(size, name)
        with open(name, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise DiagramError("file not found", file=name) from None
    except IsADirectoryError:
        raise DiagramError("is a directory, not a YAML file", file=name) from None
    except OSError as e:
        raise DiagramError(f"cannot read the file: {e.strerror or e}", file=name) from None
    if len(data) > MAX_BYTES:  # a file that grew, or a device without a size
        raise _too_big(len(data), name)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise DiagramError(f"the file is not UTF-8 text (invalid byte 0x{data[e.start]:02x})",
                           file=name, line=data.count(b"\n", 0, e.start) + 1) from None
    return _load(text, name, _Events)


def load_yaml_text(text, filename="<string>"):
    """Load one YAML document from a string; `filename` is only used in messages."""
    if len(text) > MAX_BYTES // 4:  # only then can the UTF-8 form exceed the limit
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > MAX_BYTES:
            raise _too_big(size, filename)
    if not text.isascii():
        _check_encodable(text, filename)
    return _load(text, filename, _Events)


def _check_encodable(text, filename):
    """Refuse text with lone surrogates: what Python makes of bytes that are not UTF-8 in a
    command-line argument (surrogateescape) or a file name."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        code = ord(text[e.start])
        byte = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"
        raise DiagramError(f"the text is not valid UTF-8 ({byte} at character {e.start + 1})",
                           file=filename, line=text.count("\n", 0, e.start) + 1) from None


def _too_big(size, file):
    return DiagramError(f"the file is {size / 2**20:.1f} MiB, more than the 10 MiB limit",
                        file=file)


def _load(text, file, events):
    """Parse `text` with the event source `events` and build the document."""
    try:
        return _Builder(file).build(events(text))
    except yaml.MarkedYAMLError as e:
        raise DiagramError(_syntax_message(e), file=file,
                           line=e.problem_mark.line + 1 if e.problem_mark else None,
                           hint=_syntax_hint(text, e)) from None
    except ReaderError as e:  # a control character; its position is not in characters
        where = max(text.find(chr(e.character)), 0)
        raise DiagramError(f"invalid YAML: character U+{e.character:04X} is not allowed",
                           file=file, line=text.count("\n", 0, where) + 1) from None


def _syntax_message(e):
    if e.problem and "maximum nesting depth" in e.problem:
        # PyYAML >= 6.0.4 has a nesting limit of its own, beyond ours: one message either way
        return f"the document is nested deeper than {MAX_DEPTH} levels"
    text = f"invalid YAML: {e.problem}" if e.problem else "invalid YAML"
    if e.context:
        text += f" ({e.context}"
        if e.context_mark is not None:
            text += f" at line {e.context_mark.line + 1}"
        text += ")"
    return text


_INDEX_OPEN = re.compile(r"[\w\])]\[")  # a name's last character (or a closing bracket), '['
_NAME_CHARS = re.compile(r"[\w./]*")
_INDEX_REST = re.compile(r"[^\s,{}]*")
_HINT_CHARS = 60  # a quoted value longer than that is shown cut


def _syntax_hint(text, e):
    """What the usual causes of a syntax error are, read off the lines it names: a tab in
    the indentation, a key longer than YAML allows, or an index `y[0]` inside a flow
    collection (`{...}` / `[...]`), where `[` opens a list."""
    lines = text.splitlines()
    marked = [m.line for m in (e.problem_mark, e.context_mark)
              if m is not None and 0 <= m.line < len(lines)]
    if e.problem_mark is not None and e.problem_mark.line in marked:
        line = lines[e.problem_mark.line]
        if "\t" in line[:len(line) - len(line.lstrip(" \t"))]:
            return "YAML cannot indent with tabs: indent with spaces"
    if any(_long_key(lines[m.line], m.column) for m in (e.problem_mark, e.context_mark)
           if m is not None and m.line in marked):
        return (f"a key written on one line (the text before ':') is at most {MAX_KEY_CHARS} "
                "characters long in YAML: shorten it")
    for k in marked:
        found = _indexed_value(lines[k])
        if found:
            if len(found) > _HINT_CHARS:
                found = found[:_HINT_CHARS - 3] + "..."
            return (f"inside {{ }} or [ ], '[' starts a list: quote the value "
                    f"(\"{found}\"), or write it in block style, one entry per line")
    return None


def _long_key(line, column):
    """Whether the key at or before `column` (a key's start, or the ':' after it) is longer
    than YAML allows: the parsers then stop at its ':' with a message that does not say why."""
    colon = line.find(":", column)
    if colon < 0:
        return False
    start = max(line.rfind(c, 0, colon) for c in "{[,") + 1
    return len(line[start:colon].strip(" \t-?")) > MAX_KEY_CHARS


def _indexed_value(line):
    """The first value with an index in `line` (`Motor.y[0]` in `{w: Motor.y[0]}`), or None.

    Found from its '[' outwards, in time linear in the line's length: a regular expression
    that begins with the name tries every character of a long name as a start, quadratic
    in its length (a 300 kB block name took a minute)."""
    found = _INDEX_OPEN.search(line)
    if found is None:
        return None
    end = found.start()  # the name's last character, part of the value
    start = end - _NAME_CHARS.match(line[end - 1::-1] if end else "").end()
    return line[start:_INDEX_REST.match(line, end).end()]


class _Frame:
    """A mapping or sequence being built, with its expanded size and height so far."""
    __slots__ = ("value", "anchor", "size", "height", "key", "key_line", "merges", "hashes")

    def __init__(self, value, anchor):
        self.value = value
        self.anchor = anchor
        self.size = 1  # nodes once every alias inside is expanded
        self.height = 1  # levels of collections, this one included
        self.key = _NO_KEY  # a mapping's key waiting for its value
        self.key_line = None
        self.merges = []  # (value of a '<<' key, its line)
        self.hashes = {}  # hash -> count, for non-string keys


_NO_KEY = object()
_MERGE_KEY = object()  # a plain '<<' scalar, which is a merge key in key position


class _Builder:
    """Turns an event stream into YMap / YList / scalars, enforcing the limits."""

    def __init__(self, file):
        self.file = file
        self.resolver = Resolver()
        self.constructor = SafeConstructor()
        self.anchors = {}  # anchor -> (value, expanded size, height)
        self.open_anchors = set()  # anchors of collections still being built
        self.alias_nodes = 0
        self.root = None

    def error(self, message, line, hint=None):
        return DiagramError(message, file=self.file, line=line, hint=hint)

    def build(self, parser):
        stack = []
        documents = 0
        while True:
            event = parser.get_event()
            kind = type(event)
            line = event.start_mark.line + 1
            if kind is ScalarEvent:
                self.check_tag(event, _SCALAR_ALLOWED, line)
                value = self.scalar(event, line)
                if type(value) is bool and event.tag is None and stack and \
                        stack[-1].key is _NO_KEY and type(stack[-1].value) is YMap:
                    value = event.value  # a key `on:` / `off:` names something: keep the word
                self.add(stack, value, 1, 0, line)
                if event.anchor is not None:
                    self.anchors[event.anchor] = (value, 1, 0)
            elif kind is SequenceStartEvent or kind is MappingStartEvent:
                self.check_tag(event, _SEQ_ALLOWED if kind is SequenceStartEvent
                               else _MAP_ALLOWED, line)
                if len(stack) >= MAX_DEPTH:
                    raise self.error(f"the document is nested deeper than {MAX_DEPTH} levels",
                                     line)
                value = (YList if kind is SequenceStartEvent else YMap)(line=line, file=self.file)
                stack.append(_Frame(value, event.anchor))
                if event.anchor is not None:
                    self.open_anchors.add(event.anchor)
            elif kind is SequenceEndEvent or kind is MappingEndEvent:
                frame = stack.pop()
                if frame.merges:
                    self.merge(frame.value, frame.merges)
                self.add(stack, frame.value, frame.size, frame.height, frame.value.line)
                if frame.anchor is not None:
                    self.open_anchors.discard(frame.anchor)
                    self.anchors[frame.anchor] = (frame.value, frame.size, frame.height)
            elif kind is AliasEvent:
                self.alias(stack, event.anchor, line)
            elif kind is DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise self.error("expected a single YAML document, found another one", line)
            elif kind is StreamEndEvent:
                return self.root

    def check_tag(self, event, allowed, line):
        tag = event.tag
        if tag is not None and tag not in allowed:
            short = "!!" + tag[len(_T):] if tag.startswith(_T) else tag
            raise self.error(f"YAML tags are not allowed here ('{short}'); a diagram holds "
                             "only plain data", line)

    def scalar(self, event, line):
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolver.resolve(ScalarNode, event.value, event.implicit)
        if tag == _MERGE:
            return _MERGE_KEY
        if tag == _STR or tag not in _SCALAR_TAGS:  # '=' (the 'value' tag) stays text
            return event.value
        if tag == _T + "int" and len(event.value) > MAX_INT_CHARS:
            raise self.error(f"integer longer than {MAX_INT_CHARS} characters", line)
        node = ScalarNode(tag, event.value, event.start_mark, event.end_mark)
        try:
            return self.constructor.yaml_constructors[tag](self.constructor, node)
        except Exception as e:  # noqa: BLE001 - PyYAML's converters fail with IndexError,
            # KeyError, AttributeError... on text an explicit tag forces on them; they only
            # convert a string, so any failure means the scalar is not of that type
            kind = tag[len(_T):]
            detail = f": {e}" if isinstance(e, ValueError) and str(e) else ""
            raise self.error(f"invalid {kind} {event.value!r}{detail}", line,
                             hint=_TAG_FORMS.get(kind)) from None

    def alias(self, stack, anchor, line):
        if anchor in self.open_anchors:
            raise self.error(f"alias *{anchor} refers to a node that contains it", line)
        if anchor not in self.anchors:
            raise self.error(f"undefined alias *{anchor}", line)
        value, size, height = self.anchors[anchor]
        self.alias_nodes += size
        if self.alias_nodes > MAX_ALIAS_NODES:
            raise self.error(f"YAML aliases expand to more than {MAX_ALIAS_NODES:,} nodes", line)
        if len(stack) + height > MAX_DEPTH:
            raise self.error(f"the document is nested deeper than {MAX_DEPTH} levels "
                             f"once alias *{anchor} is expanded", line)
        self.add(stack, value, size, height, line)

    def add(self, stack, value, size, height, line):
        """Put a finished value into the enclosing collection (or make it the root)."""
        if stack and stack[-1].key is _NO_KEY and type(stack[-1].value) is YMap:
            frame = stack[-1]
            frame.key, frame.key_line = value, line
            frame.size += size
            frame.height = max(frame.height, height + 1)
            return
        if value is _MERGE_KEY:
            value = "<<"
        if not stack:
            self.root = value
            return
        frame = stack[-1]
        frame.size += size
        frame.height = max(frame.height, height + 1)
        container = frame.value
        if type(container) is YList:
            container.append(value)
            container.item_lines.append(line)
            return
        key, frame.key = frame.key, _NO_KEY
        if key is _MERGE_KEY:
            frame.merges.append((value, frame.key_line))
        else:
            self.put(frame, key, value)

    def put(self, frame, key, value):
        container, line = frame.value, frame.key_line
        try:
            first = container.key_lines.get(key)
        except TypeError:
            kind = "list" if isinstance(key, list) else "mapping"
            raise self.error(f"a mapping key must be a scalar, not a {kind}", line) from None
        if first is not None:
            raise self.error(f"duplicate key {key!r} (first defined at line {first})", line)
        if type(key) is not str:
            h = hash(key)
            frame.hashes[h] = frame.hashes.get(h, 0) + 1
            if frame.hashes[h] > MAX_SAME_HASH:
                raise self.error("too many mapping keys with the same hash", line)
        container[key] = value
        container.key_lines[key] = line

    def merge(self, target, merges):
        """Apply `<<` merge keys as yaml.safe_load does: merged keys come first, explicit
        keys override them, an earlier merged mapping overrides a later one."""
        merged = {}
        lines = {}
        for source, line in merges:
            for src in (source if type(source) is YList else [source]):
                if type(src) is not YMap:
                    raise self.error("'<<' (merge key) needs a mapping or a list of mappings",
                                     line)
                for key, value in src.items():
                    if key not in merged:
                        merged[key] = value
                        lines[key] = src.key_line(key)
        merged.update(target)
        lines.update(target.key_lines)
        target.clear()
        target.update(merged)
        target.key_lines = lines
