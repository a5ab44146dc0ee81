"""The `fmu` block: a Functional Mock-up Unit (FMI 2.0 or 3.0) in a diagram, by model
exchange (its states integrated by blocksim's solvers, its events located by blocksim's
event machinery) or co-simulation (a discrete block that steps it)."""
from __future__ import annotations

import numpy as np

from blocksim.block import ALL, EITHER, Block, In, Jacobian, Out, Sample
from blocksim.errors import SimulationError
from blocksim.params import Param, ParamError

from . import description as fmudesc
from .instance import FmuFault, open_instance, references
from .values import assignments

MAX_EVENT_ROUNDS = 100  # newDiscreteStates rounds at one instant before giving up


class Fmu(Block):
    """A Functional Mock-up Unit (FMI 2.0 or 3.0), by model exchange or co-simulation.

        Plant: {type: fmu, file: plant.fmu, interface: model_exchange,
                parameters: {k: 2.0}, start: {x: 0.1}}
        Plant: {type: fmu, file: plant.fmu, interface: co_simulation, step: 0.01}

    file: the .fmu, relative to the diagram. Loading reads its zip and modelDescription.xml
    only; nothing in the FMU runs before the run. An FMU that ships no binary for this
    platform but its sources is compiled with the machine's C compiler at first use.
    Ports come from the model description: each input variable is an input, each output
    variable an output, named by the variable with every character that cannot be in a port
    name replaced by `_` (`a.b[2]` -> `a_b_2`, `der(x)` -> `der_x`); an FMI 3.0 array keeps
    its shape; Integer and Boolean ports carry their values as numbers. An output's direct
    feedthrough is the inputs the model structure says it depends on.
    parameters: values of the FMU's parameters by name; start: start values of other
    variables (states, inputs) by name. Values are expressions of the diagram's parameters,
    checked against the variable's type and min/max.
    model_exchange: the FMU's continuous states are the block's states, integrated by the
    diagram's solver; its event indicators are zero crossings located to event_tol, its time
    events (nextEventTime) are landed on exactly, completedIntegratorStep is called after
    every accepted step (a step event ends the step there), and the states are read again
    after every event. Where the FMU gives directional derivatives they are its Jacobian for
    `blocksim linearize`.
    co_simulation: a discrete block of period `step` (s): at each hit it outputs what the
    last doStep left (no feedthrough), then sets its inputs and calls doStep over one period.
    An FMU that reports an error ends the run naming the block, the time, the function, its
    status and the FMU's log; its warnings are printed with the run's messages.
    `blocksim check` lists the FMU's ports, parameters and states.
    """

    type = "fmu"
    time_dependent = True
    params = (
        Param("file", "path", doc="the FMU (.fmu file), relative to the diagram"),
        Param("interface", "choice", "model_exchange", "how it is simulated",
              choices=("model_exchange", "co_simulation")),
        Param("parameters", "data", None, "the FMU's parameters: {name: value}"),
        Param("start", "data", None, "start values of its other variables: {name: value}"),
        Param("step", "scalar", None, "co_simulation: the communication step (s)",
              positive=True),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        try:
            d = self.desc = fmudesc.read(self.p.file)
            fmudesc.check_interface(d, self.p.interface)
        except fmudesc.FmuError as e:
            raise ParamError("file" if "provide" not in str(e) else "interface", str(e)) from None
        try:
            fmudesc.check_platform(d, self.p.interface)
        except fmudesc.FmuError as e:
            raise ParamError("file", str(e)) from None
        self.cosim = self.p.interface == "co_simulation"
        if self.cosim and self.p.step is None:
            raise ParamError("interface", "co_simulation needs `step`, the communication step (s)")
        if not self.cosim and self.p.step is not None:
            raise ParamError("step", "`step` is the communication step of co_simulation; "
                                     "model exchange takes the diagram's solver steps")
        startable = {n: v for n, v in d.variables.items() if v.causality not in
                     ("parameter", "structuralParameter", "calculatedParameter")
                     and (v.start is not None or v.causality == "input")}
        self.values = (assignments(self.p.parameters, d.parameters, self.p, name, "parameters",
                                   "parameter")
                       + assignments(self.p.start, startable, self.p, name, "start", "variable"))
        if any(v.kind == "string" for v, _ in self.values):
            raise ParamError("parameters", "String variables cannot be set by the block")
        if self.cosim:
            self.sample = Sample(self.p.step)
        self.nx = 0 if self.cosim else len(d.states)
        self.nz = 0 if self.cosim else d.event_indicators
        self.instance = None

    # ---- declarations -----------------------------------------------------------------------
    def ports(self):
        d = self.desc
        ins = [In(v.port, shape=v.shape, doc=_doc(v)) for v in d.inputs]
        outs = []
        for v in d.outputs:
            feed = () if self.cosim else d.feedthrough.get(v.port)
            outs.append(Out(v.port, shape=v.shape, feedthrough=ALL if feed is None else feed,
                            doc=_doc(v)))
        return ins, outs

    def continuous_state(self):
        if self.cosim:
            return None
        x0 = np.zeros(self.nx)
        given = {v.name: value for v, value in self.values}
        for k, name in enumerate(self.desc.states):
            value = given.get(name, fmudesc.parse_start(self.desc.variables[name]))
            x0[k] = 0.0 if value is None else float(value)
        return x0

    def discrete_state(self):
        if self.cosim:  # the outputs the last doStep left
            return np.zeros(sum(v.size for v in self.desc.outputs))
        return np.zeros(1)  # 1 once the FMU is initialised in this run

    def zero_crossings(self):
        return None if self.cosim else (EITHER,) * self.nz

    def describe(self):
        """Lines for `blocksim check`: the FMU, its parameters and states."""
        d = self.desc
        lines = [f"FMU {d.path.name}: FMI {d.md.fmiVersion}, {d.md.modelName}, "
                 f"{self.p.interface}; provides {' and '.join(d.interfaces)}"]
        given = {v.name: value for v, value in self.values}
        params = [f"{n} = {given.get(n, v.start)}" for n, v in d.parameters.items()]
        if params:
            lines.append("parameters: " + ", ".join(params))
        if d.states:
            lines.append("states: " + ", ".join(d.states)
                         + (f"; {self.nz} event indicator(s)" if self.nz else ""))
        return lines

    # ---- wiring ---------------------------------------------------------------------------
    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self.instance = None
        self._next = None  # the FMU's next time event, once announced

    def _open(self):
        """The FMU instance of this block, loaded on the first run (unpacked, compiled when
        it has only sources)."""
        if self.instance is None:
            inst = self.instance = open_instance(self.desc, self.p.interface, self.name)
            self._prepare(inst)
        return self.instance

    def _prepare(self, inst):
        """Pointers to the ports, states and buffers for the calls of every evaluation."""
        d, keep = self.desc, []

        def refs(variables, values):
            args, vr = references(inst, variables, values)
            keep.append((vr, values))
            return args
        self._in_calls = []
        for v, view in zip(d.inputs, self.u):
            self._in_calls.append(self._port_call(inst, v, view, refs, set_=True))
        self._out_calls = []
        targets = self.y if not self.cosim else _split(self.xd, d.outputs)
        for v, view in zip(d.outputs, targets):
            self._out_calls.append(self._port_call(inst, v, view, refs, set_=False))
        if not self.cosim:
            ptr = lambda a: a.ctypes.data_as(np.ctypeslib.ctypes.POINTER(np.ctypeslib.ctypes.c_double))  # noqa: E731
            self._x_ptr, self._dx_ptr = ptr(self.x), ptr(self.dx)
            self._z_ptr = ptr(self.z) if self.nz else None
            self._x_read = np.zeros(self.nx)
            self._x_read_ptr = ptr(self._x_read)
            self._z_after = np.zeros(self.nz)
        self._keep = keep

    def _port_call(self, inst, v, view, refs, set_):
        """(call, copy in, copy out): the get or set of variable v with the port's view."""
        if v.kind == "real" and view.flags.c_contiguous and view.dtype == np.float64:
            args = refs([v], view.reshape(-1))
            return ((inst.set_reals if set_ else inst.get_reals), args, None)
        dtype = {"real": np.float64, "integer": inst.int_dtype, "boolean": inst.bool_dtype}[v.kind]
        buf = np.zeros(v.size, dtype=dtype)
        args = refs([v], buf)
        call = {("real", True): inst.set_reals, ("real", False): inst.get_reals,
                ("integer", True): inst.set_ints, ("integer", False): inst.get_ints,
                ("boolean", True): inst.set_bools, ("boolean", False): inst.get_bools}
        return (call[v.kind, set_], args, (buf, view))

    # ---- the start of a run ---------------------------------------------------------------------
    def _start(self, t):
        """Instantiate (or reset) the FMU and initialise it at t: the values given, the
        inputs, then its first event iteration; its states become the block's."""
        inst = self._open()
        try:
            stop = None
            inst.start(t, stop, None)
            self._set_values(inst)
            inst.enter_initialization(t, stop, None)
            self._set_inputs()
            inst.exit_initialization()
            if not self.cosim:
                self._next = None
                self._event_iteration(inst, t)
                inst.enter_continuous_mode()
                if self.nx:
                    inst.get_states(self._x_ptr, self.nx)
        except FmuFault as e:
            raise self._failure(e, t) from None
        if not self.cosim:
            self.xd[0] = 1.0

    def _set_values(self, inst):
        for var, value in self.values:
            array = np.atleast_1d(np.asarray(value))
            if var.kind == "real":
                buf = array.astype(np.float64).ravel()
                args, vr = references(inst, [var], buf)
                inst.set_reals(args)
            elif var.kind == "integer":
                buf = array.astype(inst.int_dtype).ravel()
                args, vr = references(inst, [var], buf)
                inst.set_ints(args)
            else:
                buf = array.astype(inst.bool_dtype).ravel()
                args, vr = references(inst, [var], buf)
                inst.set_bools(args)

    def _set_inputs(self):
        for call, args, copy in self._in_calls:
            if copy is not None:
                buf, view = copy
                buf[:] = view.reshape(-1)
            call(args)

    def _get_outputs(self):
        for call, args, copy in self._out_calls:
            call(args)
            if copy is not None:
                buf, view = copy
                view.reshape(-1)[:] = buf

    def _event_iteration(self, inst, t):
        """newDiscreteStates until the FMU settles; the next time event noted. Returns
        whether the FMU changed its states."""
        changed = False
        for _ in range(MAX_EVENT_ROUNDS):
            again, stop, states_changed, next_time = inst.update_discrete()
            changed |= states_changed
            if stop:
                raise SimulationError(f"the FMU {self.desc.path.name} asked to end the "
                                      "simulation (terminateSimulation)", block=self.name, time=t)
            if not again:
                self._next = next_time
                return changed
        raise SimulationError(f"the FMU {self.desc.path.name} did not settle its discrete "
                              f"states in {MAX_EVENT_ROUNDS} rounds", block=self.name, time=t)

    def _failure(self, fault, t):
        log = list(self.instance.log) if self.instance is not None else []
        last = f"; its log: {log[-1]}" if log else ""
        return SimulationError(f"the FMU {self.desc.path.name} failed: {fault}{last}",
                               block=self.name, time=t)

    def notes(self):
        return [f"FMU log: {line}" for line in (self.instance.log if self.instance else ())]

    def log(self):
        """The FMU's warnings and errors of the run, for the run's messages."""
        if self.instance is None:
            return []
        return [line for line in self.instance.log if not line.startswith("[OK]")]

    # ---- model exchange: hot path ------------------------------------------------------------
    def output(self, t):
        if self.cosim:
            np.copyto(self.y_flat, self.xd)
            return
        if self.xd[0] == 0.0:
            self._start(t)
        inst = self.instance
        try:
            inst.set_time(t)
            inst.set_states(self._x_ptr, self.nx)
            self._set_inputs()
            self._get_outputs()
        except FmuFault as e:
            raise self._failure(e, t) from None

    def derivative(self, t):
        inst = self.instance
        try:
            inst.set_time(t)
            inst.set_states(self._x_ptr, self.nx)
            self._set_inputs()
            inst.get_derivatives(self._dx_ptr, self.nx)
        except FmuFault as e:
            raise self._failure(e, t) from None

    def indicator(self, t):
        if not self.nz:
            return
        inst = self.instance
        try:
            inst.set_time(t)
            inst.set_states(self._x_ptr, self.nx)
            self._set_inputs()
            inst.get_indicators(self._z_ptr, self.nz)
        except FmuFault as e:
            raise self._failure(e, t) from None

    def initialize(self, t):
        if self.cosim:
            self._start(t)
            try:
                self._get_outputs()
            except FmuFault as e:
                raise self._failure(e, t) from None
            np.copyto(self.y_flat, self.xd)
        elif self.xd[0] == 0.0:
            self._start(t)

    # ---- model exchange: events -----------------------------------------------------------------
    def crossing(self, t, crossed):
        """An event instant: the FMU's event mode (its indicators' crossings, a time event,
        a step event or inputs that jumped), its event iteration, the states read again.
        True when its states, outputs or indicators changed."""
        inst = self.instance
        try:
            inst.set_time(t)
            inst.set_states(self._x_ptr, self.nx)
            self._set_inputs()
            if self.nz:
                inst.get_indicators(self._z_ptr, self.nz)
            y_before = self.y_flat.copy() if self.y_flat is not None else None
            z_before = self.z.copy()
            inst.enter_event_mode()
            self._set_inputs()
            states_changed = self._event_iteration(inst, t)
            inst.enter_continuous_mode()
            changed = False
            if states_changed and self.nx:
                inst.get_states(self._x_read_ptr, self.nx)
                changed = not np.array_equal(self._x_read, self.x)
                np.copyto(self.x, self._x_read)
                inst.set_states(self._x_ptr, self.nx)
            self._get_outputs()
            if self.nz:
                inst.get_indicators(self._z_ptr, self.nz)
        except FmuFault as e:
            raise self._failure(e, t) from None
        if y_before is not None and not np.array_equal(y_before, self.y_flat):
            changed = True
        return changed or not np.array_equal(z_before, self.z)

    def next_events(self, t):
        """The FMU's next time event (nextEventTime), once each."""
        if self._next is not None and self._next > t and self._next != self._announced:
            self._announced = self._next
            return (self._next,)
        return ()

    _announced = None

    def advance(self, t):
        """After an accepted step (the outputs evaluated at its end): completedIntegratorStep;
        True when the FMU asks for a step event there."""
        try:
            enter, stop = self.instance.completed_step()
        except FmuFault as e:
            raise self._failure(e, t) from None
        if stop:
            raise SimulationError(f"the FMU {self.desc.path.name} asked to end the simulation "
                                  "(terminateSimulation)", block=self.name, time=t)
        return enter

    # ---- co-simulation ------------------------------------------------------------------------
    def update(self, t):
        inst = self.instance
        try:
            self._set_inputs()
            stop, _ = inst.do_step(t, self.p.step)
            self._get_outputs()
        except FmuFault as e:
            raise self._failure(e, t) from None
        if stop:
            raise SimulationError(f"the FMU {self.desc.path.name} asked to end the simulation "
                                  "(terminateSimulation)", block=self.name, time=t)

    # ---- linearisation ----------------------------------------------------------------------------
    def jacobian(self, pade=None):
        """ds/dt = A s + B u, y = C s + D u from the FMU's directional derivatives (model
        exchange, where it provides them), at its current time, states and inputs; None
        otherwise (the block is then differenced)."""
        d = self.desc
        if self.cosim or not d.directional(self.p.interface) or self.instance is None:
            return None
        if any(v.kind != "real" for v in d.inputs + d.outputs) or d.fmi == 3 and \
                any(v.shape for v in d.inputs + d.outputs):
            return None
        known = np.array(d.state_refs + [v.vr for v in d.inputs], dtype=np.uint32)
        unknown = np.array(d.derivatives + [v.vr for v in d.outputs], dtype=np.uint32)
        J = np.zeros((unknown.size, known.size))
        seed, out = np.zeros(known.size), np.zeros(unknown.size)
        inst = self.instance
        try:
            for j in range(known.size):
                seed[:] = 0.0
                seed[j] = 1.0
                inst.directional(unknown, known, seed, out)
                J[:, j] = out
        except FmuFault:
            return None
        n = self.nx
        return Jacobian(J[:n, :n], J[:n, n:], J[n:, :n], J[n:, n:])


def _doc(v):
    kind = "" if v.kind == "real" else f" ({v.kind})"
    return (v.description or v.name) + kind


def _split(flat, variables):
    """Views of `flat` for each variable, in order, of its shape."""
    views, k = [], 0
    for v in variables:
        views.append(flat[k:k + v.size].reshape(v.shape))
        k += v.size
    return views
