"""Metrics of a batch of runs at once (blocksim/batch/reductions.py) against the second
algorithm they stand in for: `Metrics.evaluate` on each run alone. Every value must be the
same float, bit for bit (NaN and infinities included), for metrics of the reducing form and
for the others, and a run's failing metric must fail it with the same message."""
import numpy as np
import pytest

from blocksim.batch.metrics import Metrics
from blocksim.batch.reductions import BatchMetrics

NAMES = ("x", "v", "e")  # x one number per row, v three, e may hold NaN

METRICS = {
    "peak": "max(abs(e)) - 0.1",
    "low": "min(x)",
    "end": "final(x)",
    "last": "x[-1] * 2 + min(v) / 3",
    "span": "max(x) - min(x)",
    "vector": "max(sqrt(abs(v)) * sign(x))",  # (N, 3) against (N,): fails in both
    "rounded": "-max(floor(x * 10) + ceil(e) - trunc(x))",
    "by_zero": "max(x) / (min(x) - min(x))",  # inf or nan in both
    "of_time": "final(t) - min(t)",
    "average": "mean(x)",  # a time statistic: run by run
    "weighted": "rms(e) + max(x)",  # part reducing, part not: run by run
}


def runs(seed, n=7):
    """n runs' rows laid end to end, with their own lengths (1 row included) and times."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 40, n)
    counts[2] = 1
    t = np.concatenate([np.sort(rng.uniform(0, 5, c)) for c in counts])
    total = int(counts.sum())
    data = {"x": rng.normal(size=total), "v": rng.normal(size=(total, 3)),
            "e": rng.normal(size=total)}
    data["e"][rng.integers(0, total, 3)] = np.nan
    ends = np.cumsum(counts)
    return t, data, ends - counts, ends


def alone(t, data, a, b):
    return t[a:b], {name: np.ascontiguousarray(v[a:b]) for name, v in data.items()}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_metric_that_cannot_reduce_sends_every_run_to_metrics_with_its_message(seed):
    """"vector" is not one number: the batch gives up on every metric (each run is then
    `Metrics.evaluate` itself, so the values below only check the plumbing) and the run
    fails with the message the run alone gives."""
    t, data, starts, ends = runs(seed)
    batch = BatchMetrics(METRICS, NAMES)
    assert set(batch.reduced) == {"peak", "low", "end", "last", "span", "vector", "rounded",
                                  "by_zero", "of_time"}
    at_once = batch.of_batch(t, data, starts, ends)
    assert at_once["vector"] is None  # (N,) against (N, 3): every metric run by run
    reference = Metrics(METRICS, NAMES)
    for k, (a, b) in enumerate(zip(starts, ends)):
        try:
            expected = reference.evaluate(*alone(t, data, a, b))
        except ValueError as e:  # "vector" gives an array: the run fails in both
            with pytest.raises(ValueError, match=str(e).replace("(", r"\(").replace(")", r"\)")):
                batch.of_run(at_once, k, lambda: alone(t, data, a, b))
            continue
        found = batch.of_run(at_once, k, lambda: alone(t, data, a, b))
        assert list(found) == list(expected)  # the metrics' order
        np.testing.assert_array_equal(np.array(list(found.values())),
                                      np.array(list(expected.values())))


@pytest.mark.parametrize("seed", [0, 1, 2, 5])
def test_batch_metrics_are_each_runs_own_bit_for_bit(seed):
    """Without a failing metric, of_run takes the batch's values for the reducing metrics:
    they equal Metrics.evaluate of the run alone, and plain numpy on its rows."""
    texts = {k: v for k, v in METRICS.items() if k != "vector"}
    t, data, starts, ends = runs(seed)
    batch = BatchMetrics(texts, NAMES)
    at_once = batch.of_batch(t, data, starts, ends)
    assert all(v is not None for v in at_once.values())
    reference = Metrics(texts, NAMES)
    for k, (a, b) in enumerate(zip(starts, ends)):
        x, tk = data["x"][a:b], t[a:b]
        by_numpy = {"low": np.min(x), "end": x[-1], "span": np.max(x) - np.min(x),
                    "of_time": tk[-1] - np.min(tk)}
        for name, value in by_numpy.items():  # the batch's own arrays, before of_run
            assert at_once[name][k] == value, name
        expected = reference.evaluate(*alone(t, data, a, b))
        found = batch.of_run(at_once, k, lambda: alone(t, data, a, b))
        np.testing.assert_array_equal(np.array(list(found.values())),
                                      np.array(list(expected.values())))


def test_a_signal_named_like_a_function_is_not_reduced():
    """A recorded signal called max shadows the function (inputs shadow functions in
    metrics): max(x) is then not a reduction, and is left to Metrics."""
    batch = BatchMetrics({"m": "max(x)", "n": "min(max)"}, ("x", "max"))
    assert set(batch.reduced) == {"n"}
