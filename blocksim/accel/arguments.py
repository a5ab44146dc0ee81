"""A compiled run's arguments: what it reads besides its structure, from the model's Context.

The generated source and the numbers that come with it (codegen.Generated) are structure.
A run's values are the model's Context's (engine/context.py): P and the initial states are
its very arrays (a change of value, written in place, is what the next compiled run reads),
and what compiled code reads computed from them is made here: the settings row
(boundary.settings_row), the exact series of the sample hits and of the blocks' own times
(offset + j*period as 128-bit integers), the first time events, the blocks' per-run data
arrays (`Block.run_data`). `arguments(model, generated)` keeps them until the Context's
version moves on.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..block import Sample, exact_time
from .lowering import LoweringError


@dataclass
class Arguments:
    """The values of one compiled run (see the module docstring)."""
    params: np.ndarray  # the Context's P
    x0: np.ndarray  # the Context's initial states
    xd0: np.ndarray
    settings: object  # engine Settings
    data: list  # arrays, in slot order
    series: np.ndarray  # (NSER, 6) int64
    clock_j: np.ndarray  # first hit index of each discrete block
    event_t: np.ndarray
    event_block: np.ndarray
    # what the series and events were made from (kept when a change leaves them the same)
    made_from: tuple = ()


def arguments(model, generated):
    """The Arguments of the next compiled run of `model` (compiled as `generated`), made
    again when the model's values changed (SeriesRange: exact times its code cannot hold)."""
    context = model.context
    kept = model.__dict__.get("_arguments")
    if kept is not None and kept[0] is context and kept[1] == context.version \
            and kept[2] is generated:
        return kept[3]
    s = context.settings
    before = kept[3] if kept is not None and kept[0] is context and kept[2] is generated \
        else None
    clocks = [b for b in model.blocks if isinstance(b.sample, Sample)]
    exact = [(b, list(b.exact_times())) for b in model.blocks if generated.series_counts[b.name]]
    sources = ((s.start, s.stop), [b.sample for b in clocks], [pairs for _, pairs in exact],
               context.events)
    if before is not None and before.made_from[:3] == sources[:3]:
        series, clock_j = before.series, before.clock_j
    else:
        series, clock_j = clock_series(clocks, s)
        series = np.ascontiguousarray(
            np.vstack([series, block_series(exact, generated.series_counts, s)]),
            dtype=np.int64)
    if before is not None and before.made_from[3] is context.events:
        event_t, event_block = before.event_t, before.event_block
    else:
        index = {b.name: k for k, b in enumerate(model.blocks)}
        event_t = np.array([t for t, _ in context.events], dtype=float)
        event_block = np.array([index[b.name] for _, b in context.events], dtype=np.intc)
    data = []
    for block in model.blocks:
        names = generated.data_names[block.name]
        if names:
            found = block.run_data(s.start, s.stop)
            data += [np.ascontiguousarray(found[name], dtype=float).ravel() for name in names]
    made = Arguments(context.P, context.x0, context.xd0, s, data, series, clock_j, event_t,
                     event_block, sources)
    model.__dict__["_arguments"] = (context, context.version, generated, made)
    return made


def block_series(exact, counts, settings):
    """The rows of the blocks' exact series (Lowering.series of them from each block's
    exact_times()), in block order; exact: [(block, its exact_times())] of the blocks with
    series, counts: block name -> Lowering.series."""
    rows = []
    for block, pairs in exact:
        if len(pairs) != counts[block.name]:
            raise LoweringError(f"{block.name}: Lowering.series is {counts[block.name]}, "
                                f"exact_times() gave {len(pairs)}")
        for offset, period in pairs:  # exact already (fractions): not rounded again
            o, p = Fraction(offset), Fraction(period)
            last = max(math.ceil((Fraction(settings.stop) - o) / p), 0) + 2
            rows.append(exact_series(o, p, last))
    return np.array(rows, dtype=np.int64).reshape(-1, 6)


def clock_series(clocks, settings):
    """(series rows, first hit indices) of the discrete blocks: hit j of a block is
    float(offset + j*period) of exact fractions (simulator._Clock), as the integers of
    RtSeries: (A + j*C)/L * 2^E."""
    rows, first = [], []
    start, span = exact_time(settings.start), settings.stop - settings.start
    for block in clocks:
        p, o = exact_time(block.sample.period), exact_time(block.sample.offset)
        j = 0 if start <= o else math.ceil((start - o) / p)
        rows.append(exact_series(o, p, j + int(span / float(p)) + 2))
        first.append(j)
    return (np.array(rows, dtype=np.int64).reshape(-1, 6),
            np.array(first, dtype=np.int64))


class SeriesRange(ValueError):
    """Exact times whose integers do not fit the compiled code's 128 bits."""


def exact_series(offset, period, last):
    """(A high, A low, C high, C low, L, E) with offset = A/L*2^E and period = C/L*2^E, A + j*C
    representable for j <= last (SeriesRange otherwise)."""
    o, p = Fraction(offset), Fraction(period)
    two_o, odd_o = _split(o.denominator)
    two_p, odd_p = _split(p.denominator)
    L = math.lcm(odd_o, odd_p)
    e = max(two_o, two_p)
    A, C = o * L * 2 ** e, p * L * 2 ** e
    if L >= 2 ** 62 or abs(A) + abs(C) * (last + 1) >= 2 ** 125:
        raise SeriesRange(f"the sample times {float(offset):g} + k*{float(period):g} need "
                          "more than 128-bit integers")
    A, C = int(A), int(C)
    return [A >> 64, _signed(A & (2 ** 64 - 1)), C >> 64, _signed(C & (2 ** 64 - 1)), L, -e]


def _signed(low):
    """The low 64 bits as the int64 with the same bits (C reads them as unsigned)."""
    return low - 2 ** 64 if low >= 2 ** 63 else low


def _split(n):
    """(k, m) with n = 2^k * m, m odd."""
    k = (n & -n).bit_length() - 1
    return k, n >> k
