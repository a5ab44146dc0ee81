"""Sinks: blocks with inputs only. Plotting sinks record their inputs during the run and draw
after it (`finalize`); matplotlib is imported only then, and only when plots are wanted.

Figures are written as `<block>.png` in the run directory (a subsystem block's `/` replaced
by `.`), atomically.
"""
import numpy as np

from blocksim.atomic import atomic_path
from blocksim.block import Block, In, PortError
from blocksim.params import Param, ParamError


def _limits(param, value):
    """An axis-limit parameter: () for automatic, else (low, high) with low < high."""
    if value.size == 0:
        return None
    if value.shape != (2,) or not value[0] < value[1]:
        raise ParamError(param, f"expected [low, high] with low < high, got {value.tolist()}")
    return tuple(float(v) for v in value)


def _title(block, run):
    title = block.p.title or block.name
    return title if run.complete else f"{title} (incomplete)"


def _save(block, run, fig):
    with atomic_path(run.out_dir / (block.name.replace("/", ".") + ".png")) as tmp:
        fig.savefig(tmp, dpi=100)


class Scope(Block):
    """Plots u1..uN against time into `<block>.png`.

    Inputs: u1..uN (N = inputs), any shapes: one axes per input, one line per element
    (row-major). title: default the block name, "(incomplete)" added when the run did not
    finish. ylim: [low, high] for every axes (default automatic). labels: legend entries, one
    per line, in input then element order.
    """

    type = "scope"
    records_inputs = True
    params = (
        Param("inputs", "int", 1, "number of inputs", minimum=1),
        Param("title", "string", "", "figure title (default: the block name)"),
        Param("ylim", "value", (), "y-axis limits [low, high] (default: automatic)"),
        Param("labels", "data", (), "legend entries, one per line"),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        self._ylim = _limits("ylim", self.p.ylim)
        labels = self.p.labels
        labels = [labels] if isinstance(labels, str) else labels
        if not isinstance(labels, (list, tuple)) or not all(isinstance(s, str) for s in labels):
            raise ParamError("labels", "expected a list of strings")
        self._labels = tuple(labels)

    def ports(self):
        return [In(f"u{i + 1}") for i in range(self.p.inputs)], []

    def infer(self, shapes):
        lines = sum(int(np.prod(s, dtype=int)) for s in shapes.values())
        if self._labels and len(self._labels) != lines:
            raise ParamError("labels", f"{len(self._labels)} labels for {lines} plotted lines")
        return {}

    def finalize(self, run):
        if not run.plots or run.out_dir is None:
            return
        from matplotlib.figure import Figure

        n = len(run.inputs)
        fig = Figure(figsize=(8, 1.0 + 2.5 * n), layout="constrained")
        axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
        labels = iter(self._labels)
        for k, (ax, data) in enumerate(zip(axes, run.inputs)):
            lines = np.asarray(data).reshape(len(run.t), -1)
            for column in lines.T:
                ax.plot(run.t, column, label=next(labels, None))
            ax.set_ylabel(f"u{k + 1}")
            ax.grid(True)
            if self._ylim:
                ax.set_ylim(self._ylim)
            if self._labels:
                ax.legend(loc="best")
        axes[-1].set_xlabel("t (s)")
        axes[0].set_title(_title(self, run))
        _save(self, run, fig)


class XYGraph(Block):
    """Plots y against x into `<block>.png`.

    Inputs: x, y of the same shape (one line per element for vectors). xlim, ylim: [low, high]
    (default automatic). title: default the block name, "(incomplete)" added when the run did
    not finish.
    """

    type = "xy_graph"
    records_inputs = True
    params = (
        Param("xlim", "value", (), "x-axis limits [low, high] (default: automatic)"),
        Param("ylim", "value", (), "y-axis limits [low, high] (default: automatic)"),
        Param("title", "string", "", "figure title (default: the block name)"),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        self._xlim = _limits("xlim", self.p.xlim)
        self._ylim = _limits("ylim", self.p.ylim)

    def ports(self):
        return [In("x"), In("y")], []

    def infer(self, shapes):
        if shapes["x"] != shapes["y"]:
            raise PortError("y", f"x and y must have the same shape, got {shapes['x']} and "
                                 f"{shapes['y']}")
        return {}

    def finalize(self, run):
        if not run.plots or run.out_dir is None:
            return
        from matplotlib.figure import Figure

        x, y = (np.asarray(v).reshape(len(run.t), -1) for v in run.inputs)
        fig = Figure(figsize=(6, 6), layout="constrained")
        ax = fig.subplots()
        ax.plot(x, y)
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        ax.grid(True)
        if self._xlim:
            ax.set_xlim(self._xlim)
        if self._ylim:
            ax.set_ylim(self._ylim)
        ax.set_title(_title(self, run))
        _save(self, run, fig)


class Display(Block):
    """Prints the final value of u at the end of the run, as `<block>: <value>`.

    Input: u, any shape. format: printf-style format of one number, applied to every element.
    """

    type = "display"
    records_inputs = True
    params = (Param("format", "string", "%.6g", "format of one number, e.g. %.3f"),)

    def __init__(self, name, params):
        super().__init__(name, params)
        try:
            self.p.format % 1.0
        except (TypeError, ValueError) as e:
            raise ParamError("format", f"not a format for one number ({e}), e.g. %.3f") from None

    def ports(self):
        return [In("u")], []

    def finalize(self, run):
        if len(run.t) == 0:
            run.messages.append(f"{self.name}: no value recorded")
            return
        value = np.asarray(run.inputs[0][-1])
        fmt = self.p.format
        text = (fmt % float(value) if value.ndim == 0 else
                np.array2string(value, formatter={"float_kind": lambda v: fmt % v}))
        if not run.complete:
            text += f"  (run incomplete, t = {run.t[-1]:g})"
        run.messages.append(f"{self.name}: {text}")


class Terminator(Block):
    """Absorbs a signal nothing else uses; computes nothing.

    Input: u, any shape.
    """

    type = "terminator"

    def ports(self):
        return [In("u")], []


class Stop(Block):
    """Ends the run, normally and complete, at the first time u is non-zero (any element).

    Input: u, any shape. The block computes nothing: the simulator reads u after every step and
    locates the first non-zero time on the solver's dense output.
    """

    type = "stop"
    stops = True

    def ports(self):
        return [In("u")], []
