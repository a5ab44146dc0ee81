"""A `blocksim edit` server in a thread of the test process, and a client that can send
whatever headers a test wants (a foreign Origin, another Host, no token)."""
import http.client
import json
import shutil
import threading
from pathlib import Path

from blocksim.edit.server import EditorServer
from blocksim.edit.session import Session

ROOT = Path(__file__).resolve().parents[2]


class Running:
    """`with Running(path, runs) as server:` a server for `path` until the block ends."""

    def __init__(self, path, runs_dir):
        self.session = Session(path, runs_dir)
        self.server = EditorServer(self.session)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        if self.session.run is not None:
            self.session.run.stop()
            self.session.run.join(60)
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)

    @property
    def url(self):
        return self.server.url

    def request(self, method, path, body=None, token=True, headers=None):
        """(status, headers, body bytes) of one request, with the session's Host and token
        unless told otherwise."""
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
        sent = {"Host": f"127.0.0.1:{self.server.port}"}
        if token:
            sent["X-Blocksim-Token"] = self.server.token
        sent.update(headers or {})
        data = json.dumps(body).encode() if body is not None else None
        if data is not None:
            sent["Content-Type"] = "application/json"
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for key, value in sent.items():
            if value is not None:
                conn.putheader(key, value)
        if data is not None:
            conn.putheader("Content-Length", str(len(data)))
        conn.endheaders(data)
        reply = conn.getresponse()
        out = reply.status, dict(reply.getheaders()), reply.read()
        conn.close()
        return out

    def api(self, method, name, body=None, status=200):
        code, _, data = self.request(method, f"/api/{name}", body)
        assert code == status, (code, data[:500])
        return json.loads(data)


def copy_diagram(name, folder, source=ROOT / "diagrams"):
    """A diagram and everything next to it (subsystem files, the folders of the files its
    blocks read, such as fmu/) copied into `folder`; its path."""
    shutil.copytree(source, folder, dirs_exist_ok=True)
    return Path(folder) / name
