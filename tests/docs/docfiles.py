"""Reading the docs' fenced code blocks: a block whose info string names a file after the
language (```yaml msd.yaml) is that file's whole content; the other blocks are examples."""
import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
FENCE = re.compile(r"^```([\w+-]*)[ \t]*([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)


def blocks(page):
    """[(language, file name or '', text)] of the fenced blocks of docs/<page>, in order."""
    text = (DOCS / page).read_text()
    return [(m.group(1), m.group(2).strip(), m.group(3)) for m in FENCE.finditer(text)]


def files(page):
    """{file name: content} of the named blocks of a page."""
    return {name: text for _, name, text in blocks(page) if name}


def write_files(page, root):
    """Write a page's named blocks under `root`; returns their paths."""
    paths = []
    for name, text in files(page).items():
        path = Path(root) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths.append(path)
    return paths
