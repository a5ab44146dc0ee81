"""Running compiled code: the model's buffers and the run's values handed to the C loop,
the loop driven in chunks, its rows and outcome turned into what `simulate()` returns.

The C loop (runtime/rt_loop.c) returns every CHUNK_SECONDS of wall time, so the progress bar
moves and Ctrl-C / SIGTERM (Python's handlers run between chunks) stop the run with the rows
recorded so far. A failure in compiled code is reported as normal mode reports it: the
errors are the simulator's, and the diagnosis of a non-finite value (which block, which
port, "division by zero") runs the interpreted blocks on the state where the compiled run
stopped: the compiled code worked on the same buffers. What only the compiled run built, a
transport delay's history, the diagnosis takes from compiled evaluations (`_outputs`,
`_f`), and a block that raises while it is recomputed is the run's error, as in normal
mode.
"""
from __future__ import annotations

import ctypes
import math
import time
import weakref
from types import SimpleNamespace

import numpy as np

from ..engine.diagnosis import (BLOCK_FAULTS, after_solver_failure, block_failure,
                                failure_notes, nonfinite_signal, nonfinite_state)
from ..engine.events import ZenoGuard, unsettled
from ..engine.journal import logging_blocks
from ..engine.simulator import Simulation
from ..engine.solvers import FIXED_STEP, SolverError
from ..engine.solvers.adaptive_rk import EmbeddedRK
from ..engine.solvers.base import Projection, StepBudgetError, Stepper
from ..engine.solvers.fixed_step import nonfinite_step
from ..errors import SimulationError
from .arguments import arguments
from .boundary import BIND, ERRORS, INFO, INVOLVED, ROWS, STATUS, settings_row

CHUNK_SECONDS = 0.1
KEEP_BYTES = 1 << 23  # a run recording more frees its compiled run's memory (see Bound)


def _ptr(a):
    return ctypes.c_void_p(a.ctypes.data) if a is not None else ctypes.c_void_p()


def bind(library, model, generated):
    """A new compiled run bound to the model's buffers and the run's values (arguments.py):
    (rt, the arrays it points into, to be kept alive while it exists; the caller frees
    rt)."""
    keep = _pointers(model, generated, arguments(model, generated),
                     generated.work.copy())
    rt = library.rt_create()
    if not rt:
        raise MemoryError("cannot allocate the compiled run")
    library.rt_bind(rt, *keep[2:5])
    return rt, keep


def _pointers(model, generated, args, work):
    """(buffers in BIND's order, data arrays, and rt_bind's three pointer arguments) of
    `model`'s buffers, the workspace `work` and the run's values `args`."""
    given = {"S": model.signals, "X": model.xbuf, "DX": model.dxbuf, "XD": model.xdbuf,
             "Z": model.zbuf, "W": work, "P": args.params,
             "K": generated.constants, "X0": args.x0, "XD0": args.xd0, "DU": model.dubuf}
    buffers = [given[name] for name in BIND.names]
    arrays = [np.ascontiguousarray(d, dtype=float) for d in args.data]
    ptrs = (ctypes.c_void_p * len(buffers))(*(_ptr(b).value for b in buffers))
    data = (ctypes.c_void_p * max(len(arrays), 1))(*(_ptr(d).value for d in arrays))
    ndata = np.array([d.size for d in arrays] or [0], dtype=np.int64)
    return buffers, arrays, ptrs, data, _ptr(ndata), ndata


class Bound:
    """A model's compiled run, bound once: its rt and the ctypes arguments of rt_bind and
    rt_configure, kept on the model between runs (`bound`). The pointers to the model's
    buffers and the Context's arrays are made when the code or the buffers change, those of
    the values compiled code reads computed from the Context (`arguments`: the settings
    row, exact series, events, made again when its version moves on) when they change.
    `again()` readies it for the next run: one C call and the workspace reset. The rows
    a run recorded stay allocated for the next: a run recording more than KEEP_BYTES drops
    its Bound (CompiledRun.run)."""

    def __init__(self, library, model, generated, edges):
        self.lib, self.g, self.edges = library, generated, edges
        self.signals = model.signals
        self.work = generated.work.copy()
        self.args = self.keep = None
        self.rt = library.rt_create()
        if not self.rt:
            raise MemoryError("cannot allocate the compiled run")
        weakref.finalize(self, library.rt_free, self.rt)  # also at the interpreter's exit
        self._info = np.zeros(len(INFO))
        self._y = np.zeros(max(model.xbuf.size, 1))
        self._info_args = (_ptr(self._info), _ptr(self._y))

    def fits(self, library, model, generated, edges):
        return (library is self.lib and generated is self.g and edges == self.edges
                and model.signals is self.signals)

    def values(self, model, args):
        """Point at the run's values `args` (arguments.py)."""
        old = self.args
        if old is None or args.params is not old.params or args.x0 is not old.x0 or \
                args.xd0 is not old.xd0 or len(args.data) != len(old.data) or \
                any(a is not b for a, b in zip(args.data, old.data)):
            self.keep = _pointers(model, self.g, args, self.work)
        if old is None or args.settings is not old.settings:
            self.settings = settings_row(args.settings, self.edges)
        arrays = (self.settings, args.series, args.clock_j, args.event_t, args.event_block)
        if old is None or any(a is not b for a, b in zip(arrays, self._configured)):
            self.configure = (*map(_ptr, arrays), len(args.event_t))
            self._configured = arrays  # kept alive while configure points into them
        self.args = args
        self.again_args = (self.rt, *self.keep[2:5], *self.configure)

    def again(self):
        """Ready for the next run: the workspace reset, rt_reset, rt_bind and rt_configure
        (rt_again)."""
        np.copyto(self.work, self.g.work)
        self.lib.rt_again(*self.again_args)
        return self

    def info(self):
        """rt_info's numbers now (an array overwritten by the next call)."""
        self.lib.rt_info(self.rt, *self._info_args)
        return self._info


def bound(library, model, generated, edges):
    """The model's Bound for `generated`, ready for a run (see Bound)."""
    args = arguments(model, generated)
    kept = model.__dict__.get("_bound")
    if kept is None or not kept.fits(library, model, generated, edges):
        kept = model.__dict__["_bound"] = Bound(library, model, generated, edges)
    if kept.args is not args:
        kept.values(model, args)
    return kept.again()


class CompiledRun:
    """One run of a compiled model: `run()` returns (t, data, info) as `simulate()` does."""

    def __init__(self, library, model, generated, progress=None, plots=False):
        self.lib, self.m, self.g = library, model, generated
        self.progress = progress
        self.edges = bool(plots and model.sinks)
        self.bound = bound(library, model, generated, self.edges)
        self.rt, self._keep = self.bound.rt, self.bound.keep

    def run(self):
        """(t, data, info) of the run."""
        started = time.perf_counter()
        error = projection = None  # a run of more than one chunk is projected between them
        s = self.m.settings
        try:
            status = STATUS.MORE
            while status == STATUS.MORE:
                status = self.lib.rt_run(self.rt, CHUNK_SECONDS)
                info = self.bound.info()
                if status == STATUS.MORE and s.solver not in FIXED_STEP:
                    projection = projection or Projection(s.solver, s.max_steps, s.stop)
                    projection.check(int(info[INFO.nsteps]), float(info[INFO.progress_t]))
                if self.progress is not None:
                    self.progress(info[INFO.progress_t])
            if status == STATUS.FAILED:
                notes = self._notes()  # before the diagnosis's compiled evaluations
                error = self._error()
                if isinstance(error, SimulationError):
                    error.notes = notes
        except (KeyboardInterrupt, StepBudgetError) as e:
            error = e
        wall = time.perf_counter() - started
        t, data, info = results_of(self.lib, self.rt, self.m, self.g, error, wall,
                                   self.edges, info if error is None else None)
        if sum(v.nbytes for v in data.values()) > KEEP_BYTES:  # its rows' memory freed
            self.m.__dict__.pop("_bound", None)
        return t, data, info

    # -- results ------------------------------------------------------------------------------
    def _info(self):
        return _info(self.lib, self.rt, self.m.xbuf.size)

    # -- errors -------------------------------------------------------------------------------
    def _notes(self):
        return failure_notes_of(self.m, self.g, self._keep)

    def _error(self):
        """The exception normal mode raises for the failure the compiled loop reported; a
        block that raises while the diagnosis recomputes it is the failure, as in normal
        mode."""
        info, y = self._info()
        try:
            return self._diagnosis(info, y)
        except SimulationError as e:  # a block's own check of what it recomputed
            return e
        except BLOCK_FAULTS as e:
            return block_failure(self.m, e, float(info[INFO.error_t]))

    def _diagnosis(self, info, y):
        code, t = int(info[INFO.error]), float(info[INFO.error_t])
        nums = info[INFO.error_num0:INFO.error_num3 + 1]
        m, s = self.m, self.m.settings
        if code == ERRORS.NONFINITE_STATE:
            return nonfinite_state(m, t, y.copy(), self._outputs)
        if code == ERRORS.NONFINITE_RECORD:
            return nonfinite_signal(m, t, self._outputs)
        if code == ERRORS.SETTLE:
            return unsettled([m.hybrid[k][0].name for k in self._blocks(INVOLVED.iteration)],
                             t)
        if code == ERRORS.ZENO:
            guard = ZenoGuard(s, m.hybrid, Simulation(m).tolerance)
            guard.blocks = set(self._blocks(INVOLVED.zeno))
            return guard.error(t)
        if code in (ERRORS.BLOCK, ERRORS.MEMORY):
            return evaluation_error(self.lib, self.rt, m, info)
        stepper = SimpleNamespace(name=s.solver, t=float(info[INFO.stepper_t]), y=y.copy(),
                                  max_steps=s.max_steps, t_final=s.stop)
        error = self._solver_error(code, t, nums, stepper)
        found = after_solver_failure(m, self._f, stepper.t, stepper.y, error, self._outputs)
        return found if found is not None else error

    def _outputs(self, t, y):
        """Every output at (t, y), computed by the compiled code (for the diagnosis)."""
        y = np.ascontiguousarray(y, dtype=float)
        self.lib.rt_eval_outputs(self.rt, t, _ptr(y))

    def _f(self, t, y):
        """The compiled derivative at (t, y) (for the diagnosis)."""
        y = np.ascontiguousarray(y, dtype=float)
        self.lib.rt_eval_f(self.rt, t, _ptr(y), _ptr(self.m.dxbuf))
        return self.m.dxbuf

    def _solver_error(self, code, t, nums, stepper):
        if code == ERRORS.BUDGET:
            return Stepper._over_budget(stepper, t)
        if code == ERRORS.STIFF:
            return EmbeddedRK._stiff(stepper, t, nums[0], nums[1], nums[2])
        if code == ERRORS.FIXED_NONFINITE:
            return nonfinite_step(stepper.name, t, nums[0], nums[1])
        try:
            EmbeddedRK._fail(stepper, t, nums[0], bool(nums[1]))
        except SolverError as e:
            return e
        raise AssertionError(f"unknown failure code {code} of compiled code")

    def _blocks(self, which):
        """Indices of the hybrid blocks in a failed event iteration or a Zeno chain (which:
        INVOLVED)."""
        flags = np.zeros(max(len(self.m.hybrid), 1), dtype=np.int8)
        self.lib.rt_blocks(self.rt, which, _ptr(flags))
        return [k for k in range(len(self.m.hybrid)) if flags[k]]


def evaluation_error(library, rt, model, info):
    """The SimulationError normal mode raises where compiled code failed (`info` rt_info's
    numbers): a block's own failure (FAIL: its message, the port its failing method
    computes, the time) or memory running out."""
    t = float(info[INFO.error_t])
    if int(info[INFO.error]) == ERRORS.MEMORY:
        return SimulationError("out of memory while recording the results", time=t)
    block = model.blocks[int(info[INFO.error_block])]
    method = library.rt_error_method(rt).decode()
    ports = [p for n in model.nodes if n.block is block and n.calc == method for p in n.ports]
    return SimulationError(library.rt_error_text(rt).decode(), block=block.name,
                           port="/".join(ports) or None, time=t)


def failure_notes_of(model, generated, keep):
    """What the blocks noted during a failed compiled run (Block.notes), as normal mode
    gives it: a block that watches what it computes in its compiled workspace (its declared
    work arrays; `keep` is what `bind` returned) gets that workspace first
    (`compiled_work(work)`, a namespace of the arrays by name)."""
    work = keep[0][BIND.W]
    for block in model.blocks:
        slots = model.slots.get(block.name)
        if hasattr(block, "compiled_work") and slots is not None:
            w0 = generated.offsets[block.name].w0 - slots.w0
            block.compiled_work(SimpleNamespace(**{
                name: work[w0 + at:w0 + at + n] for name, (at, n) in slots.work_offsets().items()}))
    return failure_notes(model)


def _info(lib, rt, nx):
    """rt_info of compiled run `rt`: its counts, error and times, and the stepper's state."""
    info, y = np.zeros(len(INFO)), np.zeros(max(nx, 1))
    lib.rt_info(rt, _ptr(info), _ptr(y))
    return info, y[:nx]


def _rows(lib, rt, which, width):
    """A table compiled run `rt` recorded, as a view of the C loop's memory: valid until the
    run runs again or is freed (`results_of` copies what it keeps: a table may be 100 MB)."""
    data = ctypes.c_void_p()
    n = lib.rt_rows(rt, which, ctypes.byref(data))
    if n == 0:
        return np.zeros((0, width))
    rows = (ctypes.c_double * (n * width)).from_address(data.value)
    return np.frombuffer(rows, dtype=np.float64).reshape(n, width)


class Layout:
    """Where the recorded signals of a compiled model lie in its row tables, found once per
    model and generated code (`layout`): the columns of each record (and of each sink's
    inputs, in the results' table or, with `edges`, in the sinks' own), the sinks' names,
    whether the run can have events (hybrid blocks) and a journal (blocks that use_run:
    journal.py reads theirs only)."""

    def __init__(self, model, generated, edges):
        m, g = model, generated
        own = g.record[len(m.record):]  # the sinks' inputs
        channels = g.record if not edges else g.record[:len(m.record)]
        self.width, self.columns = _columns(channels)
        self.sink_width, self.sink_columns = _columns(own) if edges else (0, ())
        self.sink_names = [n for n, _ in own] if not edges else []
        self.sinks = [(block.name, [f"{block.name}.{i}" for i in range(len(views))])
                      for block, views in m.sinks]
        self.hybrid_names = list(g.hybrid_names)
        self.journal = bool(logging_blocks(m))


def layout(model, generated, edges):
    """The model's Layout for `generated` (kept on the model while its code is the same)."""
    kept = model.__dict__.get("_layout")
    if kept is None or kept[0] is not generated or kept[1] != edges:
        kept = model.__dict__["_layout"] = (generated, edges, Layout(model, generated, edges))
    return kept[2]


def results_of(lib, rt, model, generated, error, wall, edges=False, info=None):
    """(t, data, info) as `simulate()` gives them, of compiled run `rt` of `model` (a
    CompiledRun's, or a run of a batch whose results are kept) that ended with `error` (None:
    complete) after `wall` seconds; `edges`: its sinks recorded rows of their own; `info`:
    its rt_info numbers when read already."""
    m, at = model, layout(model, generated, edges)
    if info is None:
        info, _ = _info(lib, rt, m.xbuf.size)
    rows = _rows(lib, rt, ROWS.results, at.width)
    t, data = rows[:, 0].copy(), _split(rows, at.columns)
    if edges:
        srows = _rows(lib, rt, ROWS.sinks, at.sink_width)
        ts, sink_values = srows[:, 0].copy(), _split(srows, at.sink_columns)
        marks = np.zeros(len(ts), bool)
        marks[_rows(lib, rt, ROWS.sink_rows, 1)[:, 0].astype(np.int64)] = True
    else:
        ts, marks, sink_values = t, None, {n: data.pop(n) for n in at.sink_names}
    sink_data = {name: (ts, [sink_values[c] for c in inputs], marks)
                 for name, inputs in at.sinks}
    if at.hybrid_names:
        found = _rows(lib, rt, ROWS.events, 2)
        events = (found[:, 0].copy(), found[:, 1].astype(np.int64), list(at.hybrid_names))
    else:
        events = (np.zeros(0), np.zeros(0, dtype=np.int64), [])
    journal = _rows(lib, rt, ROWS.journal, 4).copy() if at.journal else np.zeros((0, 4))
    counts = info.tolist()  # floats: no numpy scalar per count
    stats = {"nsteps": int(counts[INFO.nsteps]), "nrejected": int(counts[INFO.nrejected]),
             "nfev": int(counts[INFO.nfev])}
    return t, data, {"complete": error is None, "error": error, "stats": stats,
                     "wall_time": wall,
                     "end_time": float(t[-1]) if len(t) else m.settings.start,
                     "sink_data": sink_data,
                     "events": events,
                     "journal": journal}


def _size(shape):
    return math.prod(shape)


def _columns(channels):
    """(the width of a row table with a time column and `channels` [(name, shape)] after it,
    [(name, first column, last + 1, shape)])."""
    columns, start = [], 1
    for name, shape in channels:
        size = _size(shape)
        columns.append((name, start, start + size, tuple(shape)))
        start += size
    return start, columns


def _split(rows, columns):
    """{name: (rows,) + shape} from the row-major columns of a row table (a scalar's column
    copied as it is)."""
    n = len(rows)
    return {name: rows[:, a].copy() if not shape else rows[:, a:b].reshape((n,) + shape).copy()
            for name, a, b, shape in columns}
