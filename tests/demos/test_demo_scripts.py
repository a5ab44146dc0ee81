"""The demo scripts leave the figures tracked in demos/figures/ alone unless asked."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "demos"))

from _figures import FIGURES, parse_args  # noqa: E402


def test_demo_figures_go_under_runs_unless_asked_to_update(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert parse_args("demo", []).out == Path("runs") / "demos"
    assert parse_args("demo", ["--out", "x"]).out == Path("x")
    assert parse_args("demo", ["--update-figures"]).out == FIGURES == ROOT / "demos" / "figures"


def test_running_a_demo_script_writes_under_runs(tmp_path, monkeypatch):
    import runpy
    before = {p: p.stat().st_mtime_ns for p in FIGURES.iterdir()}
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["demo4.py"])
    runpy.run_path(str(ROOT / "demos" / "demo4.py"), run_name="__main__")
    assert (tmp_path / "runs" / "demos" / "demo4.png").is_file()
    assert {p: p.stat().st_mtime_ns for p in FIGURES.iterdir()} == before
