"""A run started from the editor: the diagram as edited (unsaved changes too), run as
`blocksim run` runs it (the mode it picks, the run directory runs/<name>/, figures and
report), in a thread of its own so that the page can ask how far it got, stop it, and plot
what it recorded and what its scopes were given."""
from __future__ import annotations

import math
import threading
import traceback
from pathlib import Path

import numpy as np

from .. import api
from ..engine.compiler import compile_diagram
from ..errors import DiagramError, DiagramErrors, OutputError, SimulationError
from ..language.diagram import load_diagram

MAX_POINTS = 2000  # per plotted signal: buckets keeping each column's extremes


class Run:
    def __init__(self, doc, runs_dir):
        self.texts = doc.texts()
        self.shown = doc.shown
        self.runs_dir = Path(runs_dir)
        self.state = "starting"
        self.t = None
        self.span = None  # (start, stop) of the simulation
        self.error = None  # {"text", "block", "port", "time"} of a failed run
        self.problems = []  # check's messages when the diagram is invalid
        self.messages = []
        self.out = None  # the run directory
        self.result = None
        self.model = None
        self._stop = threading.Event()
        self._thread = None

    @property
    def running(self):
        return self.state in ("starting", "running")

    def start(self):
        self._thread = threading.Thread(target=self._run, name="blocksim-edit-run", daemon=True)
        self._thread.start()

    def join(self, timeout=None):
        if self._thread is not None:
            self._thread.join(timeout)

    def stop(self):
        self._stop.set()

    def _progress(self, t):
        self.t = t
        if self._stop.is_set():
            raise KeyboardInterrupt

    def _run(self):
        try:
            spec = load_diagram(self.shown, texts=self.texts)
            self.model = model = compile_diagram(spec)
        except (DiagramError, DiagramErrors) as e:
            self.problems = [str(x) for x in (e.errors if isinstance(e, DiagramErrors) else [e])]
            self.state = "invalid"
            return
        self.span = (model.settings.start, model.settings.stop)
        self.out = self.runs_dir / model.name
        self.state = "running"
        try:
            self.result = api.execute(model, out=self.out, plots=True, progress=self._progress)
            self.state = "done"
        except SimulationError as e:
            self.result = getattr(e, "result", None)
            self.error = {"text": str(e), "block": e.block, "port": e.port, "time": e.time}
            self.state = "failed"
        except KeyboardInterrupt as e:
            self.result = getattr(e, "result", None)
            self.state = "stopped"
        except (DiagramError, OutputError) as e:  # the run directory cannot be written
            self.error = {"text": str(e), "block": None, "port": None, "time": None}
            self.state = "failed"
        except Exception as e:  # a bug: said on the page, its traceback on the terminal
            traceback.print_exc()
            self.error = {"text": f"internal error: {type(e).__name__}: {e}", "block": None,
                          "port": None, "time": None}
            self.state = "failed"
        if self.result is not None:
            self.messages = list(self.result.messages)

    def status(self):
        fraction = None
        if self.span and self.t is not None and self.span[1] > self.span[0]:
            fraction = min(max((self.t - self.span[0]) / (self.span[1] - self.span[0]), 0.0), 1.0)
        meta = self.result.meta if self.result is not None else {}
        return {"state": self.state, "t": self.t, "fraction": fraction,
                "stop": self.span[1] if self.span else None,
                "error": self.error, "problems": self.problems, "messages": self.messages,
                "out": str(self.out) if self.out else None,
                "mode": (meta.get("mode") or {}).get("mode"),
                "wall_time": meta.get("wall_time"),
                "files": [f for f in meta.get("files", []) if f.endswith((".png", ".gif", ".html"))]}

    def results(self):
        """The recorded signals and what each scope plotted, thinned for the page."""
        result = self.result
        if result is None:
            return {"t": [], "signals": [], "scopes": [], "status": self.status()}
        signals = [_signal(name, result.t, np.asarray(values), name)
                   for name, values in result.data.items()]
        scopes = []
        sinks = {block.name: block for block, *_ in self.model.sinks} if self.model else {}
        for name, (ts, inputs) in result.sinks.items():
            block = sinks.get(name)
            if block is None:
                continue
            labels = block.signal_names
            elements = block.signal_elements
            ports = [p.name for p in block.ports()[0]]
            scopes.append({"name": name, "type": block.type, "inputs": [
                _signal(ports[k], ts, np.asarray(values), labels[k] if k < len(labels) else "",
                        elements[k] if k < len(elements) else ())
                for k, values in enumerate(inputs)]})
        # the scopes and xy graphs first (in the diagram's order), other recording sinks after
        scopes.sort(key=lambda s: s["type"] not in ("scope", "xy_graph"))
        return {"signals": signals, "scopes": scopes, "status": self.status()}


def _signal(name, t, values, label, elements=()):
    """One signal as the page plots it: its columns named as its driver names its elements
    (a robot's q1..qn), else as results.csv names them ('q[0]', 'M[0,1]')."""
    t = np.asarray(t, dtype=float)
    rows = values.reshape(len(t), -1) if values.size else values.reshape(len(t), 0)
    shape = values.shape[1:]
    if elements and len(elements) == rows.shape[1]:
        names = list(elements)
    elif shape:
        names = [f"{label or name}[{','.join(map(str, i))}]" for i in np.ndindex(*shape)]
    else:
        names = [label or name]
    keep = _thinned(rows)
    return {"name": name, "label": label, "shape": list(shape), "columns": names,
            "t": _numbers(t[keep]), "data": [_numbers(col) for col in rows[keep].T]}


def _thinned(rows):
    """Row indices to plot: all of them when few, else in each of MAX_POINTS/2 buckets the
    first row and every column's smallest and largest (a thin line keeps its peaks)."""
    n = len(rows)
    if n <= MAX_POINTS:
        return np.arange(n)
    buckets = MAX_POINTS // 2
    edges = np.linspace(0, n, buckets + 1).astype(int)
    keep = {0, n - 1}
    for a, b in zip(edges[:-1], edges[1:]):
        if b > a:
            chunk = rows[a:b]
            keep.add(a)
            if chunk.shape[1]:
                finite = np.where(np.isfinite(chunk), chunk, 0.0)
                keep.update((a + np.argmin(finite, axis=0)).tolist())
                keep.update((a + np.argmax(finite, axis=0)).tolist())
    return np.array(sorted(keep))


def _numbers(values):
    return [float(v) if math.isfinite(v) else None for v in np.asarray(values, dtype=float)]
