"""Sweep metrics: one number per run from its recorded signals, by safe expression.

A metric such as `max(abs(e))` or `rms(tau)` is compiled once by the project's evaluator
(`blocksim.language.expr`, never Python's eval) with every recorded signal and `t` as inputs:
arrays with time as the first axis, `(N, *signal_shape)`. Besides the expression functions of
format.md, metrics have the reductions

    mean(x)    time average of every element  rms(x)     sqrt(mean(x**2))
    std(x)     sqrt(mean((x - mean(x))**2))   final(x)   x[-1], the value at the end
    argmax(x)  time index of the largest element (so t[argmax(abs(e))] is a time)
    argmin(x)  time index of the smallest element
    diff(x)    differences along time, x[1:] - x[:-1]

and `max min sum abs norm` from the expression language (max(x) is the largest element;
norm(v) the Euclidean norm, Frobenius for a matrix).

The time statistics mean, rms and std average over time, not over rows: a solver's rows
crowd where the solution changes fast (or at events), so the mean of the rows would depend on
the steps. The average of x over the recorded times t_0..t_N-1 is the trapezoid rule's
integral divided by the span, sum_i w_i x_i / (t_N-1 - t_0) with w_i = (t_i+1 - t_i-1) / 2
(half a spacing at the ends); rows of the same time (both sides of an event) weigh nothing
between them, so a jump is not smeared. This applies when x has one row per recorded time
(a signal or an expression of signals); `mean(x, times)` weights by given times (a slice:
`mean(e[100:], t[100:])`); any other array (no time axis, e.g. `final(q)`) and a run of a
single instant get the plain mean of the elements.
"""
from __future__ import annotations

import ast
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


def _final(x):
    return np.asarray(x)[-1]


def time_weights(t):
    """Trapezoid weights of the rows at times `t`, divided by the span: sum(w * x) is the
    time average of x. None when the span is not positive (no time to average over)."""
    t = np.asarray(t, dtype=float)
    if t.ndim != 1 or t.size < 2 or not t[-1] > t[0]:
        return None
    w = np.empty_like(t)
    dt = np.diff(t)
    w[0], w[-1] = dt[0] / 2, dt[-1] / 2
    w[1:-1] = (dt[:-1] + dt[1:]) / 2
    return w / (t[-1] - t[0])


class _TimeStatistics:
    """mean, rms and std over the recorded times of the run being evaluated (`times`)."""

    def __init__(self):
        self.t = None
        self.w = None

    def times(self, t):
        if t is not self.t:
            self.t, self.w = t, time_weights(t)

    def weights(self, x, times):
        """The time weights for x's rows (see the module docstring), or None."""
        if times is not None:
            w = time_weights(times)
            if w is not None and (np.ndim(x) == 0 or np.shape(x)[0] != w.size):
                raise ValueError(f"{np.shape(x)[0] if np.ndim(x) else 'a scalar'} rows and "
                                 f"{w.size} times")
            return w
        if self.w is not None and np.ndim(x) >= 1 and np.shape(x)[0] == self.w.size:
            return self.w
        return None

    def mean(self, x, times=None):
        w = self.weights(x, times)
        x = np.asarray(x, dtype=float)
        if w is None:
            return np.mean(x)
        return np.mean(np.tensordot(w, x, axes=(0, 0)))

    def rms(self, x, times=None):
        return np.sqrt(self.mean(np.square(x), times))

    def std(self, x, times=None):
        x = np.asarray(x, dtype=float)
        return np.sqrt(self.mean(np.square(x - self.mean(x, times)), times))

    def functions(self):
        return {name: Function(getattr(self, name), 1, 2) for name in ("mean", "rms", "std")}


METRIC_FUNCTIONS = FUNCTIONS | {
    "final": Function(_final),
    "argmax": Function(lambda x: _time_index(x, np.argmax)),
    "argmin": Function(lambda x: _time_index(x, np.argmin)),
    "diff": Function(lambda x: np.diff(x, axis=0)),
}


def true_false(text):
    """Whether metric `text` is a test (its value true or false: 1 or 0 in the table): a
    comparison, `and`, `or`, `not` or isfinite(...) at its top. Figures and the report show
    such a metric as the fraction of runs where it holds, and the runs where it does not."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return False
    return (isinstance(node, (ast.Compare, ast.BoolOp))
            or isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
            or isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "isfinite")


class Metrics:
    """Compiled metric expressions over the signals `names` (record names; `t` is added)."""

    def __init__(self, texts, names):
        self.inputs = ("t", *[n for n in names if n != "t"])
        self.functions = {}
        self.problems = {}  # metric name -> ExprError text
        self.statistics = _TimeStatistics()
        functions = METRIC_FUNCTIONS | self.statistics.functions()
        for name, text in texts.items():
            try:
                self.functions[name] = compile_expr(text, self.inputs, {},
                                                    functions=functions, inputs_shadow=True)
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
        self.statistics.times(t)
        return (t, *[data[n] for n in self.inputs[1:]])
