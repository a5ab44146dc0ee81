"""FMUs built from C: a model's source and its variables -> a .fmu (FMI 2.0 or 3.0).

A model is a C file written to blocksim's model contract (`c/fmu_model.h`: its values,
event indicators and event update over one array of doubles) and a description of its
variables (`Model`). `build_fmu` writes the FMU: modelDescription.xml, the generated
`model_vars.h` (where each variable lies), the sources and, unless only the sources are
wanted, a binary for this platform compiled with the machine's C compiler against the FMI
headers fmpy ships. The same C serves FMI 2.0 and 3.0 (`c/fmi2.c`, `c/fmi3.c`), model
exchange and co-simulation. `compile_sources` builds the binary of a source FMU, as the
importer does for an FMU that ships only its sources.

`python -m blocksim.fmi.build MODEL.yaml OUT.fmu [--fmi 2|3] [--sources-only]` builds one
from a YAML description beside its C file (`c_file:` names it).
"""
from __future__ import annotations

import hashlib
import math
import platform
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

C_DIR = Path(__file__).parent / "c"
WRAPPER_FILES = ("fmu_model.h", "fmu_common.c")
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
TYPES = {"real": ("Real", "Float64"), "integer": ("Integer", "Int32"),
         "boolean": ("Boolean", "Boolean")}


class BuildError(Exception):
    """An FMU could not be built (the compiler's first error, or a description's fault)."""


def headers():
    """The directory of the FMI 2.0 and 3.0 C headers (fmpy ships them)."""
    import fmpy
    return Path(fmpy.__file__).parent / "c-code"


def platform_dir(fmi):
    """The binaries/ folder of this platform: FMI 2.0's `linux64`, FMI 3.0's `x86_64-linux`."""
    machine = platform.machine().lower()
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    system = {"darwin": "darwin", "windows": "win"}.get(sys.platform, "linux")
    if fmi == 2:
        bits = "64" if sys.maxsize > 2 ** 32 else "32"
        return f"{system}{bits}"
    return f"{arch}-{system}"


def library_suffix():
    return {"darwin": ".dylib", "win32": ".dll"}.get(sys.platform, ".so")


@dataclass
class Variable:
    """One variable: a scalar, or (FMI 3.0) an array of `shape`; FMI 2.0 spells an array
    as scalars `name[1]`, `name[2]`, ... ."""
    name: str
    causality: str = "local"  # parameter, input, output, local
    variability: str = "continuous"  # constant, fixed, tunable, discrete, continuous
    type: str = "real"  # real, integer, boolean
    start: object = None
    initial: str | None = None
    shape: tuple = ()
    state: bool = False  # a continuous state (its derivative names it)
    derivative: str | None = None  # the state this variable is the derivative of
    minimum: float | None = None
    maximum: float | None = None
    depends: tuple | None = None  # an output's dependencies (names); None: on everything
    description: str = ""

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def c_name(self):
        return "".join(c if c.isalnum() else "_" for c in self.name).strip("_")


@dataclass
class Model:
    """A model's description: its identifier, variables (in value-reference order), event
    indicators, which interfaces it offers and whether it gives directional derivatives."""
    name: str
    c_file: Path
    variables: list
    event_indicators: int = 0
    interfaces: tuple = ("model_exchange",)
    directional_derivatives: bool = False
    step_events: bool = False  # the C defines model_step_event
    model_data: bool = False  # the C keeps data of its own (defines model_release)
    early_return: bool = False  # FMI 3.0 co-simulation: doStep may return early (its C does)
    description: str = ""
    stop_time: float | None = None

    @property
    def guid(self):
        text = repr((self.name, [v.__dict__ for v in self.variables], self.event_indicators,
                     self.interfaces)).encode()
        h = hashlib.sha256(text).hexdigest()
        return f"{{{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}}}"


def model_from_yaml(path):
    """A Model from a YAML description (`name`, `c_file` relative to it, `variables`: a list
    of mappings with Variable's fields, `event_indicators`, `interfaces`,
    `directional_derivatives`, `step_events`, `early_return`, `description`, `stop_time`)."""
    import yaml
    path = Path(path)
    data = yaml.safe_load(path.read_text())
    variables = []
    for v in data["variables"]:
        v = dict(v)
        v["shape"] = tuple(v.get("shape", ()))
        if "min" in v:
            v["minimum"] = v.pop("min")
        if "max" in v:
            v["maximum"] = v.pop("max")
        if v.get("depends") is not None:
            v["depends"] = tuple(v["depends"])
        variables.append(Variable(**v))
    return Model(name=data["name"], c_file=path.parent / data["c_file"], variables=variables,
                 event_indicators=int(data.get("event_indicators", 0)),
                 interfaces=tuple(data.get("interfaces", ("model_exchange",))),
                 directional_derivatives=bool(data.get("directional_derivatives", False)),
                 step_events=bool(data.get("step_events", False)),
                 early_return=bool(data.get("early_return", False)),
                 description=data.get("description", ""), stop_time=data.get("stop_time"))


# ---- model_vars.h ----------------------------------------------------------------------------
def _refs(model, fmi):
    """(value reference, variable, element or None, offset) of every variable as the FMI
    version declares them: FMI 3.0 one per variable, FMI 2.0 one per array element; the
    independent variable `time` first."""
    refs, offset = [], 1  # v[0] is time
    for var in model.variables:
        if fmi == 3 or not var.shape:
            refs.append((len(refs) + 1, var, None, offset))
        else:
            for k in range(var.size):
                refs.append((len(refs) + 1, var, k, offset + k))
        offset += var.size
    return refs, offset


def quoted(text):
    """`text` as a C string literal."""
    text = str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{text}"'


def _c_table(ctype, name, values):
    items = ", ".join(str(v) for v in values) or "0"
    return f"static const {ctype} {name}[{max(len(values), 1)}] = {{{items}}};"


def model_vars(model, fmi):
    """The text of model_vars.h for `model` under FMI `fmi`."""
    refs, total = _refs(model, fmi)
    offsets, pos = {}, 1
    starts = [0.0]
    for var in model.variables:
        offsets[var.name] = pos
        values = _start_list(var)
        starts += values if values else [0.0] * var.size
        pos += var.size
    states = [(var, k) for var in model.variables if var.state for k in range(var.size)]
    ders = {v.derivative: v for v in model.variables if v.derivative}
    missing = [v.name for v, _ in states if v.name not in ders]
    if missing:
        raise BuildError(f"{model.name}: no derivative declared for state(s) {', '.join(missing)}")
    lines = [f"/* {model.name}: generated by blocksim.fmi.build (FMI {fmi}.0) */",
             "#ifndef MODEL_VARS_H", "#define MODEL_VARS_H",
             f'#define MODEL_GUID "{model.guid}"',
             f"#define N_VARS {total}", f"#define N_REFS {len(refs) + 1}",
             f"#define N_X {len(states)}", f"#define N_Z {model.event_indicators}",
             "#define V_time 0"]
    lines += [f"#define V_{var.c_name} {offsets[var.name]}" for var in model.variables]
    if model.directional_derivatives:
        lines.append("#define HAS_PARTIALS 1")
    if "co_simulation" in model.interfaces:
        lines.append("#define HAS_DO_STEP 1")
    if model.step_events:
        lines.append("#define HAS_STEP_EVENTS 1")
    if model.model_data:
        lines.append("#define HAS_MODEL_DATA 1")
    lines.append(_c_table("int", "VR_OFFSET", [0] + [off for _, _, _, off in refs]))
    lines.append(_c_table("int", "VR_SIZE", [1] + [var.size if k is None else 1
                                                   for _, var, k, _ in refs]))
    # fixed parameters: settable until initialisation ends (fmu_set_values refuses them after)
    lines.append(_c_table("int", "VR_FIXED", [0] + [int(var.causality == "parameter" and
                                                        var.variability == "fixed")
                                                    for _, var, _, _ in refs]))
    lines.append(_c_table("char *const", "VR_NAME", ['"time"'] + [
        quoted(var.name if k is None else f"{var.name}[{k + 1}]") for _, var, k, _ in refs]))
    lines.append(_c_table("int", "STATE_OFF", [offsets[v.name] + k for v, k in states]))
    lines.append(_c_table("int", "DER_OFF", [offsets[ders[v.name].name] + k for v, k in states]))
    lines.append(_c_table("double", "START_VALUES", [repr(float(s)) for s in starts]))
    lines.append("#endif")
    return "\n".join(lines) + "\n"


def _start_list(var):
    if var.start is None:
        return []
    values = var.start if isinstance(var.start, (list, tuple)) else [var.start] * var.size
    return [float(v) for v in values]


# ---- modelDescription.xml --------------------------------------------------------------------
def _fmt(x):
    return repr(float(x)) if not isinstance(x, bool) else ("true" if x else "false")


def _start_text(var, values):
    if var.type == "boolean":
        return " ".join("true" if v else "false" for v in values)
    if var.type == "integer":
        return " ".join(str(int(v)) for v in values)
    return " ".join(_fmt(v) for v in values)


def _initial(var):
    if var.initial:
        return var.initial
    if var.causality in ("parameter",) or (var.start is not None and var.causality != "input"):
        return "exact" if var.start is not None else None
    if var.causality in ("output", "local") and var.variability in ("continuous", "discrete"):
        return "calculated"
    return None


def model_description(model, fmi, sources=()):
    """The text of modelDescription.xml for `model` under FMI `fmi` (2 or 3); `sources`:
    the source files an FMI 2.0 source FMU lists."""
    refs, _ = _refs(model, fmi)
    ident = model.name
    me, cs = "model_exchange" in model.interfaces, "co_simulation" in model.interfaces
    dd = "true" if model.directional_derivatives else "false"
    out = ['<?xml version="1.0" encoding="UTF-8"?>']
    token = "guid" if fmi == 2 else "instantiationToken"
    head = (f'<fmiModelDescription fmiVersion="{fmi}.0" modelName={quoteattr(model.name)} '
            f'{token}="{model.guid}" description={quoteattr(model.description)} '
            f'generationTool="blocksim"')
    if fmi == 2:
        head += f' numberOfEventIndicators="{model.event_indicators}"'
    out.append(head + ">")
    files = "".join(f'<File name="{s}"/>' for s in sources if s.endswith(".c"))
    source_files = f"<SourceFiles>{files}</SourceFiles>" if fmi == 2 and files else ""
    dd_attr = "providesDirectionalDerivative" if fmi == 2 else "providesDirectionalDerivatives"
    if me:
        steps = "true" if model.step_events else "false"  # FMI 2.0: needed unless said
        needs = f' needsCompletedIntegratorStep="{steps}"' if fmi == 3 else ""
        out.append(f'  <ModelExchange modelIdentifier="{ident}" {dd_attr}="{dd}"{needs}>'
                   f'{source_files}</ModelExchange>')
    if cs:
        early = ' mightReturnEarlyFromDoStep="true"' if fmi == 3 and model.early_return else ""
        out.append(f'  <CoSimulation modelIdentifier="{ident}" {dd_attr}="{dd}" '
                   f'canHandleVariableCommunicationStepSize="true"{early}>{source_files}'
                   '</CoSimulation>')
    if model.stop_time is not None:
        out.append(f'  <DefaultExperiment startTime="0.0" stopTime="{_fmt(model.stop_time)}"/>')
    out.append("  <ModelVariables>")
    index = {}  # (name, element) -> FMI 2.0 index (1-based) or FMI 3.0 value reference
    if fmi == 2:
        out.append('    <ScalarVariable name="time" valueReference="0" causality="independent" '
                   'variability="continuous"><Real/></ScalarVariable>')
        index[("time", None)] = 1
    else:
        out.append('    <Float64 name="time" valueReference="0" causality="independent" '
                   'variability="continuous"/>')
    for k, (vr, var, element, _) in enumerate(refs):
        index[(var.name, element)] = k + 2 if fmi == 2 else vr
    for vr, var, element, _ in refs:
        out.append("    " + _variable(var, vr, element, fmi, index))
    indicator_refs = []
    if fmi == 3:
        for j in range(model.event_indicators):
            vr = len(refs) + 1 + j
            indicator_refs.append(vr)
            out.append(f'    <Float64 name="event_indicator[{j}]" valueReference="{vr}" '
                       'causality="local" variability="continuous"/>')
    out.append("  </ModelVariables>")
    out.append("  <ModelStructure>")
    outputs = [(vr, var, e) for vr, var, e, _ in refs if var.causality == "output"]
    ders = [(vr, var, e) for vr, var, e, _ in refs if var.derivative]
    initial = [(vr, var, e) for vr, var, e, _ in refs
               if var.causality in ("output",) and _initial(var) == "calculated"
               or var.derivative]
    inputs_states = [(var.name, e) for _, var, e, _ in refs
                     if var.causality == "input" or var.state]
    if fmi == 2:
        if outputs:  # an empty <Outputs> is not valid
            out.append("    <Outputs>")
            for _, var, e in outputs:
                deps = _deps(var, index, inputs_states)
                out.append(f'      <Unknown index="{index[(var.name, e)]}"{deps}/>')
            out.append("    </Outputs>")
        if ders:
            out.append("    <Derivatives>")
            for _, var, e in ders:
                out.append(f'      <Unknown index="{index[(var.name, e)]}"/>')
            out.append("    </Derivatives>")
        if initial:
            out.append("    <InitialUnknowns>")
            for _, var, e in sorted(initial, key=lambda r: index[(r[1].name, r[2])]):
                out.append(f'      <Unknown index="{index[(var.name, e)]}"/>')
            out.append("    </InitialUnknowns>")
    else:
        for vr, var, e in outputs:
            deps = _deps(var, index, inputs_states)
            out.append(f'    <Output valueReference="{vr}"{deps}/>')
        for vr, _, _ in ders:
            out.append(f'    <ContinuousStateDerivative valueReference="{vr}"/>')
        for vr, _, _ in initial:
            out.append(f'    <InitialUnknown valueReference="{vr}"/>')
        for vr in indicator_refs:
            out.append(f'    <EventIndicator valueReference="{vr}"/>')
    out.append("  </ModelStructure>")
    out.append("</fmiModelDescription>")
    return "\n".join(out) + "\n"


def _deps(var, index, inputs_states):
    """An output's dependencies attribute: the inputs and states it names (all their
    elements), or nothing (it depends on everything)."""
    if var.depends is None:
        return ""
    keys = [key for key in inputs_states if key[0] in var.depends]
    return f' dependencies="{" ".join(str(index[k]) for k in keys)}"'


def _variable(var, vr, element, fmi, index):
    name = var.name if element is None else f"{var.name}[{element + 1}]"
    attrs = f'name={quoteattr(name)} valueReference="{vr}"'
    if var.description:
        attrs += f" description={quoteattr(var.description)}"
    attrs += f' causality="{var.causality}"'
    variability = var.variability if var.type == "real" or var.variability != "continuous" \
        else "discrete"
    attrs += f' variability="{variability}"'
    initial = _initial(var)
    if initial and var.causality != "input":
        attrs += f' initial="{initial}"'
    values = _start_list(var)
    if element is not None:
        values = values[element:element + 1]
    type2, type3 = TYPES[var.type]
    bounds = "".join(f' {k}="{_start_text(var, [v])}"'
                     for k, v in (("min", var.minimum), ("max", var.maximum)) if v is not None)
    start = f' start="{_start_text(var, values)}"' if values and initial != "calculated" \
        else ""
    if fmi == 2:
        der = ""
        if var.derivative:
            der = f' derivative="{index[(var.derivative, element)]}"'
        return f"<ScalarVariable {attrs}><{type2}{start}{bounds}{der}/></ScalarVariable>"
    der = f' derivative="{index[(var.derivative, None)]}"' if var.derivative else ""
    dims = "".join(f'<Dimension start="{d}"/>' for d in var.shape)
    body = f"<{type3} {attrs}{start}{bounds}{der}"
    return f"{body}>{dims}</{type3}>" if dims else body + "/>"


# ---- compiling and packing -------------------------------------------------------------------
def compile_library(sources, include_dirs, out, defines=()):
    """Compile C `sources` into the shared library `out` with the machine's C compiler;
    BuildError with the compiler's first error line."""
    from ..accel.toolchain import CompilerMissing, compiler  # CC read as accelerated mode does
    try:
        cc = compiler()[0]
    except CompilerMissing as e:
        raise BuildError(str(e)) from None
    command = [*cc, "-shared", "-fPIC", "-O2", "-std=c99", "-D_POSIX_C_SOURCE=200809L",
               *(f"-I{d}" for d in include_dirs), *(f"-D{d}" for d in defines),
               "-o", str(out), *map(str, sources), "-lm"]
    try:
        done = subprocess.run(command, capture_output=True, text=True)
    except FileNotFoundError:
        raise BuildError(f"no C compiler found (CC={' '.join(cc)}): install one (e.g. gcc) "
                         "or set CC") from None
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if "error" in line]
        raise BuildError((errors or done.stderr.splitlines() or ["failed"])[0])


def build_fmu(model, out, fmi=2, binary=True):
    """Write `model` as the FMU `out` (FMI `fmi`: 2 or 3): its description, its sources and,
    when `binary`, the library for this platform. Returns `out`."""
    if fmi not in (2, 3):
        raise BuildError(f"FMI version {fmi}: expected 2 or 3")
    out = Path(out)
    wrapper = f"fmi{fmi}.c"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "fmu"
        src = root / "sources"
        src.mkdir(parents=True)
        shutil.copy(model.c_file, src / "model.c")
        for name in (*WRAPPER_FILES, wrapper):
            shutil.copy(C_DIR / name, src / name)
        (src / "model_vars.h").write_text(model_vars(model, fmi))
        sources = ["model.c", "fmu_common.c", wrapper]
        (root / "modelDescription.xml").write_text(model_description(model, fmi, sources))
        if fmi == 3:
            (src / "buildDescription.xml").write_text(_build_description(model, sources))
        if binary:
            lib_dir = root / "binaries" / platform_dir(fmi)
            lib_dir.mkdir(parents=True)
            compile_library([src / s for s in sources], [src, headers()],
                            lib_dir / f"{model.name}{library_suffix()}")
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_name(out.name + ".part")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(root.rglob("*")):
                if path.is_file():  # fixed dates: the same sources give the same bytes
                    info = zipfile.ZipInfo(path.relative_to(root).as_posix(), ZIP_DATE)
                    info.compress_type = zipfile.ZIP_DEFLATED
                    info.external_attr = 0o644 << 16
                    zf.writestr(info, path.read_bytes())
        partial.replace(out)
    return out


def _build_description(model, sources):
    files = "".join(f'<SourceFile name="{s}"/>' for s in sources)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<fmiBuildDescription fmiVersion="3.0">\n'
            f'  <BuildConfiguration modelIdentifier="{model.name}">\n'
            f'    <SourceFileSet language="C99">{files}</SourceFileSet>\n'
            '  </BuildConfiguration>\n</fmiBuildDescription>\n')


def compile_sources(unzipdir, description):
    """Build the binary of a source FMU unpacked in `unzipdir` (fmpy's `description` of it)
    for this platform; returns the library's path."""
    unzipdir = Path(unzipdir)
    configs = description.buildConfigurations
    if not configs:
        raise BuildError("the FMU has neither a binary for this platform nor sources")
    config = configs[0]
    fileset = config.sourceFileSets[0]
    srcdir = unzipdir / "sources"
    extra = getattr(fileset, "includeDirectories", ()) or ()
    includes = [srcdir, headers(), *(srcdir / d for d in extra)]
    defines = [f"{d.name}={d.value}" if d.value else d.name
               for d in getattr(fileset, "preprocessorDefinitions", ()) or ()]
    fmi = 2 if description.fmiVersion.startswith("2") else 3
    lib_dir = unzipdir / "binaries" / platform_dir(fmi)
    lib_dir.mkdir(parents=True, exist_ok=True)
    out = lib_dir / f"{config.modelIdentifier}{library_suffix()}"
    compile_library([srcdir / f for f in fileset.sourceFiles], includes, out, defines)
    return out


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(prog="python -m blocksim.fmi.build",
                                     description="build an FMU from a model's C file and its "
                                                 "YAML description")
    parser.add_argument("model", help="the model's YAML description (c_file: names its C)")
    parser.add_argument("out", help="the FMU to write")
    parser.add_argument("--fmi", type=int, choices=(2, 3), default=2)
    parser.add_argument("--sources-only", action="store_true",
                        help="a source FMU (no binary: importers compile it)")
    args = parser.parse_args(argv)
    try:
        path = build_fmu(model_from_yaml(args.model), args.out, args.fmi,
                         binary=not args.sources_only)
    except (BuildError, OSError, KeyError) as e:
        print(f"{args.model}: error: {e}", file=sys.stderr)
        return 2
    print(f"FMU -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
