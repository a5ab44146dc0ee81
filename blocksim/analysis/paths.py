"""Which blocks lie between the linearisation's inputs and outputs: those an input reaches
along the wires (loop openings cut) and that reach an output. Only they are linearised, as
Simulink does: the others add states no input moves or no output sees."""
from __future__ import annotations

from ..errors import DiagramError
from .signals import consumers


def path_blocks(model, inputs, outputs, opened):
    """The names of the blocks on a path from an input to an output; DiagramError for an
    input that reaches no output (e.g. a perturbation of a signal that only feeds a sink)."""
    cut = {end for signal in opened for end in signal.ends}
    after, before = {}, {}
    for (dst, port), driver in model.drivers.items():
        if (dst, port) not in cut:
            after.setdefault(driver[0], set()).add(dst)
            before.setdefault(dst, set()).add(driver[0])
    sources = [_sources(model, signal) for signal in outputs]
    upstream = reach(set().union(*sources) if sources else set(), before)
    on_path = set()
    for signal in inputs:
        seeds = _seeds(model, signal, cut)
        downstream = reach(seeds, after)
        if not (downstream & upstream or any(_direct(model, signal, o, cut) for o in outputs)):
            raise DiagramError(
                f"--input {signal.text}: the perturbation reaches none of the outputs "
                f"({', '.join(o.text for o in outputs)})", file="--input",
                hint="perturb a signal on a path to an output (a signal that feeds only "
                     "sinks or other outputs' blocks moves nothing); check the loop openings")
        on_path |= downstream & upstream
    return on_path


def check_loops(model, opened):
    """DiagramError for a loop opening whose wire lies in no loop: cutting it would open
    nothing, and the margins printed would not be a loop's."""
    after = {}
    for (dst, _), driver in model.drivers.items():
        after.setdefault(driver[0], set()).add(dst)
    for signal in opened:
        wires = [(model.drivers[end][0], end) for end in signal.ends if end in model.drivers]
        if not any(source in reach({block}, after) for source, (block, _) in wires):
            source, (block, port) = wires[0]
            raise DiagramError(
                f"--open {signal.text}: the wire {source} -> {block}.{port} is in no loop "
                f"(nothing from {block} leads back to {source}), so there is no loop to open",
                file="--open", hint="open a wire of a feedback loop, e.g. the one into the "
                                    "sum that compares the measurement with the reference")


def _seeds(model, signal, cut):
    """The blocks a perturbation enters."""
    if signal.output:
        (block, port), = signal.ends
        return {dst for dst, dport, _ in consumers(model, block, port) if (dst, dport) not in cut}
    return {block for block, _ in signal.ends}


def _sources(model, signal):
    """The blocks whose outputs a measurement reads (an input port reads its driver)."""
    if signal.output:
        return {signal.ends[0][0]}
    driver = model.drivers.get(signal.ends[0])
    return {driver[0]} if driver else set()


def _direct(model, inp, out, cut):
    """Whether a perturbation shows in a measurement without passing through a block: at
    the same output, at an input it feeds, or at the same (uncut) input."""
    if inp.output:
        driver = model.drivers.get(out.ends[0])
        return out.ends == inp.ends or (not out.output and driver is not None
                                        and driver[:2] == inp.ends[0])
    return not out.output and out.ends[0] in inp.ends and out.ends[0] not in cut


def reach(start, edges):
    """The nodes reached from `start` (included) along `edges` ({node: successors})."""
    seen, todo = set(start), list(start)
    while todo:
        for nxt in edges.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen
