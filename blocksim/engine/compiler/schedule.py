"""Pass 4, schedule: the output computations in a deterministic dataflow order, and their
groups (pass 7, after the layout knows the states).

`order_nodes` input: `Built` (blocks, ports), the drivers of pass 3, the problems list;
output: the nodes in dataflow order and node_of, (block, output port) -> Node. An algebraic
loop (a cycle through direct-feedthrough ports) is reported port by port.
`classify` sets each node's group: constant (computed once), discrete (at its block's sample
hits, or, for a stateless block fed only by one sample time's outputs and constants, at
those hits: Simulink's inherited sample time) or continuous (at every evaluation).
"""
from __future__ import annotations

from ...block import ALL, CONSTANT, Sample
from .graph import topological_order
from .model import Node


def order_nodes(built, drivers, problems):
    nodes, node_of = [], {}
    for name, block in built.blocks.items():
        ins, outs = built.ports[name]
        calcs = {}
        for port in outs.values():
            if port.aliased:
                continue
            calcs.setdefault(port.calc, []).append(port)
        for calc, ports in calcs.items():
            deps = set()
            for port in ports:
                deps.update(ins if port.feedthrough == ALL else port.feedthrough)
            node = Node(block, calc, [p.name for p in ports], tuple(d for d in ins if d in deps))
            node.order = len(nodes)
            nodes.append(node)
            for p in ports:
                node_of[(name, p.name)] = node
    edges = {}  # (driver node, consumer node) -> (driver port, consumer port, wire location)
    for node in nodes:
        for inp in node.inputs:
            drv = drivers.get((node.block.name, inp))
            if drv is None:
                continue
            src = node_of.get((drv[0], drv[1]))
            if src is not None:
                edges[(src.order, node.order)] = (f"{drv[0]}.{drv[1]}",
                                                  f"{node.block.name}.{inp}", drv[3])
    order = topological_order(len(nodes), edges)
    if order is None:
        _report_loops(edges, problems)
        problems.check()
    return [nodes[i] for i in order], node_of


def _report_loops(edges, problems):
    """One error per algebraic loop, printing the cycle port by port. networkx finds the
    strongly connected components and a cycle in each; it is imported only here, on the
    error path, because its import costs more than compiling most diagrams."""
    import networkx as nx
    graph = nx.DiGraph(list(edges))
    for comp in nx.strongly_connected_components(graph):
        if len(comp) == 1 and not graph.has_edge(*(2 * tuple(comp))):
            continue
        cycle = nx.find_cycle(graph.subgraph(comp))
        steps = [edges[edge[:2]] for edge in cycle]
        problems.add(steps[0][2].error(
            "algebraic loop (a cycle through direct-feedthrough ports):\n    "
            + "\n    ".join(f"{src} -> {dst}" for src, dst, _ in steps),
            hint="insert a unit_delay or zoh (or a block with state) in the loop, "
                 "or check the blocks' feedthrough"))


def classify(nodes, built, drivers, node_of, slices):
    """Constant nodes are computed once; discrete ones at their hits; the rest always. A
    stateless block that does not read the time and is fed only by constants is constant;
    fed only by constants and the outputs of discrete nodes of one sample time, it inherits
    that sample time (its outputs change only at those hits, in dataflow order after them)."""
    for node in nodes:
        block = node.block
        name = block.name
        if block.sample == CONSTANT:
            node.group = "constant"
            continue
        if isinstance(block.sample, Sample):
            node.group, node.sample = "discrete", block.sample
            continue
        cs, ds = slices[name]
        stateless = cs.stop == cs.start and ds.stop == ds.start
        if stateless and not block.time_dependent and not block.stops:
            fed_by = [drivers.get((name, i)) for i in built.ports[name][0]]
            srcs = [node_of.get((d[0], d[1])) for d in fed_by if d is not None]
            if any(s is None for s in srcs):  # fed by a state: continuous
                continue
            samples = {s.sample for s in srcs if s.group == "discrete"}
            if all(s.group in ("constant", "discrete") for s in srcs) and len(samples) <= 1:
                node.group = "discrete" if samples else "constant"
                node.sample = next(iter(samples), None)
