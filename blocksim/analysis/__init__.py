"""Linear analysis of a diagram: operating points (`trim`), linear models between signals
(`linearize`), and what they say (poles, zeros, DC gain, Bode plot, margins), from Python
and from the command line (`blocksim trim`, `blocksim linearize`)."""
from __future__ import annotations


def trim(path, fix=None, free=(), overrides=None):
    """An OperatingPoint of the diagram file `path` (see analysis.trimming): `fix` {path: value}
    or ['path=value'] holds states (`Motor.x[0]`) or signals (`Position.y`) at values,
    `free` names signals to which constants may be added ('Robot.tau'). AnalysisError when
    it does not converge (`error.point` is the point reached). `point.write(file)` writes
    operating_point.yaml."""
    from ..engine.loading import diagram_file, load
    from .trimming import trim as solve
    items = list(fix.items()) if isinstance(fix, dict) else list(fix or ())
    return solve(load(diagram_file(path, "trim"), overrides), items, list(free))


def linearize(path, inputs, outputs, opened=(), at=None, op=None, overrides=None, pade=None,
              period=None):
    """The python-control StateSpace of the diagram file `path` from perturbations of the
    signals `inputs` to the signals `outputs` ('BLOCK.PORT' or record names; '.' becomes
    '_' in its signal names), the wires into the input ports `opened` cut. The point: the
    initial state (an equilibrium), `op` (an OperatingPoint or its file), or the state a run
    reaches at time `at`. `pade`: the order of the delays' Padé approximation; `period`:
    a discrete model at that period."""
    from ..engine.loading import diagram_file, load
    from .linear_model import linearization
    model = load(diagram_file(path, "linearize"), overrides)
    return linearization(model, list(inputs), list(outputs), list(opened), at=at, op=op,
                         pade=pade, period=period).system
