"""Edits of a YAML file's text that change only what they edit.

The file stays text. PyYAML composes it into nodes that know the character offsets where
they start and end; an edit replaces, inserts or removes one span of the text, written in
the style of its neighbours: flow (`{...}`, `[...]`) or block style, their indentation, the
column their values are aligned at, the file's line ends. The result is read back (by
blocksim's own reader) and must equal the document with that one change made: an edit that
would misread (a value that needs quotes, say) tries its next way of writing the value, and
one that cannot be made is refused (`EditError`). Everything else, comments, key order,
quotes, number formats, expressions, stays byte for byte.

Paths name a node from the document's root: mapping keys and sequence indices,
`("blocks", "Kp", "K")`, `("wires", 3)`.
"""
from __future__ import annotations

import copy
import json
import re

import yaml

from ..errors import DiagramError
from ..language.yamlio import load_yaml_text

_PLAIN_FLOW = re.compile(r"[^\s\-?:,\[\]{}#&*!|>'\"%@`][^,\[\]{}#:]*\Z|[-?:][^\s,\[\]{}#:][^,\[\]{}#:]*\Z")


class EditError(ValueError):
    """An edit that cannot be made to this text (the message says why)."""


def _data(text):
    """The document as plain data (dicts and lists), as blocksim reads it."""
    try:
        return plain(load_yaml_text(text))
    except DiagramError as e:
        raise EditError(str(e)) from None


def plain(value):
    """YAML data (YMap, YList) as plain dicts and lists."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


class Source:
    """A YAML document's text and its composed node tree."""

    def __init__(self, text):
        self.text = text
        self.newline = "\r\n" if "\r\n" in text else "\n"
        try:
            self.root = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError as e:
            raise EditError(f"invalid YAML: {e}") from None
        self.data = _data(text) if text.strip() else None

    # -- finding nodes ---------------------------------------------------------------------
    def node(self, path):
        """The node at `path`, or None when there is none."""
        node = self.root
        for step in path:
            node = _child(node, step)
            if node is None:
                return None
        return node

    def entry(self, path):
        """(key node, value node) of the mapping entry at `path`, or None."""
        parent = self.node(path[:-1])
        if not isinstance(parent, yaml.MappingNode):
            return None
        for k, v in parent.value:
            if k.value == path[-1]:
                return k, v
        return None

    def span(self, node):
        """(start, end) offsets of a node's text, without trailing blank lines."""
        return node.start_mark.index, self.end(node)

    def source_of(self, path):
        """The text of the value at `path` as written, or None."""
        node = self.node(path)
        if node is None:
            return None
        start, end = self.span(node)
        return self.text[start:end]

    # -- helpers for writing ---------------------------------------------------------------
    def line_start(self, index):
        return self.text.rfind("\n", 0, index) + 1

    def line_end(self, index):
        """The offset just after the line break of the line holding `index` (or the end)."""
        end = self.text.find("\n", index)
        return len(self.text) if end < 0 else end + 1

    def step(self):
        """The indentation one nesting level adds in this file: the column of the first key
        of a block mapping under a top-level key (2 when there is none)."""
        for _, value in self.root.value if isinstance(self.root, yaml.MappingNode) else ():
            if isinstance(value, yaml.MappingNode) and not value.flow_style and value.value:
                return value.value[0][0].start_mark.column or 2
        return 2

    def sequence_prefix(self):
        """How this file writes the items of a block list under a top-level key: what comes
        before an item on its line ('  - ' unless the file says otherwise)."""
        for _, value in self.root.value if isinstance(self.root, yaml.MappingNode) else ():
            if isinstance(value, yaml.SequenceNode) and not value.flow_style and value.value:
                first = value.value[0].start_mark.index
                prefix = self.text[self.line_start(first):first]
                if re.fullmatch(r" *- +", prefix):
                    return prefix
        return "  - "

    def end(self, node):
        """Where a node's own text ends (+1): a block collection's end mark lies at the next
        key, a block scalar's after its trailing line breaks."""
        while isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and not node.flow_style \
                and node.value:
            node = node.value[-1][1] if isinstance(node, yaml.MappingNode) else node.value[-1]
        end = node.end_mark.index
        if isinstance(node, yaml.ScalarNode) and node.style in ("|", ">"):
            while end > node.start_mark.index and self.text[end - 1] in "\r\n ":
                end -= 1
        return end

    def colon(self, key):
        """The offset of the ':' after a mapping key."""
        return self.text.index(":", key.end_mark.index)


def _child(node, step):
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if k.value == step and isinstance(k, yaml.ScalarNode):
                return v
        return None
    if isinstance(node, yaml.SequenceNode) and isinstance(step, int):
        return node.value[step] if -len(node.value) <= step < len(node.value) else None
    return None


# ---- writing values -------------------------------------------------------------------------
def scalar_text(value):
    """A Python scalar as YAML text that blocksim reads back as that value, plain where it
    can be (in a flow collection too), else double-quoted."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if value == value and abs(value) != float("inf") else \
            (".nan" if value != value else ".inf" if value > 0 else "-.inf")
    text = str(value)
    if _PLAIN_FLOW.match(text) and text == text.strip() and _reads_as(text, text):
        return text
    return json.dumps(text, ensure_ascii=False)


def _reads_as(text, value):
    try:
        return _data(f"x: {text}\n") == {"x": value}
    except EditError:
        return False


def flow_text(value):
    """A value as one line of YAML flow text."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{scalar_text(k)}: {flow_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(flow_text(v) for v in value) + "]"
    return scalar_text(value)


def _nested(value):
    """Whether a value reads better in block style: a mapping holding a mapping (a new
    subsystem's inline diagram); mappings of scalars and lists stay on one line."""
    return isinstance(value, dict) and any(isinstance(v, dict) and v for v in value.values())


def _block_lines(src, value, indent):
    """A mapping or list as block-style lines at column `indent`; the values nested in it
    in flow style unless `_nested` says otherwise."""
    nl = src.newline
    if isinstance(value, dict):
        lines = []
        for k, v in value.items():
            if _nested(v):
                lines.append(f"{' ' * indent}{scalar_text(k)}:{nl}"
                             + _block_lines(src, v, indent + src.step()))
            else:
                lines.append(f"{' ' * indent}{scalar_text(k)}: {flow_text(v)}{nl}")
        return "".join(lines)
    prefix = " " * (indent - src.step()) + src.sequence_prefix()
    return "".join(f"{prefix}{flow_text(v)}{nl}" for v in value)


# ---- the edits ------------------------------------------------------------------------------
def _set_in(data, path, value):
    """A copy of `data` with `value` at `path` (a missing last key is added)."""
    data = copy.deepcopy(data)
    target = data
    for step in path[:-1]:
        if isinstance(target, dict) and target.get(step) is None:
            target[step] = {}
        target = target[step]
    target[path[-1]] = value
    return data


def _delete_in(data, path):
    data = copy.deepcopy(data)
    target = data
    for step in path[:-1]:
        target = target[step]
    del target[path[-1]]
    return data


def _checked(src, text, expected):
    """The new Source if `text` reads as `expected`, else None."""
    try:
        new = Source(text)
    except EditError:
        return None
    return new if new.data == expected else None


def _first(src, texts, expected, what):
    for text in texts:
        new = _checked(src, text, expected)
        if new is not None:
            return new
    raise EditError(f"cannot write {what} into this file without changing something else")


def _splice(text, start, end, new):
    return text[:start] + new + text[end:]


def set_value(src, path, value, written=None, after=()):
    """`value` at `path` (a mapping key: replaced or added; a sequence index: replaced).
    `written`: the value's YAML text as the user typed it, tried first. A missing mapping
    on the way is created; a new key goes after the last of the keys `after` that exists."""
    expected = _set_in(src.data if src.data is not None else {}, path, value)
    node = src.node(path)
    forms = [_quoted_as(node, value)] + (
        [written.strip()] if written is not None and written.strip() else []) + [flow_text(value)]
    if isinstance(value, str):
        forms.append(json.dumps(value, ensure_ascii=False))
    forms = [f for f in forms if f is not None]
    what = "/".join(map(str, path))
    if node is not None:
        return _first(src, [_replace(src, path, node, f) for f in _unique(forms)], expected, what)
    parent = src.node(path[:-1])
    if parent is None or (isinstance(parent, yaml.ScalarNode) and parent.tag.endswith("null")):
        # the enclosing mapping does not exist (or is empty): make it with this one entry
        return set_value(src, path[:-1], {path[-1]: value}, after=after) if len(path) > 1 \
            else _first(src, [_new_document(src, path[0], value)], expected, what)
    if not isinstance(parent, yaml.MappingNode):
        raise EditError(f"cannot add '{path[-1]}': {'/'.join(map(str, path[:-1]))} is not a mapping")
    return _first(src, [_insert(src, parent, path[-1], f, value, after)
                        for f in _unique(forms)], expected, what)


def _quoted_as(node, value):
    """A string written with the quotes the value it replaces had, or None."""
    if not isinstance(value, str) or not isinstance(node, yaml.ScalarNode):
        return None
    if node.style == '"':
        return json.dumps(value, ensure_ascii=False)
    if node.style == "'":
        return "'" + value.replace("'", "''") + "'"
    return None


def _unique(items):
    return list(dict.fromkeys(items))


def _replace(src, path, node, form):
    """The text with the node at `path` written as `form`."""
    if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and not node.flow_style \
            and node.value and len(path) > 0:
        # a block collection starts on the next line: replace from just after the colon
        entry = src.entry(path) if not isinstance(path[-1], int) else None
        if entry is not None:
            return _splice(src.text, src.colon(entry[0]) + 1, src.end(node), " " + form)
    if isinstance(node, yaml.ScalarNode) and node.tag.endswith("null") and node.value == "" \
            and not isinstance(path[-1], int):
        colon = src.colon(src.entry(path)[0]) + 1
        return _splice(src.text, colon, colon, " " + form)
    start, end = src.span(node)
    return _splice(src.text, start, end, form)


def _insert(src, mapping, key, form, value, after):
    """The text with `key: form` added to `mapping`."""
    text, nl = src.text, src.newline
    if mapping.flow_style:
        if mapping.value:
            end = src.end(mapping.value[-1][1])
            return _splice(text, end, end, f", {scalar_text(key)}: {form}")
        opening = mapping.start_mark.index + 1
        return _splice(text, opening, opening, f"{scalar_text(key)}: {form}")
    keys = [k.value for k, _ in mapping.value]
    previous = [k for k in after if k in keys]
    _, v_node = mapping.value[keys.index(previous[-1])] if previous else mapping.value[-1]
    indent = mapping.value[0][0].start_mark.column
    at = src.line_end(src.end(v_node))
    prefix = "" if text[:at].endswith("\n") or not text else nl
    name = scalar_text(key)
    if form == flow_text(value) and ((mapping is src.root and isinstance(value, (dict, list))
                                      and value) or _nested(value)):
        body = _block_lines(src, value, indent + src.step())
        return _splice(text, at, at, f"{prefix}{' ' * indent}{name}:{nl}{body}")
    pad = _aligned_padding(src, mapping, indent + len(name) + 1)
    return _splice(text, at, at, f"{prefix}{' ' * indent}{name}:{pad}{form}{nl}")


def _aligned_padding(src, mapping, used):
    """The spaces after a key's colon that put its value at column `used` + spaces: at the
    column most of the mapping's values are aligned at, when they are (two or more, padded
    there) and the key leaves room, else one space."""
    columns = {}
    for k, v in mapping.value:
        if v.start_mark.line == k.start_mark.line:
            padded = v.start_mark.column > k.end_mark.column + 2
            count, any_padded = columns.get(v.start_mark.column, (0, False))
            columns[v.start_mark.column] = (count + 1, any_padded or padded)
    aligned = [(count, c) for c, (count, padded) in columns.items() if count >= 2 and padded]
    if aligned:
        column = max(aligned)[1]
        if column > used:
            return " " * (column - used)
    return " "


def _new_document(src, key, value):
    """An empty file given its first key."""
    nl = src.newline
    if isinstance(value, (dict, list)) and value:
        return src.text + f"{key}:{nl}" + _block_lines(src, value, src.step())
    return src.text + f"{key}: {flow_text(value)}{nl}"


def delete(src, path):
    """The entry or item at `path` removed (a mapping or list left empty becomes {} / [])."""
    node = src.node(path)
    if node is None:
        raise EditError(f"nothing at {'/'.join(map(str, path))} to delete")
    parent = src.node(path[:-1])
    expected = _delete_in(src.data, path)
    what = "/".join(map(str, path))
    if len(parent.value) == 1 and not parent.flow_style and len(path) > 1:
        empty = {} if isinstance(parent, yaml.MappingNode) else []
        return set_value(src, path[:-1], empty)
    items = parent.value
    index = (path[-1] if isinstance(path[-1], int) else
             [k.value for k, _ in items].index(path[-1]))
    index %= len(items)
    first = (items[index][0] if isinstance(parent, yaml.MappingNode) else items[index])
    last = (items[index][1] if isinstance(parent, yaml.MappingNode) else items[index])
    text = src.text
    if parent.flow_style:
        if len(items) == 1:
            return _first(src, [_splice(text, first.start_mark.index, src.end(last), "")],
                          expected, what)
        if index + 1 < len(items):
            following = items[index + 1]
            nxt = following[0] if isinstance(parent, yaml.MappingNode) else following
            return _first(src, [_splice(text, first.start_mark.index, nxt.start_mark.index, "")],
                          expected, what)
        before = items[index - 1]
        prev_end = src.end(before[1] if isinstance(parent, yaml.MappingNode) else before)
        return _first(src, [_splice(text, prev_end, src.end(last), "")], expected, what)
    start = src.line_start(first.start_mark.index)
    lead = text[start:first.start_mark.index]
    if not re.fullmatch(r" *(- +)?", lead):
        raise EditError(f"cannot delete {what}: it shares its line with other content")
    return _first(src, [_splice(text, start, src.line_end(src.end(last)), "")],
                  expected, what)


def rename_key(src, path, new):
    """The mapping key at `path` renamed to `new`, its value kept where it was aligned."""
    entry = src.entry(path)
    if entry is None:
        raise EditError(f"no key {'/'.join(map(str, path))} to rename")
    key, value = entry
    data = src.data
    target = data
    for step in path[:-1]:
        target = target[step]
    renamed = {(new if k == path[-1] else k): v for k, v in target.items()}
    expected = _set_whole(data, path[:-1], renamed)
    text = src.text
    between = text[key.end_mark.index:value.start_mark.index]
    name = scalar_text(new)
    forms = [_splice(text, key.start_mark.index, key.end_mark.index, name)]
    if re.fullmatch(r": +", between) and value.start_mark.line == key.start_mark.line:
        pad = _aligned_padding(src, src.node(path[:-1]), key.start_mark.column + len(name) + 1)
        forms.insert(0, _splice(text, key.start_mark.index, value.start_mark.index,
                                f"{name}:{pad}"))
    return _first(src, forms, expected, "/".join(map(str, path)))


def _set_whole(data, path, value):
    if not path:
        return value
    return _set_in(data, path, value)


def append(src, path, value, after=()):
    """`value` added at the end of the list at `path` (made when missing)."""
    node = src.node(path)
    if node is None or (isinstance(node, yaml.ScalarNode) and node.tag.endswith("null")):
        return set_value(src, path, [value], after=after)
    if not isinstance(node, yaml.SequenceNode):
        raise EditError(f"{'/'.join(map(str, path))} is not a list")
    current = src.data
    for step in path:
        current = current[step]
    expected = _set_in(src.data, path, current + [value])
    forms = _unique([flow_text(value)]
                    + ([json.dumps(value, ensure_ascii=False)] if isinstance(value, str) else []))
    text, nl = src.text, src.newline
    if node.flow_style:
        if node.value:
            end = src.end(node.value[-1])
            candidates = [_splice(text, end, end, f", {f}") for f in forms]
        else:
            opening = node.start_mark.index + 1
            candidates = [_splice(text, opening, opening, f) for f in forms]
    elif node.value:
        first = node.value[0].start_mark.index
        prefix = text[src.line_start(first):first]
        at = src.line_end(src.end(node.value[-1]))
        lead = "" if text[:at].endswith("\n") else nl
        candidates = [_splice(text, at, at, f"{lead}{prefix}{f}{nl}") for f in forms]
    else:
        candidates = []
    return _first(src, candidates, expected, "/".join(map(str, path)))
