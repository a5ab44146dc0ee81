"""A block's behaviour declared once, in the expression language: plain data on its class.

    class Gain(Block):
        behaviour = Behaviour(outputs={"y": "K * u"})

Each text is an expression of the block's input ports (by name), its declared run data
(`d.param`, `d.derived`: by name, as `P_NAME` in compiled code) and its states `x` and `xd`
(their own flat shape, or the shape of the port named by `state`); an input named in `flat`
is read as a vector (a scalar as one element: a one-input system's u in `B @ u`):

- `outputs`: {output port: its value}, computed in the method "output" (the port's calc);
- `derivative`: dx/dt of the continuous state;
- `update`: the discrete state at the block's next sample hit;
- `indicator`: the zero-crossing indicators `z` (a hybrid block's handlers, `crossing`, which
  switch its modes, stay written by hand: the language has no statements);
- `initialize`: {output port: its value at the start of a run}, computed in the method
  "initialize" (a sampled block's output before its first hit).

From that one declaration a block gets both modes and linearisation: when the compiler binds
it (`Block.bind`), each text becomes a fixed program of numpy calls writing into its port
and state views (inplace.py: no parsing, lookups or allocation per evaluation), installed as
the block's methods; accelerated mode lowers the same texts to C (accel/behaviour.py), and
`jacobian` differentiates them exactly (derivatives.py). A block whose behaviour the texts
depend on (a sum's signs) makes its `behaviour` per instance, from its structure alone.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import derivatives
from .expr import ExprError
from .inplace import FUNCTIONS, compile_inplace

METHODS = ("output", "derivative", "update", "indicator", "initialize")
PORT_METHODS = ("output", "initialize")  # the methods whose texts write output ports
_STATES = {"dx": "continuous state", "xd": "discrete state", "z": "zero-crossing indicators"}


@dataclass(frozen=True)
class Behaviour:
    """A block's outputs, derivative and update as expressions (see the module docstring)."""
    outputs: dict = field(default_factory=dict)
    derivative: str | None = None
    update: str | None = None
    indicator: str | None = None
    initialize: dict = field(default_factory=dict)
    state: str = ""  # a port whose shape the states x and xd take in the texts
    flat: tuple = ()  # input ports the texts read flattened (a scalar as a 1-vector)

    @property
    def methods(self):
        """The block methods this behaviour defines."""
        return tuple(m for m, text in zip(METHODS, (self.outputs, self.derivative, self.update,
                                                    self.indicator, self.initialize)) if text)

    def texts(self):
        """[(method, target, text)]: what each method writes (an output port's name, 'dx',
        'xd' or 'z') and from which expression, in the order they run."""
        outs = [("output", port, text) for port, text in self.outputs.items()]
        starts = [("initialize", port, text) for port, text in self.initialize.items()]
        return outs + [(m, target, text) for m, target, text in
                       (("derivative", "dx", self.derivative), ("update", "xd", self.update),
                        ("indicator", "z", self.indicator)) if text] + starts

    def arrays(self, block, ports=None):
        """{name: array} the texts read: the block's bound inputs, its run data views, its
        states (shaped as `state` says); `ports`: block.ports() when at hand."""
        ins, outs = ports or block.ports()
        named = {p.name: u.reshape(-1, copy=False) if p.name in self.flat else u
                 for p, u in zip(ins, block.u) if u is not None}
        if block.v is not None:
            named.update(vars(block.v))
        shape = None
        if self.state:
            views = {**{p.name: u for p, u in zip(ins, block.u)},
                     **{p.name: y for p, y in zip(outs, block.y)}}
            if self.state not in views:
                raise ExprError(f"state '{self.state}': the block has no port of that name")
            shape = np.shape(views[self.state])
        for name in ("x", "xd"):  # empty ones too (a pure gain's C @ x), where no port or
            state = getattr(block, name)  # run data of that name is read instead
            if state is not None and (state.size or (shape is None and name not in named)):
                named[name] = state.reshape(shape) if shape is not None else state
        return named

    def bind(self, block):
        """The block's methods from its texts, on the views it was just bound to."""
        ports = block.ports()
        arrays = self.arrays(block, ports)
        # an output port's own array, also for a port named like a state (dx, xd, z)
        outputs = {p.name: y for p, y in zip(ports[1], block.y)}
        states = {"dx": block.dx, "xd": block.xd, "z": block.z}
        runs = {}
        for method, target, text in self.texts():
            port = method in PORT_METHODS
            try:
                out = outputs.get(target) if port else states[target]
                if out is None:
                    raise ExprError("the block has no output port of that name" if port else
                                    f"the block has no {_STATES[target]}")
                run = compile_inplace(text, arrays, out)
            except ExprError as e:  # which of the texts: the block's author reads it
                what = f"{method} {target}" if port else method
                raise ExprError(f"{what} '{text}': {e}") from None
            runs.setdefault(method, []).append(run)
        for method, parts in runs.items():
            setattr(block, method, parts[0] if len(parts) == 1 else _together(parts))

    def jacobian(self, block):
        """The block's exact Jacobian (blocksim.block.Jacobian) at its current values, or
        None (differenced) where a text calls a function without a derivative rule or an
        output is neither one of the texts' nor the state's."""
        from ..block import Jacobian  # the contract, which names this class
        arrays = self.arrays(block)
        state = "xd" if self.update else "x"
        ins = [p.name for p, u in zip(block.ports()[0], block.u) if u is not None]
        variables = ([state] if state in arrays else []) + ins
        constants = {k: a for k, a in arrays.items() if k not in variables}
        try:  # {(method, port or state): rows}: an output port may be named like a state
            rows = {(method, target): derivatives.jacobian(text, variables, constants,
                                                           [arrays[v] for v in variables],
                                                           functions=FUNCTIONS)
                    for method, target, text in self.texts()
                    if method in ("output", "derivative", "update")}
        except derivatives.NoDerivative:
            return None
        rate = rows.pop(("derivative", "dx") if state == "x" else ("update", "xd"), None)
        rows = {port: r for (method, port), r in rows.items() if method == "output"}
        n = arrays[state].size if state in arrays else 0
        width = n + sum(arrays[i].size for i in ins)
        for port in block.ports()[1]:  # an output that is (part of) the state: C selects it
            part = port.state if state == "x" else port.dstate
            if port.name not in rows and part is not None and n:
                chosen = np.arange(n)[slice(None) if part is True else part]
                rows[port.name] = np.eye(n, width)[chosen]
        outs = [p.name for p in block.ports()[1]]
        if any(port not in rows for port in outs):
            return None
        Y = np.vstack([rows[port] for port in outs])
        rate = np.zeros((0, Y.shape[1])) if rate is None else rate
        return Jacobian(rate[:, :n], rate[:, n:], Y[:, :n], Y[:, n:],
                        states=None if n else ())


def _together(parts):
    """Several programs of one method, one after the other."""
    def run(t):
        for part in parts:
            part(t)
    return run
