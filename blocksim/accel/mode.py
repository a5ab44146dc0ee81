"""Normal or accelerated: the choice for one run, and running the model in it.

`simulation.mode` (or `--mode`): `normal` is the interpreter; `accelerated` compiles the
diagram and refuses (DiagramError, exit 2) a diagram with a block that has no compiled form,
or a machine without a C compiler; `auto` (the default) compiles when every block has a
compiled form, a compiler is installed and compiling pays off:

- the run is one of a sweep (one compile serves every run), or
- the run is long: a lower bound of its normal-mode time, from its steps (span/step or
  span/max_step, plus sample hits and source switches), the stages per step and the
  measured cost of one block method (EVAL_SECONDS) and of a step (STEP_SECONDS), exceeds
  the expected compile time (COMPILE_SECONDS plus PER_BLOCK_SECONDS per block), or
- the run, begun in normal mode, turns out longer than its steps on paper said (events,
  stiffness, slow blocks): once it has run START_SECONDS (about what starting cached
  compiled code costs a new process) and compiled code for its structure is cached, or
  once it has run the expected compile time, it is run again from the start compiled.

That last rule is a ski rental: a short run never waits for compiled code it does not
need (starting it would cost demo1 more than its whole simulation), and a run that stays
in normal mode too long costs at most what switching earlier would have, again. Whether
the structure is cached is known from its generated source's key, so the source is
generated at the first of those points, not before. A Model remembers how long it ran in
normal mode before it switched, and later runs of it (`blocksim.execute` in a loop,
`Model.set` between) begin where that leads. Results are those of the mode that finished
the run; the modes agree to 1e-12, and meta.json says which ran and why.

Otherwise auto runs normal mode; when it falls back for a reason the user can act on (a
block without a compiled form, no compiler), the run's messages say so in one line.

A run that stays in normal mode imports nothing of the compiler: a block type without a
lowering is seen on the Model alone, and the code generator, the build cache and ctypes
are imported when a diagram may compile. The generated source and its key are kept on the
Model (`_generated`), so that running one Model again does not generate its code again.
"""
from __future__ import annotations

import functools
import importlib
import time
from dataclasses import dataclass

from ..engine.simulator import simulate
from ..engine.solvers import FIXED_STEP, IMPLICIT
from ..block import Sample
from ..errors import DiagramError, DiagramErrors

# measured on the project's machines (benchmarks/accelerator.py prints them): normal mode
# costs about 1.3 us per block method in an evaluation and 20 us of stepper work per step;
# a first compile about 0.6 s plus 15 ms per block
EVAL_SECONDS = 1.3e-6
STEP_SECONDS = 2e-5
COMPILE_SECONDS = 0.6
PER_BLOCK_SECONDS = 0.015
# a new process's start of cached compiled code for demo1: importing the code generator
# and the runner, generating the source and its key, loading the library (7.2 ms measured,
# benchmarks/accelerator.py: whole process, demo1's code cached, what auto added)
START_SECONDS = 0.007
STAGES = {"euler": 1, "rk2": 2, "rk4": 4, "rk23": 3, "rk45": 6, "dop853": 12, "radau": 4,
          "bdf": 2, "lsoda": 2}


@dataclass
class Decision:
    mode: str  # "normal" or "accelerated"
    why: str  # one line: the reason
    note: str = ""  # a line for the user when auto fell back for a reason they can act on
    generated: object = None  # codegen.Generated, when accelerated
    key: str = ""  # its cache key
    # a run begun in normal mode: the normal-mode seconds past which it looks for cached
    # compiled code or compiles, ((seconds, "cached" | "compile"), ...) (see Trial), and
    # the blocks' lowerings to generate it from
    checks: tuple = ()
    lowerings: object = None
    library: object = None  # its compiled code, once a run loaded it (kept in this process)


def decide(model, sweep=False):
    """The mode of a run of `model` (a sweep's run when `sweep`); DiagramError(s) when
    accelerated mode is asked for and impossible. A decision for compiled code is kept on
    the model for its next runs while its structure and settings are the same (new values
    keep it: its code is compiled then) and the run's values fit that code."""
    context = model.context
    kept = model.__dict__.get("_decision")
    if kept is not None and kept[0] is model.blocks and kept[1] is context.settings and \
            kept[2] == sweep:
        if kept[4] is context and kept[5] == context.version:  # the values it was checked for
            return kept[3]
        try:
            _arguments(model, kept[3].generated)
            model.__dict__["_decision"] = (*kept[:4], context, context.version)
            return kept[3]
        except Unavailable:
            pass
    decision = _decide(model, sweep)
    if decision.mode == "accelerated":
        model.__dict__["_decision"] = (model.blocks, context.settings, sweep, decision,
                                       context, context.version)
    return decision


def _decide(model, sweep):
    mode = model.settings.mode
    if mode == "normal":
        return Decision("normal", "simulation.mode is normal")
    from .compilable import has_lowering
    unlowered = [(b.name, b.type, "has no compiled form") for b in model.blocks
                 if not has_lowering(b)]
    if unlowered and mode == "auto":
        return _without_compiled_form(unlowered)
    from .compilable import NotCompilable
    from .toolchain import CompilerMissing
    past = model.__dict__.get("_normal_past", 0.0)  # how long an earlier run of it ran
    normal, compiling = max(normal_seconds(model), past), compile_seconds(model)
    try:
        kept = kept_code(model)
        lows = _compilable(model) if kept is None else None
        if mode == "auto" and not sweep and normal < compiling:
            if kept is None and past >= START_SECONDS:
                kept = _generated(model, lows)
            if kept is None or not _is_cached(kept[1]):
                return _trial(normal, compiling, past, lows)
        generated, key = kept or _generated(model, lows)
    except NotCompilable as e:
        if mode == "accelerated":
            raise refusal(model, e.blocks) from None
        return _without_compiled_form(e.blocks)
    except (CompilerMissing, Unavailable) as e:
        return _unavailable(model, e)
    if mode == "accelerated":
        why = "simulation.mode is accelerated"
    elif _is_cached(key):
        why = "compiled code for this diagram's structure is cached"
    elif sweep:
        why = "a sweep: one compile serves every run"
    else:
        why = f"a long run (at least {normal:.2g} s in normal mode, compiling about {compiling:.2g} s)"
    return Decision("accelerated", why, generated=generated, key=key)


def _trial(normal, compiling, past, lows):
    """A run begun in normal mode (see Trial)."""
    checks = sorted(c for c in ((START_SECONDS, "cached"), (compiling, "compile"))
                    if c[0] > past)
    then = (f"past {_duration(START_SECONDS)} if its code is cached, past "
            f"{_duration(compiling)} if not" if len(checks) == 2 else f"past {_duration(compiling)}")
    return Decision("normal", f"a short run on paper, at least {_duration(normal)} in normal "
                    f"mode against about {_duration(compiling)} of compiling: it begins in "
                    f"normal mode and goes on compiled {then}",
                    checks=tuple(checks), lowerings=lows)


def _duration(seconds):
    """'7 ms', '0.69 s'."""
    return f"{seconds * 1e3:.2g} ms" if seconds < 0.1 else f"{seconds:.2g} s"


class Trial:
    """The progress callback of a run begun in normal mode (a Decision with `checks`).

    Called after each step, it watches the run's time from the end of its first step (what
    the first evaluations cost once, loading kernels and filling caches, says nothing of
    the run's length): past START_SECONDS it looks for compiled code for the structure,
    when the cache holds any (generating the source to find its key), and past the
    expected compile time it gives up on normal mode. Either way it raises Switch, and the
    run starts again compiled; the model remembers how long it ran (`_normal_past`) for its
    later runs. When the compiled code cannot be made, the run goes on in normal mode and
    `note` says why."""

    def __init__(self, model, decision, progress):
        self.model, self.lows, self.progress = model, decision.lowerings, progress
        self.checks = list(decision.checks)  # (seconds, "cached" or "compile"), in order
        self.started = None
        self.note = ""

    def __call__(self, t):
        if self.checks:
            now = time.perf_counter()
            if self.started is None:
                self.started = now
            elif now - self.started >= self.checks[0][0]:
                self._check(self.checks.pop(0)[1], now - self.started)
        if self.progress is not None:
            self.progress(t)

    def _check(self, kind, elapsed):
        if kind == "cached":
            from .toolchain import holds_libraries
            if not holds_libraries():
                return
        try:
            generated, key = kept_code(self.model) or _generated(self.model, self.lows)
            cached = kind == "cached" and _is_cached(key)
        except Exception as e:  # whatever it is, the run goes on in normal mode
            self.checks = []
            reason = str(e) if isinstance(e, Unavailable) else \
                f"its compiled code could not be prepared ({type(e).__name__}: {e})"
            self.note = f"note: normal mode: {reason}"
            return
        if kind == "compile":
            why = f"ran {_duration(elapsed)} in normal mode, about what compiling takes"
        elif cached:
            why = (f"ran {_duration(elapsed)} in normal mode, and compiled code for this "
                   "diagram's structure is cached")
        else:
            return
        self.model.__dict__["_normal_past"] = elapsed
        raise Switch(Decision("accelerated", why, generated=generated, key=key), elapsed)


class Switch(Exception):
    """Raised by a Trial through the simulator: run `decision` (accelerated) instead, after
    `seconds` spent in normal mode."""

    def __init__(self, decision, seconds):
        super().__init__(decision.why)
        self.decision, self.seconds = decision, seconds


class Unavailable(Exception):
    """This diagram's compiled code cannot be made (the reason, as the message)."""


def _is_cached(key):
    from .build import is_cached
    return is_cached(key)


def _compilable(model):
    """Every block's lowering (NotCompilable naming those without one); CompilerMissing when
    the machine has no C compiler."""
    from .compilable import lowerings
    from .toolchain import compiler
    lows = lowerings(model)
    compiler()
    return lows


def kept_code(model):
    """The compiled code made for `model`'s present blocks and solver, as (codegen.Generated,
    its cache key), kept on the model by an earlier run (`_generated`); None when there is
    none or the structure changed since (new values keep it; Model.set changing the
    structure makes new blocks). A sweep's compiled runs start from it. Unavailable when
    the model's values are more than that code can hold (arguments.py: exact times past
    128 bits)."""
    kept = model.__dict__.get("_generated")
    if kept is not None and kept[0] is model.blocks and kept[1] == model.settings.solver:
        _arguments(model, kept[2])
        return kept[2], kept[3]
    return None


def _generated(model, lows):
    """(codegen.Generated, its cache key) of `model` from its blocks' lowerings `lows`, kept
    on the model (see `kept_code`); Unavailable when its code cannot be generated or the run's
    values cannot be held."""
    from .build import key_of
    from .codegen import generate
    generated = generate(model, lows)
    _arguments(model, generated)
    key = key_of(generated.source)
    model.__dict__["_generated"] = (model.blocks, model.settings.solver, generated, key)
    return generated, key


def _arguments(model, generated):
    from .arguments import SeriesRange, arguments
    try:
        arguments(model, generated)
    except SeriesRange as e:
        raise Unavailable(str(e)) from None


def _unavailable(model, reason):
    """Normal mode with a note under auto; DiagramError under accelerated."""
    if model.settings.mode == "accelerated":
        raise DiagramError(f"accelerated mode is not available: {reason}", file=model.file) \
            from None
    return Decision("normal", str(reason), f"note: normal mode: {reason}")


def _without_compiled_form(blocks):
    """Normal mode; a faulty compiled form (a plugin's lower() raising) is said too."""
    from .compilable import FAULTY
    names = ", ".join(f"{name} ({kind})" + (
        f", whose {why[len(FAULTY):].removeprefix('its ')}" if why.startswith(FAULTY) else "")
        for name, kind, why in blocks)
    return Decision("normal", f"no compiled form for {names}",
                    f"note: normal mode: no compiled form for {names}")


def refusal(model, blocks, hint="run it in normal mode (--mode normal), or leave "
                                 "simulation.mode at auto"):
    """One error per block without a compiled form (NotCompilable.blocks), at the block's
    line."""
    errors = []
    for name, kind, why in blocks:
        spec = model.spec.blocks.get(name) if model.spec is not None else None
        message = f"accelerated mode: block type '{kind}' {why}"
        errors.append(spec.loc.error(message, block=name) if spec is not None else
                      DiagramError(message, file=model.file, block=name))
    errors[-1].hint = hint
    return errors[0] if len(errors) == 1 else DiagramErrors(errors)


def normal_seconds(model):
    """A lower bound of the model's normal-mode simulation time (see the module docs)."""
    s = model.settings
    span = s.stop - s.start
    steps = span / (s.step if s.solver in FIXED_STEP else s.max_step)
    steps += sum(span / b.sample.period for b in model.blocks if isinstance(b.sample, Sample))
    steps += len(model.events)
    methods = sum(n.group == "continuous" for n in model.nodes) + sum(
        xs.stop > xs.start for xs, _ in model.state_slices.values())  # outputs, derivatives
    return steps * (STEP_SECONDS + STAGES[s.solver] * methods * EVAL_SECONDS)


def compile_seconds(model):
    return COMPILE_SECONDS + PER_BLOCK_SECONDS * len(model.blocks)


def simulate_model(model, progress=None, plots=False, sweep=False):
    """Simulate `model` in the mode `decide` picks: (t, data, info) as `simulate()`, with
    info["mode"] = {"mode", "why", "compile_time", "cache_hit", "note"} and, when the run
    began in normal mode and switched, "normal_time" (the seconds spent there; `progress`
    is then told times from the start again)."""
    decision = decide(model, sweep)
    normal_time = None
    jacobian = state_jacobian(model)
    if decision.checks:
        trial = Trial(model, decision, progress)
        try:
            t, data, info = simulate(model, trial, plots, jacobian)
        except Switch as switch:
            decision, normal_time = switch.decision, switch.seconds
        else:
            info["mode"] = {"mode": "normal", "why": decision.why,
                            "note": trial.note or decision.note}
            return t, data, info
    if decision.mode == "accelerated":
        try:
            t, data, info = _compiled(model, decision, progress, plots, jacobian)
        except _accel("build").CompileFailed as e:
            if model.settings.mode == "accelerated":
                raise DiagramError(f"accelerated mode: {e}", file=model.file) from None
            decision = Decision("normal", str(e), f"note: normal mode: {e}")
    if decision.mode == "normal":
        t, data, info = simulate(model, progress, plots, jacobian)
        info["mode"] = {"mode": "normal", "why": decision.why, "note": decision.note}
    if normal_time is not None:
        info["mode"]["normal_time"] = normal_time
    return t, data, info


def state_jacobian(model):
    """The state Jacobian the implicit solvers get in both modes (linear analysis assembles
    it from the blocks' exact Jacobians: analysis/state_jacobian.py), None for the others."""
    if model.settings.solver not in IMPLICIT:
        return None
    from ..analysis.state_jacobian import StateJacobian
    return StateJacobian(model)


def _compiled(model, decision, progress, plots, jacobian):
    library, compile_time, cached = decision.library, 0.0, True  # loaded by an earlier run
    if library is None:
        from .build import build
        started = time.perf_counter()
        built = build(decision.generated.source, decision.key)
        library, cached = built.library, built.cached
        compile_time = time.perf_counter() - started if not cached else 0.0
        decision.library = library
    if model.settings.solver in IMPLICIT:
        from .stiff import simulate_stiff
        t, data, info = simulate_stiff(library, model, decision.generated, progress,
                                       plots, jacobian)
    else:
        t, data, info = _accel("runner").CompiledRun(library, model, decision.generated,
                                                     progress, plots).run()
    info["mode"] = {"mode": "accelerated", "why": decision.why, "note": "",
                    "compile_time": compile_time, "cache_hit": cached}
    return t, data, info


@functools.cache
def _accel(name):
    """The module accel.NAME, imported when a run first needs it (a run in normal mode
    imports none of the compiler) and then found without an import statement per run."""
    return importlib.import_module(f"{__package__}.{name}")
