"""Pass 2, blocks: every block built from its validated parameters, and its declared ports.

Input: the DiagramSpec, the library, the `Values` of pass 1, the problems list.
Output: `Built`: blocks by name (declaration order) and their ports, name -> (inputs
{name: In}, outputs {name: Out}). A block that fails is reported and left out.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...block import Block, In, Out
from ...errors import DiagramError, DiagramErrors
from ...language import expr
from ...language.diagram import bool_hint, suggest
from ...language.library import PluginError
from ...params import ParamError, names_file
from ..conditional import conditional_class
from .values import dir_of


@dataclass
class Built:
    blocks: dict  # name -> Block
    ports: dict  # name -> ({input name: In}, {output name: Out})


class Reported(Exception):
    """A problem already added to the problems list (stops the current block only)."""


def build_blocks(spec, library, values, problems):
    blocks, ports = {}, {}
    for bspec in spec.blocks.values():
        try:
            # a conditional subsystem's own block (engine/conditional.py), else the library's
            cls = conditional_class(bspec.params["kind"].raw) if bspec.type == "subsystem" \
                else library.block_class(bspec.type)
        except PluginError as e:
            problems.add(bspec.loc.error(str(e), block=bspec.name))
            continue
        if cls is None:
            problems.add(bspec.loc.error(
                f"unknown block type '{bspec.type}'{suggest(bspec.type, library.types)}",
                block=bspec.name, hint="`blocksim blocks` lists the block types"))
            continue
        stage = "while being built"
        try:
            block = build_block(cls, bspec, spec, values, problems)
            stage = "in ports()"
            ins, outs = _ports(block)
        except (Reported, expr.Unavailable):  # reported already
            continue
        except (DiagramError, DiagramErrors) as e:
            problems.add(e)
            continue
        except ParamError as e:
            loc = bspec.params[e.param].loc if e.param in bspec.params else bspec.loc
            problems.add(loc.error(e.message, block=bspec.name, param=e.param))
            continue
        except Exception as e:
            problems.add(plugin_fault(library, bspec, cls, e, stage))
            continue
        blocks[bspec.name] = block
        ports[bspec.name] = ({p.name: p for p in ins}, {p.name: p for p in outs})
    return Built(blocks, ports)


def plugin_fault(library, bspec, cls, error, stage):
    """The DiagramError of a plugin block type's failure `stage` ("in ports()"): third-party
    code's failure is its block's error, not a traceback. A built-in type's is its bug:
    `error` is raised again (its traceback)."""
    plugin = library.plugins.get(bspec.type)  # the package providing a type, or None
    if plugin is None:
        raise error
    why = str(error) if isinstance(error, _NoPorts) else \
        f"failed {stage}: {type(error).__name__}: {error}"
    return bspec.loc.error(f"plugin block type '{bspec.type}' from {plugin} "
                           f"({cls.__module__}.{cls.__qualname__}) {why}", block=bspec.name)


class _NoPorts(Exception):
    """A block class whose ports() is missing or gives something else than the pair."""


def _ports(block):
    """block.ports() as ([In, ...], [Out, ...]), checked (a plugin may get it wrong)."""
    try:
        ports = block.ports()
    except NotImplementedError:
        if type(block).ports is Block.ports:
            raise _NoPorts("defines no ports(): a block returns ([In, ...], [Out, ...]), "
                           "see docs/custom-blocks.md") from None
        raise
    if not (isinstance(ports, (tuple, list)) and len(ports) == 2
            and all(isinstance(p, In) for p in ports[0])
            and all(isinstance(p, Out) for p in ports[1])):
        raise _NoPorts(f"ports() must return ([In, ...], [Out, ...]), got {ports!r:.80}")
    return ports


def build_block(cls, bspec, spec, values, problems):
    """The block `bspec` describes, of class `cls`, built from its parameters evaluated
    with `values` (its problems added to `problems`, then `Reported` raised)."""
    schema = {p.name: p for p in cls.params}
    names = values.scopes[bspec.scope]
    params, bad = {}, False
    split = _split_by_commas(bspec.params)
    for key, value in bspec.params.items():
        if key not in schema and split.get(key, "") is not None:
            hint = (f'a comma inside {{ }} ends the value: quote an expression that holds '
                    f'commas, {split[key]}' if key in split else
                    f"parameters: {', '.join(schema) or 'none'}")
            problems.add(value.loc.error(
                f"unknown parameter '{key}' (type {bspec.type}){suggest(key, schema)}",
                block=bspec.name, hint=hint))
            bad = True
    for name, param in schema.items():
        if name not in bspec.params:
            if param.required:
                problems.add(bspec.loc.error(f"missing required parameter '{name}'",
                                             block=bspec.name))
                bad = True
                continue
            raw, loc = param.default, bspec.loc
        else:
            raw, loc = bspec.params[name].raw, bspec.params[name].loc
        try:
            params[name] = param_value(param, raw, names, loc, bspec, spec, values)
        except expr.Unavailable:  # it uses a failed parameter, reported already
            bad = True
        except DiagramError as e:
            problems.add(e)
            bad = True
    if bad:
        raise Reported
    params["_names"] = names
    params["_dotted"] = values.dotted  # ROBOT.pose in expressions (a function block's)
    params["_functions"] = values.functions  # and fkine(p560, q)
    params["_loc"] = bspec.loc  # where the block is written (for errors inside its values)
    return cls(bspec.name, params)


def _split_by_commas(params):
    """Keys that are the rest of an expression a flow mapping's commas split apart:
    {T1: transl(1, 4, 5)} reads as T1: 'transl(1', '4': null, '5)': null. The first such
    key maps to the expression as meant (`T1: "transl(1, 4, 5)"`), the others to None."""
    split, head, rest = {}, None, []
    for key, value in [*params.items(), (None, None)]:
        if head is not None and key is not None and value.raw is None \
                and not str(key).isidentifier():
            rest.append(key)
            continue
        if rest:
            text = ", ".join([params[head].raw, *map(str, rest)])
            split[rest[0]] = f'{head}: "{text}"'
            split.update(dict.fromkeys(rest[1:]))
        head, rest = None, []
        raw = getattr(value, "raw", None)
        if isinstance(raw, str) and (raw.count("(") > raw.count(")")
                                     or raw.count("[") > raw.count("]")):
            head = key
    return split


def _evaluated(raw, names, values, loc, where, what=""):
    """An expression (or list of them) evaluated, an error at `loc` prefixed by `what`."""
    try:
        return expr.evaluate(raw, names, dotted=values.dotted, functions=values.functions)
    except expr.Unavailable:
        raise
    except expr.ExprError as e:
        raise loc.error(what + str(e), **where) from None


def param_value(param, raw, names, loc, bspec, spec, values):
    where = dict(block=bspec.name, param=param.name)
    kind = param.kind
    if kind == "resource":
        table = values.resources.get(param.section, {})
        if not isinstance(raw, str) or raw not in table:
            raise loc.error(f"no {param.section[:-1] if param.section.endswith('s') else param.section}"
                            f" named {raw!r} in the diagram's '{param.section}' section"
                            f"{suggest(raw, table)}", **where)
        return table[raw]
    if raw is None and param.default is None:  # an optional parameter left unset
        return None
    if kind == "path" or (kind == "array_or_file" and names_file(raw)):
        try:
            name = param.convert(raw)
        except ValueError as e:
            raise loc.error(str(e), **where) from None
        # relative to the file that wrote it; a --set value: to the diagram
        written_in = loc.file if loc.file and Path(loc.file).is_file() else spec.file
        return dir_of(written_in) / name
    if kind == "vectors" and isinstance(raw, list):
        raw = [_evaluated(item, names, values, loc, where, f"item {k}: ")
               for k, item in enumerate(raw)]
    elif kind in ("value", "scalar", "int", "array_or_file") and raw is not param.default:
        raw = _evaluated(raw, names, values, loc, where)
    elif kind in ("value", "scalar", "int"):
        raw = np.asarray(raw, dtype=float) if not isinstance(raw, str) else raw
    try:
        return param.convert(raw)
    except ValueError as e:
        hint = bool_hint(raw) if kind in ("string", "choice") else None
        if kind == "names" and isinstance(raw, list):
            hint = next((bool_hint(v) for v in raw if bool_hint(v)), None)
        raise loc.error(str(e), hint=hint, **where) from None


_STAND_INS = {"value": 1.0, "scalar": 1.0, "int": 1, "bool": False, "string": "",
              "names": (), "resource": None, "data": None}


def probe_ports(cls, bspec, spec, values):
    """The port names a block would have while some of its parameters are missing or wrong
    (an editor draws a block being set up): the parameters that evaluate as given, the others
    at their defaults or, when required, at a stand-in of their kind (1 for a number, the
    first choice...). (input names, output names), or None when it cannot be built so."""
    names = values.scopes[bspec.scope]
    params = {}
    for param in cls.params:
        given = bspec.params.get(param.name)
        try:
            if given is None:
                raise LookupError
            params[param.name] = param_value(param, given.raw, names, given.loc, bspec, spec,
                                              values)
        except (LookupError, DiagramError, expr.Unavailable):
            default = param.default if not param.required else (
                param.choices[0] if param.kind == "choice" else
                Path(".") if param.kind == "path" else _STAND_INS[param.kind])
            try:
                params[param.name] = param.convert(default) if default is not None else None
            except ValueError:
                params[param.name] = default
    params.update(_names=names, _dotted=values.dotted, _functions=values.functions)
    try:
        ins, outs = _ports(cls(bspec.name, params))
    except Exception:  # noqa: BLE001 - any failure means: no ports to show yet
        return None
    return [p.name for p in ins], [p.name for p in outs]
