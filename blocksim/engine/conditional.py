"""Conditionally executed subsystems: the block an enabled or triggered subsystem compiles to,
and the gates that switch its blocks' methods on and off.

A subsystem with `enable:` or `trigger:` is flattened like any other (its blocks are
`S/inner`), plus one block named as the subsystem itself, `Conditional`, which the loader
wires to the control signal and to the inner outputs behind the subsystem's output ports:
the subsystem's outputs are its outputs (as Simulink's Outport blocks, they hold, or reset to
`initial`, while the subsystem does not run).

Enabled: the block's discrete state holds a flag (1 enabled, 0 disabled, -1 not yet decided).
Every method of the subsystem's blocks (outputs, derivatives, updates, indicators, handlers)
runs only while the flags of its enclosing enabled subsystems are all > 0: the compiler
gives each node a `gate` (flag indices into the discrete state) and the simulator's plans
and the compiled code test it, so a disabled block computes nothing, its outputs hold and
its derivatives stay zero. The flag is decided at event instants only (a mode, as a hybrid
block's): by the `decide` output in dataflow order (the compiler orders what the enable
signal needs first, so the blocks inside see the decision made at that instant), and in the
event iteration (the enable signal changed by another block's event). Its indicator, the
enable signal itself, locates the switch instants.

Triggered: the subsystem's blocks are in no plan; at each located edge of the trigger signal
the block runs them itself, once: their outputs in dataflow order (blocks with modes decide
them from their inputs first), then their updates; it then copies the outputs, held until
the next edge. Its indicator locates the edges; `advance` keeps the signal's value after
every step, the value an edge is detected from.
"""
from __future__ import annotations

import math

import numpy as np

from ..block import EITHER, FALLING, RISING, Block, In, Out
from ..language import expr
from ..params import Param, ParamError

EDGES = {"rising": RISING, "falling": FALLING, "either": EITHER}
UNDECIDED = -1.0


class Conditional(Block):
    """The control and output ports of an enabled or triggered subsystem (see the module);
    `conditional_class(kind)` is the class of each kind."""

    type = "subsystem"
    params = (
        Param("kind", "choice", choices=("enable", "trigger")),
        Param("signal", "string", doc="the enable or trigger signal, as written"),
        Param("outputs", "names", (), "the subsystem's output ports"),
        Param("edge", "choice", "rising", "the trigger's edge", choices=tuple(EDGES)),
        Param("enable", "string", "", "a triggered subsystem's enable signal, if any"),
        Param("outputs_when_disabled", "choice", "held", choices=("held", "reset")),
        Param("states_when_enabling", "choice", "held", choices=("held", "reset")),
        Param("initial", "data", 0.0, "the outputs before the first run (and when reset)"),
    )
    controls = ()  # the control inputs, first among the inputs

    def infer(self, shapes):
        self._shapes = {p: shapes[p] for p in self.p.outputs}
        return dict(self._shapes)

    def declare(self, d):
        # the outputs before the first run (and when reset), port after port (P_initial)
        if self._shapes:
            d.derived("initial", (sum(math.prod(shape) for shape in self._shapes.values()),))
            d.value("initial")

    def derive(self, p):
        values = _initial(p, self._shapes)
        return {"initial": np.concatenate([v.ravel() for v in values])} if values else {}

    @property
    def initials(self):
        """The outputs' initial values, one array per output port (views of the run data)."""
        out, k = [], 0
        for shape in self._shapes.values():
            n = math.prod(shape)
            out.append(self.v.initial[k:k + n].reshape(shape))
            k += n
        return out

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._outs = y[1:]  # y[0] is the enable flag, or the trigger's count of runs
        self._pairs = tuple(zip(self._outs, u[len(self.controls):]))

    def attach(self, states, plan):
        """From the compiler: the subsystem's states, (x, x0, dx, xd, xd0) views of the
        blocks inside (one contiguous run: they are declared together), and a triggered
        subsystem's run: its blocks' calls, in order."""
        self.states, self.plan = states, plan

    def _reset_outputs(self):
        for y, value in zip(self._outs, self.initials):
            np.copyto(y, value)

    def _pass(self, t):
        for y, u in self._pairs:
            np.copyto(y, u)

    def indicator(self, t):
        self.z[0] = self.u[0]


class EnabledSubsystem(Conditional):
    """Runs its subsystem while the enable signal is > 0 (Simulink's Enable port)."""

    controls = ("enable",)

    def __init__(self, name, params):
        super().__init__(name, params)
        self.output = self._pass

    def ports(self):
        return ([In("enable", shape=())] + [In(p) for p in self.p.outputs],
                [Out("enable", shape=(), feedthrough=("enable",), calc="decide")]
                + [Out(p, feedthrough=(p,)) for p in self.p.outputs])

    def discrete_state(self):
        return [UNDECIDED, UNDECIDED]  # the flag; the flag the last event iteration saw

    def zero_crossings(self):
        return [EITHER]

    def decide(self, t):
        """The flag from the enable signal (> 0: enabled); a change switches the subsystem."""
        on = 1.0 if self.u[0] > 0.0 else 0.0
        if on != self.xd[0]:
            self._switch(on)
        self.y[0][...] = on

    def _switch(self, on):
        x, x0, dx, xd, xd0 = self.states
        first = self.xd[0] == UNDECIDED
        if on and not first and self.p.states_when_enabling == "reset":
            np.copyto(x, x0)
            np.copyto(xd, xd0)
        if not on:
            dx[...] = 0.0  # the states hold
            if first or self.p.outputs_when_disabled == "reset":
                self._reset_outputs()
        self.xd[0] = on

    def crossing(self, t, crossed):
        """The enable decided again in the event iteration (another block's event changed
        it); True once per switch, so that each is counted among the events."""
        self.decide(t)
        changed = self.xd[0] != self.xd[1]
        self.xd[1] = self.xd[0]
        return bool(changed)

    def mode_text(self):
        return {1.0: "enabled", 0.0: "disabled"}.get(float(self.xd[0]), "not decided")


class TriggeredSubsystem(Conditional):
    """Runs its subsystem once at each edge of the trigger signal (Simulink's Trigger port),
    if it has an enable signal too only while that is > 0."""

    def __init__(self, name, params):
        super().__init__(name, params)
        self.controls = ("trigger", "enable") if self.p.enable else ("trigger",)
        self.direction = EDGES[self.p.edge]

    def ports(self):
        return ([In(c, shape=()) for c in self.controls] + [In(p) for p in self.p.outputs],
                [Out("trigger", shape=(), doc="the number of runs so far")]
                + [Out(p) for p in self.p.outputs])

    def discrete_state(self):
        # the signal's value an edge is detected from (NaN before the start), the runs so
        # far, the runs not yet counted among the events, the start (no edge then)
        return [np.nan, 0.0, 0.0, np.nan]

    def zero_crossings(self):
        return [self.direction]

    def output(self, t):
        """At an event instant: a run if the trigger had its edge since the value last seen."""
        if np.isnan(self.xd[0]):  # the start: the outputs their initial values
            self.xd[3] = t
            self._reset_outputs()
        self._edge(t)
        self.y[0][...] = self.xd[1]

    def _edge(self, t):
        """Run the subsystem if the trigger crossed 0 in the edge's direction since its last
        seen value (and the enable, if any, is > 0); at the start it only sees the value
        (the start is no edge, whatever the signal's value then)."""
        before, now = float(self.xd[0]), float(self.u[0])
        if t == self.xd[3]:
            self.xd[0] = now
            return
        self.xd[0] = now
        d = self.direction
        fired = (d >= 0 and before <= 0.0 < now) or (d <= 0 and before >= 0.0 > now)
        if fired and (not self.p.enable or self.u[1] > 0.0):
            for call in self.plan:
                call(t)
            self._pass(t)
            self.xd[1] += 1.0
            self.xd[2] = 1.0

    def advance(self, t):
        self.xd[0] = self.u[0]

    def crossing(self, t, crossed):
        """An edge made by another block's event, run here; True once per run, so that each
        is counted among the events."""
        self._edge(t)
        self.y[0][...] = self.xd[1]
        ran, self.xd[2] = bool(self.xd[2]), 0.0
        return ran

    def mode_text(self):
        return f"{int(self.xd[1])} run(s) so far"


def conditional_class(kind):
    return EnabledSubsystem if kind == "enable" else TriggeredSubsystem


def _initial(p, shapes):
    """The outputs' initial values, one array per output port, from `initial`: one value for
    every output, or {port: value}; each broadcast to its port's shape."""
    raw = p.initial
    if isinstance(raw, dict):
        unknown = [k for k in raw if k not in shapes]
        if unknown:
            raise ParamError("initial", f"no output port named {unknown[0]!r} (ports: "
                                        f"{', '.join(shapes) or 'none'})")
    values = []
    for port, shape in shapes.items():
        value = raw.get(port, 0.0) if isinstance(raw, dict) else raw
        try:
            value = expr.evaluate(value, p._names, dotted=p._dotted, functions=p._functions)
            values.append(np.broadcast_to(np.asarray(value, dtype=float), shape).copy())
        except expr.Unavailable:
            raise
        except (expr.ExprError, ValueError) as e:
            raise ParamError("initial", f"for output '{port}' {tuple(shape)}: {e}") from None
    return values


def gated(method, flags, otherwise=None):
    """`method` run only while every flag (a 1-element view of the discrete state) is > 0;
    `otherwise` is returned when it is not run (a handler's 'nothing changed')."""
    if not flags:
        return method
    if len(flags) == 1:
        (flag,) = flags

        def one(*args):
            return method(*args) if flag[0] > 0.0 else otherwise
        return one

    def every(*args):
        return method(*args) if all(f[0] > 0.0 for f in flags) else otherwise
    return every


def flags_of(model, indices):
    """The flags at these indices of the model's discrete state, as 1-element views."""
    return tuple(model.xdbuf[i:i + 1] for i in indices)


class Gates:
    """A model's methods as the simulator calls them: each gated by the flags of the enabled
    subsystems around its block (compiler/conditions.py), None for the blocks a triggered
    subsystem runs; as they are, without overhead, in a model without conditions."""

    def __init__(self, model):
        self.m = model

    def node(self, node):
        return gated(getattr(node.block, node.calc), flags_of(self.m, node.gate))

    def method(self, block, name, otherwise=None):
        gate = self.m.gates.get(block.name)
        if gate is None:
            return getattr(block, name)
        if gate.owner is not None:
            return None
        return gated(getattr(block, name), flags_of(self.m, gate.flags), otherwise)
