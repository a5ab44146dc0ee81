"""The editor's web server: one page and a JSON API on 127.0.0.1, for one user's browser.

Every request must name this server in its Host header (127.0.0.1:PORT or localhost:PORT:
a page of another site that makes its own name resolve here gets nothing) and, when it
carries an Origin, come from this server's own origin. Every /api/ request carries the
session token the command printed (header X-Blocksim-Token); the run directory's files,
which the page shows as images, take it as ?token=. Anything else is 403. The server serves
the package's assets (the page) and the files of the diagram's run directory, nothing
else: a path that leaves those folders (.., a symbolic link) is 404.
"""
from __future__ import annotations

import hmac
import json
import math
import mimetypes
import secrets
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from .session import RequestError

ASSETS = Path(__file__).parent / "assets"
MAX_BODY = 4 * 2**20
TOKEN_HEADER = "X-Blocksim-Token"
# the page's own rules: its script and styles come from here, images from here or data:
_SECURITY = {"Content-Security-Policy": "default-src 'none'; script-src 'self'; "
                                        "style-src 'self'; img-src 'self' data:; "
                                        "connect-src 'self'; base-uri 'none'; "
                                        "form-action 'none'; frame-ancestors 'none'",
             "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
             "Cache-Control": "no-store", "X-Frame-Options": "DENY"}


# the JSON API (docs/editor.md): (method, /api/NAME) -> the Session method answering it
ROUTES = {("GET", "catalogue"): "catalogue", ("GET", "diagram"): "view",
          ("POST", "edit"): "edit", ("POST", "check"): "trial", ("POST", "copy"): "copy",
          ("POST", "undo"): "undo", ("POST", "redo"): "redo", ("POST", "save"): "save",
          ("POST", "run"): "start_run", ("GET", "run"): "run_status",
          ("POST", "stop"): "stop_run", ("GET", "results"): "results"}


class EditorServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, session, port=0, quiet=True):
        super().__init__(("127.0.0.1", port), _Handler)
        self.session = session
        self.token = secrets.token_urlsafe(24)
        self.lock = threading.Lock()
        self.quiet = quiet

    @property
    def port(self):
        return self.server_address[1]

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    def hosts(self):
        return {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}

    def origins(self):
        return {f"http://{h}" for h in self.hosts()}


class _Handler(BaseHTTPRequestHandler):
    server_version = "blocksim-edit"
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        if not self.server.quiet:
            super().log_message(format, *args)

    # -- dispatch ----------------------------------------------------------------------------
    def do_GET(self):  # noqa: N802 - http.server's name
        self._serve("GET")

    def do_POST(self):  # noqa: N802
        self._serve("POST")

    def _serve(self, method):
        url = urlsplit(self.path)
        if not self._trusted(url):
            return self._send(403, {"error": "forbidden"})
        path = url.path
        try:
            if path.startswith("/api/"):
                body = self._body() if method == "POST" else {}
                return self._api(method, path[len("/api/"):], parse_qs(url.query), body)
            if method != "GET":
                return self._send(405, {"error": "method not allowed"})
            if path in ("/", "/index.html"):
                return self._file(ASSETS, "index.html")
            if path.startswith("/assets/"):
                return self._file(ASSETS, path[len("/assets/"):])
            if path.startswith("/run/"):
                run = self.server.session.run
                if run is None or run.out is None:
                    return self._send(404, {"error": "no run yet"})
                return self._file(run.out, path[len("/run/"):])
            return self._send(404, {"error": "not found"})
        except RequestError as e:
            return self._send(400, {"error": str(e)})
        except Exception as e:  # a bug: said to the page, its traceback on the terminal
            traceback.print_exc()
            return self._send(500, {"error": f"internal error: {type(e).__name__}: {e}"})

    def _trusted(self, url):
        """Host and Origin name this server; /api/ and /run/ carry the token."""
        server = self.server
        if self.headers.get("Host") not in server.hosts():
            return False
        origin = self.headers.get("Origin")
        if origin is not None and origin not in server.origins():
            return False
        if url.path.startswith(("/api/", "/run/")):
            token = self.headers.get(TOKEN_HEADER)
            if token is None and url.path.startswith("/run/"):
                token = (parse_qs(url.query).get("token") or [None])[0]
            return token is not None and hmac.compare_digest(token.encode(),
                                                             server.token.encode())
        return True

    def _body(self):
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise RequestError("bad Content-Length") from None
        if length > MAX_BODY:
            raise RequestError("request too large")
        data = self.rfile.read(length) if length else b"{}"
        try:
            body = json.loads(data)
        except ValueError:
            raise RequestError("the request is not JSON") from None
        if not isinstance(body, dict):
            raise RequestError("the request must be a JSON object")
        return body

    def _api(self, method, name, query, body):
        session = self.server.session
        route = ROUTES.get((method, name))
        if route is None:
            known = {n for _, n in ROUTES}
            return self._send(405 if name in known else 404,
                              {"error": f"no {method} /api/{name}"})
        if route == "view":  # GET /api/diagram?level=A/B
            args = ([n for n in (query.get("level") or [""])[0].split("/") if n],)
        else:
            args = (body,) if method == "POST" else ()
        with self.server.lock:
            answer = getattr(session, route)(*args)
        return self._send(200, answer)

    # -- answers -----------------------------------------------------------------------------
    def _file(self, folder, name):
        """A file inside `folder` (after following links), else 404."""
        root = Path(folder).resolve()
        try:
            target = (root / unquote(name)).resolve()
        except (OSError, ValueError):
            return self._send(404, {"error": "not found"})
        if not target.is_relative_to(root) or not target.is_file() or target == root:
            return self._send(404, {"error": "not found"})
        data = target.read_bytes()
        kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if kind.startswith("text/") or kind == "application/javascript":
            kind += "; charset=utf-8"
        self._reply(200, data, kind)

    def _send(self, status, payload):
        self._reply(status, json.dumps(_jsonable(payload), allow_nan=False, default=str).encode(),
                    "application/json; charset=utf-8")

    def _reply(self, status, data, kind):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        for key, value in _SECURITY.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)


def _jsonable(value):
    """JSON has no NaN or infinity (a value `.inf` in a diagram): those become null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value
