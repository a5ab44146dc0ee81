"""Drive one block through the contract the way the compiler and simulator do, without a
diagram: parameters converted by their `Param`s (defaults for missing ones), ports, shape
inference, initial states, views bound, then a test sets inputs and calls the hot path.
"""
import numpy as np

from blocksim.block import PortError
from blocksim.engine.context import lay_out_run_data
from blocksim.language import expr
from blocksim.params import REQUIRED, ParamError


def convert_params(cls, raw, names=None):
    """Raw values (already evaluated: numbers, lists, strings) -> the block's `params` dict,
    as the compiler builds it (a ValueError from a Param becomes a ParamError)."""
    raw = dict(raw)
    values = {}
    for param in cls.params:
        value = raw.pop(param.name, param.default)
        if value is REQUIRED:
            raise ParamError(param.name, "missing required parameter")
        if value is None and param.default is None:  # an optional parameter left unset
            values[param.name] = None
            continue
        try:
            values[param.name] = param.convert(value)
        except ValueError as e:
            raise ParamError(param.name, str(e)) from None
    if raw:
        raise TypeError(f"{cls.type} has no parameter(s) {sorted(raw)}")
    values["_names"] = dict(names or {})
    values["_dotted"] = {}
    values["_functions"] = expr.FUNCTIONS
    return values


def _flat(x):
    return np.zeros(0) if x is None else np.asarray(x, dtype=float).ravel().copy()


class Rig:
    """One bound block.

    params: raw parameter values. inputs: shapes of the wired inputs whose port declares no
    shape, and of the optional inputs to wire (an optional input missing here stays unwired:
    a read-only buffer holding its default, or None when its default is None).
    After construction: `u[name]` the writable input buffers, `y[name]` the output views,
    `x`, `dx`, `xd` the state buffers, `du[name]` the rates of the inputs the block watches,
    `block` the block.
    """

    def __init__(self, cls, params=None, inputs=None, *, names=None, name="blk"):
        inputs = dict(inputs or {})
        self.block = block = cls(name, convert_params(cls, params or {}, names))
        ins, outs = block.ports()
        shapes, u = {}, []
        self.u = {}
        for port in ins:
            wired = port.name in inputs or not port.optional
            declared = tuple(port.shape) if port.shape is not None else None
            shape = tuple(inputs.pop(port.name, declared if declared is not None else ()))
            if declared is not None and shape != declared:
                raise PortError(port.name, f"shape mismatch: {shape}, the port expects {declared}")
            shapes[port.name] = shape
            if wired:
                self.u[port.name] = np.zeros(shape)
                u.append(self.u[port.name])
            elif port.default is None:
                u.append(None)
            else:
                default = np.full(shape, float(port.default))
                default.flags.writeable = False
                u.append(default)
        if inputs:
            raise TypeError(f"{cls.type} has no input(s) {sorted(inputs)}")
        inferred = block.infer(shapes)
        self.slots, self.context = lay_out_run_data({name: block})  # block.v, its run data
        self.out_shapes = {o.name: tuple(o.shape if o.shape is not None else inferred[o.name])
                           for o in outs}
        self.x = _flat(block.continuous_state())
        self.dx = np.zeros_like(self.x)
        self.xd = _flat(block.discrete_state())
        self.y = {}
        # computed outputs lie consecutively in one buffer, as the compiler lays them out
        size = sum(int(np.prod(self.out_shapes[o.name], dtype=int)) for o in outs if not o.aliased)
        flat, start = np.zeros(size), 0
        for o in outs:
            shape = self.out_shapes[o.name]
            if o.state is not None:
                base = self.x if o.state is True else self.x[o.state]
            elif o.dstate is not None:
                base = self.xd if o.dstate is True else self.xd[o.dstate]
            else:
                k = int(np.prod(shape, dtype=int))
                base = flat[start:start + k]
                start += k
            self.y[o.name] = base.reshape(shape)
        block.y_flat = flat if size else None
        self.outs = outs
        directions = block.zero_crossings()
        self.z = np.zeros(len(directions)) if directions is not None else None
        block.z = self.z
        # the derivatives of the inputs the block watches (`rates`): set them with `slope`
        self.du = {n: np.zeros(shapes[n]) for n in block.rates}
        block.du = tuple(self.du.values())
        block.bind(tuple(u), tuple(self.y[o.name] for o in outs), self.x, self.dx, self.xd)
        # after bind: a declared behaviour's methods are made there
        self.calcs = tuple(dict.fromkeys(getattr(block, o.calc) for o in outs if not o.aliased))

    def set(self, **values):
        for name, value in values.items():
            np.copyto(self.u[name], value)
        return self

    def slope(self, **rates):
        """The time derivatives of watched inputs (what the simulator computes)."""
        for name, value in rates.items():
            np.copyto(self.du[name], value)
        return self

    def outputs(self, t=0.0):
        """Run every output computation at time t; returns a dict of output copies."""
        for calc in self.calcs:
            calc(t)
        return {name: view.copy() for name, view in self.y.items()}

    def out(self, t=0.0):
        """The single output's value at time t."""
        (value,) = self.outputs(t).values()
        return value

    def start(self, t=0.0, hit=True):
        """The simulator's first event: outputs (discrete blocks only at a hit), initialize,
        outputs again."""
        if hit or self.block.sample is None:
            self.outputs(t)
        self.block.initialize(t)
        if hit or self.block.sample is None:
            self.outputs(t)
        return self

    def event(self, t=0.0, crossed=None):
        """An event instant for a hybrid block: outputs, then its handler (with `crossed`,
        default none crossed) until it changes nothing, then outputs; returns the outputs."""
        self.outputs(t)
        c = np.zeros(self.z.size, np.int8) if crossed is None else np.asarray(crossed, np.int8)
        while self.block.crossing(t, c):
            self.outputs(t)
            c = np.zeros_like(c)
        return self.outputs(t)

    def indicators(self, t=0.0):
        """The block's indicator values at t (outputs computed first)."""
        self.outputs(t)
        self.block.indicator(t)
        return self.z.copy()

    def derivative(self, t=0.0):
        self.block.derivative(t)
        return self.dx.copy()

    def hit(self, t):
        """A discrete sample hit: outputs in order, then the state update; returns y."""
        value = self.out(t)
        self.block.update(t)
        return value

    def hits(self, period, values, inp="u", out="y"):
        """Hit k at t = k*period with input `inp` = values[k] (Simulink order: outputs, then
        the update); returns output `out` at every hit, stacked."""
        self.set(**{inp: values[0]}).start(0.0)
        got = [self.y[out].copy()]
        self.block.update(0.0)
        for k in range(1, len(values)):
            got.append(self.set(**{inp: values[k]}).outputs(k * period)[out])
            self.block.update(k * period)
        return np.array(got)

    def integrate(self, t_end, t0=0.0, inputs=None, method="Radau"):
        """Integrate the block's continuous state from t0 to t_end with scipy (tight
        tolerances), inputs given as functions of time; leaves x at t_end and returns it."""
        from scipy.integrate import solve_ivp

        inputs = inputs or {}

        def f(t, x):
            self.x[:] = x
            self.set(**{name: fn(t) for name, fn in inputs.items()})
            return self.derivative(t)

        sol = solve_ivp(f, (t0, t_end), self.x.copy(), method=method, rtol=1e-10, atol=1e-12)
        assert sol.success, sol.message
        f(t_end, sol.y[:, -1])
        return self.x.copy()
