"""The `parameters:` and `start:` of an fmu block: each name checked against the model
description (did you mean), each value evaluated as an expression of the diagram's
parameters and checked against the variable's type, shape and min/max, each problem at the
line of its entry."""
from __future__ import annotations

import numpy as np

from blocksim.errors import DiagramError
from blocksim.params import ParamError
from blocksim.language import expr
from blocksim.language.diagram import suggest


def located(mapping, key, block, param, message, hint=None):
    """A DiagramError at the line of `key` in the YAML mapping `mapping` (or at the override
    that set it: `key_locs`)."""
    loc = getattr(mapping, "key_locs", {}).get(key)
    if loc is not None:
        return loc.error(message, block=block, param=param, hint=hint)
    line = mapping.key_line(key) if hasattr(mapping, "key_line") else getattr(mapping, "line", None)
    return DiagramError(message, file=getattr(mapping, "file", None), line=line, block=block,
                        param=param, hint=hint)


def assignments(mapping, allowed, p, block, param, what):
    """[(Var, value)] for the entries of `mapping` (a YAML mapping or None): names among
    `allowed` ({name: Var}); raises the first problem (a DiagramError at its entry)."""
    if mapping is None:
        return []
    if not isinstance(mapping, dict):
        raise ParamError(param, f"takes a mapping of {what} names to values")
    out = []
    for name, raw in mapping.items():
        var = allowed.get(str(name))
        if var is None:
            listed = ", ".join(sorted(allowed)) or "none"
            raise located(mapping, name, block, param,
                          f"the FMU has no {what} '{name}'{suggest(name, allowed)}",
                          hint=f"its {what}s: {listed}")
        try:
            value = _value(var, raw, p)
        except (expr.ExprError, ValueError) as e:
            raise located(mapping, name, block, param, f"{what} '{name}': {e}") from None
        out.append((var, value))
    return out


def _value(var, raw, p):
    """`raw` as a value of `var`: a bool for a Boolean, an int for an Integer, floats of the
    variable's shape for a Real; ValueError saying what is wrong."""
    if var.kind == "string":
        if not isinstance(raw, str):
            raise ValueError(f"expected a string, got {raw!r}")
        return raw
    if var.kind == "boolean":
        if isinstance(raw, (bool, np.bool_)):
            return bool(raw)
        raise ValueError(f"is a Boolean: expected true or false, got {raw!r}")
    if isinstance(raw, (bool, np.bool_)):
        raise ValueError(f"is {'an Integer' if var.kind == 'integer' else 'a Real'}: expected "
                         f"a number, got {raw!r}")
    value = expr.evaluate(raw, p._names, dotted=p._dotted, functions=p._functions) \
        if isinstance(raw, str) else raw
    arr = np.asarray(value, dtype=float)
    if arr.shape != var.shape and not (arr.size == 1 and var.shape):
        raise ValueError(f"expected shape {var.shape or 'scalar ()'}, got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError("must be finite")
    if var.kind == "integer":
        if not (arr == np.round(arr)).all():
            raise ValueError(f"is an Integer: expected a whole number, got {_show(arr)}")
    if var.minimum is not None and (arr < var.minimum).any():
        raise ValueError(f"{_show(arr)} is below its min {var.minimum:g}")
    if var.maximum is not None and (arr > var.maximum).any():
        raise ValueError(f"{_show(arr)} is above its max {var.maximum:g}")
    if var.kind == "integer":
        return int(arr) if not var.shape else arr.astype(int)
    return float(arr) if not var.shape else np.broadcast_to(arr, var.shape).astype(float)


def _show(arr):
    return f"{float(arr):g}" if arr.size == 1 else np.array2string(arr, separator=", ")
