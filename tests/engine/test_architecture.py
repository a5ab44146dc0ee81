"""The package layout keeps its rules (docs/architecture.md): few modules at the top of
blocksim/, folders instead of file-name prefixes, no import circle, no class over 400 lines,
and every module the architecture page names exists."""
import ast
import re
from collections import Counter
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "blocksim"
MODULES = sorted(PACKAGE.rglob("*.py"))


def _name(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


NAMES = {_name(p): p for p in MODULES}


def _imports(path):
    """(module imported, inside a function) for every import of a blocksim module in path,
    resolved to the module (or package) it loads."""
    name = _name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text())
    functions = [n for n in ast.walk(tree)
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    lazy = {id(m) for f in functions for m in ast.walk(f)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            bases = [a.name for a in node.names]
            names = [None]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                bases = [".".join(base + ([node.module] if node.module else []))]
            else:
                bases = [node.module]
            names = [a.name for a in node.names]
        else:
            continue
        for base in bases:
            if not base or not base.startswith("blocksim"):
                continue
            for n in names:
                target = f"{base}.{n}" if n and f"{base}.{n}" in NAMES else base
                yield target, id(node) in lazy


def test_at_most_ten_modules_at_the_top():
    top = [p.name for p in PACKAGE.glob("*.py")]
    assert len(top) <= 10, top


def test_no_file_name_prefix_stands_in_for_a_folder():
    """Three or more modules of one folder sharing the first word of their names (sweep_run,
    sweep_spec, sweep_table...) belong in a folder of that name."""
    folders = {p.parent for p in MODULES}
    for folder in folders:
        words = Counter(p.stem.split("_")[0] for p in folder.glob("*.py")
                        if "_" in p.stem.strip("_"))
        assert not [w for w, k in words.items() if k >= 3], (folder, words)


def test_no_import_circle():
    """Imports at any level count, except the lazy ones in a package's __init__ (blocksim's
    facade loads the engine on first use of blocksim.run)."""
    graph = nx.DiGraph()
    graph.add_nodes_from(NAMES)
    for name, path in NAMES.items():
        for target, lazy in _imports(path):
            if lazy and path.name == "__init__.py":
                continue
            if target in NAMES and target != name:
                graph.add_edge(name, target)
    circles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not circles


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_class_over_400_lines(path):
    tree = ast.parse(path.read_text())
    long = [(n.name, n.end_lineno - n.lineno + 1) for n in ast.walk(tree)
            if isinstance(n, ast.ClassDef) and n.end_lineno - n.lineno + 1 > 400]
    assert not long


def test_every_module_the_architecture_page_names_exists():
    text = (ROOT / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"`?((?:blocksim|blocks)/[\w/.]*\w)", text))
    assert len(named) > 20  # the page names the modules of every layer
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, f"docs/architecture.md names modules that do not exist: {missing}"
