"""The block catalogue as a newcomer meets it: `blocksim` and `blocksim blocks` (grouped by
family, one complete sentence per block, no internal references), `blocksim blocks TYPE`
and `subsystem`, and docs/blocks.md generated from the same source."""
import inspect
import re
from pathlib import Path

import pytest

from blocks import catalog
from blocksim.language.blockdoc import LOADER_FAMILIES, markdown
from blocksim.cli import main
from blocksim.language.library import Library, summary

ROOT = Path(__file__).resolve().parents[2]
LIB = Library()
INTERNAL = re.compile(r"seed 0\d\d|seeds?/|release-7|blocks\.md|spec/", re.I)


def test_bare_blocksim_prints_the_help(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: blocksim") and "run" in out and "blocks" in out


def test_every_type_is_in_exactly_one_family():
    listed = [t for types in catalog.FAMILIES.values() for t in types]
    assert len(listed) == len(set(listed)) == len(catalog.BLOCKS)
    assert set(catalog.FAMILY_TITLES) == set(catalog.FAMILIES)


def test_listing_groups_blocks_under_family_headings(capsys):
    assert main(["blocks"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    headings = [i for i, line in enumerate(lines) if line and not line.startswith(" ")]
    titles = [catalog.FAMILY_TITLES[f] for f, types in catalog.FAMILIES.items() if types]
    positions = [lines.index(title) for title in titles]
    assert positions == sorted(positions), "families are listed in catalogue order"
    for family, types in catalog.FAMILIES.items():
        if not types:
            continue
        start = lines.index(catalog.FAMILY_TITLES[family])
        end = min(i for i in headings + [len(lines)] if i > start)
        names = [line.split()[0] for line in lines[start + 1:end] if line.strip()]
        # with the loader's types of the family (bus, bus_select: routing)
        loader = [t for t, f in LOADER_FAMILIES.items() if f == family]
        assert names == sorted([*types, *loader]), family
    assert re.search(r"^  subsystem +A diagram used as one block", out, re.M)
    assert re.search(r"^  bus +A named bundle of signals", out, re.M)


@pytest.mark.parametrize("type_name", sorted(catalog.BLOCKS))
def test_every_summary_is_one_complete_sentence_for_a_user(type_name):
    cls = LIB.block_class(type_name)
    text = summary(cls)
    assert text.endswith(".") and len(text) <= 100, \
        f"{type_name}: the first paragraph of the docstring is the one-line summary " \
        f"`blocksim blocks` prints: one sentence, at most 100 characters, got {text!r}"
    assert not text.endswith((" a.", " the.", ":.")), text
    doc = inspect.cleandoc(cls.__doc__)
    assert not INTERNAL.search(doc), f"{type_name}: {INTERNAL.search(doc).group()} means " \
        "nothing to a user; name the source (e.g. the Robotics Toolbox for MATLAB, release 7)"


@pytest.mark.parametrize("type_name", ["tr2diff", "jtraj", "ctraj", "eul2tr", "tr2eul"])
def test_toolbox_functions_are_referred_to_by_name(type_name):
    assert f"as {type_name} in the Robotics Toolbox" in summary(LIB.block_class(type_name))


def test_one_block_and_the_subsystem_are_documented(capsys):
    assert main(["blocks", "gain"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("gain  (family: math)") and "K @ u" in out and "parameters:" in out
    assert main(["blocks", "subsystem"]) == 0
    out = capsys.readouterr().out
    for needle in ("file:", "diagram:", "inputs:", "outputs:", "parameters:", "outer/inner",
                   "--set blocks.Filter.parameters.tau=2"):
        assert needle in out, needle
    assert main(["blocks", "subsytem"]) == 2
    assert "did you mean 'subsystem'" in capsys.readouterr().err


def test_docs_blocks_md_is_generated_from_the_catalogue():
    path = ROOT / "docs" / "blocks.md"
    expected = markdown(LIB)
    assert path.is_file() and path.read_text() == expected, (
        "docs/blocks.md is out of date with the block catalogue: regenerate it with\n"
        "    PYTHONPATH=. python -m blocksim blocks --markdown > docs/blocks.md")
    for type_name in [*catalog.BLOCKS, "subsystem"]:
        assert f"\n### {type_name}\n" in expected, type_name
