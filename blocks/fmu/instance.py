"""One FMU instance in a run (normal mode): unpacked once per file into blocksim's cache, its
sources compiled when it ships no binary for this platform, loaded and instantiated through
fmpy, then called on the hot path through the FMI functions fmpy bound (pointers to the
block's own buffers prepared once, no allocation per call).

`Fmi2` and `Fmi3` give the block one set of calls for both FMI versions. A call that returns
Error, Fatal or Discard raises `FmuFault` with the function and the status; the block turns
it into a SimulationError with the FMU's log.
"""
from __future__ import annotations

import collections
import ctypes
import hashlib
import os
import shutil
import tempfile
import zipfile
from ctypes import POINTER, byref, c_double, c_int, c_uint, c_bool, c_size_t
from pathlib import Path

import numpy as np

from . import description as fmudesc

STATUS = ("OK", "Warning", "Discard", "Error", "Fatal", "Pending")
LOG_LINES = 50  # the FMU's last log lines kept for a failed run's notes


class FmuFault(Exception):
    """An FMI call that failed: `function`, `status` (an index into STATUS)."""

    def __init__(self, function, status):
        super().__init__(f"{function} returned {STATUS[status] if 0 <= status < 6 else status}")
        self.function, self.status = function, status


def unpacked(path, description):
    """The FMU at `path` unpacked into the cache (one folder per content, made atomically),
    its binary for this platform compiled from its sources when it has none. Returns the
    folder; FmuError when the sources do not build."""
    from blocksim.fmi.build import BuildError, compile_sources, platform_dir
    target = unpack_dir(path)
    root = target.parent
    if not (target / "modelDescription.xml").is_file():
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=root, prefix=".unpack-"))
        try:
            with zipfile.ZipFile(path) as zf:
                for member in zf.infolist():
                    dest = (tmp / member.filename).resolve()
                    if not str(dest).startswith(str(tmp.resolve())):
                        continue  # a name reaching outside the folder is not unpacked
                    zf.extract(member, tmp)
            if platform_dir(description.fmi) not in description.platforms:
                try:
                    compile_sources(tmp, description.md)
                except BuildError as e:
                    raise fmudesc.FmuError(f"{Path(path).name} has no binary for this "
                                           f"platform and its sources do not build: {e}") from None
            try:
                os.rename(tmp, target)
            except OSError:  # another process unpacked it first
                pass
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def unpack_dir(path):
    """Where the FMU at `path` is (or will be) unpacked: a folder of blocksim's cache named
    after its content."""
    from blocksim.accel.toolchain import cache_dir
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:20]
    return cache_dir().parent / "fmu" / digest


def library_path(unzipdir, description, interface):
    from blocksim.fmi.build import library_suffix, platform_dir
    return (Path(unzipdir) / "binaries" / platform_dir(description.fmi)
            / (description.identifier(interface) + library_suffix()))


def _ptr(array, ctype):
    return array.ctypes.data_as(POINTER(ctype))


class _Instance:
    """What both versions share: loading through fmpy, the log, status checks."""

    def __init__(self, description, interface, unzipdir, name):
        self.desc, self.interface = description, interface
        self.log = collections.deque(maxlen=LOG_LINES)
        self.name = name
        self.unzipdir = unzipdir
        self.fmu = self._load(str(unzipdir), description.identifier(interface))
        self.c = None

    def logged(self, status, message):
        self.log.append(f"[{STATUS[status] if 0 <= status < 6 else status}] {message}")

    def check(self, status, function):
        if status > 1:
            raise FmuFault(function, status)

    def free(self):
        if self.c is not None:
            self.fmu.freeInstance()
            self.c = None


class Fmi2(_Instance):
    """FMI 2.0 calls."""

    def _load(self, unzipdir, identifier):
        from fmpy import fmi2
        cls = fmi2.FMU2Model if self.interface == "model_exchange" else fmi2.FMU2Slave
        fmu = cls(guid=self.desc.md.guid, unzipDirectory=unzipdir, modelIdentifier=identifier,
                  instanceName=self.name)

        def logger(env, instance, status, category, message):
            self.logged(status, message.decode("utf-8", "replace"))
        self._logger = fmi2.fmi2CallbackLoggerTYPE(logger)
        callbacks = fmi2.fmi2CallbackFunctions()
        callbacks.logger = self._logger
        callbacks.allocateMemory = fmi2.fmi2CallbackAllocateMemoryTYPE(fmi2.calloc)
        callbacks.freeMemory = fmi2.fmi2CallbackFreeMemoryTYPE(fmi2.free)
        try:  # fmpy's proxy formats the printf-style message before it reaches Python
            from fmpy.logging import addLoggerProxy
            addLoggerProxy(byref(callbacks))
        except Exception:
            pass
        self._callbacks = callbacks
        d = fmu.dll
        self._set_real, self._get_real = d.fmi2SetReal, d.fmi2GetReal
        self._set_int, self._get_int = d.fmi2SetInteger, d.fmi2GetInteger
        self._set_bool, self._get_bool = d.fmi2SetBoolean, d.fmi2GetBoolean
        if self.interface == "model_exchange":
            self._set_time, self._set_x = d.fmi2SetTime, d.fmi2SetContinuousStates
            self._get_dx, self._get_z = d.fmi2GetDerivatives, d.fmi2GetEventIndicators
            self._get_x = d.fmi2GetContinuousStates
            self._completed = d.fmi2CompletedIntegratorStep
        else:
            self._do_step = d.fmi2DoStep
        self._dd = d.fmi2GetDirectionalDerivative
        return fmu

    def start(self, start, stop, tolerance):
        """Instantiate (or reset), set up the experiment; ready for start values."""
        if self.c is None:
            self.fmu.instantiate(callbacks=self._callbacks, loggingOn=True)
            self.c = self.fmu.component
        else:
            self.check(self.fmu.fmi2Reset(self.c), "fmi2Reset")
        self.check(self.fmu.fmi2SetupExperiment(self.c, tolerance is not None, tolerance or 0.0,
                                                start, stop is not None, stop or 0.0),
                   "fmi2SetupExperiment")

    def enter_initialization(self, start, stop, tolerance):
        self.check(self.fmu.fmi2EnterInitializationMode(self.c), "fmi2EnterInitializationMode")

    def exit_initialization(self):
        self.check(self.fmu.fmi2ExitInitializationMode(self.c), "fmi2ExitInitializationMode")

    # values: (value references, count, values) as prepared pointers
    def set_reals(self, refs):
        vr, n, values = refs
        self.check(self._set_real(self.c, vr, n, values), "fmi2SetReal")

    def get_reals(self, refs):
        vr, n, values = refs
        self.check(self._get_real(self.c, vr, n, values), "fmi2GetReal")

    def set_ints(self, refs):
        vr, n, values = refs
        self.check(self._set_int(self.c, vr, n, values), "fmi2SetInteger")

    def get_ints(self, refs):
        vr, n, values = refs
        self.check(self._get_int(self.c, vr, n, values), "fmi2GetInteger")

    def set_bools(self, refs):
        vr, n, values = refs
        self.check(self._set_bool(self.c, vr, n, values), "fmi2SetBoolean")

    def get_bools(self, refs):
        vr, n, values = refs
        self.check(self._get_bool(self.c, vr, n, values), "fmi2GetBoolean")

    int_type, bool_type = c_int, c_int
    int_dtype, bool_dtype = np.int32, np.int32

    # model exchange
    def set_time(self, t):
        self.check(self._set_time(self.c, t), "fmi2SetTime")

    def set_states(self, x, n):
        self.check(self._set_x(self.c, x, n), "fmi2SetContinuousStates")

    def get_states(self, x, n):
        self.check(self._get_x(self.c, x, n), "fmi2GetContinuousStates")

    def get_derivatives(self, dx, n):
        self.check(self._get_dx(self.c, dx, n), "fmi2GetDerivatives")

    def get_indicators(self, z, n):
        self.check(self._get_z(self.c, z, n), "fmi2GetEventIndicators")

    def enter_event_mode(self):
        self.check(self.fmu.fmi2EnterEventMode(self.c), "fmi2EnterEventMode")

    def update_discrete(self):
        """One round of the event iteration: (again, terminate, states changed, next event
        time or None)."""
        from fmpy.fmi2 import fmi2EventInfo
        info = fmi2EventInfo()
        self.check(self.fmu.fmi2NewDiscreteStates(self.c, byref(info)), "fmi2NewDiscreteStates")
        return (bool(info.newDiscreteStatesNeeded), bool(info.terminateSimulation),
                bool(info.valuesOfContinuousStatesChanged),
                info.nextEventTime if info.nextEventTimeDefined else None)

    def enter_continuous_mode(self):
        self.check(self.fmu.fmi2EnterContinuousTimeMode(self.c), "fmi2EnterContinuousTimeMode")

    def completed_step(self):
        """(enter event mode, terminate) after an accepted step."""
        enter, stop = c_int(0), c_int(0)
        self.check(self._completed(self.c, 1, byref(enter), byref(stop)),
                   "fmi2CompletedIntegratorStep")
        return bool(enter.value), bool(stop.value)

    def directional(self, unknown, known, seed, out):
        self.check(self._dd(self.c, _ptr(unknown, c_uint), unknown.size, _ptr(known, c_uint),
                            known.size, _ptr(seed, c_double), _ptr(out, c_double)),
                   "fmi2GetDirectionalDerivative")

    # co-simulation
    def do_step(self, t, h):
        """(terminate, reached time)."""
        self.check(self._do_step(self.c, t, h, 1), "fmi2DoStep")
        return False, t + h


class Fmi3(_Instance):
    """FMI 3.0 calls."""

    def _load(self, unzipdir, identifier):
        from fmpy import fmi3
        cls = fmi3.FMU3Model if self.interface == "model_exchange" else fmi3.FMU3Slave
        fmu = cls(guid=self.desc.md.instantiationToken, unzipDirectory=unzipdir,
                  modelIdentifier=identifier, instanceName=self.name)

        def logger(env, status, category, message):
            self.logged(status, message.decode("utf-8", "replace"))
        self._logger = logger
        d = fmu.dll
        self._set_real, self._get_real = d.fmi3SetFloat64, d.fmi3GetFloat64
        self._set_int, self._get_int = d.fmi3SetInt32, d.fmi3GetInt32
        self._set_bool, self._get_bool = d.fmi3SetBoolean, d.fmi3GetBoolean
        self._set_time, self._set_x = d.fmi3SetTime, d.fmi3SetContinuousStates
        self._get_dx, self._get_z = d.fmi3GetContinuousStateDerivatives, d.fmi3GetEventIndicators
        self._get_x = d.fmi3GetContinuousStates
        self._completed = d.fmi3CompletedIntegratorStep
        self._do_step = d.fmi3DoStep
        self._dd = d.fmi3GetDirectionalDerivative
        return fmu

    def start(self, start, stop, tolerance):
        if self.c is None:
            if self.interface == "model_exchange":
                self.fmu.instantiate(loggingOn=True, logMessage=self._logger)
            else:
                self.fmu.instantiate(loggingOn=True, logMessage=self._logger,
                                     earlyReturnAllowed=self.desc.early_return)
            self.c = self.fmu.component
        else:
            self.check(self.fmu.fmi3Reset(self.c), "fmi3Reset")

    def enter_initialization(self, start, stop, tolerance):
        self.check(self.fmu.fmi3EnterInitializationMode(
            self.c, tolerance is not None, tolerance or 0.0, start, stop is not None,
            stop or 0.0), "fmi3EnterInitializationMode")

    def exit_initialization(self):
        self.check(self.fmu.fmi3ExitInitializationMode(self.c), "fmi3ExitInitializationMode")

    def set_reals(self, refs):
        vr, n, values, nv = refs
        self.check(self._set_real(self.c, vr, n, values, nv), "fmi3SetFloat64")

    def get_reals(self, refs):
        vr, n, values, nv = refs
        self.check(self._get_real(self.c, vr, n, values, nv), "fmi3GetFloat64")

    def set_ints(self, refs):
        vr, n, values, nv = refs
        self.check(self._set_int(self.c, vr, n, values, nv), "fmi3SetInt32")

    def get_ints(self, refs):
        vr, n, values, nv = refs
        self.check(self._get_int(self.c, vr, n, values, nv), "fmi3GetInt32")

    def set_bools(self, refs):
        vr, n, values, nv = refs
        self.check(self._set_bool(self.c, vr, n, values, nv), "fmi3SetBoolean")

    def get_bools(self, refs):
        vr, n, values, nv = refs
        self.check(self._get_bool(self.c, vr, n, values, nv), "fmi3GetBoolean")

    int_type, bool_type = ctypes.c_int32, c_bool
    int_dtype, bool_dtype = np.int32, np.bool_

    def set_time(self, t):
        self.check(self._set_time(self.c, t), "fmi3SetTime")

    def set_states(self, x, n):
        self.check(self._set_x(self.c, x, n), "fmi3SetContinuousStates")

    def get_states(self, x, n):
        self.check(self._get_x(self.c, x, n), "fmi3GetContinuousStates")

    def get_derivatives(self, dx, n):
        self.check(self._get_dx(self.c, dx, n), "fmi3GetContinuousStateDerivatives")

    def get_indicators(self, z, n):
        self.check(self._get_z(self.c, z, n), "fmi3GetEventIndicators")

    def enter_event_mode(self):
        self.check(self.fmu.fmi3EnterEventMode(self.c), "fmi3EnterEventMode")

    def update_discrete(self):
        flags = [c_bool(False) for _ in range(5)]
        next_time = c_double(0.0)
        self.check(self.fmu.fmi3UpdateDiscreteStates(
            self.c, *(byref(f) for f in flags), byref(next_time)), "fmi3UpdateDiscreteStates")
        again, stop, _, changed, defined = (f.value for f in flags)
        return again, stop, changed, next_time.value if defined else None

    def enter_continuous_mode(self):
        self.check(self.fmu.fmi3EnterContinuousTimeMode(self.c), "fmi3EnterContinuousTimeMode")

    def completed_step(self):
        enter, stop = c_bool(False), c_bool(False)
        self.check(self._completed(self.c, True, byref(enter), byref(stop)),
                   "fmi3CompletedIntegratorStep")
        return enter.value, stop.value

    def directional(self, unknown, known, seed, out):
        self.check(self._dd(self.c, _ptr(unknown, c_uint), unknown.size, _ptr(known, c_uint),
                            known.size, _ptr(seed, c_double), seed.size, _ptr(out, c_double),
                            out.size), "fmi3GetDirectionalDerivative")

    def do_step(self, t, h):
        event, stop, early, last = c_bool(False), c_bool(False), c_bool(False), c_double(0.0)
        self.check(self._do_step(self.c, t, h, True, byref(event), byref(stop), byref(early),
                                 byref(last)), "fmi3DoStep")
        return stop.value, last.value if early.value else t + h


def references(instance, variables, values):
    """The prepared arguments of a set or get of `variables` (one kind) with `values` (an
    array of the kind's dtype, as many elements as the variables hold): (value references,
    count, values[, number of values])."""
    vr = np.array([v.vr for v in variables], dtype=np.uint32)
    kind = variables[0].kind if variables else "real"
    ctype = {"real": c_double, "integer": instance.int_type, "boolean": instance.bool_type}[kind]
    args = (_ptr(vr, c_uint), c_size_t(vr.size), _ptr(values, ctype))
    if isinstance(instance, Fmi3):
        args += (c_size_t(values.size),)
    return args, vr  # vr must stay alive as long as the arguments


class Bindings:
    """A block's ports bound to an instance's FMI calls, prepared once: each input set from
    its view (a copy only for Integer and Boolean ones), the outputs read into their views
    (one getReal into `flat`, every output in port order, when all are Real)."""

    def __init__(self, inst, desc, inputs, outputs, flat):
        self.inst, self._keep = inst, []
        self.inputs = [self._call(v, view, True) for v, view in zip(desc.inputs, inputs)]
        if desc.outputs and all(v.kind == "real" for v in desc.outputs) and flat is not None \
                and flat.size == sum(v.size for v in desc.outputs):
            self.outputs = [(inst.get_reals, self._refs(desc.outputs, flat), None)]
        else:
            self.outputs = [self._call(v, view, False) for v, view in zip(desc.outputs, outputs)]

    def _refs(self, variables, values):
        args, vr = references(self.inst, variables, values)
        self._keep.append((vr, values))  # the pointers' arrays live as long as the calls
        return args

    def _call(self, v, view, setting):
        """(call, arguments, (buffer, view) to copy through, or None)."""
        inst = self.inst
        if v.kind == "real" and view.flags.c_contiguous and view.dtype == np.float64:
            return (inst.set_reals if setting else inst.get_reals), \
                self._refs([v], view.reshape(-1)), None
        dtype = {"real": np.float64, "integer": inst.int_dtype, "boolean": inst.bool_dtype}
        buf = np.zeros(v.size, dtype=dtype[v.kind])
        calls = {("real", True): inst.set_reals, ("real", False): inst.get_reals,
                 ("integer", True): inst.set_ints, ("integer", False): inst.get_ints,
                 ("boolean", True): inst.set_bools, ("boolean", False): inst.get_bools}
        return calls[v.kind, setting], self._refs([v], buf), (buf, view)

    def set_inputs(self):
        for call, args, copy in self.inputs:
            if copy is not None:
                buf, view = copy
                buf[:] = view.reshape(-1)
            call(args)

    def get_outputs(self):
        for call, args, copy in self.outputs:
            call(args)
            if copy is not None:
                buf, view = copy
                view.reshape(-1)[:] = buf

    def set_values(self, values):
        """The `parameters:` and `start:` values, [(Var, value)], before initialisation."""
        inst = self.inst
        for var, value in values:
            dtype, call = {"real": (np.float64, inst.set_reals),
                           "integer": (inst.int_dtype, inst.set_ints),
                           "boolean": (inst.bool_dtype, inst.set_bools)}[var.kind]
            buf = np.atleast_1d(np.asarray(value)).astype(dtype).ravel()
            args, vr = references(inst, [var], buf)
            call(args)


def open_instance(description, interface, name):
    """A not yet instantiated instance of the FMU (unpacked, compiled if need be, loaded)."""
    unzipdir = unpacked(description.path, description)
    cls = Fmi2 if description.fmi == 2 else Fmi3
    return cls(description, interface, unzipdir, name)
