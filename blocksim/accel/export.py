"""A diagram as standalone C (`blocksim export FILE --c DIR`): accelerated mode's code with
its values built in, as a library and a program that needs neither Python nor numpy.

DIR receives NAME.c (the generated source, the runtime written into it, the run's values as
tables: parameters, constants, the blocks' data, the exact sample series, the settings),
NAME.h (the library's interface: init, set an input or a tunable parameter (tunable.py),
advance to a time or run to the stop, the outputs, the derivatives, the recorded rows,
terminate) and main.c (runs the diagram as `blocksim run` does, its NAME=VALUE arguments
set first, and writes its recorded signals as CSV); `cc *.c -lm` builds it. The
runtime's calls into numpy (BLAS, LAPACK, the ufunc loops) find nothing handed over and take
their own C (runtime/rt_blas.c, rt_linalg.c, rt_ufunc.c), so the CSV equals `blocksim run`'s
to rounding. NAME is the diagram's name as a C identifier.

A diagram whose code cannot run on its own is refused naming the block (DiagramError, exit
2): a block without a compiled form, a plugin's block, a block whose compiled form needs this
process (Lowering.hosted: an FMU's binary); so is a stiff solver (its loop is scipy's).
"""
from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path

import numpy as np

from ..engine.csvio import column_names
from ..errors import DiagramError, DiagramErrors
from ..fmi.build import quoted
from ..util.atomic import atomic_path
from .boundary import BIND, ERRORS, STIFF, settings_row
from .arguments import SeriesRange, arguments
from .codegen import RUNTIME, RUNTIME_FILES, _int_table, _Locator, generate
from .compilable import NotCompilable, lowerings
from .lowering import double_table
from .tunable import tunables
_BATCH = "rt_batch.c"  # the sweeps' threads: not part of an exported diagram


def c_name(text):
    """`text` as a C identifier: other characters become '_', a leading digit gets one."""
    name = re.sub(r"\W", "_", str(text), flags=re.ASCII) or "diagram"
    return "_" + name if name[0].isdigit() else name


def refusals(model):
    """The reasons `model` cannot be exported, as DiagramErrors at the blocks' lines (the
    solver's); None when it can."""
    from ..language.library import Library
    errors = []
    plugins = Library().plugins
    try:
        lows = lowerings(model)
    except NotCompilable as e:
        lows, missing = {}, e.blocks
    else:
        missing = []
    why = {name: f"block type '{kind}' {reason}" for name, kind, reason in missing}
    for block in model.blocks:
        if block.type in plugins:
            why.setdefault(block.name, f"block type '{block.type}' is a plugin's "
                                       f"({plugins[block.type]}): its code is not blocksim's")
        elif block.name in lows and lows[block.name][0].hosted:
            why.setdefault(block.name, f"block type '{block.type}' {lows[block.name][0].hosted}")
    for name, text in why.items():
        spec = model.spec.blocks.get(name) if model.spec is not None else None
        message = f"cannot export: {text}"
        errors.append(spec.loc.error(message, block=name) if spec is not None else
                      DiagramError(message, file=model.file, block=name))
    if model.settings.solver in STIFF:
        value = model.spec.simulation.get("solver") if model.spec is not None else None
        message = (f"cannot export: solver {model.settings.solver} is scipy's (its loop is "
                   "Python); an exported diagram carries rk23, rk45, dop853, euler, rk2 or rk4")
        errors.append(value.loc.error(message) if getattr(value, "loc", None) is not None
                      else DiagramError(message, file=model.file))
    if not errors:
        return None
    return errors[0] if len(errors) == 1 else DiagramErrors(errors)


def export_c(model, directory):
    """Write NAME.c, NAME.h and main.c of `model` into `directory` (made if missing);
    returns their paths. DiagramError(s) when the diagram cannot be exported."""
    refused = refusals(model)
    if refused is not None:
        raise refused
    try:
        generated = generate(model)
        arguments(model, generated)
    except SeriesRange as e:
        raise DiagramError(f"cannot export: {e}", file=model.file) from None
    name = c_name(model.name)
    tune = tunables(model)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    files = {f"{name}.c": _source(model, generated, name, tune),
             f"{name}.h": _header(model, generated, name, tune),
             "main.c": _main(name)}
    paths = []
    for filename, text in files.items():
        path = directory / filename
        with atomic_path(path) as tmp:
            Path(tmp).write_text(text)
        paths.append(path)
    return paths, tune


# -- NAME.c ----------------------------------------------------------------------------------
# Every product and sum rounded on its own, as numpy and accelerated mode (-ffp-contract=off)
# round them, whatever flags the user's build gives: compilers may fuse a * b + c by default
# (GCC with -march=native, or on aarch64). The runtime's deliberate fma() calls stay fused.
NO_CONTRACTION = ("#if defined(__clang__)", "#pragma STDC FP_CONTRACT OFF",
                  "#elif defined(__GNUC__)", '#pragma GCC optimize ("fp-contract=off")',
                  "#endif")


def _source(model, generated, name, tune):
    m, v = model, arguments(model, generated)  # the model's run values (its Context's)
    runtime = {f'#include "{f}"': "" if f == _BATCH else
               f"/* ---- runtime: {f} ---- */\n{(RUNTIME / f).read_text()}"
               for f in RUNTIME_FILES}
    body = "\n".join(runtime.get(line, line) for line in generated.source.splitlines())
    given = {"S": m.signals, "X": m.xbuf, "DX": m.dxbuf, "XD": m.xdbuf, "Z": m.zbuf,
             "W": generated.work, "P": v.params, "K": generated.constants, "X0": v.x0,
             "XD0": v.xd0,
             "DU": m.dubuf}
    initial = {name: given[name] for name in BIND.names}
    sizes = {k: np.asarray(a).size for k, a in initial.items()}
    lines = [f"/* {name}: the diagram {m.name!r} ({Path(m.file).name if m.file else 'no file'})"
             " exported by blocksim (blocksim export --c).",
             "   Generated: edit the diagram and export it again, not this file. */",
             *NO_CONTRACTION, "#define RT_API static", "#define RT_STANDALONE", f'#include "{name}.h"', "",
             body, "", "/* ---- the exported diagram's values ---- */"]
    lines += [double_table(f"EX_INIT_{k}", a) for k, a in initial.items()]
    lines += [double_table(f"EX_DATA_{i}", d) for i, d in enumerate(v.data)]
    lines.append(f"static const double *const EX_DATA[{max(len(v.data), 1)}] = "
                 f"{{{', '.join(f'EX_DATA_{i}' for i in range(len(v.data))) or '0'}}};")
    lines.append(_long_table("EX_DATA_SIZE", [np.asarray(d).size for d in v.data]))
    lines.append(double_table("EX_SETTINGS", settings_row(m.settings)))
    lines.append(_long_table("EX_SERIES", v.series))
    lines.append(_long_table("EX_CLOCK_J", v.clock_j))
    lines.append(double_table("EX_EVENT_T", v.event_t))
    lines.append(_int_table("EX_EVENT_BLOCK", v.event_block))
    names = ", ".join(quoted(b.name) for b in m.blocks) or '""'
    errors = ", ".join(quoted(e) for e in ERRORS.names)
    lines += [f"static const char *const EX_BLOCK_NAMES[{max(len(m.blocks), 1)}] = {{{names}}};",
              f"static const char *const EX_ERROR_NAMES[] = {{{errors}}};", ""]
    locate = _Locator(m)
    outs = [(view.size, locate(view)) for view, _ in m.outports.values()]
    lines.append(_long_table("EX_INPUT_AT", [generated.offsets[b.name][0]
                                          for b in m.inports.values()]))
    lines.append(_long_table("EX_INPUT_SIZE", [b.p.value.size for b in m.inports.values()]))
    lines += [f"struct {name}_model {{", "    RT *rt;",
              *(f"    double {k}[{max(n, 1)}];" for k, n in sizes.items()),
              f"    double TV[{max(tune.initial.size, 1)}];  /* the tunable values, then "
              "those computed from them */",
              "    int started, moved;  /* an FMU's model exchange: the start's event is done,",
              "                            states moved after a step */",
              "    char message[640];", "};", ""]
    lines += _parameters(name, tune, sizes["P"])
    lines += _api(name, outs, sizes, len(v.event_t))
    return "\n".join(lines) + "\n"


def _parameters(name, tune, np_):
    """The tunable parameters' tables and functions (tunable.py: what a change re-derives,
    in C): NAME_parameter, NAME_not_tunable, NAME_parameter_size, NAME_set_parameter."""
    params, n = tune.parameters, len(tune.parameters)
    refused = [x for pair in tune.refused for x in pair]
    return [
        double_table("EX_TV", tune.initial),
        f"static const char *const EX_PARAM_NAMES[{max(n, 1)}] = "
        f"{{{', '.join(quoted(p.name) for p in params) or '0'}}};",
        _int_table("EX_PARAM_AT", tune.offsets()),
        _int_table("EX_PARAM_SIZE", [p.size for p in params]),
        _int_table("EX_PARAM_FIXED", [p.variability == "fixed" for p in params]),
        f"static const char *const EX_NOT_TUNABLE[{max(len(refused), 1)}] = "
        f"{{{', '.join(map(quoted, refused)) or '0'}}};",
        "/* a value computed from the tunable ones fails: why_ says why, as normal mode would */",
        "#undef FAIL", "#define FAIL(...) snprintf(why_, 256, __VA_ARGS__)",
        *tune.c_functions,
        "#undef FAIL", "#define FAIL(...) rt_fail(rt, self_, t, method_, __VA_ARGS__)", "",
        "/* everything the tunable values reach, computed again from them */",
        "static void ex_rederive(double *tv, double *P, char *why_)", "{",
        *(f"    if (!why_[0])\n        {step};" for step in tune.c_steps),
        "    (void)tv; (void)P;", "}", "",
        "/* a parameter's name as blocksim run --set spells its path: parameters.k, "
        "blocks.PID.Ki */",
        "static const char *ex_short_name(const char *name)", "{",
        '    if (strncmp(name, "parameters.", 11) == 0)', "        return name + 11;",
        '    return strncmp(name, "blocks.", 7) == 0 ? name + 7 : name;', "}", "",
        f"int {name}_parameter(const char *name)", "{",
        "    name = ex_short_name(name);",
        f"    for (int k = 0; k < {n}; k++)",
        "        if (strcmp(EX_PARAM_NAMES[k], name) == 0)", "            return k;",
        "    return -1;", "}", "",
        f"const char *{name}_not_tunable(const char *name)", "{",
        "    name = ex_short_name(name);",
        f"    for (int k = 0; k + 1 < {len(refused)}; k += 2)",
        "        if (strcmp(EX_NOT_TUNABLE[k], name) == 0)",
        "            return EX_NOT_TUNABLE[k + 1];", "    return NULL;", "}", "",
        f"int {name}_parameter_size(int k)", "{",
        f"    return k >= 0 && k < {n} ? EX_PARAM_SIZE[k] : 0;", "}", "",
        f"int {name}_set_parameter({name}_model *m, int k, const double *value)", "{",
        f"    if (k < 0 || k >= {n}) {{",
        f'        snprintf(m->message, sizeof m->message, "{name}: no tunable parameter %d", k);',
        "        return -1;", "    }",
        "    if (EX_PARAM_FIXED[k] && (m->rt->phase != 0 || m->started)) {",
        '        snprintf(m->message, sizeof m->message, "%s is fixed: set it before the run '
        'starts (a block it reaches has zero crossings or a workspace)", EX_PARAM_NAMES[k]);',
        "        return -1;", "    }",
        f"    double tv[{max(tune.initial.size, 1)}], P[{max(np_, 1)}];",
        "    memcpy(tv, m->TV, sizeof tv);", "    memcpy(P, m->P, sizeof P);",
        "    memcpy(m->TV + EX_PARAM_AT[k], value, sizeof(double) * EX_PARAM_SIZE[k]);",
        '    char why_[256] = "";', "    ex_rederive(m->TV, m->P, why_);",
        "    if (why_[0]) {  /* refused: the values before */",
        "        memcpy(m->TV, tv, sizeof tv);", "        memcpy(m->P, P, sizeof P);",
        '        snprintf(m->message, sizeof m->message, "%s refused: %s", EX_PARAM_NAMES[k], '
        "why_);",
        "        return -1;", "    }",
        "    m->message[0] = 0;", "    return 0;", "}", ""]


def _api(name, outs, sizes, nevents):
    """The library's functions (NAME.h documents them)."""
    copy_out = [f"    memcpy(out + {k}, m->{buf} + {off}, sizeof(double) * {size});"
                for k, size, (buf, off) in _output_places(outs)]
    return [
        f"{name}_model *{name}_init(void)", "{",
        f"    {name}_model *m = calloc(1, sizeof({name}_model));",
        "    if (!m)", "        return NULL;",
        "    m->rt = rt_create();",
        "    if (!m->rt) {", "        free(m);", "        return NULL;", "    }",
        *(f"    memcpy(m->{k}, EX_INIT_{k}, sizeof(double) * {n});" for k, n in sizes.items()
          if n),
        "    memcpy(m->TV, EX_TV, sizeof EX_TV);",
        f"    double *buffers[] = {{{', '.join(f'm->{k}' for k in BIND.names)}}};",
        "    rt_bind(m->rt, buffers, (const double **)EX_DATA, EX_DATA_SIZE);",
        "    rt_configure(m->rt, EX_SETTINGS, EX_SERIES, EX_CLOCK_J, EX_EVENT_T, EX_EVENT_BLOCK,",
        f"                 {nevents});",
        "    return m;", "}", "",
        f"void {name}_set_input({name}_model *m, int input, const double *value)", "{",
        f"    if (input >= 0 && input < {name}_NINPUTS)",
        "        memcpy(m->P + EX_INPUT_AT[input], value, sizeof(double) * EX_INPUT_SIZE[input]);",
        "}", "",
        f"static int {name}_outcome({name}_model *m, int status)", "{",
        "    if (m->rt->error || status == RT_FAILED)", "        return -1;",
        "    return status == RT_DONE ? 1 : 0;", "}", "",
        "/* the run to time t, which its loop makes an event instant */",
        f"static int {name}_pause_at({name}_model *m, double t)", "{",
        "    m->rt->pausing = 1;", "    m->rt->pause_t = t;",
        "    int status = rt_run(m->rt, 1.0);",
        "    m->rt->pausing = 0;",
        f"    return {name}_outcome(m, status);", "}", "",
        f"int {name}_advance({name}_model *m, double t)", "{",
        f"    int status = {name}_pause_at(m, t);",
        "    m->rt->rec.n = m->rt->events.n = 0;  /* a controller runs for ever: no rows */",
        "    return status;", "}", "",
        f"int {name}_run({name}_model *m)", "{",
        f"    return {name}_outcome(m, rt_run(m->rt, 1.0));", "}", "",
        f"double {name}_time(const {name}_model *m)", "{",
        "    return m->rt->phase == 0 ? m->rt->start : m->rt->t;", "}", "",
        "/* the outputs from the buffers as the last evaluation left them */",
        f"static void {name}_copy_outputs({name}_model *m, double *out)", "{",
        *copy_out, "    (void)m;", "    (void)out;", "}", "",
        f"void {name}_outputs({name}_model *m, double *out)", "{",
        "    if (m->rt->phase == 0)  /* not started: the start's values */",
        f"        {name}_pause_at(m, m->rt->start);",
        "    rt_outputs(m->rt, m->rt->t, m->rt->y);",
        f"    {name}_copy_outputs(m, out);", "}", "",
        f"int {name}_derivatives({name}_model *m, double t, const double *x, double *dx)", "{",
        "    return rt_eval_f(m->rt, t, x, dx) ? -1 : 0;", "}", "",
        f"long long {name}_rows({name}_model *m, const double **rows)", "{",
        "    double *data = NULL;", "    long long n = rt_rows(m->rt, 0, &data);",
        "    *rows = data;", "    return n;", "}", "",
        f"const char *{name}_error({name}_model *m)", "{",
        "    RT *rt = m->rt;", "    if (!rt->error)",
        "        return m->message;  /* a refused value's, or empty */",
        "    int k = rt->error >= 1 && rt->error <= (int)(sizeof EX_ERROR_NAMES / sizeof "
        "*EX_ERROR_NAMES) - 1 ? rt->error : 0;",
        "    if (rt->error == RT_E_BLOCK)",
        f'        snprintf(m->message, sizeof m->message, "{name}: block %s failed at t = '
        '%.17g: %s", EX_BLOCK_NAMES[rt->error_block], rt->error_t, rt->error_text);',
        "    else",
        f'        snprintf(m->message, sizeof m->message, "{name}: the run failed at t = %.17g '
        '(%s)", rt->error_t, EX_ERROR_NAMES[k]);',
        "    return m->message;", "}", "",
        f"void {name}_terminate({name}_model *m)", "{",
        "    if (!m)", "        return;", "    rt_free(m->rt);", "    free(m);", "}"]


def _output_places(outs):
    """(offset in the outputs, size, (buffer, offset)) of each declared output, from
    (size, (buffer, offset)) of each."""
    k, places = 0, []
    for size, place in outs:
        places.append((k, size, place))
        k += size
    return places


# -- NAME.h ----------------------------------------------------------------------------------
def _header(model, generated, name, tune):
    m, guard = model, f"{name.upper()}_H"
    inputs = [(n, b.p.value.size) for n, b in m.inports.items()]
    outputs = [(n, view.size) for n, (view, _) in m.outports.items()]
    channels = generated.record  # (name, shape): the record's, then the sinks' inputs
    header = ["t"] + [c for n, shape in channels[:len(m.record)]
                      for c in column_names(n, shape)]
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerow(header)
    lines = [f"/* {name}: the diagram {m.name!r} as a C library, exported by blocksim "
             "(blocksim export --c);",
             "   its values are the diagram's as exported. docs/export.md describes it. */",
             f"#ifndef {guard}", f"#define {guard}", "",
             f"#define {name}_NX {m.xbuf.size}  /* continuous states */",
             f"#define {name}_NINPUTS {len(inputs)}"]
    lines += [f"#define {name}_INPUT_{c_name(n)} {k}  /* {size} double(s) */"
              for k, (n, size) in enumerate(inputs)]
    k = 0
    for n, size in outputs:
        lines.append(f"#define {name}_OUTPUT_{c_name(n)} {k}  /* {size} double(s) */")
        k += size
    width = 1 + sum(math.prod(shape) for _, shape in channels)
    lines += [f"#define {name}_OUTPUTS_SIZE {k}",
              f"#define {name}_ROW_WIDTH {width}",
              f"#define {name}_CSV_COLUMNS {len(header)}",
              f"#define {name}_CSV_HEADER {quoted(text.getvalue())}", "",
              f"#define {name}_NPARAMETERS {len(tune.parameters)}  /* tunable parameters */"]
    lines += [f"#define {name}_PARAMETER_{c_name(p.name)} {k}  /* {p.size} double(s), "
              f"{p.variability} */" for k, p in enumerate(tune.parameters)]
    lines += [f"/*   {n} is not tunable: {why} */" for n, why in tune.refused]
    lines += [f"#define {name}_PARAMETER_SIZE_MAX "
              f"{max([p.size for p in tune.parameters] + [1])}", "",
              f"typedef struct {name}_model {name}_model;", "",
              "/* a run at the diagram's start; NULL when out of memory */",
              f"{name}_model *{name}_init(void);",
              f"/* input {name}_INPUT_<name> set to `value` (its size in doubles), held until "
              "set again */",
              f"void {name}_set_input({name}_model *m, int input, const double *value);",
              f"/* the index of the tunable parameter `name` ({name}_PARAMETER_<name>; also "
              "spelled as --set's path,",
              "   parameters.k, blocks.PID.Ki), -1 when it is not one */",
              f"int {name}_parameter(const char *name);",
              "/* why the diagram's parameter `name` is not tunable; NULL when it is, or is "
              "not the diagram's */",
              f"const char *{name}_not_tunable(const char *name);",
              f"int {name}_parameter_size(int k);  /* its number of doubles */",
              f"/* parameter k set to `value` ({name}_parameter_size(k) doubles) and what "
              "depends on it computed again;",
              "   a tunable one before the run and between steps, a fixed one before the run "
              f"only; 0, -1 ({name}_error says why) */",
              f"int {name}_set_parameter({name}_model *m, int k, const double *value);",
              "/* run to time t, an instant of the run (the step ends there); 0, 1 once the "
              "stop is reached,",
              f"   -1 when the run failed ({name}_error says why); it keeps no rows */",
              f"int {name}_advance({name}_model *m, double t);",
              f"/* run to the stop time as blocksim run does, recording the rows; returns as "
              f"{name}_advance */",
              f"int {name}_run({name}_model *m);",
              f"double {name}_time(const {name}_model *m);",
              f"/* the diagram's outputs now, {name}_OUTPUTS_SIZE doubles "
              f"({name}_OUTPUT_<name> where each starts) */",
              f"void {name}_outputs({name}_model *m, double *out);",
              f"/* dx = the derivative of the {name}_NX continuous states at (t, x), the inputs "
              "as set; 0, -1 */",
              f"int {name}_derivatives({name}_model *m, double t, const double *x, double *dx);",
              f"/* the rows {name}_run recorded: {name}_ROW_WIDTH doubles each (t, the record:, "
              "the sinks'),",
              f"   the first {name}_CSV_COLUMNS those of {name}_CSV_HEADER */",
              f"long long {name}_rows({name}_model *m, const double **rows);",
              f"const char *{name}_error({name}_model *m);  /* why the run failed or a value "
              "was refused; \"\" when neither */",
              f"void {name}_terminate({name}_model *m);", "", f"#endif", ""]
    return "\n".join(lines)


# -- main.c ----------------------------------------------------------------------------------
def _main(name):
    return "\n".join([
        f"/* Runs the exported diagram {name} to its stop time and writes its recorded signals "
        "as CSV",
        "   (to the file its argument names, else to standard output), as `blocksim run --csv`",
        "   writes results.csv; arguments NAME=VALUE set tunable parameters first (an array's",
        "   values separated by commas). Exit 2 for an argument refused, 3 when the run failed",
        "   (the rows recorded so far are written). */",
        "#include <stdio.h>", "#include <stdlib.h>", "#include <string.h>",
        f'#include "{name}.h"', "",
        f"static int set_parameter({name}_model *m, const char *arg, const char *eq)", "{",
        "    char key[256];", '    snprintf(key, sizeof key, "%.*s", (int)(eq - arg), arg);',
        f"    int k = {name}_parameter(key);",
        "    if (k < 0) {",
        f"        const char *why = {name}_not_tunable(key);",
        "        if (why)",
        f'            fprintf(stderr, "{name}: %s cannot be set: %s\\n", key, why);',
        "        else",
        f'            fprintf(stderr, "{name}: no tunable parameter %s\\n", key);',
        "        return -1;", "    }",
        f"    double value[{name}_PARAMETER_SIZE_MAX];",
        f"    int n = 0, size = {name}_parameter_size(k);",
        "    const char *at = eq + 1;",
        "    for (;;) {", "        char *end;", "        double v = strtod(at, &end);",
        "        if (end == at || n == size || (*end && *end != ',')) {",
        f'            fprintf(stderr, "{name}: %s: expected %d number(s) separated by commas, '
        'got \'%s\'\\n", key, size, eq + 1);',
        "            return -1;", "        }",
        "        value[n++] = v;", "        if (!*end)", "            break;",
        "        at = end + 1;", "    }",
        "    if (n != size) {",
        f'        fprintf(stderr, "{name}: %s: expected %d number(s), got %d\\n", key, size, n);',
        "        return -1;", "    }",
        f"    if ({name}_set_parameter(m, k, value) < 0) {{",
        f'        fprintf(stderr, "{name}: %s\\n", {name}_error(m));',
        "        return -1;", "    }",
        "    return 0;", "}", "",
        "int main(int argc, char **argv)", "{",
        f"    {name}_model *m = {name}_init();",
        "    if (!m) {", f'        fputs("{name}: out of memory\\n", stderr);',
        "        return 3;", "    }",
        "    const char *file = NULL;",
        "    for (int i = 1; i < argc; i++) {",
        "        const char *eq = strchr(argv[i], '=');",
        "        if (!eq)", "            file = argv[i];",
        "        else if (set_parameter(m, argv[i], eq) < 0) {",
        f"            {name}_terminate(m);", "            return 2;", "        }", "    }",
        '    FILE *out = file ? fopen(file, "w") : stdout;',
        "    if (!out) {", "        perror(file);", f"        {name}_terminate(m);",
        "        return 2;", "    }",
        f"    int status = {name}_run(m);",
        "    const double *rows;",
        f"    long long n = {name}_rows(m, &rows);",
        f"    fputs({name}_CSV_HEADER, out);",
        "    for (long long i = 0; i < n; i++)",
        f"        for (int j = 0; j < {name}_CSV_COLUMNS; j++)",
        f'            fprintf(out, "%.17g%c", rows[i * {name}_ROW_WIDTH + j], '
        f"j + 1 < {name}_CSV_COLUMNS ? ',' : '\\n');",
        "    if (status < 0)", f'        fprintf(stderr, "%s\\n", {name}_error(m));',
        f"    {name}_terminate(m);",
        "    if (out != stdout && fclose(out) != 0) {", "        perror(file);",
        "        return 3;", "    }",
        "    return status < 0 ? 3 : 0;", "}", ""])


# -- C text ----------------------------------------------------------------------------------
def _long_table(name, values):
    values = [int(x) for x in np.asarray(values).ravel()]
    items = ", ".join(f"({x + 1}LL - 1)" if x == -2 ** 63 else f"{x}LL" for x in values)
    return f"static const long long {name}[{max(len(values), 1)}] = {{{items or '0'}}};"


# -- FMU ---------------------------------------------------------------------------------------
INTERFACES = {"model_exchange": ("model_exchange",), "co_simulation": ("co_simulation",),
              "both": ("model_exchange", "co_simulation")}


def me_refusals(model):
    """Why `model` cannot be a model-exchange FMU, as DiagramErrors at the blocks' lines;
    None when it can. The importer's solver integrates the states and calls the event
    update only at events and its completed steps, so what blocksim's own loop does along
    every step has no place: histories sampled along steps, a stop input located inside a
    step; nor do the rates of inputs a block watches (the FMU's inputs come without)."""
    why = {}
    for block in model.blocks:
        if block.keeps_history:
            why[block.name] = (block, "keeps a history of its inputs sampled along every "
                                      "step, which an importer's steps do not give")
        elif getattr(block, "rates", None):
            why[block.name] = (block, "watches the rates of its inputs, which an FMU's "
                                      "inputs do not come with")
        elif getattr(block, "stops", False):
            why[block.name] = (block, "stops the run where it locates its input becoming "
                                      "non-zero inside a step, which an importer does not do")
    errors = []
    for name, (block, reason) in why.items():
        spec = model.spec.blocks.get(name) if model.spec is not None else None
        message = f"cannot export for model exchange: block type '{block.type}' {reason}"
        hint = "export it with --interface co_simulation (blocksim's solver in the FMU)"
        errors.append(spec.loc.error(message, block=name, hint=hint) if spec is not None
                      else DiagramError(message, file=model.file, block=name, hint=hint))
    if not errors:
        return None
    return errors[0] if len(errors) == 1 else DiagramErrors(errors)


def export_fmu(model, out, fmi=2, interface=None):
    """Write `model` as the FMU `out` (FMI `fmi`, 2 or 3; `interface` model_exchange,
    co_simulation, both, or None: both when the diagram can be exported for model
    exchange, else co-simulation alone); returns the interfaces it offers and, when None
    fell back to co-simulation, the DiagramError(s) saying why (else None). The FMU is
    the exported C with blocksim's FMU model contract
    (blocksim/fmi/c/fmu_model.h) around it. Model exchange gives the importer the diagram's
    continuous states, derivatives and zero-crossing indicators, its sample hits and
    scheduled events as time events, and the diagram's event handling as the event update;
    co-simulation runs the diagram's own solver inside doStep. The diagram's inputs and
    outputs are the FMU's."""
    import tempfile

    from ..fmi.build import Model, Variable, build_fmu
    refused, why_not = refusals(model), None
    if refused is None and interface is None:
        interface, why_not = "both", me_refusals(model)
        if why_not is not None:
            interface = "co_simulation"
    elif refused is None and interface != "co_simulation":
        refused = me_refusals(model)
    if refused is not None:
        raise refused
    interfaces = INTERFACES[interface]
    if model.settings.start != 0.0:
        raise DiagramError("cannot export an FMU: simulation.start must be 0 (an FMU's time "
                           "starts where its importer says; export with --set "
                           "simulation.start=0)", file=model.file)
    name = c_name(model.name)
    try:
        generated = generate(model)
        arguments(model, generated)
    except SeriesRange as e:
        raise DiagramError(f"cannot export: {e}", file=model.file) from None
    tune = tunables(model)
    variables = [Variable(n, "input", start=np.ravel(b.p.value).tolist(),
                          shape=tuple(np.shape(b.p.value)))
                 for n, b in model.inports.items()]
    nx = model.xbuf.size
    me = "model_exchange" in interfaces and nx > 0
    variables += [Variable(n, "output", shape=tuple(view.shape),
                           depends=tuple(sorted(fed_by(model, text))) + (("x",) if me else ()))
                  for n, (view, text) in model.outports.items()]
    if me:
        variables += [Variable("x", state=True, shape=(nx,), start=np.ravel(model.x0).tolist(),
                               description="the diagram's continuous states"),
                      Variable("der(x)", derivative="x", shape=(nx,),
                               description="their derivatives")]
    variables += [Variable(p.name, "parameter", p.variability, start=p.value.ravel().tolist(),
                           shape=p.value.shape) for p in tune.parameters]
    _check_names(model, variables)
    source = "\n".join([_header(model, generated, name, tune),
                        _source(model, generated, name, tune).replace(f'#include "{name}.h"',
                                                                      ""),
                        _fmu_glue(model, name, me, tune)])
    with tempfile.TemporaryDirectory() as tmp:
        c_file = Path(tmp) / "model.c"
        c_file.write_text(source)
        description = Model(name, c_file, variables, interfaces=interfaces,
                            event_indicators=model.zbuf.size if "model_exchange" in interfaces
                            else 0,
                            step_events="model_exchange" in interfaces,
                            model_data=True, stop_time=model.settings.stop,
                            description=model.spec.description if model.spec else "")
        build_fmu(description, out, fmi=fmi)
    return interfaces, why_not, tune


def _check_names(model, variables):
    """DiagramError when two of the FMU's variables would share a name, or the C name
    the model's source places them by (an output `x` and model exchange's states `x`, a
    parameter and an input of one name)."""
    def kind(v):
        return "state" if v.state else "derivative" if v.derivative else v.causality

    seen = {}
    for var in variables:
        for key in (var.name, var.c_name):
            other = seen.setdefault(key, var)
            if other is not var:
                raise DiagramError(
                    f"cannot export an FMU: its {kind(other)} {other.name!r} and its "
                    f"{kind(var)} {var.name!r} would share the name {key!r}; rename one "
                    "(model exchange's states are 'x', their derivatives 'der(x)')",
                    file=model.file)


def fed_by(model, text):
    """The diagram's inputs that the output `text` (a port, BLOCK.PORT) depends on at the
    same instant: those reached going back through the wires and the blocks' direct
    feedthrough (an FMU's output dependencies: the importer needs them to order its
    loops)."""
    node_of = {(n.block.name, port): n for n in model.nodes for port in n.ports}
    block, _, port = text.split("[")[0].rpartition(".")
    todo, seen, found = [(block, port)], set(), set()
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        seen.add(key)
        if key in model.drivers:  # an input port: the output that drives it
            todo.append(model.drivers[key][:2])
        elif key[0] in model.inports:
            found.add(key[0])
        elif key in node_of:
            todo += [(key[0], inp) for inp in node_of[key].inputs]
    return found


def _fmu_glue(model, name, me, tune):
    """The FMU model contract's functions over the exported library. Co-simulation: the
    inputs set from the FMU's values before each step, the outputs read back after.
    Model exchange (`me`: the diagram has continuous states x): the diagram evaluated at
    the importer's time and states; at an event, the diagram's own event instant
    (rt_at_event: scheduled events and sample hits due, the zero-crossing handlers)."""
    ins = [(k, f"V_{c_name_fmu(n)}") for k, n in enumerate(model.inports)]
    outs = [(f"V_{c_name_fmu(n)}", f"{name}_OUTPUT_{c_name(n)}", view.size)
            for n, (view, _) in model.outports.items()]
    states = "m->v + V_x" if me else "d->rt->y"  # no states: copies of nothing
    return "\n".join([
        '#include "fmu_model.h"', "",
        f"/* the diagram's run of an FMU instance, made at its first use */",
        f"static {name}_model *diagram_of(Instance *m)", "{",
        "    if (!m->model_data)", f"        m->model_data = {name}_init();",
        "    return m->model_data;", "}", "",
        "void model_release(Instance *m)", "{",
        f"    {name}_terminate(m->model_data);", "    m->model_data = NULL;", "}", "",
        "/* the inputs, and the parameters the importer changed (what they reach computed",
        "   again); MODEL_ERROR when a value is refused */",
        f"static int set_inputs(Instance *m, {name}_model *d)", "{",
        *(f"    {name}_set_input(d, {k}, m->v + {v});" for k, v in ins),
        *(f"    if (memcmp(d->TV + {at}, m->v + V_{c_name_fmu(p.name)}, sizeof(double) * "
          f"{p.size}) != 0 && {name}_set_parameter(d, {k}, m->v + V_{c_name_fmu(p.name)}))\n"
          f'    {{\n        model_log(m, MODEL_ERROR, "%s", {name}_error(d));\n'
          "        return MODEL_ERROR;\n    }"
          for k, (p, at) in enumerate(zip(tune.parameters, tune.offsets()))),
        "    (void)m;", "    (void)d;", "    return MODEL_OK;", "}", "",
        "static void get_outputs(Instance *m, const double *out)", "{",
        *(f"    memcpy(m->v + {v}, out + {o}, sizeof(double) * {size});"
          for v, o, size in outs), "    (void)m;", "    (void)out;", "}", "",
        f"static int exchange(Instance *m, {name}_model *d)", "{",
        "    if (set_inputs(m, d))", "        return MODEL_ERROR;",
        f"    double out[{name}_OUTPUTS_SIZE > 0 ? {name}_OUTPUTS_SIZE : 1];",
        f"    {name}_outputs(d, out);", "    get_outputs(m, out);", "    return MODEL_OK;",
        "}", "",
        f"static int failed(Instance *m, {name}_model *d)", "{",
        f'    model_log(m, MODEL_ERROR, "%s", {name}_error(d));',
        "    return MODEL_ERROR;", "}", "",
        "/* model exchange: the diagram's next time event (a sample hit, a scheduled event) */",
        "static double next_time_event(RT *rt)", "{",
        "    double next = INFINITY;",
        "    for (int b = 0; b < NCLK; b++)",
        "        next = PYMIN(next, rt->clk_next[b]);",
        "    if (rt->nheap)", "        next = PYMIN(next, rt->heap[0].t);",
        "    return next;", "}", "",
        "/* model exchange: the start's event instant (as the run's first), once */",
        f"static int me_start(Instance *m, {name}_model *d)", "{",
        "    RT *rt = d->rt;",
        "    d->started = 1;",
        "    memcpy(rt->XD, rt->XD0, sizeof(double) * NXD);",
        f"    memcpy(rt->y, {states}, sizeof(double) * NX);",
        "    dg_const(rt, m->time);",
        "    if (rt_at_event(rt, m->time, rt->y, 1))", "        return MODEL_ERROR;",
        f"    memcpy({states}, rt->y, sizeof(double) * NX);",
        "    rt->events.n = 0;", "    return MODEL_OK;", "}", "",
        "int model_values(Instance *m)", "{",
        f"    {name}_model *d = diagram_of(m);",
        "    if (!d) {", '        model_log(m, MODEL_ERROR, "out of memory");',
        "        return MODEL_ERROR;", "    }",
        "    if (m->cosim)", "        return exchange(m, d);",
        "    if (set_inputs(m, d))", "        return MODEL_ERROR;",
        "    if (!d->started && me_start(m, d))", "        return failed(m, d);",
        f"    if (rt_f(d->rt, m->time, {states}, d->rt->DX))",
        "        return failed(m, d);",
        *(["    memcpy(m->v + V_der_x, d->rt->DX, sizeof(double) * NX);"] if me else []),
        f"    double out[{name}_OUTPUTS_SIZE > 0 ? {name}_OUTPUTS_SIZE : 1];",
        f"    {name}_copy_outputs(d, out);", "    get_outputs(m, out);",
        "    return MODEL_OK;", "}", "",
        "/* the indicators at the state model_values last evaluated */",
        "void model_indicators(Instance *m, double *z)", "{",
        f"    {name}_model *d = m->model_data;",
        "    if (!d || m->cosim || !NZ)", "        return;",
        "    dg_indicators(d->rt, m->time);",
        "    memcpy(z, d->rt->Z, sizeof(double) * NZ);", "}", "",
        "/* model exchange: the diagram's event instant at the importer's time and states;",
        "   a state event is a crossing located by the importer (as blocksim's loop locates",
        "   it: the indicators there have crossed) */",
        "int model_event(Instance *m, int time_event)", "{",
        f"    {name}_model *d = m->model_data;",
        "    if (!d || m->cosim)", "        return MODEL_OK;",
        "    RT *rt = d->rt;",
        "    /* a time event the importer reached within rounding (its grid's 0.3 for the",
        "       hit at 0.30000000000000004) happens at the event's exact time (SNAP) */",
        "    double t = m->time, next = next_time_event(rt);",
        "    if (fabs(next - t) <= SNAP * PYMAX(1.0, fabs(t)))",
        "        t = next;",
        f"    memcpy(rt->y, {states}, sizeof(double) * NX);",
        "    if (NZ && !time_event) {",
        "        rt_outputs(rt, t, rt->y);",
        "        dg_indicators(rt, t);",
        "        memcpy(rt->z_located, rt->Z, sizeof(double) * NZ);",
        "        rt->has_located = 1;", "    }",
        "    int status = rt_at_event(rt, t, rt->y, 0);",
        "    rt->has_located = 0;",
        "    rt->events.n = 0;",
        "    if (status)", "        return failed(m, d);",
        f"    m->states_changed = d->moved || memcmp({states}, rt->y, sizeof(double) * NX);",
        "    d->moved = 0;",
        f"    memcpy({states}, rt->y, sizeof(double) * NX);",
        "    next = next_time_event(rt);",
        "    m->next_event_defined = isfinite(next) && next <= rt->stop;",
        "    m->next_event_time = next;",
        "    return MODEL_OK;", "}", "",
        "/* model exchange, after an accepted step of the importer (ZeroCrossings.after_step):",
        "   a step event when an indicator has crossed (the importer's own detection may not",
        "   see a crossing from 0) or a block asks for one; else the blocks' advance() and the",
        "   indicators kept as those the next crossing is tested from */",
        "int model_step_event(Instance *m)", "{",
        f"    {name}_model *d = m->model_data;",
        "    if (!d || m->cosim || !NH)", "        return 0;",
        "    RT *rt = d->rt;",
        "    dg_indicators(rt, m->time);",
        "    if (rt_crossed_any(rt->z_prev, rt->Z))", "        return 1;",
        "    if (ADVANCE) {", "        dg_advance(rt, m->time);",
        "        dg_indicators(rt, m->time);", "    }",
        "    memcpy(rt->z_prev, rt->Z, sizeof(double) * NZ);",
        "    int asked = rt->step_event;", "    rt->step_event = 0;",
        "    /* states advance() moved reach the importer through an event */",
        f"    if (NX && memcmp({states}, rt->X, sizeof(double) * NX) != 0) {{",
        f"        memcpy({states}, rt->X, sizeof(double) * NX);",
        "        d->moved = asked = 1;", "        m->dirty = 1;", "    }",
        "    return asked;", "}", "",
        "/* co-simulation: blocksim's solver, with the diagram's settings, to time + h */",
        "int model_do_step(Instance *m, double h)", "{",
        f"    {name}_model *d = diagram_of(m);",
        "    if (!d)", "        return MODEL_ERROR;",
        "    if (exchange(m, d))", "        return MODEL_ERROR;",
        f"    int status = {name}_advance(d, m->time + h);",
        "    if (status < 0)", "        return failed(m, d);",
        f"    if ({name}_time(d) < m->time + h) {{",
        '        model_log(m, MODEL_ERROR, "a step to %.17g s: the diagram ends at its stop "',
        '                  "time, %.17g s (export it with a later simulation.stop)",',
        f"                  m->time + h, {name}_time(d));",
        "        return MODEL_ERROR;", "    }",
        "    m->time += h;", "    return exchange(m, d);", "}", ""])


def c_name_fmu(name):
    """A variable's name as blocksim.fmi.build spells its V_ offset."""
    from ..fmi.build import Variable
    return Variable(name).c_name
