"""The run directory as a user reuses it: nothing stale from an earlier run, the summary says
how long simulating and drawing took, and drawing reports its progress."""
import json
import re

import blocksim
from blocksim.cli import main

SCOPED = """blocksim: 1
blocks:
  C: {type: clock}
  %s: {type: scope}
wires: [C -> %s]
simulation: {stop: 1}
"""


def test_a_reused_out_keeps_nothing_stale(tmp_path, capsys):
    path, out = tmp_path / "d.yaml", tmp_path / "out"
    path.write_text(SCOPED % ("Old", "Old"))
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 0
    (out / "notes.txt").write_text("mine")
    (out / "Other.png").write_bytes(b"not listed by any run")
    path.write_text(SCOPED % ("New", "New"))  # the scope was renamed
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["New.png", "Other.png", "diagram.svg", "meta.json", "notes.txt",
                     "report.html", "results.npz"]
    meta = json.loads((out / "meta.json").read_text())
    assert meta["files"] == ["New.png", "diagram.svg", "meta.json", "report.html", "results.npz"]
    assert main(["run", str(path), "--out", str(out), "--quiet", "--no-plots"]) == 0
    for name in ("New.png", "diagram.svg", "report.html"):  # an earlier run's, not this run's
        assert not (out / name).exists()
    assert (out / "notes.txt").read_text() == "mine" and (out / "Other.png").exists()


def test_meta_json_of_something_else_removes_nothing(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "meta.json").write_text('{"files": ["../d.yaml", "/etc/passwd", ".hidden", 3]}')
    (out / ".hidden").write_text("x")
    path = tmp_path / "d.yaml"
    path.write_text(SCOPED % ("S", "S"))
    blocksim.run(path, out=out)
    assert path.exists() and (out / ".hidden").exists()


def test_summary_reports_simulation_and_figure_times(tmp_path, capsys):
    path = tmp_path / "d.yaml"
    path.write_text(SCOPED % ("S", "S"))
    assert main(["run", str(path), "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "; simulated in " in out and " s, figures in " in out, out
    meta = json.loads((tmp_path / "o" / "meta.json").read_text())
    assert meta["figures_time"] > 0 and meta["wall_time"] > 0
    # what the drawing took, by part, the largest named in the summary
    parts = meta["figure_times"]
    assert set(parts) == {"S", "loading matplotlib", "diagram.svg"}, parts
    assert sum(parts.values()) <= meta["figures_time"]
    largest = max(parts, key=parts.get)
    assert re.search(rf"figures in [\d.]+ s \({re.escape(largest)} [\d.]+ s, ", out), out
    assert main(["run", str(path), "--out", str(tmp_path / "o"), "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "simulated in " in out and "figures" not in out


def test_drawing_reports_progress_per_sink_and_per_frame(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no ffmpeg: a GIF
    path = tmp_path / "d.yaml"
    path.write_text("""blocksim: 1
robots: {arm: {model: twolink}}
blocks:
  Q: {type: constant, value: [0.3, 0.2]}
  A: {type: scope}
  P: {type: plot_robot, robot: arm, fps: 10}
wires: [Q -> A, Q -> P]
simulation: {stop: 0.4}
""")
    seen = []
    result = blocksim.execute(blocksim.load(path), out=tmp_path / "o", plots=True,
                              figure_progress=lambda f, name: seen.append((f, name)))
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert ("A" in {n for _, n in seen}) and ("P" in {n for _, n in seen})
    assert len([f for f, n in seen if n == "P" and 0.5 < f < 1.0]) >= 4  # 5 frames: 0..0.4 s
    assert result.messages == []  # no MP4 asked for


def test_summary_counts_in_the_singular_for_one(tmp_path, capsys):
    """Issue 23: the summary said '1 events'. A relay on sin t switches once before t = 2
    (on at t = 0+, the sine rising through eps; off only at pi): one event, one word."""
    path = tmp_path / "d.yaml"
    path.write_text("""blocksim: 1
blocks:
  S: {type: sine}
  R: {type: relay}
  T: {type: terminator}
wires: [S -> R, R -> T]
simulation: {stop: 2}
""")
    assert main(["run", str(path), "--out", str(tmp_path / "o"), "--no-plots"]) == 0
    out = capsys.readouterr().out
    meta = json.loads((tmp_path / "o" / "meta.json").read_text())
    assert meta["events"]["total"] == 1
    assert ", 1 event;" in out and "1 events" not in out, out
