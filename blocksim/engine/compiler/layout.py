"""Pass 6, layout: one signal buffer and one state vector for the whole diagram, a view per
output, and every block bound to its views.

Input: `Built`, the out_shapes of pass 5, the drivers of pass 3, the nodes of pass 4.
Output: `Layout`. Every computed output is a slice of `signals`; an output that aliases a
state is a view of the state buffer; an input *is* its driver's view (no copy). Each block
gets its slices of the continuous state `xbuf` (and derivative `dxbuf`) and of the discrete
state `xdbuf`, and the hybrid blocks their views of the indicator buffer `zbuf`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...language.expr import ExprError


@dataclass
class Layout:
    sizes: dict  # (block, output port) -> (start, size) in signals: the computed outputs
    signals: np.ndarray
    views: dict  # (block, output port) -> view
    slices: dict  # block name -> (continuous slice, discrete slice)
    x0: np.ndarray
    xd0: np.ndarray
    xbuf: np.ndarray
    dxbuf: np.ndarray
    xdbuf: np.ndarray
    zbuf: np.ndarray = None
    zdirs: np.ndarray = None
    hybrid: tuple = ()  # (block, slice of zbuf), in the order the handlers run
    rates: tuple = ()  # (input view, du array) of every input a hybrid block watches
    dubuf: np.ndarray = None  # every du array is a view of it


def lay_out(built, out_shapes, drivers, nodes, refused):
    """The buffers of the signals, states and indicators, every block bound to its views;
    a block whose behaviour's texts cannot be made into its methods (ExprError) is given
    to `refused(name, error, stage)`."""
    sizes = {}
    total = 0
    for name, (_, outs) in built.ports.items():
        for port in outs.values():
            if not port.aliased:
                size = math.prod(out_shapes[(name, port.name)])
                sizes[(name, port.name)] = (total, size)
                total += size
    signals = np.zeros(total)
    xc, xd = initial_states(built.blocks)
    slices, nc, nd = {}, 0, 0
    for name, c, d in zip(built.blocks, xc, xd):
        slices[name] = (slice(nc, nc + c.size), slice(nd, nd + d.size))
        nc += c.size
        nd += d.size
    x0, xd0 = joined(xc), joined(xd)
    xbuf, dxbuf, xdbuf = x0.copy(), np.zeros_like(x0), xd0.copy()
    views = {}
    for name, (_, outs) in built.ports.items():
        cs, ds = slices[name]
        for port in outs.values():
            shape = out_shapes[(name, port.name)]
            if port.state is not None:
                base = xbuf[cs] if port.state is True else xbuf[cs][port.state]
                views[(name, port.name)] = base.reshape(shape)
            elif port.dstate is not None:
                base = xdbuf[ds] if port.dstate is True else xdbuf[ds][port.dstate]
                views[(name, port.name)] = base.reshape(shape)
            else:
                start, size = sizes[(name, port.name)]
                views[(name, port.name)] = signals[start:start + size].reshape(shape)
    layout = Layout(sizes, signals, views, slices, x0, xd0, xbuf, dxbuf, xdbuf)
    lay_out_indicators(layout, built.blocks, nodes)
    lay_out_rates(layout, built, drivers)
    bind_blocks(layout, built, drivers, refused)
    return layout


def lay_out_indicators(layout, blocks, nodes):
    """One buffer for every block's zero-crossing indicators; each block gets its view `z`.
    Handlers run in dataflow order: blocks whose outputs are all state (an integrator)
    first, the others in the order their first output is computed."""
    first = {}
    for k, node in enumerate(nodes):
        first.setdefault(node.block.name, k)
    dirs, entries, total = [], [], 0
    # sorted() is stable: blocks of equal rank keep their declaration order
    for name in sorted(blocks, key=lambda b: first.get(b, -1)):
        block = blocks[name]
        d = block.zero_crossings()
        if d is None:
            continue
        d = np.asarray(d, dtype=np.int8).ravel()
        entries.append((block, slice(total, total + d.size)))
        dirs.append(d)
        total += d.size
    layout.zbuf = np.zeros(total)
    layout.zdirs = np.concatenate(dirs) if dirs else np.zeros(0, dtype=np.int8)
    for block, sl in entries:
        block.z = layout.zbuf[sl]
    layout.hybrid = tuple(entries)


def lay_out_rates(layout, built, drivers):
    """Each hybrid block that watches the rate of change of inputs (`rates`) gets `du`, one
    array per named input, of its shape, which the simulator fills before the block's
    `indicator` and `crossing` are called; they are views of one buffer, `dubuf` (compiled
    code reads them there)."""
    watched = []
    for block, _ in layout.hybrid:
        names = tuple(getattr(block, "rates", ()))
        if names:
            ins = built.ports[block.name][0]
            watched.append((block, [_input_view(drivers, block.name, ins[n], layout.views)
                                    for n in names]))
    views = [v for _, vs in watched for v in vs]
    sizes = [1 if v is None else int(np.size(v)) for v in views]
    layout.dubuf = np.zeros(sum(sizes))
    arrays = iter(layout.dubuf[end - n:end].reshape(np.shape(v))
                  for v, n, end in zip(views, sizes, np.cumsum(sizes)))
    pairs = []
    for block, vs in watched:
        block.du = tuple(next(arrays) for _ in vs)
        pairs += [(v, du) for v, du in zip(vs, block.du) if v is not None]
    layout.rates = tuple(pairs)


def bind_blocks(layout, built, drivers, refused):
    """Give every block its views: inputs are their drivers' views, outputs and states are
    slices of the shared buffers."""
    sizes, views, signals = layout.sizes, layout.views, layout.signals
    for name, block in built.blocks.items():
        ins, outs = built.ports[name]
        own = [sizes[(name, p)] for p in outs if (name, p) in sizes]
        if own:  # the block's computed outputs, consecutive in port order
            block.y_flat = signals[own[0][0]:own[-1][0] + own[-1][1]]
        u = tuple(_input_view(drivers, name, p, views) for p in ins.values())
        y = tuple(views[(name, p)] for p in outs)
        cs, ds = layout.slices[name]
        try:
            block.bind(u, y, layout.xbuf[cs], layout.dxbuf[cs], layout.xdbuf[ds])
        except ExprError as e:  # its behaviour's texts: its author's mistake, named
            refused(name, e, "in its behaviour")


def _input_view(drivers, name, port, views):
    drv = drivers.get((name, port.name))
    if drv is None:
        if port.default is None:  # the block supplies the value itself (e.g. table's t)
            return None
        shape = tuple(port.shape) if port.shape is not None else ()
        view = np.full(shape, float(port.default))
        view.flags.writeable = False
        return view
    return indexed(views[(drv[0], drv[1])], drv[2])


def indexed(view, index):
    """A *view* of element `index` (0-d) or slice `index` (start, stop) of a vector view;
    plain integer indexing would return a copy, frozen at compile time."""
    if index is None:
        return view
    if isinstance(index, int):
        i = index % view.shape[0]
        return view[i:i + 1].reshape(())
    return view[slice(*index)]


def _flat(x):
    return np.zeros(0) if x is None else np.asarray(x, dtype=float).ravel().copy()


def initial_states(blocks):
    """([continuous], [discrete]): every block's flat initial states, in block order."""
    states = [(_flat(b.continuous_state()), _flat(b.discrete_state())) for b in blocks.values()]
    return [c for c, _ in states], [d for _, d in states]


def joined(parts):
    return np.concatenate(parts) if parts else np.zeros(0)
