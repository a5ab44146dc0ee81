"""Run a compiled Model: integrate between events with one persistent stepper, handle events.

Time advances from event to event. Time events are discrete sample hits (exact: integer ticks
of a base period computed with fractions), source discontinuities announced by blocks (a
step's switch time, a pulse's next edge) and the stop time; the stepper lands on each exactly.
State events are zero crossings of the indicators of hybrid blocks (block.py): after every
accepted step the indicators are evaluated; when one changed sign in its direction, the
earliest crossing is located on the solver's dense output to `event_tol` (hybrid.py,
events.py), the step is cut there and the stepper restarted from that point. Indicators may
read the rate of change of an input (an extremum as an event: rates.py). Faults are
explained after the fact by diagnosis.py.

At an event instant, in order: source switches (`event`), outputs of all due blocks in
dataflow order (a zoh samples its input; an enabled subsystem decides, a triggered one runs
on an edge: conditional.py), discrete state updates, then the event iteration of hybrid
blocks (`crossing` handlers until nothing changes), then recording (values after the event:
right-continuous). The blocks inside enabled subsystems run through gates (`Gates`). Sinks also get the values just before the event and, when figures
are drawn, points of the dense output between steps, so a scope shows a jump as a vertical
edge and a curve without polygonal kinks; results.npz keeps one row per time.

The derivative function copies the solver's state into the model's state buffer, runs the
continuous output computations in dataflow order and the derivative methods; it does no
lookups and no validation (all bound at compile time). A diagram without hybrid blocks takes
exactly the steps it took before events existed.

The implicit solvers' state Jacobian comes from whoever starts the run (`jacobian`: the
blocks' exact Jacobians joined along the wires, which linear analysis assembles; the engine
only evaluates the outputs where it is asked for); without one they difference f.
"""
from __future__ import annotations

import heapq
import math
import time as _time

import numpy as np

from ..block import NO_RUN, RunHandle, Sample, overrides
from ..errors import SimulationError
from .conditional import Gates
from .diagnosis import (BLOCK_FAULTS, after_solver_failure, block_failure, failure_notes,
                        nonfinite_signal, nonfinite_state)
from .events import SampleClock
from .history_samples import sample_times
from .hybrid import ZeroCrossings
from .recorder import Recorder, planned_rows
from .solvers import IMPLICIT, SolverError, make_stepper

SNAP = 1e-9  # relative tolerance for grid times that coincide with an event or the end
PLOT_POINTS = 2000  # dense-output points per run handed to sinks that draw figures


class Simulation:
    """The run-time state of one simulation of a Model (built fresh for every run).

    plots: sinks will draw figures, so hand them dense-output points and the values just
    before every event as well as the recorded rows.
    jacobian: the state Jacobian for the implicit solvers, or None (they difference f): an
    object whose `applies(t)`, asked once at the start with the outputs evaluated there,
    says whether it can be had, and whose call `jacobian(t)` gives d(dx/dt)/dx, (n, n), at
    the model's current values (the outputs computed at t).
    """

    def __init__(self, model, progress=None, plots=False, jacobian=None):
        self.m = model
        self.jacobian = jacobian
        s = model.settings
        self.progress = progress
        nodes = model.nodes
        # the blocks of conditional subsystems run while their gates are open (conditional.py)
        self.gates = gates = Gates(model)
        self.const_plan = tuple(getattr(n.block, n.calc) for n in nodes if n.group == "constant")
        self.cont_plan = tuple(gates.node(n) for n in nodes if n.group == "continuous")
        self.deriv_plan = tuple(gates.method(b, "derivative") for b in model.blocks
                                if overrides(b, "derivative") and model.state_slices[b.name][0].stop
                                > model.state_slices[b.name][0].start)
        self.init_blocks = tuple(b for b in model.blocks if overrides(b, "initialize"))
        samples = {n.block.sample for n in nodes if isinstance(n.block.sample, Sample)}
        samples |= {b.sample for b in model.blocks if isinstance(b.sample, Sample)}
        self.clock = SampleClock(samples, s.start)
        self._hit_plans = {}
        # time events: a heap of (time, sequence, block); blocks may add more as they fire
        self.timed = [(t, k, b) for k, (t, b) in enumerate(model.events) if s.start < t <= s.stop]
        heapq.heapify(self.timed)
        self._seq = len(self.timed)
        self.history = tuple(b for b in model.blocks if b.keeps_history)
        self.ind_plan = tuple(f for f in (gates.method(b, "indicator") for b, _ in model.hybrid)
                              if f is not None)
        self.announcing = tuple(b for b, _ in model.hybrid if hasattr(b, "next_events"))
        self.hybrid = ZeroCrossings(model, self) if model.hybrid else None
        self.xbuf, self.dxbuf = model.xbuf, model.dxbuf
        channels = {name: view for name, (view, _) in model.record.items()}
        sink_channels = {f"\x00{k}.{i}": v for k, (_, views) in enumerate(model.sinks)
                         for i, v in enumerate(views)}
        # Sinks that draw get rows of their own (dense points, the values before events);
        # otherwise they are recorded with the results, at the same rows.
        self.edges = bool(plots and model.sinks)
        if not self.edges:
            channels.update(sink_channels)
        self.rec = Recorder(channels, planned_rows(s))
        self.sink_rec = Recorder(sink_channels) if self.edges else None
        self.sink_rows = []  # the sink rows that are also result rows
        self.refine = s.refine if not s.output_interval else 1
        self.plot_dt = (s.stop - s.start) / PLOT_POINTS
        self.plot_k = 1  # index of the next plotting time start + k*plot_dt
        self.stats = {"nsteps": 0, "nrejected": 0, "nfev": 0}
        self.last_time = s.start
        self.notes = None  # the blocks' notes when the run failed, taken before diagnosing it
        self.instant = s.start  # the event instant being handled
        self.journal = []  # (t, block index, a, b) the blocks that use the run logged
        self.served = tuple(b for b in model.blocks if b.uses_run)
        for k, block in enumerate(model.blocks):
            if block.uses_run:
                block.run = _Handle(self, k)

    # -- evaluation --------------------------------------------------------------------------
    def f(self, t, y):
        self.last_time = t
        self.xbuf[:] = y
        for calc in self.cont_plan:
            calc(t)
        for deriv in self.deriv_plan:
            deriv(t)
        return self.dxbuf

    def outputs(self, t, y):
        self.xbuf[:] = y
        for calc in self.cont_plan:
            calc(t)

    def indicators(self, t):
        for ind in self.ind_plan:
            ind(t)

    def recompute(self, t):
        """The continuous outputs again at t, from the state buffer as it is."""
        for calc in self.cont_plan:
            calc(t)

    def solver_jacobian(self, t, y):
        """The implicit solver's `jac(t, y)` for this run, or None (it differences f): the
        outputs at (t, y), then the run's `jacobian` there, when it applies at the start."""
        provider = self.jacobian
        if provider is None or self.m.settings.solver not in IMPLICIT or not y.size:
            return None
        self.outputs(t, y)
        if not provider.applies(t):
            return None

        def jac(t, y):
            self.outputs(t, y)
            return provider(t)
        return jac

    def failure_notes(self):
        """What the blocks noted during the run (`diagnosis.failure_notes`)."""
        return failure_notes(self.m)

    def diagnose(self, find, *args):
        """`find(model, *args)`, a diagnosis of diagnosis.py, with the blocks' notes kept
        first: a diagnosis recomputes blocks at other times and states, which are not the
        run's (and which compiled code, whose workspaces hold its notes, never sees)."""
        self.notes = self.failure_notes()
        return find(self.m, *args)

    def hit_plan(self, due):
        plan = self._hit_plans.get(due)
        if plan is None:
            plan = tuple(self.gates.node(n) for n in self.m.nodes
                         if n.group in ("continuous", "event")
                         or (n.group == "discrete" and n.sample in due))
            updates = tuple(self.gates.method(b, "update") for b in self.m.blocks
                            if b.sample in due)
            plan = self._hit_plans[due] = (plan, updates)
        return plan

    def at_event(self, t, y, first=False):
        """Everything that happens at an event instant t: source switches, outputs (the
        discrete blocks due sample), discrete updates, then the hybrid blocks' event
        iteration. y is the state at t; it is updated in place when a handler resets it."""
        self.instant = t
        while self.timed and self.timed[0][0] <= t:
            _, _, block = heapq.heappop(self.timed)
            block.event(t)
            self.schedule(block, block.reschedule(t), t)
        due = self.clock.due(t)
        plan, updates = self.hit_plan(due)
        self.xbuf[:] = y
        for calc in plan:
            calc(t)
        if first:
            for b in self.init_blocks:
                b.initialize(t)
            y[:] = self.xbuf
            for calc in plan:
                calc(t)
        for upd in updates:
            upd(t)
        self.clock.advance(due)
        if self.hybrid is not None:
            self.hybrid.settle(t, first)
            y[:] = self.xbuf
            for block in self.announcing:
                self.schedule(block, block.next_events(t), t)
        if self.history:
            self.remember(t)

    def schedule(self, block, times, t):
        """Time events of `block` at the given times after t (up to stop)."""
        stop = self.m.settings.stop
        for later in times:
            later = float(later)
            if t < later <= stop:
                heapq.heappush(self.timed, (later, self._seq, block))
                self._seq += 1

    def remember(self, t, stepper=None):
        """Hand the blocks that keep a history of their input (transport delay) u at time t:
        after an accepted step (t its end, `stepper` given) in pieces of k equally spaced
        points, k the degree of the dense output (so the points determine it), as many
        pieces as reproduce u to the solver's tolerance (history_samples.py), the last
        point at t; at an event instant, after the event. They answer events with times to
        land on (a jump of u echoed later)."""
        if stepper is not None:
            s = self.m.settings
            state = lambda tj: stepper.y if tj == stepper.t else stepper.dense(tj)

            def inputs(tj):
                self.outputs(tj, state(tj))
                return np.concatenate([np.ravel(u) for b in self.history for u in b.u
                                       if u is not None])
            for tj, last in sample_times(inputs, stepper.t_old, t, stepper.dense_degree(),
                                         s.rtol, s.atol):
                self.outputs(tj, state(tj))
                self.remember_at(tj, "end" if tj == t else "piece" if last else "step")
            return
        for block, times in zip(self.history, self.remember_at(t, "event")):
            self.schedule(block, times, t)

    def remember_at(self, t, kind):
        """Each history block's remember(t, kind), the outputs computed at t: the times at
        which each must land."""
        return [block.remember(t, kind) for block in self.history]

    def tolerance(self, t):
        return max(self.m.settings.event_tol * max(1.0, abs(t)), 4 * math.ulp(t))

    def next_event(self, t):
        s = self.m.settings
        cands = [s.stop]
        nt = self.clock.next_time()
        if nt is not None:
            cands.append(float(nt))
        if self.timed:
            cands.append(self.timed[0][0])
        return min(c for c in cands if c > t) if any(c > t for c in cands) else s.stop

    # -- recording ----------------------------------------------------------------------------
    def record(self, t):
        """Record the current signals at t; every recorded channel is a view of the signal
        buffer or of the state, so one check of each covers them all."""
        self.rec.sample(t)
        if self.sink_rec is not None:
            self.sink_rows.append(self.sink_rec.n)
            self.sink_rec.sample(t)
        if not (np.isfinite(self.m.signals).all() and np.isfinite(self.xbuf).all()):
            raise self.diagnose(nonfinite_signal, t)

    def record_left(self, t, y):
        """For figures: the sinks' inputs at t just before the event handled there."""
        if self.edges:
            self.outputs(t, y)
            self.sink_rec.sample(t)

    def fill(self, stepper, t_hi, grid, t_event):
        """Record what lies inside the last step up to t_hi, in time order, from the dense
        output: the output-grid times, or the refined rows inside the step (results and
        sinks; a grid time that coincides with the coming event t_event is left for after
        the event) and, for figures, the plotting times (sinks only)."""
        dense = stepper.dense
        while True:
            tg = grid.peek() if grid is not None else None
            if tg is not None and (tg > t_hi or grid.peek_snapped(t_event)):
                tg = None
            tp = None
            if self.edges:
                tp = self.m.settings.start + self.plot_k * self.plot_dt
                if tp >= t_hi:
                    tp = None
            if tg is None and tp is None:
                return
            if tp is not None and (tg is None or tp < tg):
                self.plot_k += 1
                if tg is None or not abs(tp - tg) <= SNAP * max(1.0, abs(tg)):
                    self.outputs(tp, dense(tp))
                    self.sink_rec.sample(tp)
                continue
            grid.pop()
            self.outputs(tg, dense(tg))
            self.record(tg)

    def skip_plot_points(self, t):
        """Plotting times up to t are covered (by a recorded row or an event)."""
        if self.edges:
            start = self.m.settings.start
            while start + self.plot_k * self.plot_dt <= t:
                self.plot_k += 1

    def stopping(self):
        return any(v.any() for v in self.m.stops)

    # -- the run ------------------------------------------------------------------------------
    def run(self):
        m, s = self.m, self.m.settings
        self.m.xdbuf[:] = m.xd0
        m.signals[:] = 0.0  # what a block not run yet (a disabled one) shows: as in the first run
        y = m.x0.copy()
        for calc in self.const_plan:
            calc(s.start)
        t = s.start
        self.at_event(t, y, first=True)
        grid = _Grid(s) if s.output_interval else None
        if grid is None or grid.peek() is not None:
            self.record(t)
            if grid:
                grid.pop()
        if m.stops and self.stopping():
            return t
        stepper = None
        while t < s.stop:
            t_end = self.next_event(t)
            if stepper is None:
                jac = self.solver_jacobian(t, y)
                stepper = make_stepper(s.solver, self.f, t, y, t_end, rtol=s.rtol, atol=s.atol,
                                       max_step=s.max_step, step=s.step, origin=s.start,
                                       max_steps=s.max_steps, t_final=s.stop, jac=jac)
                how = {"jacobian": "exact" if jac else "differences"} \
                    if s.solver in IMPLICIT and y.size else {}
            else:
                stepper.restart(t, y, t_end)
            try:
                done = self.segment(stepper, t_end, grid)
            finally:
                self.stats = {"nsteps": stepper.nsteps, "nrejected": stepper.nrejected,
                              "nfev": stepper.nfev, **how}
            if done is None:
                t = t_end
                y = stepper.y.copy()
            elif done[0] == "stop":
                return done[1]
            else:  # a zero crossing: the step was cut there
                t, y = done[1], done[2]
            self.record_left(t, y)
            self.at_event(t, y)
            self.skip_plot_points(t)
            if grid is None:
                self.record(t)
            else:
                while grid.peek() is not None and grid.peek_snapped(t):
                    self.record_row(grid.pop(), t, y)
            if m.stops and self.stopping():
                return t
        return t

    def record_row(self, tg, t, y):
        """Record the grid row tg that snapped to the event at t (within SNAP): the values
        after the event, at the row's own time: sources evaluated at tg, the state moved
        from t along its derivative after the event (a located event lies up to event_tol
        from the row)."""
        if tg != t:
            dx = self.f(t, y).copy()
            self.outputs(tg, y + (tg - t) * dx)
        self.record(tg)

    def segment(self, stepper, t_end, grid):
        """Integrate up to the next time event t_end. Returns None on reaching it,
        ("stop", t) when a stop block fired at t, or ("cross", t, y) when an indicator
        crossed zero at t < t_end (the step cut there, y the state at t)."""
        while stepper.t < t_end:
            try:
                stepper.step()
            except SolverError as e:
                err = self.diagnose(after_solver_failure, self.f, stepper.t, stepper.y.copy(), e)
                if err is not None:
                    raise err from None
                if e.time is None:
                    e.time = stepper.t
                raise
            t_new = stepper.t
            if not np.isfinite(stepper.y).all():
                raise self.diagnose(nonfinite_state, t_new, stepper.y.copy())
            t_hi = t_new
            cut = False
            if self.hybrid is not None:
                t_star = self.hybrid.after_step(stepper, t_end)
                if t_star is not None:
                    t_hi, cut = t_star, True
            if self.history:
                self.remember(t_hi, stepper)
            rows = grid if grid is not None or self.refine == 1 else \
                _Refined(stepper.t_old, t_hi, self.refine)
            if self.m.stops:
                self.outputs(t_hi, stepper.dense(t_hi) if cut else stepper.y)
                if self.stopping():
                    t_stop = self.locate_stop(stepper, t_hi)
                    self.fill(stepper, t_stop, rows, t_stop)
                    self.outputs(t_stop, stepper.dense(t_stop))
                    self.record(t_stop)
                    return ("stop", t_stop)
            if cut:
                if rows is not None or self.edges:
                    self.fill(stepper, t_hi, rows, t_hi)
                if self.progress is not None:
                    self.progress(t_hi)
                return ("cross", t_hi, stepper.dense(t_hi).copy())
            if rows is not None or self.edges:
                self.fill(stepper, t_new, rows, t_end)
            if grid is None and t_new < t_end:
                self.outputs(t_new, stepper.y)
                self.record(t_new)
                if self.edges:
                    self.skip_plot_points(t_new)
            if self.progress is not None:
                self.progress(t_new)
        return None

    def locate_stop(self, stepper, hi):
        """The first time in (t_old, hi] at which a stop input is non-zero, by bisection on
        the dense output (to about 1e-12 relative), so the firing time does not depend on the
        step."""
        lo = stepper.t_old
        tol = 1e-12 * max(1.0, abs(hi))
        while hi - lo > tol:
            mid = 0.5 * (lo + hi)
            self.outputs(mid, stepper.dense(mid))
            if self.stopping():
                hi = mid
            else:
                lo = mid
        return hi


class _Handle(RunHandle):
    """A block's RunHandle in this run: its log joins the run's journal, at the instant
    being handled."""

    def __init__(self, sim, k):
        self.sim, self.k = sim, k

    def log(self, a, b):
        self.sim.journal.append((self.sim.instant, self.k, a, b))


class _Grid:
    """Recording times start + k*interval (by multiplication), then the end time."""

    def __init__(self, s):
        self.start, self.dt, self.stop = s.start, s.output_interval, s.stop
        self.k = 0
        self.done = False

    def _time(self):
        t = self.start + self.k * self.dt
        if abs(t - self.stop) <= SNAP * max(1.0, abs(self.stop)) or t > self.stop:
            return self.stop
        return t

    def peek(self):
        return None if self.done else self._time()

    def peek_snapped(self, t_event):
        """Whether the next grid time is (within the snap tolerance) the event time."""
        g = self.peek()
        return g is not None and t_event is not None and \
            abs(g - t_event) <= SNAP * max(1.0, abs(t_event))

    def pop(self):
        t = self._time()
        if t >= self.stop:
            self.done = True
        self.k += 1
        return t


class _Refined:
    """The refined rows inside one step (simulation.refine = k): t_old + j (t_hi - t_old)/k
    for j = 1 .. k-1, read as `fill` reads the output grid (the step's end is recorded as
    without refine)."""

    def __init__(self, t_old, t_hi, k):
        self.t_old, self.h, self.k = t_old, (t_hi - t_old) / k, k
        self.j = 1

    def peek(self):
        return self.t_old + self.j * self.h if self.j < self.k else None

    def peek_snapped(self, t_event):
        return False

    def pop(self):
        t = self.peek()
        self.j += 1
        return t


def simulate(model, progress=None, plots=False, jacobian=None):
    """Run a model. Returns (t, data, info) where info has 'complete', 'error' (an exception
    or None), 'stats' (nsteps, nrejected, nfev; with an implicit solver also 'jacobian':
    exact or differences), 'wall_time', 'end_time', 'sink_data' ({sink block name: (t,
    inputs, rows)}, rows a bool array marking the result rows among t, or None when every row
    is one), 'events' ((times, block indices, block names) of the hybrid blocks' events),
    'journal' (rows t, block index, a, b that blocks logged: block.RunHandle).
    KeyboardInterrupt and SimulationError are caught and reported in info so that results so
    far are kept. plots: sinks will draw figures (they get dense points and edges);
    jacobian: the implicit solvers' state Jacobian (see Simulation)."""
    return simulate_with(Simulation(model, progress, plots, jacobian), model)


def simulate_with(sim, model):
    """`simulate` with a given Simulation of `model` (accelerated mode's stiff solvers run
    one whose evaluations are compiled)."""
    t0 = _time.perf_counter()
    error = None
    try:
        # Non-finite values are detected and reported by the simulator itself, with the
        # block, port and time; numpy's per-operation warnings would only add noise.
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            sim.run()
    except (SimulationError, KeyboardInterrupt) as e:
        error = e
    except BLOCK_FAULTS as e:
        # a block's computation failed on the values it met (a function block's index out
        # of range, a singular matrix): the data's fault, not a bug, so exit 3 with the block
        error = block_failure(model, e, sim.last_time)
    finally:
        for block in sim.served:
            block.run = NO_RUN
    if isinstance(error, SimulationError):
        error.notes = sim.notes if sim.notes is not None else sim.failure_notes()
    wall = _time.perf_counter() - t0
    t, data = sim.rec.arrays()
    ts, channels, rows = t, data, None  # sinks recorded with the results: every row is one
    if sim.sink_rec is not None:
        ts, channels = sim.sink_rec.arrays()
        rows = np.zeros(len(ts), bool)
        rows[sim.sink_rows] = True
    sink_data = {block.name: (ts, [channels.pop(f"\x00{k}.{i}") for i in range(len(views))], rows)
                 for k, (block, views) in enumerate(model.sinks)}
    zc = sim.hybrid
    events = (np.array(zc.event_t if zc else [], dtype=float),
              np.array(zc.event_block if zc else [], dtype=np.int64),
              [b.name for b, _ in model.hybrid])
    info = {"complete": error is None, "error": error, "stats": sim.stats, "wall_time": wall,
            "end_time": float(t[-1]) if len(t) else model.settings.start, "sink_data": sink_data,
            "events": events, "journal": np.array(sim.journal, dtype=float).reshape(-1, 4)}
    return t, data, info
