"""`layout:` positions in `blocksim draw`: boxes stand where the diagram says, wires are routed
between them by the same router, and a wrong entry is an error at its line."""
import shutil
from pathlib import Path

import pytest

import blocksim
from blocksim.cli import main
from blocksim.draw import render as draw
from blocksim.errors import DiagramError, DiagramErrors

ROOT = Path(__file__).resolve().parents[2]
DIAGRAMS = sorted((ROOT / "diagrams").glob("*.yaml"))
LOOP = Path(__file__).parent / "data" / "loop.yaml"


def crossings(drawing):
    """Wire segments that pass through the inside of a box (not a frame)."""
    out = []
    for x1, y1, x2, y2 in drawing.segments:
        for b in drawing.boxes:
            if b.box.kind == "frame":
                continue
            x0, x1b, y0, y1b = b.x + 0.5, b.x + b.w - 0.5, b.y + 0.5, b.y + b.h - 0.5
            if (max(min(x1, x2), x0) < min(max(x1, x2), x1b)
                    and max(min(y1, y2), y0) < min(max(y1, y2), y1b)):
                out.append((b.box.key, (x1, y1, x2, y2)))
    return out


def placed_at(drawing):
    """Each box's top left corner in the layout's coordinates."""
    ox, oy = drawing.origin
    return {b.box.key: (round(b.x + ox, 6), round(b.y + oy, 6)) for b in drawing.boxes}


def with_layout(path, tmp_path, positions, extra=""):
    text = path.read_text() + extra + "layout:\n" + "".join(
        f"  {k}: [{x}, {y}]\n" for k, (x, y) in positions.items())
    # what the diagram reads beside it (subsystem files, fmu/) comes along
    shutil.copytree(path.parent, tmp_path, dirs_exist_ok=True)
    out = tmp_path / path.name
    out.write_text(text)
    return out


@pytest.mark.parametrize("path", DIAGRAMS, ids=lambda p: p.stem)
def test_the_automatic_positions_written_as_layout_are_kept_and_routed_clear(path, tmp_path):
    """The layout `blocksim draw` makes, written into the file (rounded to points as the
    editor writes it), draws every box there, with no wire through a box and every wire
    routed from its source to its input."""
    auto, _ = draw.lay_out(blocksim.load(path))
    positions = {b.box.key: (round(b.x), round(b.y)) for b in auto.boxes}
    model = blocksim.load(with_layout(path, tmp_path, positions))
    drawing, _ = draw.lay_out(model)
    assert placed_at(drawing) == positions
    assert crossings(drawing) == []
    ports = sum(map(len, model.spec.inputs.values())) + len(model.spec.outputs)
    assert len(drawing.paths) == len(model.spec.written_wires) + ports  # and the own ports'
    placed = {b.box.key: b for b in drawing.boxes}
    for (src, sp, dst, dp), points in drawing.paths.items():
        s, d = placed[src], placed[dst]
        # a wire joined straight starts at its target's height, within a point of its port's
        assert points[0] == pytest.approx((s.x + s.w, s.out_ys[sp]), abs=1.0)
        assert points[-1] == pytest.approx((d.x, d.in_ys[dp]))
        for (x1, y1), (x2, y2) in zip(points, points[1:]):  # orthogonal but for sub-point jogs
            assert abs(x1 - x2) < 1e-6 or abs(y1 - y2) <= 1.0


def test_moved_boxes_stand_where_the_layout_says(tmp_path):
    """msd with its boxes in a hand-made arrangement: two rows, the feedback gains under
    the integrators; positions as written, relative to each other."""
    positions = {"Force": (0, 0), "Sum": (120, 0), "InvMass": (240, 10), "Velocity": (360, 10),
                 "Position": (480, 10), "Damping": (360, 120), "Spring": (480, 120),
                 "Scope": (620, 200)}
    model = blocksim.load(with_layout(ROOT / "diagrams" / "msd.yaml", tmp_path, positions))
    drawing, _ = draw.lay_out(model)
    assert placed_at(drawing) == positions
    assert crossings(drawing) == []
    # the drawing starts at its margin and holds everything
    assert min(b.x for b in drawing.boxes) >= 0 and min(b.y for b in drawing.boxes) >= 0
    assert max(max(s[0], s[2]) for s in drawing.segments) <= drawing.width
    assert max(max(s[1], s[3]) for s in drawing.segments) <= drawing.height
    draw.render(model, tmp_path / "msd.png")  # renders


def test_a_block_the_layout_does_not_name_goes_below_the_others(tmp_path):
    positions = {"Force": (0, 0), "Sum": (120, 0), "InvMass": (240, 10), "Velocity": (360, 10),
                 "Position": (480, 10), "Damping": (360, 120), "Spring": (480, 120)}
    model = blocksim.load(with_layout(ROOT / "diagrams" / "msd.yaml", tmp_path, positions))
    drawing, _ = draw.lay_out(model)
    boxes = {b.box.key: b for b in drawing.boxes}
    lowest = max(b.y + b.h for k, b in boxes.items() if k != "Scope")
    assert boxes["Scope"].y > lowest
    assert crossings(drawing) == []


def test_inside_a_subsystem_its_ports_stand_beside_the_positioned_blocks(tmp_path):
    text = LOOP.read_text().replace(
        "      outputs: {u: U.y}\n",
        "      outputs: {u: U.y}\n      layout: {Err: [0, 0], P: [100, -40], I: [100, 40], "
        "Int: [200, 40], U: [300, 0]}\n")
    path = tmp_path / "loop.yaml"
    path.write_text(text)
    (tmp_path / "lag.yaml").write_text((LOOP.parent / "lag.yaml").read_text())
    model = blocksim.load(path)
    frame = next(b for b in draw.lay_out(model, expand=True)[0].boxes if b.box.key == "Ctl")
    drawing, _ = draw.lay_out(model, expand=True)
    inner = {b.box.key: b for b in drawing.boxes if b.box.key.startswith("Ctl")}
    # inside the frame, relative positions as written
    err, u = inner["Ctl/Err"], inner["Ctl/U"]
    assert (u.x - err.x, u.y - err.y) == pytest.approx((300, 0))
    assert inner["Ctl:in:r"].x + inner["Ctl:in:r"].w < err.x
    assert inner["Ctl:out:u"].x > u.x + u.w
    assert frame.x <= inner["Ctl:in:r"].x and inner["Ctl:out:u"].x <= frame.x + frame.w
    assert crossings(drawing) == []


def test_a_level_with_an_expanded_subsystem_is_laid_out_automatically(tmp_path):
    """The frames of --expand are larger than the boxes the positions were made for: that
    level ignores them; collapsed, the same positions hold."""
    path = tmp_path / "loop.yaml"
    path.write_text(LOOP.read_text() + "layout: {Ref: [0, 300], Ctl: [100, 0], Plant: [250, 0],"
                    " Scope: [400, 100]}\n")
    (tmp_path / "lag.yaml").write_text((LOOP.parent / "lag.yaml").read_text())
    model = blocksim.load(path)
    collapsed, _ = draw.lay_out(model)
    assert placed_at(collapsed)["Ref"] == (0, 300)
    expanded, _ = draw.lay_out(model, expand=True)
    assert expanded.origin == (0.0, 0.0)
    assert crossings(expanded) == []


def test_layout_errors_name_the_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("blocksim: 1\nblocks:\n  Src: {type: constant, value: 1}\n"
                    "  Out: {type: scope}\nwires: [Src -> Out]\nsimulation: {stop: 1}\n"
                    "layout:\n  Scr: [0, 0]\n  Out: [1, two]\n")
    with pytest.raises(DiagramErrors) as e:
        blocksim.load(path)
    text = str(e.value)
    assert f"{path}:8: error: 'layout' places an unknown block 'Scr' (did you mean 'Src'?)" in text
    assert f"{path}:9: error: block 'Out': the position of 'Out' must be [x, y]" in text
    path.write_text(path.read_text().replace("layout:\n  Scr: [0, 0]\n  Out: [1, two]\n",
                                             "layout: [1, 2]\n"))
    with pytest.raises(DiagramError, match=r"bad.yaml:7: error: 'layout' must be a mapping"):
        blocksim.load(path)


def test_draw_command_honours_the_layout(tmp_path, capsys):
    positions = {"Force": (0, 0), "Sum": (150, 0), "InvMass": (300, 0), "Velocity": (450, 0),
                 "Position": (600, 0), "Damping": (450, 150), "Spring": (600, 150),
                 "Scope": (750, 60)}
    path = with_layout(ROOT / "diagrams" / "msd.yaml", tmp_path, positions)
    assert main(["draw", str(path), "-o", str(tmp_path / "msd.svg")]) == 0
    svg = (tmp_path / "msd.svg").read_text()
    assert 'id="box:Damping"' in svg
