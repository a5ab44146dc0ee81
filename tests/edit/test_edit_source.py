"""Text edits of YAML files (blocksim.edit.source): each changes its own span only, in the
style of its neighbours, and reads back as the document with that one change made."""
import difflib

import pytest

from blocksim.edit import source
from blocksim.edit.source import EditError, Source
from blocksim.language.yamlio import load_yaml_text

STYLES = """\
blocksim: 1   # format
parameters:
  m: 1.0      # kg
blocks:
  Force:    {type: step, time: 1}          # aligned values
  Sum:      {type: sum, signs: "+--"}
  Wide:     {type: scope, labels: [a, b],
             units: rad}
  Block:
    type: gain
    K: 1/m
wires:
  - Force -> Sum.u1
  - Sum -> Block   # comment
simulation: {stop: 20, rtol: 1e-6}
record: {x: Block.y}
"""


def changed(before, after):
    """(removed lines, added lines) of a line diff."""
    diff = [d for d in difflib.ndiff(before.splitlines(), after.splitlines()) if d[:1] in "+-"]
    return [d[2:] for d in diff if d[0] == "-"], [d[2:] for d in diff if d[0] == "+"]


def test_replacing_a_value_changes_that_value_only():
    new = source.set_value(Source(STYLES), ("blocks", "Sum", "signs"), "+-+")
    assert changed(STYLES, new.text) == (['  Sum:      {type: sum, signs: "+--"}'],
                                         ['  Sum:      {type: sum, signs: "+-+"}'])  # quotes kept
    new = source.set_value(Source(STYLES), ("blocks", "Block", "K"), "2/m", "2/m")
    assert changed(STYLES, new.text) == (["    K: 1/m"], ["    K: 2/m"])
    new = source.set_value(Source(STYLES), ("simulation", "rtol"), "1e-8", "1e-8")
    assert changed(STYLES, new.text) == (["simulation: {stop: 20, rtol: 1e-6}"],
                                         ["simulation: {stop: 20, rtol: 1e-8}"])


def test_an_expression_with_commas_in_a_flow_mapping_is_quoted():
    new = source.set_value(Source(STYLES), ("blocks", "Force", "time"), "max(1, 2)", "max(1, 2)")
    assert load_yaml_text(new.text)["blocks"]["Force"]["time"] == "max(1, 2)"
    assert '{type: step, time: "max(1, 2)"}          # aligned values' in new.text


def test_new_entries_follow_their_neighbours():
    src = Source(STYLES)
    new = source.set_value(src, ("blocks", "Gain"), {"type": "gain", "K": 3})
    assert changed(STYLES, new.text) == ([], ["  Gain:     {type: gain, K: 3}"])  # aligned
    new = source.set_value(src, ("blocks", "Block", "extra"), [1, 2])
    assert changed(STYLES, new.text) == ([], ["    extra: [1, 2]"])
    new = source.set_value(src, ("blocks", "Wide", "title"), "A, B")
    assert changed(STYLES, new.text) == (["             units: rad}"],
                                         ['             units: rad, title: "A, B"}'])
    new = source.append(src, ("wires",), "Block -> Wide.u1")
    assert changed(STYLES, new.text) == ([], ["  - Block -> Wide.u1"])
    new = source.set_value(src, ("layout",), {"Force": [0, 0]}, after=("record",))
    assert new.text == STYLES + "layout:\n  Force: [0, 0]\n"


def test_deleting_removes_the_entry_and_nothing_else():
    src = Source(STYLES)
    assert changed(STYLES, source.delete(src, ("wires", 0)).text) == (["  - Force -> Sum.u1"], [])
    assert changed(STYLES, source.delete(src, ("blocks", "Wide")).text) == (
        ["  Wide:     {type: scope, labels: [a, b],", "             units: rad}"], [])
    assert changed(STYLES, source.delete(src, ("blocks", "Wide", "units")).text) == (
        ["  Wide:     {type: scope, labels: [a, b],", "             units: rad}"],
        ["  Wide:     {type: scope, labels: [a, b]}"])
    assert changed(STYLES, source.delete(src, ("simulation", "stop")).text) == (
        ["simulation: {stop: 20, rtol: 1e-6}"], ["simulation: {rtol: 1e-6}"])
    assert changed(STYLES, source.delete(src, ("record", "x")).text) == (
        ["record: {x: Block.y}"], ["record: {}"])


def test_renaming_a_key_keeps_the_value_column():
    new = source.rename_key(Source(STYLES), ("blocks", "Sum"), "Total")
    assert changed(STYLES, new.text) == (['  Sum:      {type: sum, signs: "+--"}'],
                                         ['  Total:    {type: sum, signs: "+--"}'])


def test_an_empty_file_grows_sections_in_block_style():
    src = Source("blocksim: 1\n")
    src = source.set_value(src, ("blocks", "A"), {"type": "gain", "K": 1})
    src = source.append(src, ("wires",), "A -> B", after=("blocks",))
    src = source.set_value(src, ("parameters", "k"), 4.0, after=("blocksim",))
    assert src.text == ("blocksim: 1\nparameters:\n  k: 4.0\nblocks:\n  A: {type: gain, K: 1}\n"
                        "wires:\n  - A -> B\n")


def test_line_ends_and_byte_order_mark_are_kept():
    text = STYLES.replace("\n", "\r\n")
    new = source.append(Source(text), ("wires",), "Block -> Wide.u1")
    assert new.text == text.replace("  - Sum -> Block   # comment\r\n",
                                    "  - Sum -> Block   # comment\r\n  - Block -> Wide.u1\r\n")


def test_strings_that_yaml_would_read_otherwise_are_quoted():
    for value in ("yes", "1e3", "12", "null", "- a", "#x", "a: b", "[1]", "on"):
        new = source.set_value(Source(STYLES), ("blocks", "Sum", "title"), value)
        assert load_yaml_text(new.text)["blocks"]["Sum"]["title"] == value, value


def test_an_edit_that_would_change_something_else_is_refused():
    text = "a: &x {b: 1}\nc: *x\n"  # an alias: editing the anchor changes both
    with pytest.raises(EditError):
        source.set_value(Source(text), ("a", "b"), 2)
