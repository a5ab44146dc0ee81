"""A sweep's runs in compiled batches: many accelerated runs in one call, on C threads.

A worker's first runs go the general way (`worker.run_one`: the diagram compiled, its C code
built or loaded); once one has run accelerated, the worker has its `CompiledRuns` and the
rest go in batches: each run's values are written into that run's model by the one route of
new values and become the compiled code's arguments (when every varied path is a number of
P alone, batch/columns.py, the runs' P rows are the model's with their values, taken a
column at once from the plan, written in and checked by their rules a batch at once:
`_Direct`), `accel.pool.Batch` integrates the batch (each run with its own steps, events
and failure, and the sweep's per-run time limit: a run over it is a failed row, "timed
out") and the runs' metrics are computed from their rows: those of a reducing form
(`max(abs(e)) - 0.1`, `final(x)`) for the whole batch at once (batch/reductions.py), the
others run by run. The runs that ended with every metric computed at once, none of them
kept, are reported a stretch at once (`worker.Outcomes`), the others one by one. With several
threads the next batch is prepared, and the last one's metrics computed, while a batch
runs. A run whose results are kept (every run with `keep: all`, a run not ok with `keep:
failed`) has them read from its own compiled run: its rows, its sinks' inputs and events,
and a meta.json of the model with its values, as the general way writes them. The general
way still takes a run whose values change the structure (or are refused), a run whose rows
alone pass RESULT_BYTES, and a run that failed in compiled code (it is run again there,
on its own blocks, so its message is normal mode's).
"""
from __future__ import annotations

import itertools
import math
import time

import numpy as np

from ..accel.arguments import arguments
from ..accel.pool import TIMED_OUT, Batch
from ..engine.recorder import planned_rows
from .columns import all_direct, numbers
from .reductions import BatchMetrics
from .worker import (Outcome, Outcomes, RunTimedOut, installed_job, kept, kept_result,
                     new_row, not_run, run_one, state_of)

MAX_BATCH = 2048  # runs per compiled call at most
MIN_BATCH = 8  # runs per thread in the first batch (its rows tell how many the next may hold)
RESULT_BYTES = 64e6  # a batch's recorded rows (kept by C, read by Python) at most, about


def in_batches(mode, runs):
    """Whether a sweep's runs can go in compiled batches: the first run's mode is
    accelerated (a run whose values change the structure goes the general way)."""
    return mode == "accelerated" and next(iter(runs), None) is not None


def batch_size(runs, threads, first=False):
    """Runs per batch: about a quarter of each thread's share, at most MAX_BATCH, and in the
    `first` batch MIN_BATCH per thread; fewer when their rows would pass RESULT_BYTES
    (`_Batches.prepare`)."""
    size = max(1, min(MAX_BATCH, math.ceil(runs / (4 * threads))))
    return min(size, MIN_BATCH * threads) if first else size


def run_batch(token, runs):
    """The Outcomes of runs [(index, overrides)] of the job installed under `token` on this
    worker (one Dask task: the worker's threads run tasks side by side), in compiled batches
    on one thread when possible."""
    job = installed_job(token)
    if job is None:
        return not_run(runs, "the sweep's job is not on this worker (the sweep ended?)")
    found = []
    runs = [_Run(index, overrides) for index, overrides in runs]
    run_batches(job, runs, found.append, threads=1)
    return found


class _Run:
    __slots__ = ("index", "overrides")

    def __init__(self, index, overrides):
        self.index, self.overrides = index, overrides


def run_batches(job, runs, report, threads=1, in_process=False):
    """Run `runs` (a sequence of objects with `index` and `overrides`), calling
    `report(outcome)` for each as it finishes (or with `Outcomes`, runs of a batch at once);
    `in_process`: Ctrl-C stops the runs and is raised again (the runs finished before it
    are reported)."""
    state = state_of(job)
    pending = _Pending(runs)
    while not state.fast:  # the general way until a run has compiled code to reuse
        r = pending.take()
        if r is None:
            return
        report(run_one(job, r.index, r.overrides, in_process))
        if state.fast is False:
            while (r := pending.take()) is not None:
                report(run_one(job, r.index, r.overrides, in_process))
            return
    _Batches(job, state, report, threads, in_process).run(pending, len(runs))


class _Pending:
    """The runs not prepared yet: those of `runs` from position `next` on, taken one at a
    time (`take`) or a stretch at once (`stretch`: their indices and values as arrays, made
    by the plan's Runs without making each run when it can)."""

    def __init__(self, runs):
        self.runs, self.next = runs, 0

    def take(self):
        """The next run, or None."""
        if self.next >= len(self.runs):
            return None
        self.next += 1
        return self.runs[self.next - 1]

    def stretch(self, size, keys):
        """(position of the first, the run indices, their values of the varied paths `keys`
        as an (n, len(keys)) float array, or None when one is not a plain number) of the
        next `size` runs at most."""
        lo = self.next
        hi = self.next = min(lo + size, len(self.runs))
        at_once = getattr(self.runs, "numbers", None)
        if at_once is not None:
            index = self.runs.indices(lo, hi)
            return lo, index, at_once(keys, index)
        taken = [self.runs[i] for i in range(lo, hi)]
        values = numbers([v for r in taken for _, v, _ in r.overrides])
        if values is not None and len(values) != len(taken) * len(keys):
            values = None
        return (lo, np.array([r.index for r in taken], dtype=np.int64),
                None if values is None else values.reshape(len(taken), len(keys)))


class _Prepared:
    """A batch's runs before they start: the runs at `positions` of the pending ones (run
    indices `index`), their compiled arguments `args` (a list of Arguments, or the matrix of
    their P rows) and the (wall, cpu) seconds spent preparing each (`spent`, n x 2)."""

    def __init__(self, pending, positions, index, args, spent):
        self.pending, self.positions, self.index = pending, positions, index
        self.args, self.spent = args, np.asarray(spent, dtype=float).reshape(-1, 2)

    def __len__(self):
        return len(self.index)

    def run(self, k):
        """The k-th run (an object with `index` and `overrides`), made when asked for."""
        return self.pending.runs[int(self.positions[k])]


class _Batches:
    """Prepare, run and report batches of one sweep, two batches alternating: one runs
    while the other's runs are reported and its next runs prepared."""

    def __init__(self, job, state, report, threads, in_process):
        self.job, self.state, self.report = job, state, report
        self.threads, self.in_process = threads, in_process
        self.rows = 0.0  # rows a run recorded in the last batch, on average

    def run(self, pending, count):
        size = batch_size(count, self.threads, first=True)
        while len(self.state.batches) < 2:
            fast = self.state.fast
            self.state.batches.append(Batch(fast.lib, fast.m, fast.g, MAX_BATCH))
        self.width = self.state.batches[0].width
        if pending.next >= len(pending.runs):
            return
        first = pending.runs[pending.next]
        self.direct = _Direct.of(self.state.fast, [key for key, _, _ in first.overrides],
                                 self.bytes_for)
        for batch in self.state.batches:
            batch.limit(self.job.timeout)
        batches = itertools.cycle(self.state.batches)
        running = None  # (batch, its _Prepared)
        try:
            prepared = self.prepare(pending, size)
            while prepared or running:
                if running is not None:
                    running[0].finish()
                ended, running = running, None
                if prepared:
                    batch = next(batches)
                    if self.direct is None:
                        batch.fill(prepared.args)
                    else:  # each run's P row
                        batch.fill_params(prepared.args)
                    batch.start(min(self.threads, len(prepared)))
                    running = (batch, prepared)
                    if self.threads == 1:  # one core: nothing alongside the batch
                        batch.finish()
                if ended is not None:
                    self.outcomes(*ended)
                    self.rows, size = ended[0].rows, batch_size(count, self.threads)
                prepared = self.prepare(pending, size)
        except BaseException:
            if running is not None:  # stopped by Batch.finish; its finished runs count
                running[0].stop()
                self.outcomes(*running, interrupted=True)
            raise

    def prepare(self, pending, size):
        """The next runs' `_Prepared`: `size` of them, or fewer when their rows would pass
        RESULT_BYTES or no run is left (None). Runs the fast path does not take, and a run
        whose rows alone pass RESULT_BYTES, run the general way here (alone, checked
        against the memory available as any run is). With the sweep's varied paths all
        numbers of P alone (`direct`), a run's arguments are its row of P, the values
        written in (`_Direct.prepare`)."""
        if self.direct is not None:
            return self.direct.prepare(pending, size, self.route)
        positions, index, args, spent, held = [], [], [], [], 0.0
        while (r := pending.take()) is not None:
            wall, cpu = time.perf_counter(), time.thread_time()
            found = self.state.fast.args(r.overrides)
            need = None if found is None else self.bytes_of(found)
            if need is None or need > RESULT_BYTES:
                self.route(r)
                continue
            positions.append(pending.next - 1)
            index.append(r.index)
            args.append(found)
            spent.append((time.perf_counter() - wall, time.thread_time() - cpu))
            held += need
            if len(args) == size or held * (1 + 1 / len(args)) > RESULT_BYTES:
                break
        if not args:
            return None
        return _Prepared(pending, np.array(positions), np.array(index, dtype=np.int64), args,
                         spent)

    def route(self, r):
        """Run `r` the general way and report it."""
        self.report(run_one(self.job, r.index, r.overrides, self.in_process))

    def bytes_of(self, args):
        """The bytes a run's rows take in C and again read into Python (and once more, its
        own, when every run's results are kept): its planned rows
        (`recorder.planned_rows`), or as many as a run of the last batch recorded."""
        return self.bytes_for(args.settings)

    def bytes_for(self, s):
        """bytes_of a run with the settings `s`, its own copy of the work arrays in C too."""
        copies = 3 if self.job.keep == "all" else 2
        work = self.state.fast.g.work.size
        return 8 * (copies * self.width * max(planned_rows(s), self.rows) + work)

    def outcomes(self, batch, prepared, interrupted=False):
        """Report the runs of a batch that ended (those that did not end when `interrupted`
        are left out: the sweep counts them as not run). Runs that ended with every metric
        computed at once and no results kept are reported a stretch at once (`Outcomes`),
        the others one by one, in run order."""
        started, c0 = time.perf_counter(), time.thread_time()
        state = self.state
        if state.batch_metrics is None:
            state.batch_metrics = BatchMetrics(state.texts, tuple(state.fast.m.record))
        results = batch.results(state.batch_metrics.reads)
        done = np.flatnonzero(results.done)
        at_once = state.batch_metrics.of_batch(results.t, results.data, results.starts[done],
                                               results.ends[done]) if len(done) else {}
        whole = state.batch_metrics.at_once(at_once)
        if not whole:  # runs' rows read one by one: all
            results = batch.results()
        position = np.full(len(prepared), -1, dtype=np.intp)
        position[done] = np.arange(len(done))
        shared = ((time.perf_counter() - started) / max(len(prepared), 1),
                  (time.thread_time() - c0) / max(len(prepared), 1))
        # each run's own metric time, when its rows are read for them (else in `shared`)
        clocks = (_no_clock, _no_clock) if whole else (time.perf_counter, time.thread_time)
        together = results.done if whole and self.job.keep != "all" else \
            np.zeros(len(prepared), bool)
        spent = prepared.spent
        k = 0
        for a, b in np.flatnonzero(np.diff(np.concatenate(
                ([False], together, [False])))).reshape(-1, 2).tolist():  # stretches [a, b)
            for j in range(k, a):
                self.one(batch, results, j, prepared, at_once, position[j], shared,
                         clocks, interrupted)
            sim = results.wall[a:b]
            self.report(Outcomes(
                prepared.index[a:b],
                results.nsteps[a:b],
                {name: np.asarray(v, dtype=float)[position[a:b]]
                 for name, v in at_once.items()},
                sim + spent[a:b, 0] + shared[0], sim,
                results.cpu[a:b] + spent[a:b, 1] + shared[1]))
            k = b
        for j in range(k, len(prepared)):
            self.one(batch, results, j, prepared, at_once, position[j], shared, clocks,
                     interrupted)

    def one(self, batch, results, k, prepared, at_once, position, shared, clocks,
            interrupted):
        """Report run k of a batch that ended (see `outcomes`)."""
        r, (prep_wall, prep_cpu) = prepared.run(k), prepared.spent[k]
        ended, stats, wall, cpu, _, _ = results.run(k)
        if ended == TIMED_OUT:
            error = RunTimedOut(self.job.timeout)
            row = new_row("failed", str(error), stats["nsteps"])
            row["wall_s"] = wall + prep_wall
            self.report(self.outcome(batch, k, r, row, error, None, wall,
                                     cpu + prep_cpu))
            return
        if interrupted and not ended:  # not run to its end, or not to be run again now
            return
        if not ended:  # failed in compiled code: its message comes from its own run
            self.report(run_one(self.job, r.index, r.overrides, self.in_process))
            return
        started, c0 = clocks[0](), clocks[1]()
        try:
            metrics = self.state.batch_metrics.of_run(at_once, position,
                                                      lambda: results.of(k))
            row = new_row("ok", "", stats["nsteps"], metrics)
        except ValueError as e:
            metrics, row = None, new_row("failed", str(e), stats["nsteps"])
        row["wall_s"] = wall + prep_wall + shared[0] + clocks[0]() - started
        self.report(self.outcome(batch, k, r, row, None, metrics, wall,
                                 cpu + prep_cpu + shared[1] + clocks[1]() - c0))

    def outcome(self, batch, k, r, row, error, metrics, wall, cpu):
        """The Outcome of run k of a batch that ended (`error`: RunTimedOut, or None), with
        its results when they are kept."""
        outcome = Outcome(r.index, row, sim_s=wall, cpu_s=cpu, mode="accelerated")
        if kept(self.job, row):
            t, data, info = batch.run_results(k, error, wall)
            info["mode"] = {**self.state.mode, "compile_time": 0.0, "cache_hit": True}
            fast = self.state.fast
            fast.m.compilation.set_values(fast.m, r.overrides, base=self.job.spec)  # the run's
            outcome.result = kept_result(self.job, r.index, r.overrides, fast.m, t, data,
                                         info, metrics)
        return outcome


def _no_clock():
    return 0.0


class _Direct:
    """The runs of a sweep whose varied paths are all numbers of P alone (columns.direct):
    a run's arguments are the model's P with its values written in at their offsets, the
    values checked by their parameters' rules a batch at once; the runs whose values the
    rules refuse (or that are not plain numbers) go the general way, which reports them."""

    def __init__(self, found, base, need):
        self.found, self.base, self.need = found, base, need  # need(): a run's bytes
        self.offsets = np.array([d.offset for d in found], dtype=np.intp)

    @classmethod
    def of(cls, fast, keys, bytes_for):
        """The _Direct of the runs varying `keys` of `fast` (CompiledRuns), or None."""
        found = all_direct(fast.m, keys)
        if not found or bytes_for(fast.m.settings) > RESULT_BYTES:
            return None
        settings = fast.m.settings
        return cls(found, arguments(fast.m, fast.g).params.copy(),
                   lambda: bytes_for(settings))

    def prepare(self, pending, size, route):
        """The next `size` runs' _Prepared, their arguments the matrix of their P rows (see
        _Batches.prepare), fewer when their rows would pass RESULT_BYTES, None when no run
        is left; `route(run)` runs one the general way."""
        size = max(1, min(size, int(RESULT_BYTES // self.need()) - 1))
        keys = [d.key for d in self.found]
        while pending.next < len(pending.runs):
            wall, cpu = time.perf_counter(), time.thread_time()
            lo, index, values = pending.stretch(size, keys)
            if values is None:  # a text, a list: the route reads it
                ok = np.zeros(len(index), bool)
            else:
                ok = ~np.any([d.param.refused(values[:, j]) for j, d in enumerate(self.found)],
                             axis=0)
            taken = np.flatnonzero(ok)
            rows = np.repeat(self.base[None, :], len(taken), axis=0)
            if len(rows):
                rows[:, self.offsets] = values[taken]
            spent = ((time.perf_counter() - wall) / len(index),
                     (time.thread_time() - cpu) / len(index))
            for j in np.flatnonzero(~ok).tolist():
                route(pending.runs[lo + j])
            if len(taken):
                return _Prepared(pending, lo + taken, index[taken], rows,
                                 np.broadcast_to(spent, (len(taken), 2)))
        return None
