"""Parameter schema of a block: what each parameter is, its default, how it is validated.

A block class lists `Param`s. The compiler evaluates each raw YAML value once (expressions
through `blocksim.language.expr`), converts it to the declared kind and hands the block plain values:
numpy float arrays for numbers, `str` for literal strings, the built object for resources.
Cross-parameter checks belong in the block's `__init__`, raising `ParamError`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

REQUIRED = object()

KINDS = ("value", "scalar", "int", "bool", "string", "choice", "names", "resource", "data",
         "path", "vectors", "array_or_file")
FILE_SUFFIXES = (".csv", ".npz")


def names_file(raw):
    """Whether a raw `array_or_file` value names a file (a string ending in .csv or .npz)
    rather than being an expression."""
    return isinstance(raw, str) and raw.strip().lower().endswith(FILE_SUFFIXES)


@dataclass(frozen=True)
class Rule:
    """One numeric rule of a parameter, written once for every place that checks it (load,
    a sweep's grid, an exported diagram's C): `test`, as data, the values it refuses:
    ("nan",) NaN, ("inf",) +-inf, (">", b) those not > b, (">=", b) those not >= b; and
    `message`, where `{got}` stands for the value refused."""
    test: tuple
    message: str

    def refuses(self, values):
        """The mask of the float array `values` that this rule refuses."""
        op, *bound = self.test
        return _REFUSES[op](values, *bound)


_REFUSES = {"nan": lambda v: np.isnan(v), "inf": lambda v: np.isinf(v),
            ">": lambda v, b: ~(v > b), ">=": lambda v, b: ~(v >= b)}


class ParamError(ValueError):
    """Raised by a block for an invalid parameter; the compiler adds file, line and block."""

    def __init__(self, param, message):
        super().__init__(message)
        self.param = param
        self.message = message


class Param:
    """One parameter of a block type.

    kind:
      value    number, list or matrix (expressions allowed) -> float64 ndarray
      scalar   one number -> float
      int      one integer -> int
      bool     true / false -> bool
      string   taken literally -> str
      choice   one of `choices`, literally -> str
      names    a list of identifiers (e.g. the `function` block's inputs) -> tuple of str
      resource the name of an entry of the diagram section `section` (e.g. robots) -> object
      data     raw YAML data, unevaluated (e.g. a subsystem's inline diagram)
      path     a file path, taken literally and resolved against the directory of the diagram
               file that wrote it (the compiler does that) -> pathlib.Path
      vectors  a list of vectors of any lengths (each a list or an expression), e.g. one
               list of breakpoints per dimension -> tuple of 1-D float64 ndarrays
      array_or_file  a value (as `value`), or a string ending in .csv or .npz: a file path
               resolved as `path` (the block reads it) -> float64 ndarray or pathlib.Path
    `allow_inf` lets a value be +-inf (saturation limits); NaN is never allowed.
    `default=None` makes a parameter optional with no value: the block receives None.
    `minimum`/`positive` check numbers after evaluation.
    """

    def __init__(self, name, kind="value", default=REQUIRED, doc="", *, choices=None,
                 allow_inf=False, positive=False, minimum=None, section=None):
        if kind not in KINDS:
            raise ValueError(f"unknown parameter kind {kind!r}")
        self.name = name
        self.kind = kind
        self.default = default
        self.doc = doc
        self.choices = tuple(choices) if choices else None
        self.allow_inf = allow_inf
        self.positive = positive
        self.minimum = minimum
        self.section = section
        rules = [Rule(("nan",), "value is not a number (NaN)")]
        if not allow_inf:
            rules.append(Rule(("inf",), "value must be finite"))
        if positive:
            rules.append(Rule((">", 0), "must be > 0, got {got}"))
        if minimum is not None:
            rules.append(Rule((">=", minimum), f"must be >= {minimum}, got {{got}}"))
        self._rules = tuple(rules)

    def rules(self):
        """The numeric Rules of this parameter, in the order load checks them (made once, with
        it: `Model.set` checks a value by them each time)."""
        return self._rules

    def refused(self, values):
        """The mask of the float array `values` that this parameter's rules refuse."""
        bad = np.zeros(np.shape(values), bool)
        for rule in self.rules():
            bad |= rule.refuses(values)
        return bad

    @property
    def required(self):
        return self.default is REQUIRED

    def describe(self):
        """One line for `blocksim blocks TYPE`."""
        head = self.name
        if not self.required:
            head += f"={self.default!r}" if not isinstance(self.default, str) else f"={self.default}"
        kind = self.kind if self.kind != "choice" else "one of " + "/".join(self.choices)
        return f"{head}  ({kind}) {self.doc}".rstrip()

    def convert(self, value):
        """Check an evaluated value against this parameter's kind; raise ValueError."""
        kind = self.kind
        if kind in ("data", "resource"):
            return value
        if kind == "vectors":
            if not isinstance(value, (list, tuple)) or not value:
                raise ValueError(f"expected a list of vectors, got {_show(value)}")
            vectors = tuple(np.asarray(v, dtype=float) for v in value)
            for k, v in enumerate(vectors):
                if v.ndim > 1:
                    raise ValueError(f"item {k} is not a vector (shape {v.shape})")
                if not np.isfinite(v).all():
                    raise ValueError(f"item {k} holds a value that is not finite")
            return tuple(v.reshape(-1) for v in vectors)
        if kind == "array_or_file" and not isinstance(value, str):
            kind = "value"
        if kind == "bool":
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
            raise ValueError(f"expected true or false, got {_show(value)}")
        if kind == "choice" and isinstance(value, (bool, np.bool_)):
            # YAML 1.1 reads on/off/yes/no as booleans: map one back when it is a choice
            words = ("on", "yes", "true") if value else ("off", "no", "false")
            matches = [c for c in self.choices if c in words]
            if len(matches) == 1:
                value = matches[0]
        if kind == "choice":
            if not isinstance(value, str) or value not in self.choices:
                shown = repr(value) if isinstance(value, str) else _show(value)
                raise ValueError(f"expected one of {', '.join(self.choices)}, got {shown}")
            return value
        if kind in ("string", "path", "array_or_file"):
            if not isinstance(value, str) or (kind != "string" and not value.strip()):
                raise ValueError(f"expected a string, got {_show(value)}")
            return value
        if kind == "names":
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"expected a list of names, got {_show(value)}")
            for v in value:
                if not v.isidentifier():
                    raise ValueError(f"{v!r} is not a valid name")
            if len(set(value)) != len(value):
                raise ValueError("names must be distinct")
            return tuple(value)
        if isinstance(value, (bool, np.bool_)) or isinstance(value, str):
            raise ValueError(f"expected a number, got {_show(value)}")
        arr = np.asarray(value, dtype=float)
        for rule in self.rules():
            bad = rule.refuses(arr)
            if bad.any() if bad.ndim else bad:  # one number: no reduction
                raise ValueError(rule.message.format(got=_show(value)))
        if kind == "value":
            return arr
        if arr.size != 1:
            raise ValueError(f"expected a single number, got shape {arr.shape}")
        x = float(arr.reshape(()))
        if kind == "int":
            if x != int(x):
                raise ValueError(f"expected an integer, got {x:g}")
            return int(x)
        return x


def _show(value):
    text = repr(value.tolist() if isinstance(value, np.ndarray) else value)
    return text if len(text) < 60 else text[:57] + "..."
