"""Access to the block library: type name -> block class, imported on first use.

The engine is domain-free: it knows block types only through a catalogue module (by default
`blocks.catalog`) that maps families of type names to "module:Class" strings and
diagram-level section names (such as `robots`) to the function that builds one entry, and
to the expression functions that take one of its entries (`fkine(p560, q)`).

Block types from elsewhere come in two ways, both process-wide and neither ever triggered
by a diagram file (a diagram names types; it never names code):
- plugins: an installed distribution declares types in the entry-point group
  `blocksim.blocks` (`my_type = my_package.module:MyBlock`). They are discovered the first
  time a type is not built in (or the catalogue is listed) and imported when first used; one
  that fails to import is a one-line warning (a `PluginWarning`) and every other type works.
- `register_block(cls, name=...)` from Python, within the running program.
A plugin never replaces a built-in type.
"""
from __future__ import annotations

import contextlib
import importlib
import inspect
import re
import signal
import threading
import warnings

from .diagram import INPORT

ENTRY_POINT_GROUP = "blocksim.blocks"
PLUGIN_FAMILY = "plugins"
_TYPE_RE = re.compile(r"[a-z_][a-z0-9_]*\Z")

_registered = {}  # type name -> (class, package) from register_block()
_discovered = None  # type name -> (entry point value, distribution name), found once


class PluginWarning(UserWarning):
    """A plugin block type could not be used (import failed, not a Block, name clash)."""


class PluginError(Exception):
    """The plugin that provides a type a diagram uses could not be imported."""


def register_block(cls, name=None):
    """Make the Block subclass `cls` available as block type `name` (default: `cls.type`)
    within this program, as an installed plugin would be; returns `cls`. Re-registering a
    name replaces the earlier class; a built-in type cannot be replaced (ValueError)."""
    from ..block import Block
    if not (isinstance(cls, type) and issubclass(cls, Block)):
        raise TypeError(f"register_block expects a subclass of blocksim.block.Block, got {cls!r}")
    name = _check_type_name(cls, name or cls.type)
    if name in Library().builtin:
        raise ValueError(f"'{name}' is a built-in block type and cannot be replaced")
    _registered[name] = (cls, cls.__module__.partition(".")[0])
    return cls


def _check_type_name(cls, name):
    if not isinstance(name, str) or not _TYPE_RE.match(name):
        raise ValueError(f"invalid block type name {name!r}: use lower-case letters, digits "
                         "and _ (e.g. first_order)")
    if cls.type and cls.type != name:
        raise ValueError(f"{cls.__name__}.type is '{cls.type}' but it is registered as "
                         f"'{name}'; the two must agree")
    if not cls.type:
        cls.type = name
    return name


def _entry_points():
    """Type name -> ("module:Class", distribution) of every installed plugin (scanned once)."""
    global _discovered
    if _discovered is None:
        from importlib.metadata import entry_points
        found = {}
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            dist = ep.dist.name if getattr(ep, "dist", None) is not None else ep.module
            if ep.name in found:
                warnings.warn(PluginWarning(
                    f"plugin block type '{ep.name}' is declared by both {found[ep.name][1]} "
                    f"and {dist}; using {found[ep.name][1]}'s"), stacklevel=2)
                continue
            found[ep.name] = (ep.value, dist)
        _discovered = found
    return _discovered


# block types the language itself makes (a diagram never names them in `blocks:`): the
# inport of each of a diagram's own inputs
STRUCTURAL = {INPORT: "blocksim.engine.compiler.inports:Inport"}


class Library:
    def __init__(self, catalog="blocks.catalog"):
        module = importlib.import_module(catalog)
        families = getattr(module, "FAMILIES", None) or {"blocks": module.BLOCKS}
        self.families = {name: dict(types) for name, types in families.items()}
        self.titles = dict(getattr(module, "FAMILY_TITLES", {}))
        self.builtin = {t: target for types in self.families.values()
                        for t, target in types.items()}
        self.sections = dict(getattr(module, "SECTIONS", {}))
        self.section_notes = dict(getattr(module, "SECTION_NOTES", {}))
        self._section_functions = dict(getattr(module, "SECTION_FUNCTIONS", {}))
        self._classes = {}
        self._failed = {}  # plugin type -> why it could not be used

    @property
    def plugins(self):
        """Type name -> providing package, of every plugin and registered type (built-in
        types shadow plugins of the same name, with a warning when such a type is used)."""
        out = {name: dist for name, (_, dist) in _entry_points().items()
               if name not in self.builtin}
        out.update((name, package) for name, (_, package) in _registered.items())
        return out

    @property
    def types(self):
        """Every usable type name: built-in, then plugins."""
        return {**self.builtin, **self.plugins}

    def family_of(self, type_name):
        for family, types in self.families.items():
            if type_name in types:
                return family
        return PLUGIN_FAMILY if type_name in self.plugins else None

    def block_class(self, type_name):
        """The class for a type name, or None when no catalogue, plugin or registration has
        it. Raises PluginError when the plugin that declares it fails to import."""
        cls = self._classes.get(type_name)
        if cls is not None:
            return cls
        if type_name in STRUCTURAL:
            cls = _resolve(STRUCTURAL[type_name])
        elif type_name in self.builtin:
            cls = _resolve(self.builtin[type_name])
        elif type_name in _registered:
            cls = _registered[type_name][0]
        elif type_name in _entry_points():
            cls = self._load_plugin(type_name)
        if cls is not None:
            self._classes[type_name] = cls
        return cls

    def _load_plugin(self, type_name):
        if type_name in self._failed:
            raise PluginError(self._failed[type_name])
        target, dist = _entry_points()[type_name]
        from ..block import Block
        with _sigints() as sigints:
            try:
                cls = _resolve(target)
                if not (isinstance(cls, type) and issubclass(cls, Block)):
                    raise TypeError(f"{target} is not a subclass of blocksim.block.Block")
                _check_type_name(cls, type_name)
            except BaseException as e:  # any failure of third-party code (sys.exit, a
                # KeyboardInterrupt it raises itself...): report it, keep going; but Ctrl-C
                if isinstance(e, KeyboardInterrupt) and sigints:  # is the user's
                    raise
                why = (f"plugin block type '{type_name}' from {dist} ({target}) could not be "
                       f"loaded: {_one_line(e)}")
                self._failed[type_name] = why
                raise PluginError(why) from None
        return cls

    def load_all(self):
        """(type, class) of every usable type, built-in then plugins; a plugin that fails to
        load is skipped with a one-line PluginWarning naming it."""
        for name, (target, dist) in _entry_points().items():
            if name in self.builtin:
                warnings.warn(PluginWarning(
                    f"plugin block type '{name}' from {dist} ({target}) has the name of a "
                    "built-in type and is ignored"), stacklevel=2)
        out = []
        for name in self.types:
            try:
                out.append((name, self.block_class(name)))
            except PluginError as e:
                warnings.warn(PluginWarning(str(e)), stacklevel=2)
        return out

    def section_builder(self, name):
        target = self.sections.get(name)
        return _resolve(target) if target else None

    def section_functions(self, name):
        """Expression functions of a section's entries (name -> `expr.Function` whose
        `subject` is the section), imported when a diagram has that section; {} if none."""
        target = self._section_functions.get(name)
        return dict(_resolve(target)) if target else {}

    def section_note(self, name, entries):
        """Text about a diagram section in use, given its built entries (name -> object):
        e.g. the robot kernels and each robot's table; None when the catalogue has none."""
        target = self.section_notes.get(name)
        return _resolve(target)(entries) if target else None


def summary(cls):
    """The first paragraph of a block class's docstring, on one line."""
    return doc_paragraphs(cls.__doc__)[0]


def doc_paragraphs(doc):
    """(first paragraph on one line, the rest) of a docstring: a block's one-line summary
    and its details (equation, ports)."""
    head, _, rest = inspect.cleandoc(doc or "").partition("\n\n")
    return " ".join(head.split()), rest


def _one_line(error):
    """`Type: message` of an exception on one line (`Type` alone when it has no message)."""
    text = " ".join(str(error).split())
    text = f"{type(error).__name__}: {text}" if text else type(error).__name__
    return text if len(text) <= 200 else text[:197] + "..."


@contextlib.contextmanager
def _sigints():
    """A list noting each SIGINT (Ctrl-C) that arrives while the block runs, which raises
    KeyboardInterrupt as Python's own handler does: a KeyboardInterrupt with none noted was
    raised by the code itself. Where the handler is not Python's own or not this thread's
    to change, every KeyboardInterrupt is taken for the user's (the list is not empty)."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield [None]
        return
    noted = []

    def note(signum, frame):
        noted.append(signum)
        raise KeyboardInterrupt
    signal.signal(signal.SIGINT, note)
    try:
        yield noted
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _resolve(target):
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)
