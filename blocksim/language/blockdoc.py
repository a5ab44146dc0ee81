"""`blocksim blocks`: the block catalogue grouped by family, one block's documentation, and
the Markdown reference (`blocksim blocks --markdown > docs/blocks.md`).

Everything printed comes from the block classes themselves (docstring, `params`), so the
reference can never drift from the code: the first paragraph of a docstring is the block's
one-line summary, the rest its equation, ports and details.
"""
from __future__ import annotations

import inspect
import sys

from ..errors import DiagramError, suggest
from .buses import DOCS as BUS_DOCS
from .library import PLUGIN_FAMILY, Library, PluginError, doc_paragraphs, summary

SUBSYSTEM_DOC = """\
A diagram used as one block: its own blocks, wires and parameters behind named ports.

    Filter: {type: subsystem, file: lowpass.yaml, parameters: {tau: 0.5}}
    Filter: {type: subsystem, diagram: {parameters: {...}, blocks: {...}, wires: [...],
                                        inputs: {...}, outputs: {...}}}

file: a diagram file, relative to the including file; or diagram: the same keys inline
(`blocksim: 1` optional there). Exactly one of the two.
parameters: values for the inner diagram's own `parameters:` (only names it declares),
evaluated in the including diagram, so they may use its parameters; they flow into the
inner expressions exactly as the values written in the inner file do.

The inner diagram declares its ports:
    inputs:  {u: Sum.u1}            name -> one inner input, or a list of them (fan-out)
    outputs: {y: Integrator.y}      name -> one inner output
and is wired from outside as `Filter.u`, `Filter.y` (the port may be omitted when there is
only one). Its `simulation:` and `record:` are ignored when it is included; a file may not
include itself, directly or not.

Inner blocks are named `outer/inner` (Filter/Integrator): use that name in `record:`
(`Filter/Integrator.y`), in `--set blocks.Filter/Integrator.x0=1`, and find it in
`blocksim check`; figures of inner sinks are written as `Filter.Scope.png`. The
subsystem's parameters are set like a block's: `--set blocks.Filter.parameters.tau=2`.

Conditional execution (keys of the subsystem block, as Simulink's Enable and Trigger ports):
    enable: SIGNAL          it runs while the signal (of the including diagram) is > 0;
      outputs_when_disabled: held | reset   (reset: to `initial`)
      states_when_enabling: held | reset    (reset: from their initial values)
    trigger: {signal: SIGNAL, edge: rising | falling | either}
                            it runs once at each edge, its outputs held in between; its
                            discrete blocks leave out `period` (the edges are their hits)
    initial: VALUE or {port: VALUE}   the outputs before it first runs (default 0)
Switch instants and edges are located events; nothing inside runs while it does not (its
states hold). See docs/conditional.md.
"""

# types the loader resolves (no class): their documentation, and the family they are listed in
LOADER_DOCS = {"subsystem": SUBSYSTEM_DOC, **BUS_DOCS}
LOADER_FAMILIES = {"bus": "routing", "bus_select": "routing"}

MARKDOWN_HEAD = """\
# Block reference

Every block type of blocksim, by family. This page is generated from the blocks' own
documentation by `blocksim blocks --markdown > docs/blocks.md`: do not edit it by hand.
`blocksim blocks TYPE` prints the same text for one block; plugins installed on your machine
are listed there too. A parameter without a default is required. Signal shapes: `()`
scalar, `(n,)` vector, `(r, c)` matrix.
"""


def main(args, out=None):
    """The `blocks` subcommand: list, describe one type, or print the Markdown reference."""
    out = out or sys.stdout
    lib = Library()
    if args.markdown:
        out.write(markdown(lib))
        return 0
    if args.type is None:
        out.write(listing(lib))
        return 0
    if getattr(args, "file", None):
        out.write(describe_file(lib, args.type, args.file))
        return 0
    out.write(describe(lib, args.type))
    return 0


def _groups(lib, builtin_only=False):
    """(heading, [(type, class)]) per family in catalogue order, then one per plugin
    package; empty families are left out."""
    groups = [(lib.titles.get(family, family.capitalize()),
               sorted([*types, *(t for t, f in LOADER_FAMILIES.items() if f == family)]))
              for family, types in lib.families.items() if types]
    groups.insert(0, ("Subsystems: diagrams used as blocks", ["subsystem"]))
    if not builtin_only:
        packages = {}
        for name, package in lib.plugins.items():
            packages.setdefault(package, []).append(name)
        groups += [(f"Plugins from {package}", sorted(names))
                   for package, names in sorted(packages.items())]
    classes = dict(lib.load_all()) if not builtin_only else {
        name: lib.block_class(name) for name in lib.builtin}
    return [(title, [(n, classes.get(n)) for n in names
                     if n in LOADER_DOCS or classes.get(n) is not None])
            for title, names in groups]


def _summary(name, cls):
    return summary(cls) if cls is not None else doc_paragraphs(LOADER_DOCS[name])[0]


def listing(lib):
    """The catalogue as text: a heading per family, one line per block."""
    groups = _groups(lib)
    width = max(len(n) for _, blocks in groups for n, _ in blocks)
    lines = []
    for title, blocks in groups:
        if not blocks:
            continue
        lines.append(title)
        lines += [f"  {name:<{width}}  {_summary(name, cls)}" for name, cls in blocks]
        lines.append("")
    lines.append("`blocksim blocks TYPE` shows one block's equation, ports and parameters.")
    return "\n".join(lines) + "\n"


def catalogue(lib):
    """The catalogue as plain data for a palette: [{title, types: [{type, summary, doc,
    params: [{name, kind, required, default, doc, choices, section}]}]}], in the order and
    with the texts of `blocksim blocks` (a subsystem's `file` and `parameters` as its
    parameters)."""
    out = []
    for title, blocks in _groups(lib):
        types = []
        for name, cls in blocks:
            params = ([_param_entry(p) for p in cls.params] if cls is not None else
                      [{"name": "file", "kind": "path", "required": False, "default": None,
                        "doc": "the subsystem's diagram file, relative to this one (or an "
                               "inline `diagram:`)", "choices": None, "section": None},
                       {"name": "parameters", "kind": "data", "required": False,
                        "default": None, "doc": "values of the parameters its diagram "
                                                "declares: {name: value}",
                        "choices": None, "section": None}])
            types.append({"type": name, "summary": _summary(name, cls),
                          "doc": describe(lib, name), "params": params})
        out.append({"title": title, "types": types})
    return out


def _param_entry(p):
    default = None if p.required or p.default is None else p.default
    if isinstance(default, tuple):
        default = list(default)
    return {"name": p.name, "kind": p.kind, "required": p.required,
            "default": default if isinstance(default, (str, int, float, bool, list)) else
            None if default is None else str(default),
            "doc": p.doc, "choices": list(p.choices) if p.choices else None,
            "section": p.section}


def describe_file(lib, type_name, path):
    """What a file a block of `type_name` reads declares (`Block.describe_file`: an FMU's
    ports, parameters and states), read without running anything in it."""
    cls = _block_class(lib, type_name) if type_name not in LOADER_DOCS else None
    lines = cls.describe_file(path) if cls is not None else None
    if lines is None:
        raise DiagramError(f"block type '{type_name}' describes no file",
                           file="blocksim blocks", hint="`blocksim blocks TYPE` documents it")
    return "\n".join(lines) + "\n"


def _block_class(lib, type_name):
    try:
        cls = lib.block_class(type_name)
    except PluginError as e:
        raise DiagramError(str(e), file="blocksim blocks") from None
    if cls is None:
        raise DiagramError(f"unknown block type '{type_name}'"
                           f"{suggest(type_name, [*lib.types, *LOADER_DOCS])}",
                           file="blocksim blocks", hint="`blocksim blocks` lists every type")
    return cls


def describe(lib, type_name):
    """One block's documentation: its summary, details and parameters."""
    if type_name in LOADER_DOCS:
        return f"{type_name}\n\n{LOADER_DOCS[type_name]}"
    cls = _block_class(lib, type_name)
    family = lib.family_of(type_name)
    where = (f"plugin from {lib.plugins[type_name]}" if family == PLUGIN_FAMILY
             else f"family: {family}")
    lines = [f"{type_name}  ({where})", "", inspect.cleandoc(cls.__doc__ or "(no documentation)"),
             "", "parameters:"]
    lines += [f"  {p.describe()}" for p in cls.params] or ["  (none)"]
    return "\n".join(lines) + "\n"


def markdown(lib):
    """The built-in catalogue as one Markdown page (plugins are documented by their own
    packages, so the page is the same on every machine)."""
    groups = _groups(lib, builtin_only=True)
    parts = [MARKDOWN_HEAD, "## Contents\n"]
    for title, blocks in groups:
        parts.append(f"- **{title}**: " + ", ".join(f"[`{n}`](#{n})" for n, _ in blocks))
    parts.append("")
    for title, blocks in groups:
        parts.append(f"## {title}\n")
        parts.append("| type | what it does |\n|---|---|")
        parts += [f"| [`{n}`](#{n}) | {_cell(_summary(n, cls))} |" for n, cls in blocks]
        parts.append("")
        for name, cls in blocks:
            parts.append(_markdown_block(name, cls))
    return "\n".join(parts).rstrip() + "\n"


def _markdown_block(name, cls):
    head, rest = doc_paragraphs(LOADER_DOCS[name] if cls is None else cls.__doc__)
    text = [f"### {name}\n", head + "\n"]
    if rest.strip():
        text.append("```text\n" + rest.strip("\n") + "\n```\n")
    if cls is not None:
        if cls.params:
            text.append("| parameter | default | kind | meaning |\n|---|---|---|---|")
            text += [f"| `{p.name}` | {_default(p)} | {_kind(p)} | {_cell(p.doc)} |"
                     for p in cls.params]
            text.append("")
        else:
            text.append("No parameters.\n")
    return "\n".join(text)


def _default(p):
    if p.required:
        return "required"
    if p.default is None or (isinstance(p.default, (tuple, list, str)) and len(p.default) == 0):
        return "unset"
    return f"`{p.default}`"


def _kind(p):
    return "one of " + ", ".join(f"`{c}`" for c in p.choices) if p.kind == "choice" else p.kind


def _cell(text):
    return " ".join(str(text).split()).replace("|", "\\|")
