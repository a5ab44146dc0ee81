"""Figures that read like scopes: axes labelled with the given labels or the wired signal's
name and the unit, legends beside the axes (never over the data), xy graphs labelled with
their signals -- drawn from a real diagram, so the names come from its wires."""
import numpy as np
import pytest

import blocks.sinks
import blocksim

DIAGRAM = """blocksim: 1
parameters: {m: 1.0, c: 0.4, k: 4.0}
blocks:
  Force: {type: step, time: 1}
  Sum: {type: sum, signs: "+--"}
  InvMass: {type: gain, K: 1/m}
  Velocity: {type: integrator}
  Position: {type: integrator}
  Damping: {type: gain, K: c}
  Spring: {type: gain, K: k}
  Both: {type: mux}
  Scope: {type: scope, inputs: 3, units: [m, m/s, ""] %s}
  Phase: {type: xy_graph %s}
wires:
  - Force -> Sum.u1
  - Damping -> Sum.u2
  - Spring -> Sum.u3
  - Sum -> InvMass
  - InvMass -> Velocity
  - Velocity -> Position
  - Velocity -> Damping
  - Position -> Spring
  - Position -> Scope.u1
  - Velocity -> Scope.u2
  - Position -> Both.u1
  - Velocity -> Both.u2
  - Both -> Scope.u3
  - Position -> Phase.x
  - Both[1] -> Phase.y
simulation: {stop: 5}
"""


@pytest.fixture
def figures(monkeypatch, tmp_path):
    """Run the diagram with plots; return {block name: figure} as the sinks saved them."""
    saved = {}
    monkeypatch.setattr(blocks.sinks, "_save", lambda block, run, fig: saved.__setitem__(
        block.name, fig))

    def run(scope="", phase=""):
        path = tmp_path / "d.yaml"
        path.write_text(DIAGRAM % (scope, phase))
        blocksim.run(path, out=tmp_path / "out", plots=True)
        return saved
    return run


def test_axes_are_named_after_the_wired_signals_with_units(figures):
    fig = figures()["Scope"]
    top, middle, bottom = fig.axes[:3]
    assert top.get_ylabel() == "Position.y (m)"
    assert middle.get_ylabel() == "Velocity.y (m/s)"
    assert bottom.get_ylabel() == "Both.y"
    assert bottom.get_xlabel() == "t (s)"
    assert [t.get_text() for t in bottom.get_legend().get_texts()] == ["[0]", "[1]"]
    assert top.get_legend() is None  # one line: its name is the axis label


def test_labels_name_the_lines(figures):
    fig = figures(scope=', labels: [x, v, "x(t)", "v(t)"]')["Scope"]
    top, middle, bottom = fig.axes[:3]
    assert top.get_ylabel() == "x (m)" and middle.get_ylabel() == "v (m/s)"
    assert bottom.get_ylabel() == "Both.y"
    assert [t.get_text() for t in bottom.get_legend().get_texts()] == ["x(t)", "v(t)"]


def test_legends_never_cover_the_data(figures):
    fig = figures(scope=', labels: [x, v, "x(t)", "v(t)"]')["Scope"]
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    FigureCanvasAgg(fig).draw()
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        box, plot = legend.get_window_extent(), ax.get_window_extent()
        assert box.x0 >= plot.x1 or box.x1 <= plot.x0 or box.y0 >= plot.y1 or box.y1 <= plot.y0
        assert box.x1 <= fig.bbox.x1 + 1  # and it is inside the figure


def test_xy_graph_axes_name_the_signals_or_the_given_labels(figures):
    ax = figures()["Phase"].axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("Position.y", "Both.y[1]")
    ax = figures(phase=", xlabel: position, ylabel: velocity, units: [m, m/s]")["Phase"].axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("position (m)", "velocity (m/s)")
    np.testing.assert_array_equal(ax.lines[0].get_xdata().shape, ax.lines[0].get_ydata().shape)


def test_units_must_fit_the_inputs(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text(DIAGRAM.replace("units: [m, m/s, \"\"]", "units: [m, m/s]") % ("", ""))
    with pytest.raises(blocksim.DiagramError, match="parameter 'units': expected a string or "
                                                    "a list of 3 strings"):
        blocksim.load(path)


def test_no_offset_notation_on_scope_and_xy_axes(monkeypatch, tmp_path):
    """Issue 23: a signal of 12 with nanovolt chatter was drawn on axes labelled '1e-9 +1.2e1'
    (matplotlib's offset notation), which reads as a full-height swing. The ticks now carry
    the values themselves: no offset text on any axis of a scope or an xy graph."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    saved = {}
    monkeypatch.setattr(blocks.sinks, "_save", lambda block, run, fig: saved.__setitem__(
        block.name, fig))
    path = tmp_path / "d.yaml"
    path.write_text("""blocksim: 1
blocks:
  Chatter: {type: sine, amplitude: 1e-9, frequency: 50, bias: 12}
  Scope: {type: scope}
  XY: {type: xy_graph}
wires: [Chatter -> Scope, Chatter -> XY.x, Chatter -> XY.y]
simulation: {stop: 1}
""")
    blocksim.run(path, out=tmp_path / "out", plots=True)
    for name in ("Scope", "XY"):
        fig = saved[name]
        FigureCanvasAgg(fig).draw()  # the formatters decide on an offset when drawn
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                assert axis.get_offset_text().get_text() == "", (name, axis)
        ticks = [t.get_text() for t in fig.axes[0].get_yticklabels() if t.get_text()]
        assert ticks and all(abs(float(t.replace("\u2212", "-")) - 12) < 1e-8 for t in ticks), ticks
