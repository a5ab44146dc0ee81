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


def _inside(inner, outer):
    return (outer.x <= inner.x and inner.x + inner.w <= outer.x + outer.w
            and outer.y <= inner.y and inner.y + inner.h <= outer.y + outer.h)


def _apart(a, b):
    return a.x + a.w <= b.x or b.x + b.w <= a.x or a.y + a.h <= b.y or b.y + b.h <= a.y


@pytest.mark.parametrize("path", CHARTS, ids=lambda p: p.stem)
def test_chart_geometry(path):
    chart = chart_of(blocksim.load(path), "S")
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
    for i, p in enumerate(labels):
        for q in texts + labels[:i]:
            assert not (p[0] < q[2] and q[0] < p[2] and p[1] < q[3] and q[1] < p[3])
    assert 0 < drawing.width < 2000 and 0 < drawing.height < 600


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
