"""What an FMU declares, read from its zip and its modelDescription.xml only (nothing in it
runs): interfaces, binaries, ports, parameters, states, event indicators.

fmpy reads the XML (`fmpy.read_model_description`); this module turns it into the block's
view: each causality-input variable an input port and each output an output port, named by
the variable spelled as a port name (`a.b[2]` -> `a_b_2`), FMI 3.0 arrays with their shape.
"""
from __future__ import annotations

import math
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

INTERFACES = {"model_exchange": "modelExchange", "co_simulation": "coSimulation"}
# FMI types the block reads and writes, as (FMI 2.0 name, FMI 3.0 name) -> kind
KINDS = {"Real": "real", "Float64": "real", "Float32": "real", "Integer": "integer",
         "Int32": "integer", "Int64": "integer", "Int16": "integer", "Int8": "integer",
         "UInt8": "integer", "UInt16": "integer", "UInt32": "integer", "UInt64": "integer",
         "Boolean": "boolean", "Enumeration": "integer", "String": "string"}


class FmuError(ValueError):
    """An FMU that cannot be used as asked (the block reports it at its `file`)."""


def port_name(variable_name):
    """A variable's name as a port name: every run of characters that cannot be in one
    becomes `_`, leading and trailing ones dropped (`a.b[2]` -> `a_b_2`, `der(x)` ->
    `der_x`); a name starting with a digit gets a leading `v`."""
    name = re.sub(r"[^0-9A-Za-z_]+", "_", variable_name).strip("_") or "v"
    return "v" + name if name[0].isdigit() else name


@dataclass(frozen=True)
class Var:
    """One variable the block uses: its FMI name, port name, value reference, kind (real,
    integer, boolean, string), shape, start, bounds, causality and variability."""
    name: str
    port: str
    vr: int
    kind: str
    shape: tuple
    start: object
    minimum: float | None
    maximum: float | None
    causality: str
    variability: str
    description: str = ""

    @property
    def size(self):
        return math.prod(self.shape)


@dataclass
class Description:
    """An FMU as the block sees it."""
    path: Path
    md: object  # fmpy's ModelDescription
    fmi: int  # 2 or 3
    interfaces: tuple  # of INTERFACES' keys the FMU provides
    platforms: tuple  # binaries/ folders present
    has_sources: bool
    inputs: list  # Var
    outputs: list  # Var
    parameters: dict  # name -> Var (causality parameter, fixed or tunable)
    variables: dict  # name -> Var (every variable a `start:` may set)
    states: list  # names of the continuous states, in order
    derivatives: list  # value references of their derivatives
    state_refs: list  # value references of the states
    event_indicators: int
    feedthrough: dict  # output port -> tuple of input ports it depends on, or None: all
    derivative_interfaces: tuple = ()  # the interfaces with directional derivatives

    def identifier(self, interface):
        return getattr(self.md, INTERFACES[interface]).modelIdentifier

    @property
    def early_return(self):
        """Whether doStep may return early (FMI 3.0 co-simulation's
        mightReturnEarlyFromDoStep): the block then lets it."""
        return self.fmi == 3 and "co_simulation" in self.interfaces and \
            bool(self.md.coSimulation.mightReturnEarlyFromDoStep)

    def directional(self, interface):
        """Whether the FMU gives directional derivatives under `interface`."""
        return interface in self.derivative_interfaces


def read(path):
    """The Description of the FMU at `path`; FmuError for a missing file, a file that is no
    zip, one without modelDescription.xml or with an invalid one."""
    path = Path(path)
    if not path.is_file():
        raise FmuError(f"no such file: {path}")
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
    except (zipfile.BadZipFile, OSError) as e:
        raise FmuError(f"{path.name} is not an FMU (not a zip file: {e})") from None
    if "modelDescription.xml" not in names:
        raise FmuError(f"{path.name} is not an FMU: it has no modelDescription.xml")
    from fmpy import read_model_description
    try:
        md = read_model_description(str(path), validate=True)
    except Exception as e:  # fmpy raises its ValidationError, lxml's or a plain Exception
        text = " ".join(str(e).split())
        raise FmuError(f"{path.name}: invalid modelDescription.xml: {text[:300]}") from None
    fmi = 2 if md.fmiVersion.startswith("2") else 3 if md.fmiVersion.startswith("3") else 0
    if not fmi:
        raise FmuError(f"{path.name}: FMI {md.fmiVersion} is not supported (FMI 2.0 and 3.0 are)")
    interfaces = tuple(k for k, attr in INTERFACES.items() if getattr(md, attr) is not None)
    platforms = tuple(sorted({n.split("/")[1] for n in names
                              if n.startswith("binaries/") and n.count("/") >= 2
                              and n.split("/")[2]}))
    has_sources = any(n.startswith("sources/") and n.endswith((".c", ".cpp")) for n in names)
    desc = _describe(path, md, fmi, interfaces, platforms, has_sources)
    desc.derivative_interfaces = _with_derivatives(path)
    return desc


def _with_derivatives(path):
    """The interfaces whose element says providesDirectionalDerivative (FMI 2.0) or
    providesDirectionalDerivatives (FMI 3.0), read from the XML (fmpy keeps FMI 2.0's only)."""
    import xml.etree.ElementTree as ET
    with zipfile.ZipFile(path) as zf:
        root = ET.fromstring(zf.read("modelDescription.xml"))
    return tuple(key for key, tag in (("model_exchange", "ModelExchange"),
                                      ("co_simulation", "CoSimulation"))
                 for el in root.findall(tag)
                 if (el.get("providesDirectionalDerivative") or
                     el.get("providesDirectionalDerivatives")) in ("true", "1"))


def _var(v):
    kind = KINDS.get(v.type, "other")
    shape = tuple(int(d.start) if d.start is not None else 0 for d in v.dimensions) \
        if getattr(v, "dimensions", None) else ()
    return Var(name=v.name, port=port_name(v.name), vr=int(v.valueReference), kind=kind,
               shape=shape, start=v.start, minimum=_bound(v.min), maximum=_bound(v.max),
               causality=v.causality or "local", variability=v.variability or "continuous",
               description=v.description or "")


def _bound(text):
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def variables_text(d):
    """Lines listing what the FMU `d` declares: its interfaces and abilities, its ports
    (inputs and outputs with shape, type, start or dependencies), its parameters and the
    other variables a block's `start:` may set, its states and event indicators."""
    abilities = [f"directional derivatives ({', '.join(d.derivative_interfaces)})"] \
        if d.derivative_interfaces else []
    if d.early_return:
        abilities.append("early return from doStep")
    lines = [f"FMU {d.path.name}: FMI {d.md.fmiVersion}, {d.md.modelName}; provides "
             f"{' and '.join(d.interfaces)}" + (f"; {', '.join(abilities)}" if abilities else "")]

    def row(v, extra):
        text = f"  {v.port:<16} {str(v.shape):<8} {v.kind:<8} {extra}"
        note = v.description if v.port == v.name else f"{v.name}: {v.description}".rstrip(": ")
        return (text + ("   " + note if note else "")).rstrip()
    lines.append("inputs:" if d.inputs else "inputs: none")
    lines += [row(v, f"start {_shown(parse_start(v))}") for v in d.inputs]
    lines.append("outputs:" if d.outputs else "outputs: none")
    for v in d.outputs:
        deps = d.feedthrough.get(v.port) if d.inputs else ()
        lines.append(row(v, "depends on every input" if deps is None else
                         f"depends on {', '.join(deps)}" if deps else "no direct feedthrough"))
    lines.append("parameters:" if d.parameters else "parameters: none")
    for name, v in d.parameters.items():
        bounds = [f"{k} {_shown(b)}" for k, b in (("min", v.minimum), ("max", v.maximum))
                  if b is not None]
        lines.append(f"  {name} = {_shown(parse_start(v))}"
                     + (f" ({', '.join(bounds)})" if bounds else "")
                     + (f"   {v.description}" if v.description else ""))
    lines.append("states: " + (", ".join(d.states) or "none"))
    if d.event_indicators:
        lines.append(f"event indicators: {d.event_indicators}")
    return lines


def _shown(value):
    """A start value or bound as a diagram would write it (`0.5`, `[0, 1]`, `true`)."""
    if value is None:
        return "none"
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if np.ndim(value):
        return "[" + ", ".join(_shown(v) for v in np.ravel(value)) + "]"
    if not isinstance(value, (int, float, np.number)):
        return str(value)
    x = float(value)
    return str(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)


def _describe(path, md, fmi, interfaces, platforms, has_sources):
    inputs, outputs, parameters, variables = [], [], {}, {}
    for v in md.modelVariables:
        var = _var(v)
        if var.causality == "independent":
            continue
        variables[var.name] = var
        if var.causality == "input":
            inputs.append(var)
        elif var.causality == "output":
            outputs.append(var)
        elif var.causality in ("parameter", "structuralParameter"):
            parameters[var.name] = var
    for group in (inputs, outputs):
        for var in group:
            if var.kind not in ("real", "integer", "boolean"):
                raise FmuError(f"{path.name}: {var.causality} '{var.name}' is of type "
                               f"{var.kind}: the block's ports carry numbers only")
            if 0 in var.shape:
                raise FmuError(f"{path.name}: {var.causality} '{var.name}' has a dimension "
                               "set by a structural parameter, which the block does not support")
    _distinct(path, inputs + outputs)
    states = [d.variable.derivative for d in md.derivatives]
    in_ports = {v.name: v.port for v in inputs}
    feedthrough = {}
    for unknown in md.outputs:
        port = port_name(unknown.variable.name)
        deps = unknown.dependencies
        feedthrough[port] = None if deps is None else tuple(
            dict.fromkeys(in_ports[d.name] for d in deps if d.name in in_ports))
    nz = md.numberOfEventIndicators if fmi == 2 else len(md.eventIndicators)
    return Description(
        path=path, md=md, fmi=fmi, interfaces=interfaces, platforms=platforms,
        has_sources=has_sources, inputs=inputs, outputs=outputs, parameters=parameters,
        variables=variables, states=[s.name for s in states],
        derivatives=[int(d.variable.valueReference) for d in md.derivatives],
        state_refs=[int(s.valueReference) for s in states], event_indicators=int(nz or 0),
        feedthrough=feedthrough)


def _distinct(path, ports):
    seen = {}
    for var in ports:
        if var.port in seen:
            raise FmuError(f"{path.name}: variables '{seen[var.port]}' and '{var.name}' both "
                           f"become port '{var.port}'")
        seen[var.port] = var.name


def check_platform(desc):
    """FmuError when the FMU has no binary for this platform and no sources to build one."""
    from blocksim.fmi.build import platform_dir
    here = platform_dir(desc.fmi)
    if here in desc.platforms or desc.has_sources:
        return
    present = ", ".join(desc.platforms) or "none"
    raise FmuError(f"{desc.path.name} has no binary for this platform ({here}) and no sources "
                   f"to compile: binaries for {present}")


def check_interface(desc, interface):
    if interface not in desc.interfaces:
        offered = " and ".join(desc.interfaces) or "no interface"
        raise FmuError(f"{desc.path.name} does not provide {interface}: it provides {offered}")


def parse_start(var):
    """A variable's start value from the XML as a number or array of its shape (None if
    it has none)."""
    if var.start is None:
        return None
    words = str(var.start).split()
    if var.kind == "boolean":
        values = [w in ("true", "1") for w in words]
    elif var.kind == "string":
        return var.start
    else:
        values = [float(w) for w in words]
    if not var.shape:
        return values[0] if values else None
    import numpy as np
    return np.resize(np.asarray(values, dtype=float), var.shape)
