"""Screenshots of `blocksim edit` for docs/editor.md: demo3 on the canvas with a block's
parameters in the inspector, and demo3's scope after a run.

    python demos/editor.py                    # into runs/demos/
    python demos/editor.py --update-figures   # the copies docs/editor.md shows

The editor runs in this process on a copy of diagrams/demo3.yaml; a headless Chromium
(Debian's `chromium`) is driven through the page as a user drives it, with the DevTools
client the tests use (tests/browser.py).
"""
import io
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from _figures import DIAGRAMS, ROOT, parse_args

sys.path.insert(0, str(ROOT / "tests"))

SIZE = (1440, 860)  # CSS pixels of the window


def main(argv=None):
    args = parse_args(__doc__.splitlines()[0], argv)
    from browser import Browser, executable
    from PIL import Image

    from blocksim.edit.server import EditorServer
    from blocksim.edit.session import Session

    if executable() is None:
        sys.exit("demos/editor.py needs chromium (apt-get install chromium)")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "demo3.yaml"
        shutil.copy(DIAGRAMS / "demo3.yaml", path)
        server = EditorServer(Session(path, Path(tmp) / "runs"))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        browser = Browser()
        try:
            page = browser.open(server.url, size=SIZE)
            shots = _drive(page)
        finally:
            browser.close()
            server.shutdown()
            server.server_close()
    for name, png in shots.items():
        target = args.out / name
        Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=128).save(target, optimize=True)
        print(f"wrote {target}")


def _drive(page):
    """Select Kp (its parameters in the inspector) and shoot; run, show the scope, hover the
    plot (the cursor readout) and shoot."""
    js = page.evaluate
    js("window.blocksimEditor.idle()")
    shots = {}
    x, y, w, h = js("(() => { const r = document.querySelector('[data-block=\"Kp\"] rect')"
                    ".getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()")
    page.click(x + 4, y + h - 4)
    js("window.blocksimEditor.idle()")
    page.mouse("mouseMoved", *_centre(js, '[data-port="Kp.y"] .hit'))
    shots["editor_demo3.png"] = page.screenshot()
    page.key("Escape")
    page.click(*_centre(js, '[data-action="run"]'))
    deadline = time.monotonic() + 300
    while js("document.querySelector('#progress').dataset.state") in (None, "idle", "starting",
                                                                       "running"):
        if time.monotonic() > deadline:
            raise RuntimeError("the run did not finish")
        time.sleep(0.1)
    js("window.blocksimEditor.idle()")
    cx, cy = _centre(js, "#plots canvas")
    page.mouse("mouseMoved", cx + 120, cy)
    shots["editor_scope.png"] = page.screenshot()
    return shots


def _centre(js, selector):
    x, y, w, h = js(f"(() => {{ const r = document.querySelector('{selector}')"
                    ".getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()")
    return x + w / 2, y + h / 2


if __name__ == "__main__":
    main()
