"""One run of a sweep, where it executes: in the calling process or on a Dask worker.

`run_one(job, index, overrides)` gives the run its Model: the worker's (compiled once per
worker and thread) with the run's values written in by the one route of new values
(`Compilation.change`, compiler/revalue.py; a run that changes the structure compiles the
diagram anew), simulates it, computes the metrics and returns an `Outcome`: the run's row
and, only when the run is kept, its results. Every failure of the run (an invalid value, a
simulation error, a metric that cannot be computed, an unexpected exception) is a `failed`
row with its message; nothing a run does stops the sweep.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from ..api import run_meta
from ..engine.journal import journal_results
from ..engine.compiler import compile_diagram
from ..language.diagram import apply_overrides
from ..errors import DiagramError, DiagramErrors
from ..engine.results import finalize_sinks
from ..accel.batch import CompiledRuns
from ..accel.mode import simulate_model
from .metrics import Metrics


KEEP = ("all", "metrics", "failed")  # whose results a sweep keeps: every run's, none, the failed


@dataclass
class Job:
    """What every run of one sweep needs; sent to each worker once."""
    token: str  # unique per sweep execution: the key of the workers' caches
    name: str  # the sweep's name
    spec: object  # DiagramSpec with the fixed overrides applied
    metrics: dict  # metric name -> expression text
    keep: str  # all / metrics / failed: whose results travel back
    timeout: float | None = None  # seconds a run may take (None: no limit)


class RunTimedOut(KeyboardInterrupt):
    """A run went over the sweep's per-run time limit. An interruption of the simulation
    (both the interpreter and compiled code stop on one and keep their rows so far), which
    the worker turns into a failed row."""

    def __str__(self):
        return (f"timed out: the run took longer than {self.args[0]:g} s (the sweep's "
                "per-run limit, timeout)")


def _deadline(seconds):
    """A progress callback that raises RunTimedOut once `seconds` have passed, or None.
    The simulation calls it after every solver step (compiled code every 0.1 s): the time
    to compile counts, a block's computation that never returns is not stopped."""
    if seconds is None:
        return None
    end = time.perf_counter() + seconds

    def check(t):
        if time.perf_counter() > end:
            raise RunTimedOut(seconds)
    return check


@dataclass
class Outcome:
    index: int
    row: dict  # status, message, wall_s, steps and the metrics
    sim_s: float = 0.0  # time spent in simulate()
    cpu_s: float = 0.0  # processor time of the worker process during the run
    compiled: bool = False  # the model was compiled in full (not given new values)
    result: tuple | None = None  # (t, data, meta) when the run is kept
    mode: str | None = None  # how it was simulated, "normal" or "accelerated" (None: it was not)


@dataclass
class Outcomes:
    """Runs of a compiled batch that ended ok, none of them kept, as columns (what each
    run's `Outcome` would hold): reported a batch at once. Iterating gives each Outcome."""
    index: object  # the runs' indices (int array)
    steps: object  # accepted steps (int array)
    metrics: dict  # metric name -> float array
    wall_s: object  # the rows' wall_s (float array)
    sim_s: object  # time spent in the compiled run (float array)
    cpu_s: object  # processor time (float array)
    mode: str = "accelerated"

    def __len__(self):
        return len(self.index)

    def __iter__(self):
        names = list(self.metrics)
        columns = [self.index.tolist(), self.steps.tolist(), self.wall_s.tolist(),
                   self.sim_s.tolist(), self.cpu_s.tolist(),
                   *(self.metrics[m].tolist() for m in names)]
        for index, steps, wall, sim, cpu, *values in zip(*columns):
            row = new_row("ok", "", steps, dict(zip(names, values)))
            row["wall_s"] = wall
            yield Outcome(index, row, sim_s=sim, cpu_s=cpu, mode=self.mode)


class _WorkerState:
    """A worker thread's Model, compiled metrics and, once a run has been accelerated, its
    compiled code's runs (accel.batch.CompiledRuns) and batches of them (accel.pool.Batch,
    made by batch/batches.py) for one sweep."""

    def __init__(self, job, model=None):
        self.model = model  # the Model the runs' values are written into
        self.texts = job.metrics
        self.metrics = {}  # record names -> Metrics
        self.fast = None  # CompiledRuns; False: none possible
        self.mode = None  # info["mode"] of the run that made the CompiledRuns
        self.batches = []
        self.batch_metrics = None  # reductions.BatchMetrics, with the batches

    def model_for(self, job, overrides):
        """The worker's Model with the run's values: (model, compiled anew); DiagramError(s)
        for a value refused."""
        if self.model is None:
            spec = job.spec.copy()
            apply_overrides(spec, overrides)
            self.model = compile_diagram(spec)
            return self.model, True
        return self.model, not self.model.compilation.change(self.model, overrides,
                                                             base=job.spec)

    def metrics_for(self, model):
        names = tuple(model.record)
        metrics = self.metrics.get(names)
        if metrics is None:
            metrics = self.metrics[names] = Metrics(self.texts, names)
        return metrics


_local = threading.local()
_KEEP_SWEEPS = 4  # a worker of a long-lived cluster keeps the caches of the last few sweeps


def state_of(job, model=None):
    """The calling thread's _WorkerState of `job` (made on first use)."""
    states = getattr(_local, "states", None)
    if states is None:
        states = _local.states = OrderedDict()
    state = states.get(job.token)
    if state is None:
        state = states[job.token] = _WorkerState(job, model)
        while len(states) > _KEEP_SWEEPS:
            states.popitem(last=False)
    states.move_to_end(job.token)
    return state


_jobs = {}  # token -> Job, installed in a Dask worker process by worker_plugin.JobPlugin


def install_job(job):
    _jobs[job.token] = job


def forget_job(token):
    _jobs.pop(token, None)


def installed_job(token):
    """The job installed under `token` in this worker process, None when there is none
    (the sweep ended and unregistered it)."""
    return _jobs.get(token)


def not_run(runs, why):
    """Outcomes of runs [(index, overrides)] that did not run, for --resume."""
    return [Outcome(index, new_row("interrupted", f"not run: {why}")) for index, _ in runs]


def adopt_model(job, model):
    """Use `model` (the diagram compiled already, e.g. for checking it) for this job's runs in
    the calling thread."""
    state_of(job, model)


def run_one(job, index, overrides, in_process=False):
    """Run `index` with `overrides` [(path, raw value, Loc)]; returns its Outcome. In the
    calling process (`in_process`), Ctrl-C during the simulation is re-raised after the
    simulator has stopped; on a worker it makes the row `interrupted`."""
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        outcome = _run(job, index, overrides, in_process, _deadline(job.timeout))
    except KeyboardInterrupt:
        raise
    except Exception as e:  # a bug in a block must not end the sweep: the row says what
        outcome = Outcome(index, new_row("failed", f"internal error: {type(e).__name__}: {e}"))
    outcome.row["wall_s"] = time.perf_counter() - t0
    outcome.cpu_s = time.process_time() - c0
    return outcome


def new_row(status, message="", steps=None, metrics=None):
    return {"status": status, "message": message, "wall_s": None, "steps": steps,
            **(metrics or {})}


def _run(job, index, overrides, in_process, deadline):
    state = state_of(job)
    try:
        model, compiled = state.model_for(job, overrides)
        # accelerated mode refused when compiling (a cache it cannot use) is the run's error
        t, data, info = simulate_model(model, deadline, sweep=True)
    except (DiagramError, DiagramErrors) as e:
        return Outcome(index, new_row("failed", str(e)))
    if info["mode"]["mode"] == "accelerated" and state.fast is None:
        state.fast = CompiledRuns.of(model, job.spec) or False
        state.mode = info["mode"]
        if state.fast:
            state.model = None  # the compiled runs' own: a run the general way gets another
    error = info["error"]
    steps = info["stats"]["nsteps"]
    metrics = None
    if isinstance(error, RunTimedOut):
        row = new_row("failed", str(error), steps)
    elif isinstance(error, KeyboardInterrupt):
        if in_process:
            raise error  # Ctrl-C or SIGTERM (Terminated): the command tells them apart
        row = new_row("interrupted", "interrupted", steps)
    elif error is not None:
        row = new_row("failed", str(error), steps)
    else:
        metrics, row = evaluate(state, model, t, data, steps)
    outcome = Outcome(index, row, sim_s=info["wall_time"], compiled=compiled,
                      mode=info["mode"]["mode"])
    if kept(job, row):
        outcome.result = kept_result(job, index, overrides, model, t, data, info, metrics)
    return outcome


def kept(job, row):
    """Whether the results of a run with `row` are kept: every run's, or the failed ones'."""
    return job.keep == "all" or (job.keep == "failed" and row["status"] != "ok")


def kept_result(job, index, overrides, model, t, data, info, metrics):
    """(t, data, meta) of a kept run, as `blocksim run` writes them (no plots): the rows,
    its events, and meta.json with what its blocks report and the run's place in the
    sweep. `model`: the run's Model (or one that describes it: batches.model_of)."""
    meta = run_meta(model, t, info)
    meta["blocks"] = finalize_sinks(model, t, info["sink_data"], None, False,
                                    info["complete"], error=info["error"])[1]
    meta["sweep"] = {"name": job.name, "run": index,
                     "values": {k: v for k, v, _ in overrides}, "metrics": metrics}
    event_t, event_block, _ = info["events"]
    events = {"events_t": event_t, "events_block": event_block} if len(event_t) else {}
    events.update(journal_results(model, info.get("journal", ()))[0])  # a chart's states
    return t, {**data, **events}, meta


def evaluate(state, model, t, data, steps):
    """(metrics, row) of a run that ended: an ok row with its metrics, or a failed row
    naming the metric that cannot be computed."""
    try:
        metrics = state.metrics_for(model).evaluate(t, data)
        return metrics, new_row("ok", "", steps, metrics)
    except ValueError as e:
        return None, new_row("failed", str(e), steps)
