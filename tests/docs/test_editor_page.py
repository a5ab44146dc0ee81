"""docs/editor.md and the editor agree: every request of the JSON API and every edit is in
its tables and nothing else is, the attributes it promises tests are on the page, and the
screenshots it shows exist."""
import re
from pathlib import Path

from docfiles import DOCS

from blocksim.edit.server import ROUTES
from blocksim.edit.session import Session

PAGE = (DOCS / "editor.md").read_text()
ASSETS = Path(__file__).resolve().parents[2] / "blocksim" / "edit" / "assets"


def table_after(heading):
    """The first cells of the table that follows the paragraph containing `heading`."""
    rest = PAGE[PAGE.index(heading):]
    rows = re.findall(r"^\| ([^|]+) \|", rest[:rest.index("\n\n", rest.index("\n|"))], re.M)
    return [r.strip() for r in rows[1:] if not set(r.strip()) <= set("-: ")]


def test_the_api_table_is_the_servers_routes():
    documented = {tuple(re.match(r"`(GET|POST) /api/(\w+)", cell).groups())
                  for cell in table_after("The page talks to the server")}
    assert documented == set(ROUTES)


def test_the_edit_table_is_the_sessions_edits():
    documented = {cell.strip("`") for cell in table_after("The edits (`op` and its fields)")}
    assert documented == {name[len("_op_"):] for name in dir(Session) if name.startswith("_op_")}


def test_the_promised_attributes_are_on_the_page():
    script = (ASSETS / "editor.js").read_text() + (ASSETS / "index.html").read_text()
    for attribute in ("data-block", "data-port", "data-wire", "data-palette"):
        assert f'"{attribute}"' in script, attribute
    for action in re.findall(r'data-action="([\w-]+)"', PAGE):
        assert f'data-action="{action}"' in script, action


def test_the_screenshots_exist():
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", PAGE):
        assert (DOCS / image).resolve().is_file(), image
