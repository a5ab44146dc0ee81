"""The `chart` block: a state machine (Stateflow-like) inside a diagram (docs/charts.md)."""
from __future__ import annotations

import warnings

import numpy as np

from blocksim.block import ALL, Block, In, Out, Sample
from blocksim.params import Param
from blocksim.rundata import Structural

from ..linearisation import static
from .machine import Machine, execute
from .program import Program
from .spec import LEAF_OUTPUT, read_chart


class Chart(Block):
    """A state machine: hierarchical and parallel states, guarded transitions and actions.

    States hold states (one initial per level; `parallel: true` makes the top-level states
    parallel regions); transitions `{from, to, when, do, after}` are tested outer states
    first, in the order written among one state's; entry, during, exit and transition
    actions are assignments `name = expr; ...` over the chart's inputs, outputs and data and
    the diagram's parameters. Without `sample` the chart is continuous: a condition (a
    comparison, or and/or/not of them) becomes true at an instant located as a zero
    crossing, `after: T` and `every: T` are exact time events, during actions run at every
    evaluation. With `sample` it runs at its sample hits only.

    Inputs: one port per name in `inputs` (size 1: a scalar, n: a vector, or a shape).
    Outputs: one per name in `outputs` (held between actions, 0 at first), `in_<State>` (1.0
    while the state is active) for the states listed in `active`, and `leaf`: the index of
    the active leaf state (preorder numbering, `blocksim check` lists it; one per region of a
    parallel chart). The states entered and the transitions taken go into results.npz
    (`chart_t`, `chart_state`, `chart_transition`) and meta.json (`charts`). The order of
    things at an instant, the keys and examples: docs/charts.md.
    """

    type = "chart"
    reads_names = True
    uses_run = True
    params = (
        Param("states", "data", doc="the states: name -> {initial, entry, during, exit, "
                                    "states}"),
        Param("transitions", "data", None, "list of {from, to, when, do, after}, in priority "
                                           "order per state"),
        Param("inputs", "data", None, "input ports: name -> size (1: scalar) or shape"),
        Param("outputs", "data", None, "outputs: name -> size or shape (held, 0 at first)"),
        Param("data", "data", None, "local variables: name -> initial value"),
        Param("parallel", "bool", False, "the top-level states are parallel regions"),
        Param("active", "data", None, "states with an output in_<State> (1.0 while active): a "
                                     "list, or a mapping {State: 1}"),
        Param("sample", "scalar", None, "sample period (s): a discrete chart; none: "
                                        "continuous", positive=True),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        self.spec = read_chart(name, self.p)
        self.discrete = self.p.sample is not None
        if self.discrete:
            self.sample = Sample(self.p.sample)
        self.program = Program(name, self.spec, self.p, continuous=not self.discrete)

    # -- declarations -----------------------------------------------------------------------
    def _regions(self):
        return len(self.spec.tops) if self.spec.parallel else 1

    def ports(self):
        spec = self.spec
        through = ALL if spec.inputs else ()
        outs = [Out(n, shape=s, feedthrough=through) for n, s in spec.outputs.items()]
        outs += [Out(spec.states[s].port, shape=(),
                     feedthrough=through) for s in spec.active]
        leaf = () if self._regions() == 1 else (self._regions(),)
        outs.append(Out(LEAF_OUTPUT, shape=leaf, feedthrough=through))
        return [In(n, shape=s) for n, s in spec.inputs.items()], outs

    def discrete_state(self):
        return self.program.initial_store()

    def zero_crossings(self):
        if self.discrete:
            return None
        return np.array([leaf.direction for leaf in self.program.leaves], dtype=np.int8)

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        p = self.program
        self._work = np.zeros(p.size) if self.discrete else None
        store = self._work if self.discrete else xd
        held = np.zeros(p.size)  # a continuous chart's outputs while its during actions run
        inputs = dict(zip(self.spec.inputs, u))
        ports = dict(zip([o.name for o in self.ports()[1]], y))

        def views(memory):
            return [None if v.kind == "input" else
                    memory[v.offset:v.offset + v.size].reshape(v.shape) for v in p.vars]

        def args(outputs):
            return tuple(inputs[v.name].reshape(v.shape) if v.kind == "input" else
                         outputs[k] for k, v in enumerate(p.vars))

        def mixed(outputs):  # outputs from `outputs`, data from the store
            return [o if v.kind == "output" else s
                    for v, o, s in zip(p.vars, outputs, views(store))]

        self._pending = []
        log = self._pending.append if self.discrete else (lambda a: self.run.log(*a))
        self._armed = []  # the times of the timers armed at the instant (next_events)
        self._machine = Machine(p, self.name, store, args(views(store)),
                                lambda s, k: log((s, k)), self._armed.append, self.discrete)
        self._held = held
        self._during_views = mixed(views(held))
        self._during_args = args(self._during_views)
        port_views = [ports[v.name] if v.kind == "output" else None for v in p.vars]
        self._indicator_args = args(mixed(port_views))
        self._outputs = [(ports[v.name], views(store)[k], views(held)[k])
                         for k, v in enumerate(p.vars) if v.kind == "output"]
        self._active_ports = [(ports[self.spec.states[s].port],
                               p.ACTIVE + s) for s in self.spec.active]
        self._leaf = ports[LEAF_OUTPUT].reshape(-1)
        self._store = store

    # -- hot path ---------------------------------------------------------------------------
    def output(self, t):
        p, store = self.program, self._store
        if self.discrete:
            np.copyto(self._work, self.xd)
            self._pending.clear()
            self._machine.step(t)
            for port, value, _ in self._outputs:
                np.copyto(port, value)
        else:
            for _, value, scratch in self._outputs:
                np.copyto(scratch, value)
            for s in range(p.n_states):
                if p.during[s] >= 0 and store[p.ACTIVE + s] != 0.0:
                    execute(p, p.during[s], self._during_views, self._during_args)
            for port, _, scratch in self._outputs:
                np.copyto(port, scratch)
        self._write_states(store)

    def _write_states(self, store):
        p = self.program
        for port, k in self._active_ports:
            port[()] = store[k]
        tops = p.tops if self.spec.parallel else [None]
        for r, top in enumerate(tops):
            s = top if top is not None else self._active_child(store, p.tops)
            leaf = -1
            while s >= 0:
                leaf = s
                s = self._active_child(store, p.children[s])
            self._leaf[r] = p.leaf_index.get(leaf, -1)

    def _active_child(self, store, kids):
        base = self.program.ACTIVE
        for c in kids:
            if store[base + c] != 0.0:
                return c
        return -1

    def initialize(self, t):
        self._armed.clear()  # a new run: no timers of an earlier one (or a linearisation)
        if self.discrete:  # the held outputs before the first hit
            np.copyto(self._work, self.xd)
            for port, value, _ in self._outputs:
                np.copyto(port, value)
            self._write_states(self._work)

    def update(self, t):
        np.copyto(self.xd, self._work)
        for s, k in self._pending:
            self.run.log(s, k)
        self._pending.clear()

    def indicator(self, t):
        p, z, args = self.program, self.z, self._indicator_args
        for k, leaf in enumerate(p.leaves):
            if self.xd[p.ACTIVE + p.t_source[leaf.transition]] != 0.0:
                z[k] = float(leaf.plus(*args)) - float(leaf.minus(*args))
            else:
                z[k] = 1.0

    def crossing(self, t, crossed):
        for port, value, _ in self._outputs:  # the outputs hold what was last computed
            np.copyto(value, port)
        return self._machine.step(t)

    def next_events(self, t):
        """The expiry times of the timers (after, every) armed at this instant, in the order
        the compiled handler schedules them as it arms them (SCHEDULE)."""
        armed = tuple(self._armed)
        self._armed.clear()
        return armed

    # -- what the chart is --------------------------------------------------------------------
    def journal_names(self):
        spec = self.spec
        return ([s.path for s in spec.states],
                [self._transition_text(t) for t in spec.transitions])

    def _transition_text(self, t):
        states = self.spec.states
        label = t.label()
        return f"{states[t.source].path} -> {states[t.target].path}" + (f" {label}" if label
                                                                        else "")

    def statechart(self):
        """The chart as `blocksim draw --chart` draws it (plain data)."""
        from blocksim.draw.statechart import ChartState, StateChart
        spec = self.spec
        states = [ChartState(s.name, s.parent, list(s.children), s.initial,
                             spec.parallel and s.parent == -1,
                             [line for k in ("entry", "during", "exit") if getattr(s, k)
                              for line in _lines(f"{k}: ", getattr(s, k).shown)]
                             + [line for e in s.every
                                for line in _lines(f"every({e.period:g}): ", e.action.shown)])
                  for s in spec.states]
        return StateChart(self.name, states, [(t.source, t.target, t.label())
                                              for t in spec.transitions])

    def describe(self):
        """The chart for `blocksim check`: how it runs, its states (nested, with the index
        `leaf` gives a leaf and their actions) and its transitions in the order tested."""
        spec, p = self.spec, self.program
        if self.discrete:
            how = (f"discrete, every {self.p.sample:g} s: conditions, timers and during "
                   "actions at its sample hits")
        else:
            how = (f"continuous: {len(p.leaves)} comparison(s) located as zero crossings, "
                   "after/every as time events, during actions at every evaluation")
        lines = [how + (", parallel regions" if spec.parallel else "")]
        for s in spec.states:
            depth = s.path.count(".")
            marks = [m for m, on in (("initial", s.initial), ("region", spec.parallel
                                                               and s.parent == -1)) if on]
            head = "  " * depth + s.name + (f" [{', '.join(marks)}]" if marks else "")
            acts = [f"{k}: {getattr(s, k).shown}" for k in ("entry", "during", "exit")
                    if getattr(s, k) is not None]
            acts += [f"every {e.period:g} s: {e.action.shown}" for e in s.every]
            leaf = f"leaf {p.leaf_index[s.index]}" if s.index in p.leaf_index else ""
            lines.append(f"  {head:<28} {leaf:<8} {'; '.join(acts)}".rstrip())
        lines.append("transitions (outer states first, then as written):")
        for n, t in enumerate(spec.transitions, 1):
            lines.append(f"  {n}. {self._transition_text(t)}")
        return lines

    def jacobian(self, pade=None):
        """Constant in its active states: every output's derivative is 0."""
        n_in = sum(u.size for u in self.u if u is not None)
        n_out = sum(y.size for y in self.y)
        return static(np.zeros((n_out, n_in)))

    # -- run data and compiled form (lowering.py, _chart.c): the timers and the expressions'
    # constants are values (the diagram's parameters its texts read: `_names`), the tables
    # and the code are structure (a fact: a value that changes the code compiles again)
    def _code(self, p=None):
        """The ChartCode of the chart with parameters `p` (its own by default, cached), or
        the LoweringError of a chart without a compiled form."""
        from blocksim.accel.lowering import LoweringError
        from .lowering import ChartCode
        own = p is None or p is self.p
        if own and getattr(self, "_laid_out", None) is not None:
            return self._laid_out
        program = self.program
        if not own:
            with warnings.catch_warnings():  # said once, when the chart was read
                warnings.simplefilter("ignore")
                program = Program(self.name, read_chart(self.name, p), p,
                                  continuous=not self.discrete)
        try:
            code = ChartCode.laid_out(program, self.discrete)
        except LoweringError as e:
            code = e
        if own:
            self._laid_out = code
        return code

    def declare(self, d):
        code = self._code()
        if isinstance(code, Exception):
            return  # no compiled form: lower says why
        for name, values in code.run_data().items():
            d.derived(name, values.shape)
        d.value("_names")
        d.fact("code")
        for name, size in code.work.items():
            d.work(name, size)

    def values_changed(self):
        """New values of the parameters its texts read (the code is the same: a fact): the
        chart read again with them, for its interpreted form and its initial data, and
        bound to the same memory."""
        with warnings.catch_warnings():  # said once, when the chart was read
            warnings.simplefilter("ignore")
            self.spec = read_chart(self.name, self.p)
        self.program = Program(self.name, self.spec, self.p, continuous=not self.discrete)
        self._laid_out = None
        if getattr(self, "xd", None) is not None:
            self.bind(self.u, self.y, self.x, self.dx, self.xd)

    def derive(self, p):
        code = self._code(p)
        if isinstance(code, Exception):
            raise Structural(str(code))
        return {**code.run_data(), "code": code.text}

    def lower(self, c):
        from .lowering import ChartCode
        code = self._code()
        if isinstance(code, Exception):
            raise code
        return ChartCode(self.program, self.discrete).lower(c)

    def mode_text(self):
        p = self.program
        active = [s.path for s in self.spec.states if self.xd[p.ACTIVE + s.index] != 0.0]
        return "in " + ", ".join(active) if active else "not started"


def _lines(head, action, width=56):
    """An action for a drawing: a statement per line (long ones wrapped), under its head."""
    import textwrap
    out = []
    for k, statement in enumerate(st.strip() for st in action.split(";") if st.strip()):
        first = (head if k == 0 else " " * len(head)) + statement
        out += textwrap.wrap(first, width, subsequent_indent=" " * (len(head) + 4)) or [first]
    return out
