"""The sweep report: `blocksim sweep` leaves a self-contained report.html beside summary.csv
with the table of runs, the failed runs and their messages, and the metric figures; in a
real browser (where chromium is installed) clicking a header sorts the table."""
import json

import pytest
from browser import Browser, executable
from report_checks import check_self_contained

import blocksim
from blocksim.batch.table import cell_value, read_rows
from blocksim.cli import main

# x' = x^2 escapes to infinity at t = 1/x0: by t = 1.5 the runs from x0 = 1 and 2 fail,
# the others end at x(1.5) = x0 / (1 - 1.5 x0).
BLOWUP = """\
blocksim: 1
name: blowup
blocks:
  X: {type: integrator, x0: 1}
  Sq: {type: function, expr: "x**2", inputs: [x]}
wires: [X -> Sq, Sq -> X]
simulation: {stop: 1.5}
record: {x: X.y}
"""
X0 = [-1, 0.25, 0.5, 1, 2]


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    base = tmp_path_factory.mktemp("sweep")
    diagram = base / "blowup.yaml"
    diagram.write_text(BLOWUP)
    out = base / "out"
    blocksim.sweep(diagram, grid={"blocks.X.x0": X0}, metrics={"xf": "final(x)", "top": "max(x)"},
                   workers=1, out=out)
    return out


def test_sweep_writes_a_self_contained_report(sweep_dir):
    text = (sweep_dir / "report.html").read_text(encoding="utf-8")
    page, images = check_self_contained(text)
    meta = json.loads((sweep_dir / "sweep.json").read_text())
    words = page.words
    for column in meta["columns"]:
        assert column in words
    rows = [{k: cell_value(v) for k, v in row.items()}
            for _, row in read_rows(sweep_dir / "summary.csv")]
    assert [r["status"] for r in rows] == ["ok", "ok", "ok", "failed", "failed"]
    for row in rows:
        if row["status"] == "failed":
            assert row["message"] in words  # in the table and among the failed runs
            assert words.count(row["message"]) == 2
    # the table: one row per run, numbers sortable by their full value
    table = text[text.index('<table class="sortable"'):]
    table = table[:table.index("</table>")]
    assert table.count("<tr") == 1 + len(X0)
    xf = [row["xf"] for row in rows if row["status"] == "ok"]
    for value, x0 in zip(xf, X0):
        assert value == pytest.approx(x0 / (1 - 1.5 * x0), rel=1e-3)
        assert f'data-value="{value!r}"' in table
    kinds = sorted(kind for kind, _ in images.values())
    assert kinds == ["image/png"] * len(meta["figures"]) + ["image/svg+xml"]
    assert len(meta["figures"]) == 2
    # the status table says where and in which mode the runs went
    modes = meta["execution"]["modes"]
    assert sum(modes.values()) == len(X0) and len(modes) == 1
    assert f">{next(iter(modes))}<" in text and "diagram built / re-parameterised" in words


def test_report_command_rebuilds_a_sweep_report(sweep_dir, capsys):
    before = (sweep_dir / "report.html").read_text(encoding="utf-8")
    (sweep_dir / "report.html").unlink()
    assert main(["report", str(sweep_dir)]) == 0
    assert (sweep_dir / "report.html").read_text(encoding="utf-8") == before


@pytest.mark.skipif(executable() is None, reason="chromium is not installed")
def test_sweep_table_sorts_in_a_browser(sweep_dir):
    browser = Browser()
    try:
        page = browser.open(sweep_dir / "report.html")
        assert page.problems() == []
        widths = page.evaluate("Array.from(document.images).map(i => i.complete && i.naturalWidth)")
        assert widths and all(w > 0 for w in widths)
        column = """(name => { const table = document.getElementById('runs');
            const heads = Array.from(table.tHead.rows[0].cells).map(c => c.textContent);
            const i = heads.indexOf(name);
            return Array.from(table.tBodies[0].rows).map(r => r.cells[i].getAttribute('data-value')); })"""
        click = """(name => Array.from(document.querySelectorAll('#runs th'))
            .find(th => th.textContent === name).click())"""
        xf = [x0 / (1 - 1.5 * x0) for x0 in X0[:3]]
        page.evaluate(f"{click}('xf')")
        ascending = page.evaluate(f"{column}('xf')")
        assert [float(v) for v in ascending[:3]] == pytest.approx(sorted(xf), rel=1e-3)
        assert ascending[3:] == ["", ""]  # failed runs have no value: last
        page.evaluate(f"{click}('xf')")
        descending = page.evaluate(f"{column}('xf')")
        assert [float(v) for v in descending[:3]] == pytest.approx(sorted(xf, reverse=True), rel=1e-3)
        assert descending[3:] == ["", ""]
        page.evaluate(f"{click}('run')")
        assert page.evaluate(f"{column}('run')") == [str(i) for i in range(len(X0))]
        assert page.problems() == []
    finally:
        browser.close()


# the lag tau x' = 1 - x, x(0) = 0, and a noise source of power 0 whose seed a sweep may draw
LAG = """\
blocksim: 1
name: lag
parameters: {tau: 1.0}
blocks:
  One: {type: constant, value: 1}
  Noise: {type: noise, power: 0, seed: 1}
  S: {type: sum, signs: "+-+"}
  G: {type: gain, K: 1/tau}
  I: {type: integrator}
wires: [One -> S.u1, I -> S.u2, Noise -> S.u3, S -> G, G -> I]
simulation: {stop: 2, rtol: 1e-10, atol: 1e-12, output_interval: 0.5}
record: {x: I.y}
"""


def test_a_monte_carlo_report_gives_each_test_its_pass_rate_and_a_scatter(tmp_path):
    # a true/false metric was a one-bar histogram of 0s and 1s, every figure's caption was
    # cut ("high: histogram over "), and a Monte Carlo had histograms only. x(2) = 1 -
    # exp(-2 / tau) > 0.6 exactly when tau < 2 / ln(2.5) = 2.18: the runs true and false
    # follow from the drawn tau alone
    import math
    import re

    from blocksim.batch.plot import caption
    from blocksim.report.sweep_report import MAX_FALSE

    (tmp_path / "lag.yaml").write_text(LAG)
    (tmp_path / "mc.yaml").write_text(
        "blocksim-sweep: 1\ndiagram: lag.yaml\nsamples: 16\nrandom:\n"
        "  parameters.tau: uniform(1, 4)\n  blocks.Noise.seed: integers(0, 9)\nseed: 5\n"
        "metrics: {final_x: final(x), high: final(x) > 0.6}\n")
    out = tmp_path / "out"
    table = blocksim.sweep(tmp_path / "mc.yaml", workers=1, out=out, keep="metrics")
    taus = table.column("parameters.tau")
    false = [i for i, tau in enumerate(taus) if not tau < 2 / math.log(2.5)]
    assert 0 < len(false) < 16
    assert table.column("high") == [float(i not in false) for i in range(16)]
    text = (out / "report.html").read_text(encoding="utf-8")
    page, images = check_self_contained(text)
    assert f"true in {16 - len(false)} of 16 runs with a value" in page.words
    section = text[text.index('id="tests"'):text.index('id="table"')]
    listed = re.findall(r'<tr><td class="num">(\d+)</td>', section)
    assert listed == [str(i) for i in false[:MAX_FALSE]]
    if len(false) > MAX_FALSE:
        assert f"The first {MAX_FALSE} of the {len(false)} runs where it is false" in section
    # the runs' table shows the test as words, sorting as 0 and 1
    assert '<td data-value="0">false</td>' in text and '<td data-value="1">true</td>' in text
    meta = json.loads((out / "sweep.json").read_text())
    # the seed is drawn but names a random stream: no panel for it
    assert [(f["metric"], f["kind"], f["paths"]) for f in meta["figures"]] == [
        ("final_x", "histogram", []), ("final_x", "scatter", ["parameters.tau"]),
        ("high", "fraction", []), ("high", "scatter", ["parameters.tau"])]
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", text)
    assert captions == [caption(f) for f in meta["figures"]] and len(captions) == 4
    assert sum(kind == "image/png" for kind, _ in images.values()) == 4
