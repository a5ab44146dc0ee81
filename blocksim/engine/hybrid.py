"""The zero-crossing side of a run: the hybrid blocks' indicators after every accepted step,
the crossings located in it, and the event iteration at an event instant (block.py has the
blocks' side of the contract).

Indicators may read the rate of change of inputs the blocks watch (rates.py): inside a step
from its dense output, at an event instant the right derivative. For those blocks the
indicators at a step's start are evaluated again from that step's own dense output, so an
extremum near a joint of two steps is neither missed nor doubled.
"""
from __future__ import annotations

import numpy as np

from .events import MAX_ROUNDS, ZenoGuard, crossings, locate, unsettled
from .rates import InputRates



class ZeroCrossings:
    """Indicators, crossings and handlers of a Model's hybrid blocks during one run.

    The simulation's evaluations (accelerated mode's stiff solvers compile them): outputs(t,
    x) the continuous outputs at (t, x); recompute(t) the same from the state buffer as it is
    (after a handler wrote it); indicators(t) every block's indicators from the outputs as
    they are; f(t, x) the state derivative; tolerance(t) the event tolerance at t."""

    def __init__(self, model, sim):
        s = model.settings
        self.hybrid = model.hybrid
        self.outputs, self.recompute, self.indicators = sim.outputs, sim.recompute, sim.indicators
        self.f, self.tolerance = sim.f, sim.tolerance
        self.xbuf = model.xbuf
        self.advance_plan = tuple(f for f in (sim.gates.method(b, "advance") for b, _ in
                                              model.hybrid if hasattr(b, "advance"))
                                  if f is not None)
        # each block's handler (gated; none for the blocks a triggered subsystem runs)
        self.handlers = tuple((k, f, sl) for k, (b, sl) in enumerate(model.hybrid)
                              for f in [sim.gates.method(b, "crossing", False)] if f is not None)
        self.z, self.zdirs = model.zbuf, model.zdirs
        self.z_prev = np.zeros_like(self.z)
        longest = min(s.max_step, s.step)
        self.rates = InputRates(model.rates, self.outputs, longest) if model.rates else None
        self.rate_z = np.zeros(self.z.size, bool)  # the indicators of blocks that watch rates
        for block, sl in model.hybrid:
            self.rate_z[sl] = bool(block.rates)
        self.span = longest  # the last accepted step's length
        self.z_located = None  # the indicators where a crossing was located, for settle
        self.event_t, self.event_block = [], []
        self.zeno_guard = ZenoGuard(s, model.hybrid, self.tolerance)

    def z_at(self, stepper, t):
        """Indicator values at time t inside the last step (modes frozen), a copy."""
        self.outputs(t, stepper.dense(t))
        if self.rates is not None:
            self.rates.along(t, stepper.dense, self.span)
        self.indicators(t)
        return self.z.copy()

    def at_instant(self, t):
        """The indicators at an event instant, the outputs evaluated: the watched inputs'
        rates are the right derivatives, in the modes after the event."""
        if self.rates is not None:
            self.rates.tangent(t, self.xbuf, self.f, self.span)
        self.indicators(t)

    # -- after an accepted step ----------------------------------------------------------------
    def after_step(self, stepper, t_end):
        """The indicators at the end of the step just accepted; returns the time t* at which
        to cut it (the earliest located crossing, or the step's end when a block's `advance`
        asks for an event there: a step event), or None. A crossing within the event
        tolerance of the time event t_end it reached is left for the handlers there (z_prev
        stays). Leaves the outputs evaluated at the step's end unless it cuts."""
        t_new = stepper.t
        if self.rates is not None:
            self.step_rates(stepper)
        else:
            self.outputs(t_new, stepper.y)
        self.indicators(t_new)
        if crossings(self.z_prev, self.z, self.zdirs).any():
            t_star, self.z_located = locate(lambda t: self.z_at(stepper, t), stepper.t_old,
                                            self.z_prev, t_new, self.z.copy(), self.zdirs,
                                            self.tolerance)
            if not (t_new == t_end and t_end - t_star <= self.tolerance(t_end)):
                return t_star
            self.outputs(t_new, stepper.y)
            return None
        step_event = False
        if self.advance_plan:
            for advance in self.advance_plan:
                step_event |= bool(advance(t_new))
            self.indicators(t_new)
        np.copyto(self.z_prev, self.z)
        return t_new if step_event else None

    def step_rates(self, stepper):
        """For the blocks that watch rates: their indicators at the step's start again, from
        this step's dense output, as the values a crossing is tested from; then the outputs
        and rates at the step's end."""
        t0, t1 = stepper.t_old, stepper.t
        self.span = t1 - t0
        np.copyto(self.z_prev, self.z_at(stepper, t0), where=self.rate_z)
        self.rates.along(t1, lambda s: stepper.y if s == t1 else stepper.dense(s), self.span)

    # -- at an event instant -------------------------------------------------------------------
    def settle(self, t, first):
        """The event iteration at t: call every hybrid block's handler (dataflow order) with
        the crossings since the last evaluation (z_prev); while any handler changes
        something, recompute the outputs and indicators and call them again with the
        crossings that change caused. Leaves z_prev = the indicators after the event."""
        self.at_instant(t)
        crossed = np.zeros(self.z.size, dtype=np.int8) if first else self.first_crossings()
        involved = set()  # the blocks whose handler changed something: their events
        for _ in range(MAX_ROUNDS):
            changed = False
            for k, handler, sl in self.handlers:
                if handler(t, crossed[sl]):
                    changed = True
                    involved.add(k)
            if not changed:
                break
            before = self.z.copy()
            self.recompute(t)
            self.at_instant(t)
            crossed = 2 * crossings(before, self.z, self.zdirs)  # jumps, all of them
        else:
            raise unsettled([self.hybrid[k][0].name for k in sorted(involved)], t)
        np.copyto(self.z_prev, self.z)
        if not first and involved:
            for k in sorted(involved):
                self.event_t.append(t)
                self.event_block.append(k)
            self.zeno_guard(t, involved)

    def first_crossings(self):
        """The crossings an event instant starts with, since the last evaluation: +-1 for
        those located along the last step (the indicator went through 0 continuously),
        +-2 for those that jumped across 0 here (a source switch, a sample hit)."""
        located, self.z_located = self.z_located, None
        if located is None:
            return 2 * crossings(self.z_prev, self.z, self.zdirs)
        # a located crossing of a rate keeps the sign the root finder found there, not the
        # rate recomputed from the tangent, which may round the other way so close to it
        seen = np.where(self.rate_z, located, self.z)
        crossed = crossings(self.z_prev, seen, self.zdirs)
        along = crossings(self.z_prev, located, self.zdirs)
        return np.where(crossed == along, crossed, 2 * crossed).astype(np.int8)
