"""`blocksim draw --chart NAME`: a chart as nested state boxes and labelled arrows. The
geometry is checked on the laid-out drawing (render.py measures the text): inner states lie
inside their state, siblings do not overlap, no label covers a state's text or another
label, every arrow ends on the border of its target."""
from pathlib import Path

import pytest

import blocksim
from blocksim.cli import main
from blocksim.draw.render import _Measure, chart_of
from blocksim.draw.statechart import layout

CORPUS = Path(__file__).parents[1] / "accel" / "corpus"
CHARTS = [CORPUS / "chart_modes.yaml", CORPUS / "chart_discrete.yaml"]
HERE = Path(__file__).parent
DIAGRAMS = HERE.parents[1] / "diagrams"
DRAWN = [(p, "S") for p in CHARTS] + [(HERE / "spec_example.yaml", "Supervisor"),
                                      (DIAGRAMS / "supervisor.yaml", "Supervisor"),
                                      (DIAGRAMS / "gearbox.yaml", "Shift")]


def _inside(inner, outer):
    return (outer.x <= inner.x and inner.x + inner.w <= outer.x + outer.w
            and outer.y <= inner.y and inner.y + inner.h <= outer.y + outer.h)


def _apart(a, b):
    return a.x + a.w <= b.x or b.x + b.w <= a.x or a.y + a.h <= b.y or b.y + b.h <= a.y


def _related(chart, a, b):
    """Whether state b is state a, holds it or lies inside it."""
    def chain(s):
        out = []
        while s != -1:
            out.append(s)
            s = chart.states[s].parent
        return out
    return b in chain(a) or a in chain(b)


@pytest.mark.parametrize("path, name", DRAWN, ids=lambda p: getattr(p, "stem", ""))
def test_chart_geometry(path, name):
    """... and no arrow crosses a box it does not start or end in (or hold one of those),
    so an arrow round the states between its ends goes round all of them (the spec's
    example chart: Fault -> Idle ran through Track's actions) inside the states holding
    both its ends (a region's arrow round its middle state left the region), and no label
    straddles a box's border."""
    chart = chart_of(blocksim.load(path), name)
    measure = _Measure()
    drawing = layout(chart, measure)
    boxes = {b.state: b for b in drawing.boxes}
    for k, s in enumerate(chart.states):
        if s.parent >= 0:
            assert _inside(boxes[k], boxes[s.parent])
        for j, other in enumerate(chart.states):
            if j > k and other.parent == s.parent:
                assert _apart(boxes[k], boxes[j]), (s.name, other.name)
    texts = [(b.x, b.y, b.x + b.text[0], b.y + b.text[1]) for b in drawing.boxes]
    labels = []
    for a in drawing.arrows:
        w = max((measure(line, "label")[0] for line in a.label), default=0)
        h = sum(measure(line, "label")[1] for line in a.label)
        labels.append((a.at[0] - w / 2, a.at[1] - h / 2, a.at[0] + w / 2, a.at[1] + h / 2))
        target = boxes[chart.transitions[a.transition][1]]
        x, y = a.end
        on_side = (abs(x - target.x) < 1e-6 or abs(x - target.x - target.w) < 1e-6) and \
            target.y <= y <= target.y + target.h
        on_top = (abs(y - target.y) < 1e-6 or abs(y - target.y - target.h) < 1e-6) and \
            target.x <= x <= target.x + target.w
        assert on_side or on_top
        s, t = chart.transitions[a.transition][:2]
        (x0, y0), (x1, y1), (x2, y2) = a.start, a.mid, a.end
        for k in range(2, 63):  # the curve's points, away from its ends
            u = k / 64
            x = (1 - u) ** 2 * x0 + 2 * u * (1 - u) * x1 + u * u * x2
            y = (1 - u) ** 2 * y0 + 2 * u * (1 - u) * y1 + u * u * y2
            for b in drawing.boxes:
                if not (_related(chart, s, b.state) or _related(chart, t, b.state)):
                    assert not (b.x < x < b.x + b.w and b.y < y < b.y + b.h), \
                        (chart.transitions[a.transition], chart.states[b.state].name)
                elif _related(chart, s, b.state) and _related(chart, t, b.state) and \
                        b.state not in (s, t):  # a state holding both ends holds the arrow
                    assert b.x <= x <= b.x + b.w and b.y <= y <= b.y + b.h, \
                        (chart.transitions[a.transition], chart.states[b.state].name)
    for i, p in enumerate(labels):
        for q in texts + labels[:i]:
            assert not (p[0] < q[2] and q[0] < p[2] and p[1] < q[3] and q[1] < p[3])
        for b in drawing.boxes:  # inside a box or outside it, not across its border
            inside = b.x <= p[0] and p[2] <= b.x + b.w and b.y <= p[1] and p[3] <= b.y + b.h
            outside = p[2] <= b.x or b.x + b.w <= p[0] or p[3] <= b.y or b.y + b.h <= p[1]
            assert inside or outside, (labels.index(p), chart.states[b.state].name)
    assert 0 < drawing.width < 2000 and 0 < drawing.height < 600
    ys = [b.y + b.h for b in drawing.boxes] + [p[3] for p in labels]
    assert drawing.height - max(ys) < 40  # no empty band below (a control point is no ink)


def test_draw_chart_command(tmp_path, capsys):
    out = tmp_path / "s.svg"
    assert main(["draw", str(CHARTS[0]), "--chart", "S", "-o", str(out)]) == 0
    assert "chart S, 5 states, 5 transitions" in capsys.readouterr().out
    svg = out.read_text()
    assert 'id="state:1"' in svg and "[w &gt; limit]" in svg
    assert main(["draw", str(CHARTS[0]), "--chart", "Wave"]) == 2
    assert "block 'Wave' (sine) is not a chart; charts: S" in capsys.readouterr().err
    assert main(["draw", str(CHARTS[0]), "--chart", "Z"]) == 2
    assert "no block 'Z'" in capsys.readouterr().err
