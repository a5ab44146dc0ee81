"""Signals named on the command line of `trim` and `linearize`: `BLOCK.PORT[i:j]` (an output
port, or an input port: the signal entering it), a subsystem's port, a `record:` name, and
a block's state `BLOCK.x[i]` / `BLOCK.xd[i]`. Unknown names are errors that list what
exists (did you mean)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..engine.compiler.layout import indexed
from ..engine.compiler.shapes import index_error
from ..errors import DiagramError
from ..language.buses import Bundle
from ..language.diagram import (Endpoint, Loc, index_text, parse_endpoint, resolve_signal,
                                suggest, through_inputs, through_outputs)


@dataclass(frozen=True)
class Signal:
    """A signal of a compiled model: an output port (`output`, one end) or the input ports
    one signal enters (a subsystem's input may feed several), with the element or slice
    `index` taken (None: all of it). `text` is the name as written."""
    text: str
    output: bool
    ends: tuple  # ((block, port), ...)
    index: object
    shape: tuple

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=int))

    def flat(self, full_shape):
        """The flat indices of the selected elements in the whole port signal."""
        every = np.arange(int(np.prod(full_shape, dtype=int))).reshape(full_shape)
        return np.atleast_1d(indexed(every, self.index)).ravel()

    def element_names(self, full_shape):
        """One name per selected element: the text itself for a scalar; else NAME[i]
        (NAME[i, j] for a matrix), i the element's place in the signal the text names (a
        written index `Robot.q[0:3]` counts in the whole port: Robot.q[0], ...)."""
        if not self.shape:
            return [self.text]
        if "[" in self.text:
            return [f"{self.text.split('[', 1)[0]}[{k}]" for k in self.flat(full_shape)]
        return [f"{self.text}[{', '.join(map(str, place))}]"
                for place in np.ndindex(*self.shape)]


@dataclass(frozen=True)
class StatePart:
    """Elements of a block's continuous (`x`) or discrete (`xd`) state."""
    text: str
    block: str
    discrete: bool
    indices: np.ndarray


def resolve(model, text, option, *, want=None):
    """The Signal `text` names in `model`; `option` ('--input') locates errors. `want`:
    'input' for a loop opening (an input port, wired), None for any signal."""
    loc = Loc(option)
    if not isinstance(text, str):
        raise DiagramError(f"expected a signal name such as 'Block.port', got {text!r}",
                           file=option)
    ep = parse_endpoint(text.strip(), loc)
    spec = model.spec
    if ep.block in spec.buses:  # an element a bus_select picks: the signal it carries
        signal = resolve_signal(spec, ep)
        if isinstance(signal, Bundle):
            raise loc.error(f"'{text}' is a bus: name one of its elements (an output of a "
                            "bus_select)")
        if want == "input":
            raise loc.error(f"'{text}' is a bus element: a loop opening cuts the wire into a "
                            "block's input port")
        return dataclasses.replace(resolve(model, signal.text(), option), text=text)
    if ep.block not in model.ports and ep.block not in spec.subsystems:
        if ep.port is None and ep.index is None and ep.block in spec.record and want is None:
            recorded = spec.record[ep.block].raw
            signal = resolve(model, recorded, option)
            return Signal(ep.block, signal.output, signal.ends, signal.index, signal.shape)
        names = list(model.ports) + list(spec.subsystems) + (
            list(spec.record) if want is None else [])
        raise loc.error(f"unknown block '{ep.block}'{suggest(ep.block, names)}",
                        hint=_listing(model, want))
    ins, outs = _port_names(model, ep.block)
    if want == "input" and ep.port in outs and ep.port not in ins:
        inner = through_outputs(spec.subsystems, Endpoint(ep.block, ep.port, None, loc))
        fed = consumers(model, inner.block, inner.port or next(iter(model.ports[inner.block][1])))
        raise loc.error(f"'{ep.block}.{ep.port}' is an output: a loop opening cuts the wire "
                        "into an input port", hint="the wires from it go to "
                        + (", ".join(signal_text(b, p) for b, p, _ in fed) or "no input"))
    port = _port(ep, ins, outs, want, loc)
    if port in outs and want != "input":
        inner = through_outputs(spec.subsystems, Endpoint(ep.block, port, ep.index, loc))
        ends = ((inner.block, inner.port or next(iter(model.ports[inner.block][1]))),)
        return _selected(model, text, True, ends, inner.index, loc)
    inner = through_inputs(spec.subsystems, Endpoint(ep.block, port, None, loc))
    ends = tuple((e.block, e.port or next(iter(model.ports[e.block][0]))) for e in inner)
    if want == "input":
        unwired = [f"{b}.{p}" for b, p in ends if (b, p) not in model.drivers]
        if unwired:
            raise loc.error(f"'{text}': nothing is wired to {', '.join(unwired)}: there is no "
                            "wire to cut")
    return _selected(model, text, False, ends, ep.index, loc)


def _port_names(model, block):
    """(input names, output names) of a block or a subsystem."""
    sub = model.spec.subsystems.get(block)
    if sub is not None:
        return list(sub.inputs), list(sub.outputs)
    ins, outs = model.ports[block]
    return list(ins), list(outs)


def _port(ep, ins, outs, want, loc):
    """The port an endpoint names: an output before an input of the same name, the lone
    output (the lone input for a loop opening) when none is named; else an error with the
    names that are there."""
    if ep.port is None:
        lone = ins if want == "input" else outs
        if len(lone) != 1:
            side = "input" if want == "input" else "output"
            raise loc.error(f"block '{ep.block}' has {len(lone)} {side}s "
                            f"({', '.join(lone) or 'none'}): name one, e.g. "
                            f"'{ep.block}.{next(iter(lone), 'port')}'")
        return lone[0]
    if ep.port in outs or ep.port in ins:
        return ep.port
    raise loc.error(f"block '{ep.block}' has no port '{ep.port}'"
                    f"{suggest(ep.port, outs + ins)} (outputs: {', '.join(outs) or 'none'}; "
                    f"inputs: {', '.join(ins) or 'none'})")


def _selected(model, text, output, ends, index, loc):
    block, port = ends[0]
    full = _full_shape(model, block, port, output)
    if index is not None:
        error = index_error(full, index, f"{block}.{port}")
        if error is not None:
            raise loc.error(error)
    shape = np.shape(indexed(np.zeros(full), index))
    return Signal(text, output, ends, index, shape)


def _full_shape(model, block, port, output):
    """The shape of a whole port signal."""
    if output:
        return model.outputs[(block, port)].shape
    owner = next(b for b in model.blocks if b.name == block)
    view = owner.u[list(model.ports[block][0]).index(port)]
    return () if view is None else view.shape


def full_shape(model, signal):
    """The shape of the whole port signal a Signal selects from."""
    block, port = signal.ends[0]
    return _full_shape(model, block, port, signal.output)


def _listing(model, want):
    sample = ", ".join(list(model.ports)[:8]) + (", ..." if len(model.ports) > 8 else "")
    if want == "input":
        return f"name an input port as BLOCK.PORT; blocks: {sample}"
    return f"name a signal as BLOCK.PORT or a record name; blocks: {sample}"


def resolve_state(model, text, option):
    """The state elements `BLOCK.x[i:j]` (continuous) or `BLOCK.xd[...]` (discrete) name, or
    None when `text` names no state (a port named x comes first)."""
    loc = Loc(option)
    ep = parse_endpoint(text.strip(), loc)
    if ep.port not in ("x", "xd") or ep.block not in model.state_slices:
        return None
    ins, outs = model.ports[ep.block]
    if ep.port in ins or ep.port in outs:
        return None
    cs, ds = model.state_slices[ep.block]
    part = ds if ep.port == "xd" else cs
    n = part.stop - part.start
    if n == 0:
        raise loc.error(f"block '{ep.block}' has no {'discrete' if ep.port == 'xd' else 'continuous'} "
                        "state")
    if ep.index is not None:
        error = index_error((n,), ep.index, text.split("[", 1)[0])
        if error is not None:
            raise loc.error(error)
    indices = np.atleast_1d(indexed(np.arange(n), ep.index)).ravel()
    return StatePart(text, ep.block, ep.port == "xd", indices)


def consumers(model, block, port):
    """The input ports an output feeds: [(block, port, index)], in wiring order."""
    return [(dst, dport, drv[2]) for (dst, dport), drv in model.drivers.items()
            if drv[0] == block and drv[1] == port]


def signal_text(block, port, index=None):
    return f"{block}.{port}{index_text(index)}"
