"""The editor in a real browser (headless Chromium), driven through its page as a user drives
it: pointer drags from the palette, from port to port, clicks, double-clicks, keys and typed
text (tests/browser.py sends them over the DevTools protocol). Skipped where no chromium is
installed. One browser serves the module; each test gets its own server and page."""
import contextlib
import difflib
import json
import time

import numpy as np
import pytest

import blocksim
from blocksim.cli import main
from blocksim.language.diagram import index_text, port_keys
from browser import CTRL, SHIFT, Browser, executable
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
        made = set(self.names("data-block")) - before
        assert len(made) == 1, (btype, self.js("document.querySelector('#toast').textContent"),
                                self.page.problems())
        return made.pop()

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
    spec = model.spec
    with editing(browser, path, tmp_path / "runs") as ed:
        # the diagram's own inputs and outputs are port boxes, as a subsystem's inside it
        assert sorted(ed.names("data-block")) == sorted(
            [n for n in spec.blocks if n not in spec.inputs] + port_keys(spec.inputs,
                                                                          spec.outputs))
        ports = set(ed.names("data-port"))
        for block in model.blocks:
            if block.name not in spec.inputs:
                ins, outs = block.ports()
                assert {f"{block.name}.{p.name}" for p in ins + outs} <= ports
        blocks = {b.name: b.ports() for b in model.blocks}
        expected = set()
        for w in spec.written_wires:  # the port a file leaves out is the block's only one
            src = w.src.port or blocks[w.src.block][1][0].name
            dst = w.dst.port or blocks[w.dst.block][0][0].name
            expected.add(f"{w.src.block}.{src}{index_text(w.src.index)}->{w.dst.block}.{dst}")
        expected |= {f"in:{name}.{name}->{t.block}.{t.port}" for name, targets in
                     spec.inputs.items() for t in targets}
        expected |= {f"{t.block}.{t.port}->out:{name}.{name}" for name, t in spec.outputs.items()}
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


def box_at(ed, name):
    return next(b for b in ed.view()["boxes"] if b["key"] == name)


def test_canvas_gestures_move_delete_undo_copy_paste(browser, tmp_path):
    path = copy_diagram("msd.yaml", tmp_path)
    with editing(browser, path, tmp_path / "runs") as ed:
        scale = ed.js("window.blocksimEditor.state.world.k")
        before = box_at(ed, "Scope")
        x, y, w, h = ed.rect('[data-block="Scope"] rect')
        ed.page.drag((x + 5, y + h - 5), (x + 5 + 40 * scale, y + h - 5 + 60 * scale))
        ed.idle()
        after = box_at(ed, "Scope")
        assert (round(after["x"] - before["x"]), round(after["y"] - before["y"])) == (40, 60)
        layout = load(path, ed)["layout"]  # the level is positioned now: every block
        assert set(layout) == set(ed.names("data-block"))
        # a wire selected and deleted with the key, then undone and redone with Ctrl+Z / Ctrl+Y
        ed.page.click(*wire_point(ed, "Velocity.y->Scope.u2"))
        ed.idle()
        ed.page.key("Delete")
        ed.idle()
        assert "Velocity.y->Scope.u2" not in ed.names("data-wire")
        ed.page.key("z", modifiers=CTRL)
        ed.idle()
        assert "Velocity.y->Scope.u2" in ed.names("data-wire")
        ed.page.key("y", modifiers=CTRL)
        ed.idle()
        assert "Velocity.y->Scope.u2" not in ed.names("data-wire")
        # two blocks selected with shift-click, copied, pasted with the wire between them
        ed.select("Velocity")
        x, y, w, h = ed.rect('[data-block="Position"] rect')
        ed.page.click(x + 4, y + h - 4, modifiers=SHIFT)
        ed.idle()
        ed.page.key("c", modifiers=CTRL)
        ed.idle()
        ed.page.key("v", modifiers=CTRL)
        ed.idle()
        assert {"Velocity1", "Position1"} <= set(ed.names("data-block"))
        assert "Velocity1.y->Position1.u" in ed.names("data-wire")
        # a block deleted takes its wires
        ed.select("Damping")
        ed.page.key("Delete")
        ed.idle()
        assert "Damping" not in ed.names("data-block")
        assert not [w for w in ed.names("data-wire") if "Damping" in w]
        assert any("Sum" in p["text"] and "u2" in p["text"] for p in ed.view()["problems"])
        # zoom and pan change the view, not the diagram
        ed.action("zoom-in")
        assert ed.js("window.blocksimEditor.state.world.k") == pytest.approx(scale * 1.25)
        ed.action("fit")
        ed.action("save")
    data = blocksim.language.yamlio.load_yaml_text(path.read_text())
    assert "Damping" not in data["blocks"] and "Position1" in data["layout"]


def load(path, ed):
    from blocksim.language.yamlio import load_yaml_text
    return load_yaml_text(ed.server.session.doc.sources[path.resolve()].text)


def wire_point(ed, wire):
    """A point on a wire's line, in page pixels."""
    return ed.js(f"(() => {{ const l = document.querySelector('[data-wire=\"{wire}\"] .line');"
                 f" const p = l.getPointAtLength(l.getTotalLength() / 2);"
                 f" const m = l.getScreenCTM(); return [p.x * m.a + m.e, p.y * m.d + m.f]; }})()")


def test_the_inspector_checks_as_the_user_types(browser, tmp_path):
    path = copy_diagram("demo3.yaml", tmp_path)
    with editing(browser, path, tmp_path / "runs") as ed:
        ed.select("Kd")
        field = '#inspector [aria-label="blocks.Kd.K"]'
        ed.page.click(*ed.centre(field))
        ed.js(f"document.querySelector('{field}').select()")
        ed.page.type("2 *")
        deadline = time.monotonic() + 20
        while not ed.js("document.querySelector('[data-field=\"blocks.Kd.K\"] .problem') !== null"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        message = ed.js("document.querySelector('[data-field=\"blocks.Kd.K\"] .problem').textContent")
        assert "demo3.yaml:17: error: block 'Kd' parameter 'K'" in message
        assert not ed.view()["can_undo"]  # nothing written yet
        ed.page.type(" 10")
        ed.page.key("Enter")
        ed.idle()
        assert ed.view()["problems"] == []
        assert ed.view()["blocks"]["Kd"]["values"]["K"]["source"] == "2 * 10"


def test_the_palette_search_and_a_subsystem_opened_by_double_click(browser, tmp_path):
    path = copy_diagram("loop.yaml", tmp_path, ROOT / "tests" / "draw" / "data")
    with editing(browser, path, tmp_path / "runs") as ed:
        ed.page.click(*ed.centre("#search"))
        ed.page.type("transfer")
        ed.idle()
        shown = ed.js("Array.from(document.querySelectorAll('.entry')).filter(e => !e.hidden"
                      " && e.closest('details').open && !e.closest('details').hidden)"
                      ".map(e => e.dataset.palette)")
        assert "transfer_function" in shown and "gain" not in shown
        ed.js("document.querySelector('#search').select()")
        ed.page.key("Backspace")
        ed.idle()
        x, y, w, h = ed.rect('[data-block="Ctl"] rect')
        ed.page.click(x + w / 2, y + h - 4, clicks=2)
        ed.idle()
        assert ed.js("Array.from(document.querySelectorAll('#crumbs a')).map(a => a.textContent)") == \
            ["loop", "Ctl"]
        assert {"Err", "P", "I", "Int", "U", "in:r", "in:y", "out:u"} == set(ed.names("data-block"))
        assert "in:r.r->Err.u1" in ed.names("data-wire")
        ed.select("P")
        ed.fill("blocks.P.K", "Kp + 1")
        made = ed.add("gain", 100, 300)
        ed.action("fit")  # the subsystem's port boxes moved left of the new block
        ed.wire("in:r.r", f"{made}.u")
        assert f"in:r.r->{made}.u" in ed.names("data-wire")
        ed.page.click(*ed.centre('#crumbs a[data-level="0"]'))
        ed.idle()
        assert {"Ref", "Ctl", "Plant", "Scope"} == set(ed.names("data-block"))
        ed.action("save")
    text = path.read_text()
    assert "P: {type: gain, K: Kp + 1}" in text
    assert f"inputs: {{r: [Err.u1, {made}], y: Err.u2}}" in text


def test_run_shows_progress_plots_and_a_cursor_readout(browser, tmp_path):
    path = copy_diagram("msd.yaml", tmp_path)
    with editing(browser, path, tmp_path / "runs") as ed:
        ed.action("run")
        assert ed.wait_run() == "done"
        assert ed.js("document.querySelector('#progress-text').textContent").startswith("done")
        assert ed.js("document.querySelector('#results').hidden") is False
        canvases = ed.js("document.querySelectorAll('#plots canvas').length")
        assert canvases == 2  # the scope's two inputs, one axes each
        x, y, w, h = ed.rect("#plots canvas")
        ed.page.mouse("mouseMoved", x + w * 0.5, y + h / 2)
        ed.idle()
        readout = ed.js("document.querySelector('#plots .readout').innerText")
        assert readout.startswith("t = ") and "Position.y = " in readout
        # several recorded signals on one axis
        ed.page.click(*ed.centre('[data-plot="signals"]'))
        ed.idle()
        for signal in ("v", "F"):
            ed.page.click(*ed.centre(f'[data-signal="{signal}"]'))
            ed.idle()
        assert ed.js("document.querySelectorAll('#plots canvas').length") == 1
        x, y, w, h = ed.rect("#plots canvas")
        ed.page.mouse("mouseMoved", x + w * 0.4, y + h / 3)
        ed.idle()
        readout = ed.js("document.querySelector('#plots .readout').innerText")
        assert all(f"{s} = " in readout for s in ("x", "v", "F")), readout
        # drag across the plot to zoom in on time, double-click to come back
        x, y, w, h = ed.rect("#plots canvas")
        ed.page.drag((x + w * 0.3, y + h / 2), (x + w * 0.6, y + h / 2))
        assert (tmp_path / "runs" / "msd" / "results.npz").is_file()
    expected = blocksim.run(path)
    assert np.array_equal(np.load(tmp_path / "runs" / "msd" / "results.npz")["x"], expected["x"])


def test_a_failed_run_marks_its_block(browser, tmp_path):
    path = tmp_path / "blowup.yaml"
    path.write_text("blocksim: 1\nblocks:\n  X: {type: integrator, x0: 1}\n"
                    "  Sq: {type: function, expr: 'x**2', inputs: [x]}\n"
                    "  Last: {type: display}\n"
                    "wires: [X -> Sq, Sq -> X, X -> Last]\nsimulation: {stop: 2}\n")
    with editing(browser, path, tmp_path / "runs") as ed:
        ed.action("run")
        assert ed.wait_run() == "failed"
        # what the run printed (the display block's last value) is on the page too
        assert ed.js("document.querySelector('#results .messages').textContent").startswith("Last: ")
        marked = ed.js("Array.from(document.querySelectorAll('.box.run-error')).map(e => e.dataset.block)")
        error = ed.server.session.run.error
        assert marked == [error["block"]]
        assert ed.js("document.querySelector('#results .failure').textContent").startswith("simulation error:")
