"""Pass 7b, conditions: what runs the blocks of enabled and triggered subsystems
(engine/conditional.py has the blocks' side and the run-time gates).

`decisions_first` (after the schedule): the nodes an enable's decision needs, then the rest,
so that at an event instant the blocks inside an enabled subsystem see the decision made
there (unless the enable signal itself depends on them).

`gate_nodes` (after classify): every block inside a conditional subsystem gets a `Gate`: the
flags (indices into the discrete state) of the enabled subsystems around it, below the
nearest triggered one, which owns it (its nodes are then in no plan: the triggered
subsystem runs them). Nodes get their gate and group: an enable's decision is computed at
event instants only ("event"), as is a triggered subsystem's block; the blocks a trigger
owns are "triggered". Blocks a trigger runs must be discrete (no continuous states, no
sample period of their own); a discrete block without a period must be inside one.

`attach` (after binding, for every model made from the compilation): each conditional block
gets the views of its subsystem's states and a triggered one its run, the calls in order.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...block import TRIGGERED, Sample, overrides
from .graph import topological_order
from ..conditional import (Conditional, EnabledSubsystem, TriggeredSubsystem, flags_of,
                           gated)


@dataclass(frozen=True)
class Gate:
    """A block inside conditional subsystems: the enabled subsystems' flags (indices into the
    discrete state, outermost first) that must all be > 0 for it to run, and the triggered
    subsystem that runs it (None: the simulator does)."""
    flags: tuple
    owner: str | None = None


def decisions_first(nodes, drivers, node_of):
    """`nodes` (dataflow order) with the enables' decisions and every node they need first,
    each enable's decision before what it gates among them (an enable inside another is
    decided after the outer one, as is the signal it reads inside it)."""
    decides = {n.block.name: n for n in nodes
               if isinstance(n.block, EnabledSubsystem) and n.calc == "decide"}
    if not decides:
        return nodes
    cone, stack = [], list(decides.values())
    seen = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        cone.append(node)
        stack += _sources(node, drivers, node_of)
    position = {id(n): k for k, n in enumerate(nodes)}
    cone.sort(key=lambda n: position[id(n)])
    at = {id(n): k for k, n in enumerate(cone)}
    edges = {(at[id(src)], at[id(n)]) for n in cone for src in _sources(n, drivers, node_of)}
    edges |= {(at[id(decides[c])], at[id(n)]) for n in cone for c in _enclosing(n.block.name)
              if c in decides}
    order = topological_order(len(cone), edges)
    first = [cone[k] for k in order] if order is not None else cone
    return first + [n for n in nodes if id(n) not in seen]


def _sources(node, drivers, node_of):
    """The nodes computing a node's same-instant inputs."""
    found = []
    for port in node.inputs:
        drv = drivers.get((node.block.name, port))
        src = node_of.get((drv[0], drv[1])) if drv else None
        if src is not None:
            found.append(src)
    return found


def gate_nodes(spec, built, nodes, slices, problems):
    """Gates of the blocks inside conditional subsystems ({name: Gate}); sets the nodes'
    gates and groups; reports blocks that cannot run where they are."""
    controls = {name: b for name, b in built.blocks.items() if isinstance(b, Conditional)}
    gates = {}
    for name, block in built.blocks.items():
        around = [c for c in _enclosing(name) if c in controls]
        triggers = [c for c in around if isinstance(controls[c], TriggeredSubsystem)]
        owner = triggers[-1] if triggers else None
        below = around[around.index(owner) + 1:] if owner else around
        if around:
            gates[name] = Gate(tuple(slices[c][1].start for c in below), owner)
        _check(spec, name, block, owner, slices, problems)
    for node in nodes:
        block = node.block
        gate = gates.get(block.name, Gate(()))
        node.gate = gate.flags if node.group != "constant" else ()  # computed once, always
        if isinstance(block, EnabledSubsystem):
            if node.calc == "decide":
                node.group = "event"
            else:  # its outputs, while it is enabled
                node.gate += (slices[block.name][1].start,)
        elif isinstance(block, TriggeredSubsystem):
            node.group = "event"
        if gate.owner is not None and node.group != "constant":
            node.group = "triggered"
    return gates


def _enclosing(name):
    """The flat names of the subsystems around a block, outermost first ('A', 'A/B')."""
    parts = name.split("/")
    return ["/".join(parts[:k]) for k in range(1, len(parts))]


def _check(spec, name, block, owner, slices, problems):
    loc = spec.blocks[name].loc
    if owner is None:
        if block.sample == TRIGGERED:
            problems.add(loc.error(
                "'period' is required: a discrete block runs without one only inside a "
                "triggered subsystem (whose trigger's edges are then its hits)",
                block=name, param="period"))
        return
    why = ("has a sample period of its own" if isinstance(block.sample, Sample) else
           "has continuous states" if slices[name][0].stop > slices[name][0].start else
           "keeps a history of its input" if block.keeps_history else
           "watches the rate of its inputs" if block.rates else None)
    if why:
        problems.add(loc.error(
            f"{why}: inside triggered subsystem '{owner}' a block runs only at the trigger's "
            "edges", block=name,
            hint="leave out 'period' (the trigger's edges are the hits)"
            if isinstance(block.sample, Sample) else
            "a triggered subsystem holds discrete blocks (unit_delay, zoh, discrete "
            "systems without a period) and blocks without states"))


def attach(model):
    """Give each conditional block of `model` its subsystem's states and, if triggered, its
    run (the calls of the blocks it owns, in dataflow order, then their updates)."""
    m = model
    for block in m.blocks:
        if not isinstance(block, Conditional):
            continue
        (a, b), (c, d) = state_ranges(m, block.name)
        states = (m.xbuf[a:b], m.x0[a:b], m.dxbuf[a:b], m.xdbuf[c:d], m.xd0[c:d])
        plan = tuple(gated(_modes(owned) if what == "modes" else getattr(owned, what),
                           flags_of(m, flags)) for what, owned, flags in run_entries(m, block.name))
        block.attach(states, plan)


def state_ranges(model, name):
    """((start, stop) in the continuous state, (start, stop) in the discrete state) of the
    blocks inside subsystem `name`: one run each, as they are declared together."""
    inside = [model.state_slices[b.name] for b in model.blocks
              if b.name.startswith(name + "/")]
    return tuple((min(s[k].start for s in inside), max(s[k].stop for s in inside))
                 if inside else (0, 0) for k in (0, 1))


def run_entries(model, trigger):
    """A triggered subsystem's run as (what, block, flags): the nodes it owns in dataflow
    order (what: the node's calc; "modes" first for a block with modes, which decides them
    from its inputs before its first output), then the owned blocks' "update"s; flags: the
    indices of the enabled subsystems' flags around the block inside the trigger."""
    gates, entries, decided = model.gates, [], set()
    for node in model.nodes:
        gate = gates.get(node.block.name)
        if gate is None or gate.owner != trigger or node.group != "triggered":
            continue
        block = node.block
        if block.z is not None and block.name not in decided:
            decided.add(block.name)
            entries.append(("modes", block, node.gate))
        entries.append((node.calc, block, node.gate))
    for block in model.blocks:
        gate = gates.get(block.name)
        if gate is not None and gate.owner == trigger and block.sample == TRIGGERED \
                and overrides(block, "update"):
            entries.append(("update", block, gate.flags))
    return entries


def _modes(block):
    """A block with modes deciding them from its inputs, as at the start of a run."""
    none = np.zeros(block.z.size, np.int8)
    return lambda t: block.crossing(t, none)
