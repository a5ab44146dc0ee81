"""`blocksim.sweep`: run a diagram many times with different values and tabulate the runs.

    import blocksim
    table = blocksim.sweep("sweeps/demo3_robustness.yaml", workers=2, out="runs/demo3_robustness")
    table.rows, table.columns, table.to_csv("summary.csv")

The sweep is checked completely before anything runs (`spec.check`), then its runs execute
in this process, on a local Dask cluster or on an existing one (`execute`), each a row of
the table. With `out`, the sweep directory gets `summary.csv` (each row appended once, in run
order, as soon as the runs before it are done: an interrupted sweep has its finished rows
written within moments), `sweep.json` (rewritten every few seconds: small, it holds no
rows), `runs/<i>/results.npz` and `meta.json` for the kept runs, and a figure per metric
(`plot`). Memory stays a few numbers per run: the runs are made when needed, the table is
columns of numbers.
"""
from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import math
import os
import time
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import DiagramError, OutputError, ReportWarning
from ..util import dirlock
from ..engine.results import (DRAWING, REPORT, check_out_dir, installed_versions, write_json,
                              write_npz)
from .batches import in_batches
from .execute import executor
from .plot import write_figures
from .spec import check, check_timeout, load_plan
from .resume import take_previous
from .table import OK, SweepTable, TableFile
from .worker import KEEP, Job, Outcomes

FLUSH_SECONDS = 2.0  # between rewrites of sweep.json
TABLE = "summary.csv"
KEPT = ".summary.resumed.csv"  # while a --resume rewrites summary.csv: the rows it resumed
SWEEP_FILE = "sweep.json"
LOCK = ".sweep.lock"  # held while a sweep writes the directory (util/dirlock)
SEEDING = "numpy.random.SeedSequence(seed).spawn(runs)[run]"


@dataclass
class Progress:
    """What a progress callback sees when the runs start (`outcome` None) and after each."""
    total: int
    done: int
    ok: int
    failed: int
    running: int
    outcome: object


def default_workers():
    """The cores this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def sweep(source, *, grid=None, metrics=None, overrides=None, workers=None, scheduler=None,
          client=None, out=None, keep="all", resume=False, progress=None, timeout=None):
    """Run a sweep file, or the diagram `source` over `grid` ({path: list of values or an
    expression giving one}) with `metrics` ({name: expression}); returns a SweepTable.

    overrides: fixed overrides for every run ({path: value} or "path=value" strings).
    workers: runs at once on this machine (default: its cores; 1 runs in this process);
    scheduler: the address of an existing Dask scheduler; client: a distributed.Client.
    out: the sweep directory (no files without it); keep: whose per-run results are written
    (all, metrics: none, failed); resume: rerun only the rows of `out` that are not ok.
    progress: called with a `Progress` when the runs start and after every run.
    timeout: seconds a run may take, replacing the sweep file's `timeout:` (a run over it
    is a failed row, "timed out"; checked at every solver step).
    Raises DiagramError(s) for an invalid sweep, before anything runs. On Ctrl-C (or a
    fault once the runs began: a full disk, a lost cluster) the rows finished so far are
    written and the exception is raised with the table as `.table`.
    """
    options = dict(workers=workers, scheduler=scheduler, client=client, out=out, keep=keep,
                   resume=resume, timeout=timeout)
    _check_options(**options)
    return prepare(source, grid=grid, metrics=metrics, overrides=overrides).run(
        **options, progress=progress)


def prepare(source, *, grid=None, metrics=None, overrides=None, cli=False):
    """Read and check a sweep (see `sweep`) without running it: a `Sweep`."""
    plan = load_plan(source, grid, metrics, overrides or (), cli=cli)
    return Sweep(plan, check(plan), cli)


class Sweep:
    """A sweep that passed every check: `name`, `runs`, and `run(...)` (see `sweep`)."""

    def __init__(self, plan, checked, cli=False):
        self.plan = plan
        self.checked = checked
        self.name = plan.name
        self.runs = checked.runs
        self.cli = cli

    def run(self, *, workers=None, scheduler=None, client=None, out=None, keep="all",
            resume=False, progress=None, timeout=None):
        _check_options(workers, scheduler, client, out, keep, resume, timeout, self.cli)
        plan, checked = self.plan, self.checked
        meta = _meta(plan, checked, keep)
        meta["timeout"] = plan.timeout if timeout is None else float(timeout)
        table = SweepTable(checked.runs, plan.varied, plan.metrics, meta)
        out = Path(out) if out is not None else None
        if out is not None:  # before the runs: their rows must have somewhere to go
            check_out_dir(out)
        with _one_sweep_in(out):
            return self._run(plan, checked, meta, table, out, workers, scheduler, client,
                             keep, resume, progress)

    def _run(self, plan, checked, meta, table, out, workers, scheduler, client, keep, resume,
             progress):
        if resume:
            take_previous(table, out / SWEEP_FILE, out / TABLE, out / KEPT)
        done = table.status == OK  # rows final before any run: resumed ones
        todo = np.flatnonzero(~done)
        writer = _Writer(out, table, done)
        job = Job(uuid.uuid4().hex, plan.name, checked.spec,
                  {name: text for name, (text, _) in plan.metrics.items()},
                  keep if out is not None else "metrics", meta["timeout"])
        n_local = min(workers or default_workers(), max(len(todo), 1))
        started = time.perf_counter()
        stopped = None
        try:
            if len(todo):  # reach the workers first: an unreachable scheduler writes nothing
                runs = checked.runs.take(todo)
                batched = in_batches(checked.mode, runs)
                with executor(n_local, scheduler, client, checked.model, batched) as ex:
                    meta["execution"].update(where=ex.where, workers=ex.workers)
                    if not resume:
                        writer.clear_previous()
                    writer.start()
                    counter = _Counter(table, len(todo), ex.workers, progress, writer)
                    counter.start()
                    ex.run(job, runs, counter.report)
        except (KeyboardInterrupt, OutputError) as e:
            stopped = e
        except Exception as e:  # a fault while runs went on: their rows are written first
            if not writer.started:
                raise
            stopped = e
        meta["execution"]["wall_s"] = time.perf_counter() - started
        meta["complete"] = table.counts()["interrupted"] == 0
        meta["status"] = "finished" if meta["complete"] else "interrupted"
        if stopped is not None:
            stopped.table = table
        if isinstance(stopped, OutputError):
            writer.close()
            raise stopped
        writer.finish()
        writer.report(checked.spec)
        if stopped is not None:
            raise stopped
        return table


@contextlib.contextmanager
def _one_sweep_in(out):
    """The sweep directory to this sweep alone while it runs (two sweeps into one directory
    mixed their rows and run folders): a second one is refused, naming the first."""
    if out is None:
        yield
        return
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(dirlock.hold(out, LOCK))
        except dirlock.Busy as e:
            raise DiagramError(f"'{out}' is in use by another sweep ({e.holder})",
                               file=str(out), hint="wait for it to finish, or choose another "
                               "directory (--out)") from None
        except OSError as e:  # the lock file cannot be opened (another user's, read-only)
            raise DiagramError(f"cannot lock the sweep directory '{out}': "
                               f"{e.strerror or e}", file=str(out),
                               hint="choose another directory (--out)") from None
        yield


def _check_options(workers, scheduler, client, out, keep, resume, timeout, cli=False):
    def option(name):
        return f"--{name}" if cli else f"{name}="
    if timeout is not None:
        try:
            check_timeout(timeout)
        except ValueError as e:
            raise DiagramError(str(e), file=option("timeout")) from None
    if keep not in KEEP:
        raise DiagramError(f"keep must be one of {', '.join(KEEP)}, got {keep!r}",
                           file=option("keep"))
    if (scheduler is not None or client is not None) and workers is not None:
        raise DiagramError("give either a number of local workers or a Dask scheduler, not both",
                           file=option("workers"))
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise DiagramError(f"workers must be a positive integer, got {workers!r}",
                           file=option("workers"))
    if resume and out is None:
        raise DiagramError("resume needs the sweep directory", file=option("out"))


def _meta(plan, checked, keep):
    random = plan.of_kind("random")
    meta = {
        "blocksim-sweep": 1,
        "name": plan.name,
        "file": plan.file,
        "diagram": plan.diagram,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "complete": False,
        "status": "running",
        "sweep": plan.describe(),
        "varied": [{"key": a.key, "kind": a.kind} for a in plan.axes],
        "metrics": list(plan.metrics),
        "seeds": {"seed": plan.seed, "per_run": SEEDING} if random else None,
        "keep": keep,
        "fingerprint": None,
        "execution": {"where": None, "modes": {}, "workers": 0, "wall_s": None, "compiles": 0,
                      "reparameterised": 0, "run_s": 0.0, "simulate_s": 0.0, "cpu_s": 0.0},
        "figures": [],
        "versions": installed_versions(),
    }
    meta["fingerprint"] = _fingerprint(meta["sweep"], checked)
    return meta


def _fingerprint(described, checked):
    """What makes two sweeps the same for --resume: the resolved sweep (`described`, its
    plan's describe()) and the diagram it runs (its whole configuration, subsystems
    included, as compiled for the first run)."""
    model = checked.model
    model.compilation.change(model, [], base=checked.spec)
    text = json.dumps({"sweep": described, "diagram": model.config}, sort_keys=True,
                      default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def read_previous(path):
    """The mapping in a previous sweep.json; None when there is none; {} when it cannot be
    read or is not a mapping (damaged, or not a sweep's)."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


class _Counter:
    """Takes each outcome into the table, writes its files, reports progress."""

    def __init__(self, table, total, running, progress, writer):
        self.table = table
        self.total = total
        self.workers = running
        self.progress = progress
        self.writer = writer
        self.done = self.ok = self.failed = 0

    def start(self):
        if self.progress is not None:
            self.progress(Progress(self.total, 0, 0, 0, min(self.workers, self.total), None))

    def report(self, outcome):
        """Take an Outcome, or Outcomes (runs of a batch that ended ok, taken as columns at
        once); a progress callback then sees each of its runs, one call each."""
        if isinstance(outcome, Outcomes):
            done, ok = self.done, self.ok
            self._take_batch(outcome)
            if self.progress is not None:
                for one in outcome:
                    done += 1
                    ok += 1
                    self._tell(done, ok, one)
            return
        table = self.table
        table.set(outcome.index, outcome.row)
        ex = table.meta["execution"]
        ex["run_s"] += outcome.row["wall_s"] or 0.0
        ex["simulate_s"] += outcome.sim_s
        ex["cpu_s"] += outcome.cpu_s
        ex["compiles" if outcome.compiled else "reparameterised"] += 1
        if outcome.mode is not None:
            ex["modes"][outcome.mode] = ex["modes"].get(outcome.mode, 0) + 1
        self.done += 1
        status = outcome.row["status"]
        self.ok += status == "ok"
        self.failed += status == "failed"
        self.writer.took(outcome)
        if self.progress is not None:
            self._tell(self.done, self.ok, outcome)

    def _take_batch(self, outcomes):
        self.table.set_ok(outcomes.index, outcomes.wall_s, outcomes.steps, outcomes.metrics)
        ex = self.table.meta["execution"]
        ex["run_s"] += float(outcomes.wall_s.sum())
        ex["simulate_s"] += float(outcomes.sim_s.sum())
        ex["cpu_s"] += float(outcomes.cpu_s.sum())
        ex["reparameterised"] += len(outcomes)
        ex["modes"][outcomes.mode] = ex["modes"].get(outcomes.mode, 0) + len(outcomes)
        self.done += len(outcomes)
        self.ok += len(outcomes)
        self.writer.took_ok(outcomes.index)

    def _tell(self, done, ok, outcome):
        self.progress(Progress(self.total, done, ok, self.failed,
                               min(self.workers, self.total - done), outcome))


class _Writer:
    """The sweep directory (nothing without one): summary.csv as the rows become final,
    sweep.json every FLUSH_SECONDS, each kept run's files. A file that cannot be written (a
    full disk) is an OutputError: the sweep stops, the rows written so far stay."""

    def __init__(self, out, table, done):
        self.out = out
        self.table = table
        self.done = done
        self.file = None
        self.next = -math.inf  # the earliest time of the next flush
        self.started = False  # runs have begun: what they finish is this sweep's

    def clear_previous(self):
        """Remove what a previous sweep into this directory wrote and this one may not write
        again (as `blocksim run` does): every run's results, and its metric figures; and its
        report and drawing, which this sweep writes only at its end (until then they would
        show the previous sweep, finished, next to this one's rows)."""
        if self.out is None:
            return
        (self.out / KEPT).unlink(missing_ok=True)
        previous = read_previous(self.out / SWEEP_FILE)
        if previous is not None:
            for name in (REPORT, DRAWING):
                (self.out / name).unlink(missing_ok=True)
        previous = previous or {}
        for figure in previous.get("figures") or []:
            name = figure.get("file") if isinstance(figure, dict) else None
            if isinstance(name, str) and name.endswith(".png") and Path(name).name == name:
                (self.out / name).unlink(missing_ok=True)
        runs = self.out / "runs"
        for folder in runs.iterdir() if runs.is_dir() and not runs.is_symlink() else ():
            if folder.name.isdigit() and folder.is_dir() and not folder.is_symlink():
                _forget_results(folder)

    def start(self):
        """summary.csv begun (the header, and the rows already final), sweep.json written."""
        self.started = True
        if self.out is None:
            return
        with self._writing():
            self.out.mkdir(parents=True, exist_ok=True)
            if self.done.any():  # resumed rows: summary.csv is rewritten in run order, so
                self.table.to_csv(self.out / KEPT)  # they are kept whole until its end
            self.file = TableFile(self.out / TABLE, self.table, self.done)
            self.file.advance()
        self.flush(force=True)

    def took(self, outcome):
        """A run's row is final: its files, and the table's rows that can follow."""
        self.done[outcome.index] = True
        if self.out is None:
            return
        with self._writing():
            self._run_files(outcome)
            if self.file is not None:
                self.file.advance()
        self.flush()

    def took_ok(self, index):
        """Runs `index` (an int array) ended ok and keep no results: as `took` of each."""
        self.done[index] = True
        if self.out is None:
            return
        runs = self.out / "runs"
        with self._writing():
            if runs.is_symlink() or runs.is_dir():  # else no run has results to forget
                for i in index.tolist():
                    self._no_results(i)
            if self.file is not None:
                self.file.advance()
        self.flush()

    def _run_files(self, outcome):
        if outcome.result is None:
            self._no_results(outcome.index)
            return
        folder = self._folder(outcome.index)
        t, data, meta = outcome.result
        write_npz(folder / "results.npz", t, data)
        write_json(folder / "meta.json", meta)

    def _folder(self, index):
        """runs/<index>, neither it nor runs/ a link (a link is removed, not followed: what
        it points to stays as it is)."""
        folder = self.out / "runs" / str(index)
        for own in (folder.parent, folder):  # the sweep's folders: a link is not followed
            if own.is_symlink():
                own.unlink()
        return folder

    def _no_results(self, index):
        """Run `index` keeps no results: a previous sweep's for it are no longer true."""
        folder = self._folder(index)
        if folder.is_dir():
            _forget_results(folder)

    def flush(self, force=False):
        """Rewrite sweep.json (its counts), at most every FLUSH_SECONDS."""
        if self.out is None or (not force and time.monotonic() < self.next):
            return
        with self._writing():
            self.out.mkdir(parents=True, exist_ok=True)
            write_json(self.out / SWEEP_FILE, {**self.table.meta, "counts": self.table.counts(),
                                               "columns": self.table.columns})
        self.next = time.monotonic() + FLUSH_SECONDS

    def report(self, spec):
        """report.html (and the diagram's drawing) from the files just written; a failure
        costs the report, not the sweep."""
        if self.out is None:
            return
        from ..report.sweep_report import write_sweep_report
        try:
            write_sweep_report(self.out, spec)
        except Exception as e:
            warnings.warn(f"could not write the sweep report: {e}", ReportWarning, stacklevel=2)

    def finish(self):
        """The whole table (the rows not written yet, as they stand), then the metric
        figures (listed in sweep.json); a figure that cannot be drawn costs a warning, not
        the rows."""
        if self.out is None:
            return
        with self._writing():
            if self.file is None:
                self.file = TableFile(self.out / TABLE, self.table, self.done)
            self.file.finish()
            self.close()
            (self.out / KEPT).unlink(missing_ok=True)  # summary.csv holds them all again
        self.flush(force=True)
        if not self.table.meta["metrics"]:
            return
        try:
            self.table.meta["figures"] = write_figures(self.table, self.out)
        except Exception as e:
            warnings.warn(f"could not draw the metric figures: {e}", ReportWarning, stacklevel=2)
            return
        self.flush(force=True)

    def close(self):
        file, self.file = self.file, None
        if file is not None:
            try:
                file.close()
            except OSError:
                pass  # the rows could not all be flushed: the error was reported once

    @contextlib.contextmanager
    def _writing(self):
        try:
            yield
        except OSError as e:
            raise OutputError(f"cannot write the sweep's files in '{self.out}': "
                              f"{e.strerror or e}; the rows written before are kept") from None


def _forget_results(folder):
    """A run's results.npz and meta.json, and its folder when nothing else is in it."""
    for name in ("results.npz", "meta.json"):
        (folder / name).unlink(missing_ok=True)
    if not any(folder.iterdir()):
        folder.rmdir()
