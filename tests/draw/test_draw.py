"""`blocksim draw`: readable drawings of every diagram, checked on the rendered picture.

The overlap checks measure the artists matplotlib actually drew (window extents after an Agg
draw), grouped by the gid each artist carries: `box:KEY` / `frame:KEY` patches and
`text:OWNER` texts. Every diagram in diagrams/ is checked, including diagrams added later.
"""
import importlib.util
import re
from pathlib import Path

import pytest

import blocksim
from blocksim.draw import render as draw
from blocksim.cli import main
from blocksim.language.diagram import port_keys

ROOT = Path(__file__).resolve().parents[2]
DIAGRAMS = sorted((ROOT / "diagrams").glob("*.yaml"))
DATA = Path(__file__).parent / "data"
CASCADE = DATA / "cascade.yaml"
TOL = 0.5  # pixels: touching is not overlapping

LOOP = DATA / "loop.yaml"  # two subsystems in a feedback loop, each with an inner loop
INDEXED = DATA / "indexed.yaml"  # wires taking elements of one vector output
CORPUS = ROOT / "tests" / "accel" / "corpus"
# control ports on top edges (boxes and frames, nested), buses as bars (nested, in frames)
TRIGGERED, BUSES = CORPUS / "conditional_triggered.yaml", CORPUS / "buses.yaml"
CASES = [(p, False) for p in DIAGRAMS] + [(CASCADE, False), (CASCADE, True), (LOOP, False),
                                          (LOOP, True), (INDEXED, False), (TRIGGERED, False),
                                          (TRIGGERED, True), (BUSES, True)]


def ids(case):
    path, expand = case
    return path.stem + ("-expanded" if expand else "")


def rendered(model, expand):
    """(boxes {key: bbox}, frames {key: bbox}, texts [(owner, text, bbox)], figure bbox)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    fig = draw.figure(model, expand)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    boxes, frames, texts = {}, {}, []
    for artist in fig.findobj():
        gid = artist.get_gid() or ""
        kind, _, key = gid.partition(":")
        if kind == "box":
            boxes[key] = artist.get_window_extent(renderer)
        elif kind == "frame":
            frames[key] = artist.get_window_extent(renderer)
        elif kind == "text" and artist.get_text():
            texts.append((key, artist.get_text(), artist.get_window_extent(renderer)))
    return boxes, frames, texts, fig.bbox


def overlap(a, b):
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > TOL) and (min(a.y1, b.y1) - max(a.y0, b.y0) > TOL)


def inside(a, outer):
    return (a.x0 >= outer.x0 - TOL and a.x1 <= outer.x1 + TOL and a.y0 >= outer.y0 - TOL
            and a.y1 <= outer.y1 + TOL)


def within(key, frame):
    """A box key inside a frame (its blocks and nested frames, and the frame's port boxes)."""
    return key.startswith(frame + "/") or key.startswith(frame + ":")


@pytest.fixture(scope="module")
def models():
    return {}


def load(path, models):
    if path not in models:
        models[path] = blocksim.load(path)
    return models[path]


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_no_box_or_label_overlaps(case, models):
    path, expand = case
    boxes, frames, texts, page = rendered(load(path, models), expand)
    assert boxes
    keys = list(boxes)
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            assert not overlap(boxes[a], boxes[b]), f"boxes {a} and {b} overlap"
    for f, fb in frames.items():
        for key, bb in list(boxes.items()) + [(k, v) for k, v in frames.items() if k != f]:
            if within(key, f):
                assert inside(bb, fb), f"{key} sticks out of its frame {f}"
            elif not within(f, key):
                assert not overlap(bb, fb), f"{key} overlaps frame {f}"
    for i, (owner, text, bb) in enumerate(texts):
        assert inside(bb, page), f"label {text!r} is cut off by the page"
        for owner2, text2, bb2 in texts[i + 1:]:
            assert not overlap(bb, bb2), f"labels {text!r} ({owner}) and {text2!r} ({owner2}) overlap"
        for key, box in boxes.items():
            if key != owner:
                assert not overlap(bb, box), f"label {text!r} ({owner}) overlaps box {key}"
        for f, fb in frames.items():
            if owner != f and not within(owner, f) and owner != "wire":
                assert not overlap(bb, fb), f"label {text!r} ({owner}) overlaps frame {f}"
            if owner == "wire" or owner == f or within(owner, f):
                assert inside(bb, fb) or not overlap(bb, fb), f"label {text!r} straddles frame {f}"


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_wires_never_cross_a_box(case, models):
    path, expand = case
    drawing, _ = draw.lay_out(load(path, models), expand)
    leaves = [b for b in drawing.boxes if b.box.kind != "frame"]
    for x1, y1, x2, y2 in drawing.segments:
        for b in leaves:
            # the interior, shrunk a little: wires end on box edges
            x0, x1b, y0, y1b = b.x + 0.5, b.x + b.w - 0.5, b.y + 0.5, b.y + b.h - 0.5
            crosses = (max(min(x1, x2), x0) < min(max(x1, x2), x1b)
                       and max(min(y1, y2), y0) < min(max(y1, y2), y1b))
            assert not crosses, f"wire ({x1:.0f},{y1:.0f})-({x2:.0f},{y2:.0f}) crosses {b.box.key}"


def signals(segments):
    """The drawn wire segments grouped into signals: segments whose ends touch (a bend, or a
    branch ending on another segment) belong to one signal; two signals only cross."""
    segments = [s for s in segments if abs(s[0] - s[2]) + abs(s[1] - s[3]) > 0.01]
    group = list(range(len(segments)))

    def find(i):
        while group[i] != i:
            i = group[i]
        return i

    def on(x, y, s):
        return (min(s[0], s[2]) - 0.01 <= x <= max(s[0], s[2]) + 0.01
                and min(s[1], s[3]) - 0.01 <= y <= max(s[1], s[3]) + 0.01)
    for i, a in enumerate(segments):
        for j, b in enumerate(segments[:i]):
            if on(*a[:2], b) or on(*a[2:], b) or on(*b[:2], a) or on(*b[2:], a):
                group[find(i)] = find(j)
    return [(s, find(i)) for i, s in enumerate(segments)]


def _as_horizontal(s):
    """(y, x_from, x_to) of a horizontal segment, or of a vertical one with x and y swapped."""
    x1, y1, x2, y2 = s if abs(s[1] - s[3]) < 0.01 else (s[1], s[0], s[3], s[2])
    return y1, min(x1, x2), max(x1, x2)


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_a_wire_never_crosses_itself(case, models):
    """A branch of a signal crossing another branch of the same signal without a dot reads
    as two signals (demo2: the fed-back angle crossed the arm's own scope wire)."""
    path, expand = case
    drawing, _ = draw.lay_out(load(path, models), expand)
    segs = signals(drawing.segments)
    for i, (a, ga) in enumerate(segs):
        for b, gb in segs[:i]:
            if ga != gb or (abs(a[1] - a[3]) < 0.01) == (abs(b[1] - b[3]) < 0.01):
                continue
            (ya, a0, a1), (yb, b0, b1) = _as_horizontal(a), _as_horizontal(b)
            crosses = a0 + 0.01 < yb < a1 - 0.01 and b0 + 0.01 < ya < b1 - 0.01
            assert not crosses, f"a wire crosses itself: {a} and {b}"


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_different_wires_never_run_close_together(case, models):
    """Two signals' parallel runs must be told apart: 0.9 pt lines closer than 3.5 pt
    (7 pixels in the 150 dpi PNG) look like one thick wire, and the reader cannot tell
    which port each goes to (demo3, scara, planar7r had such runs beside a sum's inputs)."""
    path, expand = case
    drawing, _ = draw.lay_out(load(path, models), expand)
    assert not close_runs(drawing, 3.5), "wires run together"


def close_runs(drawing, distance):
    """Pairs of segments of different signals running side by side closer than `distance`."""
    segs = signals(drawing.segments)
    close = []
    for i, (a, ga) in enumerate(segs):
        for b, gb in segs[:i]:
            if ga == gb or (abs(a[1] - a[3]) < 0.01) != (abs(b[1] - b[3]) < 0.01):
                continue
            (ya, a0, a1), (yb, b0, b1) = _as_horizontal(a), _as_horizontal(b)
            if min(a1, b1) - max(a0, b0) > TOL and abs(ya - yb) < distance:
                close.append((a, b))
    return close


@pytest.mark.parametrize("path", DIAGRAMS, ids=[p.stem for p in DIAGRAMS])
def test_sources_left_sinks_right_every_block_drawn(path, models):
    model = load(path, models)
    drawing, _ = draw.lay_out(model)
    placed = {b.box.key: b for b in drawing.boxes}
    # the diagram's own inputs and outputs are port boxes (their inports are not boxes)
    assert set(placed) == ({b.name for b in model.blocks if b.name not in model.inports}
                           | set(port_keys(model.spec.inputs, model.spec.outputs)))
    centres = {k: b.x + b.w / 2 for k, b in placed.items()}
    for k, b in placed.items():
        if not b.box.inputs:
            assert centres[k] == pytest.approx(min(centres.values())), f"source {k} not on the left"
        if not b.box.outputs:
            assert centres[k] == pytest.approx(max(centres.values())), f"sink {k} not on the right"


def test_feedback_runs_back_below_the_boxes(models):
    """demo2: the arm's angle q is fed back to the first Sum, which comes earlier in the
    dataflow; that wire (and only it) runs left under every box."""
    drawing, _ = draw.lay_out(load(ROOT / "diagrams" / "demo2.yaml", models))
    bottom = max(b.y + b.h for b in drawing.boxes)
    below = [s for s in drawing.segments if s[1] > bottom and s[3] > bottom]
    horizontal = [s for s in below if s[1] == s[3]]
    assert len(horizontal) == 1
    x1, _, x2, _ = horizontal[0]
    placed = {b.box.key: b for b in drawing.boxes}
    robot, target = placed["Robot"], placed["Sum"]
    assert min(x1, x2) < target.x and max(x1, x2) > robot.x + robot.w


def test_boxes_show_name_type_parameters_and_port_names(models):
    svg = draw.to_bytes(load(ROOT / "diagrams" / "demo3.yaml", models), "svg").decode()
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    for expected in ("Robot", "robot", "robot = p560", "K = 100", "(6,)", "qdd"):
        assert expected in texts, expected
    # one input: not labelled; several: labelled (rne's q, qd, qdd)
    assert "u" not in texts and "tau" not in texts and "qd" in texts
    # a sum's signs at its input ports, as Simulink draws them, not as a parameter line
    assert "+" in texts and "\u2212" in texts and not [t for t in texts if "signs" in t]


def test_indexed_wires_are_signals_of_their_own(models):
    """Issue 23: wires from Motor.y[0], Motor.y[1:3] and Motor.y[2] were drawn as one net
    with the whole vector's wire, without their index. Each is now a net of its own,
    written with its index (and shape) just before the arrow it ends in."""
    drawing, _ = draw.lay_out(load(INDEXED, models))
    placed = {b.box.key: b for b in drawing.boxes}
    labels = {text: (x, y) for x, y, text in drawing.labels}
    for text, box, port in (("[0]", "First", 0), ("[1:3] (2,)", "Rest", 0),
                            ("[2]", "Total", 1)):
        x, y = labels[text]
        arrow = (placed[box].x, placed[box].in_ys[port])
        assert arrow in drawing.arrows
        assert x < arrow[0] and 0 < arrow[1] - y < 5, (text, (x, y), arrow)
    assert "(3,)" in labels  # the whole vector's wire keeps its shape at the source
    # the nets leave the port together but part at tracks of their own: four vertical runs
    motor = placed["Motor"]
    starts = {(x1, y1, x2, y2) for x1, y1, x2, y2 in drawing.segments
              if min(x1, x2) >= motor.x + motor.w and x1 == x2 and motor.y <= min(y1, y2)
              and max(y1, y2) <= motor.y + motor.h + 200}
    assert len({s[0] for s in starts}) >= 4


def test_empty_strings_show_as_written(models):
    """A scope's units ["", m, ""] read 'units = [, m, ]' on its box."""
    svg = draw.to_bytes(load(INDEXED, models), "svg").decode()
    assert 'units = ["", m, ""]' in svg.replace("&quot;", '"')


def test_an_unused_subsystem_output_ends_at_its_port(tmp_path):
    """docs/tutorial.md's control loop uses the plant's x, not its v: expanded, the v port
    inside the frame has no wire on to the frame's edge (one was drawn, leading nowhere)."""
    plant = ROOT / "docs" / "tutorial.md"
    for name, body in re.findall(r"```yaml (\S+)\n(.*?)```", plant.read_text(), re.S):
        (tmp_path / name).write_text(body)
    drawing, _ = draw.lay_out(blocksim.load(tmp_path / "control.yaml"), expand=True)
    placed = {b.box.key: b for b in drawing.boxes}
    frame, v, x = placed["Plant"], placed["Plant:out:v"], placed["Plant:out:x"]
    onward = lambda port: [s for s in drawing.segments  # noqa: E731
                           if s[1] == s[3] == port.in_ys[0] and max(s[0], s[2]) >= frame.x + frame.w]
    assert onward(x) and not onward(v)


def test_a_control_wire_and_a_data_wire_never_share_a_line():
    """The enable comes from a bus_select at the height of the data port u, and the wire
    into u from a source at about the height of the enable's lead above the box: with the
    enable's track right of u's, the two ran on one line (0.3 px apart) into u, and which
    went where could not be seen. The tracks' order now prefers the runs further apart."""
    drawing, _ = draw.lay_out(blocksim.load(DATA / "control_lead.yaml"))
    assert not close_runs(drawing, 1.0)


def test_svg_keeps_text_as_text_and_other_formats(tmp_path, models):
    model = load(ROOT / "diagrams" / "demo1.yaml", models)
    svg = draw.to_bytes(model, "svg").decode()
    assert re.search(r"<text[^>]*>Robot</text>", svg)
    assert 'id="DejaVuSans' not in svg  # no glyphs drawn as paths
    png = draw.to_bytes(model, "png")
    from io import BytesIO

    from PIL import Image
    image = Image.open(BytesIO(png))
    image.load()
    assert image.size[0] > 300 and image.size[1] > 100
    assert draw.to_bytes(model, "pdf").startswith(b"%PDF")


def test_collapsed_and_expanded_subsystems(models):
    model = load(CASCADE, models)
    collapsed, _ = draw.lay_out(model)
    assert {b.box.key for b in collapsed.boxes} == {"U", "F", "H", "Ctl", "Sc"}
    ctl = next(b for b in collapsed.boxes if b.box.key == "Ctl")
    assert ctl.box.inputs == ["x"] and ctl.box.outputs == ["y", "z"]
    expanded, _ = draw.lay_out(model, expand=True)
    keys = {b.box.key for b in expanded.boxes}
    assert {b.name for b in model.blocks} <= keys
    assert {"Ctl:in:x", "Ctl:out:y", "Ctl:out:z", "Ctl/Inner:in:u"} <= keys
    frames = {b.box.key: b for b in expanded.boxes if b.box.kind == "frame"}
    assert set(frames) == {"F", "H", "Ctl", "Ctl/Inner"}
    # the frame's ports keep the declared order top to bottom, as on the collapsed box
    ports = {b.box.key: b for b in expanded.boxes}
    assert ports["Ctl:out:y"].y < ports["Ctl:out:z"].y


def test_cli_draw_writes_the_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["draw", str(ROOT / "diagrams" / "msd.yaml")]) == 0
    assert (tmp_path / "msd.svg").read_text().count("<text") > 10
    out = tmp_path / "m.png"
    assert main(["draw", str(ROOT / "diagrams" / "msd.yaml"), "-o", str(out),
                 "--set", "blocks.Spring.K=42"]) == 0
    assert out.read_bytes().startswith(b"\x89PNG")
    svg = tmp_path / "s.svg"
    assert main(["draw", str(ROOT / "diagrams" / "msd.yaml"), "-o", str(svg),
                 "--set", "blocks.Spring.K=42"]) == 0
    assert "K = 42" in svg.read_text()
    assert main(["draw", str(CASCADE), "-o", str(tmp_path / "c.svg"), "--expand"]) == 0
    assert "Inner (subsystem)" in (tmp_path / "c.svg").read_text()


def _bad_cases():
    spec = importlib.util.spec_from_file_location(
        "bad_diagrams", ROOT / "tests" / "errors" / "test_bad_diagrams.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BAD = _bad_cases()


@pytest.mark.parametrize("case", sorted(BAD.CASES))
def test_invalid_diagram_same_errors_as_check(case, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path, _ = BAD.write_case(tmp_path, BAD.CASES[case][0])
    check = main(["check", str(path)])
    check_err = capsys.readouterr().err
    out = tmp_path / "d.svg"
    code = main(["draw", str(path), "-o", str(out)])
    err = capsys.readouterr().err
    assert (code, err) == (check, check_err) and code == 2
    assert not out.exists()


def test_bad_output_name_and_missing_file(tmp_path, capsys):
    assert main(["draw", str(ROOT / "diagrams" / "msd.yaml"), "-o", str(tmp_path / "x.jpg")]) == 2
    assert ".svg" in capsys.readouterr().err
    assert main(["draw", str(tmp_path / "nope.yaml")]) == 2
    assert "nope.yaml" in capsys.readouterr().err
    (tmp_path / "file").write_text("in the way")
    assert main(["draw", str(ROOT / "diagrams" / "msd.yaml"), "-o", str(tmp_path / "file" / "d.svg")]) == 2
    err = capsys.readouterr().err
    assert "cannot write" in err and "Traceback" not in err


def random_diagram(seed, n):
    """A valid random diagram of about n blocks: sources, gains, sums and muxes wired from
    earlier blocks (no algebraic loop), integrators fed from anywhere (feedback), scopes."""
    import random
    rng = random.Random(seed)
    blocks, wires, outputs = [], [], []
    for i in range(n):
        name = f"B{i}"
        kind = "source" if i < 2 else rng.choice(["gain", "sum", "integrator", "integrator",
                                                   "mux", "gain", "scope"])
        if kind == "source":
            blocks.append(f"  {name}: {{type: step, time: {rng.randint(1, 3)}}}")
            outputs.append(name)
        elif kind == "gain":
            blocks.append(f"  {name}: {{type: gain, K: {rng.randint(-5, 5)}}}")
            wires.append(f"{rng.choice(outputs)} -> {name}")
            outputs.append(name)
        elif kind == "sum":
            k = rng.randint(2, 3)
            blocks.append(f"  {name}: {{type: sum, signs: \"{'+' * k}\"}}")
            wires += [f"{rng.choice(outputs)} -> {name}.u{j + 1}" for j in range(k)]
            outputs.append(name)
        elif kind == "integrator":
            blocks.append(f"  {name}: {{type: integrator}}")
            outputs.append(name)
            wires.append(("integrator", name))
        elif kind == "mux":
            blocks.append(f"  {name}: {{type: mux, inputs: 2}}")
            wires += [f"{rng.choice(outputs)} -> {name}.u{j + 1}" for j in range(2)]
            blocks.append(f"  {name}S: {{type: scope}}")
            wires.append(f"{name} -> {name}S")
        else:
            k = rng.randint(1, 3)
            blocks.append(f"  {name}: {{type: scope, inputs: {k}}}")
            wires += [f"{rng.choice(outputs)} -> {name}.u{j + 1}" for j in range(k)]
    # integrators take any scalar output, later ones included: feedback loops
    wires = [f"{rng.choice(outputs)} -> {w[1]}" if isinstance(w, tuple) else w for w in wires]
    return ("blocksim: 1\nname: random\nblocks:\n" + "\n".join(blocks) + "\nwires:\n"
            + "\n".join(f"  - {w}" for w in wires) + "\nsimulation: {stop: 1}\n")


@pytest.mark.parametrize("seed,n", [(1, 12), (2, 20), (3, 30), (4, 40), (11, 21)])
def test_random_diagrams_stay_readable(seed, n, tmp_path):
    """Random diagrams up to 40 blocks (with feedback through integrators): no overlaps,
    no wire through a box."""
    path = tmp_path / "random.yaml"
    path.write_text(random_diagram(seed, n))
    model = blocksim.load(path)
    models = {path: model}
    test_no_box_or_label_overlaps((path, False), models)
    test_wires_never_cross_a_box((path, False), models)
