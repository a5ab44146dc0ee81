"""Wires of a placed level of a drawing (see draw_layout): orthogonal routes, columns, output.

Between two layers every net that changes height gets its own vertical track; feedback nets
leave their source to the right, run down to a channel of their own under the boxes, left
to the gap before each target's layer and up into it. The tracks of a gap are ordered for
few crossings (and never two wires on one line); the columns then widen to fit the tracks and
the shape labels beside the output ports, and every wire becomes segments, arrowheads at the
input ports and dots where a wire branches. An expanded subsystem's own drawing is moved
into its frame and joined to the frame's ports. Boxes at given positions (a `layout:`) stay
where they are: a gap's tracks share the room the boxes leave, a feedback net runs back just
below the columns it spans, and ends within STRAIGHT of one height are joined straight.
Each wire's own way from its source to its input is kept too (`Drawing.paths`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

GAP_MIN = 34  # horizontal space between columns
TRACK = 7  # between vertical wire tracks
LEAD = 8  # space before the first track
ARROW = 6  # arrowhead length
TAIL = ARROW + 8  # space after the last track
CHANNEL = 8  # between feedback channels under the diagram
MARGIN = 10
FRAME_PAD = 10
LABEL_PAD = 2
TOP_LEAD = 5  # the step of the heights above a box at which wires run to its top edge


def top_leads(n):
    """The heights (from the box's top, negative: above) at which the wires into n ports on
    its top edge run to them: the port further right higher, so that no wire crosses the
    drop of another into its port."""
    return [-TOP_LEAD * (k + 1) for k in range(n)]
CONTROL_GAP = 4  # between a frame's control port and its label
OVERLAP = 100  # cost of two wires running on one line, against 1 for a crossing
NEAR = TRACK / 2  # two wires' parallel runs closer than this read as one line
STRAIGHT = 1.0  # ends at given positions this close in height are joined without a jog


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
    control_xs: list = field(default_factory=list)  # the control ports on the top edge


@dataclass
class Drawing:
    width: float
    height: float
    boxes: list = field(default_factory=list)
    segments: list = field(default_factory=list)  # (x1, y1, x2, y2)
    arrows: list = field(default_factory=list)  # tips (x, y), pointing right
    arrows_down: list = field(default_factory=list)  # tips (x, y) on top edges, pointing down
    dots: list = field(default_factory=list)  # branch points (x, y)
    labels: list = field(default_factory=list)  # (x, y_bottom, text): shapes on wires
    frame_titles: list = field(default_factory=list)  # (PlacedBox of the frame, x, y_top)
    # each wire's own route from its source port to its input port, [(x, y), ...], by
    # (source key, source port, destination key, destination port); this level's wires only
    paths: dict = field(default_factory=dict)
    origin: tuple = (0.0, 0.0)  # where (0, 0) lies in the diagram's layout coordinates

    def moved(self, dx, dy):
        return Drawing(
            self.width, self.height,
            [PlacedBox(b.box, b.x + dx, b.y + dy, b.w, b.h, [y + dy for y in b.in_ys],
                       [y + dy for y in b.out_ys], b.depth, [x + dx for x in b.control_xs])
             for b in self.boxes],
            [(x1 + dx, y1 + dy, x2 + dx, y2 + dy) for x1, y1, x2, y2 in self.segments],
            [(x + dx, y + dy) for x, y in self.arrows],
            [(x + dx, y + dy) for x, y in self.arrows_down],
            [(x + dx, y + dy) for x, y in self.dots],
            [(x + dx, y + dy, t) for x, y, t in self.labels],
            [(f, x + dx, y + dy) for f, x, y in self.frame_titles],
            {k: [(x + dx, y + dy) for x, y in p] for k, p in self.paths.items()},
            (self.origin[0] - dx, self.origin[1] - dy))


def route(level):
    """The Drawing of a placed level (draw_layout._Level), in points from (0, 0)."""
    router = _Router(level)
    router.route()
    return router.drawing()


class _Router:
    def __init__(self, level):
        self.level = level

    def route(self):
        elems = self.level.elems
        bottom = max((e.y + e.h for e in elems.values()), default=0.0)
        feedback = [i for i, n in enumerate(self.level.nets) if n.feedback]
        span = {i: elems[self.level.nets[i].src].layer - min(elems[t].layer for t, _ in self.level.nets[i].targets)
                for i in feedback}
        order = sorted(feedback, key=lambda i: (span[i], self.level.port_y(
            self.level.nets[i].src, self.level.nets[i].port, "out")))
        if self.level.fixed:
            self.local_channels(order)
        else:
            for rank, i in enumerate(order):
                self.level.nets[i].channel = bottom + FRAME_PAD + rank * CHANNEL
        channels = [self.level.nets[i].channel for i in feedback]
        self.bottom = max([bottom, *channels])
        # track items per gap (gap g lies right of layer g; -1 is the left margin)
        self.items = {g: [] for g in range(-1, self.level.nlayers)}
        for i, net in enumerate(self.level.nets):
            if net.feedback:
                self.feedback_items(i, net)
        for k, gap in enumerate(self.level.links):
            by_net = {}
            for l, lp, r, rp, i in gap:
                left = self.level.port_y(l, lp, "out")
                by_net.setdefault(i, (left, []))[1].append(self.level.port_y(r, rp, "in"))
            straight = STRAIGHT if self.level.fixed else 0.01
            for i, (left, rights) in by_net.items():
                if any(abs(y - left) > straight for y in rights):
                    self.items[k].append(_Item(i, [left], rights, min(left, *rights),
                                               max(left, *rights)))
        for g, items in self.items.items():
            self.items[g] = _order_tracks(items, self.level.nets)
        self.place_columns()

    def local_channels(self, order):
        """Boxes at given positions: each feedback net runs back just below the boxes of the
        columns it spans (not below the whole diagram), CHANNEL apart from the channels it
        shares columns with."""
        elems, nets = self.level.elems, self.level.nets
        lows = [max((elems[k].y + elems[k].h for k in layer if elems[k].box is not None),
                    default=0.0) for layer in self.level.layers]
        placed = []  # (first layer, last layer, height)
        for i in order:
            net = nets[i]
            first = min(elems[t].layer for t, _ in net.targets)
            last = elems[net.src].layer
            y = max(lows[first:last + 1]) + FRAME_PAD
            near = sorted(h for a, b, h in placed if a <= last and first <= b)
            for h in near:
                if abs(h - y) < CHANNEL - 0.01:
                    y = h + CHANNEL
            net.channel = y
            placed.append((first, last, y))

    def feedback_items(self, i, net):
        src_layer = self.level.elems[net.src].layer
        y0 = self.level.port_y(net.src, net.port, "out")
        self.items[src_layer].append(_Item(i, [y0, net.channel], [], y0, net.channel, "down"))
        by_layer = {}
        for t, p in net.targets:
            by_layer.setdefault(self.level.elems[t].layer, []).append(self.level.port_y(t, p, "in"))
        leftmost = min(by_layer)
        for layer, ys in by_layer.items():
            left = [net.channel] if layer != leftmost else []
            self.items[layer - 1].append(_Item(i, left, ys + [net.channel], min(ys), net.channel, "up"))

    def place_columns(self):
        if self.level.fixed:
            return self.fixed_columns()
        widths = [max((self.level.elems[k].w for k in layer), default=0.0) for layer in self.level.layers]
        lead = {g: LEAD for g in self.items}
        tail = {g: TAIL for g in self.items}
        for net in self.level.nets:
            if net.label and not net.index:
                e = self.level.elems[net.src]
                w, _ = self.level.metrics.label(net.label)
                over = (e.w - widths[e.layer]) / 2 + LABEL_PAD + w + 4
                lead[e.layer] = max(lead[e.layer], over)
            if net.index:  # the index (and shape) written before each target's arrow
                w, _ = self.level.metrics.label(_index_label(net))
                for t, _ in net.targets:
                    e = self.level.elems[t]
                    over = (e.w - widths[e.layer]) / 2 + ARROW + 2 * LABEL_PAD + w + 4
                    tail[e.layer - 1] = max(tail[e.layer - 1], over)
        gap_w = {}
        for g, items in self.items.items():
            if g == -1:
                gap_w[g] = MARGIN + (len(items) * TRACK + tail[g] if items else 0)
            elif g == self.level.nlayers - 1:
                gap_w[g] = (lead[g] + len(items) * TRACK if items else max(lead[g] - LEAD, 0)) + MARGIN
            else:
                gap_w[g] = max(GAP_MIN, lead[g] + len(items) * TRACK + tail[g])
        x = gap_w[-1]
        self.col_x, self.col_w = [], widths
        for k, layer in enumerate(self.level.layers):
            self.col_x.append(x)
            for key in layer:
                e = self.level.elems[key]
                e.x = x + (widths[k] - e.w) / 2
            x += widths[k] + gap_w[k]
        self.width = x
        self.gap_left = {g: (0.0 if g == -1 else self.col_x[g] + widths[g]) for g in self.items}
        self.track_x = {}
        for g, items in self.items.items():
            start = self.gap_left[g] + (MARGIN if g == -1 else lead[g])
            for n, item in enumerate(items):
                self.track_x[(g, item.net, item.kind)] = start + (n + 0.5) * TRACK

    def fixed_columns(self):
        """Columns where the boxes stand (a layout's positions): each gap's tracks spread
        over the room the boxes leave, TRACK apart where it fits, closer where it does not."""
        level = self.level
        boxes = [[level.elems[k] for k in layer if level.elems[k].box is not None]
                 for layer in level.layers]
        self.col_x = [min(e.x for e in col) for col in boxes]
        self.col_w = [max(e.x + e.w for e in col) - x for col, x in zip(boxes, self.col_x)]
        for k, layer in enumerate(level.layers):
            for key in layer:
                if level.elems[key].box is None:
                    level.elems[key].x = self.col_x[k] + self.col_w[k] / 2
        last = level.nlayers - 1
        self.gap_left = {g: (self.col_x[g] + self.col_w[g] if g >= 0 else
                             self.col_x[0] - TAIL - len(items) * TRACK - MARGIN)
                         for g, items in self.items.items()}
        self.track_x = {}
        for g, items in self.items.items():
            if g in (-1, last):
                start, pitch = self.gap_left[g] + (MARGIN if g == -1 else LEAD), TRACK
            else:
                room = self.col_x[g + 1] - self.gap_left[g]
                pitch = min(TRACK, room / (len(items) + 1))
                start = self.gap_left[g] + (room - len(items) * pitch) / 2
            for n, item in enumerate(items):
                self.track_x[(g, item.net, item.kind)] = start + (n + 0.5) * pitch
        self.width = (self.col_x[last] + self.col_w[last] + LEAD + len(self.items[last]) * TRACK
                      + MARGIN)

    # -- output -----------------------------------------------------------------------------
    def drawing(self):
        d = Drawing(self.width, self.bottom + MARGIN)
        signal_segments = {}

        def seg(i, x1, y1, x2, y2):
            net = self.level.nets[i]
            signal_segments.setdefault((net.src, net.port, net.index), []).append(
                (x1, y1, x2, y2))

        ends = {}  # (net, target key, port) -> where the wire meets its arrowhead

        def into(i, key, port):
            e = self.level.elems[key]
            y = self.level.port_y(key, port, "in")
            if e.box is None:
                return e.x, y
            top = port - (len(e.box.inputs) - len(e.box.controls))
            if top >= 0:  # a control port on the top edge: along above it, then down
                cx = e.x + e.control_xs[top]
                seg(i, e.x, y, cx, y)
                seg(i, cx, y, cx, e.y - ARROW)
                d.arrows_down.append((cx, e.y))
                return e.x, y
            d.arrows.append((e.x, y))
            ends[(i, key, port)] = (e.x - ARROW, y)
            net = self.level.nets[i]
            if net.index:  # which elements of its source this wire carries
                text = _index_label(net)
                w, _ = self.level.metrics.label(text)
                d.labels.append((e.x - ARROW - LABEL_PAD - w, y - LABEL_PAD, text))
            return e.x - ARROW, y

        for i, net in enumerate(self.level.nets):
            src = self.level.elems[net.src]
            y0 = self.level.port_y(net.src, net.port, "out")
            if net.feedback:
                layer = src.layer
                tx = self.track_x[(layer, i, "down")]
                seg(i, src.x + src.w, y0, tx, y0)
                seg(i, tx, y0, tx, net.channel)
                ups = sorted({self.level.elems[t].layer for t, _ in net.targets})
                x_left = self.track_x[(ups[0] - 1, i, "up")]
                seg(i, x_left, net.channel, tx, net.channel)
                for layer in ups:
                    ux = self.track_x[(layer - 1, i, "up")]
                    ys = []
                    for t, p in net.targets:
                        if self.level.elems[t].layer == layer:
                            x, y = into(i, t, p)
                            seg(i, ux, y, x, y)
                            ys.append(y)
                    seg(i, ux, min(ys), ux, net.channel)
                continue
            end = max(self.level.elems[t].layer for t, _ in net.targets)
            for k in range(src.layer, end):
                if k == src.layer:
                    left_x, left_y = src.x + src.w, y0
                else:
                    dummy = self.level.elems[("dummy", i, k)]
                    seg(i, self.col_x[k], dummy.y, self.col_x[k] + self.col_w[k], dummy.y)
                    left_x, left_y = self.col_x[k] + self.col_w[k], dummy.y
                rights = [into(i, t, p) for t, p in net.targets if self.level.elems[t].layer == k + 1]
                if k + 1 < end:
                    rights.append((self.col_x[k + 1], self.level.elems[("dummy", i, k + 1)].y))
                tx = self.track_x.get((k, i, "forward"))
                if tx is None:  # straight on, at the target's height (within STRAIGHT)
                    for x, y in rights:
                        if abs(y - left_y) > 0.01:
                            seg(i, left_x, left_y, left_x, y)
                        seg(i, left_x, y, x, y)
                    continue
                seg(i, left_x, left_y, tx, left_y)
                ys = [y for _, y in rights] + [left_y]
                seg(i, tx, min(ys), tx, max(ys))
                for x, y in rights:
                    seg(i, tx, y, x, y)
        labelled = set()
        for net in self.level.nets:
            if net.label and not net.index and (net.src, net.port) not in labelled:
                labelled.add((net.src, net.port))
                e = self.level.elems[net.src]
                d.labels.append((e.x + e.w + LABEL_PAD, self.level.port_y(net.src, net.port, "out")
                                 - LABEL_PAD, net.label))
        for segments in signal_segments.values():
            d.segments.extend(segments)
            d.dots.extend(_branch_points(segments))
        for (i, key, port), (x, y) in ends.items():
            net = self.level.nets[i]
            src = self.level.elems[net.src]
            start = (src.x + src.w, self.level.port_y(net.src, net.port, "out"))
            segments = signal_segments[(net.src, net.port, net.index)]
            d.paths[(net.src, net.port, key, port)] = _path(segments, start, (x, y)) + [
                (x + ARROW, y)]
        for key in self.level.graph.boxes:
            e = self.level.elems[key]
            placed = PlacedBox(e.box, e.x, e.y, e.w, e.h, [e.y + y for y in e.in_ys],
                               [e.y + y for y in e.out_ys],
                               control_xs=[e.x + x for x in e.control_xs])
            d.boxes.append(placed)
            if e.inner is not None:
                self.add_frame(d, e, placed)
        return _normalised(d, self.level.metrics) if self.level.fixed else d

    def add_frame(self, d, e, placed):
        inner = e.inner.moved(e.x + FRAME_PAD, e.y + e.title_h + FRAME_PAD)
        d.frame_titles.append((placed, e.x + FRAME_PAD, e.y + FRAME_PAD / 2))
        used = {net.port for net in self.level.nets if net.src == e.key}
        for b in inner.boxes:
            b.depth += 1
            if b.box.key == f"{e.key}:in:{b.box.name}":  # this frame's own ports
                d.segments.append((e.x, b.out_ys[0], b.x, b.out_ys[0]))
            elif b.box.key == f"{e.key}:out:{b.box.name}" and \
                    e.box.outputs.index(b.box.name) in used:  # an unused output ends there
                d.segments.append((b.x + b.w, b.in_ys[0], e.x + e.w, b.in_ys[0]))
        d.boxes.extend(inner.boxes)
        d.segments.extend(inner.segments)
        d.arrows.extend(inner.arrows)
        d.arrows_down.extend(inner.arrows_down)
        d.dots.extend(inner.dots)
        d.labels.extend(inner.labels)
        d.frame_titles.extend(inner.frame_titles)


def _normalised(d, metrics):
    """A drawing of boxes at given positions moved to start at (MARGIN, MARGIN), its size
    fitted to what it holds; `origin` says where it was."""
    xs = [x for b in d.boxes for x in (b.x, b.x + b.w)]
    ys = [y for b in d.boxes for y in (b.y, b.y + b.h)]
    for x1, y1, x2, y2 in d.segments:
        xs += [x1, x2]
        ys += [y1, y2]
    for x, y, text in d.labels:
        w, h = metrics.label(text)
        xs += [x, x + w]
        ys += [y - h, y]
    x0, y0 = min(xs) - MARGIN, min(ys) - MARGIN
    moved = d.moved(-x0, -y0)
    moved.width, moved.height = max(xs) - x0 + MARGIN, max(ys) - y0 + MARGIN
    return moved


def _path(segments, start, end):
    """The points of the way from `start` to `end` along one signal's segments (a tree
    whose branches meet at segment ends), corners only."""
    def key(p):
        return (round(p[0], 2), round(p[1], 2))
    points = {key(p): p for x1, y1, x2, y2 in segments for p in ((x1, y1), (x2, y2))}
    links = {k: set() for k in points}
    for x1, y1, x2, y2 in segments:  # each segment joins the points that lie on it, in turn
        on = sorted((k for k, (x, y) in points.items()
                     if min(x1, x2) - 0.01 <= x <= max(x1, x2) + 0.01
                     and min(y1, y2) - 0.01 <= y <= max(y1, y2) + 0.01
                     and abs((x2 - x1) * (y - y1) - (y2 - y1) * (x - x1)) < 0.01),
                    key=lambda k: (k[0] - x1) ** 2 + (k[1] - y1) ** 2)
        for a, b in zip(on, on[1:]):
            links[a].add(b)
            links[b].add(a)
    came = {key(start): None}
    queue = [key(start)]
    for k in queue:
        for n in sorted(links.get(k, ())):
            if n not in came:
                came[n] = k
                queue.append(n)
    if key(end) not in came:  # not joined (cannot happen for a routed wire): a straight line
        return [start, end]
    way, k = [], key(end)
    while k is not None:
        way.append(points.get(k, start))
        k = came[k]
    way.reverse()
    corners = [way[0]] + [b for a, b, c in zip(way, way[1:], way[2:])
                          if abs((b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0])) > 0.01]
    return corners + [way[-1]] if len(way) > 1 else corners


def _index_label(net):
    """'[0]', '[1:3] (2,)': the elements a wire takes from its source, and their shape."""
    return f"{net.index} {net.label}".strip()


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
    attached on the right every track after it (one signal's tracks count too, except where
    the segment meets the other track at a branch); segments of two wires on one line, or too
    close to tell apart, cost more than any crossing. Local search from a sorted start, moving
    one track at a time."""
    def crossings(a, b):  # a left of b
        same = (nets[a.net].src, nets[a.net].port) == (nets[b.net].src, nets[b.net].port)

        def joins(y, item):  # one signal's segment meets the other track where it attaches
            return same and any(abs(y - z) < 0.01 for z in item.left + item.right)
        n = sum(1 for y in a.right if b.top < y < b.bottom and not joins(y, b))
        n += sum(1 for y in b.left if a.top < y < a.bottom and not joins(y, a))
        if same:
            return n
        # a's right and b's left segment at (nearly) one height would read as one line: the
        # closer, the worse (two runs 3 apart are told apart more easily than two on one line)
        return n + sum(OVERLAP * (1 - abs(y - z) / NEAR) for y in a.right for z in b.left
                       if abs(y - z) < NEAR)

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
