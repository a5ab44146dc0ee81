"""A run with a chart writes the chart's drawing beside diagram.svg and its report shows the
drawing, the counts and the states entered, from the run directory's files alone."""
from pathlib import Path

import numpy as np

import blocksim
from blocksim.report.run_report import write_run_report

CORPUS = Path(__file__).parents[1] / "accel" / "corpus"


def test_the_report_shows_each_chart(tmp_path):
    out = tmp_path / "run"
    result = blocksim.run(CORPUS / "chart_modes.yaml", {"simulation.mode": "normal"}, out=out,
                          plots=True)
    assert "chart_S.svg" in result.meta["files"]
    with np.load(out / "results.npz") as z:
        t, state = z["chart_t"], z["chart_state"]
    # the journal counts are the meta.json counts
    names = result.meta["chart_states"]
    counts = result.meta["charts"]["S"]["entries"]
    assert {n: int(np.sum(state == k)) for k, n in enumerate(names)} == \
        {f"S.{n}": c for n, c in counts.items()}
    assert t[0] == 0.0 and np.all(np.diff(t) >= 0)
    (out / "report.html").unlink()
    html = write_run_report(out).read_text()
    assert '<section id="charts">' in html and "States entered" in html
    assert "Run.Slow -&gt; Run.Fast [w &gt; limit]" in html
    assert html.count("data:image/svg+xml") >= 2  # the diagram and the chart
