"""Pieces of a self-contained HTML page: escaping, images as data URIs, tables, the page.

A report is one file that opens in any browser with no network and no other file: images
are inlined as base64 data URIs, style and the little script live in the page, and nothing
refers to anything outside it.
"""
from __future__ import annotations

import base64
import html
import json
from pathlib import Path

import numpy as np

from ..util.atomic import atomic_path
from ..errors import DiagramError

MEDIA_TYPES = {".png": "image/png", ".gif": "image/gif", ".svg": "image/svg+xml",
               ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".mp4": "video/mp4"}

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
       margin: 0 auto; padding: 1em 2em 3em; max-width: 1200px; color: #1b1b1b;
       line-height: 1.4; }
h1 { margin-bottom: 0.2em; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 1.6em; }
nav { font-size: 0.9em; margin: 0.5em 0 1em; }
nav a { margin-right: 1em; }
.status { display: inline-block; padding: 0.15em 0.7em; border-radius: 1em; color: white;
          font-weight: bold; }
.ok { background: #2e7d32; } .failed { background: #c62828; } .interrupted { background: #ef6c00; }
.error { background: #fdecea; border-left: 4px solid #c62828; padding: 0.6em 1em;
         white-space: pre-wrap; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f5f8; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre, td.code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.95em; }
td code { white-space: pre-wrap; }
pre { background: #f6f8fa; padding: 0.6em; overflow-x: auto; }
.diagram { overflow-x: auto; border: 1px solid #ddd; padding: 0.5em; background: white; }
.diagram img { max-width: 100%; cursor: zoom-in; }
.diagram img.natural { max-width: none; cursor: zoom-out; }
figure { display: inline-block; margin: 0.5em 1em 1em 0; vertical-align: top; }
figure img, figure video { max-width: 100%; border: 1px solid #eee; }
figure.half { width: 48%; margin-right: 1%; }
figure.wide { width: 97%; }
figcaption { font-size: 0.85em; color: #555; }
.scroll { max-height: 36em; overflow: auto; display: inline-block; max-width: 100%; }
.scroll thead th { position: sticky; top: 0; }
.note { color: #666; font-size: 0.9em; }
th.sortable { cursor: pointer; user-select: none; white-space: nowrap; }
th.sortable::after { content: " \\2195"; color: #999; }
th.asc::after { content: " \\2191"; color: #333; }
th.desc::after { content: " \\2193"; color: #333; }
tr.failed td { background: #fdecea; }
"""

# Click a diagram to see it at its natural size; click a sortable header to sort its table
# (numbers as numbers, then words, empty cells last; a second click reverses). Array.sort is
# stable, so equal keys keep the previous order.
SCRIPT = """
document.querySelectorAll('.diagram img').forEach(function (img) {
  img.addEventListener('click', function () { img.classList.toggle('natural'); });
});
document.querySelectorAll('table.sortable').forEach(function (table) {
  var heads = table.querySelectorAll('th');
  heads.forEach(function (th, col) {
    th.classList.add('sortable');
    th.addEventListener('click', function () {
      var asc = !th.classList.contains('asc');
      heads.forEach(function (h) { h.classList.remove('asc', 'desc'); });
      th.classList.add(asc ? 'asc' : 'desc');
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      function key(row) {
        var cell = row.cells[col];
        var text = cell.getAttribute('data-value');
        if (text === null) { text = cell.textContent.trim(); }
        var x = Number(text);
        // numbers first, then words, empty cells last, whichever the direction
        var rank = text === '' ? 2 : (isFinite(x) ? 0 : 1);
        return { rank: rank, x: x, text: text };
      }
      rows.sort(function (a, b) {
        var p = key(a), q = key(b);
        if (p.rank !== q.rank) { return p.rank - q.rank; }
        var c = p.rank === 0 ? p.x - q.x : p.text.localeCompare(q.text);
        return asc ? c : -c;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def esc(x):
    return html.escape(str(x), quote=True)


def data_uri(data, suffix):
    return f"data:{MEDIA_TYPES[suffix]};base64," + base64.b64encode(data).decode("ascii")


def media(data, suffix, alt, width=None):
    """An <img> (or <video> for MP4) holding `data` inline; `width` in CSS pixels."""
    uri = data_uri(data, suffix)
    if suffix == ".mp4":
        return f'<video controls loop muted src="{uri}" title="{esc(alt)}"></video>'
    size = f' width="{width:.0f}"' if width else ""
    return f'<img src="{uri}" alt="{esc(alt)}"{size}>'


def table(header, rows, cls="", numeric=()):
    """An HTML table (`header` None: none); `rows` hold `Raw` HTML cells or plain values
    (escaped here); columns whose index is in `numeric` are right-aligned."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header or ())
    body = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            text = cell if isinstance(cell, Raw) else esc(_plain(cell))
            cells.append(f'<td class="num">{text}</td>' if i in numeric else f"<td>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    attr = f' class="{cls}"' if cls else ""
    thead = f"<thead><tr>{head}</tr></thead>" if head else ""
    return f"<table{attr}>{thead}<tbody>{''.join(body)}</tbody></table>"


class Raw(str):
    """HTML that is inserted as it is."""


def _plain(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def number(x):
    """A number or array for a table cell: compact, full enough to compare runs."""
    a = np.asarray(x, dtype=float)
    if a.ndim == 0:
        return f"{float(a):.6g}"
    return np.array2string(a, separator=", ", max_line_width=90, threshold=60,
                           formatter={"float_kind": lambda v: f"{v:.6g}"})


def as_text(value):
    """A configuration value as a diagram writes it (YAML flow style): a string (a word or
    an expression) as it is, lists and mappings of such, other values as JSON
    ([J*L, b] and {model: puma560}, not ["J*L", "b"] and {"model": "puma560"})."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(as_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {as_text(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def code(value):
    """A table cell showing `value` (see `as_text`) as code."""
    return Raw(f"<code>{esc(as_text(value))}</code>")


def own_file(directory, name):
    """`directory/name` when `name` is a plain file name (no folder, no `..`) of a regular
    file there that is not a symbolic link; else None. A report embeds only its directory's
    own files: a name read from meta.json or sweep.json may have been written by anyone."""
    if not isinstance(name, str) or name in ("", ".", "..") or any(
            c in name for c in "/\\\x00"):
        return None
    path = Path(directory) / name
    return path if path.is_file() and not path.is_symlink() else None


def read_json(path):
    """The mapping in a run's meta.json or a sweep's sweep.json; DiagramError (exit 2) when
    it cannot be read or is not a mapping."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise DiagramError(f"cannot read {path}: {e}", file=str(path)) from None
    if not isinstance(data, dict):
        raise DiagramError(f"cannot read {path}: not a JSON object", file=str(path))
    return data


def sectioned_page(title, intro, sections):
    """A page: `intro` HTML, a navigation bar, then each non-empty (id, heading, body HTML)
    section."""
    sections = [s for s in sections if s[2]]
    nav = "".join(f'<a href="#{key}">{esc(heading)}</a>' for key, heading, _ in sections)
    parts = [intro, f"<nav>{nav}</nav>"]
    parts += [f'<section id="{key}"><h2>{esc(heading)}</h2>\n{body}\n</section>'
              for key, heading, body in sections]
    return page(title, "\n".join(parts))


def write_page(path, text):
    """Write a report page atomically; returns its path."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path


def page(title, body):
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{esc(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\n"
            f"<script>{SCRIPT}</script>\n</body>\n</html>\n")
