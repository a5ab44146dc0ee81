"""A state chart laid out as nested boxes and labelled arrows, in points, y pointing down
(pure geometry: text sizes come in through a measuring function; render.py draws it).

A block that is a state chart describes itself as a `StateChart` (plain data: the states as
a tree, the transitions as pairs with labels). Each level (the chart, a state with states)
places its states in columns: the initial state first, then by how many transitions among
the level's states it takes to reach each one; a state that holds states is laid out inside
first and enters its level as one box. Parallel regions sit side by side, drawn dashed.
Arrows leave and enter a box on the side facing the other box; one that would cross a box
between its ends rounds under every such box (its level keeps room for it below); several
between the same two boxes are spread apart, a state's transition to itself is a loop above
its box, and a level's initial state gets the dot-and-arrow of a default transition. Labels
go beside their arrow's middle, off the boxes' text, other labels, the curves and the
boxes' borders where a place near it allows.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

PAD = 8.0  # inside a box, around its text and its inner states
GAP_Y = 26.0  # between boxes in a column
GAP_X = 70.0  # between columns, at least (labels widen it)
LABEL_WRAP = 34  # characters of a transition label per line
DOT = 14.0  # the default transition's arrow length
LABEL_ROOM = 14.0  # above a level of inner states


@dataclass
class ChartState:
    name: str
    parent: int  # -1 at the top
    children: list
    initial: bool
    region: bool  # a parallel region (dashed)
    lines: list  # its actions, one per line ("entry: u = 0")


@dataclass
class StateChart:
    title: str
    states: list  # ChartState, a parent before its children
    transitions: list  # (source, target, label)


@dataclass
class Box:
    state: int
    x: float = 0.0
    y: float = 0.0
    w: float = 0.0
    h: float = 0.0
    depth: int = 0
    inner: tuple = (0.0, 0.0)  # where its inner states' level starts, from its corner
    text: tuple = (0.0, 0.0)  # the size of its name and actions, from its corner


@dataclass
class Arrow:
    """A transition: a quadratic Bezier from `start` through control `mid` to `end` (the
    arrowhead at `end`), its label's lines centred at `at`."""
    transition: int
    start: tuple
    mid: tuple
    end: tuple
    label: list
    at: tuple


@dataclass
class ChartDrawing:
    width: float
    height: float
    boxes: list  # Box, outer before inner
    arrows: list  # Arrow
    defaults: list  # (dot x, y, arrow end x, y): default transitions


def wrap(label, width=LABEL_WRAP):
    """A label in lines of about `width` characters, broken at spaces."""
    lines, line = [], ""
    for word in label.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return lines + [line] if line else lines


def layout(chart, measure):
    """The ChartDrawing of `chart`; `measure(text, style) -> (w, h)` with the styles
    'state' (a state's name), 'action' (its lines), 'label' (a transition's label)."""
    return _Layout(chart, measure).run()


class _Layout:
    def __init__(self, chart, measure):
        self.c, self.measure = chart, measure
        self.boxes = {k: Box(k) for k in range(len(chart.states))}
        self.rel = {}  # state -> its place in its level
        self.labels = [wrap(label) for _, _, label in chart.transitions]
        self.label_size = [self._label_size(lines) for lines in self.labels]

    def _label_size(self, lines):
        if not lines:
            return 0.0, 0.0
        sizes = [self.measure(line, "label") for line in lines]
        return max(w for w, _ in sizes), sum(h for _, h in sizes)

    def run(self):
        tops = [k for k, s in enumerate(self.c.states) if s.parent == -1]
        w, h = self.level(tops, -1)
        for k in tops:
            self.position(k, PAD, PAD)
        arrows = self.arrows()
        defaults = self.defaults()
        boxes = sorted(self.boxes.values(), key=lambda b: b.depth)
        xs = [b.x + b.w for b in boxes] + [a.at[0] + self.label_size[a.transition][0] / 2
                                          for a in arrows]
        ys = [b.y + b.h for b in boxes] + [a.at[1] + self.label_size[a.transition][1] / 2
                                          for a in arrows] + [y for a in arrows
                                                              for _, y in _points(a)]
        top = min([0.0] + [a.at[1] - self.label_size[a.transition][1] / 2 for a in arrows]
                  + [y for a in arrows for _, y in _points(a)])
        left = min([0.0] + [a.at[0] - self.label_size[a.transition][0] / 2 for a in arrows]
                   + [d[0] - 4 for d in defaults])
        shift_x, shift_y = PAD - left if left < 0 else 0.0, PAD - top if top < 0 else 0.0
        if shift_x or shift_y:
            for k in tops:
                self.position(k, PAD + shift_x, PAD + shift_y)
            arrows = self.arrows()
            defaults = self.defaults()
        return ChartDrawing(max(xs + [w]) + shift_x + PAD, max(ys + [h]) + shift_y + PAD,
                            boxes, arrows, defaults)

    # -- boxes --------------------------------------------------------------------------------
    def text_size(self, k):
        s = self.c.states[k]
        sizes = [self.measure(s.name, "state")] + [self.measure(line, "action")
                                                   for line in s.lines]
        return max(w for w, _ in sizes), sum(h for _, h in sizes)

    def level(self, kids, parent):
        """Lay out the states `kids` of one level (each box at its place relative to the
        level's origin); returns the level's size."""
        for k in kids:
            self.state(k)
        if not kids:
            return 0.0, 0.0
        parallel = any(self.c.states[k].region for k in kids)
        columns = [[k] for k in kids] if parallel else self.columns(kids)
        x = 0.0
        height = 0.0
        for c, column in enumerate(columns):
            y, width = 0.0, max(self.boxes[k].w for k in column)
            for k in column:
                b = self.boxes[k]
                self.place(k, x + (width - b.w) / 2, y)
                y += b.h + GAP_Y
            height = max(height, y - GAP_Y)
            if c < len(columns) - 1:
                x += width + (PAD * 2 if parallel else self.gap(column, columns[c + 1]))
            else:
                x += width
        return x, height + self.under(columns)

    def under(self, columns):
        """Room below a level for the arrows that round under a column between their ends
        (arrow() sends them 28 pt under the boxes, about, their labels below)."""
        where = {k: c for c, column in enumerate(columns) for k in column}
        level = set(where)
        lows = [self.label_size[n][1] for n, (s, t, _) in enumerate(self.c.transitions)
                if self.lifted(s, level) in level and self.lifted(t, level) in level
                and abs(where[self.lifted(s, level)] - where[self.lifted(t, level)]) > 1]
        return 48.0 + max(lows) if lows else 0.0

    def gap(self, left, right):
        """Room between two columns for the labels of the arrows between them."""
        pair = set(left) | set(right)
        widths = [self.label_size[n][0] for n, (s, t, _) in enumerate(self.c.transitions)
                  if self.lifted(s, pair) in pair and self.lifted(t, pair) in pair
                  and self.lifted(s, pair) != self.lifted(t, pair)]
        return max([GAP_X] + [w + 24 for w in widths])

    def lifted(self, s, level):
        """The ancestor of state s (or s) that lies in `level`, or -1."""
        return next((a for a in self._chain(s) if a in level), -1)

    def _chain(self, s):
        out = []
        while s != -1:
            out.append(s)
            s = self.c.states[s].parent
        return out

    def columns(self, kids):
        """Columns of a level: the initial state first, then by the number of transitions
        among the level's states it takes to reach a state from it."""
        level = set(kids)
        edges = {}
        for s, t, _ in self.c.transitions:
            a, b = self.lifted(s, level), self.lifted(t, level)
            if a in level and b in level and a != b:
                edges.setdefault(a, []).append(b)
        first = next((k for k in kids if self.c.states[k].initial), kids[0])
        rank, queue = {first: 0}, [first]
        while queue:
            a = queue.pop(0)
            for b in edges.get(a, []):
                if b not in rank:
                    rank[b] = rank[a] + 1
                    queue.append(b)
        last = max(rank.values())
        for k in kids:
            if k not in rank:
                last += 1
                rank[k] = last
        columns = {}
        for k in kids:
            columns.setdefault(rank[k], []).append(k)
        return [columns[r] for r in sorted(columns)]

    def state(self, k):
        """Size state k's box (and lay out its inner states)."""
        b = self.boxes[k]
        b.depth = len(self._chain(k)) - 1
        tw, th = self.text_size(k)
        kids = self.c.states[k].children
        iw, ih = self.level(kids, k) if kids else (0.0, 0.0)
        inner_x = PAD + (DOT + 6 if any(self.c.states[c].initial for c in kids) else 0)
        room = LABEL_ROOM if kids else 0.0  # for labels of arrows along the inner states' tops
        b.w = max(tw + 2 * PAD, iw + inner_x + PAD, 60.0)
        level = set(kids)
        below = room if any(  # for labels under arrows between its inner states
            self.lifted(p, level) in level and self.lifted(q, level) in level
            and self.lifted(p, level) != self.lifted(q, level)
            for p, q, _ in self.c.transitions) else 0.0
        b.h = th + 2 * PAD + (ih + PAD + room + below if kids else 0.0)
        b.inner = (inner_x, th + PAD + PAD / 2 + room)
        b.text = (tw + 2 * PAD, th + PAD)

    def place(self, k, x, y):
        self.rel[k] = (x, y)

    def position(self, k, ox, oy):
        """State k's box where its level starts at (ox, oy), its inner states in it."""
        b = self.boxes[k]
        b.x, b.y = ox + self.rel[k][0], oy + self.rel[k][1]
        for c in self.c.states[k].children:
            self.position(c, b.x + b.inner[0], b.y + b.inner[1])

    # -- arrows -------------------------------------------------------------------------------
    def arrows(self):
        """Every transition's arrow, each label moved off the boxes' text, the labels placed
        before it and, where it can, off the arrows' curves and the boxes' borders."""
        taken = [_rect(b.x, b.y, b.text[0], b.text[1]) for b in self.boxes.values()]
        out = [self.arrow(n, s, t) for n, (s, t, _) in enumerate(self.c.transitions)]
        curves = [p for arrow in out for p in _points(arrow, 32)]
        for arrow in out:
            w, h = self.label_size[arrow.transition]
            if w:
                arrow.at = self.free_place(arrow, w, h, taken, curves)
                taken.append(_rect(arrow.at[0] - w / 2, arrow.at[1] - h / 2, w, h))
        return out

    def free_place(self, arrow, w, h, taken, curves):
        """The first place for a w x h label beside the arrow's middle, on either side and
        further out step by step, that overlaps no text, lies across no box's border and
        on no curve; failing that, the first that overlaps no text; else where the arrow
        put it."""
        cx, cy = _on_curve(arrow, 0.5)
        ax, ay = arrow.at
        nx, ny = ax - cx, ay - cy
        norm = math.hypot(nx, ny) or 1.0
        nx, ny = nx / norm, ny / norm
        places = [(cx + sign * nx * (norm + 6.0 * step), cy + sign * ny * (norm + 6.0 * step))
                  for step in range(10) for sign in (1.0, -1.0)]
        free = [(x, y) for x, y in places
                if not any(_overlap(_rect(x - w / 2, y - h / 2, w, h), other)
                           for other in taken)]
        for x, y in free:
            box = _rect(x - w / 2, y - h / 2, w, h)
            if not any(_across(box, b) for b in self.boxes.values()) and not any(
                    box[0] < px < box[2] and box[1] < py < box[3] for px, py in curves):
                return (x, y)
        return free[0] if free else arrow.at

    def blocked(self, s, t, start, mid, end):
        """Whether the curve passes through a box other than its ends and theirs."""
        mine = set(self._chain(s)) | set(self._chain(t))
        arrow = Arrow(-1, start, mid, end, [], start)
        points = _points(arrow)[2:-2]
        for k, b in self.boxes.items():
            if k in mine or s in self._chain(k) or t in self._chain(k):
                continue  # an end, a state holding one, or one inside an end
            if any(b.x < x < b.x + b.w and b.y < y < b.y + b.h for x, y in points):
                return True
        return False

    def arrow(self, n, s, t):
        a, b = self.boxes[s], self.boxes[t]
        lines = self.labels[n]
        lw, lh = self.label_size[n]
        if s == t:  # a loop over the box's top right corner
            x0, y0 = a.x + a.w * 0.7, a.y
            x1 = a.x + a.w * 0.9
            mid = ((x0 + x1) / 2, y0 - 34)
            return Arrow(n, (x0, y0), mid, (x1, y0), lines, (mid[0], mid[1] - lh / 2 - 2))
        same = [m for m, (p, q, _) in enumerate(self.c.transitions) if {p, q} == {s, t}]
        spread = (same.index(n) - (len(same) - 1) / 2) * 14.0
        inside = _contains(a, b) or _contains(b, a)
        start = _border(a, _centre(b), spread, inside and _contains(a, b))
        end = _border(b, _centre(a), -spread, inside and _contains(b, a))
        dx, dy = end[0] - start[0], end[1] - start[1]
        length = math.hypot(dx, dy) or 1.0
        bend = 18.0 if len(same) > 1 else 8.0
        nx, ny = dy / length, -dx / length  # to the left of the direction of travel
        mid = ((start[0] + end[0]) / 2 + nx * bend, (start[1] + end[1]) / 2 + ny * bend)
        if not inside and self.blocked(s, t, start, mid, end):  # round under the boxes between
            start = (_centre(a)[0] + spread, a.y + a.h)
            end = (_centre(b)[0] - spread, b.y + b.h)
            low = max([start[1], end[1]] + [self.clearance(s, t, start, end, box)
                                            for box in self.boxes.values()])
            low += 28.0 + 10.0 * abs(spread) / 14.0
            mid = ((start[0] + end[0]) / 2, 2 * low - (start[1] + end[1]) / 2)
            nx, ny = 0.0, 1.0
        # the label beside the curve's middle, on its outer side
        cx, cy = 0.25 * start[0] + 0.5 * mid[0] + 0.25 * end[0], \
            0.25 * start[1] + 0.5 * mid[1] + 0.25 * end[1]
        off = 0.5 * (abs(nx) * lw + abs(ny) * lh) + 4
        return Arrow(n, start, mid, end, lines, (cx + nx * off, cy + ny * off))

    def clearance(self, s, t, start, end, box):
        """How low the middle of an arrow rounding under the boxes from `start` to `end`
        must lie to pass under `box` (0 for a box it need not avoid: an end, a state holding
        one or inside one, one beside its way). Its curve is y(u) = y0 + 4u(1 - u)(low -
        y0) with both ends at y0 (about) and x running evenly from start to end."""
        if (box.state in self._chain(s) or box.state in self._chain(t)
                or s in self._chain(box.state) or t in self._chain(box.state)):
            return 0.0
        x0, x1 = sorted((start[0], end[0]))
        if box.x + box.w <= x0 or x1 <= box.x:
            return 0.0
        y0 = max(start[1], end[1])
        # the box's x range in the curve's parameter; 4u(1 - u) is least at an end of it
        us = [min(max((x - start[0]) / (end[0] - start[0]), 0.0), 1.0)
              for x in (box.x, box.x + box.w)]
        f = min(4 * u * (1 - u) for u in us)
        need = box.y + box.h + 10.0 - y0
        return y0 + need / max(f, 0.25) if need > 0 else 0.0

    def defaults(self):
        out = []
        for k, s in enumerate(self.c.states):
            if s.initial:
                b = self.boxes[k]
                y = b.y + min(b.h / 2, 14.0)
                out.append((b.x - DOT, y, b.x, y))
        return out


def _on_curve(arrow, u):
    """The point at parameter u of an arrow's quadratic Bezier."""
    (x0, y0), (x1, y1), (x2, y2) = arrow.start, arrow.mid, arrow.end
    a, b, c = (1 - u) ** 2, 2 * u * (1 - u), u * u
    return a * x0 + b * x1 + c * x2, a * y0 + b * y1 + c * y2


def _points(arrow, n=16):
    """Points along an arrow's curve (the curve lies near them, unlike its control point)."""
    return [_on_curve(arrow, k / n) for k in range(n + 1)]


def _rect(x, y, w, h):
    return (x, y, x + w, y + h)


def _overlap(p, q):
    return p[0] < q[2] and q[0] < p[2] and p[1] < q[3] and q[1] < p[3]


def _across(rect, b, margin=0.5):
    """Whether a rectangle lies across box b's border (within `margin` of it)."""
    x0, y0, x1, y1 = rect[0] - margin, rect[1] - margin, rect[2] + margin, rect[3] + margin
    inside = b.x <= x0 and x1 <= b.x + b.w and b.y <= y0 and y1 <= b.y + b.h
    outside = x1 <= b.x or b.x + b.w <= x0 or y1 <= b.y or b.y + b.h <= y0
    return not (inside or outside)


def _centre(b):
    return b.x + b.w / 2, b.y + b.h / 2


def _contains(outer, inner):
    return (outer.x <= inner.x and inner.x + inner.w <= outer.x + outer.w
            and outer.y <= inner.y and inner.y + inner.h <= outer.y + outer.h)


def _border(b, towards, spread, from_inside):
    """The point of box b's border facing `towards` (from inside: the bottom border), moved
    along the border by `spread`."""
    cx, cy = _centre(b)
    if from_inside:
        return (cx + spread, b.y + b.h)
    dx, dy = towards[0] - cx, towards[1] - cy
    if abs(dx) * b.h >= abs(dy) * b.w:  # a left or right side
        x = b.x + b.w if dx > 0 else b.x
        y = min(max(cy + spread, b.y + 4), b.y + b.h - 4)
        return (x, y)
    y = b.y + b.h if dy > 0 else b.y
    x = min(max(cx + spread, b.x + 4), b.x + b.w - 4)
    return (x, y)
