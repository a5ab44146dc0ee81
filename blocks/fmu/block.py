"""The `fmu` block: a Functional Mock-up Unit (FMI 2.0 or 3.0) in a diagram, by model
exchange (its states integrated by blocksim's solvers, its events located by blocksim's
event machinery) or co-simulation (a discrete block that steps it)."""
from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np

from blocksim.accel.lowering import Lowering, LoweringError
from blocksim.block import ALL, EITHER, Block, In, Jacobian, Out, Sample
from blocksim.errors import DiagramError, SimulationError
from blocksim.params import Param, ParamError

from . import description as fmudesc
from .instance import (LOG_LINES, Bindings, FmuFault, library_path, open_instance,
                       unpack_dir, unpacked)
from .values import assignments

MAX_EVENT_ROUNDS = 100  # newDiscreteStates rounds at one instant before giving up
# co-simulation with early return: after the outputs in the discrete state, whether a doStep
# returned early, the time it returned at and the end of its period
EARLY = ("returned", "at", "end")
SUPPORT = Path(__file__).parent / "_fmu_rt.c"
LOG_BYTES = 16384  # a compiled run keeps the FMU's last warnings and errors in as many bytes


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
    its shape; Integer and Boolean ports carry their values as numbers; an input left unwired
    reads the variable's start value. An output's direct feedthrough is the inputs the model
    structure says it depends on.
    parameters: values of the FMU's parameters by name; start: start values of other
    variables (states, inputs) by name. Values are expressions of the diagram's parameters,
    checked against the variable's type and min/max.
    model_exchange: the FMU's continuous states are the block's states, integrated by the
    diagram's solver; its event indicators are zero crossings located to event_tol, its time
    events (nextEventTime) are landed on exactly, completedIntegratorStep is called after
    every accepted step (a step event ends the step there), and the states are read again
    after every event. Where the FMU gives directional derivatives they are its Jacobian for
    `blocksim linearize` and for the stiff solvers (radau, bdf, lsoda).
    co_simulation: a discrete block of period `step` (s): at each hit it outputs what the
    last doStep left (no feedthrough), then sets its inputs and calls doStep over one period.
    An FMI 3.0 FMU that may return early (mightReturnEarlyFromDoStep: at an internal event)
    is let do so: the time it returns at is an event instant of the run, where the block
    outputs what that doStep left, sets its inputs and calls doStep from there to the
    period's end (which may return early again); its hits stay on the period's grid.
    An FMU that reports an error ends the run naming the block, the time, the function, its
    status and the FMU's log; in both modes its warnings join the run's messages.
    `blocksim check` lists the FMU's ports, parameters and states, `blocksim blocks fmu FILE`
    everything the FMU declares.
    """

    type = "fmu"
    reads_names = True
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
            fmudesc.check_platform(d)
        except fmudesc.FmuError as e:
            raise ParamError("file", str(e)) from None
        try:
            fmudesc.check_interface(d, self.p.interface)
        except fmudesc.FmuError as e:
            raise ParamError("interface", str(e)) from None
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
        self._shared = np.zeros(1)  # the bits of normal mode's instance pointer (run_data)
        self._lines = np.zeros(LOG_BYTES // 8)  # a compiled run's log, text (run_data)
        self.nx = 0 if self.cosim else sum(d.variables[n].size for n in d.states)
        self._x_start = self.continuous_state() if not self.cosim else np.zeros(0)
        self.nz = 0 if self.cosim else d.event_indicators
        self.early = self.cosim and d.early_return
        self.ny = sum(v.size for v in d.outputs)
        self.instance = None

    # ---- declarations -----------------------------------------------------------------------
    def ports(self):
        d = self.desc
        ins = [In(v.port, shape=v.shape, optional=True, default=_input_default(v),
                  doc=_doc(v)) for v in d.inputs]
        outs = []
        for v in d.outputs:
            feed = () if self.cosim else d.feedthrough.get(v.port)
            outs.append(Out(v.port, shape=v.shape, feedthrough=ALL if feed is None else feed,
                            doc=_doc(v)))
        return ins, outs

    def continuous_state(self):
        if self.cosim:
            return None
        given = {v.name: value for v, value in self.values}
        parts = []
        for name in self.desc.states:  # an FMI 3.0 array state: its elements in order
            var = self.desc.variables[name]
            value = given.get(name, fmudesc.parse_start(var))
            parts.append(np.broadcast_to(0.0 if value is None else value, var.shape).ravel())
        return np.concatenate(parts) if parts else np.zeros(0)

    def discrete_state(self):
        if self.cosim:  # the outputs the last doStep left; early return: EARLY
            return np.zeros(self.ny + (len(EARLY) if self.early else 0))
        return np.zeros(1)  # 1 once `initialize` started the FMU in this run

    def zero_crossings(self):
        if self.cosim:  # early return: no indicators, but handlers at its event instants
            return () if self.early else None
        return (EITHER,) * self.nz

    @classmethod
    def describe_file(cls, path):
        """`blocksim blocks fmu FILE`: the FMU's ports, parameters and states, from its zip
        and model description only."""
        try:
            d = fmudesc.read(path)
        except fmudesc.FmuError as e:
            raise DiagramError(str(e), file=str(path)) from None
        return fmudesc.variables_text(d)

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
            lines.append("states: " + ", ".join(d.states))
        if self.nz:
            lines.append(f"event indicators: {self.nz}")
        return lines

    # ---- wiring ---------------------------------------------------------------------------
    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._held = xd[:self.ny]  # co-simulation: the outputs the last doStep left
        self.instance = None
        self._next = None  # the FMU's next time event, once announced

    def _open(self):
        """The FMU instance of this block, loaded on the first run (unpacked, compiled when
        it has only sources)."""
        if self.instance is None:
            try:
                inst = self.instance = open_instance(self.desc, self.p.interface, self.name)
            except fmudesc.FmuError as e:
                raise SimulationError(str(e), block=self.name) from None
            held = _split(self.xd, self.desc.outputs) if self.cosim else None
            self._calls = Bindings(inst, self.desc, self.u, held or self.y,
                                   self.xd if self.cosim else self.y_flat)
            if not self.cosim:
                self._x_ptr, self._dx_ptr = _ptr(self.x), _ptr(self.dx)
                self._z_ptr = _ptr(self.z) if self.nz else None
                self._x_read = np.zeros(self.nx)
                self._x_read_ptr = _ptr(self._x_read)
        return self.instance

    # ---- the start of a run ---------------------------------------------------------------------
    def _start(self, t):
        """Instantiate (or reset) the FMU and initialise it at t: the values given, the
        inputs, then its first event iteration; its states become the block's."""
        inst = self._open()
        inst.log.clear()
        self._lines[:] = 0.0  # this run's log is the instance's
        try:
            stop = None
            inst.start(t, stop, None)
            self._shared.view(np.uint64)[0] = inst.c or 0
            self._calls.set_values(self.values)
            inst.enter_initialization(t, stop, None)
            self._calls.set_inputs()
            inst.exit_initialization()
            self._next = self._announced = None
            if not self.cosim:
                self._event_iteration(inst, t)
                inst.enter_continuous_mode()
                if self.nx and np.array_equal(self.x, self._x_start):
                    inst.get_states(self._x_ptr, self.nx)  # the FMU's initial states
                elif self.nx:  # a state the run was given (an operating point) wins
                    inst.set_states(self._x_ptr, self.nx)
        except FmuFault as e:
            raise self._failure(e, t) from None
        if not self.cosim:
            self.xd[0] = 1.0

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
        """The FMU's warnings and errors of the run, for the run's messages: those its
        compiled run kept, else those of normal mode's instance (a normal run empties the
        compiled run's; under scipy's stiff solvers the compiled code calls normal mode's
        instance, whose logger is fmpy's)."""
        text = self._lines.view(np.uint8).tobytes().split(b"\0", 1)[0]
        if text:
            return text.decode("utf-8", "replace").splitlines()[-LOG_LINES:]
        if self.instance is None:
            return []
        return [line for line in self.instance.log if not line.startswith("[OK]")]

    # ---- model exchange: hot path ------------------------------------------------------------
    def output(self, t):
        if self.cosim:
            np.copyto(self.y_flat, self._held)
            return
        inst = self.instance
        if self.xd[0] == 0.0 or inst is None:
            return  # the run's first evaluation, before `initialize` starts the FMU
        try:
            inst.set_time(t)
            inst.set_states(self._x_ptr, self.nx)
            self._calls.set_inputs()
            self._calls.get_outputs()
        except FmuFault as e:
            raise self._failure(e, t) from None

    def derivative(self, t):
        inst = self.instance
        try:
            inst.set_time(t)
            inst.set_states(self._x_ptr, self.nx)
            self._calls.set_inputs()
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
            self._calls.set_inputs()
            inst.get_indicators(self._z_ptr, self.nz)
        except FmuFault as e:
            raise self._failure(e, t) from None

    def initialize(self, t):
        if self.cosim:
            self._start(t)
            try:
                self._calls.get_outputs()
            except FmuFault as e:
                raise self._failure(e, t) from None
            np.copyto(self.y_flat, self._held)
        else:
            self._start(t)

    # ---- model exchange: events -----------------------------------------------------------------
    def crossing(self, t, crossed):
        """An event instant: co-simulation, the early return's (see `returned`); model
        exchange, the FMU's event mode (its indicators' crossings, a time event,
        a step event or inputs that jumped), its event iteration, the states read again.
        True when its states, outputs or indicators changed."""
        if self.cosim:
            return self.returned(t)
        inst = self.instance
        try:
            inst.set_time(t)
            inst.set_states(self._x_ptr, self.nx)
            self._calls.set_inputs()
            if self.nz:
                inst.get_indicators(self._z_ptr, self.nz)
            y_before = self.y_flat.copy() if self.y_flat is not None else None
            z_before = self.z.copy()
            inst.enter_event_mode()
            self._calls.set_inputs()
            states_changed = self._event_iteration(inst, t)
            inst.enter_continuous_mode()
            changed = False
            if states_changed and self.nx:
                inst.get_states(self._x_read_ptr, self.nx)
                changed = not np.array_equal(self._x_read, self.x)
                np.copyto(self.x, self._x_read)
                inst.set_states(self._x_ptr, self.nx)
            self._calls.get_outputs()
            if self.nz:
                inst.get_indicators(self._z_ptr, self.nz)
        except FmuFault as e:
            raise self._failure(e, t) from None
        if y_before is not None and not np.array_equal(y_before, self.y_flat):
            changed = True
        return changed or not np.array_equal(z_before, self.z)

    def next_events(self, t):
        """The FMU's next time event (nextEventTime), or the time a doStep returned early
        at (co-simulation), once each."""
        later = self._next if not self.cosim else self.xd[self.ny + 1] \
            if self.xd[self.ny] else None
        if later is not None and later > t and later != self._announced:
            self._announced = later
            return (later,)
        return ()

    _announced = None

    def advance(self, t):
        """After an accepted step (the outputs evaluated at its end): completedIntegratorStep;
        True when the FMU asks for a step event there. (Co-simulation: nothing.)"""
        if self.cosim:
            return False
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
        self._do_step(t, self.p.step)

    def returned(self, t):
        """At the time a doStep returned early: the outputs it left, and doStep from there
        to the period's end. True when it did so."""
        xd, ny = self.xd, self.ny
        if not (xd[ny] and xd[ny + 1] <= t):
            return False
        np.copyto(self.y_flat, self._held)
        self._do_step(t, xd[ny + 2] - t)
        return True

    def _do_step(self, t, h):
        """Inputs, doStep from t over h, outputs into the discrete state (and, where it may
        return early, where it returned: before t + h, the end the FMU compares with)."""
        inst = self.instance
        try:
            self._calls.set_inputs()
            stop, reached = inst.do_step(t, h)
            self._calls.get_outputs()
        except FmuFault as e:
            raise self._failure(e, t) from None
        if stop:
            raise SimulationError(f"the FMU {self.desc.path.name} asked to end the simulation "
                                  "(terminateSimulation)", block=self.name, time=t)
        if self.early:
            end = t + h
            early = reached < end
            if early and not reached > t:
                raise SimulationError(f"the FMU {self.desc.path.name} returned early from "
                                      f"doStep at {reached:.17g} without advancing",
                                      block=self.name, time=t)
            self.xd[self.ny:] = (1.0, reached, end) if early else (0.0, 0.0, 0.0)

    # ---- run data: the values given (flat, P_given), the step (co-simulation) or
    # continuous_state() (model exchange, P_x_start), and the time event announced last
    # (W_next: the FMU's nextEventTime, or where a doStep returned early); they come from the FMU's description and the block's parameters, which are
    # structure (a change compiles the diagram again)
    def declare(self, d):
        for name, value in self.derive(self.p).items():
            d.derived(name, np.shape(value))
        if not self.cosim or self.early:  # the time event announced last
            d.work("next", [np.nan])

    def derive(self, p):
        given = np.concatenate([np.ravel(np.asarray(value, dtype=float))
                                for _, value in self.values] or [np.zeros(0)])
        return {"given": given, **({"step": p.step} if self.cosim else
                                   {"x_start": self._x_start})}

    # ---- compiled form: the FMU's library opened by dlopen in the generated C, its FMI
    # functions called there (blocks/fmu/_fmu_rt.c); memory slot 0 holds the instance. "start" is a function of the block's
    # own, called by "initialize" at the start of every run. Under scipy's
    # stiff solvers the handlers (start, crossing, advance) run interpreted and the compiled
    # evaluations attach to the instance normal mode started (data array `instance`).
    def lower(self, c):
        d = self.desc
        if any(v.kind != "real" and v.shape for v in d.inputs + d.outputs) or \
                any(v.kind != "real" and np.ndim(value) for v, value in self.values):
            raise LoweringError("has Integer or Boolean arrays, which its compiled form does "
                                "not carry")
        w = _CWriter(self, c)
        if self.cosim:
            code = {"start": w.start(),
                    "initialize": w.join(w.call_start(), w.the, w.outputs("xd"), w.copy_held()),
                    "output": w.copy_held(),
                    "update": w.join(w.the, w.do_step("P_step[0]"))}
            if self.early:
                code.update(indicator="", advance="", crossing=w.returned())
        else:
            code = {"start": w.start(),
                    "output": w.join(w.the_started(), w.state(), w.outputs("out")),
                    "initialize": w.call_start(),
                    "derivative": w.join(w.the, w.state(), w.call(
                        f"F->get_dx(F->c, dx, {self.nx})",
                        "GetDerivatives" if d.fmi == 2 else "GetContinuousStateDerivatives")),
                    "indicator": w.join(w.the, w.state(), w.indicators()) if self.nz else "",
                    "crossing": w.crossing(),
                    "advance": w.join(w.the, "int enter_ = 0, stop_ = 0;",
                                      w.call("fmu_completed(F, &enter_, &stop_)",
                                             "CompletedIntegratorStep"),
                                      w.stopping(), "if (enter_)", "    STEP_EVENT();")}
        code["release"] = ("if (rt->mem[mem0_].size) {\n    fmu_close(fmu_of(rt->mem[mem0_].data));"
                           "\n    memset(rt->mem[mem0_].data, 0, sizeof(FmuRt *));\n}")
        kind = "co-simulation" if self.cosim else "model exchange"
        return Lowering(code, support=(str(SUPPORT),), memory=1, data=("instance", "log"),
                        hosted=f"calls the FMU's binary, opened from {d.path.name} at run time",
                        doc=f"FMU {d.path.name}, {kind}, FMI {d.md.fmiVersion}")

    def run_data(self, start, stop):
        """`instance`: where normal mode's instance is, once it starts (the compiled
        evaluations under scipy's stiff solvers call it); `log`: where the compiled run's
        own instance writes the lines `log` reads; the FMU is unpacked (and built from its
        sources) for the compiled code to open."""
        try:
            unpacked(self.desc.path, self.desc)
        except fmudesc.FmuError as e:  # before the compiled run: as a compile that fails
            raise DiagramError(str(e), block=self.name, param="file") from None
        return {"instance": self._shared, "log": self._lines}

    # ---- linearisation ----
    def mode_text(self):
        """Its discrete state only says whether the FMU was initialised in this run."""
        return "FMU initialised" if self.cosim or self.xd[0] else "FMU not initialised"
    def jacobian(self, pade=None):
        """ds/dt = A s + B u, y = C s + D u from the FMU's directional derivatives (model
        exchange, where it provides them), at its current time and the block's states and
        inputs (set into the FMU first); None otherwise (the block is then differenced).
        It serves `blocksim linearize` and the implicit solvers' state Jacobian."""
        d = self.desc
        if self.cosim or not d.directional(self.p.interface) or self.instance is None:
            return None
        if any(v.kind != "real" for v in d.inputs + d.outputs) or self.nx != len(d.states) \
                or d.fmi == 3 and any(v.shape for v in d.inputs + d.outputs):
            return None  # a seed per scalar only
        known = np.array(d.state_refs + [v.vr for v in d.inputs], dtype=np.uint32)
        unknown = np.array(d.derivatives + [v.vr for v in d.outputs], dtype=np.uint32)
        J = np.zeros((unknown.size, known.size))
        seed, out = np.zeros(known.size), np.zeros(unknown.size)
        inst = self.instance
        try:
            inst.set_states(self._x_ptr, self.nx)
            self._calls.set_inputs()
            for j in range(known.size):
                seed[:] = 0.0
                seed[j] = 1.0
                inst.directional(unknown, known, seed, out)
                J[:, j] = out
        except FmuFault:
            return None
        n = self.nx
        return Jacobian(J[:n, :n], J[:n, n:], J[n:, :n], J[n:, n:])


class _CWriter:
    """The C statements of an fmu block's compiled form, one per line: each FMI call's status
    checked (FMU_FAILED ends the run as normal mode's FmuFault does)."""

    KINDS = {"real": ("Real", "Float64", "reals"), "integer": ("Integer", "Int32", "int"),
             "boolean": ("Boolean", "Boolean", "bool")}

    def __init__(self, block, c):
        self.b, self.c, self.d = block, c, block.desc
        self.file = _c_string(self.d.path.name)
        self.ret = "return;"
        self.vr_in = c.table("vr_in", [v.vr for v in self.d.inputs] or [0])
        self.vr_out = c.table("vr_out", [v.vr for v in self.d.outputs] or [0])
        self.lib = _c_string(library_path(unpack_dir(self.d.path), self.d, block.p.interface))

    def the_started(self):
        """`the`, or nothing to compute yet: the run's first evaluation comes before
        "initialize" starts the FMU (as Block.output returns there)."""
        return (f"FmuRt *F = fmu_current(rt, mem0_, D_instance, {self.lib}, {self.d.fmi}, "
                f"{int(not self.b.cosim)});\nif (xd[0] == 0.0 || !F)\n    return;\nint st_;")

    @property
    def the(self):
        """The block's instance, F: its own, or normal mode's under scipy's stiff solvers."""
        return (f"FmuRt *F = fmu_current(rt, mem0_, D_instance, {self.lib}, {self.d.fmi}, "
                f"{int(not self.b.cosim)});\n"
                f"if (!F) {{ FAIL(\"the FMU %s is not started\", {self.file}); {self.ret} }}\n"
                "int st_;")

    @staticmethod
    def join(*parts):
        return "\n".join(p for p in parts if p)

    def call(self, call, name):
        return (f"if ((st_ = {call}) > 1) {{ FMU_FAILED({self.file}, \"fmi{self.d.fmi}{name}\", "
                f"st_); {self.ret} }}")

    def fail(self, text):
        return f"{{ FAIL(\"the FMU %s {text}\", {self.file}); {self.ret} }}"

    def kind(self, v):
        return self.KINDS[v.kind][self.d.fmi - 2]

    def inputs(self):
        lines = []
        for k, v in enumerate(self.d.inputs):
            if v.kind == "real":
                call = (f"fmu_set_reals(F, (const unsigned int *)&{self.vr_in}[{k}], 1, "
                        f"in_{v.port}, {v.size})")
            else:
                call = f"fmu_set_{self.KINDS[v.kind][2]}(F, {self.vr_in}[{k}], in_{v.port}[0])"
            lines.append(self.call(call, "Set" + self.kind(v)))
        return self.join(*lines)

    def outputs(self, target):
        lines, off = [], 0
        for k, v in enumerate(self.d.outputs):
            dest = f"out_{v.port}" if target == "out" else f"xd + {off}"
            if v.kind == "real":
                call = (f"fmu_get_reals(F, (const unsigned int *)&{self.vr_out}[{k}], 1, {dest}, "
                        f"{v.size})")
            else:
                call = f"fmu_get_{self.KINDS[v.kind][2]}(F, {self.vr_out}[{k}], {dest})"
            lines.append(self.call(call, "Get" + self.kind(v)))
            off += v.size
        return self.join(*lines)

    def copy_held(self):
        lines, off = [], 0
        for v in self.d.outputs:
            lines.append(self.c.loop(v.size, f"out_{v.port}[i] = xd[{off} + i];"))
            off += v.size
        return self.join(*lines)

    def do_step(self, h):
        """Inputs, doStep from t over `h`, outputs into xd; where the FMU may return early,
        where it returned after them (Fmu._do_step)."""
        lines = [self.inputs(), "int stop_ = 0;", "double reached_ = 0.0, h_ = " + h + ";",
                 self.call("fmu_do_step(F, t, h_, &stop_, &reached_)", "DoStep"),
                 self.outputs("xd"), self.stopping()]
        if self.b.early:
            ny = self.b.ny
            lines += [
                f"if (reached_ < t + h_ && !(reached_ > t)) {{ FAIL(\"the FMU %s returned early "
                f"from doStep at %.17g without advancing\", {self.file}, reached_); "
                f"{self.ret} }}",
                f"xd[{ny}] = reached_ < t + h_;",
                f"xd[{ny + 1}] = xd[{ny}] ? reached_ : 0.0;",
                f"xd[{ny + 2}] = xd[{ny}] ? t + h_ : 0.0;"]
        return self.join(*lines)

    def returned(self):
        """Block.crossing of co-simulation (Fmu.returned): at the time a doStep returned
        early, the outputs it left and doStep on to the period's end; then the time the last
        doStep returned early at scheduled, once."""
        ny = self.b.ny
        self.ret = "return changed;"
        code = self.join(
            self.the, f"if (xd[{ny}] != 0.0 && xd[{ny + 1}] <= t) {{",
            self.copy_held(), self.do_step(f"xd[{ny + 2}] - t"), "changed = 1;", "}",
            f"if (xd[{ny}] != 0.0 && xd[{ny + 1}] > t && xd[{ny + 1}] != W_next[0]) {{",
            f"    W_next[0] = xd[{ny + 1}];", "    SCHEDULE(W_next[0]);", "}")
        self.ret = "return;"
        return code

    def state(self):
        return self.join(self.call("F->set_time(F->c, t)", "SetTime"),
                         self.call(f"F->set_x(F->c, x, {self.b.nx})", "SetContinuousStates"),
                         self.inputs())

    def indicators(self):
        return self.call(f"F->get_z(F->c, z, {self.b.nz})", "GetEventIndicators")

    def stopping(self):
        return "if (stop_) " + self.fail("asked to end the simulation (terminateSimulation)")

    def iteration(self):
        """newDiscreteStates until the FMU settles; sc_ says whether its states changed."""
        rounds = MAX_EVENT_ROUNDS
        return self.join(
            "int sc_ = 0;", "for (int r_ = 0;; r_++) {",
            f"    if (r_ == {rounds}) "
            + self.fail(f"did not settle its discrete states in {rounds} rounds"),
            "    int again_ = 0, stop_ = 0, ch_ = 0;",
            "    " + self.call("fmu_update(F, &again_, &stop_, &ch_)",
                               "NewDiscreteStates" if self.d.fmi == 2 else "UpdateDiscreteStates"),
            "    sc_ |= ch_;", "    " + self.stopping(), "    if (!again_)", "        break;",
            "}")

    def call_start(self):
        """The start (a function of its own, `start`), the caller returning if it failed."""
        return f"{self.c.prefix}start(rt, t);\nif (rt->error)\n    return;"

    def start(self):
        """Instantiate (first run) or reset, set the values given, initialise with the inputs;
        model exchange: the first event iteration, the states read."""
        b, d = self.b, self.d
        unzip = unpack_dir(d.path)
        token = d.md.guid if d.fmi == 2 else d.md.instantiationToken
        values, off = [], 0
        for var, value in b.values:
            size = int(np.size(value))
            call = (f"fmu_set_reals(F, (const unsigned int *)&vr_, 1, P_given + {off}, {size})"
                    if var.kind == "real" else
                    f"fmu_set_{self.KINDS[var.kind][2]}(F, vr_, P_given[{off}])")
            values.append(f"{{ unsigned int vr_ = {var.vr}u; "
                          f"{self.call(call, 'Set' + self.kind(var))} }}")
            off += size
        lines = [
            "FmuRt *F = fmu_of(GROW(0, 1));", "int st_;", "if (!F) {", "    char why_[400];",
            f"    F = fmu_open({_c_string(library_path(unzip, d, b.p.interface))}, {d.fmi}, "
            f"{int(not b.cosim)}, {int(b.early)}, {_c_string(token)}, {_c_string(b.name)},",
            f"                 {_c_string((unzip / 'resources').as_uri())}, NULL, why_, "
            "sizeof why_);",
            "    if (!F) { FAIL(\"the FMU %s could not be loaded: %s\", " + self.file
            + ", why_); return; }", "    memcpy(GROW(0, 1), &F, sizeof F);", "} else",
            "    " + self.call("F->reset(F->c)", "Reset"),
            "fmu_keep_lines(F, (double *)D_log, N_log);",
            self.call("fmu_start(F, t)", "SetupExperiment") if d.fmi == 2 else "",
            *values, self.call("fmu_enter_init(F, t)", "EnterInitializationMode"),
            self.inputs(), self.call("F->exit_init(F->c)", "ExitInitializationMode")]
        if b.early:
            lines.append("W_next[0] = NAN;")
        if not b.cosim:
            lines += ["W_next[0] = NAN;", self.iteration(),
                      self.call("F->enter_ct(F->c)", "EnterContinuousTimeMode"),
                      self.state_start() if b.nx else "", "xd[0] = 1.0;"]
        return self.join(*lines)

    def state_start(self):
        """The FMU's initial states, unless the run was given others (x differs from the
        block's continuous_state(), P_x_start): those are set into the FMU."""
        nx = self.b.nx
        return self.join(
            "int given_ = 0;", self.c.loop(nx, "if (x[i] != P_x_start[i]) given_ = 1;"),
            "if (given_)",
            "    " + self.call(f"F->set_x(F->c, x, {nx})", "SetContinuousStates"),
            "else",
            "    " + self.call(f"F->get_x(F->c, x, {nx})", "GetContinuousStates"))

    def crossing(self):
        """Block.crossing: event mode, the iteration, states re-read; changed when states,
        outputs or indicators changed; the next time event scheduled once."""
        b, d = self.b, self.d
        self.ret = "return changed;"
        nx, nz = b.nx, b.nz
        ny = sum(v.size for v in d.outputs)
        keep = [f"double y0_[{max(ny, 1)}], z0_[{max(nz, 1)}];", "int k_ = 0;"]
        keep += [self.c.loop(v.size, f"y0_[k_++] = out_{v.port}[i];") for v in d.outputs]
        keep.append(self.c.loop(nz, "z0_[i] = z[i];"))
        compare = ["k_ = 0;"]
        compare += [self.c.loop(v.size, f"if (y0_[k_++] != out_{v.port}[i]) changed = 1;")
                    for v in d.outputs]
        compare.append(self.c.loop(nz, "if (z0_[i] != z[i]) changed = 1;"))
        reread = "(void)sc_;" if not nx else self.join(
            "if (sc_) {", f"    double xr_[{nx}];",
            "    " + self.call(f"F->get_x(F->c, xr_, {nx})", "GetContinuousStates"),
            "    " + self.c.loop(nx, "if (xr_[i] != x[i]) changed = 1; x[i] = xr_[i];"),
            "    " + self.call(f"F->set_x(F->c, x, {nx})", "SetContinuousStates"), "}")
        code = self.join(
            self.the, self.state(), self.indicators() if nz else "", *keep,
            self.call("F->enter_event(F->c)", "EnterEventMode"), self.inputs(), self.iteration(),
            self.call("F->enter_ct(F->c)", "EnterContinuousTimeMode"), reread,
            self.outputs("out"), self.indicators() if nz else "", *compare,
            "if (!isnan(F->next) && F->next > t && F->next != W_next[0]) {",
            "    W_next[0] = F->next;", "    SCHEDULE(F->next);", "}")
        self.ret = "return;"
        return code


def _ptr(array):
    return array.ctypes.data_as(ctypes.POINTER(ctypes.c_double))


def _c_string(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _input_default(v):
    """What an unwired input reads: the variable's start value (one number), else 0."""
    start = fmudesc.parse_start(v)
    return float(np.ravel(start)[0]) if start is not None and np.size(start) else 0.0


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
