"""Pass 3, wires: one driver per input, every required input wired.

Input: the DiagramSpec, the ports of the built blocks (`Built.ports`), the problems list.
Output: drivers, (consumer block, input port) -> (driver block, output port, index, wire
location); index is None, an element or a (start, stop) slice of a vector output.
"""
from __future__ import annotations

import difflib

from ...errors import DiagramError
from ...language.diagram import index_text, suggest
from .blocks import Reported


def resolve_wires(spec, ports, problems):
    drivers = {}
    wired = set()  # inputs with a wire whose source is wrong or failed: not unconnected
    broken = []  # (wire, its destination's error): wires into no input, by a typo
    for w in spec.wires:
        src = _wire_end(spec, ports, problems, w.src, output=True)
        try:
            dst = endpoint(spec, ports, w.dst, output=False)
        except Reported:
            continue
        except DiagramError as e:
            problems.add(e)
            broken.append((w, e))
            continue
        key = (w.dst.block, dst)
        if src is None:
            wired.add(key)
            continue
        if key in drivers:
            first = drivers[key][3]
            problems.add(w.loc.error(
                f"input '{w.dst.block}.{dst}' has two drivers (also wired at line {first.line})",
                block=w.dst.block, port=dst, hint="each input has exactly one driver"))
            continue
        drivers[key] = (w.src.block, src, w.src.index, w.loc)
    for w, error in broken:
        _meant_input(w, error, ports, drivers, wired)
    for name, (ins, _) in ports.items():
        for port in ins.values():
            if (name, port.name) not in drivers and (name, port.name) not in wired \
                    and not port.optional:
                problems.add(spec.blocks[name].loc.error(
                    "input is not connected", block=name, port=port.name,
                    hint=f"wire a signal to it, or feed it a constant: e.g. the block "
                         f"`Zero: {{type: constant, value: 0}}` and the wire "
                         f"`Zero -> {name}.{port.name}`"))
    return drivers


def _meant_input(w, error, ports, drivers, wired):
    """A wire whose destination names no input (a typo in the block or the port): the
    unconnected input of that block (or of the block its name is closest to) it was most
    likely meant for, named in the wire's error and then not reported as unconnected."""
    ep = w.dst
    block = ep.block if ep.block in ports else next(
        iter(difflib.get_close_matches(ep.block, list(ports), n=1, cutoff=0.6)), None)
    if block is None:
        return
    free = [p.name for p in ports[block][0].values() if not p.optional
            and (block, p.name) not in drivers and (block, p.name) not in wired]
    if not free:
        return
    port = ep.port if ep.port in free else next(iter(
        difflib.get_close_matches(ep.port or "", free, n=1, cutoff=0.0)), free[0])
    wired.add((block, port))
    meant = f"{block}.{port}"
    note = (f"'{meant}' is not connected: this wire may be meant for it "
            f"(`{w.src.text()} -> {meant}`)")
    error.hint = f"{error.hint}; {note}" if error.hint else note


def _wire_end(spec, ports, problems, ep, output):
    """The port name of a wire's end, or None when it is wrong (reported here) or on a
    block that failed to build (reported already)."""
    try:
        return endpoint(spec, ports, ep, output)
    except Reported:
        return None
    except DiagramError as e:
        problems.add(e)
        return None


def endpoint(spec, ports, ep, output):
    """The port an endpoint (`Block.port` or a lone `Block`) names; DiagramError when there
    is no such block or port, Reported when the block failed to build."""
    if ep.block not in ports:
        if ep.block in spec.blocks:  # the block failed to build: already reported
            raise Reported
        raise ep.loc.error(f"unknown block '{ep.block}'{suggest(ep.block, spec.blocks)}")
    names = ports[ep.block][1 if output else 0]
    side = "output" if output else "input"
    if ep.port is None:
        if len(names) != 1:
            raise ep.loc.error(f"block has {len(names)} {side}s ({', '.join(names) or 'none'}): "
                               f"name one, e.g. '{ep.block}.{next(iter(names), 'port')}'",
                               block=ep.block)
        return next(iter(names))
    if ep.port not in names:
        raise ep.loc.error(f"no {side} named '{ep.port}'{suggest(ep.port, names)}"
                           f" ({side}s: {', '.join(names) or 'none'})",
                           block=ep.block, port=ep.port)
    return ep.port


def driver_text(drivers, name, port):
    """The signal wired to an input as a diagram writes it ('Robot.q[0:3]'), or ''."""
    drv = drivers.get((name, port))
    return "" if drv is None else f"{drv[0]}.{drv[1]}{index_text(drv[2])}"
