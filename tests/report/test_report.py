"""The run report (report.html): one self-contained page per run, checked structurally (it
parses, names every block and recorded signal, refers to nothing outside itself, every image
decodes) and, where Debian's chromium is installed, in a real headless browser (it loads
without a console error and every image is decoded)."""
import json
import re
from pathlib import Path

import numpy as np
import pytest
from report_checks import check_self_contained

import blocksim
from blocksim.cli import main
from blocksim.report.run_report import run_report_html
from blocksim.engine.results import write_npz

ROOT = Path(__file__).resolve().parents[2]
DEMO1 = ROOT / "diagrams" / "demo1.yaml"
CASCADE = ROOT / "tests" / "draw" / "data" / "cascade.yaml"
BLOWUP = """\
blocksim: 1
name: blowup
description: x' = x^2 from x(0) = 1 escapes to infinity at t = 1
blocks:
  X: {type: integrator, x0: 1}
  Sq: {type: function, expr: "x**2", inputs: [x]}
  Sc: {type: scope}
wires: [X -> Sq, Sq -> X, X -> Sc]
simulation: {stop: 2}
record: {x: X.y}
"""


@pytest.fixture(scope="module")
def demo1_run(tmp_path_factory):
    """demo1 for 2 s with its figures; no ffmpeg on the PATH, so the animation is a GIF
    (the browser tests see whichever the machine writes)."""
    out = tmp_path_factory.mktemp("demo1")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PATH", str(tmp_path_factory.mktemp("empty")))
        blocksim.run(DEMO1, overrides={"simulation.stop": 2}, out=out, plots=True)
    return out


def test_run_writes_a_self_contained_report(demo1_run):
    text = (demo1_run / "report.html").read_text(encoding="utf-8")
    page, images = check_self_contained(text)
    meta = json.loads((demo1_run / "meta.json").read_text())
    words = page.words
    for block in meta["configuration"]["blocks"]:
        assert block in words
    for name in ("q", "qd"):
        assert f"Robot.{name}" in words
    assert "complete" in words and "rk45" in words and "p560" in words and "puma560" in words
    # the figures and the animation, each named by its block, and the diagram's drawing
    kinds = sorted(kind for kind, _ in images.values())
    assert kinds == ["image/gif", "image/png", "image/png", "image/svg+xml"]
    svg = next(data for kind, data in images.values() if kind == "image/svg+xml")
    assert svg == (demo1_run / "diagram.svg").read_bytes()
    assert b">Robot</text>" in svg
    # the final values are the last recorded row
    with np.load(demo1_run / "results.npz") as npz:
        last = npz["q"][-1]
    assert f"{last[1]:.6g}" in words


def test_animation_written_both_ways_is_shown_as_its_gif(tmp_path, stand_in_ffmpeg):
    """Asked for MP4 with ffmpeg on the PATH, the animation is also an MP4 file; the report
    shows the GIF (report.md: "the animations (GIF)"). A stand-in ffmpeg writes the MP4."""
    stand_in_ffmpeg("sys.stdin.buffer.read()\n"
                    "open(sys.argv[-1], 'wb').write(b'not a real video')\n", alone=True)
    out = tmp_path / "demo1"
    blocksim.run(DEMO1, overrides={"simulation.stop": 0.5}, out=out, plots=True, mp4=True)
    meta = json.loads((out / "meta.json").read_text())
    assert {"plot.gif", "plot.mp4", "plot.png"} <= set(meta["files"])
    _, images = check_self_contained((out / "report.html").read_text(encoding="utf-8"))
    assert sorted(kind for kind, _ in images.values()) == [
        "image/gif", "image/png", "image/png", "image/svg+xml"]


def test_report_command_rebuilds_the_same_page(demo1_run, capsys):
    before = (demo1_run / "report.html").read_text(encoding="utf-8")
    (demo1_run / "report.html").unlink()
    assert main(["report", str(demo1_run)]) == 0
    after = (demo1_run / "report.html").read_text(encoding="utf-8")
    assert after == before


def test_failed_run_reports_status_and_error(tmp_path):
    path = tmp_path / "blowup.yaml"
    path.write_text(BLOWUP)
    out = tmp_path / "run"
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 3
    page, _ = check_self_contained((out / "report.html").read_text(encoding="utf-8"))
    meta = json.loads((out / "meta.json").read_text())
    assert meta["complete"] is False
    assert "failed" in page.words and meta["error"] in page.words


def test_no_plots_run_gets_a_report_on_request(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", str(CASCADE), "--out", str(out), "--quiet", "--no-plots",
                 "--set", "blocks.U.time=0.25"]) == 0
    assert not (out / "report.html").exists() and not (out / "diagram.svg").exists()
    assert main(["report", str(out)]) == 0
    page, images = check_self_contained((out / "report.html").read_text(encoding="utf-8"))
    svg = next(data for kind, data in images.values() if kind == "image/svg+xml")
    # drawn from the diagram file with the run's overrides
    assert b"time = 0.25" in svg and b">Ctl</text>" in svg
    for block in ("U", "F/S", "Ctl/Inner/I", "Sc"):
        assert block in page.words
    assert "No figures" in page.words


def test_events_summary_when_the_run_had_events(demo1_run, tmp_path):
    """The hybrid engine's bookkeeping (meta.json `events`, `event_blocks`; results.npz
    `events_t`, `events_block`) is shown when present; absent, there is no such section."""
    assert 'id="events"' not in (demo1_run / "report.html").read_text()
    run = tmp_path / "run"
    run.mkdir()
    for f in demo1_run.iterdir():
        (run / f.name).write_bytes(f.read_bytes())
    meta = json.loads((run / "meta.json").read_text())
    meta["events"] = {"total": 3, "per_block": {"Robot": 2, "torque": 1}}
    meta["event_blocks"] = ["torque", "Robot"]
    (run / "meta.json").write_text(json.dumps(meta))
    with np.load(run / "results.npz") as npz:
        data = {k: npz[k] for k in npz.files if k != "t"}
        t = npz["t"]
    data["events_t"] = np.array([0.25, 0.5, 1.125])
    data["events_block"] = np.array([1.0, 0.0, 1.0])
    write_npz(run / "results.npz", t, data)
    assert main(["report", str(run)]) == 0
    page, _ = check_self_contained((run / "report.html").read_text())
    words = page.words
    assert "3 events" in words and "1.125" in words
    # the events arrays are bookkeeping, not recorded signals
    assert "events_t" not in words


def test_report_command_rejects_a_non_run_directory(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert "meta.json" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "nope")]) == 2


@pytest.mark.parametrize("name, text", [("meta.json", "[1, 2]"), ("meta.json", "{oops"),
                                        ("sweep.json", '"a string"')])
def test_report_command_names_an_unreadable_meta_file(tmp_path, capsys, name, text):
    (tmp_path / name).write_text(text)
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"cannot read {tmp_path / name}" in err and "Traceback" not in err


@pytest.mark.parametrize("solver, shown", [("rk45", ["rtol", "atol", "max_step"]),
                                           ("rk4", ["step"])])
def test_solver_section_lists_only_the_settings_the_solver_uses(tmp_path, solver, shown):
    settings = {"rtol": 1e-3, "atol": 1e-6, "max_step": 0.2, "step": 0.01,
                "output_interval": None}
    (tmp_path / "meta.json").write_text(json.dumps(
        {"name": "x", "complete": True, "solver": {"name": solver, **settings, "nsteps": 7}}))
    text = run_report_html(tmp_path)
    section = text[text.index('<section id="solver">'):]
    section = section[:section.index("</section>")]
    cells = re.findall(r"<td>([^<]*)</td>", section)
    assert cells == ["name", *shown, "nsteps"]


def test_configuration_values_read_as_the_diagram_writes_them(tmp_path):
    config = {"parameters": {"qf": "[pi/4, 0]"},
              "robots": {"p560": {"model": "puma560", "gravity": [0, 0, 9.81]}},
              "blocks": {"Motor": {"type": "transfer_function", "num": ["K"],
                                   "den": ["J*L", "b*R + K**2", 0]}}}
    (tmp_path / "meta.json").write_text(json.dumps(
        {"name": "x", "complete": True, "configuration": config}))
    words = check_self_contained(run_report_html(tmp_path))[0].words
    assert "num = [K], den = [J*L, b*R + K**2, 0]" in words
    assert "{model: puma560, gravity: [0, 0, 9.81]}" in words and "[pi/4, 0]" in words


def _scope_diagram(tmp_path, scope):
    """A diagram file whose one figure is the scope named `scope`."""
    path = tmp_path / f"{scope}.yaml"
    path.write_text(f"blocksim: 1\nname: figures\nblocks:\n  U: {{type: step, time: 0.5}}\n"
                    f"  {scope}: {{type: scope}}\nwires: [U -> {scope}]\nsimulation: {{stop: 1}}\n")
    return path


def test_a_previous_runs_figures_are_not_shown(tmp_path):
    """Two runs into one directory: the second run's report shows its own scope only, not
    the first run's figure still lying there (it is removed once the run's files are
    written), and `blocksim report` rebuilds the same page afterwards."""
    out = tmp_path / "run"
    for scope in ("Old", "New"):
        assert main(["run", str(_scope_diagram(tmp_path, scope)), "--out", str(out), "--quiet"]) == 0
    text = (out / "report.html").read_text(encoding="utf-8")
    page, images = check_self_contained(text)
    assert "New.png" in page.words and "Old.png" not in page.words
    assert sorted(kind for kind, _ in images.values()) == ["image/png", "image/svg+xml"]
    assert not (out / "Old.png").exists()
    assert main(["report", str(out)]) == 0
    assert (out / "report.html").read_text(encoding="utf-8") == text


def test_a_run_report_embeds_no_linked_file(tmp_path):
    """A figure or drawing in the run directory that is a symbolic link to a file outside
    it (meta.json lists it as the run's) is not embedded: only the directory's own files."""
    out = tmp_path / "run"
    assert main(["run", str(_scope_diagram(tmp_path, "S")), "--out", str(out), "--quiet"]) == 0
    secret = tmp_path / "secret.png"
    secret.write_bytes((out / "S.png").read_bytes() + b"SECRET-BYTES")
    (out / "S.png").unlink()
    (out / "S.png").symlink_to(secret)
    (out / "diagram.svg").unlink()
    (out / "diagram.svg").symlink_to(secret)
    assert main(["report", str(out)]) == 0
    page, images = check_self_contained((out / "report.html").read_text(encoding="utf-8"))
    assert "image/png" not in {kind for kind, _ in images.values()}
    assert b"SECRET-BYTES" not in b"".join(data for _, data in images.values())


MARKUP = """\
blocksim: 1
name: "x<b>&amp;\\"y'"
description: "ends </p><script>alert(1)</script> & \\"quoted\\""
blocks:
  U: {type: step, time: 0.5}
  F: {type: function, expr: "where(u < 0.5, 0, u)", inputs: [u]}
  Sc: {type: scope, title: "<i>t</i> & \\"q\\""}
wires: [U -> F, F -> Sc]
simulation: {stop: 1}
"""


def test_markup_in_names_and_parameters_is_shown_as_text(tmp_path):
    """A diagram's name, description and parameter strings may hold <, &, and quotes: the
    page shows them as written and they add no element (a <script> would run)."""
    path = tmp_path / "markup.yaml"
    path.write_text(MARKUP)
    out = tmp_path / "run"
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 0
    page, images = check_self_contained((out / "report.html").read_text(encoding="utf-8"))
    words = page.words
    for text in ('x<b>&amp;"y\'', 'ends </p><script>alert(1)</script> & "quoted"',
                 "where(u < 0.5, 0, u)", '<i>t</i> & "q"'):
        assert text in words, text
    assert [t for t, _ in page.tags if t in ("b", "i", "script")] == ["script"]  # the page's own
    svg = next(data for kind, data in images.values() if kind == "image/svg+xml")
    assert b"where(u &lt; 0.5, 0, u)" in svg  # parsed as XML by check_self_contained


def test_ctrl_c_while_writing_the_report_leaves_no_older_page(tmp_path, monkeypatch):
    """Interrupted while report.html is written, a run leaves no report rather than the
    previous run's, and still removes the previous run's figures it did not write again."""
    from blocksim.report import run_report as report
    out = tmp_path / "run"
    blocksim.run(_scope_diagram(tmp_path, "Old"), out=out, plots=True)
    assert (out / "report.html").is_file() and (out / "Old.png").is_file()

    def interrupted(run_dir):
        raise KeyboardInterrupt
    monkeypatch.setattr(report, "write_run_report", interrupted)
    with pytest.raises(KeyboardInterrupt):
        blocksim.run(_scope_diagram(tmp_path, "New"), out=out, plots=True)
    assert not (out / "report.html").exists()
    assert not (out / "Old.png").exists() and (out / "New.png").is_file()
