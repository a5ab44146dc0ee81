"""Ctrl-C and SIGTERM that arrive while a sweep's local cluster starts: acted on once the
cluster exists (which is then closed), not lost and not left half started. A stand-in
cluster sends the signal from inside its constructor, as a user's Ctrl-C would arrive."""
import json
import signal
import threading

import pytest

import blocksim.batch.execute as sweep_exec
from blocksim.errors import Terminated

distributed = pytest.importorskip("distributed")
posix_masks = pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"),
                                 reason="signal masks are POSIX")


class _Cluster:
    """Sends `signum` to the main thread while 'starting' (to the process, another thread
    could take it and Python act on it a moment later: when is the machine's, not the
    test's); records what the workers would inherit (this thread's blocked signals) and
    whether it was closed."""
    instances = []

    def __init__(self, signum, **kwargs):
        self.inherited_mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
        signal.pthread_kill(threading.main_thread().ident, signum)
        self.closed = False
        _Cluster.instances.append(self)

    def close(self):
        self.closed = True


class _Client:
    def __init__(self, cluster):
        pytest.fail("the sweep went on after a signal that came while the workers started")


@pytest.fixture
def stand_in(monkeypatch):
    def using(signum):
        _Cluster.instances.clear()
        monkeypatch.setattr(distributed, "LocalCluster",
                            lambda **kw: _Cluster(signum, **kw))
        monkeypatch.setattr(distributed, "Client", _Client)
    return using


@posix_masks
def test_ctrl_c_while_the_workers_start_interrupts_and_closes_the_cluster(stand_in):
    stand_in(signal.SIGINT)
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        with sweep_exec._local_cluster(2):
            pytest.fail("the runs started after Ctrl-C")
    cluster, = _Cluster.instances
    assert cluster.closed
    # the worker processes start with SIGINT blocked: only this process acts on Ctrl-C
    assert signal.SIGINT in cluster.inherited_mask
    assert signal.getsignal(signal.SIGINT) is before
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])


@posix_masks
def test_sigterm_while_the_workers_start_calls_its_handler_after(stand_in):
    stand_in(signal.SIGTERM)

    def as_the_command_line_does(signum, frame):
        raise Terminated()
    previous = signal.signal(signal.SIGTERM, as_the_command_line_does)
    try:
        with pytest.raises(Terminated):
            with sweep_exec._local_cluster(2):
                pytest.fail("the runs started after SIGTERM")
        assert signal.getsignal(signal.SIGTERM) is as_the_command_line_does
    finally:
        signal.signal(signal.SIGTERM, previous)
    cluster, = _Cluster.instances
    assert cluster.closed


@posix_masks
def test_ctrl_c_while_the_workers_start_exits_130_saying_nothing_started(stand_in, tmp_path,
                                                                           capsys):
    from blocksim.cli import main
    from sweep_lag import METRICS, write_sweep

    stand_in(signal.SIGINT)
    path = write_sweep(tmp_path, "grid:\n  parameters.tau: [0.5, 1]\n" + METRICS, "s.yaml")
    code = main(["sweep", str(path), "--workers", "2", "--out", str(tmp_path / "out"),
                 "--mode", "normal"])  # an accelerated one runs in this process
    assert code == 130
    out = capsys.readouterr().out
    assert out.startswith("interrupted: s: 2 runs, 0 ok, 0 failed, 2 not run in ")
    assert "(not started)" in out
    summary = json.loads((tmp_path / "out" / "sweep.json").read_text())
    assert summary["complete"] is False and summary["counts"]["interrupted"] == 2
