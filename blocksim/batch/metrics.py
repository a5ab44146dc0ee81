"""Sweep metrics: one number per run from its recorded signals, by safe expression.

A metric such as `max(abs(e))` or `sqrt(mean(tau**2))` is compiled once by the project's
evaluator (`blocksim.language.expr`, never Python's eval) with every recorded signal and `t` as
inputs: arrays with time as the first axis, `(N, *signal_shape)`. Besides the expression
functions of format.md, metrics have the reductions

    mean(x)    mean of every element          rms(x)     sqrt(mean(x**2))
    std(x)     standard deviation (1/N)       final(x)   x[-1], the value at the end
    argmax(x)  time index of the largest element (so t[argmax(abs(e))] is a time)
    argmin(x)  time index of the smallest element
    diff(x)    differences along time, x[1:] - x[:-1]

and `max min sum abs norm` from the expression language (max(x) is the largest element;
norm(v) the Euclidean norm, Frobenius for a matrix).
"""
from __future__ import annotations

import warnings

import numpy as np

from ..language.expr import FUNCTIONS, ExprError, Function, compile_expr

# the stand-in signals' rows when checking metrics (see Metrics.check_shapes)
SHORT, LONG = 3, 100_001
LONG_ELEMENTS = 10_000_000  # at most this many stand-in values (80 MB) for the long check


def _time_index(x, pick):
    """The first-axis (time) index of the element np.argmax/np.argmin picks."""
    a = np.asarray(x)
    if a.size == 0:
        raise ValueError("argmax/argmin of an empty signal")
    return np.float64(np.unravel_index(pick(a), a.shape)[0] if a.ndim else 0)


def _rms(x):
    return np.sqrt(np.mean(np.square(x)))


def _final(x):
    return np.asarray(x)[-1]


METRIC_FUNCTIONS = FUNCTIONS | {
    "mean": Function(np.mean), "rms": Function(_rms), "std": Function(np.std),
    "final": Function(_final),
    "argmax": Function(lambda x: _time_index(x, np.argmax)),
    "argmin": Function(lambda x: _time_index(x, np.argmin)),
    "diff": Function(lambda x: np.diff(x, axis=0)),
}


class Metrics:
    """Compiled metric expressions over the signals `names` (record names; `t` is added)."""

    def __init__(self, texts, names):
        self.inputs = ("t", *[n for n in names if n != "t"])
        self.functions = {}
        self.problems = {}  # metric name -> ExprError text
        for name, text in texts.items():
            try:
                self.functions[name] = compile_expr(text, self.inputs, {},
                                                    functions=METRIC_FUNCTIONS, inputs_shadow=True)
            except ExprError as e:
                self.problems[name] = str(e)

    def check_shapes(self, shapes):
        """Problems of metrics that would not give one number for signals of these shapes
        (`shapes`: record name -> signal shape): each metric is evaluated on stand-in arrays
        of ones, of SHORT rows and, when an index was out of range (`x[10]`, `x[100:]`:
        the runs record more samples), again of LONG rows. Returns {metric name: message}."""
        problems = {}
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # e.g. the mean of x[100:] here
            for name, f in self.functions.items():
                for rows in (SHORT, LONG):
                    try:
                        value = np.asarray(f(*self._stand_ins(rows, shapes)))
                    except IndexError as e:
                        if rows == SHORT and self._long_fits(shapes):
                            continue
                        problems[name] = (f"cannot be evaluated on the recorded signals: {e}"
                                          f" ({rows} stand-in samples)")
                    except (ValueError, TypeError, ArithmeticError,
                            np.linalg.LinAlgError) as e:
                        problems[name] = f"cannot be evaluated on the recorded signals: {e}"
                    else:
                        if value.size != 1:
                            problems[name] = (f"gives an array (of shape {value.shape} for {rows} "
                                              "recorded times), not one number: reduce it, "
                                              "e.g. with max(...) or final(...)")
                    break
        return problems

    def _stand_ins(self, rows, shapes):
        return self._arguments(np.arange(float(rows)),
                               {n: np.ones((rows, *s)) for n, s in shapes.items()})

    @staticmethod
    def _long_fits(shapes):
        return LONG * sum(int(np.prod(s)) for s in shapes.values()) <= LONG_ELEMENTS

    def evaluate(self, t, data):
        """{metric name: float} for one run's results; raises ValueError naming the metric
        that cannot be computed."""
        arrays = self._arguments(t, data)
        out = {}
        # a NaN in the table says it (numpy would also warn, naming no metric)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for name, f in self.functions.items():
                try:
                    value = np.asarray(f(*arrays), dtype=float)
                except (ValueError, TypeError, IndexError, ArithmeticError,
                        np.linalg.LinAlgError) as e:
                    raise ValueError(f"metric '{name}': {e}") from None
                if value.size != 1:
                    raise ValueError(f"metric '{name}' gives shape {value.shape}, not one number")
                out[name] = float(value.reshape(()))
        return out

    def _arguments(self, t, data):
        return (t, *[data[n] for n in self.inputs[1:]])
