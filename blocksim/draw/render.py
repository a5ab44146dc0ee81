"""`blocksim draw`: a compiled diagram drawn as a block diagram, with matplotlib only.

`draw_graph` turns the model into boxes and wires, `draw_layout` places them and
`draw_route` routes the wires; this module
measures text, draws the boxes (name, type, key parameters, port names when a side has more
than one port), wires with arrowheads, branch dots and signal shapes, and writes SVG (text
kept as text), PNG or PDF. Every artist carries a gid naming what it belongs to
(`box:KEY`, `frame:KEY`, `text:KEY` for a box's text, `text:wire` for a shape label), so
tests and tools can check the picture from the rendered extents.
"""
from __future__ import annotations

import io
from pathlib import Path

from ..util.atomic import atomic_path
from .graph import build_graph
from .layout import Metrics, layout
from .route import CONTROL_GAP, FRAME_PAD, top_leads
from ..errors import DiagramError

FORMATS = ("svg", "png", "pdf")
PNG_DPI = 150

_FONT = "DejaVu Sans"
STYLES = {  # size, weight, style, colour
    "name": (9.0, "bold", "normal", "#111111"),
    "type": (7.5, "normal", "italic", "#555555"),
    "param": (7.5, "normal", "normal", "#222222"),
    "port": (7.0, "normal", "normal", "#333333"),
    "mark": (9.0, "bold", "normal", "#333333"),  # a sum's + and - at its input ports
    "wire": (7.0, "normal", "normal", "#1f5fa8"),
    "title": (8.5, "bold", "normal", "#555555"),
    "state": (9.0, "bold", "normal", "#111111"),  # a chart's state (statechart.py)
    "action": (7.0, "normal", "normal", "#333333"),  # its entry/during/exit lines
    "label": (7.0, "normal", "normal", "#1f5fa8"),  # a transition's label
}
PAD_X, PAD_Y = 7.0, 5.0
PORT_GAP = 5.0  # between a port name and the centre text
PORT_PITCH = 20.0
MIN_W, MIN_H = 56.0, 34.0
LINE = 1.3  # line height / font size
FONT_SLACK = 1.12  # widths grow by this much: a browser may render SVG text in a wider font
BUS_KINDS = ("bus", "bus_select")
COLOURS = {"block": "#eef3fa", "subsystem": "#fdf3e1", "inport": "#e3f1e3",
           "outport": "#e3f1e3", "frame": "none"}


class _Measure:
    """Text extents in points, from matplotlib's Agg renderer at 72 dpi."""

    def __init__(self):
        from matplotlib.backends.backend_agg import RendererAgg
        from matplotlib.font_manager import FontProperties
        self.renderer = RendererAgg(1, 1, 72)
        self.props = {name: FontProperties(family=_FONT, size=s, weight=w, style=st)
                      for name, (s, w, st, _) in STYLES.items()}
        self.cache = {}

    def __call__(self, text, style):
        key = (text, style)
        if key not in self.cache:
            w, h, _ = self.renderer.get_text_width_height_descent(text, self.props[style], ismath=False)
            self.cache[key] = (w * FONT_SLACK, STYLES[style][0] * LINE)
        return self.cache[key]


BAR_W = 5.0  # a bus's bar


def _centre_lines(box):
    if box.kind in ("inport", "outport"):
        return [(box.name, "param")]
    return [(box.name, "name"), (box.type, "type")] + [(p, "param") for p in box.params]


def _port_width(measure, names):
    return max((measure(n, "port")[0] for n in names), default=0.0) if len(names) > 1 else 0.0


def _input_labels(box):
    """What is written at the input ports: the marks (a sum's signs, always) or the port
    names (when there are several)."""
    return box.input_marks if box.input_marks else _side_inputs(box)


def _input_width(measure, box):
    if box.input_marks:
        return max((measure(m, "mark")[0] for m in box.input_marks), default=0.0)
    return _port_width(measure, _side_inputs(box))


def _box_size(measure, box):
    lines = _centre_lines(box)
    cw = max(measure(t, s)[0] for t, s in lines)
    ch = sum(measure(t, s)[1] for t, s in lines)
    if box.kind in ("inport", "outport"):
        w, h = cw + 2 * PAD_X, ch + 2 * PAD_Y
        return w, h, [h / 2] * len(box.inputs), [h / 2] * len(box.outputs)
    if box.kind in BUS_KINDS:
        names = _bus_names(box)
        w = BAR_W + PORT_GAP + max(measure(n, "port")[0] for n in names) + 2
        h = max(MIN_H, PORT_PITCH * len(names))
        ys = [h * (i + 0.5) / len(names) for i in range(len(names))]
        return (w, h + measure(box.name, "port")[1], *((ys, [h / 2]) if box.kind == "bus"
                                                         else ([h / 2], ys)))
    left, right = _input_width(measure, box), _port_width(measure, box.outputs)
    side = _side_inputs(box)
    top = _controls_height(measure, box)  # the control ports' labels, under the top edge
    w = max(MIN_W, 2 * PAD_X + cw + (left + PORT_GAP if left else 0) + (right + PORT_GAP if right else 0),
            _controls_width(measure, box))
    h = max(MIN_H, ch + 2 * PAD_Y + top, PORT_PITCH * max(len(side), len(box.outputs)))
    return (w, h, [h * (i + 0.5) / len(side) for i in range(len(side))]
            + top_leads(len(box.controls)),
            [h * (i + 0.5) / len(box.outputs) for i in range(len(box.outputs))])


def _side_inputs(box):
    """The inputs drawn on the left edge (a conditional subsystem's controls are on top)."""
    return box.inputs[:len(box.inputs) - len(box.controls)]


def _controls_height(measure, box):
    return max((measure(c, "port")[1] for c in box.controls), default=0.0)


def _controls_width(measure, box):
    """Each control's label centred under its port, at 1/(n+1), 2/(n+1), ... of the width."""
    n = len(box.controls)
    return max((measure(c, "port")[0] * (n + 1) + 2 * PAD_X for c in box.controls), default=0.0)


def lay_out(model, expand=False):
    """The Drawing (geometry in points) of a compiled model."""
    return lay_out_graph(build_graph(model, expand))


def lay_out_graph(graph):
    """(the Drawing of a `draw.graph` Graph, the text measure it was made with)."""
    measure = _Measure()
    metrics = Metrics(box=lambda b: _box_size(measure, b),
                      label=lambda t: measure(t, "wire"),
                      title=lambda b: measure(_frame_title(b), "title"))
    return layout(graph, metrics), measure


def _frame_title(box):
    return f"{box.name} ({box.type})"


def figure(model, expand=False):
    """A matplotlib Figure of the diagram, 1 data unit = 1 point, y pointing down."""
    from matplotlib.figure import Figure
    drawing, measure = lay_out(model, expand)
    fig = Figure(figsize=(drawing.width / 72, drawing.height / 72), dpi=72)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, drawing.width)
    ax.set_ylim(drawing.height, 0)
    ax.set_axis_off()
    for placed in sorted(drawing.boxes, key=lambda b: b.depth):
        _draw_box(ax, placed, measure)
    for frame, x, y in drawing.frame_titles:
        _text(ax, x, y, _frame_title(frame.box), "title", f"text:{frame.box.key}", ha="left", va="top")
    _draw_wires(ax, drawing)
    return fig


def _text(ax, x, y, text, style, gid, **kw):
    size, weight, fstyle, colour = STYLES[style]
    artist = ax.text(x, y, text, fontsize=size, fontweight=weight, fontstyle=fstyle, color=colour,
                     family=_FONT, parse_math=False, zorder=4, **kw)
    artist.set_gid(gid)
    return artist


def _draw_box(ax, placed, measure):
    from matplotlib.patches import FancyBboxPatch, Rectangle
    box, x, y, w, h = placed.box, placed.x, placed.y, placed.w, placed.h
    key = box.key
    if box.kind == "frame":
        patch = Rectangle((x, y), w, h, facecolor="#fbfbfb", edgecolor="#888888", linewidth=1.0,
                          linestyle=(0, (4, 2)), zorder=1 + placed.depth)
        patch.set_gid(f"frame:{key}")
        ax.add_patch(patch)
        for label, cx in zip(box.controls, placed.control_xs):  # beside their arrows
            _text(ax, cx + CONTROL_GAP, y + FRAME_PAD / 2, label, "port", f"text:{key}",
                  ha="left", va="top")
        return
    if box.kind in BUS_KINDS:
        _draw_bus(ax, placed, measure)
        return
    rounded = box.kind in ("inport", "outport")
    patch = FancyBboxPatch((x, y), w, h, boxstyle=f"round,pad=0,rounding_size={h / 2 if rounded else 2}",
                           facecolor=COLOURS[box.kind], edgecolor="#333333",
                           linewidth=1.6 if box.kind == "subsystem" else 0.9, zorder=3)
    patch.set_gid(f"box:{key}")
    ax.add_patch(patch)
    gid = f"text:{key}"
    for tx, ty, text, style, ha in box_texts(placed, measure):
        _text(ax, tx, ty, text, style, gid, ha=ha, va="center_baseline")


def box_texts(placed, measure):
    """Every text of a placed box (not a frame): (x, y of its centre line, text, style,
    horizontal alignment 'left' / 'center' / 'right'); the name, type and parameters
    centred, the input marks or port names at the ports, a conditional subsystem's control
    ports' labels under its top edge; a bus's element names above their lines."""
    box, x, y, w, h = placed.box, placed.x, placed.y, placed.w, placed.h
    if box.kind in BUS_KINDS:
        return _bus_texts(placed, measure)
    out = []
    lines = _centre_lines(box)
    left = _input_width(measure, box)
    right = _port_width(measure, box.outputs)
    inner_l = x + PAD_X + (left + PORT_GAP if left else 0)
    inner_r = x + w - PAD_X - (right + PORT_GAP if right else 0)
    cx = (inner_l + inner_r) / 2
    total = sum(measure(t, s)[1] for t, s in lines)
    top = _controls_height(measure, box)
    ty = y + top + (h - top - total) / 2
    for label, px in zip(box.controls, placed.control_xs):  # under their ports on the top
        out.append((px, y + PAD_Y / 2 + top / 2, label, "port", "center"))
    for text, style in lines:
        lh = measure(text, style)[1]
        out.append((cx, ty + lh / 2, text, style, "center"))
        ty += lh
    if left:
        style = "mark" if box.input_marks else "port"
        for name, py in zip(_input_labels(box), placed.in_ys[:len(_side_inputs(box))]):
            out.append((x + PAD_X * 0.6, py, name, style, "left"))
    if right:
        for name, py in zip(box.outputs, placed.out_ys):
            out.append((x + w - PAD_X * 0.6, py, name, "port", "right"))
    return out


def _bus_names(box):
    """The element names a bus or bus_select shows: its inputs or its outputs."""
    return box.inputs if box.kind == "bus" else box.outputs


def _bus_geometry(placed, measure):
    """(the bar's left x, its height, the heights of the elements' lines) of a bus box."""
    bus = placed.box.kind == "bus"
    h = placed.h - measure(placed.box.name, "port")[1]
    bar_x = placed.x + placed.w - BAR_W if bus else placed.x
    return bar_x, h, placed.in_ys if bus else placed.out_ys


def _bus_texts(placed, measure):
    """A bus's texts: each element's name above its line, at the side away from the bar,
    and the block's name below the bar."""
    box, x, y, w = placed.box, placed.x, placed.y, placed.w
    bus = box.kind == "bus"
    bar_x, h, ys = _bus_geometry(placed, measure)
    out = []
    for name, y0 in zip(_bus_names(box), ys):
        lh = measure(name, "port")[1]
        out.append((x + 1 if bus else x + w - 1, y0 - 1.5 - lh / 2, name, "port",
                    "left" if bus else "right"))
    out.append((bar_x + BAR_W / 2, y + h + measure(box.name, "port")[1] / 2, box.name, "port",
                "center"))
    return out


def _draw_bus(ax, placed, measure):
    """A bus as Simulink draws it: a bar, the elements' lines on one side each named above
    its line (a bus: coming in on the left; a bus_select: going out on the right), the
    block's name below."""
    from matplotlib.collections import LineCollection
    from matplotlib.patches import Rectangle
    box, x, y, w = placed.box, placed.x, placed.y, placed.w
    bar_x, h, ys = _bus_geometry(placed, measure)
    patch = Rectangle((bar_x, y), BAR_W, h, facecolor="#222222", edgecolor="#222222",
                      linewidth=0.6, zorder=3)
    patch.set_gid(f"box:{box.key}")
    ax.add_patch(patch)
    lines = [((x, y0), (bar_x, y0)) if box.kind == "bus" else ((x + BAR_W, y0), (x + w, y0))
             for y0 in ys]
    ax.add_collection(LineCollection(lines, colors="#333333", linewidths=0.9, zorder=2))
    for tx, ty, text, style, ha in box_texts(placed, measure):
        _text(ax, tx, ty, text, style, f"text:{box.key}", ha=ha, va="center_baseline")


def _draw_wires(ax, drawing):
    from matplotlib.collections import LineCollection, PolyCollection
    from .route import ARROW
    lines = LineCollection([((x1, y1), (x2, y2)) for x1, y1, x2, y2 in drawing.segments],
                           colors="#333333", linewidths=0.9, zorder=2, capstyle="projecting")
    lines.set_gid("wires")
    ax.add_collection(lines)
    heads = PolyCollection([((x, y), (x - ARROW, y - 2.6), (x - ARROW, y + 2.6))
                            for x, y in drawing.arrows], facecolors="#333333",
                           edgecolors="none", zorder=2)
    heads.set_gid("arrows")
    ax.add_collection(heads)
    if drawing.arrows_down:  # into a conditional subsystem's control ports
        down = PolyCollection([((x, y), (x - 2.6, y - ARROW), (x + 2.6, y - ARROW))
                               for x, y in drawing.arrows_down], facecolors="#333333",
                              edgecolors="none", zorder=2)
        down.set_gid("arrows")
        ax.add_collection(down)
    if drawing.dots:
        xs, ys = zip(*drawing.dots)
        (dots,) = ax.plot(xs, ys, "o", color="#333333", markersize=3.2, zorder=2)
        dots.set_gid("dots")
    for x, y, text in drawing.labels:
        _text(ax, x, y, text, "wire", "text:wire", ha="left", va="bottom")


def render(model, out, expand=False):
    """Draw a compiled model into `out` (.svg, .png or .pdf), atomically."""
    out = Path(out)
    fmt = out.suffix.lower().lstrip(".")
    with atomic_path(out) as tmp:
        tmp.write_bytes(to_bytes(model, fmt, expand))
    return out


def to_bytes(model, fmt="svg", expand=False):
    """The drawing as SVG (text kept as text), PNG or PDF bytes."""
    return _bytes(figure(model, expand), fmt, f"blocksim diagram {model.name}")


def _bytes(fig, fmt, title):
    """A figure as SVG (text kept as text, reproducible ids), PNG or PDF bytes."""
    import matplotlib
    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "blocksim"}):
        fig.savefig(buf, format=fmt, dpi=PNG_DPI if fmt == "png" else 72,
                    metadata=_metadata(fmt, title))
    return buf.getvalue()


def _metadata(fmt, title):
    if fmt == "svg":
        return {"Date": None, "Title": title}
    if fmt == "pdf":
        return {"CreationDate": None, "Title": title}
    return {"Title": title}


# ---- state charts (statechart.py) -----------------------------------------------------------
def chart_figure(chart):
    """A matplotlib Figure of a StateChart: states as rounded boxes (parallel regions
    dashed), their actions inside, transitions as labelled arrows."""
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
    from matplotlib.path import Path as MPath
    from .statechart import PAD, layout
    measure = _Measure()
    drawing = layout(chart, measure)
    fig = Figure(figsize=(drawing.width / 72, drawing.height / 72), dpi=72)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, drawing.width)
    ax.set_ylim(drawing.height, 0)
    ax.set_axis_off()
    for b in drawing.boxes:
        s = chart.states[b.state]
        patch = FancyBboxPatch((b.x, b.y), b.w, b.h, boxstyle="round,pad=0,rounding_size=7",
                               facecolor="#f6f8fc" if b.depth % 2 == 0 else "#ffffff",
                               edgecolor="#333333", linewidth=1.1,
                               linestyle=(0, (5, 3)) if s.region else "solid", zorder=1 + b.depth)
        patch.set_gid(f"state:{b.state}")
        ax.add_patch(patch)
        y = b.y + PAD
        for text, style in [(s.name, "state")] + [(line, "action") for line in s.lines]:
            h = measure(text, style)[1]
            _text(ax, b.x + PAD, y + h / 2, text, style, f"text:state:{b.state}",
                  ha="left", va="center_baseline").set_zorder(20)
            y += h
    for a in drawing.arrows:
        path = MPath([a.start, a.mid, a.end], [MPath.MOVETO, MPath.CURVE3, MPath.CURVE3])
        arrow = FancyArrowPatch(path=path, arrowstyle="-|>,head_length=6,head_width=3",
                                color="#1f3f6f", linewidth=1.0, zorder=30)
        arrow.set_gid(f"arrow:{a.transition}")
        ax.add_patch(arrow)
        if a.label:
            size = [measure(line, "label") for line in a.label]
            total = sum(h for _, h in size)
            y = a.at[1] - total / 2
            for line, (_, h) in zip(a.label, size):
                t = _text(ax, a.at[0], y + h / 2, line, "label", f"text:arrow:{a.transition}",
                          ha="center", va="center_baseline")
                t.set_zorder(40)
                t.set_bbox({"facecolor": "white", "edgecolor": "none", "pad": 0.5,
                            "alpha": 0.85})
                y += h
    for x0, y0, x1, y1 in drawing.defaults:
        ax.plot([x0], [y0], "o", color="#1f3f6f", markersize=3.5, zorder=30)
        head = FancyArrowPatch((x0, y0), (x1, y1), arrowstyle="-|>,head_length=5,head_width=2.5",
                               color="#1f3f6f", linewidth=1.0, zorder=30, shrinkA=0, shrinkB=0)
        head.set_gid("default")
        ax.add_patch(head)
    return fig


def chart_bytes(chart, fmt="svg"):
    """A StateChart's drawing as SVG (text kept as text), PNG or PDF bytes."""
    return _bytes(chart_figure(chart), fmt, f"blocksim chart {chart.title}")


def render_chart(chart, out):
    """Draw a StateChart into `out` (.svg, .png or .pdf), atomically."""
    out = Path(out)
    with atomic_path(out) as tmp:
        tmp.write_bytes(chart_bytes(chart, out.suffix.lower().lstrip(".")))
    return out


def chart_of(model, name):
    """The StateChart of block `name` of a model (DiagramError when there is no such block
    or it is not a chart)."""
    try:
        block = model.block(name)
    except KeyError as e:
        raise DiagramError(e.args[0], file=model.file) from None
    if not hasattr(block, "statechart"):
        charts = [b.name for b in model.blocks if hasattr(b, "statechart")]
        raise DiagramError(f"block '{name}' ({block.type}) is not a chart; charts: "
                           f"{', '.join(charts) or 'none'}", file=model.file)
    return block.statechart()


# ---- the command ----------------------------------------------------------------------------
def command(args, load):
    """Check the diagram as `blocksim check` does (same errors), then draw it (or, with
    --chart NAME, the state chart of block NAME)."""
    out = Path(args.out) if args.out else None
    if out is not None and out.suffix.lower().lstrip(".") not in FORMATS:
        raise DiagramError(f"cannot draw into '{out}': the file name must end in "
                           + ", ".join(f".{f}" for f in FORMATS), file="blocksim draw")
    model = load(args.file, args.set)
    chart = chart_of(model, args.chart) if getattr(args, "chart", None) else None
    stem = model.name if chart is None else f"{model.name}_{args.chart.replace('/', '.')}"
    out = out or Path(f"{stem}.svg")
    try:
        if chart is None:
            render(model, out, args.expand)
        else:
            render_chart(chart, out)
    except OSError as e:
        raise DiagramError(f"cannot write '{out}': {e.strerror or e}", file="blocksim draw") from None
    what = f"{len(model.blocks)} blocks" if chart is None else \
        f"chart {args.chart}, {len(chart.states)} states, {len(chart.transitions)} transitions"
    print(f"{model.name}: {what} -> {out}")
    return 0
