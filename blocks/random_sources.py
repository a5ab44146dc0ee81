"""Random sources: held random numbers drawn at sample hits.

Hit k (k = 0, 1, ... counted from the start of the run) outputs draw k of the stream
`numpy.random.default_rng(seed)`: the same numbers for the same seed on every machine, with
every solver (hits are exact times, drawn once each, never at solver steps). The hit counter is
the block's discrete state; the draws are generated in chunks, in stream order, so draw k
depends only on (seed, k).
"""
import math

import numpy as np

from blocksim.accel.lowering import Lowering
from blocksim.block import Block, Out, Sample, exact_time
from blocksim.language.expr import MAX_ELEMENTS
from blocksim.params import Param, ParamError

from .discrete import SAMPLE_OFFSET
from .param_checks import fits

CHUNK = 1024  # draws generated at a time, at most ...
CHUNK_VALUES = 1 << 20  # ... and about this many values (a large signal: fewer draws)


def _shape(value):
    """The `shape` parameter as a tuple of positive ints (a scalar n means (n,)), of at most
    MAX_ELEMENTS elements (as any value of an expression)."""
    dims = value.reshape(-1)
    if value.ndim > 1 or np.any(dims < 1) or np.any(dims != np.round(dims)):
        raise ParamError("shape", f"expected a list of positive integers, e.g. [3], got "
                                  f"{value.tolist()}")
    shape = tuple(int(d) for d in dims)
    if math.prod(shape) > MAX_ELEMENTS:
        raise ParamError("shape", f"shape {list(shape)} has {math.prod(shape):,} elements, more "
                                  f"than the limit of {MAX_ELEMENTS:,}")
    return shape


def _check_seed(p):
    if p.seed < 0:
        raise ParamError("seed", f"must be >= 0, got {p.seed}")


class _RandomSource(Block):
    """Hit k outputs y = offset + scale*draw_k, draw_k standard normal (or uniform on [0, 1)
    when `_uniform`); subclasses give `_line(p)`, (scale, offset) of parameters `p`, and
    name the parameters it reads in `_values`. scale and offset are the run data (P_scale,
    P_offset), broadcast to the signal."""

    _values = ()

    _uniform = False

    def __init__(self, name, params):
        super().__init__(name, params)
        self._shape = _shape(self.p.shape)
        self._chunk = max(1, min(CHUNK, CHUNK_VALUES // math.prod(self._shape)))  # draws
        self.sample = Sample(self.p.period, self.p.offset)
        _check_seed(self.p)
        self._base = None  # index of the first draw in _buf

    def _fits(self, names):
        for name in names:
            value = getattr(self.p, name)
            if not fits(value, self._shape):
                raise ParamError(name, f"shape {value.shape} does not fit the signal's shape "
                                       f"{self._shape}")

    def ports(self):
        return [], [Out("y", shape=self._shape, feedthrough=())]

    def declare(self, d):
        d.derived("scale", self._shape)
        d.derived("offset", self._shape)
        d.value("seed", *self._values)
        d.sample("period", "offset")

    def derive(self, p):
        _check_seed(p)
        scale, offset = self._line(p)
        return {"scale": scale, "offset": offset}

    def _line(self, p):
        raise NotImplementedError

    def discrete_state(self):
        return np.zeros(1)  # hits so far

    def _fresh(self, rng, n):
        shape = (n,) + self._shape
        return rng.random(shape) if self._uniform else rng.standard_normal(shape)

    def _draw(self, k):
        """Draw k of the stream (a view into the current chunk; the stream of values does
        not depend on how many draws a chunk holds)."""
        chunk = self._chunk
        if self._base is None or k < self._base:
            self._rng = np.random.default_rng(self.p.seed)
            self._base = 0
            self._buf = self._fresh(self._rng, chunk)
        while k >= self._base + chunk:
            self._base += chunk
            self._buf = self._fresh(self._rng, chunk)
        return self._buf[k - self._base]

    def initialize(self, t):
        self.y[0][...] = 0.0  # before the first hit
        self._base = None  # a new run: the stream from its seed (which may have changed)

    def output(self, t):
        y, v = self.y[0], self.v
        np.multiply(v.scale, self._draw(int(self.xd[0])), out=y)
        y += v.offset

    def update(self, t):
        self.xd[0] += 1.0

    # compiled form: the draws of the run's hits are data, drawn here in stream order: draw
    # k does not depend on the solver
    def lower(self, c):
        n = c.n_out["y"]
        return Lowering({"initialize": c.loop(n, "out_y[i] = 0.0;"),
                         "output": f"long long k = (long long)xd[0] * {n};\n"
                                   f"if (k + {n} > N_draws) FAIL(\"more hits than draws\");\n"
                                   "else " + c.loop(n, "out_y[i] = P_scale[i] * D_draws[k + i] "
                                                       "+ P_offset[i];"),
                         "update": "xd[0] += 1.0;"}, data=("draws",))

    def run_data(self, start, stop):
        """The draws of every hit in [start, stop], one row per hit (simulator's clock)."""
        p, o, first = exact_time(self.p.period), exact_time(self.p.offset), exact_time(start)
        j0 = 0 if first <= o else -((o - first) // p)
        last = int((exact_time(stop) - o) // p)
        while float(o + (last + 1) * p) <= stop:
            last += 1
        while last >= j0 and float(o + last * p) > stop:
            last -= 1
        rng, rows = np.random.default_rng(self.p.seed), []
        for _ in range(max(last - j0 + 1, 0) // self._chunk + 1):
            rows.append(self._fresh(rng, self._chunk))
        return {"draws": np.concatenate(rows)}


_PERIOD = Param("period", "scalar", 0.1, "sample period: a new value every period (s)",
                positive=True)
_SEED = Param("seed", "int", 0, "seed of numpy.random.default_rng (>= 0)")
_SHAPE = Param("shape", "value", (), "shape of the signal, e.g. [3] (default: scalar)")


class Noise(_RandomSource):
    """Band-limited white noise (Simulink's): a fresh N(0, power/period) sample every period.

    At each hit t_k = offset + k*period a fresh sample y ~ N(0, power/period), held until the next
    hit. A held sequence of variance power/period has a power spectral density of about power
    (units^2/Hz) below 1/(2*period): the white noise of intensity `power` seen through a
    sample-and-hold. Pick period well below the fastest time constant of the system.
    Output: y of shape `shape` (independent elements); power (>= 0) broadcasts to it.
    """

    type = "noise"
    params = (
        Param("power", "value", 0.1, "noise power: PSD height (units^2/Hz), >= 0", minimum=0.0),
        _PERIOD,
        SAMPLE_OFFSET,
        _SEED,
        _SHAPE,
    )

    _values = ("power",)

    def __init__(self, name, params):
        super().__init__(name, params)
        self._fits(("power",))

    def _line(self, p):
        return np.sqrt(p.power / p.period), 0.0


class Random(_RandomSource):
    """A random number per hit t_k = offset + k*period, held until the next hit.

    normal:  y ~ N(mean, std^2)  (y = mean + std*z, z from rng.standard_normal)
    uniform: y ~ U[low, high)     (y = low + (high - low)*r, r from rng.random)
    Output: y of shape `shape` (independent elements); mean, std, low, high broadcast to it.
    std >= 0, low <= high.
    """

    type = "random"
    params = (
        Param("distribution", "choice", "normal", "distribution of each draw",
              choices=("normal", "uniform")),
        Param("mean", "value", 0.0, "mean of the normal distribution"),
        Param("std", "value", 1.0, "standard deviation of the normal distribution, >= 0",
              minimum=0.0),
        Param("low", "value", 0.0, "lower end of the uniform distribution"),
        Param("high", "value", 1.0, "upper end of the uniform distribution"),
        Param("period", "scalar", doc="sample period: a new value every period (s)",
              positive=True),
        SAMPLE_OFFSET,
        _SEED,
        _SHAPE,
    )

    _values = ("mean", "std", "low", "high")

    def __init__(self, name, params):
        super().__init__(name, params)
        self._fits(self._values)
        self._line(self.p)
        self._uniform = self.p.distribution == "uniform"

    def _line(self, p):
        if p.distribution == "normal":
            return p.std, p.mean
        if np.any(p.high < p.low):
            raise ParamError("high", "high must be >= low")
        return p.high - p.low, p.low
