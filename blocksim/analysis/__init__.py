"""Linear analysis of a diagram: operating points (`trim`), linear models between signals
(`linearize`), and what they say (poles, zeros, DC gain, Bode plot, margins), from Python
and from the command line (`blocksim trim`, `blocksim linearize`)."""
from __future__ import annotations

import numbers


def trim(path, fix=None, free=(), overrides=None):
    """An OperatingPoint of the diagram file `path` (see analysis.trimming): `fix` {path: value}
    or ['path=value'] holds states (`Motor.x[0]`) or signals (`Position.y`) at values,
    `free` names signals to which constants may be added ('Robot.tau'). AnalysisError when
    it does not converge (`error.point` is the point reached). `point.write(file)` writes
    operating_point.yaml."""
    from ..engine.loading import diagram_file, load
    from .trimming import trim as solve
    items = _fixes(fix)
    free = _names(free, "trim", "free", "Robot.tau")
    return solve(load(diagram_file(path, "trim"), overrides), items, free)


def linearize(path, inputs, outputs, opened=(), at=None, op=None, overrides=None, pade=None,
              period=None, states=None):
    """The python-control StateSpace of the diagram file `path` from perturbations of the
    signals `inputs` to the signals `outputs` ('BLOCK.PORT' or record names; '.' becomes
    '_' in its signal names), the wires into the input ports `opened` cut. The point: the
    initial state (an equilibrium), `op` (an OperatingPoint or its file), or the state a run
    reaches at time `at`. `pade`: the order of the delays' Padé approximation; `period`:
    a discrete model at that period; `states`: the order of the states (names as blocksim
    prints them, 'Motor.x[0]', or blocks for all of their states; every state once)."""
    from ..engine.loading import diagram_file, load
    from .linear_model import linearization
    signals = [_names(value, "linearize", what, example) for value, what, example in
               ((inputs, "inputs", "Force.y"), (outputs, "outputs", "Position.y"),
                (opened, "opened", "Error.u2"))]
    order = None if states is None else _names(states, "linearize", "states", "Motor.x[0]")
    at, period = (_number(v, "linearize", what) for v, what in ((at, "at"), (period, "period")))
    if pade is not None and (isinstance(pade, bool) or not isinstance(pade, numbers.Integral)):
        raise TypeError(f"linearize(): pade is the order of the Padé approximation, a whole "
                        f"number, got {pade!r}")
    model = load(diagram_file(path, "linearize"), overrides)
    return linearization(model, *signals, at=at, op=op, pade=pade, period=period,
                         states=order).system


def _names(value, who, what, example):
    """Names given from Python: a list (or tuple) of strings; one string is one name (not a
    list of letters)."""
    if isinstance(value, str):
        return [value]
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"{who}(): {what} is a list of names such as [{example!r}], "
                        f"got {value!r}") from None
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"{who}(): {what} holds names (strings such as {example!r}), "
                            f"got {item!r}")
    return items


def _number(value, who, what):
    """A time or a period from Python: a real number (None: not given)."""
    if value is None or (isinstance(value, numbers.Real) and not isinstance(value, bool)):
        return None if value is None else float(value)
    raise TypeError(f"{who}(): {what} is a time in seconds (a number), got {value!r}")


def _fixes(fix):
    """trim's `fix` as a list of 'path=value' strings and (path, value) pairs, from a dict
    {path: value}, a list of those or one string."""
    what = "fix maps paths (strings such as 'Position.x' or 'Motor.x[0]') to values"
    if fix is None:
        items = []
    elif isinstance(fix, dict):
        items = list(fix.items())
    elif isinstance(fix, str):
        items = [fix]
    elif isinstance(fix, (list, tuple)):
        items = list(fix)
    else:
        raise TypeError(f"trim(): {what}: a dict or a list of 'path=value', got {fix!r}")
    for item in items:
        pair = isinstance(item, tuple) and len(item) == 2
        if not (isinstance(item, str) or pair and isinstance(item[0], str)):
            got = f"the path {item[0]!r}" if pair else repr(item)
            raise TypeError(f"trim(): {what}, got {got}")
    return items
