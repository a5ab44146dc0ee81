"""Batches of runs in one compiled call, shared out among C threads (runtime/rt_batch.c).

A `Batch` holds the arguments of up to `capacity` runs of one compiled diagram
(accel/batch.py's CompiledRuns: each run's Arguments): each run's row of a preallocated matrix of parameters, initial states, settings
and exact series (one shared row when no run changes it), its data arrays and time events.
`start(threads)` returns at once while the runs go on in C, each with its own buffers, steps,
events and failure (on threads made by the batch's first start, which wait for its next start
and end with `close`); `wait` returns when they have ended (or after a time, so that Python can
act on Ctrl-C); `results()` reads every run's status, step counts, times and recorded rows,
`run_results(k)` one run's whole results (its sinks' inputs and events too), as a run alone.
"""
from __future__ import annotations

import ctypes
import math

import numpy as np

from .arguments import arguments
from .boundary import BATCH, OUTCOMES, STATUS, settings_row
from .runner import results_of

_P = ctypes.c_void_p
WAIT_SECONDS = 0.1
TIMED_OUT = "timed out"  # a run's `done` when it went over the batch's limit
_DONE = {STATUS.DONE: True, STATUS.FAILED: False,
         STATUS.TIMED_OUT: TIMED_OUT}  # STATUS.MORE: None, not run to its end


class _Column:
    """One argument of every run: the first run's row for all, or a matrix when a run
    changes it (its stride then is the row's length)."""

    def __init__(self, base, dtype):
        self.base = np.ascontiguousarray(base, dtype=dtype).ravel()
        self.matrix = None

    def fill(self, rows, n):
        if all(r is None for r in rows):
            self.matrix = self.base
            return 0
        self.matrix = np.empty((n, max(self.base.size, 1)), dtype=self.base.dtype)
        self.matrix[:, :self.base.size] = self.base
        for i, row in enumerate(rows):
            if row is not None:
                self.matrix[i, :self.base.size] = np.ravel(row)
        return self.matrix.shape[1]


class Batch:
    """Runs of the compiled diagram `generated` (loaded as `library`) of `model` with
    other arguments; see the module docstring."""

    def __init__(self, library, model, generated, capacity):
        self.lib, self.capacity = library, capacity
        self.m, self.g = model, generated
        v = arguments(model, generated)  # the model's values now: each run's row by default
        self.handle = library.rt_batch_new(capacity, generated.work.size)
        if not self.handle:
            raise MemoryError("cannot allocate a batch of compiled runs")
        self.work = np.ascontiguousarray(generated.work, dtype=float)
        self.constants = np.ascontiguousarray(generated.constants, dtype=float)
        self.columns = {"P": _Column(v.params.copy(), float), "X0": _Column(v.x0.copy(), float),
                        "XD0": _Column(v.xd0.copy(), float),
                        "SETTINGS": _Column(settings_row(v.settings), float),
                        "SERIES": _Column(v.series, np.int64),
                        "CLK": _Column(v.clock_j, np.int64)}
        self.data = [np.ascontiguousarray(d, dtype=float) for d in v.data]
        self.events = (np.ascontiguousarray(v.event_t, dtype=float),
                       np.ascontiguousarray(v.event_block, dtype=np.intc))
        self.channels = [(name, tuple(shape), math.prod(shape))
                         for name, shape in generated.record[:len(model.record)]]
        self.width = 1 + sum(size for _, _, size in self.channels)
        self.rows = 0.0  # recorded rows per run in the last batch
        self.n = 0
        self._keep = None

    def close(self):
        if self.handle:
            self.lib.rt_batch_free(self.handle)
            self.handle = None

    __del__ = close

    def fill(self, args):
        """Set the runs of the next start: `args` a list of their Arguments (at most
        `capacity`)."""
        n = self.n = len(args)
        if n > self.capacity:
            raise ValueError(f"{n} runs in a batch of {self.capacity}")
        p, x0, xd0, settings, series, clock_j = self.columns.values()
        strides = {"P": p.fill([a.params for a in args], n),
                   "X0": x0.fill([a.x0 for a in args], n),
                   "XD0": xd0.fill([a.xd0 for a in args], n),
                   "SETTINGS": settings.fill([settings_row(a.settings) for a in args], n),
                   "SERIES": series.fill([a.series for a in args], n),
                   "CLK": clock_j.fill([a.clock_j for a in args], n)}
        self._setup(n, strides, [a.data for a in args],
                    [(a.event_t, a.event_block) for a in args])

    def fill_params(self, params):
        """Set the runs of the next start by their parameter vectors alone: `params` an
        (n, len(P)) matrix; every other argument is that of the batch's model when it was
        made (Arguments' initial states, settings, series, data and events)."""
        n = self.n = len(params)
        if n > self.capacity:
            raise ValueError(f"{n} runs in a batch of {self.capacity}")
        for column in self.columns.values():
            column.matrix = column.base
        p = self.columns["P"]
        if p.base.size:
            p.matrix = np.ascontiguousarray(params, dtype=float)
        self._setup(n, {"P": p.base.size}, None, None)

    def _setup(self, n, strides, data, events):
        """Hand the next start's n runs to C: each argument's matrix (its row `strides`
        apart, 0: one row for all), the runs' data arrays and time events (None: the
        batch's model's for every run)."""
        given = {"K": self.constants, "W0": self.work,
                 **{name: c.matrix for name, c in self.columns.items()}}
        strides = {**dict.fromkeys(BATCH.names, 0), **strides}
        arrays = [given[name] for name in BATCH.names]
        nd = len(self.data)
        if data is None:
            data = [self.data]
            pointers = np.tile([d.ctypes.data for d in self.data], n).astype(np.uintp)
            sizes = np.tile([d.size for d in self.data], n).astype(np.int64)
        else:
            pointers = np.array([[d.ctypes.data for d in run] for run in data],
                                dtype=np.uintp).reshape(-1)
            sizes = np.array([[d.size for d in run] for run in data], dtype=np.int64).reshape(-1)
        if not nd:
            pointers, sizes = np.zeros(1, np.uintp), np.zeros(1, np.int64)
        if events is None:
            t, block = self.events
            offsets = np.arange(n + 1, dtype=np.int64) * len(t)
            event_t = np.concatenate([np.tile(t, n), np.zeros(1)])
            event_block = np.concatenate([np.tile(block, n), np.zeros(1, np.intc)])
        else:
            offsets = np.zeros(n + 1, dtype=np.int64)
            np.cumsum([len(t) for t, _ in events], out=offsets[1:])
            event_t = np.concatenate([t for t, _ in events] + [np.zeros(1)])
            event_block = np.concatenate([b for _, b in events] + [np.zeros(1, np.intc)])
        table = (_P * len(arrays))(*(a.ctypes.data for a in arrays))
        stride = np.array([strides[name] for name in BATCH.names], dtype=np.int64)
        self._keep = (arrays, data, pointers, sizes, event_t, event_block, offsets, table, stride)
        self.lib.rt_batch_setup(self.handle, n, table, stride.ctypes.data, pointers.ctypes.data,
                                sizes.ctypes.data, event_t.ctypes.data, event_block.ctypes.data,
                                offsets.ctypes.data)

    def limit(self, seconds):
        """End a run of the following starts that takes longer than `seconds` (None: no
        limit), checked every 0.05 s of its compiled time: its `done` is TIMED_OUT."""
        self.lib.rt_batch_limit(self.handle, 0.0 if seconds is None else float(seconds))

    def start(self, threads):
        if not self.lib.rt_batch_start(self.handle, threads):
            raise MemoryError("cannot start a thread for the compiled runs")

    def wait(self, seconds=WAIT_SECONDS):
        """Whether the runs have ended, after waiting up to `seconds` (GIL released)."""
        return bool(self.lib.rt_batch_wait(self.handle, seconds))

    def finish(self):
        """Wait for the runs to end, acting on Ctrl-C (or SIGTERM's Terminated) between
        waits: the runs stop within a chunk and the exception is raised again."""
        try:
            while not self.wait():
                pass
        except BaseException:
            self.stop()
            raise

    def stop(self):
        """End the runs within a chunk of compiled time; those not finished stay unfinished."""
        self.lib.rt_batch_stop(self.handle)
        while not self.wait(1.0):
            pass

    def results(self, names=None):
        """The runs' Results (copied out of the batch: valid after it runs again): the
        time and the `record:` signals `names` (None: every one)."""
        n = self.n
        out = np.zeros((n, len(OUTCOMES)))
        self.lib.rt_batch_outcomes(self.handle, out.ctypes.data)
        counts = out[:, OUTCOMES.rows].astype(np.int64)
        total = int(counts.sum())
        taken, wanted, column = [0], [], 1  # the rows' columns: time, then each element
        for name, shape, size in self.channels:
            if names is None or name in names:
                wanted.append((name, shape, len(taken)))
                taken += range(column, column + size)
            column += size
        cols = np.array(taken, dtype=np.intc)
        columns = np.empty((len(taken), total))
        self.lib.rt_batch_columns(self.handle, len(taken), cols.ctypes.data, total,
                                  columns.ctypes.data)
        self.rows = total / max(n, 1)
        data = {}
        for name, shape, first in wanted:
            block = columns[first:first + math.prod(shape)]
            data[name] = block[0] if not shape else block.T.reshape((total,) + shape)
        return Results(out, counts, columns[0], data)

    def run_results(self, k, error, wall):
        """(t, data, info) of run k of the batch that ended, as a run on its own gives them
        (its sinks' inputs and events too: a run whose results are kept), `error` its end."""
        return results_of(self.lib, self.lib.rt_batch_run(self.handle, k), self.m, self.g,
                          error, wall)


class Results:
    """A batch's runs: per run (arrays) `done` (True for a run that ended), `status`
    (boundary.STATUS), `nsteps`, `wall`, `cpu`, its rows `starts[k]:ends[k]`; `t` and
    `data` (the `record:` signals by name) with every run's rows end to end; `run(k)` as a
    tuple (done, stats, wall, cpu, start, end): done True for a run that ended, False for a
    failure, TIMED_OUT for a run over the limit (stats: its steps so far), None for one not
    run to its end."""

    def __init__(self, out, counts, t, data):
        self.out, self.t, self.data = out, t, data
        self.status = out[:, OUTCOMES.status].astype(np.int64)
        self.done = self.status == STATUS.DONE
        self.nsteps = out[:, OUTCOMES.nsteps].astype(np.int64)
        self.wall, self.cpu = out[:, OUTCOMES.wall], out[:, OUTCOMES.cpu]
        self.ends = np.cumsum(counts)
        self.starts = self.ends - counts

    def run(self, k):
        """Run k's (done, stats, wall, cpu, start, end)."""
        o = self.out[k]
        stats = {name: int(o[getattr(OUTCOMES, name)]) for name in ("nsteps", "nrejected", "nfev")}
        return (_DONE.get(int(self.status[k])), stats, o[OUTCOMES.wall], o[OUTCOMES.cpu],
                self.starts[k], self.ends[k])

    def of(self, k):
        """(t, data) of run k, each signal contiguous as the simulator's arrays are (what is
        computed from them has the same bits)."""
        a, b = self.starts[k], self.ends[k]
        return self.t[a:b], {name: np.ascontiguousarray(v[a:b])
                             for name, v in self.data.items()}
