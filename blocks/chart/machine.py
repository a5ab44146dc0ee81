"""The chart's execution at one instant, on its store (program.py's layout).

The rule (docs/charts.md), mirrored statement for statement by `_chart.c` in compiled code:

1. The first time, the chart is entered: the initial state of each level (every region of a
   parallel chart), outermost first, each entry action as its state is entered.
2. A pass: in each region (the whole chart when it is not parallel), from the active
   top-level state down to the active leaf, the transitions leaving each state are tested,
   outer states before inner ones and in the order written among one state's; the first
   whose `after` time has passed and whose condition holds is taken: the active states it
   leaves exit innermost first, its `do` runs, the states it enters are entered outermost
   first (each entry action in turn). A pass that took a transition is followed by another
   (a chain of transitions at one instant), up to MAX_CHAIN transitions: more is a loop,
   an error naming its states.
3. Then the `every` actions that are due (a state's, `every` s after it was entered).
4. In a discrete chart, then the during actions of the states that were active before the
   instant and still are (outermost first); a continuous chart evaluates them with its
   outputs instead, at every evaluation.
"""
from __future__ import annotations

import numpy as np

from blocksim.errors import SimulationError
from blocksim.language import expr

from .program import MAX_CHAIN

SNAP = 1e-9  # a discrete chart's timers: due from this close before (relative to max(1, |t|))


class Machine:
    """`step(t)` runs the chart at t on `store` with the variables `args` (views of the
    inputs and of the store); `log(state, transition)` is told every state entered, and
    `schedule(time)` every time at which a timer of a continuous chart it arms expires."""

    def __init__(self, program, name, store, args, log, schedule, discrete):
        self.p, self.name, self.store, self.args = program, name, store, args
        self.log, self.schedule, self.discrete = log, schedule, discrete
        self.views = [None if v.kind == "input" else
                      store[v.offset:v.offset + v.size].reshape(v.shape) for v in program.vars]

    # -- actions and conditions --------------------------------------------------------------
    def run(self, action):
        execute(self.p, action, self.views, self.args)

    def holds(self, guard):
        return guard < 0 or bool(self.p.guards[guard][0](*self.args) != 0.0)

    def due(self, t, time):
        return t >= time - SNAP * max(1.0, abs(t)) if self.discrete else t >= time

    # -- the instant -------------------------------------------------------------------------
    def step(self, t):
        """The chart at t (rules 1-4 above); True when it took a transition, entered a state
        or ran an every action."""
        p, store = self.p, self.store
        changed = False
        if store[p.STARTED] == 0.0:
            store[p.STARTED] = 1.0
            for top in (p.tops if p.spec.parallel else [p.spec.initial]):
                self.enter([top] + p.spec.default_chain(top), t, -1)
            changed = True
        chain = []
        while True:
            taken = self.one_pass(t)
            if not taken:
                break
            chain += taken
            if len(chain) > MAX_CHAIN:
                raise SimulationError(p.loop_text(chain[:MAX_CHAIN + 1]), block=self.name,
                                      time=t)
        changed |= bool(chain)
        changed |= self.every(t)
        if self.discrete:
            for s in range(p.n_states):
                if store[p.ACTIVE + s] != 0.0 and store[p.ENTERED + s] < t:
                    self.run(p.during[s])
        return changed

    def one_pass(self, t):
        p, store = self.p, self.store
        taken = []
        for region in (p.tops if p.spec.parallel else [self.active_child(-1)]):
            s = region
            while s >= 0:
                k = self.enabled(s, t)
                if k >= 0:
                    self.take(k, t)
                    taken.append(k)
                    break
                s = self.active_child(s)
        return taken

    def active_child(self, s):
        kids = self.p.tops if s < 0 else self.p.children[s]
        for c in kids:
            if self.store[self.p.ACTIVE + c] != 0.0:
                return c
        return -1

    def enabled(self, s, t):
        p = self.p
        for k in p.outgoing[s]:
            after = p.t_after[k]
            if after is not None and not self.due(t, self.store[p.ENTERED + s] + after):
                continue
            if self.holds(p.t_guard[k]):
                return k
        return -1

    def take(self, k, t):
        p, store = self.p, self.store
        chain = [p.t_exit[k]]
        while (c := self.active_child(chain[-1])) >= 0:
            chain.append(c)
        for s in reversed(chain):
            self.run(p.exit[s])
            store[p.ACTIVE + s] = 0.0
        self.run(p.t_do[k])
        self.enter(p.t_enter[k], t, k)

    def enter(self, states, t, transition):
        p, store = self.p, self.store
        for s in states:
            store[p.ACTIVE + s] = 1.0
            store[p.ENTERED + s] = t
            for e, (owner, period, _) in enumerate(p.every):
                if owner == s:
                    store[p.COUNT + e] = 0.0
                    if not self.discrete:
                        self.schedule(t + period)
            if not self.discrete:
                for k in p.outgoing[s]:
                    if p.t_after[k] is not None:
                        self.schedule(t + p.t_after[k])
            self.log(s, transition)
            self.run(p.entry[s])

    def every(self, t):
        p, store = self.p, self.store
        ran = False
        for e, (s, period, action) in enumerate(p.every):
            if store[p.ACTIVE + s] == 0.0:
                continue
            start, count = store[p.ENTERED + s], store[p.COUNT + e]
            if not self.due(t, start + (count + 1.0) * period):
                continue
            count += 1.0
            while self.discrete and self.due(t, start + (count + 1.0) * period):
                count += 1.0
            store[p.COUNT + e] = count
            self.run(action)
            ran = True
            if not self.discrete:
                self.schedule(start + (count + 1.0) * period)
        return ran


def execute(program, action, views, args):
    """Run action `action` (an id, -1: none) of `program`: its assignments in order, into
    `views` (per variable, None for an input), the variables read from `args`."""
    if action < 0:
        return
    for st in program.actions[action].statements:
        value = st.value(*args)
        view = views[st.target]
        if st.index:
            view[tuple(_key(part, args, n) for part, n in zip(st.index, view.shape))] = value
        else:
            np.copyto(view, value)


def _key(part, args, n):
    """One axis of a target's index: a slice, or an index value checked as the expression
    language checks one (a whole number, inside the axis)."""
    kind, what, _ = part
    if kind == "slice":
        return what
    v = float(np.asarray(what(*args)))
    if not np.isfinite(v) or v != int(v):
        raise expr.ExprError(f"an index must be an integer, got {v:g}")
    i = int(v)
    if not -n <= i < n:
        raise expr.ExprError(f"index {i} is out of bounds for an axis of size {n}")
    return i
