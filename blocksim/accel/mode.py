"""Normal or accelerated: the choice for one run, and running the model in it.

`simulation.mode` (or `--mode`): `normal` is the interpreter; `accelerated` compiles the
diagram and refuses (DiagramError, exit 2) a diagram with a block that has no compiled form,
or a machine without a C compiler; `auto` (the default) compiles when every block has a
compiled form, a compiler is installed and compiling pays off:

- compiled code for this structure is in the cache (starting it costs milliseconds), or
- the run is one of a sweep (one compile serves every run), or
- the run is long: a lower bound of its normal-mode time, from its steps (span/step or
  span/max_step, plus sample hits and source switches), the stages per step and the
  measured cost of one block method (EVAL_SECONDS) and of a step (STEP_SECONDS), exceeds
  the expected compile time (COMPILE_SECONDS plus PER_BLOCK_SECONDS per block).

Otherwise auto runs normal mode; when it falls back for a reason the user can act on (a
block without a compiled form, no compiler), the run's messages say so in one line.
Whether the structure is cached is known from the generated source's key; when the cache
holds no compiled diagram at all, a short run is known to stay in normal mode without
generating its source (the blocks' lowerings and the compiler are still checked, for the
note).

A run that stays in normal mode imports nothing of the compiler: a block type without a
lowering is seen on the Model alone, and the code generator, the build cache and ctypes
are imported when a diagram may compile. The generated source and its key are kept on the
Model (`_generated`), so that running one Model again (`blocksim.execute` in a loop) does
not generate its code again.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from ..engine.simulator import simulate
from ..engine.solvers import FIXED_STEP
from ..block import Block, Sample
from ..errors import DiagramError, DiagramErrors

# measured on the project's machines (benchmarks/accelerator.py prints them): normal mode
# costs about 1.3 us per block method in an evaluation and 20 us of stepper work per step;
# a first compile about 0.6 s plus 15 ms per block
EVAL_SECONDS = 1.3e-6
STEP_SECONDS = 2e-5
COMPILE_SECONDS = 0.6
PER_BLOCK_SECONDS = 0.015
STAGES = {"euler": 1, "rk2": 2, "rk4": 4, "rk23": 3, "rk45": 6, "dop853": 12, "radau": 4,
          "bdf": 2, "lsoda": 2}


@dataclass
class Decision:
    mode: str  # "normal" or "accelerated"
    why: str  # one line: the reason
    note: str = ""  # a line for the user when auto fell back for a reason they can act on
    generated: object = None  # codegen.Generated, when accelerated
    key: str = ""  # its cache key


def decide(model, sweep=False):
    """The mode of a run of `model` (a sweep's run when `sweep`); DiagramError(s) when
    accelerated mode is asked for and impossible."""
    mode = model.settings.mode
    if mode == "normal":
        return Decision("normal", "simulation.mode is normal")
    unlowered = [(b.name, b.type, "has no compiled form") for b in model.blocks
                 if type(b).lower is Block.lower]
    if unlowered and mode == "auto":
        return _without_compiled_form(unlowered)
    from .compilable import NotCompilable
    from .toolchain import CompilerMissing, holds_libraries
    normal, compiling = normal_seconds(model), compile_seconds(model)
    short = f"a short run (about {normal:.2g} s in normal mode, compiling about {compiling:.2g} s)"
    try:
        kept = _kept(model)
        if kept is None:
            lows = _compilable(model)
            if mode == "auto" and not sweep and normal <= compiling and not holds_libraries():
                return Decision("normal", short)  # nothing is cached: no source is needed
            from .codegen import SeriesRange
            try:
                kept = _generated(model, lows)
            except SeriesRange as e:
                return _unavailable(model, e)
        generated, key = kept
    except NotCompilable as e:
        if mode == "accelerated":
            raise _refusal(model, e.blocks) from None
        return _without_compiled_form(e.blocks)
    except CompilerMissing as e:
        return _unavailable(model, e)
    from .build import is_cached
    if mode == "accelerated":
        why = "simulation.mode is accelerated"
    elif is_cached(key):
        why = "compiled code for this diagram's structure is cached"
    elif sweep:
        why = "a sweep: one compile serves every run"
    elif normal > compiling:
        why = f"a long run (at least {normal:.2g} s in normal mode, compiling about {compiling:.2g} s)"
    else:
        return Decision("normal", short)
    return Decision("accelerated", why, generated=generated, key=key)


def _compilable(model):
    """Every block's lowering (NotCompilable naming those without one); CompilerMissing when
    the machine has no C compiler."""
    from .compilable import lowerings
    from .toolchain import compiler
    lows = lowerings(model)
    compiler()
    return lows


def _kept(model):
    """(codegen.Generated, its cache key) of `model` when they were made for its present
    blocks and settings (Model.set makes new ones), else None."""
    kept = model.__dict__.get("_generated")
    if kept is not None and kept[0] is model.blocks and kept[1] == _settings(model):
        return kept[2], kept[3]
    return None


def _generated(model, lows):
    """(codegen.Generated, its cache key) of `model` from its blocks' lowerings `lows`, kept
    on the model (see `_kept`)."""
    from .build import key_of
    from .codegen import generate
    generated = generate(model, lows)
    key = key_of(generated.source)
    model.__dict__["_generated"] = (model.blocks, _settings(model), generated, key)
    return generated, key


def _settings(model):
    return tuple(vars(model.settings).values())


def _unavailable(model, reason):
    """Normal mode with a note under auto; DiagramError under accelerated."""
    if model.settings.mode == "accelerated":
        raise DiagramError(f"accelerated mode is not available: {reason}", file=model.file) \
            from None
    return Decision("normal", str(reason), f"note: normal mode: {reason}")


def _without_compiled_form(blocks):
    names = ", ".join(f"{name} ({kind})" for name, kind, _ in blocks)
    return Decision("normal", f"no compiled form for {names}",
                    f"note: normal mode: no compiled form for {names}")


def _refusal(model, blocks):
    """One error per block without a compiled form, at the block's line."""
    errors = []
    for name, kind, why in blocks:
        spec = model.spec.blocks.get(name) if model.spec is not None else None
        message = f"accelerated mode: block type '{kind}' {why}"
        errors.append(spec.loc.error(message, block=name) if spec is not None else
                      DiagramError(message, file=model.file, block=name))
    errors[-1].hint = "run it in normal mode (--mode normal), or leave simulation.mode at auto"
    return errors[0] if len(errors) == 1 else DiagramErrors(errors)


def normal_seconds(model):
    """A lower bound of the model's normal-mode simulation time (see the module docs)."""
    s = model.settings
    span = s.stop - s.start
    steps = span / (s.step if s.solver in FIXED_STEP else s.max_step)
    steps += sum(span / b.sample.period for b in model.blocks if isinstance(b.sample, Sample))
    steps += len(model.events)
    methods = sum(n.group == "continuous" for n in model.nodes) + model.xbuf.size
    return steps * (STEP_SECONDS + STAGES[s.solver] * methods * EVAL_SECONDS)


def compile_seconds(model):
    return COMPILE_SECONDS + PER_BLOCK_SECONDS * len(model.blocks)


def simulate_model(model, progress=None, plots=False, sweep=False):
    """Simulate `model` in the mode `decide` picks: (t, data, info) as `simulate()`, with
    info["mode"] = {"mode", "why", "compile_time", "cache_hit", "note"}."""
    decision = decide(model, sweep)
    if decision.mode == "accelerated":
        from .build import CompileFailed
        try:
            return _compiled(model, decision, progress, plots)
        except CompileFailed as e:
            if model.settings.mode == "accelerated":
                raise DiagramError(f"accelerated mode: {e}", file=model.file) from None
            decision = Decision("normal", str(e), f"note: normal mode: {e}")
    t, data, info = simulate(model, progress, plots)
    info["mode"] = {"mode": "normal", "why": decision.why, "note": decision.note}
    return t, data, info


def _compiled(model, decision, progress, plots):
    from .build import build
    from .codegen import STIFF
    started = time.perf_counter()
    built = build(decision.generated.source, decision.key)
    compile_time = time.perf_counter() - started
    if model.settings.solver in STIFF:
        from .stiff import simulate_stiff
        t, data, info = simulate_stiff(built.library, model, decision.generated, progress,
                                       plots)
    else:
        from .runner import CompiledRun
        t, data, info = CompiledRun(built.library, model, decision.generated, progress,
                                    plots).run()
    info["mode"] = {"mode": "accelerated", "why": decision.why, "note": "",
                    "compile_time": compile_time if not built.cached else 0.0,
                    "cache_hit": built.cached}
    return t, data, info
