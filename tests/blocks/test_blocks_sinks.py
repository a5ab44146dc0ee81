"""Sinks: scope and xy_graph figures, display messages, terminator, stop."""
import subprocess
import sys

import numpy as np
import pytest
from harness import Rig

import blocks.sinks
from blocksim.block import FinalRun, PortError
from blocksim.params import ParamError
from blocks.sinks import Display, Scope, Stop, Terminator, XYGraph

T = np.linspace(0.0, 1.0, 11)


def final_run(inputs, out_dir=None, plots=True, complete=True, t=T):
    return FinalRun(t=t, inputs=inputs, out_dir=out_dir, plots=plots, complete=complete,
                    messages=[], reports={})


@pytest.fixture
def figures(monkeypatch):
    """Capture the figures sinks save (in order) instead of writing them."""
    saved = []
    monkeypatch.setattr(blocks.sinks, "_save", lambda block, run, fig: saved.append(fig))
    return saved


def test_matplotlib_is_not_imported_with_the_sinks():
    code = "import sys, blocks.sinks; sys.exit('matplotlib' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_scope_writes_a_png(tmp_path):
    rig = Rig(Scope, {"inputs": 2}, {"u1": (2,), "u2": ()}, name="sub/scope")
    assert rig.block.records_inputs
    run = final_run([np.c_[np.sin(T), np.cos(T)], T ** 2], tmp_path)
    rig.block.finalize(run)
    png = tmp_path / "sub.scope.png"  # '/' of a subsystem path replaced by '.'
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sub.scope.png"]  # no temporary left


def test_scope_writes_nothing_without_plots(tmp_path):
    rig = Rig(Scope, {}, {"u1": ()})
    rig.block.finalize(final_run([T], tmp_path, plots=False))
    rig.block.finalize(final_run([T], None, plots=True))
    assert list(tmp_path.iterdir()) == []


def test_scope_lines_labels_limits_and_title(tmp_path, figures):
    rig = Rig(Scope, {"inputs": 2, "labels": ["a", "b", "c"], "ylim": [-2, 2], "title": "q"},
              {"u1": (2,), "u2": ()})
    data = [np.c_[np.sin(T), np.cos(T)], T ** 2]
    rig.block.finalize(final_run(data, tmp_path))
    (fig,) = figures
    top, bottom = fig.axes
    assert [line.get_label() for line in top.lines] == ["a", "b"]  # one line per element
    assert [line.get_label() for line in bottom.lines] == ["c"]
    np.testing.assert_array_equal(top.lines[1].get_ydata(), np.cos(T))
    np.testing.assert_array_equal(bottom.lines[0].get_xdata(), T)
    assert top.get_ylim() == (-2, 2)
    assert top.get_title() == "q"
    rig.block.finalize(final_run(data, tmp_path, complete=False))
    assert figures[1].axes[0].get_title() == "q (incomplete)"


def test_scope_default_title_is_the_block_name(tmp_path, figures):
    rig = Rig(Scope, {}, {"u1": (2, 2)}, name="pos")
    rig.block.finalize(final_run([np.zeros((11, 2, 2))], tmp_path))
    assert figures[0].axes[0].get_title() == "pos"
    assert len(figures[0].axes[0].lines) == 4  # a matrix input: one line per element


@pytest.mark.parametrize("params, bad", [
    ({"labels": ["a", "b"]}, "labels"),  # 2 labels for 1 line
    ({"labels": [1]}, "labels"),
    ({"ylim": [1, 0]}, "ylim"),
    ({"ylim": [0, 1, 2]}, "ylim"),
    ({"inputs": 0}, "inputs"),
])
def test_scope_parameter_errors(params, bad):
    with pytest.raises(ParamError) as e:
        Rig(Scope, params, {"u1": ()})
    assert e.value.param == bad


def test_xy_graph_plots_y_against_x(tmp_path, figures):
    rig = Rig(XYGraph, {"xlim": [-1, 1], "title": "circle"}, {"x": (), "y": ()})
    rig.block.finalize(final_run([np.cos(T), np.sin(T)], tmp_path, complete=False))
    (ax,) = figures[0].axes
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), np.cos(T))
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), np.sin(T))
    assert ax.get_xlim() == (-1, 1)
    assert ax.get_title() == "circle (incomplete)"


def test_xy_graph_writes_a_png(tmp_path):
    rig = Rig(XYGraph, {}, {"x": (2,), "y": (2,)}, name="xy")
    rig.block.finalize(final_run([np.c_[T, 2 * T], np.c_[T ** 2, T]], tmp_path))
    assert (tmp_path / "xy.png").read_bytes()[:4] == b"\x89PNG"


def test_xy_graph_lines_are_named_by_labels_or_element_index(tmp_path, figures):
    data = [np.c_[T, 2 * T], np.c_[T ** 2, T]]
    Rig(XYGraph, {"labels": ["q1", "q2"]}, {"x": (2,), "y": (2,)}).block.finalize(
        final_run(data, tmp_path))
    Rig(XYGraph, {}, {"x": (2,), "y": (2,)}).block.finalize(final_run(data, tmp_path))
    named, indexed = (fig.axes[0] for fig in figures)
    assert [line.get_label() for line in named.lines] == ["q1", "q2"]
    np.testing.assert_array_equal(named.lines[1].get_ydata(), T)
    assert [text.get_text() for text in named.get_legend().get_texts()] == ["q1", "q2"]
    assert [line.get_label() for line in indexed.lines] == ["[0]", "[1]"]


@pytest.mark.parametrize("labels", [["a"], ["a", "b", "c"], [1, 2]])
def test_xy_graph_needs_one_label_per_line(labels):
    with pytest.raises(ParamError) as e:
        Rig(XYGraph, {"labels": labels}, {"x": (2,), "y": (2,)})
    assert e.value.param == "labels"


def test_xy_graph_shapes_must_match():
    with pytest.raises(PortError) as e:
        Rig(XYGraph, {}, {"x": (), "y": (2,)})
    assert e.value.port == "y"


def test_display_prints_the_final_value():
    run = final_run([np.linspace(0, np.pi, 11)])
    Rig(Display, {"format": "%.3f"}, {"u": ()}, name="d").block.finalize(run)
    assert run.messages == ["d: 3.142"]
    run = final_run([np.tile([1.0, 2.5], (11, 1))])
    Rig(Display, {}, {"u": (2,)}, name="v").block.finalize(run)
    assert run.messages == ["v: [1 2.5]"]  # default %.6g per element


def test_display_incomplete_and_empty_runs():
    run = final_run([T], complete=False)
    Rig(Display, {}, {"u": ()}, name="d").block.finalize(run)
    assert run.messages == ["d: 1  (run incomplete, t = 1)"]
    run = final_run([np.zeros(0)], t=np.zeros(0))
    Rig(Display, {}, {"u": ()}, name="d").block.finalize(run)
    assert run.messages == ["d: no value recorded"]


@pytest.mark.parametrize("fmt", ["%d %d", "value", "%q"])
def test_display_bad_format(fmt):
    with pytest.raises(ParamError):
        Rig(Display, {"format": fmt}, {"u": ()})


def test_terminator_and_stop_take_any_input():
    for cls in (Terminator, Stop):
        rig = Rig(cls, {}, {"u": (3, 2)})
        assert [p.name for p in rig.block.ports()[0]] == ["u"]
        assert rig.y == {}
    assert Stop.stops and not getattr(Terminator, "stops", False)
