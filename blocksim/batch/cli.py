"""`blocksim sweep`: the command line of `blocksim.sweep`.

    blocksim sweep SWEEP.yaml [--workers N | --scheduler ADDRESS] [--out DIR]
                              [--keep all|metrics|failed] [--resume] [--timeout SECONDS]
                              [--set KEY=VALUE]... [--quiet]
    blocksim sweep DIAGRAM.yaml --grid KEY=V1,V2,... [--grid ...] [--metric NAME=EXPR]...

Exit codes: 0 every run succeeded; 3 some run failed or was not run (a task the cluster lost;
its row says why); 130 interrupted by
Ctrl-C, 143 by SIGTERM (the finished rows are written, `complete` is false); 2 invalid sweep or
command line (every problem as FILE:LINE, before anything runs).
"""
from __future__ import annotations

import heapq
import sys
from pathlib import Path

from ..errors import OutputError, Terminated

EXIT_OK, EXIT_INVALID, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 2, 3, 130, 143
SHOW_FAILURES = 10


def add_parser(sub):
    p = sub.add_parser("sweep", help="run a diagram many times (grid, Monte Carlo) on every "
                                     "core or a Dask cluster; one table of results")
    p.add_argument("file", help="a sweep file, or a diagram with --grid")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, help="runs at once on this machine (default: its "
                                                   "cores; 1: in this process, without Dask)")
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="an existing Dask scheduler, e.g. tcp://host:8786")
    p.add_argument("--out", help="sweep directory (default: runs/<name>/)")
    p.add_argument("--keep", choices=("all", "metrics", "failed"), default="all",
                   help="whose results.npz/meta.json to write (default: all)")
    p.add_argument("--resume", action="store_true",
                   help="rerun only the rows of --out that are not ok yet")
    p.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="a run taking longer fails, 'timed out' (replaces the file's timeout:)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a fixed override for every run (repeatable)")
    p.add_argument("--mode", choices=("normal", "accelerated", "auto"),
                   help="normal, accelerated (compiled) or auto (same as --set simulation.mode=M)")
    p.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2,...",
                   help="with a diagram: a path and its values (repeatable: a product)")
    p.add_argument("--metric", action="append", default=[], metavar="NAME=EXPR",
                   help="with a diagram: a metric of the recorded signals, e.g. max(abs(e))")
    p.add_argument("--quiet", action="store_true", help="print only the final summary line")
    return p


def run(args):
    """The sweep command; returns the exit code. DiagramErrors propagate to cli.main."""
    from ..errors import DiagramError
    from .run import prepare
    from .spec import grid_option

    if not Path(args.file).is_file():
        raise DiagramError("no such sweep or diagram file", file=args.file)
    grid = dict(grid_option(g) for g in args.grid)
    metrics = {}
    for item in args.metric:
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            raise DiagramError(f"--metric expects NAME=EXPR, got {item!r}", file="--metric")
        metrics[name.strip()] = text
    prepared = prepare(args.file, grid=grid or None, metrics=metrics or None,
                       overrides=args.set + [f"simulation.mode={m}" for m in [args.mode] if m],
                       cli=True)
    out = Path(args.out) if args.out else Path("runs") / prepared.name
    bar = None if args.quiet or not sys.stderr.isatty() else _Bar()
    failures = _Failures()

    def progress(p):
        if bar is not None:
            bar.update(p)
        if p.outcome is not None and p.outcome.row["status"] == "failed":
            failures.add(p.outcome)

    try:
        table = prepared.run(workers=args.workers, scheduler=args.scheduler, out=out,
                             keep=args.keep, resume=args.resume, progress=progress,
                             timeout=args.timeout)
    except KeyboardInterrupt as e:
        _close(bar)
        table = getattr(e, "table", None)
        if table is None:
            print("interrupted", file=sys.stderr)
        else:
            _summary(table, out, "interrupted: ")
        return EXIT_TERMINATED if isinstance(e, Terminated) else EXIT_INTERRUPTED
    except OutputError as e:
        _close(bar)
        print(str(e), file=sys.stderr)
        return EXIT_FAILED
    _close(bar)
    if not args.quiet:
        failures.print(table)
    _summary(table, out)
    c = table.counts()
    return EXIT_FAILED if c["failed"] or c["interrupted"] else EXIT_OK


def _summary(table, out, prefix=""):
    """The last line: counts, the time the runs took (sweep.json's execution.wall_s), the
    runs' modes, where."""
    from .table import modes_text
    c = table.counts()
    execution = table.meta["execution"]
    where, modes = execution["where"], modes_text(execution)  # where None: no runs started
    if where is None:
        where = "not started" if c["interrupted"] else "nothing to run"
    elif modes:
        where = f"{modes}, {where}"
    parts = [f"{c['ok']} ok", f"{c['failed']} failed"]
    if c["interrupted"]:
        parts.append(f"{c['interrupted']} not run")
    print(f"{prefix}{table.meta['name']}: {c['runs']} runs, {', '.join(parts)} in "
          f"{execution['wall_s']:.3g} s ({where}) -> {out}/")


class _Failures:
    """The failed runs to print: the SHOW_FAILURES first by run index, and how many failed."""

    def __init__(self):
        self.first = []  # heap of (-index, outcome): the largest kept index on top
        self.count = 0

    def add(self, outcome):
        self.count += 1
        item = (-outcome.index, outcome)  # run indices are distinct: outcomes never compared
        if len(self.first) < SHOW_FAILURES:
            heapq.heappush(self.first, item)
        elif outcome.index < -self.first[0][0]:
            heapq.heapreplace(self.first, item)

    def print(self, table):
        varied = [v["key"] for v in table.meta["varied"]]
        for _, o in sorted(self.first, reverse=True):
            row = table.rows[o.index]
            values = ", ".join(f"{k}={row[k]}" for k in varied)
            print(f"run {o.index} ({values}) failed: {o.row['message']}", file=sys.stderr)
        if self.count > SHOW_FAILURES:
            print(f"... and {self.count - SHOW_FAILURES} more failed runs (see summary.csv)",
                  file=sys.stderr)


class _Bar:
    """A tqdm bar over runs: done / failed / running and the ETA."""

    def __init__(self):
        self.bar = None

    def update(self, p):
        from tqdm import tqdm
        if self.bar is None:
            self.bar = tqdm(total=p.total, unit="run", leave=False, file=sys.stderr)
        # the counts first: update() redraws the bar, with the counts of this run
        self.bar.set_postfix_str(f"ok {p.ok}, failed {p.failed}, running {p.running}",
                                 refresh=p.outcome is None)
        if p.outcome is not None:
            self.bar.update(1)


def _close(bar):
    if bar is not None and bar.bar is not None:
        bar.bar.close()
