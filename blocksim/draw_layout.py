"""Layered left-to-right layout of a `draw_graph.Graph`, in points, y pointing down.

The classic Sugiyama steps, each kept simple and deterministic:

1. Dataflow order. Boxes are taken one at a time, a box only once every box it needs at the
   same instant (dependency wires, from the compiled schedule) is placed; among those, one
   whose inputs are all placed comes first (sinks last), then the first in the reverse postorder of a depth-first search from the sources, which follows
   the signal from the inputs round each loop (so a loop's forward path reads left to right,
   as a Simulink user draws it). Wires that point back in this order are the feedback wires:
   they are drawn leaving to the right, running back below the diagram and entering from
   the left.
2. Layers: the longest path from the sources (a feedback wire counts reversed); boxes without
   outputs (sinks) go to the last layer.
3. Wires spanning several layers get one dummy point per layer they cross, shared by all the
   wires of one output (a net), so long wires never cross boxes.
4. Order within layers: barycenter sweeps with port positions, then adjacent swaps, keeping
   the order with the fewest crossings.
5. Vertical positions: each layer is placed by weighted isotonic regression (pool adjacent
   violators) towards the ports it connects to, keeping the order and the spacing; sweeps
   alternate left-right and right-left.
6. Routing is orthogonal: between two layers every net that changes height gets its own
   vertical track, tracks ordered to reduce crossings; columns widen to fit the tracks and
   the shape labels next to the output ports.

Expanded subsystems are laid out first (recursively) and enter their parent as one box.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

GAP_MIN = 34  # horizontal space between columns
TRACK = 7  # between vertical wire tracks
LEAD = 8  # space before the first track
ARROW = 6  # arrowhead length
TAIL = ARROW + 8  # space after the last track
NODE_GAP = 16  # vertical space between boxes in a column
DUMMY_GAP = 8  # between a long wire's pass and its neighbours in a column
CHANNEL = 8  # between feedback channels under the diagram
MARGIN = 10
FRAME_PAD = 10
LABEL_PAD = 2
OVERLAP = 100  # cost of two wires running on one line, against 1 for a crossing
JOG = 30  # wires whose ends differ by less than this in height are straightened if possible


@dataclass
class Metrics:
    """What the layout needs from the renderer: a box's size and port offsets from its top
    (`box(box) -> (w, h, in_ys, out_ys)`), a wire label's size (`label(text) -> (w, h)`),
    a frame title's size (`title(box) -> (w, h)`)."""
    box: object
    label: object
    title: object


@dataclass
class PlacedBox:
    box: object  # draw_graph.Box
    x: float
    y: float
    w: float
    h: float
    in_ys: list  # absolute port heights
    out_ys: list
    depth: int = 0  # frames nesting level


@dataclass
class Drawing:
    width: float
    height: float
    boxes: list = field(default_factory=list)
    segments: list = field(default_factory=list)  # (x1, y1, x2, y2)
    arrows: list = field(default_factory=list)  # tips (x, y), pointing right
    dots: list = field(default_factory=list)  # branch points (x, y)
    labels: list = field(default_factory=list)  # (x, y_bottom, text): shapes on wires
    frame_titles: list = field(default_factory=list)  # (PlacedBox of the frame, x, y_top)

    def moved(self, dx, dy):
        return Drawing(
            self.width, self.height,
            [PlacedBox(b.box, b.x + dx, b.y + dy, b.w, b.h, [y + dy for y in b.in_ys],
                       [y + dy for y in b.out_ys], b.depth) for b in self.boxes],
            [(x1 + dx, y1 + dy, x2 + dx, y2 + dy) for x1, y1, x2, y2 in self.segments],
            [(x + dx, y + dy) for x, y in self.arrows],
            [(x + dx, y + dy) for x, y in self.dots],
            [(x + dx, y + dy, t) for x, y, t in self.labels],
            [(f, x + dx, y + dy) for f, x, y in self.frame_titles])


def layout(graph, metrics):
    """Place `graph` (with its expanded subsystems) and route its wires: a Drawing whose
    coordinates start at (0, 0), in points."""
    return _Level(graph, metrics).run()


# ---- elements of one level ------------------------------------------------------------------
class _Elem:
    """A box, or a dummy point where a long net crosses a layer."""

    def __init__(self, key, layer, w, h, in_ys, out_ys, box=None):
        self.key, self.layer, self.w, self.h = key, layer, w, h
        self.in_ys, self.out_ys, self.box = in_ys, out_ys, box
        self.y = 0.0
        self.x = 0.0
        self.inner = None  # a frame's Drawing (local coordinates)
        self.title_h = 0.0


@dataclass
class _Net:
    """The wires from one output port, in one direction (forward or feedback)."""
    src: str
    port: int
    targets: list  # (box key, port)
    feedback: bool
    label: str
    channel: float = 0.0


class _Level:
    def __init__(self, graph, metrics):
        self.graph = graph
        self.metrics = metrics

    def run(self):
        self.size_boxes()
        self.order = _dataflow_order(self.graph)
        self.assign_layers()
        self.make_nets()
        self.make_dummies()
        self.reduce_crossings()
        self.place_vertically()
        self.straighten()
        top = min((e.y for e in self.elems.values()), default=0.0)
        for e in self.elems.values():
            e.y += MARGIN - top
        self.route()
        return self.drawing()

    # -- 0. sizes ---------------------------------------------------------------------------
    def size_boxes(self):
        self.elems = {}
        for key, box in self.graph.boxes.items():
            if box.inner is not None:
                inner = layout(box.inner, self.metrics)
                tw, th = self.metrics.title(box)
                top = th + FRAME_PAD
                e = _Elem(key, 0, max(inner.width, tw) + 2 * FRAME_PAD,
                          inner.height + top + FRAME_PAD, [], [], box)
                ports = {b.box.key: b for b in inner.boxes}
                e.in_ys = [top + ports[f"{key}:in:{p}"].out_ys[0] for p in box.inputs]
                e.out_ys = [top + ports[f"{key}:out:{p}"].in_ys[0] for p in box.outputs]
                e.inner, e.title_h = inner, th
            else:
                w, h, in_ys, out_ys = self.metrics.box(box)
                e = _Elem(key, 0, w, h, list(in_ys), list(out_ys), box)
            self.elems[key] = e

    # -- 2. layers --------------------------------------------------------------------------
    def assign_layers(self):
        rank = {k: i for i, k in enumerate(self.order)}
        self.rank = rank
        neighbours = {k: set() for k in self.order}
        for w in self.graph.wires:
            if w.src != w.dst:
                neighbours[w.src].add(w.dst)
                neighbours[w.dst].add(w.src)
        layer = {}
        for k in self.order:
            earlier = [layer[n] + 1 for n in neighbours[k] if rank[n] < rank[k]]
            layer[k] = max(earlier, default=0)
        last = max(layer.values(), default=0)
        for k, box in self.graph.boxes.items():
            if not box.outputs and box.inputs:
                layer[k] = last
        self.nlayers = last + 1
        for k, e in self.elems.items():
            e.layer = layer[k]

    # -- 3. nets and dummies ----------------------------------------------------------------
    def make_nets(self):
        nets = {}
        for w in self.graph.wires:
            feedback = self.rank[w.src] >= self.rank[w.dst]
            net = nets.setdefault((w.src, w.src_port, feedback),
                                  _Net(w.src, w.src_port, [], feedback, w.label))
            net.targets.append((w.dst, w.dst_port))
        self.nets = list(nets.values())

    def make_dummies(self):
        """Dummy points on the layers a forward net crosses; per layer gap the links
        (left element, left port, right element, right port, net index)."""
        self.layers = [[] for _ in range(self.nlayers)]
        for k in self.order:
            self.layers[self.elems[k].layer].append(k)
        self.links = [[] for _ in range(max(self.nlayers - 1, 0))]
        for i, net in enumerate(self.nets):
            if net.feedback:
                continue
            start = self.elems[net.src].layer
            end = max(self.elems[t].layer for t, _ in net.targets)
            for k in range(start + 1, end):
                key = ("dummy", i, k)
                self.elems[key] = _Elem(key, k, 0.0, 0.0, [0.0], [0.0])
                self.layers[k].append(key)
            for k in range(start, end):
                left = (net.src, net.port) if k == start else (("dummy", i, k), 0)
                rights = [(t, p) for t, p in net.targets if self.elems[t].layer == k + 1]
                if k + 1 < end:
                    rights.append((("dummy", i, k + 1), 0))
                for right in rights:
                    self.links[k].append((*left, *right, i))

    # -- 4. order within layers -------------------------------------------------------------
    def frac(self, key, port, side):
        e = self.elems[key]
        ys = e.out_ys if side == "out" else e.in_ys
        return ys[port] / e.h if e.h else 0.5

    def crossings(self, pos, gap):
        ends = [(pos[l] + self.frac(l, lp, "out"), pos[r] + self.frac(r, rp, "in"))
                for l, lp, r, rp, _ in self.links[gap]]
        count = 0
        for i in range(len(ends)):
            a1, b1 = ends[i]
            for j in range(i + 1, len(ends)):
                a2, b2 = ends[j]
                if (a1 - a2) * (b1 - b2) < 0:
                    count += 1
        return count

    def total_crossings(self, pos):
        return sum(self.crossings(pos, g) for g in range(len(self.links)))

    def positions(self):
        return {k: i for layer in self.layers for i, k in enumerate(layer)}

    def reduce_crossings(self):
        best = [list(layer) for layer in self.layers]
        best_count = self.total_crossings(self.positions())
        for sweep in range(8):
            gaps = range(1, self.nlayers) if sweep % 2 == 0 else range(self.nlayers - 2, -1, -1)
            for k in gaps:
                self.sort_layer(k, from_left=sweep % 2 == 0)
            self.transpose()
            count = self.total_crossings(self.positions())
            if count < best_count:
                best, best_count = [list(layer) for layer in self.layers], count
            if best_count == 0:
                break
        self.layers = best
        # a frame's port boxes keep the subsystem's declared order, as on its collapsed box
        written = {k: i for i, k in enumerate(self.graph.boxes)}
        for layer in self.layers:
            for kind in ("inport", "outport"):
                slots = [i for i, k in enumerate(layer) if k in written and self.graph.boxes[k].kind == kind]
                for i, k in zip(slots, sorted((layer[i] for i in slots), key=written.__getitem__)):
                    layer[i] = k

    def sort_layer(self, k, from_left):
        pos = self.positions()
        sums = {}
        for l, lp, r, rp, _ in self.links[k - 1 if from_left else k]:
            if from_left:
                key, value = r, pos[l] + self.frac(l, lp, "out")
            else:
                key, value = l, pos[r] + self.frac(r, rp, "in")
            s = sums.setdefault(key, [0.0, 0])
            s[0] += value
            s[1] += 1
        layer = self.layers[k]
        bary = {key: (sums[key][0] / sums[key][1] if key in sums else pos[key] + 0.5)
                for key in layer}
        layer.sort(key=lambda key: (bary[key], pos[key]))

    def transpose(self):
        """Swap neighbours in a layer while that removes crossings. With u just before v,
        a wire of u and a wire of v on the same side cross when u's other end lies below v's:
        counted from the other ends' positions, which a swap in this layer does not move."""
        for _ in range(4):
            improved = False
            for k, layer in enumerate(self.layers):
                pos = self.positions()
                ends = {key: ([], []) for key in layer}
                if k > 0:
                    for l, lp, r, rp, _ in self.links[k - 1]:
                        ends[r][0].append(pos[l] + self.frac(l, lp, "out"))
                if k < len(self.links):
                    for l, lp, r, rp, _ in self.links[k]:
                        ends[l][1].append(pos[r] + self.frac(r, rp, "in"))

                def cost(u, v):  # crossings between u's and v's wires with u above v
                    return sum(1 for side in (0, 1) for a in ends[u][side] for b in ends[v][side]
                               if a > b)

                for i in range(len(layer) - 1):
                    u, v = layer[i], layer[i + 1]
                    if cost(v, u) < cost(u, v):
                        layer[i], layer[i + 1] = v, u
                        improved = True
            if not improved:
                break

    # -- 5. vertical positions --------------------------------------------------------------
    def separation(self, a, b):
        da, db = self.elems[a].box is None, self.elems[b].box is None
        gap = DUMMY_GAP if (da or db) else NODE_GAP
        return self.elems[a].h + gap

    def place_vertically(self):
        for layer in self.layers:
            y = 0.0
            for key in layer:
                self.elems[key].y = y
                y += self.elems[key].h + NODE_GAP
        attach = {}  # key -> [(other key, other port y offset, own port y offset, weight)]
        for gap in self.links:
            for l, lp, r, rp, _ in gap:
                weight = 4.0 if self.elems[l].box is None and self.elems[r].box is None else 1.0
                el, er = self.elems[l], self.elems[r]
                attach.setdefault(r, []).append((l, el.out_ys[lp], er.in_ys[rp], weight))
                attach.setdefault(l, []).append((r, er.in_ys[rp], el.out_ys[lp], weight))
        order = list(range(self.nlayers))
        for sweep in range(10):
            for k in (order if sweep % 2 == 0 else order[::-1]):
                self.place_layer(self.layers[k], attach)

    def place_layer(self, layer, attach):
        if not layer:
            return
        desired, weights = [], []
        for key in layer:
            links = attach.get(key, [])
            total = sum(w for *_, w in links)
            if total:
                desired.append(sum((self.elems[o].y + oy - own) * w for o, oy, own, w in links) / total)
                weights.append(total)
            else:
                desired.append(self.elems[key].y)
                weights.append(0.01)
        seps = [self.separation(a, b) for a, b in zip(layer, layer[1:])]
        for key, y in zip(layer, _isotonic_place(desired, weights, seps)):
            self.elems[key].y = y

    def straighten(self):
        """Remove small jogs that the least-squares placement leaves: put every long wire's
        dummy points at one height, then, from the smallest jog up, move one end of a wire
        to the other's height where its column has room and it is not aligned already."""
        index = {k: i for layer in self.layers for i, k in enumerate(layer)}

        def bounds(key):
            """The heights `key` may take between its neighbours in its layer."""
            layer, i = self.layers[self.elems[key].layer], index[key]
            lo = (self.elems[layer[i - 1]].y + self.separation(layer[i - 1], key)
                  if i > 0 else -math.inf)
            hi = (self.elems[layer[i + 1]].y - self.separation(key, layer[i + 1])
                  if i + 1 < len(layer) else math.inf)
            return lo - 1e-6, hi + 1e-6

        def room(key, dy):
            lo, hi = bounds(key)
            return lo <= self.elems[key].y + dy <= hi

        fixed = set()
        for i, net in enumerate(self.nets):
            chain = [k for k in self.elems if isinstance(k, tuple) and k[1] == i]
            if not chain:
                continue
            # one height for the whole long wire: the source port's if the columns it
            # crosses allow it, else the allowed height nearest to it
            lo = max(bounds(k)[0] for k in chain)
            hi = min(bounds(k)[1] for k in chain)
            if lo <= hi:
                y = min(max(self.port_y(net.src, net.port, "out"), lo), hi)
                for k in chain:
                    self.elems[k].y = y
                fixed.update(chain)
        jogs = []
        for gap in self.links:
            for l, lp, r, rp, _ in gap:
                jogs.append((abs(self.port_y(l, lp, "out") - self.port_y(r, rp, "in")), l, lp, r, rp))
        for _, l, lp, r, rp in sorted(jogs, key=lambda j: j[0]):
            dy = self.port_y(l, lp, "out") - self.port_y(r, rp, "in")
            if abs(dy) < 0.01:
                fixed.update((l, r))
            elif abs(dy) < JOG:
                if r not in fixed and room(r, dy):
                    self.elems[r].y += dy
                    fixed.update((l, r))
                elif l not in fixed and room(l, -dy):
                    self.elems[l].y -= dy
                    fixed.update((l, r))

    # -- 6. routing -------------------------------------------------------------------------
    def port_y(self, key, port, side):
        e = self.elems[key]
        return e.y + (e.out_ys if side == "out" else e.in_ys)[port]

    def route(self):
        elems = self.elems
        bottom = max((e.y + e.h for e in elems.values()), default=0.0)
        feedback = [i for i, n in enumerate(self.nets) if n.feedback]
        span = {i: elems[self.nets[i].src].layer - min(elems[t].layer for t, _ in self.nets[i].targets)
                for i in feedback}
        for rank, i in enumerate(sorted(feedback, key=lambda i: (span[i], self.port_y(
                self.nets[i].src, self.nets[i].port, "out")))):
            self.nets[i].channel = bottom + FRAME_PAD + rank * CHANNEL
        self.bottom = bottom + FRAME_PAD + max(len(feedback) - 1, 0) * CHANNEL if feedback else bottom
        # track items per gap (gap g lies right of layer g; -1 is the left margin)
        self.items = {g: [] for g in range(-1, self.nlayers)}
        for i, net in enumerate(self.nets):
            if net.feedback:
                self.feedback_items(i, net)
        for k, gap in enumerate(self.links):
            by_net = {}
            for l, lp, r, rp, i in gap:
                left = self.port_y(l, lp, "out")
                by_net.setdefault(i, (left, []))[1].append(self.port_y(r, rp, "in"))
            for i, (left, rights) in by_net.items():
                if any(abs(y - left) > 0.01 for y in rights):
                    self.items[k].append(_Item(i, [left], rights, min(left, *rights),
                                               max(left, *rights)))
        for g, items in self.items.items():
            self.items[g] = _order_tracks(items, self.nets)
        self.place_columns()

    def feedback_items(self, i, net):
        src_layer = self.elems[net.src].layer
        y0 = self.port_y(net.src, net.port, "out")
        self.items[src_layer].append(_Item(i, [y0, net.channel], [], y0, net.channel, "down"))
        by_layer = {}
        for t, p in net.targets:
            by_layer.setdefault(self.elems[t].layer, []).append(self.port_y(t, p, "in"))
        leftmost = min(by_layer)
        for layer, ys in by_layer.items():
            left = [net.channel] if layer != leftmost else []
            self.items[layer - 1].append(_Item(i, left, ys + [net.channel], min(ys), net.channel, "up"))

    def place_columns(self):
        widths = [max((self.elems[k].w for k in layer), default=0.0) for layer in self.layers]
        lead = {g: LEAD for g in self.items}
        for net in self.nets:
            if net.label:
                e = self.elems[net.src]
                w, _ = self.metrics.label(net.label)
                over = (e.w - widths[e.layer]) / 2 + LABEL_PAD + w + 4
                lead[e.layer] = max(lead[e.layer], over)
        gap_w = {}
        for g, items in self.items.items():
            if g == -1:
                gap_w[g] = MARGIN + (len(items) * TRACK + TAIL if items else 0)
            elif g == self.nlayers - 1:
                gap_w[g] = (lead[g] + len(items) * TRACK if items else max(lead[g] - LEAD, 0)) + MARGIN
            else:
                gap_w[g] = max(GAP_MIN, lead[g] + len(items) * TRACK + TAIL)
        x = gap_w[-1]
        self.col_x, self.col_w = [], widths
        for k, layer in enumerate(self.layers):
            self.col_x.append(x)
            for key in layer:
                e = self.elems[key]
                e.x = x + (widths[k] - e.w) / 2
            x += widths[k] + gap_w[k]
        self.width = x
        self.gap_left = {g: (0.0 if g == -1 else self.col_x[g] + widths[g]) for g in self.items}
        self.track_x = {}
        for g, items in self.items.items():
            start = self.gap_left[g] + (MARGIN if g == -1 else lead[g])
            for n, item in enumerate(items):
                self.track_x[(g, item.net, item.kind)] = start + (n + 0.5) * TRACK

    # -- output -----------------------------------------------------------------------------
    def drawing(self):
        d = Drawing(self.width, self.bottom + MARGIN)
        signal_segments = {}

        def seg(i, x1, y1, x2, y2):
            net = self.nets[i]
            signal_segments.setdefault((net.src, net.port), []).append((x1, y1, x2, y2))

        def into(i, key, port):
            e = self.elems[key]
            y = self.port_y(key, port, "in")
            if e.box is None:
                return e.x, y
            d.arrows.append((e.x, y))
            return e.x - ARROW, y

        for i, net in enumerate(self.nets):
            src = self.elems[net.src]
            y0 = self.port_y(net.src, net.port, "out")
            if net.feedback:
                layer = src.layer
                tx = self.track_x[(layer, i, "down")]
                seg(i, src.x + src.w, y0, tx, y0)
                seg(i, tx, y0, tx, net.channel)
                ups = sorted({self.elems[t].layer for t, _ in net.targets})
                x_left = self.track_x[(ups[0] - 1, i, "up")]
                seg(i, x_left, net.channel, tx, net.channel)
                for layer in ups:
                    ux = self.track_x[(layer - 1, i, "up")]
                    ys = []
                    for t, p in net.targets:
                        if self.elems[t].layer == layer:
                            x, y = into(i, t, p)
                            seg(i, ux, y, x, y)
                            ys.append(y)
                    seg(i, ux, min(ys), ux, net.channel)
                continue
            end = max(self.elems[t].layer for t, _ in net.targets)
            for k in range(src.layer, end):
                if k == src.layer:
                    left_x, left_y = src.x + src.w, y0
                else:
                    dummy = self.elems[("dummy", i, k)]
                    seg(i, self.col_x[k], dummy.y, self.col_x[k] + self.col_w[k], dummy.y)
                    left_x, left_y = self.col_x[k] + self.col_w[k], dummy.y
                rights = [into(i, t, p) for t, p in net.targets if self.elems[t].layer == k + 1]
                if k + 1 < end:
                    rights.append((self.col_x[k + 1], self.elems[("dummy", i, k + 1)].y))
                tx = self.track_x.get((k, i, "forward"))
                if tx is None:
                    for x, y in rights:
                        seg(i, left_x, left_y, x, y)
                    continue
                seg(i, left_x, left_y, tx, left_y)
                ys = [y for _, y in rights] + [left_y]
                seg(i, tx, min(ys), tx, max(ys))
                for x, y in rights:
                    seg(i, tx, y, x, y)
        labelled = set()
        for net in self.nets:
            if net.label and (net.src, net.port) not in labelled:
                labelled.add((net.src, net.port))
                e = self.elems[net.src]
                d.labels.append((e.x + e.w + LABEL_PAD, self.port_y(net.src, net.port, "out")
                                 - LABEL_PAD, net.label))
        for segments in signal_segments.values():
            d.segments.extend(segments)
            d.dots.extend(_branch_points(segments))
        for key in self.graph.boxes:
            e = self.elems[key]
            placed = PlacedBox(e.box, e.x, e.y, e.w, e.h, [e.y + y for y in e.in_ys],
                               [e.y + y for y in e.out_ys])
            d.boxes.append(placed)
            if e.inner is not None:
                self.add_frame(d, e, placed)
        return d

    def add_frame(self, d, e, placed):
        inner = e.inner.moved(e.x + FRAME_PAD, e.y + e.title_h + FRAME_PAD)
        d.frame_titles.append((placed, e.x + FRAME_PAD, e.y + FRAME_PAD / 2))
        for b in inner.boxes:
            b.depth += 1
            if b.box.key == f"{e.key}:in:{b.box.name}":  # this frame's own ports
                d.segments.append((e.x, b.out_ys[0], b.x, b.out_ys[0]))
            elif b.box.key == f"{e.key}:out:{b.box.name}":
                d.segments.append((b.x + b.w, b.in_ys[0], e.x + e.w, b.in_ys[0]))
        d.boxes.extend(inner.boxes)
        d.segments.extend(inner.segments)
        d.arrows.extend(inner.arrows)
        d.dots.extend(inner.dots)
        d.labels.extend(inner.labels)
        d.frame_titles.extend(inner.frame_titles)


@dataclass
class _Item:
    """A vertical wire track in one gap: where horizontal segments attach on its left and
    right, and the height it spans."""
    net: int
    left: list
    right: list
    top: float
    bottom: float
    kind: str = "forward"


def _order_tracks(items, nets):
    """Order the tracks of one gap (left to right) for few crossings: a horizontal segment
    attached on an item's left crosses every track before it that spans its height, one
    attached on the right every track after it; segments of two wires on one line cost more
    than any crossing. Local search from a sorted start, moving one track at a time."""
    def crossings(a, b):  # a left of b
        if (nets[a.net].src, nets[a.net].port) == (nets[b.net].src, nets[b.net].port):
            return 0
        n = sum(1 for y in a.right if b.top < y < b.bottom)
        n += sum(1 for y in b.left if a.top < y < a.bottom)
        # a's right and b's left segment at one height would run on top of each other
        return n + OVERLAP * sum(1 for y in a.right for z in b.left if abs(y - z) < 0.5)

    items = sorted(items, key=lambda it: (it.kind != "up", it.bottom, it.top))
    n = len(items)
    cost = [[crossings(a, b) if a is not b else 0 for b in items] for a in items]
    order = list(range(n))
    improved = True
    while improved:  # move one track at a time to its best place while that helps
        improved = False
        for item in range(n):
            rest = [i for i in order if i != item]
            # cost of putting `item` at position p: items before it pay cost[i][item], after cost[item][i]
            after = sum(cost[item][i] for i in rest)
            best_p, best, here = 0, after, after
            for p, i in enumerate(rest, 1):
                here += cost[i][item] - cost[item][i]
                if here < best - 1e-9:
                    best_p, best = p, here
            current = order.index(item)
            current_cost = (sum(cost[i][item] for i in order[:current])
                            + sum(cost[item][i] for i in order[current + 1:]))
            if best < current_cost - 1e-9:
                rest.insert(best_p, item)
                order = rest
                improved = True
    return [items[i] for i in order]


def _isotonic_place(desired, weights, seps):
    """Heights y (top of each element, in order) closest to `desired` in weighted least
    squares with y[i+1] >= y[i] + seps[i]: with offsets c, z = y - c is a non-decreasing
    fit of desired - c, found by pooling adjacent violators."""
    c = [0.0]
    for s in seps:
        c.append(c[-1] + s)
    blocks = []  # [value, weight, count]
    for d, w, ci in zip(desired, weights, c):
        blocks.append([d - ci, w, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            v2, w2, n2 = blocks.pop()
            v1, w1, n1 = blocks.pop()
            blocks.append([(v1 * w1 + v2 * w2) / (w1 + w2), w1 + w2, n1 + n2])
    z = [v for v, _, n in blocks for _ in range(n)]
    return [zi + ci for zi, ci in zip(z, c)]


def _branch_points(segments):
    """Where one signal's wire branches: a segment end inside another segment of the same
    signal, or a point where three or more segment ends meet."""
    def key(x, y):
        return (round(x, 2), round(y, 2))

    ends = {}
    for x1, y1, x2, y2 in segments:
        for p in ((x1, y1), (x2, y2)):
            ends[key(*p)] = ends.get(key(*p), 0) + 1
    dots = set()
    for p, count in ends.items():
        if count >= 3:
            dots.add(p)
            continue
        x, y = p
        for x1, y1, x2, y2 in segments:
            if abs(y1 - y2) < 0.01 and abs(y - y1) < 0.01 and min(x1, x2) + 0.01 < x < max(x1, x2) - 0.01:
                dots.add(p)
                break
            if abs(x1 - x2) < 0.01 and abs(x - x1) < 0.01 and min(y1, y2) + 0.01 < y < max(y1, y2) - 0.01:
                dots.add(p)
                break
    return sorted(dots)


def _dataflow_order(graph):
    """Boxes in dataflow order (see the module docstring, step 1)."""
    keys = list(graph.boxes)
    needs = {k: set() for k in keys}
    preds = {k: set() for k in keys}
    for w in graph.wires:
        if w.src != w.dst:
            preds[w.dst].add(w.src)
            if w.dependency:
                needs[w.dst].add(w.src)
    preference = {k: i for i, k in enumerate(_depth_first_order(graph))}
    placed, order = set(), []
    while len(order) < len(keys):
        rest = [k for k in keys if k not in placed]
        ready = [k for k in rest if needs[k] <= placed] or rest
        k = min(ready, key=lambda k: (not preds[k] <= placed, not graph.boxes[k].outputs,
                                      preference[k]))
        placed.add(k)
        order.append(k)
    return order


def _depth_first_order(graph):
    """Reverse postorder of a depth-first search from the sources (in file order, wires
    followed in file order): every wire that does not close a cycle points forward in it."""
    succs = {k: [] for k in graph.boxes}
    has_input = set()
    for w in graph.wires:
        succs[w.src].append(w.dst)
        if w.src != w.dst:
            has_input.add(w.dst)
    roots = [k for k in graph.boxes if k not in has_input] + list(graph.boxes)
    seen, post = set(), []
    for root in roots:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(succs[root]))]
        while stack:
            key, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                post.append(key)
            elif child not in seen:
                seen.add(child)
                stack.append((child, iter(succs[child])))
    return post[::-1]
