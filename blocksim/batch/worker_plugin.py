"""A sweep's job on every worker of a Dask cluster, also on the workers that join later.

The job (the parsed diagram with its fixed overrides, the metrics) is registered with the
cluster as a worker plugin: the scheduler hands it to every worker now and to every worker
that joins later, such as the one a nanny starts in place of a worker that died. (Scattered
data lived only on the workers that held it: when they all died, every run still to come
failed, "lost dependencies".) Each run's task carries only the job's token. Imported only
where Dask runs (distributed is imported here).
"""
from __future__ import annotations

from distributed.diagnostics.plugin import WorkerPlugin

from .worker import forget_job, install_job


class JobPlugin(WorkerPlugin):
    """Installs `job` in each worker process (`worker.install_job`), and removes it when
    the sweep unregisters the plugin."""

    idempotent = True

    def __init__(self, job):
        self.job = job
        self.name = f"blocksim-job-{job.token}"

    def setup(self, worker):
        install_job(self.job)

    def teardown(self, worker):
        forget_job(self.job.token)
