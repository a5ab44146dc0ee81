"""An exported diagram's tunable parameters: which of its declared values can be changed in
the exported C (`NAME_set_parameter`, an FMU's causality="parameter" variables), and the C
that re-derives what depends on them.

The candidates are the diagram's top-level `parameters:` whose value is a literal (one
defined by an expression of others is computed from them: it follows them) and the numeric
block parameters written in the diagram as literals (`PID.Ki`). A change must be one the
exported code can follow without Python: every block parameter it reaches (through the
expressions of the parameters that read it) must be stored as given in the run's vector P
(`d.param`), read by no Python the export ran once (`derive`, the initial states, the
time events, the sample times, the run's data, values_changed: rundata.not_as_given, the
answer a sweep's columns take too) and given by an expression the
expression lowering writes in C; nothing else may read it (the settings, a robot, a
subsystem's parameters, a block's own texts). A parameter that fails this is not exported
as tunable, with the reason.

What a block derives as declared texts (rundata.py: derived arrays, facts, checks) the C
computes again from P after every set, the same texts lowered: a check that fails, a fact
that differs from the compiled one (the structure the C was written for) or a derived
value that is not finite refuses the set with the block's message, the values kept.

Variability (FMI's terms): "fixed", settable only before the run starts, when a block it
reaches has zero crossings or a workspace (its modes and what its workspace holds follow
its values at events only: a change between steps has no event to settle it); else
"tunable", settable between steps too.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..language import expr
from ..rundata import RunData, not_as_given, values_of
from .expression import lower_expression
from .lowering import LoweringError, double_table

_NUMERIC = ("value", "scalar")  # the parameter kinds a tunable may reach
# params.Rule's tests in C, on the double v (a bound formatted in)
_C_REFUSES = {"nan": "isnan(v)", "inf": "isinf(v)", ">": "!(v > {})", ">=": "!(v >= {})"}


@dataclass
class Parameter:
    """A tunable parameter: its name (a top-level parameter's, or BLOCK.PARAM), its value
    as exported, and FMI's variability ("tunable" or "fixed")."""
    name: str
    value: np.ndarray
    variability: str

    @property
    def size(self):
        return self.value.size


@dataclass
class Tunables:
    """The diagram's tunable parameters, those refused [(name, reason)], and the C of the
    re-derivation (`c_functions`: one function per computed value; `c_steps`: the calls,
    in order, of `ex_rederive(tv, P, why_)`)."""
    parameters: list = field(default_factory=list)
    refused: list = field(default_factory=list)
    c_functions: list = field(default_factory=list)
    c_steps: list = field(default_factory=list)
    initial: np.ndarray = None  # the tunable values `tv` as exported: the parameters',
    #                             then the top-level values computed from them

    def offsets(self):
        """Where each parameter's value starts in the tunable values `tv`."""
        out, k = [], 0
        for p in self.parameters:
            out.append(k)
            k += p.size
        return out


def _text(raw):
    """A raw value (an expression, a number, a list of them) as one expression's text."""
    if isinstance(raw, (list, tuple)):
        return "[" + ", ".join(_text(r) for r in raw) + "]"
    if isinstance(raw, str):
        return f"({raw})"
    return repr(float(raw)) if not isinstance(raw, bool) else repr(raw)


def _numeric(value):
    try:
        array = np.asarray(value)
    except Exception:  # noqa: BLE001 - a robot, a mapping: not a number
        return None
    if array.dtype.kind not in "biuf":
        return None
    return array.astype(float)


class _Analysis:
    def __init__(self, model):
        self.model = model
        self.spec = spec = model.spec
        self.comp = model.compilation
        scope = spec.scopes[0]
        self.raws = {k: (scope.overrides.get(k) or v).raw for k, v in scope.params.items()}
        self.top = self.comp.values.scopes[0]
        self.reads = {k: expr.names_in(raw) & self.raws.keys() for k, raw in self.raws.items()}
        self.blocks = {b.name: b for b in model.blocks}
        self.not_given = {}  # block -> {parameter: why it is not as given}
        self.steps = {}  # block -> its rederived()

    def not_as_given(self, block):
        """rundata.not_as_given of `block`, asked once."""
        found = self.not_given.get(block.name)
        if found is None:
            slots, settings = self.model.slots.get(block.name), self.model.settings
            data = slots.data if slots is not None else RunData()  # nothing in P
            found = self.not_given[block.name] = not_as_given(block, data, settings.start,
                                                           settings.stop)
        return found

    def rederived(self, block):
        """[(C code, lowering)] computing again, from its values in P, what `block`'s declared
        texts compute, in their order (RunData.texts). A check that fails, a fact that
        differs from the compiled one (the structure) or a derived array not finite refuses
        the new values with the block's message. LoweringError when one has no C."""
        found = self.steps.get(block.name)
        if found is None:
            found = self.steps[block.name] = _rederived(block, self.model.slots[block.name])
        return found

    def reach(self, name):
        """The top-level names that follow `name` (it, and those reading them)."""
        names, grown = {name}, True
        while grown:
            more = {k for k, r in self.reads.items() if r & names} - names
            names |= more
            grown = bool(more)
        return names

    def block_reads(self, names):
        """[(block, parameter, raw)] of the block parameters whose texts read `names`;
        a reason when something other than a block's numeric parameter reads them."""
        found = []
        for k, scope in enumerate(self.spec.scopes):
            if k and scope.parent == 0 and any(
                    expr.names_in(v.raw) & names for v in scope.overrides.values()):
                return None, "a subsystem's parameters read it"
        for value in self.spec.simulation.values():
            if expr.names_in(value.raw) & names:
                return None, "the simulation settings read it"
        for _, _, used in self.comp.built_sections.values():
            if set(used) & names:
                return None, "a robot model is built from it"
        for name, bspec in self.spec.blocks.items():
            block = self.blocks.get(name)
            if bspec.scope != 0 or block is None:
                continue
            for param in type(block).params:
                value = bspec.params.get(param.name)
                if value is None:
                    continue
                if param.kind in ("string", "data") and not type(block).reads_names:
                    continue  # text, not an expression (a scope's units)
                hit = (value.raw in names if param.kind == "resource" else
                       bool(expr.names_in(value.raw) & names))
                if hit:
                    found.append((block, param, value.raw))
        return found, None

    def stored(self, block, param):
        """(offset in P, shape, variability) of a block parameter a tunable may write, or a
        reason it may not."""
        what = f"block {block.name} ({block.type})"
        if param.kind in ("string", "data"):
            return None, f"{what} evaluates it in its own text ({param.name}) in Python"
        if param.kind not in _NUMERIC:
            return None, f"{what} reads it in its {param.kind} parameter {param.name}"
        why = self.not_as_given(block).get(param.name)
        if why is not None:
            return None, f"{what} {why}"
        slots = self.model.slots[block.name]
        try:
            self.rederived(block)
        except LoweringError as e:
            return None, f"{what}: a text of its run data {e}"
        k, shape = slots.offsets()[param.name]
        zero = block.zero_crossings()
        fixed = (zero is not None and np.size(zero) > 0) or bool(slots.data.work_arrays)
        return (k, tuple(shape), "fixed" if fixed else "tunable"), None


def tunables(model):
    """The Tunables of `model` (see the module docstring)."""
    a = _Analysis(model)
    out = Tunables()
    plans = []  # (name, value, computed top-level names, _plan's list)
    for name, raw in a.raws.items():
        if a.reads[name]:
            continue  # computed from others
        value = _numeric(a.top.get(name))
        if value is None:
            out.refused.append((name, "it is not a number"))
            continue
        names = a.reach(name)
        bad = [k for k in names if _numeric(a.top.get(k)) is None]
        if bad:
            out.refused.append((name, f"parameter {bad[0]}, which reads it, is not a number"))
            continue
        found, why = a.block_reads(names)
        plan, why = _plan(a, found, why)
        if why is None:
            why = _lowers(a, names - {name}, plan, names)
        if why is not None:
            out.refused.append((name, why))
            continue
        plans.append((name, value, names - {name}, plan))
    for block in model.blocks:  # literal block parameters written in the diagram
        bspec = a.spec.blocks.get(block.name)
        if bspec is None:
            continue
        for param in type(block).params:
            given = bspec.params.get(param.name)
            if given is None or param.kind not in _NUMERIC or expr.names_in(given.raw):
                continue
            value = _numeric(getattr(block.p, param.name))
            label = f"{block.name}.{param.name}"
            if value is None:
                continue
            plan, why = _plan(a, [(block, param, label)], None)
            if why is not None:
                out.refused.append((label, why))
                continue
            plans.append((label, value, set(), plan))
    _write(a, plans, out)
    return out


def _plan(a, found, why):
    """([(P offset, shape, raw, variability, block, Param)], None) of the block parameters
    `found`, or (None, reason)."""
    if why is not None:
        return None, why
    plan = []
    for block, param, raw in found:
        place, why = a.stored(block, param)
        if why is not None:
            return None, why
        plan.append((*place[:2], raw, place[2], block, param))
    return plan, None


def _lowers(a, computed, plan, inputs):
    """None when the expressions of `computed` and of `plan` lower to C with `inputs` as
    their inputs, else the reason."""
    for raw in [a.raws[k] for k in computed] + [p[2] for p in plan]:
        try:
            _lower(a, raw, inputs)
        except LoweringError as e:
            return f"its expression {_text(raw)} {e}"
    return None


def _lower(a, raw, inputs):
    reads = sorted(expr.names_in(raw) & set(inputs))
    names = {k: v for k, v in a.top.items() if k not in reads}
    values = a.comp.values
    return reads, lower_expression(_text(raw), reads, [np.shape(a.top[k]) for k in reads],
                                   names, functions={**values.functions,
                                                     **expr.MATRIX_FUNCTIONS},
                                   dotted=values.dotted)


def _write(a, plans, out):
    """The parameters and the C of their re-derivation into `out`."""
    out.parameters = [Parameter(name, value, "fixed" if any(p[3] == "fixed" for p in plan)
                                else "tunable") for name, value, _, plan in plans]
    place = {p.name: f"tv + {k}" for p, k in zip(out.parameters, out.offsets())}
    computed = set().union(*(c for _, _, c, _ in plans)) if plans else set()
    order = []  # the computed top-level values in dependency order, after the tunables'
    while len(order) < len(computed):
        order += [k for k in sorted(computed - set(order))
                  if not (a.reads[k] & computed) - set(order)]
    k = sum(p.size for p in out.parameters)
    for name in order:
        place[name] = f"tv + {k}"
        k += int(np.size(a.top[name]))
    out.initial = np.concatenate([p.value.ravel() for p in out.parameters] +
                                 [np.ravel(a.top[n]).astype(float) for n in order] +
                                 [np.zeros(0)])
    targets = {place[n]: (np.shape(a.top[n]), a.raws[n], None) for n in order}
    for label, value, _, plan in plans:
        for off, shape, raw, _, block, param in plan:
            targets[f"P + {off}"] = (shape, value if raw == label else raw, (block, param))
    inputs = {n for n in place if n in a.raws}
    blocks = {id(p[4]): p[4] for _, _, _, plan in plans for p in plan}
    steps = []  # (C code, lowering) of each ex_tune_j, in order
    for dest, (shape, raw, checked) in targets.items():
        if isinstance(raw, np.ndarray):  # BLOCK.PARAM: its value as set
            label = next(lb for lb, v, _, _ in plans if v is raw)
            code = f"const double *out_y = {place[label]};\n"
            low, value_shape = None, raw.shape
        else:
            reads, low = _lower(a, raw, inputs)
            value_shape = np.shape(expr.evaluate(_text(raw), a.top, dotted=a.comp.values.dotted,
                                                 functions=a.comp.values.functions))
            code = _evaluated({r: place[r] for r in reads}, value_shape, low)
        code += _broadcast(value_shape, dest, shape)
        if checked is not None:
            code += _checks(*checked, dest, int(np.prod(shape)))
        steps.append((code, low))
    steps += [step for block in a.model.blocks if id(block) in blocks
              for step in a.rederived(block)]
    for j, (code, low) in enumerate(steps):
        out.c_functions.append(_function(j, code, low))
        out.c_steps.append(f"ex_tune_{j}(tv, P, why_)")


def _rederived(block, slots):
    """Analysis.rederived of `block` (its run's `slots`)."""
    data, offsets = slots.data, slots.offsets()
    what = f"block {block.name}"
    values = values_of(block, data, block.p)[0]
    arrays = {a.name: a for a in data.arrays}
    tails = {"check": lambda name, message: (
                 f'if (out_y[0] == 0) {{ FAIL("{what}: {name}: {message}"); return; }}'),
             "fact": lambda name, _: (
                 f"if ((out_y[0] != 0) != {int(slots.facts[name])}) {{ FAIL(\"{what}: the "
                 f"values change its structure ({name}): export again\"); return; }}"),
             "array": lambda name, _: arrays[name]}
    texts = [(text, tails[kind](name, message)) for kind, name, text, message in data.texts()]
    steps = []
    for text, tail in texts:
        reads = sorted(n for n in expr.names_in(text) if n in offsets)
        names = {n: getattr(block.p, n) for n in expr.names_in(text)
                 if n not in offsets and hasattr(block.p, n)}
        low = lower_expression(text, reads, [offsets[n][1] for n in reads], names,
                               functions=expr.FUNCTIONS)
        shape = np.shape(expr.evaluate(text, {**names, **{n: values[n] for n in reads}}))
        code = _evaluated({n: f"P + {offsets[n][0]}" for n in reads}, shape, low)
        if not isinstance(tail, str):  # a derived array, finite as normal mode's: into P
            tail = (f"for (int i = 0; i < {_size(shape)}; i++) if (!isfinite(out_y[i])) {{ "
                    f'FAIL("{what}: its {tail.name} would not be finite"); return; }}\n'
                    + _broadcast(shape, f"P + {offsets[tail.name][0]}", tail.shape))
        steps.append((code + tail, low))
    return steps


def _size(shape):
    """The doubles of out_y for a value of `shape` (one at least)."""
    return max(int(np.prod(shape)), 1)


def _evaluated(places, shape, low):
    """C computing the lowered expression `low` into out_y (a value of `shape`), each input
    in_NAME read where `places` {NAME: C pointer} says."""
    code = "".join(f"const double *in_{n} = {at};\n" for n, at in places.items())
    return code + f"double out_y[{_size(shape)}];\n{low.code}\n"


def _broadcast(shape, dest, target):
    """C copying `out_y` of `shape` to `dest`, broadcast to `target` as numpy does."""
    index = np.broadcast_to(np.arange(int(np.prod(shape))).reshape(shape), target).ravel()
    if np.array_equal(index, np.arange(index.size)):
        return f"memcpy({dest}, out_y, sizeof(double) * {index.size});"
    items = ", ".join(map(str, index))
    return (f"static const int at_[{index.size}] = {{{items}}};\n"
            f"for (int i = 0; i < {index.size}; i++) ({dest})[i] = out_y[at_[i]];")


def _checks(block, param, dest, n):
    """C refusing, as load does (Param.convert), a value of the block's parameter `param`
    at `dest` (n doubles) that it would refuse."""
    what = f"block {block.name}: {param.name}"
    body = []
    for rule in param.rules():
        op, *bound = rule.test
        test = _C_REFUSES[op].format(*(repr(float(b)) for b in bound))
        text = rule.message.format(got="%.17g")
        body.append(f'if ({test}) {{ FAIL("{what}: {text}"{", v" if "%" in text else ""}); '
                    "return; }")
    return "\n".join(["", f"for (int i = 0; i < {n}; i++) {{",
                      f"    double v = ({dest})[i];", *("    " + b for b in body), "}"])


def _function(j, code, low):
    """The C function ex_tune_j: one computed value or block parameter from the tunable
    values `tv` (FAIL writes why it cannot be computed into why_)."""
    constants = low.constants if low is not None else np.zeros(0)
    scratch = low.scratch if low is not None else 0
    return "\n".join([
        f"static void ex_tune_{j}(double *tv, double *P, char *why_)", "{",
        "    " + double_table("P_constants", constants),
        f"    double T[{max(scratch, 1)}];",
        "    (void)P_constants; (void)T; (void)tv; (void)P; (void)why_;",
        *("    " + line for line in code.splitlines()), "}"])
