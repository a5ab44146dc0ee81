"""Accelerated mode: a diagram compiled to C, events, solver and recording included.

A layer above the compiler (it reads a compiled Model) and below `api` (which picks the
mode): `codegen` writes the C source from the Model and the blocks' lowerings (the contract
is in `lowering`), `build` compiles and caches it, `runner` runs it on the model's own
buffers and returns what `simulate()` returns; `stiff` runs scipy's implicit solvers on a
compiled derivative; `mode` decides between normal and accelerated mode.
"""
from __future__ import annotations

import time

from .build import build
from .codegen import STIFF, generate


def simulate_compiled(model, progress=None, plots=False):
    """Simulate `model` with compiled code: (t, data, info) as `simulate()`, with
    info["accelerated"] = {"compile_time": s, "cache_hit": bool, "codegen_time": s}.
    Raises codegen.NotCompilable, build.CompilerMissing, build.CompileFailed before the run."""
    started = time.perf_counter()
    generated = generate(model)
    codegen_time = time.perf_counter() - started
    built = build(generated.source)
    if model.settings.solver in STIFF:
        from .stiff import simulate_stiff
        t, data, info = simulate_stiff(built.library, model, generated, progress, plots)
    else:
        from .runner import CompiledRun
        t, data, info = CompiledRun(built.library, model, generated, progress, plots).run()
    info["accelerated"] = {"compile_time": built.seconds, "cache_hit": built.cached,
                           "codegen_time": codegen_time}
    return t, data, info
