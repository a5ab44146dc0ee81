"""The `blocksim` command: run, check, blocks, draw, report, export, sweep (in batch/cli.py),
trim and linearize (in analysis/cli.py), edit (in edit/cli.py; draw's work in draw/render.py,
report's in report/, export's in accel/export.py).

Exit codes: 0 success; 2 invalid diagram or command line (one `FILE:LINE: error: ...` line
per problem, no traceback); 3 simulation failed, or its results could not be written; 130
interrupted (Ctrl-C), 143 terminated (SIGTERM, handled like Ctrl-C). On 3, 130 and 143 the
results recorded so far are written and marked incomplete.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import time
import warnings
from pathlib import Path

from .analysis import cli as analysis_cli
from .batch import cli as sweep_cli
from .edit import cli as edit_cli
from .errors import (DiagramError, DiagramErrors, DiagramWarning, OutputError, ReportWarning,
                     SimulationError, Terminated)

EXIT_OK, EXIT_INVALID, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 2, 3, 130, 143


def _parser():
    from . import __version__
    p = argparse.ArgumentParser(prog="blocksim", description="Block-diagram simulation for robot control.")
    p.add_argument("--version", action="version", version=f"blocksim {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    run = sub.add_parser("run", help="compile and simulate a diagram; write its results")
    run.add_argument("file")
    run.add_argument("--out", help="run directory (default: runs/<name>/)")
    run.add_argument("--stop", help="stop time (same as --set simulation.stop=T)")
    run.add_argument("--solver", help="solver name (same as --set simulation.solver=NAME)")
    run.add_argument("--mode", choices=("normal", "accelerated", "auto"),
                     help="normal, accelerated (compiled) or auto (same as --set "
                          "simulation.mode=M)")
    run.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                     help="override a value by its dotted path, e.g. blocks.Kp.K=50 (repeatable)")
    run.add_argument("--no-plots", action="store_true", help="write no figures or animations")
    run.add_argument("--mp4", action="store_true",
                     help="also write the animations as MP4 (needs ffmpeg; the GIFs are always "
                          "written)")
    run.add_argument("--csv", action="store_true",
                     help="also write results.csv (a column per signal element)")
    run.add_argument("--quiet", action="store_true", help="no progress bar, no summary")
    run.add_argument("--op", metavar="FILE", help="start from an operating point "
                                                  "(operating_point.yaml from blocksim trim)")
    chk = sub.add_parser("check", help="check a diagram and explain it; simulate nothing")
    chk.add_argument("file")
    chk.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    chk.add_argument("--mode", choices=("normal", "accelerated", "auto"),
                     help="the mode to check (same as --set simulation.mode=M)")
    chk.add_argument("--code", action="store_true",
                     help="print the C source accelerated mode compiles, and nothing else")
    blk = sub.add_parser("blocks", help="the block catalogue, or one block's documentation")
    blk.add_argument("type", nargs="?", help="a block type (or 'subsystem')")
    blk.add_argument("file", nargs="?", help="a file such a block reads (an .fmu): what it "
                                              "declares (ports, parameters, states)")
    blk.add_argument("--markdown", action="store_true",
                     help="print the built-in catalogue as Markdown (docs/blocks.md)")
    sweep_cli.add_parser(sub)
    analysis_cli.add_parsers(sub)
    # draw and report are imported when used: every `blocksim run` would pay their import
    drw = sub.add_parser("draw", help="draw a diagram (SVG, PNG or PDF)")
    drw.add_argument("file", help="the diagram (YAML)")
    drw.add_argument("-o", "--out", help="output file: .svg, .png or .pdf "
                                         "(default: <diagram name>.svg in the current directory)")
    drw.add_argument("--expand", action="store_true", help="draw the inside of subsystems")
    drw.add_argument("--chart", metavar="NAME", help="draw the states and transitions of the "
                                                     "chart block NAME instead")
    drw.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                     help="override a value by its dotted path (as for run)")
    exp = sub.add_parser("export", help="a diagram as standalone C (a library, a header and "
                                         "a main writing CSV) or as an FMU")
    exp.add_argument("file", help="the diagram (YAML)")
    to = exp.add_mutually_exclusive_group(required=True)
    to.add_argument("--c", metavar="DIR", dest="c_dir",
                    help="write NAME.c, NAME.h and main.c there (build: cc *.c -lm)")
    to.add_argument("--fmu", metavar="OUT.fmu",
                    help="write an FMU (--fmi and --interface say which kind)")
    exp.add_argument("--fmi", type=int, choices=(2, 3), default=2,
                     help="the FMU's FMI version (default 2)")
    exp.add_argument("--interface", choices=("model_exchange", "co_simulation", "both"),
                     help="what the FMU offers: model exchange (the importer integrates "
                     "the diagram's states) and/or co-simulation (blocksim's solver inside "
                     "doStep); default both, co-simulation alone for a diagram model "
                     "exchange cannot carry (it says why)")
    exp.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                     help="override a value by its dotted path (as for run)")
    rep = sub.add_parser("report", help="rebuild the HTML report of a run or sweep directory")
    rep.add_argument("run_dir", metavar="DIR", help="a run directory, or a sweep's")
    edit_cli.add_parser(sub)
    return p


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:  # bare `blocksim`: the help, as git and pip do
        parser.print_help()
        return EXIT_OK
    warnings.showwarning = _show_warning
    try:
        with _terminate_as_interrupt():
            if args.command == "run":
                return _run(args)
            if args.command == "check":
                return _check(args)
            if args.command == "sweep":
                return sweep_cli.run(args)
            if args.command == "draw":
                return _draw(args)
            if args.command == "report":
                return _report(args)
            if args.command == "export":
                return _export(args)
            if args.command == "edit":
                return edit_cli.run(args)
            if args.command in ("trim", "linearize"):
                return analysis_cli.run(args, _load)
            from .language import blockdoc
            return blockdoc.main(args)
    except (DiagramError, DiagramErrors) as e:
        print(str(e), file=sys.stderr)
        return EXIT_INVALID
    except KeyboardInterrupt as e:
        print("interrupted", file=sys.stderr)
        return _interrupted(e)
    except BrokenPipeError:  # `blocksim blocks | head`: the reader has all it wanted
        sys.stdout = open(os.devnull, "w")
        return EXIT_OK


def _interrupted(e):
    return EXIT_TERMINATED if isinstance(e, Terminated) else EXIT_INTERRUPTED


@contextlib.contextmanager
def _terminate_as_interrupt():
    """While the command runs, SIGTERM raises `Terminated` (once: a second SIGTERM while
    the partial results are being written is ignored)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers belong to the main thread
        return

    def handler(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Terminated()
    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings meant for users (plugins, plots) as one line: `warning: ...`."""
    from .language.library import PluginWarning
    if issubclass(category, DiagramWarning):  # located already: FILE:LINE: warning: ...
        print(str(message), file=file or sys.stderr)
        return
    if not issubclass(category, (PluginWarning, ReportWarning)):
        return _default_showwarning(message, category, filename, lineno, file, line)
    print(f"warning: {message}", file=file or sys.stderr)


_default_showwarning = warnings.showwarning


def _overrides(args):
    sets = list(args.set)
    if getattr(args, "stop", None) is not None:
        sets.append(f"simulation.stop={args.stop}")
    if getattr(args, "solver", None) is not None:
        sets.append(f"simulation.solver={args.solver}")
    if getattr(args, "mode", None) is not None:
        sets.append(f"simulation.mode={args.mode}")
    return sets


def _exists(file):
    path = Path(file)
    if not path.is_file():
        what = "not a file" if path.exists() else "no such file"
        raise DiagramError(f"cannot read the diagram '{file}': {what}", file=file)


def _load(file, sets):
    """Load and compile a diagram with --set overrides (messages name the --set option)."""
    from .engine.compiler import compile_diagram
    from .language.diagram import load_diagram
    _exists(file)
    return compile_diagram(load_diagram(file, sets))


def _run(args):
    from . import api
    model = _load(args.file, _overrides(args))
    if args.op:
        from .analysis.operating import start_from
        start_from(model, args.op)
    out = Path(args.out) if args.out else Path("runs") / model.name
    bar = None if args.quiet or not sys.stderr.isatty() else _Progress(model.settings)
    try:
        result = api.execute(model, out=out, plots=not args.no_plots, csv=args.csv, mp4=args.mp4,
                             progress=bar.update if bar else None,
                             figure_progress=bar.figure if bar else None)
    except DiagramError:  # the run directory cannot be written
        _close(bar)
        raise
    except OutputError as e:
        _close(bar)
        print(str(e), file=sys.stderr)
        return EXIT_FAILED
    except SimulationError as e:
        _close(bar)
        print(str(e), file=sys.stderr)
        _print_messages(e.result)
        print(f"partial results (incomplete) written to {out}/", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt as e:
        _close(bar)
        print("interrupted", file=sys.stderr)
        if getattr(e, "result", None) is not None:
            _print_messages(e.result)
            print(f"partial results (incomplete) written to {out}/", file=sys.stderr)
        return _interrupted(e)
    _close(bar)
    _print_messages(result)
    if not args.quiet and result.meta["mode"].get("note"):
        print(result.meta["mode"]["note"], file=sys.stderr)
    if not args.quiet:
        meta, st = result.meta, result.meta["solver"]
        drawn = f", figures in {_seconds(meta['figures_time'])}" \
            f"{_largest(meta.get('figure_times', {}))}" if not args.no_plots else ""
        events = f", {_count(meta['events']['total'], 'event')}" \
            if (meta.get("events") or {}).get("total") else ""
        report = " (report.html)" if not args.no_plots and (out / "report.html").is_file() else ""
        print(f"{model.name}: t = {meta['end_time']:g} s, {_count(len(result.t), 'row')}, "
              f"{_count(st['nsteps'], 'step')} ({st['nrejected']} rejected, "
              f"{_count(st['nfev'], 'evaluation')})"
              f"{events}; {_mode_text(meta['mode'])}"
              f"simulated in {_seconds(meta['wall_time'])}{drawn} -> {out}/{report}")
    return EXIT_OK


def _mode_text(mode):
    """How the run was simulated, for the summary line: '' for normal mode."""
    if mode["mode"] != "accelerated":
        return ""
    how = "cached" if mode["cache_hit"] else f"compiled in {_seconds(mode['compile_time'])}"
    if mode.get("normal_time"):
        how += f", after {_seconds(mode['normal_time'])} in normal mode"
    return f"accelerated ({how}), "


def _largest(times, shown=3):
    """What took the drawing's time, the largest parts first: ' (plot 0.6 s, Scope 0.2 s)'."""
    parts = sorted(times.items(), key=lambda item: -item[1])[:shown]
    return " (" + ", ".join(f"{name} {_seconds(s)}" for name, s in parts) + ")" if parts else ""


def _seconds(x):
    """A duration for people: 0.0086 s, 0.94 s, 2.2 s, 31 s."""
    return f"{x:.2g} s" if x < 10 else f"{x:.0f} s"


def _print_messages(result):
    for line in getattr(result, "messages", []) or []:
        print(line)


_BAR = "{desc}{percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]"


class _Progress:
    """tqdm bars on a terminal: simulated time during the run, then drawing the figures
    (that one appears only when the drawing takes over a second). Updated at most ten times
    a second."""

    def __init__(self, settings):
        from tqdm import tqdm
        self.tqdm = tqdm
        self.start, self.stop = settings.start, settings.stop
        self.bar = tqdm(total=1000, leave=False, file=sys.stderr, bar_format=_BAR)
        self.figures = None
        self.last = 0.0
        self.done = 0

    def update(self, t):
        self._advance(int(1000 * (t - self.start) / (self.stop - self.start)),
                      f"t = {t:<8.4g} ")

    def figure(self, fraction, name):
        if self.figures is None:
            self.bar.close()
            self.bar = self.figures = self.tqdm(total=1000, leave=False, file=sys.stderr,
                                                delay=1.0, bar_format=_BAR)
            self.last, self.done = 0.0, 0
        self._advance(int(1000 * fraction), f"figures ({name}) ")

    def _advance(self, k, label):
        now = time.monotonic()
        if now - self.last < 0.1:
            return
        self.last = now
        if k > self.done:
            self.bar.update(k - self.done)
            self.done = k
        self.bar.set_description_str(label, refresh=False)

    def close(self):
        self.bar.close()


def _close(bar):
    if bar is not None:
        bar.close()


def _count(n, what):
    """'1 block', '2 blocks'."""
    return f"{n} {what}" + ("" if n == 1 else "s")


def _state_counts(model):
    """(continuous states, discrete states of sampled blocks, modes of the others)."""
    from .block import TRIGGERED, Sample
    sampled = sum(ds.stop - ds.start for b in model.blocks
                  for ds in [model.state_slices[b.name][1]]
                  if isinstance(b.sample, Sample) or b.sample == TRIGGERED)
    return model.x0.size, sampled, model.xd0.size - sampled


def _check(args):
    from .block import CONSTANT, TRIGGERED, Sample
    from .engine.conditional import TriggeredSubsystem
    from .engine.solvers import FIXED_STEP
    from .accel.mode import decide, refusal
    model = _load(args.file, _overrides(args))
    if args.code:
        from .accel.arguments import SeriesRange, arguments
        from .accel.codegen import generate
        from .accel.compilable import NotCompilable
        try:
            generated = generate(model)
            arguments(model, generated)
            print(generated.source, end="")
        except NotCompilable as e:
            raise refusal(model, e.blocks, hint="--code prints the C of a diagram whose "
                                                "blocks all have a compiled form") from None
        except SeriesRange as e:
            raise DiagramError(f"accelerated mode is not available: {e}", file=model.file) \
                from None
        return EXIT_OK
    s = model.settings
    print(f"diagram {model.name} ({model.file}): {_count(len(model.blocks), 'block')}, "
          + ", ".join(_count(n, what) for n, what in zip(_state_counts(model),
                                                          ("continuous state", "discrete state",
                                                           "mode"))))
    if model.description:
        print(f"  {model.description}")
    print(f"simulation: {s.start:g} .. {s.stop:g} s, solver {s.solver}, " + (
        f"step {s.step:g}" if s.solver in FIXED_STEP else
        f"rtol {s.rtol:g}, atol {s.atol:g}, max_step {s.max_step:g}")
        + (f", output every {s.output_interval:g} s" if s.output_interval else ""))
    decision = decide(model)
    print(f"mode: {decision.mode} ({decision.why})")
    from .language.library import Library
    library = Library()
    for section in library.sections:
        if model.resources.get(section):
            note = library.section_note(section, model.resources[section])
            if note:
                print(note)
    print("\nblocks:")
    enables = _enables(model)
    outputs = {}  # block name -> its output ports, in order (one pass: linear in the blocks)
    for (name, port), view in model.outputs.items():
        outputs.setdefault(name, []).append(f"{port}{tuple(view.shape)}")
    inherited = {}  # block name -> the sample time all its outputs inherit
    for n in model.nodes:
        inherited.setdefault(n.block.name, set()).add(n.sample if n.block.sample is None
                                                      and n.group == "discrete" else None)
    for b in model.blocks:
        cs, ds = model.state_slices[b.name]
        sample = b.sample
        if sample is None and len(inherited.get(b.name, ())) == 1 and None not in inherited[b.name]:
            sample = next(iter(inherited[b.name]))
        gate = model.gates.get(b.name)
        rate = (f"at {gate.owner}'s trigger" if gate and gate.owner else
                "at events" if isinstance(b, TriggeredSubsystem) else
                "constant" if sample == CONSTANT else
                f"discrete {sample.period:g} s" + (f" (offset {sample.offset:g})" if sample.offset else "")
                + (" (inherited)" if b.sample is None else "")
                if isinstance(sample, Sample) else "continuous")
        if gate and gate.flags and not gate.owner:
            rate += f", while {enables[gate.flags[-1]]} is enabled"
        names = [port.name for port in b.ports()[0]]
        ins = ", ".join(f"{name}{tuple(v.shape)}" if v is not None else f"{name} (unwired)"
                        for name, v in zip(names, b.u))
        outs = ", ".join(outputs.get(b.name, ()))
        states = []
        if cs.stop > cs.start:
            states.append(f"{cs.stop - cs.start} continuous")
        if ds.stop > ds.start:  # a sampled block's state, or the modes events change
            states.append(f"{ds.stop - ds.start} discrete"
                          if isinstance(b.sample, Sample) or b.sample == TRIGGERED else
                          f"{_count(ds.stop - ds.start, 'mode')} (changed at events)")
        if b.z is not None and b.z.size:
            states.append(f"{b.z.size} zero crossing{'s' if b.z.size > 1 else ''}")
        print(f"  {b.name:<16} {b.type:<18} {rate:<28} in: {ins or '-'}   out: {outs or '-'}"
              + (f"   states: {', '.join(states)}" if states else ""))
        for line in b.describe():
            print(f"  {'':<16} {line}")
    if model.subsystems:
        print("\nhierarchy:")
        for line in _hierarchy(model):
            print(line)
    if any(sub.condition for sub in model.spec.subsystems.values()):
        print("\nconditional subsystems:")
        for line in _conditions(model):
            print(line)
    if model.spec.buses:
        print("\nbuses (wires when compiled: what each element carries):")
        for line in _buses(model):
            print(line)
    print("\nexecution order (outputs computed per evaluation):")
    for i, n in enumerate(model.nodes, 1):
        gate = model.gates.get(n.block.name)
        when = (f", run by {gate.owner}" if gate and gate.owner and n.group == "triggered" else
                "".join(f", while {enables[f]} is enabled" for f in n.gate))
        print(f"  {i:>3}. {n.label:<32} [{n.group}{when}]")
    if model.inports or model.outports:
        print("\nthe diagram's own ports (blocksim export's inputs and outputs):")
        for name, block in model.inports.items():
            fed = ", ".join(t.text() for t in model.spec.inputs[name])
            print(f"  input  {name:<12} -> {fed} {tuple(block.y[0].shape)}, "
                  f"alone it reads {_short(block.p.value)}")
        for name, (view, text) in model.outports.items():
            print(f"  output {name:<12} <- {text} {tuple(view.shape)}")
    if model.record:
        print("\nrecorded:")
        for name, (view, text) in model.record.items():
            print(f"  {name:<12} <- {text} {tuple(view.shape)}")
    print("\nok: the diagram is valid")
    return EXIT_OK


def _export(args):
    from .accel.export import export_c, export_fmu
    model = _load(args.file, _overrides(args))
    if args.fmu:
        from .fmi.build import BuildError
        try:
            interfaces, why_not, tune = _writing(args, export_fmu, model, args.fmu, args.fmi,
                                                 args.interface)
        except BuildError as e:
            print(f"{args.file}: error: the FMU could not be built: {e}", file=sys.stderr)
            return EXIT_FAILED
        names = {"model_exchange": "model exchange", "co_simulation": "co-simulation"}
        print(f"wrote {args.fmu} (FMI {args.fmi}.0, "
              f"{' and '.join(names[i] for i in interfaces)})")
        for e in getattr(why_not, "errors", [why_not] if why_not else []):
            first = str(e).split("\n")[0].replace(": error: ", ": ", 1)
            print(f"note: co-simulation only: {first}")
        _print_tunables(tune)
        return EXIT_OK
    paths, tune = _writing(args, export_c, model, args.c_dir)
    print(f"wrote {', '.join(str(p) for p in paths)}")
    _print_tunables(tune)
    print(f"build and run: cd {args.c_dir} && cc *.c -lm && ./a.out [NAME=VALUE ...] > "
          "results.csv")
    return EXIT_OK


def _writing(args, export, *a):
    """export(*a), a place the file system refuses named as the diagram's error (exit 2)."""
    try:
        return export(*a)
    except OSError as e:
        where = e.filename or args.fmu or args.c_dir
        raise DiagramError(f"cannot write the export to '{where}': {e.strerror or e}",
                           file=args.file) from None


def _print_tunables(tune):
    """What blocksim export says of the diagram's parameters (accel/tunable.py)."""
    if tune.parameters:
        print("tunable parameters: " + ", ".join(
            p.name + (" (fixed: before the run starts)" if p.variability == "fixed" else "")
            for p in tune.parameters))
    for name, why in tune.refused:
        print(f"not tunable: {name}: {why}")


def _draw(args):
    from .draw import render as draw
    return draw.command(args, _load)


def _report(args):
    """Rebuild report.html of a run directory or of a sweep directory."""
    from .report.run_report import write_run_report
    from .report.sweep_report import is_sweep_dir, write_sweep_report
    run_dir = Path(args.run_dir)
    if not run_dir.is_dir():
        raise DiagramError(f"no such run or sweep directory: {run_dir}", file=str(run_dir))
    try:
        path = write_sweep_report(run_dir) if is_sweep_dir(run_dir) else write_run_report(run_dir)
    except OSError as e:
        raise DiagramError(f"cannot write the report into '{run_dir}': {e.strerror or e}",
                           file="blocksim report") from None
    print(f"report -> {path}")
    return 0


def _enables(model):
    """{flag index in the discrete state: the enabled subsystem it belongs to}."""
    from .engine.conditional import EnabledSubsystem
    return {model.state_slices[b.name][1].start: b.name for b in model.blocks
            if isinstance(b, EnabledSubsystem)}


def _conditions(model):
    """A few lines per enabled or triggered subsystem: what controls it, what it does."""
    lines = []
    for name, sub in model.spec.subsystems.items():
        c = sub.condition
        if c is None:
            continue
        block = model.block(name)
        p = block.p
        inside = [b.name for b in model.blocks if b.name.startswith(name + "/")]
        if c.kind == "enable":
            lines += [f"  {name}: enabled by {c.signal.text()} (runs while > 0; switches located "
                      "as its zero crossings)",
                      f"    while disabled: outputs {p.outputs_when_disabled}"
                      f"{' to initial' if p.outputs_when_disabled == 'reset' else ''}, states "
                      f"held; when enabled again: states {p.states_when_enabling}"]
        else:
            lines += [f"  {name}: triggered by {c.signal.text()}, {c.edge} edges (located)"
                      + (f", while {c.enable.text()} > 0" if c.enable else ""),
                      f"    runs {len(inside)} block(s) once per edge, outputs held between"]
        values = ", ".join(f"{port} = {_short(v)}" for port, v in zip(p.outputs, block.initials))
        lines.append(f"    initial outputs: {values or '(no outputs)'}")
    return lines


def _hierarchy(model):
    """The diagram as a tree: each subsystem (its file and parameter values, what controls
    a conditional one) above its blocks, indented, in declaration order."""
    lines, opened = [], []
    for b in model.blocks:
        if b.name in model.spec.subsystems:  # a conditional subsystem's own block
            continue
        path = b.name.split("/")
        while opened and opened != path[:len(opened)]:
            opened.pop()
        while len(opened) < len(path) - 1:
            opened.append(path[len(opened)])
            name = "/".join(opened)
            source, params = model.subsystems[name]
            values = ", ".join(f"{k} = {_short(v)}" for k, v in params.items())
            c = model.spec.subsystems[name].condition
            control = "" if c is None else \
                f", {'enabled' if c.kind == 'enable' else 'triggered'} by {c.signal.text()}"
            lines.append(f"  {'  ' * (len(opened) - 1)}{opened[-1]:<16} subsystem ({source}"
                         f"{control})" + (f"  {values}" if values else ""))
        lines.append(f"  {'  ' * len(opened)}{path[-1]:<16} {b.type}")
    return lines


def _buses(model):
    """A line per bus and bus_select: each element and the block output it carries."""
    from .language.buses import Bundle
    from .language.diagram import Endpoint, Loc, index_text, resolve_signal
    lines = []
    for name, bus in model.spec.buses.items():
        parts = []
        for element in bus.elements:
            port = None if bus.type == "bus" else element
            value = resolve_signal(model.spec, Endpoint(name, port, None, Loc(model.file)))
            if bus.type == "bus":
                value = value.elements[element]
            if isinstance(value, Bundle):
                parts.append(f"{element} <- bus {value.bus}")
                continue
            out = value.port or next(iter(model.ports[value.block][1]))
            shape = model.outputs[(value.block, out)].shape
            parts.append(f"{element} <- {value.block}.{out}{index_text(value.index)} "
                         f"{tuple(shape) if value.index is None else ''}".rstrip())
        lines.append(f"  {name:<16} {bus.type:<11} " + ", ".join(parts))
    return lines


def _short(value):
    """A parameter value in a few characters: 0.5, [1, 2, 3]."""
    import numpy as np
    a = np.asarray(value, dtype=float)
    if a.ndim == 0:
        return f"{float(a):g}"
    return np.array2string(a, separator=", ", threshold=8,
                           formatter={"float_kind": lambda x: f"{x:g}"})


if __name__ == "__main__":
    sys.exit(main())
