"""Sweep metrics: the reductions, signal names that shadow constants, one number per run."""
import numpy as np
import pytest

from blocksim.batch.metrics import Metrics

T = np.linspace(0.0, 2.0, 5)
E = np.array([[0.0, 1.0], [3.0, -4.0], [-6.0, 2.0], [1.0, 1.0], [0.5, -0.5]])


@pytest.mark.parametrize("text, expected", [
    ("max(abs(e))", 6.0),
    ("mean(e)", E.mean()),
    ("rms(e)", np.sqrt((E ** 2).sum() / E.size)),  # sqrt of the mean square, by hand
    ("std(e[:, 0])", np.sqrt(((E[:, 0] - E[:, 0].mean()) ** 2).mean())),  # 1/N
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
