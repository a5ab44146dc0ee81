"""--scheduler at an address where no Dask scheduler answers: exit 2 with a message naming
the address, never a hang or a traceback. Stand-in servers on loopback: one that accepts
and never answers (as a web server waiting for its request does), one that answers with
other bytes (an HTTP reply, as at the dashboard's port)."""
import socket
import threading

import pytest

import blocksim.batch.execute as sweep_exec
from blocksim.cli import main

from sweep_lag import METRICS, write_sweep

pytest.importorskip("distributed")


def _server(reply):
    """A loopback TCP server that accepts connections and sends `reply` (None: nothing)."""
    listener = socket.create_server(("127.0.0.1", 0))
    held = []

    def serve():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:  # closed
                return
            held.append(conn)
            if reply is not None:
                conn.sendall(reply)
    threading.Thread(target=serve, daemon=True).start()
    return listener, held


@pytest.mark.parametrize("reply", [None, b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"],
                         ids=["silent", "http"])
def test_scheduler_address_that_is_no_dask_scheduler(tmp_path, monkeypatch, capsys, reply):
    monkeypatch.setattr(sweep_exec, "CONNECT_SECONDS", 1.0)  # the silent one waits this long
    listener, held = _server(reply)
    address = "tcp://127.0.0.1:%d" % listener.getsockname()[1]
    path = write_sweep(tmp_path, "grid:\n  parameters.tau: [0.5, 1]\n" + METRICS)
    try:
        code = main(["sweep", str(path), "--scheduler", address, "--out", str(tmp_path / "out")])
    finally:
        listener.close()
        for conn in held:
            conn.close()
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"--scheduler: error: cannot connect to the Dask scheduler at {address}")
    assert "Traceback" not in err
    out = tmp_path / "out"  # made writable before the runs, nothing written in it
    assert not out.exists() or not any(out.iterdir())
