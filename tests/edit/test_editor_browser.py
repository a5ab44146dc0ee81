"""The editor in a real browser (headless Chromium), driven through its page as a user drives
it: pointer drags from the palette, from port to port, clicks, double-clicks, keys and typed
text (tests/browser.py sends them over the DevTools protocol). Skipped where no chromium is
installed. One browser serves the module; each test gets its own server and page."""
import contextlib
import difflib
import json
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.cli import main
from blocksim.language.diagram import index_text
from browser import CTRL, Browser, executable
from editor_server import ROOT, Running, copy_diagram

pytestmark = pytest.mark.skipif(executable() is None, reason="chromium is not installed")

DIAGRAMS = sorted((ROOT / "diagrams").glob("*.yaml"))


@pytest.fixture(scope="module")
def browser():
    b = Browser()
    yield b
    b.close()


class Editor:
    """The page of a running editor, with what a test does on it."""

    def __init__(self, page, server):
        self.page = page
        self.server = server

    def js(self, expression):
        return self.page.evaluate(expression)

    def idle(self):
        """Wait until the page has every answer it asked for (and has drawn it)."""
        self.js("window.blocksimEditor.idle()")

    def rect(self, selector):
        r = self.js(f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
                    f" if (!e) return null; e.scrollIntoView({{block: 'nearest'}});"
                    f" const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; }})()")
        assert r is not None, f"no {selector} on the page"
        return r

    def centre(self, selector):
        x, y, w, h = self.rect(selector)
        return x + w / 2, y + h / 2

    def names(self, attribute):
        return self.js(f"Array.from(document.querySelectorAll('[{attribute}]'))"
                       f".map(e => e.getAttribute('{attribute}'))")

    def add(self, btype, x, y):
        """Drag `btype` from the palette to (x, y) of the canvas; the new block's name."""
        before = set(self.names("data-block"))
        canvas = self.rect("#canvas")
        self.page.drag(self.centre(f'[data-palette="{btype}"]'), (canvas[0] + x, canvas[1] + y))
        self.idle()
        (made,) = set(self.names("data-block")) - before
        return made

    def wire(self, src, dst):
        self.page.drag(self.centre(f'[data-port="{src}"] .hit'),
                       self.centre(f'[data-port="{dst}"] .hit'))
        self.idle()

    def select(self, block):
        x, y, w, h = self.rect(f'[data-block="{block}"] rect')
        self.page.click(x + 4, y + h - 4)
        self.idle()

    def rename(self, block, name):
        """Double-click the block's name, type the new one, Enter."""
        self.page.click(*self.centre(f'[data-block="{block}"] text.name'), clicks=2)
        self.idle()
        self.js("document.querySelector('input.rename').select()")
        self.page.type(name)
        self.page.key("Enter")
        self.idle()

    def fill(self, label, text):
        """Type `text` into the inspector field labelled `label`, then Enter."""
        self.page.click(*self.centre(f'#inspector [aria-label="{label}"]'))
        self.js(f"document.querySelector('#inspector [aria-label=\"{label}\"]').select()")
        self.page.type(text)
        self.page.key("Enter")
        self.idle()

    def choose(self, label, value):
        self.js(f"(() => {{ const s = document.querySelector('#inspector [aria-label=\"{label}\"]');"
                f" s.value = {json.dumps(value)}; s.dispatchEvent(new Event('change')); }})()")
        self.idle()

    def action(self, name):
        self.page.click(*self.centre(f'[data-action="{name}"]'))
        self.idle()

    def deselect(self):
        self.page.key("Escape")
        self.idle()

    def view(self):
        return self.js("window.blocksimEditor.state.view")

    def wait_run(self, timeout=120):
        deadline = time.monotonic() + timeout
        while self.js("document.querySelector('#progress').dataset.state") in (None, "starting", "running", "idle"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        self.idle()
        return self.js("document.querySelector('#progress').dataset.state")


@contextlib.contextmanager
def editing(browser, path, runs):
    with Running(path, runs) as server:
        page = browser.open(server.url, size=(1400, 900))
        editor = Editor(page, server)
        editor.idle()
        try:
            yield editor
            assert page.problems() == []
        finally:
            page.close()


def test_msd_built_from_an_empty_file_runs_as_the_shipped_msd(browser, tmp_path):
    """Seven blocks dragged from the palette, renamed in place, wired port to port, their
    parameters and the diagram's set in the inspector, three signals recorded, saved: the
    file runs to the same results as diagrams/msd.yaml (every array equal, bit for bit)."""
    path = tmp_path / "msd.yaml"
    with editing(browser, path, tmp_path / "runs") as ed:
        for name, value in (("m", "1.0"), ("c", "0.4"), ("k", "4.0")):
            ed.fill("new parameters name", name)
            ed.fill("new parameters value", value)
        ed.fill("simulation.stop", "20")
        ed.choose("simulation.solver", "rk45")
        ed.fill("simulation.rtol", "1e-6")
        ed.fill("simulation.atol", "1e-9")
        spots = {"Force": ("step", 60, 60), "Sum": ("sum", 200, 80), "InvMass": ("gain", 330, 80),
                 "Velocity": ("integrator", 460, 80), "Position": ("integrator", 600, 80),
                 "Damping": ("gain", 460, 230), "Spring": ("gain", 600, 230)}
        for name, (btype, x, y) in spots.items():
            made = ed.add(btype, x, y)
            ed.rename(made, name)
        assert sorted(ed.names("data-block")) == sorted(spots)
        ed.select("Sum")
        ed.fill("blocks.Sum.signs", "+--")
        for block, k in (("InvMass", "1/m"), ("Damping", "c"), ("Spring", "k")):
            ed.select(block)
            ed.fill(f"blocks.{block}.K", k)
        for src, dst in (("Force.y", "Sum.u1"), ("Damping.y", "Sum.u2"), ("Spring.y", "Sum.u3"),
                         ("Sum.y", "InvMass.u"), ("InvMass.y", "Velocity.u"),
                         ("Velocity.y", "Position.u"), ("Velocity.y", "Damping.u"),
                         ("Position.y", "Spring.u")):
            ed.wire(src, dst)
        assert len(ed.names("data-wire")) == 8
        for wire, name in (("Position.y->Spring.u", "x"), ("Velocity.y->Damping.u", "v"),
                           ("Force.y->Sum.u1", "F")):
            x, y = ed.js(f"(() => {{ const l = document.querySelector('[data-wire=\"{wire}\"] .line');"
                         f" const p = l.getPointAtLength(l.getTotalLength() / 2);"
                         f" const m = l.getScreenCTM(); return [p.x * m.a + m.e, p.y * m.d + m.f]; }})()")
            ed.page.click(x, y)
            ed.idle()
            ed.fill("record name", name)
        assert ed.view()["problems"] == []
        ed.action("save")
        assert not ed.view()["dirty"]
    for diagram, out in ((path, tmp_path / "built"), (ROOT / "diagrams" / "msd.yaml", tmp_path / "shipped")):
        assert main(["run", str(diagram), "--out", str(out), "--no-plots", "--quiet"]) == 0
    built, shipped = np.load(tmp_path / "built" / "results.npz"), np.load(tmp_path / "shipped" / "results.npz")
    assert sorted(built.files) == sorted(shipped.files) == ["F", "t", "v", "x"]
    for key in shipped.files:
        assert np.array_equal(built[key], shipped[key]), key


@pytest.mark.parametrize("path", DIAGRAMS, ids=lambda p: p.stem)
def test_every_diagram_opens_whole_and_saves_byte_identical(browser, path, tmp_path):
    """Each shipped diagram: every block, port and wire on the canvas (ids as the contract
    says), no problem, and Save leaves the file as it was, byte for byte."""
    path = copy_diagram(path.name, tmp_path)
    original = path.read_bytes()
    model = blocksim.load(path)
    with editing(browser, path, tmp_path / "runs") as ed:
        assert sorted(ed.names("data-block")) == sorted(model.spec.blocks)
        ports = set(ed.names("data-port"))
        for block in model.blocks:
            ins, outs = block.ports()
            assert {f"{block.name}.{p.name}" for p in ins + outs} <= ports
        blocks = {b.name: b.ports() for b in model.blocks}
        expected = set()
        for w in model.spec.written_wires:  # the port a file leaves out is the block's only one
            src = w.src.port or blocks[w.src.block][1][0].name
            dst = w.dst.port or blocks[w.dst.block][0][0].name
            expected.add(f"{w.src.block}.{src}{index_text(w.src.index)}->{w.dst.block}.{dst}")
        assert set(ed.names("data-wire")) == expected
        assert ed.view()["problems"] == []
        ed.action("save")
    assert path.read_bytes() == original


def test_one_gain_changed_in_demo3_changes_that_line_only(browser, tmp_path):
    path = copy_diagram("demo3.yaml", tmp_path)
    before = path.read_text()
    with editing(browser, path, tmp_path / "runs") as ed:
        ed.select("Kp")
        assert ed.js("document.querySelector('#inspector [aria-label=\"blocks.Kp.K\"]').value") == "100"
        ed.fill("blocks.Kp.K", "50")
        ed.action("save")
    diff = [d for d in difflib.unified_diff(before.splitlines(), path.read_text().splitlines(),
                                            lineterm="", n=0) if d[:1] in "+-"][2:]
    assert diff == ["-  Kp:       {type: gain, K: 100}", "+  Kp:       {type: gain, K: 50}"]
