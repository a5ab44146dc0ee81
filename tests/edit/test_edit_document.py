"""Diagram edits (blocksim.edit.edits, on a blocksim.edit.document) on real files: every shipped diagram comes back
byte for byte through an edit and its inverse, a gain changes one line, names follow a
rename, deletes take their wires, undo and redo, save writes only what changed."""
import difflib
import shutil
from pathlib import Path

import pytest

import blocksim
from blocksim.edit.edits import Diagram as Document
from blocksim.edit.source import EditError
from blocksim.language.yamlio import load_yaml_text

ROOT = Path(__file__).resolve().parents[2]
DIAGRAMS = sorted((ROOT / "diagrams").glob("*.yaml"))
LOOP = ROOT / "tests" / "draw" / "data" / "loop.yaml"


def copy(path, tmp_path):
    target = tmp_path / path.name
    for other in path.parent.glob("*.yaml"):
        shutil.copy(other, tmp_path / other.name)
    return target


def diff(a, b):
    return [d for d in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0)
            if d[:1] in "+-" and d[:3] not in ("+++", "---")]


@pytest.mark.parametrize("path", DIAGRAMS, ids=lambda p: p.stem)
def test_every_diagram_comes_back_byte_for_byte(path, tmp_path):
    """Open, rename blocks and rename them back (the first, the last, the longest name and
    the shortest: alignment is kept), move one (a layout appears) and undo that, save: the
    file is the one shipped, byte for byte."""
    path = copy(path, tmp_path)
    original = path.read_bytes()
    doc = Document(path)
    top = doc.level()
    names = list(doc.blocks(top))
    for name in dict.fromkeys([names[0], names[-1], max(names, key=len), min(names, key=len)]):
        doc.rename(top, name, name + "_x")
        assert doc.dirty
        doc.rename(top, name + "_x", name)
    first = next(iter(doc.blocks(top)))
    doc.move(top, {first: (10, 20)}, {n: (0, 0) for n in doc.blocks(top)})
    assert "layout:" in doc.sources[top.file].text
    doc.undo()
    assert not doc.dirty
    assert doc.save() == []
    assert path.read_bytes() == original


def test_one_gain_changes_one_line(tmp_path):
    path = copy(ROOT / "diagrams" / "demo3.yaml", tmp_path)
    before = path.read_text()
    doc = Document(path)
    doc.set_param(doc.level(), "Kp", "K", "50")
    assert doc.save() == [path]
    assert diff(before, path.read_text()) == ["-  Kp:       {type: gain, K: 100}",
                                              "+  Kp:       {type: gain, K: 50}"]
    assert blocksim.load(path).spec.blocks["Kp"].params["K"].raw == 50


def test_a_rename_follows_every_reference(tmp_path):
    path = copy(ROOT / "diagrams" / "msd.yaml", tmp_path)
    doc = Document(path)
    top = doc.level()
    doc.move(top, {"Force": (0, 0)}, {n: (i * 100, 0) for i, n in enumerate(doc.blocks(top))})
    doc.rename(top, "Position", "X")
    data = load_yaml_text(doc.sources[top.file].text)
    assert "X" in data["blocks"] and "Position" not in data["blocks"]
    assert "Velocity -> X" in data["wires"] and "X -> Spring" in data["wires"]
    assert data["record"]["x"] == "X.y" and "X" in data["layout"]
    with pytest.raises(EditError, match="already a block 'Sum'"):
        doc.rename(top, "X", "Sum")
    with pytest.raises(EditError, match="not a valid block name"):
        doc.rename(top, "X", "2x")
    doc.save()
    blocksim.load(path)  # still a valid diagram


def test_deleting_a_block_takes_its_wires_layout_and_records(tmp_path):
    path = copy(ROOT / "diagrams" / "msd.yaml", tmp_path)
    doc = Document(path)
    top = doc.level()
    doc.move(top, {"Force": (0, 0)}, {n: (i * 100, 0) for i, n in enumerate(doc.blocks(top))})
    doc.delete(top, ["Velocity"], [0])
    data = load_yaml_text(doc.sources[top.file].text)
    assert "Velocity" not in data["blocks"] and "Velocity" not in data["layout"]
    assert not any("Velocity" in w for w in data["wires"])
    assert "Force -> Sum.u1" not in data["wires"]  # wire 0
    assert "v" not in data["record"]
    doc.undo()  # the delete, then the move
    doc.undo()
    assert not doc.dirty


def test_blocks_are_added_wired_and_pasted(tmp_path):
    path = tmp_path / "new.yaml"
    doc = Document(path)
    top = doc.level()
    assert doc.add_block(top, "gain", (0, 0), {}) == "Gain"
    assert doc.add_block(top, "gain", (100, 0), {"Gain": (0, 0)}) == "Gain1"
    doc.set_param(top, "Gain", "K", "2")
    doc.connect(top, "Gain", "Gain1")
    with pytest.raises(EditError, match="already wired"):
        doc.connect(top, "Gain1", "Gain1")
    clip = doc.copy(top, ["Gain", "Gain1"], {"Gain": (0, 0), "Gain1": (100, 0)})
    assert doc.paste(top, clip, (0, 80), {"Gain": (0, 0), "Gain1": (100, 0)}) == ["Gain2",
                                                                                  "Gain3"]
    doc.set_entry(top, "simulation", "stop", "1")
    assert doc.save() == [path]
    data = load_yaml_text(path.read_text())
    assert data["wires"] == ["Gain -> Gain1", "Gain2 -> Gain3"]
    assert data["blocks"]["Gain2"] == {"type": "gain", "K": 2}
    assert data["layout"] == {"Gain": [0, 0], "Gain1": [100, 0], "Gain2": [0, 80],
                              "Gain3": [100, 80]}
    assert path.read_text().startswith("blocksim: 1\nblocks:\n  Gain: {type: gain, K: 2}\n")


def test_undo_and_redo_walk_the_history(tmp_path):
    path = copy(ROOT / "diagrams" / "msd.yaml", tmp_path)
    doc = Document(path)
    top = doc.level()
    texts = [doc.sources[top.file].text]
    for k in ("5", "6", "7"):
        doc.set_param(top, "Spring", "K", k)
        texts.append(doc.sources[top.file].text)
    for expected in reversed(texts[:-1]):
        doc.undo()
        assert doc.sources[top.file].text == expected
    assert not doc.can_undo
    doc.redo()
    assert doc.sources[top.file].text == texts[1]
    doc.set_param(top, "Spring", "K", "9")  # a new edit drops what could be redone
    assert not doc.can_redo


def test_edits_inside_subsystems_go_to_their_mapping_or_file(tmp_path):
    path = copy(LOOP, tmp_path)
    doc = Document(path)
    inline = doc.level(("Ctl",))
    doc.set_param(inline, "P", "K", "Kp * 2")
    doc.rename(inline, "Err", "E")
    text = doc.sources[inline.file].text
    assert "P: {type: gain, K: Kp * 2}" in text
    assert "inputs: {r: E.u1, y: E.u2}" in text and "wires: [E -> P, E -> I," in text
    plant = doc.level(("Plant",))
    assert plant.file == (tmp_path / "lag.yaml").resolve()
    inner = next(iter(doc.blocks(plant)))
    doc.rename(plant, inner, "Renamed")
    assert sorted(str(p.name) for p in doc.save()) == ["lag.yaml", "loop.yaml"]
    blocksim.load(path)
    with pytest.raises(EditError, match="not a subsystem"):
        doc.level(("Ref",))


def test_a_file_changed_on_disk_is_not_overwritten(tmp_path):
    path = copy(ROOT / "diagrams" / "msd.yaml", tmp_path)
    doc = Document(path)
    doc.set_param(doc.level(), "Spring", "K", "5")
    path.write_text(path.read_text() + "# edited elsewhere\n")
    with pytest.raises(EditError, match="changed on disk since it was opened"):
        doc.save()
    assert path.read_text().endswith("# edited elsewhere\n")
