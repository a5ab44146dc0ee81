"""A sweep's runs as arguments of compiled code, without compiling anything again.

`CompiledRuns`, made from a model just run compiled, writes each run's values into that
model by the one route of new values (`Compilation.set_values`: engine/compiler/revalue.py,
nothing rebuilt) and gives the compiled run's Arguments (arguments.py), copied:
`pool.Batch` runs many of them in one compiled call. A run whose values change the
structure, or are refused, gives None: the caller runs it the general way, which reports
exactly what normal mode reports.
"""
from __future__ import annotations

import dataclasses

from ..errors import DiagramError, DiagramErrors
from .arguments import arguments
from .boundary import STIFF
from .build import build
from .codegen import generate
from .mode import kept_code


class CompiledRuns:
    """Runs of `model`'s structure (compiled as `generated`, loaded as `library`) with
    other values: `args(overrides)` gives a run's Arguments, or None. The model is the
    runs' own: each run's values are written into it."""

    @classmethod
    def of(cls, model, base):
        """The CompiledRuns of a model just run in accelerated mode (its code is loaded)
        whose runs' overrides apply to the spec `base`; None for scipy's stiff solvers,
        whose loop is the simulator's."""
        if model.settings.solver in STIFF:
            return None
        generated, key = kept_code(model) or (generate(model), None)  # the run's own, when kept
        return cls(build(generated.source, key).library, model, generated, base)

    def __init__(self, library, model, generated, base):
        self.lib, self.m, self.g, self.base = library, model, generated, base

    def args(self, overrides):
        """The Arguments of the run with `overrides` [(path, raw, Loc)] (its spec as `spec`),
        or None."""
        m = self.m
        try:
            if not m.compilation.set_values(m, overrides, base=self.base):
                return None
            args = arguments(m, self.g)
        except (DiagramError, DiagramErrors, ValueError):  # the general way reports it
            return None
        run = dataclasses.replace(args, params=args.params.copy(), x0=args.x0.copy(),
                                  xd0=args.xd0.copy())
        run.spec = m.spec
        return run
