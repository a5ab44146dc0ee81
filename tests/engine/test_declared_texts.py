"""rundata.evaluated: a declared text's value is remembered for the exact values it read
(loading 2,000 lags checks their equal limits once), and is the same as computing it."""
from types import SimpleNamespace

import numpy as np
import pytest

from blocksim import rundata
from blocksim.params import ParamError


@pytest.fixture
def counted(monkeypatch):
    """How many times a compiled text was called (the cache of values emptied first)."""
    monkeypatch.setattr(rundata, "_KNOWN", {})
    calls = []
    compiled = rundata._compiled

    def counting(text, inputs):
        fn = compiled(text, inputs)
        return lambda *values: calls.append(text) or fn(*values)

    monkeypatch.setattr(rundata, "_compiled", counting)
    return calls


def test_equal_values_are_computed_once_and_give_the_computed_value(counted):
    p = SimpleNamespace(lower=np.array(-np.inf), upper=np.array(2.0))
    text = "min(lower <= upper)"
    first = rundata.evaluated(text, p)
    again = rundata.evaluated(text, SimpleNamespace(lower=np.array(-np.inf),
                                                   upper=np.array(2.0)))
    assert counted == [text]
    assert first == again == 1.0  # -inf <= 2, by hand
    again[...] = 7.0  # a caller changing its copy changes nothing remembered
    assert rundata.evaluated(text, p) == 1.0
    # other values are computed: 3 <= 2 is false, by hand
    assert rundata.evaluated(text, SimpleNamespace(lower=np.array(3.0),
                                                   upper=np.array(2.0))) == 0.0
    assert len(counted) == 2


def test_values_differing_only_in_their_bits_are_not_taken_for_each_other(counted):
    plus = rundata.evaluated("x * 1", SimpleNamespace(x=np.array(0.0)))
    minus = rundata.evaluated("x * 1", SimpleNamespace(x=np.array(-0.0)))
    assert not np.signbit(plus) and np.signbit(minus)  # 0 * 1 = +0, -0 * 1 = -0
    assert len(counted) == 2


def test_a_refused_value_is_refused_every_time(counted):
    p = SimpleNamespace(a=np.array(1e308))
    for _ in range(2):
        with pytest.raises(ParamError):  # 1e308 * 10 overflows
            rundata.evaluated("a * 10", p)


def test_a_large_input_is_computed_each_time(counted):
    p = SimpleNamespace(v=np.arange(100.0))
    for _ in range(2):
        assert rundata.evaluated("max(v)", p) == 99.0
    assert len(counted) == 2
