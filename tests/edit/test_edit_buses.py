"""The editor's view of a diagram with buses and a conditional subsystem: every box drawn,
every wire shown (a bus's ports are the loader's, not a block class's)."""
import shutil

from editor_server import ROOT, Running

CORPUS = ROOT / "tests" / "accel" / "corpus"


def test_buses_and_their_wires_are_in_the_view(tmp_path):
    for name, boxes in (("buses.yaml", {"Drive", "State", "Out", "Control"}),
                        ("conditional_triggered.yaml", {"Rise", "Gated", "Outer"})):
        shutil.copy(CORPUS / name, tmp_path / name)
        with Running(tmp_path / name, tmp_path / "runs") as server:
            view = server.api("GET", "diagram")
        assert boxes <= {b["key"] for b in view["boxes"]}
        assert view["wires"] and all(w["shown"] for w in view["wires"]), name
        assert view["problems"] == []
