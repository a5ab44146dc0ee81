"""docs/charts.md followed as written: its commands run in order (in a folder holding the
page's file and the repository's diagrams), the outputs it shows are the commands' outputs,
the chart blocks it shows are those of diagrams/supervisor.yaml and gearbox.yaml, its
figures exist, and the numbers it states are the runs' (the truth behind them is checked in
tests/chart)."""
import json
import os
from pathlib import Path

import numpy as np
import pytest
from docfiles import DOCS, blocks, check_ran, follow

ROOT = Path(__file__).resolve().parents[2]
PAGE = "charts.md"


@pytest.fixture(scope="module")
def followed(tmp_path_factory):
    work = tmp_path_factory.mktemp("charts")
    os.symlink(ROOT / "diagrams", work / "diagrams")
    return work, follow(PAGE, work, ROOT)


def test_the_commands_run_and_show_what_the_page_shows(followed):
    work, results = followed
    check_ran(results, "")
    everything = "\n".join(r.stdout for _, _, r in results)
    shown = [text for lang, name, text in blocks(PAGE) if not lang and not name]
    assert shown
    for text in shown:
        for line in text.splitlines():
            assert line in everything, line


def test_the_chart_blocks_shown_are_the_diagrams(followed):
    snippets = [text for lang, name, text in blocks(PAGE) if lang == "yaml" and not name]
    diagrams = ("supervisor.yaml", "gearbox.yaml", "gearbox.yaml")  # the chart, the tables
    assert len(snippets) == len(diagrams)
    for snippet, diagram in zip(snippets, diagrams):
        assert snippet in (ROOT / "diagrams" / diagram).read_text()
    page = (DOCS / PAGE).read_text()
    for figure in ("supervisor_chart.png", "gearbox_chart.png"):
        assert f"(figures/{figure})" in page and (DOCS / "figures" / figure).is_file()


def test_the_numbers_stated_are_the_runs(followed):
    work, _ = followed
    fault = np.load(work / "runs" / "fault" / "results.npz")
    assert f"{fault['chart_t'][-1]:.4f}" == "2.6956"
    calm = np.load(work / "runs" / "supervisor" / "results.npz")
    assert 0.002 < np.max(np.abs(calm["e"])) < 0.004  # "near 3 mrad"
    meta = json.loads((work / "runs" / "gearbox" / "meta.json").read_text())
    gear = np.load(work / "runs" / "gearbox" / "results.npz")
    assert [f"{t:.2f}" for t in gear["chart_t"][1:]] == ["5.00", "10.00", "15.00", "71.67",
                                                         "95.07"]
    assert (work / "runs" / "gearbox" / "chart_Shift.svg").is_file()
    assert meta["charts"]["Shift"]["entries"] == {"First": 1, "Second": 2, "Third": 2,
                                                  "Fourth": 1}
