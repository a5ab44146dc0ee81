"""Where a sweep's runs execute: the calling process, a local Dask cluster, or an existing one.

`executor(workers, scheduler, client)` is a context manager giving an object with
`run(job, runs, report)`, which calls `report(outcome)` for every finished run, in completion
order, and `workers` (how many runs execute at once).

- `workers == 1`: in the calling process, one run after another (no Dask).
- `batched` (accelerated runs that can go in compiled batches, `batches.in_batches`): in the
  calling process, in compiled batches on `workers` C threads. A local cluster's start
  alone costs seconds, more than thousands of compiled runs, and the runs' Python share is
  small: measured in benchmarks/accelerator.py, 10,000 runs of pid_motor on 2 threads took
  under half the wall time of 2 local worker processes running the same batches.
- otherwise a `distributed.LocalCluster` of that many worker processes (one thread each,
  loopback only, no dashboard), started here and closed afterwards. Its scheduler marks a run
  failed when two workers died running it (`allowed_failures=1`: one retry), and gives each
  worker one run at a time (`worker-saturation` 1.0), so that only the run that was
  executing when a worker died is charged with its death.
- `scheduler="tcp://host:8786"` or `client=` a `distributed.Client`: an existing cluster (its
  own allowed-failures setting applies; Dask's default retries a run three times).

The job (the parsed diagram, the metrics) goes to every worker once, as a worker plugin
(`worker_plugin.JobPlugin`): a worker that joins later, such as the one started in place of a
worker that died, gets it too, so the runs not started yet run there. Runs travel in
batches (one task runs several, as one compiled batch on one thread when they can: a Dask
task costs milliseconds, more than a compiled run), each carrying only its overrides, and
only the rows (and the results when
kept) come back. A batch whose worker died is sent again one run per task, so that only the
run that killed a worker is charged with it. At most IN_FLIGHT_PER_WORKER batches per worker
are submitted at a time, the next as one finishes: a sweep of a million runs never has all
its tasks (or their keys) anywhere, and an interruption has only those few to cancel. A run
whose task the cluster lost before it ran is `interrupted` (not run), for --resume. The
local cluster logs nothing below CRITICAL: what a user needs to know is in the rows. Files
that blocks read while compiling (a robot `file:`, `from_file` data) are read by the workers:
on another machine they must exist at the same paths.
On Ctrl-C the outstanding runs are cancelled and the finished ones still reported.
"""
from __future__ import annotations

import contextlib
import itertools
import logging
import signal
import threading
import warnings
from concurrent.futures import CancelledError

from ..errors import DiagramError
from .batches import run_batch, run_batches
from .worker import Outcome, adopt_model, new_row, run_one


IN_FLIGHT_PER_WORKER = 4


class InProcess:
    """Runs in the calling process: one after another, or in compiled batches on `threads`
    C threads (`batched`)."""

    def __init__(self, model=None, batched=False, threads=1):
        self.model = model
        self.batched = batched
        self.workers = threads
        self.where = "in-process" if threads == 1 else f"in-process, {threads} threads"

    def run(self, job, runs, report):
        if self.model is not None:
            adopt_model(job, self.model)
        if self.batched:
            run_batches(job, runs, report, self.workers, in_process=True)
            return
        for r in runs:
            report(run_one(job, r.index, r.overrides, in_process=True))


BATCHES_PER_WORKER = 8  # batches per worker at least, for balance and a moving progress bar
MAX_BATCH = 64  # runs per task at most



class OnDask:
    """Runs as tasks of a Dask distributed cluster, in batches (see the module docs)."""

    def __init__(self, client, where):
        self.client = client
        self.where = where
        self.workers = max(1, sum(client.nthreads().values()))

    def run(self, job, runs, report):
        from distributed import as_completed

        from .worker_plugin import JobPlugin

        client = self.client
        plugin = JobPlugin(job)
        client.register_plugin(plugin, name=plugin.name)
        size = max(1, min(MAX_BATCH, len(runs) // (self.workers * BATCHES_PER_WORKER)))
        batches = (runs[k:k + size] for k in range(0, len(runs), size))
        futures = {}  # submitted and not reported yet -> its batch
        pending = as_completed()

        def submit(batch):
            future = client.submit(
                run_batch, job.token, [(r.index, r.overrides) for r in batch],
                key=f"blocksim-runs-{job.token}-{batch[0].index}-{len(batch)}")
            futures[future] = batch
            pending.add(future)
        try:
            for batch in itertools.islice(batches, IN_FLIGHT_PER_WORKER * self.workers):
                submit(batch)
            for future in pending:
                batch = futures.pop(future)
                for outcome in self.outcomes(future, batch):
                    report(outcome)
                if self.died(future) and len(batch) > 1:  # again, one run per task
                    for r in batch:
                        submit([r])
                for batch in itertools.islice(batches, 1):
                    submit(batch)
        except KeyboardInterrupt:
            client.cancel([f for f in futures if f.status != "finished"])
            for future, batch in list(futures.items()):
                if future.status in ("finished", "error"):
                    for outcome in self.outcomes(future, batch):
                        report(outcome)
            raise
        finally:
            client.cancel(list(futures))
            with contextlib.suppress(Exception):  # a cluster already closing
                client.unregister_worker_plugin(plugin.name)

    @staticmethod
    def died(future):
        """Whether the task's worker died (twice: the scheduler's one retry)."""
        from distributed import KilledWorker

        return future.status == "error" and isinstance(future.exception(timeout=60),
                                                       KilledWorker)

    def outcomes(self, future, batch):
        """The batch's Outcomes: none for a batch of several whose worker died (sent again
        one by one), a failed row for a single run that killed its worker twice, rows not
        run when the cluster lost the task without running it (its workers gone, the
        cluster closing)."""
        from distributed import KilledWorker

        try:
            return future.result(timeout=60)
        except KilledWorker:
            if len(batch) > 1:
                return []
            return [Outcome(r.index, new_row(
                "failed", "the worker process died running this run, and again when it was "
                          "retried")) for r in batch]
        except CancelledError as e:
            return [Outcome(r.index, new_row(
                "interrupted", f"not run: the cluster lost the run's task ({e})")) for r in batch]
        except Exception as e:  # the task itself could not run on the worker
            return [Outcome(r.index, new_row(
                "failed", f"the run could not execute on the cluster: {type(e).__name__}: {e}"))
                for r in batch]


@contextlib.contextmanager
def executor(workers=1, scheduler=None, client=None, model=None, batched=False):
    """The place runs execute (see the module docstring); closes what it started.
    `batched`: the runs can go in compiled batches (`batches.in_batches`)."""
    if client is not None:
        yield OnDask(client, f"Dask cluster {client.scheduler.address}")
        return
    if scheduler is not None:
        with _connect(scheduler) as c:
            yield OnDask(c, f"Dask cluster {scheduler}")
        return
    if workers <= 1 or batched:
        yield InProcess(model, batched, max(1, workers))
        return
    with _local_cluster(workers) as c:
        yield OnDask(c, f"{workers} local worker processes")


CONNECT_SECONDS = 10.0


@contextlib.contextmanager
def _connect(address):
    from distributed import Client

    try:
        _handshake(address, CONNECT_SECONDS)
        client = Client(address, timeout=CONNECT_SECONDS)
    except Exception as e:  # noqa: BLE001 - whatever answered there, it is no scheduler
        reason = _why_not_connected(e)
        raise DiagramError(f"cannot connect to the Dask scheduler at {address}: {reason}",
                           file="--scheduler",
                           hint="is it the scheduler's address and port (8786 by default, "
                                "not the dashboard's 8787)?") from None
    try:
        _check_workers(client, address)
        yield client
    finally:
        client.close()


def _why_not_connected(e):
    if isinstance(e, TimeoutError):
        return f"no Dask handshake within {CONNECT_SECONDS:g} s"
    if isinstance(e, (OSError, ValueError)) and str(e):
        return str(e)
    return f"what answers there is not a Dask scheduler ({type(e).__name__})"


def _handshake(address, seconds):
    """Open a connection to `address` and complete Dask's handshake within `seconds`.
    distributed's own timeout bounds the connection, not the handshake after it: a port
    that accepts and never answers (a web server) would hang, one that answers otherwise
    fails in its decoder (a MemoryError for a frame 'length' read from other bytes)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from distributed.comm import connect

    async def handshake():
        comm = await asyncio.wait_for(connect(address, timeout=seconds), seconds)
        await comm.close()
    with ThreadPoolExecutor(1) as pool:  # its own event loop, whatever runs in this thread
        pool.submit(asyncio.run, handshake()).result()


def _check_workers(client, address):
    """Every worker must be able to import blocksim: ask them before sending runs."""
    if not client.nthreads():
        raise DiagramError(f"the Dask cluster at {address} has no workers", file="--scheduler")
    try:
        client.run(_blocksim_version)
    except Exception as e:
        raise DiagramError(f"the workers of the Dask cluster at {address} cannot run blocksim "
                           f"({type(e).__name__}: {e}); install blocksim where they run",
                           file="--scheduler") from None


def _blocksim_version():
    from .. import __version__
    return __version__


# The local cluster's settings (the nannies hand them to the worker processes). Besides the
# saturation (see the module docstring): no dashboard reads the workers' statistical profiler
# (a thread sampling the running task's stack every 10 ms), the event-loop watchdog (20 ms)
# and the system and memory monitors (0.5 s, 0.1 s) may wake rarely. On 2 cores these
# background threads took 5-10 % from the runs (benchmarks/sweep.py: 2-worker throughput
# +6-12 %).
_LOCAL_CONFIG = {
    "distributed.scheduler.worker-saturation": 1.0,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
}


@contextlib.contextmanager
def _local_cluster(workers):
    import dask
    from distributed import Client, LocalCluster

    with dask.config.set(_LOCAL_CONFIG), warnings.catch_warnings(), _signals_held() as held:
        # the scheduler's internal HTTP server (loopback) moves to a free port when another
        # cluster on this machine has the default one: not worth a warning
        warnings.filterwarnings("ignore", message="Port .* is already in use")
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address=None,
                               silence_logs=logging.CRITICAL,
                               scheduler_kwargs={"allowed_failures": 1})
    client = None
    try:
        held.deliver()  # a Ctrl-C or SIGTERM while the workers started: now, then close
        client = Client(cluster)
        yield client
    finally:
        # runs cancelled by Ctrl-C make the closing scheduler log lost connections at
        # CRITICAL level: nothing a user can act on
        logging.disable(logging.CRITICAL)
        try:
            if client is not None:
                client.close()
            cluster.close()
        except Exception:  # noqa: BLE001 - see below
            # A nanny still restarting a worker that died can race the close ("can only
            # join a started process", "ConnectionPool is closed"). Every run is finished and
            # recorded by now, and the worker processes end with this one: the sweep's
            # result must not become a traceback here.
            pass
        finally:
            logging.disable(logging.NOTSET)


class _Held:
    """The signals that arrived while held: `deliver()` acts on them (once)."""

    def __init__(self):
        self.sigint = False
        self.sigterm = None  # the SIGTERM handler to call, when a SIGTERM arrived
        self.restore = None  # puts the process's own handlers back

    def deliver(self):
        if self.restore is not None:
            self.restore, restore = None, self.restore
            restore()
        sigint, sigterm, self.sigint, self.sigterm = self.sigint, self.sigterm, False, None
        if sigterm is not None:
            sigterm(signal.SIGTERM, None)
        if sigint:
            raise KeyboardInterrupt


@contextlib.contextmanager
def _signals_held():
    """Hold Ctrl-C and SIGTERM while the worker processes start, for `_Held.deliver` to act
    on once the cluster exists (interrupting its constructor leaves it half started: worker
    processes running on, a traceback at exit).

    Only this process should act on Ctrl-C (a terminal sends it to the whole process group;
    this process cancels the runs and closes the cluster): the worker processes started in
    here inherit a blocked SIGINT, from this thread's signal mask. This process notes a
    SIGINT instead (whichever of its threads receives it), as it notes a SIGTERM that has a
    Python handler (the command line's). The notes stay the handlers until `deliver`: a
    signal that another thread received may reach Python's handler a moment after the
    workers started, and must still be noted rather than raised before the cluster is in
    the caller's hands to close."""
    held = _Held()
    if threading.current_thread() is not threading.main_thread():
        yield held  # signal handlers belong to the main thread
        return
    previous_int = signal.getsignal(signal.SIGINT)
    previous_term = signal.getsignal(signal.SIGTERM)
    can_block = hasattr(signal, "pthread_sigmask")
    if can_block:
        # multiprocessing starts its resource tracker (once per process) with the first
        # worker process, and unblocks SIGINT in the starting thread afterwards: started
        # here, before blocking, the workers' threads keep SIGINT blocked
        from multiprocessing import resource_tracker
        resource_tracker.ensure_running()
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        if previous_int is not signal.SIG_IGN:
            signal.signal(signal.SIGINT, lambda signum, frame: setattr(held, "sigint", True))
    else:  # without signal masks the workers inherit an ignored SIGINT (and so does this)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    if callable(previous_term):
        signal.signal(signal.SIGTERM, lambda signum, frame: setattr(held, "sigterm",
                                                                    previous_term))

    def unblock():
        if can_block:  # a SIGINT pending in this thread comes now, to the note above
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)

    def restore():
        signal.signal(signal.SIGINT, previous_int)
        signal.signal(signal.SIGTERM, previous_term)
    try:
        yield held
    except BaseException:  # the workers did not start: nothing to deliver
        unblock()
        restore()
        raise
    unblock()
    held.restore = restore  # deliver() puts the handlers back
