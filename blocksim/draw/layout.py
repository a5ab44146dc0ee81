"""Layered left-to-right layout of a `draw_graph.Graph`, in points, y pointing down.

The classic Sugiyama steps, each kept simple and deterministic:

1. Dataflow order. Boxes are taken one at a time, a box only once every box it needs at the
   same instant (dependency wires, from the compiled schedule) is placed; among those, one
   whose inputs are all placed comes first (sinks last), then the first in the reverse
   postorder of a depth-first search from the sources, which follows the signal from the
   inputs round each loop (so a loop's forward path reads left to right, as a Simulink user
   draws it). Wires that point back in this order are the feedback wires: they are drawn
   leaving to the right, running back below the diagram and entering from the left.
2. Layers: the longest path from the sources (a feedback wire counts reversed); boxes without
   outputs (sinks) go to the last layer.
3. Wires spanning several layers get one dummy point per layer they cross, shared by all the
   wires of one output (a net), so long wires never cross boxes.
4. Order within layers: barycenter sweeps with port positions, then adjacent swaps, keeping
   the order with the fewest crossings.
5. Vertical positions: each layer is placed by weighted isotonic regression (pool adjacent
   violators) towards the ports it connects to, keeping the order and the spacing; sweeps
   alternate left-right and right-left. Then small jogs are removed: a long wire's dummy
   points share one height, and a box moves to line up with a wire where its column leaves
   room.
6. Wires are routed by draw_route (orthogonal, a vertical track per net between layers).

Expanded subsystems are laid out first (recursively) and enter their parent as one box.

A level whose boxes carry positions (the diagram's `layout:`, which `blocksim edit` writes)
keeps them instead of steps 2-5, unless it holds an expanded subsystem (a frame is larger
than the box the positions were made for): boxes whose horizontal extents overlap form a
layer, a long wire passes each layer it crosses at a height free of its boxes (the least
climb, few jogs), a feedback wire runs back just below the layers it spans, and the same
router runs its tracks in the gaps the boxes leave. A subsystem's port boxes
without a position stand left (inputs) or right (outputs) of the boxes they are wired to,
other boxes without one in a row below the rest. The drawing is moved to start at (0, 0);
`Drawing.origin` is where that point lies in the layout's coordinates.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .route import CONTROL_GAP, FRAME_PAD, GAP_MIN, MARGIN, route, top_leads

NODE_GAP = 16  # vertical space between boxes in a column
DUMMY_GAP = 8  # between a long wire's pass and its neighbours in a column
JOG = 30  # wires whose ends differ by less than this in height are straightened if possible


@dataclass
class Metrics:
    """What the layout needs from the renderer: a box's size and port offsets from its top
    (`box(box) -> (w, h, in_ys, out_ys)`), a wire label's size (`label(text) -> (w, h)`),
    a frame title's size (`title(box) -> (w, h)`)."""
    box: object
    label: object
    title: object


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
        self.control_xs = []  # a conditional subsystem's control ports on its top edge


@dataclass
class _Net:
    """The wires from one output port that carry the same elements of it (an index such as
    [0] makes a signal of its own), in one direction (forward or feedback)."""
    src: str
    port: int
    targets: list  # (box key, port)
    feedback: bool
    label: str
    channel: float = 0.0
    index: str = ""  # "[0]", "[1:3]": the elements taken, written at each target


class _Level:
    def __init__(self, graph, metrics):
        self.graph = graph
        self.metrics = metrics

    def run(self):
        self.size_boxes()
        self.order = _dataflow_order(self.graph)
        boxes = self.graph.boxes.values()
        self.fixed = (any(b.position is not None for b in boxes)
                      and all(b.inner is None for b in boxes))
        if self.fixed:
            return self.run_fixed()
        self.assign_layers()
        self.make_nets()
        self.make_dummies()
        self.reduce_crossings()
        self.place_vertically()
        self.straighten()
        top = min((e.y for e in self.elems.values()), default=0.0)
        for e in self.elems.values():
            e.y += MARGIN - top
        return route(self)

    # -- 0. sizes ---------------------------------------------------------------------------
    def size_boxes(self):
        self.elems = {}
        for key, box in self.graph.boxes.items():
            if box.inner is not None:
                inner = layout(box.inner, self.metrics)
                tw, th = self.metrics.title(box)
                top = th + FRAME_PAD
                xs, x = [], FRAME_PAD + tw + 2 * CONTROL_GAP  # the controls after the title
                for label in box.controls:
                    xs.append(x)
                    x += self.metrics.label(label)[0] + 3 * CONTROL_GAP
                e = _Elem(key, 0, max(inner.width, tw, x - 2 * FRAME_PAD) + 2 * FRAME_PAD,
                          inner.height + top + FRAME_PAD, [], [], box)
                e.control_xs = xs
                ports = {b.box.key: b for b in inner.boxes}
                side = box.inputs[:len(box.inputs) - len(box.controls)]
                e.in_ys = [top + ports[f"{key}:in:{p}"].out_ys[0] for p in side]
                e.in_ys += top_leads(len(box.controls))  # on the top edge: route.py
                e.out_ys = [top + ports[f"{key}:out:{p}"].in_ys[0] for p in box.outputs]
                e.inner, e.title_h = inner, th
            else:
                w, h, in_ys, out_ys = self.metrics.box(box)
                e = _Elem(key, 0, w, h, list(in_ys), list(out_ys), box)
                n = len(box.controls)
                e.control_xs = [w * (k + 1) / (n + 1) for k in range(n)]
            self.elems[key] = e

    # -- positions given (the diagram's layout) ---------------------------------------------
    def run_fixed(self):
        self.place_given()
        columns = []  # [left, right, keys]: boxes whose horizontal extents overlap
        for k in sorted(self.elems, key=lambda k: self.elems[k].x):
            e = self.elems[k]
            if columns and e.x < columns[-1][1]:
                columns[-1][1] = max(columns[-1][1], e.x + e.w)
                columns[-1][2].append(k)
            else:
                columns.append([e.x, e.x + e.w, [k]])
        for i, (_, _, keys) in enumerate(columns):
            for k in keys:
                self.elems[k].layer = i
        self.nlayers = len(columns)
        self.rank = {k: e.layer for k, e in self.elems.items()}  # a wire not going right is feedback
        self.make_nets()
        self.make_dummies()
        for layer in self.layers:
            layer.sort(key=lambda k: self.elems[k].y)
        self.place_dummies()
        return route(self)

    def place_given(self):
        """Boxes at their positions; those without one placed by the rules above."""
        placed = [e for e in self.elems.values() if e.box.position is not None]
        for e in placed:
            e.x, e.y = e.box.position
        left = min(e.x for e in placed)
        right = max(e.x + e.w for e in placed)
        below = max(e.y + e.h for e in placed) + 2 * NODE_GAP
        heights = {"inport": [], "outport": []}
        for w in self.graph.wires:
            src, dst = self.elems[w.src], self.elems[w.dst]
            if src.box.kind == "inport" and dst.box.position is not None:
                heights["inport"].append((w.src, dst.y + dst.in_ys[w.dst_port]))
            if dst.box.kind == "outport" and src.box.position is not None:
                heights["outport"].append((w.dst, src.y + src.out_ys[w.src_port]))
        for kind, x_of in (("inport", lambda e: left - 2 * GAP_MIN - e.w),
                           ("outport", lambda e: right + 2 * GAP_MIN)):
            ports = [e for e in self.elems.values()
                     if e.box.kind == kind and e.box.position is None]
            wanted = {k: y for k, y in reversed(heights[kind])}
            y = -math.inf
            for e in sorted(ports, key=lambda e: wanted.get(e.key, math.inf)):
                e.x = x_of(e)
                e.y = max(wanted.get(e.key, y + NODE_GAP) - e.h / 2, y)
                y = e.y + e.h + NODE_GAP
        x = left
        for e in self.elems.values():
            if e.box.position is None and e.box.kind not in heights:
                e.x, e.y = x, below
                x += e.w + GAP_MIN

    def place_dummies(self):
        """The heights at which a long wire passes the layers it crosses: free of their
        boxes, with as little climbing and as few jogs as can be (below every box there is
        room)."""
        taken = {k: [(self.elems[b].y - DUMMY_GAP, self.elems[b].y + self.elems[b].h + DUMMY_GAP)
                     for b in layer if self.elems[b].box is not None]
                 for k, layer in enumerate(self.layers)}
        chains = {}
        for key in self.elems:
            if isinstance(key, tuple):
                chains.setdefault(key[1], []).append(key)
        for i, chain in chains.items():
            net = self.nets[i]
            chain.sort(key=lambda k: k[2])
            start = self.port_y(net.src, net.port, "out")
            ends = [self.port_y(t, p, "in") for t, p in net.targets]
            heights = _pass_heights(start, ends, [taken[k[2]] for k in chain])
            for k, y in zip(chain, heights):
                self.elems[k].y = y
                taken[k[2]].append((y - DUMMY_GAP, y + DUMMY_GAP))

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
            net = nets.setdefault((w.src, w.src_port, w.index, feedback),
                                  _Net(w.src, w.src_port, [], feedback, w.label, index=w.index))
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


def _pass_heights(start, ends, taken):
    """A height per layer a long wire crosses, outside that layer's `taken` (top, bottom)
    intervals, from `start` towards the nearest of `ends`: the least total climb, a jog
    costing JOG more. A shortest path over the candidate heights, layer by layer; the
    cheapest arrival from another height, min_j cost[j] + |y_i - y_j|, is one sweep up and
    one down over the sorted heights."""
    ys = sorted({start, *ends, *(y for layer in taken for iv in layer for y in iv)})
    n = len(ys)
    cost = [0.0 if y == start else math.inf for y in ys]  # before the first layer: at start
    back = []  # per layer: each height's height in the layer before
    for layer in taken:
        arrive, came = [math.inf] * n, [-1] * n
        best, arg = math.inf, -1
        for i in range(n):
            if cost[i] - ys[i] < best:
                best, arg = cost[i] - ys[i], i
            arrive[i], came[i] = best + ys[i], arg
        best, arg = math.inf, -1
        for i in reversed(range(n)):
            if cost[i] + ys[i] < best:
                best, arg = cost[i] + ys[i], i
            if best - ys[i] < arrive[i]:
                arrive[i], came[i] = best - ys[i], arg
        new, prev = [math.inf] * n, [-1] * n
        for i, y in enumerate(ys):
            if any(top < y < bottom for top, bottom in layer):
                continue
            if cost[i] <= arrive[i] + JOG:
                new[i], prev[i] = cost[i], i
            else:
                new[i], prev[i] = arrive[i] + JOG, came[i]
        cost = new
        back.append(prev)
    i = min(range(n), key=lambda i: cost[i] + min(abs(ys[i] - e) for e in ends))
    path = []
    for prev in reversed(back):
        path.append(ys[i])
        i = prev[i]
    return path[::-1]


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
