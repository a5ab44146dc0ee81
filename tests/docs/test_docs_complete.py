"""The docs and the code agree: every function and constant of the evaluator, every key and
setting, every solver is in docs/language.md and nothing documented there is missing from
the code; every block type a page uses exists."""
import re

import pytest
from docfiles import DOCS, blocks

from blocks.catalog import BLOCKS
from blocksim.language.blockdoc import LOADER_DOCS
from blocksim.language.diagram import SIMULATION_KEYS, SUBSYSTEM_KEYS
from blocksim.language.expr import CONSTANTS, FUNCTIONS, MATRIX_FUNCTIONS
from blocksim.engine.solvers import SOLVERS

LANGUAGE = (DOCS / "language.md").read_text()


def section(title, level="###"):
    """The text of a section of language.md, up to the next heading of its level or above."""
    start = LANGUAGE.index(f"\n{level} {title}\n")
    stop = re.search(rf"\n#{{2,{len(level)}}} ", LANGUAGE[start + 1:])
    return LANGUAGE[start:start + 1 + stop.start()] if stop else LANGUAGE[start:]


def first_cells(text):
    """The first cell of every table row (not the header or the rule)."""
    cells = [line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| ")]
    return [c for c in cells if not set(c) <= set("-: ")][1:] if cells else []


def names_in(cells, pattern):
    return {name for cell in cells for name in re.findall(pattern, cell)}


def test_every_function_of_the_evaluator_is_documented_and_nothing_else():
    documented = names_in(first_cells(section("Functions")), r"`(\w+)\(")
    assert documented == set(FUNCTIONS) | set(MATRIX_FUNCTIONS), (
        f"missing from docs/language.md: {sorted(set(FUNCTIONS) | set(MATRIX_FUNCTIONS) - documented)}; "
        f"documented but not in blocksim/expr.py: {sorted(documented - set(FUNCTIONS) - set(MATRIX_FUNCTIONS))}")
    block_only = names_in(first_cells(section("Functions").split("function` block's `expr` only")[1]),
                          r"`(\w+)\(")
    assert block_only == set(MATRIX_FUNCTIONS)


def test_constants_keys_settings_and_solvers_are_the_codes():
    assert names_in(first_cells(section("Names")), r"`(\w+)`") == set(CONSTANTS)
    assert names_in(first_cells(section("Top-level keys", "##")), r"`(\w+)`") == set(SUBSYSTEM_KEYS)
    assert names_in(first_cells(section("Simulation settings", "##")), r"`(\w+)`") == \
        set(SIMULATION_KEYS)
    solvers = section("Simulation settings", "##").split("Solvers:", 1)[1].split(". All", 1)[0]
    assert set(re.findall(r"`(\w+)`", solvers)) == set(SOLVERS)


def test_set_paths_are_the_ones_the_loader_knows():
    heads = {cell.strip("`").split(".")[0].split("`")[0]
             for cell in first_cells(section("`--set`: changing a diagram from the command line", "##"))}
    assert heads == {"simulation", "parameters", "blocks", "robots", "record", "name", "inputs"}


@pytest.mark.parametrize("page", ["tutorial.md", "language.md", "custom-blocks.md", "robots.md",
                                  "conditional.md"])
def test_every_block_type_a_page_uses_exists(page):
    plugin_types = set(re.findall(r'^(\w+) = "', (DOCS / "custom-blocks.md").read_text(), re.M))
    text = "\n".join(body for _, _, body in blocks(page))
    for type_name in re.findall(r"type: (\w+)", text):
        if type_name in ("revolute", "prismatic"):      # a link's type, in a robot file
            continue
        assert type_name in BLOCKS or type_name in LOADER_DOCS or type_name in plugin_types, \
            f"{page} uses block type '{type_name}', which blocksim does not have"
