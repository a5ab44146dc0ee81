"""The drawing section both reports show: diagram.svg, written with the run, or drawn again
from the diagram file when it is missing."""
from __future__ import annotations

import re
from pathlib import Path

from ..engine.loading import load
from ..engine.results import DRAWING
from .html import esc, media, own_file

DRAWING_ZOOM = 1.25


def write_drawing(run_dir, model):
    """Write `diagram.svg` of a compiled model into the run directory."""
    from ..draw.render import render
    return render(model, Path(run_dir) / DRAWING)


def chart_file(block_name):
    """The file a chart block's drawing is written to in a run directory."""
    return f"chart_{block_name.replace('/', '.')}.svg"


def write_chart_drawings(run_dir, model):
    """Write the drawing of every chart block (`statechart()`) into the run directory."""
    from ..draw.render import render_chart
    for block in model.blocks:
        if hasattr(block, "statechart"):
            render_chart(block.statechart(), Path(run_dir) / chart_file(block.name))


def drawing_section(path, diagram, overrides, name):
    """The drawing `path` (diagram.svg; not a symbolic link), or when it is missing one drawn
    now from the diagram file with the given overrides; a note when neither works."""
    if own_file(path.parent, path.name) is not None:
        svg = path.read_bytes()
    else:
        try:
            svg = _draw(diagram, overrides)
        except Exception as e:  # the file may be gone or changed since the run
            return (f'<p class="note">No drawing: {esc(path.name)} is missing and the diagram '
                    f'could not be drawn from {esc(diagram)} ({esc(e)}).</p>')
    return (f'<div class="diagram">{media(svg, ".svg", "block diagram of " + name, _css_width(svg))}'
            '</div><p class="note">Click the drawing to see it at full size.</p>')


def _draw(diagram, overrides):
    from ..draw.render import to_bytes
    model = load(diagram, [tuple(o) if isinstance(o, list) else o for o in overrides])
    return to_bytes(model, "svg")


def _css_width(svg):
    """The drawing's display width in CSS pixels: its width in points, a little enlarged
    (1 pt = 4/3 px)."""
    m = re.search(rb'<svg[^>]*\swidth="([0-9.]+)pt"', svg[:2000])
    return float(m.group(1)) * 4 / 3 * DRAWING_ZOOM if m else None
