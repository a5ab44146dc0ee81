"""Run a compiled Model: integrate between events with one persistent stepper, handle events.

Time advances from event to event. Events are discrete sample hits (exact: integer ticks of a
base period computed with fractions), source discontinuities announced by blocks (a step's
switch time) and the stop time; the stepper lands on each exactly. At an event, in order:
source switches (`event`), outputs of all due blocks in dataflow order (a zoh samples its
input), discrete state updates, then recording (values after the event: right-continuous).
Between events the stepper is restarted, not rebuilt, so it keeps its step size.

The derivative function copies the solver's state into the model's state buffer, runs the
continuous output computations in dataflow order and the derivative methods; it does no
lookups and no validation (all bound at compile time).
"""
from __future__ import annotations

import math
import time as _time
from fractions import Fraction

import numpy as np

from .block import Block, Sample
from .errors import SimulationError
from .expr import ExprError
from .recorder import Recorder
from .solvers import SolverError, make_stepper

_SNAP = 1e-9  # relative tolerance for grid times that coincide with an event or the end


def _frac(x):
    return Fraction(x).limit_denominator(10**9)


class _Clock:
    """Discrete sample hits on exact fractions: hit j of a sample is offset + j*period."""

    def __init__(self, samples, start):
        self.samples = list(samples)
        self.next = {}
        for s in self.samples:
            p, o = _frac(s.period), _frac(s.offset)
            st = _frac(start)
            j = 0 if st <= o else math.ceil((st - o) / p)
            self.next[s] = (o + j * p, j, p, o)

    def next_time(self):
        return min((v[0] for v in self.next.values()), default=None)

    def due(self, t):
        """Samples whose next hit is at float time t (exact fraction equality via float)."""
        return frozenset(s for s, v in self.next.items() if float(v[0]) == t)

    def advance(self, samples):
        for s in samples:
            _, j, p, o = self.next[s]
            self.next[s] = (o + (j + 1) * p, j + 1, p, o)


class Simulation:
    """The run-time state of one simulation of a Model (built fresh for every run)."""

    def __init__(self, model, progress=None):
        self.m = model
        s = model.settings
        self.progress = progress
        nodes = model.nodes
        self.const_plan = tuple(getattr(n.block, n.calc) for n in nodes if n.group == "constant")
        self.cont_plan = tuple(getattr(n.block, n.calc) for n in nodes if n.group == "continuous")
        self.deriv_plan = tuple(b.derivative for b in model.blocks if _overrides(b, "derivative")
                                and model.state_slices[b.name][0].stop > model.state_slices[b.name][0].start)
        self.init_blocks = tuple(b for b in model.blocks if _overrides(b, "initialize"))
        samples = {n.block.sample for n in nodes if isinstance(n.block.sample, Sample)}
        samples |= {b.sample for b in model.blocks if isinstance(b.sample, Sample)}
        self.clock = _Clock(samples, s.start)
        self._hit_plans = {}
        self.events = [(t, b) for t, b in model.events if s.start < t <= s.stop]
        self.ev_i = 0
        self.xbuf, self.dxbuf = model.xbuf, model.dxbuf
        channels = {name: view for name, (view, _) in model.record.items()}
        for k, (block, views) in enumerate(model.sinks):
            for i, v in enumerate(views):
                channels[f"\x00{k}.{i}"] = v
        if s.output_interval:
            cap = int((s.stop - s.start) / s.output_interval) + 3
        else:
            cap = 1024
        self.rec = Recorder(channels, cap)
        self.stats = {"nsteps": 0, "nrejected": 0, "nfev": 0}
        self.last_time = s.start

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

    def hit_plan(self, due):
        plan = self._hit_plans.get(due)
        if plan is None:
            plan = tuple(getattr(n.block, n.calc) for n in self.m.nodes
                         if n.group == "continuous" or (n.group == "discrete" and n.block.sample in due))
            updates = tuple(b.update for b in self.m.blocks if b.sample in due)
            plan = self._hit_plans[due] = (plan, updates)
        return plan

    def at_event(self, t, y, first=False):
        """Switch sources, compute outputs (discrete blocks due sample), update states."""
        while self.ev_i < len(self.events) and self.events[self.ev_i][0] <= t:
            self.events[self.ev_i][1].event(t)
            self.ev_i += 1
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

    def next_event(self, t):
        s = self.m.settings
        cands = [s.stop]
        nt = self.clock.next_time()
        if nt is not None:
            cands.append(float(nt))
        if self.ev_i < len(self.events):
            cands.append(self.events[self.ev_i][0])
        return min(c for c in cands if c > t) if any(c > t for c in cands) else s.stop

    # -- diagnosis ----------------------------------------------------------------------------
    def nonfinite(self, t, y):
        """A SimulationError naming the first block output (in dataflow order) that is not
        finite at time t, or the state, or None."""
        with np.errstate(all="ignore"):
            self.outputs(t, y)
            for node in self.m.nodes:
                for port in node.ports:
                    if not np.isfinite(self.m.outputs[(node.block.name, port)]).all():
                        return SimulationError("signal is not finite (NaN or inf)",
                                               block=node.block.name, port=port, time=t)
            for block in self.m.blocks:
                cs, ds = self.m.state_slices[block.name]
                if not np.isfinite(y[cs]).all():
                    return SimulationError("continuous state is not finite (NaN or inf)",
                                           block=block.name, time=t)
                if cs.stop > cs.start:
                    block.derivative(t)
                    if not np.isfinite(self.dxbuf[cs]).all():
                        return SimulationError("state derivative is not finite (NaN or inf)",
                                               block=block.name, time=t)
        return None

    def diagnose(self, stepper):
        """After a solver failure: the first non-finite signal at the last accepted point, or
        just after it (probing forward, as the failed step did), or None."""
        t, y = stepper.t, stepper.y.copy()
        s = self.m.settings
        err = self.nonfinite(t, y)
        probe = 1e-10 * max(1.0, abs(t))
        while err is None and probe < s.max_step and t + probe <= s.stop:
            err = self.nonfinite(t + probe, y)
            probe *= 10
        return err

    def record(self, t):
        """Record the current signals at t; every recorded channel is a view of the signal
        buffer or of the state, so one check of each covers them all."""
        self.rec.sample(t)
        if not (np.isfinite(self.m.signals).all() and np.isfinite(self.xbuf).all()):
            err = self.nonfinite(t, self.xbuf.copy())
            raise err or SimulationError("a signal is not finite", time=t)

    def stopping(self):
        return any(v.any() for v in self.m.stops)

    # -- the run ------------------------------------------------------------------------------
    def run(self):
        m, s = self.m, self.m.settings
        self.m.xdbuf[:] = m.xd0
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
                stepper = make_stepper(s.solver, self.f, t, y, t_end, rtol=s.rtol, atol=s.atol,
                                       max_step=s.max_step, step=s.step, origin=s.start,
                                       max_steps=s.max_steps, t_final=s.stop)
            else:
                stepper.restart(t, y, t_end)
            try:
                done = self.segment(stepper, t_end, grid)
            finally:
                self.stats = {"nsteps": stepper.nsteps, "nrejected": stepper.nrejected,
                              "nfev": stepper.nfev}
            if done is not None:
                return done
            t = t_end
            y = stepper.y.copy()
            self.at_event(t, y)
            if grid is None:
                self.record(t)
            else:
                while grid.peek() is not None and grid.peek_snapped(t):
                    self.record(grid.pop())
            if m.stops and self.stopping():
                return t
        return t

    def segment(self, stepper, t_end, grid):
        """Integrate up to the next event; returns the stop time if a stop block fired."""
        while stepper.t < t_end:
            try:
                stepper.step()
            except SolverError as e:
                err = self.diagnose(stepper)
                if err is not None:
                    raise err from None
                if e.time is None:
                    e.time = stepper.t
                raise
            t_new = stepper.t
            if not np.isfinite(stepper.y).all():
                raise self.nonfinite(t_new, stepper.y.copy()) or SimulationError(
                    "state is not finite", time=t_new)
            if self.m.stops:
                self.outputs(t_new, stepper.y)
                if self.stopping():
                    t_stop = self.locate_stop(stepper)
                    if grid is not None:
                        while grid.peek() is not None and grid.peek() < t_stop:
                            tg = grid.pop()
                            self.outputs(tg, stepper.dense(tg))
                            self.record(tg)
                    self.outputs(t_stop, stepper.dense(t_stop))
                    self.record(t_stop)
                    return t_stop
            if grid is None:
                if t_new < t_end:
                    self.outputs(t_new, stepper.y)
                    self.record(t_new)
            else:
                while grid.peek() is not None and grid.peek() <= t_new and not grid.peek_snapped(t_end):
                    tg = grid.pop()
                    self.outputs(tg, stepper.dense(tg))
                    self.record(tg)
            if self.progress is not None:
                self.progress(t_new)
        return None

    def locate_stop(self, stepper):
        """The first time in (t_old, t] at which a stop input is non-zero, by bisection on the
        dense output (to about 1e-12 relative), so the firing time does not depend on the step."""
        lo, hi = stepper.t_old, stepper.t
        tol = 1e-12 * max(1.0, abs(hi))
        while hi - lo > tol:
            mid = 0.5 * (lo + hi)
            self.outputs(mid, stepper.dense(mid))
            if self.stopping():
                hi = mid
            else:
                lo = mid
        return hi


class _Grid:
    """Recording times start + k*interval (by multiplication), then the end time."""

    def __init__(self, s):
        self.start, self.dt, self.stop = s.start, s.output_interval, s.stop
        self.k = 0
        self.done = False

    def _time(self):
        t = self.start + self.k * self.dt
        if abs(t - self.stop) <= _SNAP * max(1.0, abs(self.stop)) or t > self.stop:
            return self.stop
        return t

    def peek(self):
        return None if self.done else self._time()

    def peek_snapped(self, t_event):
        """Whether the next grid time is (within the snap tolerance) the event time."""
        g = self.peek()
        return g is not None and abs(g - t_event) <= _SNAP * max(1.0, abs(t_event))

    def pop(self):
        t = self._time()
        if t >= self.stop:
            self.done = True
        self.k += 1
        return t


def _failing_block(exc):
    """(name, method, time) of the innermost block method that raised `exc` (from its
    traceback: the method's `self` and its argument `t`), or Nones."""
    name = method = time = None
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        owner = frame.f_locals.get("self")
        if isinstance(owner, Block):
            name, method = owner.name, frame.f_code.co_name
            t = frame.f_locals.get("t")
            time = float(t) if isinstance(t, (float, int, np.floating)) else None
        tb = tb.tb_next
    return name, method, time


def _block_failure(model, exc, last_time):
    """A SimulationError for an exception raised by a block's computation (a function
    block's index out of range, a singular matrix...): the block, the output port its
    method computes and the time (the method's, else the last derivative evaluation's)."""
    name, method, time = _failing_block(exc)
    port = None
    for node in model.nodes:
        if node.block.name == name and node.calc == method:
            port = "/".join(node.ports)
    what = "" if isinstance(exc, ExprError) else f"{type(exc).__name__}: "
    error = SimulationError(f"{what}{exc}", block=name, port=port,
                            time=last_time if time is None else time)
    error.__cause__ = exc
    return error


def _overrides(block, method):
    return getattr(type(block), method) is not getattr(Block, method)


def simulate(model, progress=None):
    """Run a model. Returns (t, data, info) where info has 'complete', 'error' (an exception
    or None), 'stats', 'wall_time', 'end_time', 'sink_data'. KeyboardInterrupt and
    SimulationError are caught and reported in info so that results so far are kept."""
    sim = Simulation(model, progress)
    t0 = _time.perf_counter()
    error = None
    try:
        # Non-finite values are detected and reported by the simulator itself, with the
        # block, port and time; numpy's per-operation warnings would only add noise.
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            sim.run()
    except (SimulationError, KeyboardInterrupt) as e:
        error = e
    except (ExprError, ArithmeticError, LookupError, ValueError, TypeError, MemoryError) as e:
        # a block's computation failed on the values it met (a function block's index out
        # of range, a singular matrix): the data's fault, not a bug, so exit 3 with the block
        error = _block_failure(model, e, sim.last_time)
    wall = _time.perf_counter() - t0
    t, data = sim.rec.arrays()
    sink_data = {}
    for k, (block, views) in enumerate(model.sinks):
        sink_data[block.name] = [data.pop(f"\x00{k}.{i}") for i in range(len(views))]
    info = {"complete": error is None, "error": error, "stats": sim.stats, "wall_time": wall,
            "end_time": float(t[-1]) if len(t) else model.settings.start, "sink_data": sink_data}
    return t, data, info
