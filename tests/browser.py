"""A headless Chromium driven over the DevTools protocol, with the standard library only.

Chromium started with `--remote-debugging-pipe` reads protocol commands (JSON, each ended by
a NUL byte) from file descriptor 3 and writes replies and events to descriptor 4, so no
websocket client is needed. `Page` opens a file or an address, waits for its load event and
collects every console message, uncaught exception, log entry and network request on the
way; it moves, presses and releases the mouse, types keys and text as a user does
(Input.dispatchMouseEvent, Input.dispatchKeyEvent: the page sees real pointer and keyboard
events) and takes screenshots. Shared by tests/report (the report pages) and tests/edit
(the editor).
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe")


def executable():
    """Debian's `chromium` (or a Chrome) on the PATH, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class BrowserError(RuntimeError):
    pass


def _high(fds):
    """The pipe's descriptors moved above 10, clear of the 3 and 4 the child needs."""
    moved = tuple(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds)
    for fd in fds:
        os.close(fd)
    return moved


class Browser:
    def __init__(self, timeout=60.0):
        exe = executable()
        if exe is None:
            raise BrowserError("no chromium on the PATH")
        self.timeout = timeout
        self.profile = tempfile.TemporaryDirectory(prefix="blocksim-chromium-")
        to_child, self._write = _high(os.pipe())  # the child's fd 3: commands
        self._read, from_child = _high(os.pipe())  # the child's fd 4: replies and events
        # bash puts the pipe ends on fds 3 and 4, then becomes chromium
        script = f'exec "$0" "$@" 3<&{to_child} 4>&{from_child} {to_child}<&- {from_child}>&-'
        self.proc = subprocess.Popen(
            ["bash", "-c", script, exe, *FLAGS, f"--user-data-dir={self.profile.name}",
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(to_child, from_child))
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._next_id = 0
        self.events = []

    # -- protocol ----------------------------------------------------------------------------
    def send(self, method, params=None, session=None):
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        want = self._next_id
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == want:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method, deadline):
        for i, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(i)
        while True:
            event = self._receive(deadline)
            if event.get("method") == method:
                return event
            self.events.append(event)

    def _receive(self, deadline):
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("chromium did not answer in time")
            ready, _, _ = select.select([self._read], [], [], left)
            if ready:
                chunk = os.read(self._read, 1 << 20)
                if not chunk:
                    raise BrowserError("chromium closed the connection")
                self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    # -- pages -------------------------------------------------------------------------------
    def open(self, path, size=None):
        """Open a local file (or an http:// address) in a new tab, of `size` (width, height)
        CSS pixels when given; returns a Page once its load event fired."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session, target)
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable", session=session)
        if size is not None:
            self.send("Emulation.setDeviceMetricsOverride", {
                "width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": False},
                session=session)
        url = str(path) if str(path).startswith("http") else f"file://{os.path.abspath(path)}"
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_for("Page.loadEventFired", time.monotonic() + self.timeout)
        return page

    def close(self):
        try:
            self.send("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._read, self._write):
            try:
                os.close(fd)
            except OSError:
                pass
        self.profile.cleanup()


class Page:
    def __init__(self, browser, session, target=None):
        self.browser = browser
        self.session = session
        self.target = target

    def close(self):
        if self.target is not None:
            self.browser.send("Target.closeTarget", {"targetId": self.target})

    def evaluate(self, expression):
        """The value of a JavaScript expression (promises awaited)."""
        result = self.browser.send("Runtime.evaluate", {
            "expression": expression, "returnByValue": True, "awaitPromise": True},
            session=self.session)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def _events(self):
        return [e for e in self.browser.events if e.get("sessionId") == self.session]

    def problems(self):
        """Console errors and warnings, uncaught exceptions, and error log entries (e.g. a
        resource that failed to load or decode)."""
        out = []
        for e in self._events():
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description"))) for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                out.append(json.dumps(params.get("exceptionDetails", {}))[:500])
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                out.append(params["entry"].get("text", ""))
        return out

    def requests(self):
        """URLs of every network request the page made."""
        return [e["params"]["request"]["url"] for e in self._events()
                if e.get("method") == "Network.requestWillBeSent"]

    # -- as a user ---------------------------------------------------------------------------
    def mouse(self, kind, x, y, button="left", buttons=None, modifiers=0, clicks=1):
        """One mouse event at (x, y) CSS pixels: kind is mouseMoved, mousePressed or
        mouseReleased."""
        if buttons is None:
            buttons = 1 if kind == "mousePressed" else 0
        self.browser.send("Input.dispatchMouseEvent", {
            "type": kind, "x": x, "y": y, "button": button if kind != "mouseMoved" or buttons else "none",
            "buttons": buttons, "clickCount": clicks, "modifiers": modifiers},
            session=self.session)

    def drag(self, start, end, steps=8, modifiers=0):
        """Press at `start`, move in steps to `end`, release there."""
        (x0, y0), (x1, y1) = start, end
        self.mouse("mouseMoved", x0, y0)
        self.mouse("mousePressed", x0, y0, modifiers=modifiers)
        for k in range(1, steps + 1):
            f = k / steps
            self.mouse("mouseMoved", x0 + (x1 - x0) * f, y0 + (y1 - y0) * f, buttons=1,
                       modifiers=modifiers)
        self.mouse("mouseReleased", x1, y1, modifiers=modifiers)

    def click(self, x, y, clicks=1, modifiers=0):
        self.mouse("mouseMoved", x, y)
        for k in range(1, clicks + 1):
            self.mouse("mousePressed", x, y, clicks=k, modifiers=modifiers)
            self.mouse("mouseReleased", x, y, clicks=k, modifiers=modifiers)

    def key(self, key, modifiers=0):
        """Press and release one key ('Delete', 'Enter', or 'z' with modifiers=CTRL); the
        page sees keydown and keyup events (text is typed with `type`)."""
        params = {"key": key, "code": f"Key{key.upper()}" if len(key) == 1 else key,
                  "modifiers": modifiers,
                  "windowsVirtualKeyCode": _KEY_CODES.get(key, ord(key.upper()[0]))}
        self.browser.send("Input.dispatchKeyEvent", dict(params, type="rawKeyDown"),
                          session=self.session)
        self.browser.send("Input.dispatchKeyEvent", dict(params, type="keyUp"),
                          session=self.session)

    def type(self, text):
        """Text typed into the focused element."""
        self.browser.send("Input.insertText", {"text": text}, session=self.session)

    def screenshot(self, path=None):
        """The page as PNG bytes (also written to `path` when given)."""
        png = base64.b64decode(self.browser.send("Page.captureScreenshot", {"format": "png"},
                                                 session=self.session)["data"])
        if path is not None:
            with open(path, "wb") as f:
                f.write(png)
        return png


# Windows virtual key codes of the keys the tests press (what a keyboard event's keyCode says)
_KEY_CODES = {"Enter": 13, "Escape": 27, "Delete": 46, "Backspace": 8, "Tab": 9, "F2": 113}
CTRL, SHIFT = 2, 8  # Input.dispatchKeyEvent's modifier bits
