"""Sinks: blocks with inputs only. Plotting sinks record their inputs during the run and draw
after it (`finalize`); matplotlib is imported only then, and only when plots are wanted.

Figures are written as `<block>.png` in the run directory (a subsystem block's `/` replaced
by `.`), atomically.
"""
import numpy as np

from blocksim.accel.lowering import computes_nothing
from blocksim.util.atomic import atomic_path
from blocksim.block import Block, In, PortError
from blocksim.params import Param, ParamError


def _limits(param, value):
    """An axis-limit parameter: () for automatic, else (low, high) with low < high."""
    if value.size == 0:
        return None
    if value.shape != (2,) or not value[0] < value[1]:
        raise ParamError(param, f"expected [low, high] with low < high, got {value.tolist()}")
    return tuple(float(v) for v in value)


def _strings(param, value, count, what):
    """A text parameter given once for all (a string) or as a list of `count` strings."""
    if isinstance(value, str):
        return (value,) * count
    if (not isinstance(value, (list, tuple)) or len(value) != count
            or not all(isinstance(v, str) for v in value)):
        raise ParamError(param, f"expected a string or a list of {count} strings ({what})")
    return tuple(value)


def _labels(value):
    """The `labels` parameter: names of the plotted lines, a string for one line or a list."""
    labels = [value] if isinstance(value, str) else value
    if not isinstance(labels, (list, tuple)) or not all(isinstance(s, str) for s in labels):
        raise ParamError("labels", "expected a list of strings")
    return tuple(labels)


def _check_labels(labels, lines):
    if labels and len(labels) != lines:
        raise ParamError("labels", f"{len(labels)} labels for {lines} plotted lines")


def _title(block, run):
    title = block.p.title or block.name
    return title if run.complete else f"{title} (incomplete)"


def _with_unit(text, unit):
    return f"{text} ({unit})" if unit else text


def _signal(block, k, port):
    """The name of the signal wired to input k ('Position.y'), or the port's name."""
    names = block.signal_names
    return names[k] if k < len(names) and names[k] else port


def _element_names(block, k, shape):
    """Default names of the lines of input k: the names its driver gives its elements (a
    robot's q1..qn), else their indices ('[0]', '[1, 2]')."""
    given = block.signal_elements
    if k < len(given) and given[k]:
        return given[k]
    return [f"[{', '.join(map(str, i))}]" for i in np.ndindex(shape)]


def _legend_outside(ax):
    """A legend to the right of the axes, where it cannot cover the data."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
              fontsize="small", frameon=False)


def _plain_ticks(ax):
    """Tick labels that carry the values themselves: no offset ('1e-9 +1.2e1'), which makes
    nanovolt chatter on a 12 V signal read like a full-height swing."""
    ax.ticklabel_format(axis="both", useOffset=False)


def _save(block, run, fig):
    with atomic_path(run.out_dir / (block.name.replace("/", ".") + ".png")) as tmp:
        fig.savefig(tmp, dpi=100)


class Scope(Block):
    """Plots u1..uN against time into `<block>.png`.

    Inputs: u1..uN (N = inputs), any shapes: one axes per input, one line per element
    (row-major). Each y axis is labelled with its line's entry of `labels` for a single
    line, else with the name of the signal wired in (e.g. `Position.y`), and its unit from
    `units`; several lines get a legend beside the axes (the labels, else the names the
    driving port gives its elements, such as a robot's q1..qn, else the element indices),
    never over the data. title: default the block name, "(incomplete)" added when
    the run did not finish. ylim: [low, high] for every axes (default automatic).
    """

    type = "scope"
    lower = computes_nothing
    records_inputs = True
    params = (
        Param("inputs", "int", 1, "number of inputs", minimum=1),
        Param("title", "string", "", "figure title (default: the block name)"),
        Param("ylim", "value", (), "y-axis limits [low, high] (default: automatic)"),
        Param("labels", "data", (), "names of the plotted lines, one per line"),
        Param("units", "data", "", "unit of the y axes: one for all, or a list, one per input"),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        self._ylim = _limits("ylim", self.p.ylim)
        self._labels = _labels(self.p.labels)
        self._units = _strings("units", self.p.units, self.p.inputs, "one per input")

    def ports(self):
        return [In(f"u{i + 1}") for i in range(self.p.inputs)], []

    def infer(self, shapes):
        _check_labels(self._labels, sum(int(np.prod(s, dtype=int)) for s in shapes.values()))
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
            signal = _signal(self, k, f"u{k + 1}")
            names = [next(labels) if self._labels else None for _ in range(lines.shape[1])]
            if lines.shape[1] == 1:
                ax.plot(run.t, lines[:, 0], label=names[0])
                ax.set_ylabel(_with_unit(names[0] or signal, self._units[k]))
            else:
                default = _element_names(self, k, np.shape(data)[1:])
                for column, name, other in zip(lines.T, names, default):
                    ax.plot(run.t, column, label=name or other)
                ax.set_ylabel(_with_unit(signal, self._units[k]))
                _legend_outside(ax)
            ax.grid(True)
            _plain_ticks(ax)
            if self._ylim:
                ax.set_ylim(self._ylim)
        axes[-1].set_xlabel("t (s)")
        axes[0].set_title(_title(self, run))
        _save(self, run, fig)


class XYGraph(Block):
    """Plots y against x into `<block>.png`.

    Inputs: x, y of the same shape (one line per element for vectors, with a legend beside
    the axes naming each line by its entry of `labels`, else as the scope does). The axes
    are labelled `xlabel` / `ylabel`, else with the names of the signals wired in, and the
    units from `units` (one for both axes, or [x unit, y unit]). xlim, ylim: [low, high]
    (default automatic). title: default the block name, "(incomplete)" added when the run
    did not finish.
    """

    type = "xy_graph"
    lower = computes_nothing
    records_inputs = True
    params = (
        Param("xlim", "value", (), "x-axis limits [low, high] (default: automatic)"),
        Param("ylim", "value", (), "y-axis limits [low, high] (default: automatic)"),
        Param("title", "string", "", "figure title (default: the block name)"),
        Param("xlabel", "string", "", "x-axis label (default: the signal wired to x)"),
        Param("ylabel", "string", "", "y-axis label (default: the signal wired to y)"),
        Param("units", "data", "", "units of the axes: one for both, or [x unit, y unit]"),
        Param("labels", "data", (), "names of the plotted lines, one per element of x"),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        self._xlim = _limits("xlim", self.p.xlim)
        self._ylim = _limits("ylim", self.p.ylim)
        self._units = _strings("units", self.p.units, 2, "[x unit, y unit]")
        self._labels = _labels(self.p.labels)

    def ports(self):
        return [In("x"), In("y")], []

    def infer(self, shapes):
        if shapes["x"] != shapes["y"]:
            raise PortError("y", f"x and y must have the same shape, got {shapes['x']} and "
                                 f"{shapes['y']}")
        _check_labels(self._labels, int(np.prod(shapes["x"], dtype=int)))
        return {}

    def finalize(self, run):
        if not run.plots or run.out_dir is None:
            return
        from matplotlib.figure import Figure

        x, y = (np.asarray(v).reshape(len(run.t), -1) for v in run.inputs)
        fig = Figure(figsize=(6, 6), layout="constrained")
        ax = fig.subplots()
        names = self._labels or _element_names(self, 1, np.shape(run.inputs[1])[1:])
        for xi, yi, name in zip(x.T, y.T, names):
            ax.plot(xi, yi, label=name)
        ax.set_xlabel(_with_unit(self.p.xlabel or _signal(self, 0, "x"), self._units[0]))
        ax.set_ylabel(_with_unit(self.p.ylabel or _signal(self, 1, "y"), self._units[1]))
        if x.shape[1] > 1:
            _legend_outside(ax)
        ax.grid(True)
        _plain_ticks(ax)
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
    lower = computes_nothing
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
    lower = computes_nothing

    def ports(self):
        return [In("u")], []


class Stop(Block):
    """Ends the run, normally and complete, at the first time u is non-zero (any element).

    Input: u, any shape. The block computes nothing: the simulator reads u after every step and
    locates the first non-zero time on the solver's dense output.
    """

    type = "stop"
    lower = computes_nothing
    stops = True

    def ports(self):
        return [In("u")], []
