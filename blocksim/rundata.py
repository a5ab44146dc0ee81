"""What a block declares of its run data, once: the arrays a run's values fill.

After its shapes are known (`infer`) and before its states are laid out, the compiler asks
every block `declare(d)` with a `RunData` `d`:

    d.param("K")                  # parameter K stored as given (its own shape)
    d.param("bias", (3,))         # ... or broadcast to a shape (the C reads P_bias[i])
    d.derived("rate", ())         # an array `derive(p)` computes from parameters
    d.derived("Nf", (3,), "where(Kd != 0, N, 0)")  # ... or this text computes
    d.value("tau", "x0")          # parameters whose change is a change of values only
    d.fact("direct")              # derive's outputs that are structure, not stored
    d.fact(limited="max(isfinite(upper)) != 0")  # ... or a text's (truth value)
    d.check("min(lower <= upper)", "upper", "upper must be >= lower")  # a value refused
    d.sample("period", "offset")  # the parameters its sample time is made of
    d.work("seen", 3)             # compiled code's per-run workspace W_seen (zeros, or
    d.work("instant", [np.nan])   # the initial values given)

Every parameter and derived array has its place in the run's parameter vector P, in
declaration order; its shape is structure. Normal mode reads it through `self.v.NAME`, a
numpy view into P bound once (a change of value is a write into P: the block is not rebuilt
and its views stay valid); compiled code through `P_NAME` (`W_NAME` for the workspace).

A derived array or a fact given as a text is computed by evaluating it (the expression
language, over the block's parameters and the derived arrays declared before it): written
once, the same text is what an exported diagram's C computes again when a tunable
parameter changes (accel/tunable.py). So is a check: a condition over the parameters that
must hold (ParamError(param, message) when not). `derive(p)` is asked only for the rest.

`derive(p)` returns {name: array} for the derived arrays and the facts, from `p`, the
block's parameters (as `self.p` holds them); it checks the values it is given (ParamError
with the message load gives) and must not depend on anything but `p` and the block's
structure. A parameter not declared by `param` or `value` is structure: changing it
compiles the diagram again. So is a value whose facts (`fact`: a transfer function's D != 0
decides its feedthrough) or whose shape differ from the compiled ones.

A sampled block whose sample time is `Sample(p.period, p.offset)` says so with `d.sample`:
those parameters are values too, and a change of them re-times the block (normal mode's
clock and compiled code's series of hits), unless blocks that shared a sample time no
longer would, or the other way round (the compiled schedule groups them): then it is
structure.

`continuous_state()`, `discrete_state()`, `events()`, `run_data()` and `exact_times()` read
the values from `self.p` too: after a change of values they are asked again.

`not_as_given` answers, for whoever writes new values into P without the general way of the
route (a sweep's columns, an exported diagram's tunables, `Model.set`'s direct writes),
which parameters are more than their own place in P; `direct_param` which parameter's new
value is one number written into its place and nothing else.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .block import Block, Sample
from .language import expr
from .params import ParamError


@dataclass(frozen=True)
class Array:
    """One declared array of P: its name, shape and whether it stores the parameter of
    that name (else its text, or `derive`, computes it)."""
    name: str
    shape: tuple
    param: bool
    text: str = None

    @property
    def size(self):
        return math.prod(self.shape)


class Structural(Exception):
    """New values that do not fit the compiled structure (a shape, a fact): compile again."""


class RunData:
    """The builder a block's `declare(d)` fills (see the module docstring)."""

    def __init__(self):
        self.arrays = []  # Array, in declaration order
        self.work_arrays = []  # (name, initial values, flat)
        self.values = set()  # parameters whose change is a value change
        self.facts = []  # names of derive's outputs that are structure
        self.timing = None  # (period, offset) parameter names of the block's Sample
        self.fact_texts = {}  # fact -> the text computing it
        self.checks = []  # (text, parameter, message): conditions the values must meet

    def param(self, name, shape=None):
        self.arrays.append(Array(name, None if shape is None else tuple(shape), True))
        self.values.add(name)

    def derived(self, name, shape=(), text=None):
        self.arrays.append(Array(name, tuple(shape), False, text))

    def value(self, *names):
        self.values.update(names)

    def fact(self, *names, **texts):
        self.facts.extend(names)
        self.facts.extend(texts)
        self.fact_texts.update(texts)

    def check(self, text, param, message):
        self.checks.append((text, param, message))

    def texts(self):
        """[(kind, name, text, message)] of the declared texts in the order they are
        computed: the checks ("check", its parameter, text, its message), the facts that
        read parameters only ("fact", name, text, None), the derived arrays ("array", in
        declaration order), the other facts.
        A fact comes before the arrays it does not need: when the structure changes, what
        is computed for the old one may not be computable (a realisation's leading
        coefficient 0)."""
        derived = {a.name for a in self.arrays if not a.param}
        early = {n: t for n, t in self.fact_texts.items() if not expr.names_in(t) & derived}
        return ([("check", param, text, message) for text, param, message in self.checks]
                + [("fact", n, t, None) for n, t in early.items()]
                + [("array", a.name, a.text, None) for a in self.arrays if a.text is not None]
                + [("fact", n, t, None) for n, t in self.fact_texts.items() if n not in early])

    @property
    def python_derived(self):
        """Whether `derive` computes some of the derived arrays or facts (no text for it)."""
        return (any(not a.param and a.text is None for a in self.arrays)
                or any(f not in self.fact_texts for f in self.facts))

    def sample(self, period, offset=None):
        self.timing = (period, offset)
        self.values.update(n for n in self.timing if n is not None)

    def work(self, name, initial):
        """A workspace array: `initial` its size (zeros) or its initial values."""
        values = np.zeros(initial) if np.ndim(initial) == 0 else np.asarray(initial, float)
        self.work_arrays.append((name, values.ravel()))

    def fixed(self, p):
        """The shapes of parameters stored as given, from the values `p`."""
        self.arrays = [Array(a.name, np.shape(getattr(p, a.name)), True)
                       if a.param and a.shape is None else a for a in self.arrays]

    @property
    def size(self):
        return sum(a.size for a in self.arrays)


def sample_of(data, p):
    """The sample time of a block declared as `data` for its parameters `p` (None: it
    declared none)."""
    if data.timing is None:
        return None
    period, offset = data.timing
    return Sample(getattr(p, period), 0.0 if offset is None else getattr(p, offset))


def values_of(block, data, p, facts=None):
    """({array name: values of its declared shape}, {fact: value}) of `block` (declared as
    `data`) for the parameters `p`; Structural when they do not fit the declaration (or,
    given the compiled `facts`, when a declared fact differs from them)."""
    derived = derived_of(block, data, p, facts)
    out = {}
    for a in data.arrays:
        value = np.asarray(getattr(p, a.name) if a.param else derived[a.name], dtype=float)
        if value.shape != a.shape:
            try:
                value = np.broadcast_to(value, a.shape)
            except ValueError:
                raise Structural(f"{block.name}: {a.name} of shape {value.shape} for "
                                 f"{a.shape}") from None
        out[a.name] = value
    return out, {name: derived[name] for name in data.facts}


@functools.lru_cache(maxsize=1024)
def _compiled(text, inputs):
    """A declared text as a function of the names it reads (2,000 lags declare the same
    few texts: compiling each block's anew was most of loading them)."""
    return expr.compile_expr(text, inputs, {})


_KNOWN = {}  # (text, its inputs' names, their values' bytes) -> the value computed
_KNOWN_MOST = 4096  # values remembered at most (then forgotten at once)
_KNOWN_SIZE = 64  # elements an input may have for its value to be remembered


def _value_key(value):
    """The exact value of a small numeric input as hashable data (type, shape and bits:
    -0.0 and 0.0 differ), or None for another kind or a large one (not remembered)."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf" or arr.size > _KNOWN_SIZE:
        return None
    return arr.dtype.str, arr.shape, arr.tobytes()


def evaluated(text, p, derived=None):
    """The value of a declared text over the parameters `p` and the derived arrays
    computed so far; ParamError, naming the first parameter it reads, where the arithmetic
    fails (an overflow, 0/0). A value is remembered for the text and the exact values it
    read (a text is a function of them alone): 2,000 lags with the same limits check them
    once."""
    derived = derived or {}
    names = {n: derived[n] if n in derived else getattr(p, n) for n in expr.names_in(text)
             if n in derived or hasattr(p, n)}
    order = tuple(sorted(names))
    values = tuple(_value_key(names[n]) for n in order)
    key = None if None in values else (text, order, values)
    known = _KNOWN.get(key) if key is not None else None
    if known is not None:
        return known.copy()
    try:  # the text compiled once for every block declaring it, then called on the values
        with np.errstate(all="raise", under="ignore"):
            value = np.array(_compiled(text, order)(*(names[n] for n in order)),
                             dtype=np.float64)
    except Exception:  # noqa: BLE001 - the evaluator says why, as a ParamError below
        value = None
    if value is not None:
        if key is not None:
            if len(_KNOWN) >= _KNOWN_MOST:
                _KNOWN.clear()
            _KNOWN[key] = value.copy()
        return value
    try:
        return expr.evaluate(text, names)
    except expr.ExprError as e:
        param = next((n for n in sorted(names) if n not in derived), None)
        raise ParamError(param, str(e)) from None


def derived_of(block, data, p, facts=None):
    """{name: value} of the derived arrays and facts of `block` (declared as `data`) for
    the parameters `p`: `derive` for those without a text, then the texts in their order
    (RunData.texts); ParamError for a failed check, Structural for a fact that differs
    from the compiled `facts` (when given)."""
    derived = block.derive(p) if data.python_derived else {}
    for kind, name, text, message in data.texts():
        value = evaluated(text, p, derived)
        if kind == "check" and not value:
            raise ParamError(name, message)
        if kind == "fact":
            derived[name] = bool(value)
            if facts is not None and derived[name] != facts.get(name):
                raise Structural(f"{block.name}: {name} changed")
        elif kind == "array":
            derived[name] = value
    return derived


class _Reading:
    """A block's parameters that note which of them are read."""

    def __init__(self, p):
        object.__setattr__(self, "_p", p)
        object.__setattr__(self, "read", set())

    def __getattr__(self, name):
        self.read.add(name)
        return getattr(self._p, name)


def _python_calls(block, data, start, stop):
    """[(what, call)] of the block's Python that computes something from its values besides
    P: derive when a derived value has no text, and the methods its type defines itself
    (Block's read nothing)."""
    calls = [("its derived run data or structure (derive)", lambda: block.derive(block.p),
              ()) if data.python_derived else None,
             ("its initial state", lambda: (block.continuous_state(), block.discrete_state()),
              ("continuous_state", "discrete_state")),
             ("its time events", lambda: list(block.events(start, stop)), ("events",)),
             ("its exact times", lambda: list(block.exact_times()), ("exact_times",)),
             ("its data arrays", lambda: block.run_data(start, stop), ("run_data",)),
             ("what it keeps made from its values (values_changed)",
              lambda: block.values_changed(), ("values_changed",))]
    kind = type(block)
    return [(what, call) for what, call, methods in filter(None, calls)
            if not methods or any(getattr(kind, m, None) is not getattr(Block, m, None)
                                  for m in methods)]


def not_as_given(block, data, start, stop):
    """{parameter: why} of the parameters of `block` (declared as `data`, run over
    [start, stop]) that are more than their own place in P: one not stored in P as given
    (`param`), one its sample time is made of, one its Python reads (traced: each of
    `_python_calls` run once on parameters that note what is read; a call that fails counts
    them all). A parameter not named is stored as given and read by no Python: a new value
    of it is a write into P (and the declared texts computed again)."""
    stored = {a.name for a in data.arrays if a.param}
    why = {}
    for param in type(block).params:
        name = param.name
        if name not in data.values:
            why[name] = f"keeps {name} out of its run's values (a change compiles the " \
                        "diagram again)"
        elif name not in stored:
            why[name] = f"computes its run data from {name} in Python (derive)"
    for name in data.timing or ():
        if name is not None:
            why.setdefault(name, f"computes its sample time from {name} in Python")
    kept = block.p
    for what, call in _python_calls(block, data, start, stop):
        reading = _Reading(kept)
        block.p = reading
        try:
            call()
        except Exception:  # noqa: BLE001 - it needs its very parameters: count all as read
            reading.read.update(vars(kept))
        finally:
            block.p = kept
        for name in sorted(reading.read):
            why.setdefault(name, f"computes {what} from {name} in Python")
    return why


def direct_param(block, data, name, start, stop):
    """The Param of `block`'s parameter `name` (declared as `data`, run over [start, stop])
    when a new value of it is one number written into its place of P and nothing else: a
    number (kind value or scalar) stored as given, of shape (), in a block with no derived
    arrays, facts or checks, read by no Python of the block (`not_as_given`); else None.
    Such a value is checked by its Param's rules alone (params.Rule)."""
    if data.facts or data.checks or any(not a.param for a in data.arrays):
        return None
    shape = next((a.shape for a in data.arrays if a.name == name), None)
    param = next((p for p in type(block).params if p.name == name), None)
    if param is None or param.kind not in ("value", "scalar") or shape != () or \
            np.ndim(getattr(block.p, name)) != 0 or name in not_as_given(block, data, start, stop):
        return None
    return param
