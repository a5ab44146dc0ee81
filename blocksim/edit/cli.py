"""`blocksim edit FILE [--port N] [--no-browser]`: the editor's server for one diagram."""
from __future__ import annotations

import sys
from pathlib import Path

from ..errors import DiagramError


def add_parser(sub):
    p = sub.add_parser("edit", help="edit a diagram in the browser (a new FILE starts an "
                                    "empty diagram)")
    p.add_argument("file", help="the diagram (YAML); created on the first save if it does "
                                "not exist")
    p.add_argument("--port", type=int, default=0,
                   help="port on 127.0.0.1 (default: a free one)")
    p.add_argument("--no-browser", action="store_true",
                   help="print the address, do not open a browser")


def run(args):
    """Serve the editor until Ctrl-C; 0 when it stops, 2 when the file cannot be edited."""
    from .server import EditorServer
    from .session import Session
    from .source import EditError
    path = Path(args.file)
    if path.is_dir():
        raise DiagramError("is a directory, not a diagram file", file=args.file)
    if not 0 <= args.port <= 65535:
        raise DiagramError(f"--port {args.port}: a port is 0..65535", file="blocksim edit")
    try:
        session = Session(args.file)
    except EditError as e:
        raise DiagramError(str(e), file=args.file) from None
    except OSError as e:
        raise DiagramError(f"cannot read the file: {e.strerror or e}", file=args.file) from None
    try:
        server = EditorServer(session, args.port, quiet=True)
    except OSError as e:
        raise DiagramError(f"cannot listen on 127.0.0.1:{args.port}: {e.strerror or e}",
                           file="blocksim edit", hint="choose another --port, or 0 for "
                                                      "a free one") from None
    what = "editing" if path.exists() else "new diagram"
    print(f"blocksim edit: {what} {args.file} at {server.url}\n"
          "  (the address holds this session's key: keep it to yourself; Ctrl-C stops)",
          flush=True)
    if not args.no_browser:
        import webbrowser
        try:
            webbrowser.open(server.url)
        except webbrowser.Error:
            pass
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        if session.run is not None and session.run.running:  # its results so far kept
            session.run.stop()
            session.run.join(60)
    if session.doc.dirty:
        print(f"warning: {args.file} has unsaved changes: they are lost", file=sys.stderr)
    return 0
