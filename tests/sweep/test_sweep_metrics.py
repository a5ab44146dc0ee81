"""Sweep metrics: the reductions (time statistics weighted by time), signal names that shadow
constants, one number per run."""
import math

import numpy as np
import pytest

import blocksim
from blocksim.batch.metrics import Metrics

T = np.linspace(0.0, 2.0, 5)
E = np.array([[0.0, 1.0], [3.0, -4.0], [-6.0, 2.0], [1.0, 1.0], [0.5, -0.5]])


@pytest.mark.parametrize("text, expected", [
    ("max(abs(e))", 6.0),
    # time statistics: integrals over the 2 s by numpy's trapezoid rule, divided by 2 s
    ("mean(e)", np.trapezoid(E.mean(axis=1), T) / 2),
    ("rms(e)", np.sqrt(np.trapezoid((E ** 2).mean(axis=1), T) / 2)),
    ("std(e[:, 0])", np.sqrt(np.trapezoid((E[:, 0] - np.trapezoid(E[:, 0], T) / 2) ** 2, T) / 2)),
    ("mean(final(e))", 0.0),  # no time axis: the plain mean of the elements
    ("mean(e[2:], t[2:])", np.trapezoid(E[2:].mean(axis=1), T[2:]) / 1),  # a slice of time
    ("norm(final(e))", np.hypot(0.5, -0.5)),
    ("t[argmax(abs(e))]", 1.0),  # the largest |e| is -6 in row 2, at t = 1.0
    ("t[argmin(e)]", 1.0),  # the smallest element, -6, is in the same row
    ("argmax(e[:, 1])", 2.0),
    ("max(abs(diff(e)))", 9.0),  # e[2,0] - e[1,0] = -9
    ("sum(e) / 10", E.sum() / 10),
    ("e", None),  # a signal that is a constant's name: the signal wins
])
def test_reductions(text, expected):
    m = Metrics({"m": text}, {"e": E.shape[1:]})
    if expected is None:
        assert m.check_shapes({"e": (2,)}) and "not one number" in m.check_shapes({"e": (2,)})["m"]
        return
    assert m.problems == {} and m.check_shapes({"e": (2,)}) == {}
    assert m.evaluate(T, {"e": E})["m"] == pytest.approx(expected, rel=1e-12)


def test_problems_are_reported_per_metric():
    m = Metrics({"a": "max(q)", "b": "eval('1')", "c": "final(x) @ x", "ok": "norm(final(x))"},
                ["x"])
    assert set(m.problems) == {"a", "b"}
    assert "unknown name 'q'" in m.problems["a"]
    shape_problems = m.check_shapes({"x": (2,)})
    assert set(shape_problems) == {"c"}  # (2,) @ (N, 2): shapes that do not match


def test_a_metric_failing_on_a_run_names_itself():
    m = Metrics({"first": "argmax(x)"}, ["x"])
    with pytest.raises(ValueError, match="metric 'first'"):
        m.evaluate(np.zeros(0), {"x": np.zeros((0,))})


@pytest.mark.parametrize("text", ["x[10]", "mean(x[100:])", "x[-50] - x[0]"])
def test_an_index_valid_for_the_recorded_samples_passes_the_check(text, recwarn):
    # the check cannot know how many samples a run records: x[10] is a metric of every run
    # with at least 11 samples (a 200-sample run here), not an error before anything runs
    m = Metrics({"m": text}, ["x"])
    assert m.check_shapes({"x": ()}) == {}
    x = np.arange(200.0) ** 2
    expected = {"x[10]": 100.0, "mean(x[100:])": np.mean(x[100:]), "x[-50] - x[0]": 150.0 ** 2}
    assert m.evaluate(np.arange(200.0), {"x": x})["m"] == expected[text]
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_an_index_that_fits_no_signal_is_still_an_error():
    m = Metrics({"two": "x[0, 5]", "far": "x[10**9]"}, ["x"])
    problems = m.check_shapes({"x": ()})
    assert "too many indices" in problems["two"]
    assert "out of bounds" in problems["far"]


# rows crowded into the first second, then 50 rows over the rest of two whole periods: the
# uneven spacing of an adaptive solver's rows, exaggerated
UNEVEN = np.concatenate([np.linspace(0.0, 1.0, 2000), np.linspace(1.0, 4 * np.pi, 51)[1:]])


def test_time_statistics_of_a_sine_on_uneven_rows_are_the_closed_form():
    # over whole periods: mean(sin) = 0, rms(sin) = std(sin) = 1/sqrt(2); for x = 1 + sin t
    # the mean is 1 and the std still 1/sqrt(2). The trapezoid rule errs by at most
    # h^2/12 max|f''| on a time average (h the widest row spacing): h^2/12 for sin,
    # h^2/6 for sin^2 (its second derivative is 2 cos 2t).
    h = np.diff(UNEVEN).max()
    m = Metrics({"mean": "mean(x)", "rms": "rms(s)", "std": "std(x)", "rows": "sum(s**2) / 2050"},
                ["s", "x"])
    s = np.sin(UNEVEN)
    got = m.evaluate(UNEVEN, {"s": s, "x": 1 + s})
    assert abs(got["mean"] - 1.0) <= h ** 2 / 12
    assert abs(got["rms"] ** 2 - 0.5) <= h ** 2 / 6
    assert abs(got["std"] ** 2 - 0.5) <= h ** 2 / 6 + (h ** 2 / 12) ** 2
    assert abs(got["rows"] - 0.5) > 0.1  # what averaging the rows gave


SINE_AND_TRANSIENT = """\
blocksim: 1
name: uneven
blocks:
  S: {type: sine}
  Kick: {type: step, time: 3}
  Fast: {type: sum, signs: "+-"}
  G: {type: gain, K: 1000}
  I: {type: integrator}
wires: [Kick -> Fast.u1, I -> Fast.u2, Fast -> G, G -> I]
simulation: {stop: 4*pi, solver: rk45, rtol: 1e-8, atol: 1e-10, max_step: 0.06}
record: {s: S.y}
"""


def test_rms_of_a_sine_over_whole_periods_on_adaptive_rows(tmp_path):
    # the fast lag I' = 1000 (step(t - 3) - I) crowds the solver's rows after t = 3; the
    # sine's rms over two whole periods is 1/sqrt(2) however the rows fall
    diagram = tmp_path / "uneven.yaml"
    diagram.write_text(SINE_AND_TRANSIENT)
    rows = blocksim.run(diagram).t
    h = np.diff(rows).max()
    assert np.diff(rows).min() < h / 50  # the rows are uneven
    table = blocksim.sweep(diagram, grid={"blocks.S.phase": [0, 1]},
                           metrics={"rms": "rms(s)", "mean": "mean(s)"}, workers=1)
    for row in table.rows:
        assert row["status"] == "ok"
        assert abs(row["rms"] ** 2 - 0.5) <= h ** 2 / 6
        assert abs(row["mean"]) <= h ** 2 / 12
    assert abs(math.sqrt(np.mean(np.sin(rows) ** 2)) - 1 / math.sqrt(2)) > 0.01
