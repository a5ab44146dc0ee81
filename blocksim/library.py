"""Access to the block library: type name -> block class, imported on first use.

The engine is domain-free: it knows block types only through a catalogue module (by default
`blocks.catalog`) that maps type names to "module:Class" strings and diagram-level section
names (such as `robots`) to the function that builds one entry.
"""
from __future__ import annotations

import importlib


class Library:
    def __init__(self, catalog="blocks.catalog"):
        module = importlib.import_module(catalog)
        self.types = dict(module.BLOCKS)
        self.sections = dict(getattr(module, "SECTIONS", {}))
        self._classes = {}

    def block_class(self, type_name):
        """The class for a type name, or None when the catalogue does not have it."""
        cls = self._classes.get(type_name)
        if cls is None and type_name in self.types:
            cls = self._classes[type_name] = _resolve(self.types[type_name])
        return cls

    def section_builder(self, name):
        target = self.sections.get(name)
        return _resolve(target) if target else None


def _resolve(target):
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)
