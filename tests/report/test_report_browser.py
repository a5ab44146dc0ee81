"""Reports in a real browser: headless Chromium (Debian package `chromium`) opens each page
from disk; it must load with no console error, decode every image, ask the network for
nothing, and its script must work. Skipped where no chromium is installed."""
from pathlib import Path

import pytest

import blocksim
from blocksim.cli import main

from browser import Browser, executable

pytestmark = pytest.mark.skipif(executable() is None, reason="chromium is not installed")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def browser():
    b = Browser()
    yield b
    b.close()


def open_clean(browser, path):
    """Open a report; assert it loaded cleanly and return the page."""
    page = browser.open(path)
    assert page.problems() == []
    page_url = f"file://{Path(path).resolve()}"
    assert [u for u in page.requests() if u != page_url and not u.startswith("data:")] == []
    sizes = page.evaluate("Array.from(document.images).map(i => [i.alt, i.complete, i.naturalWidth])")
    assert sizes and all(complete and width > 0 for _, complete, width in sizes), sizes
    # animations written as MP4 (asked for, ffmpeg installed) must play: wait for their first
    # frame
    videos = page.evaluate("""Promise.all(Array.from(document.querySelectorAll('video')).map(v =>
        new Promise(done => { const report = () => done([v.videoWidth, v.error && v.error.code]);
            if (v.readyState >= 2) { report(); }
            else { v.addEventListener('loadeddata', report); v.addEventListener('error', report); }
        })))""")
    assert all(width > 0 and error is None for width, error in videos), videos
    return page


def test_run_report_loads_and_every_image_decodes(browser, tmp_path):
    out = tmp_path / "demo1"
    blocksim.run(ROOT / "diagrams" / "demo1.yaml", overrides={"simulation.stop": 1}, out=out,
                 plots=True)
    page = open_clean(browser, out / "report.html")
    assert page.evaluate("document.images.length + document.querySelectorAll('video').length") == 4
    # the drawing toggles between fitting the page and its full size
    toggled = page.evaluate("(() => { const i = document.querySelector('.diagram img'); i.click();"
                            " const a = i.classList.contains('natural'); i.click();"
                            " return [a, i.classList.contains('natural')]; })()")
    assert toggled == [True, False]


def test_failed_run_report_loads(browser, tmp_path):
    path = tmp_path / "blowup.yaml"
    path.write_text("blocksim: 1\nblocks:\n  X: {type: integrator, x0: 1}\n"
                    "  Sq: {type: function, expr: 'x**2', inputs: [x]}\n  Sc: {type: scope}\n"
                    "wires: [X -> Sq, Sq -> X, X -> Sc]\nsimulation: {stop: 2}\n")
    assert main(["run", str(path), "--out", str(tmp_path / "run"), "--quiet"]) == 3
    page = open_clean(browser, tmp_path / "run" / "report.html")
    assert page.evaluate("document.querySelector('.status').textContent") == "failed"
