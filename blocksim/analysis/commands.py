"""The work of `blocksim trim` and `blocksim linearize`: what they print and the files they
write (operating_point.yaml; linear.npz, linear.json and the Bode plot)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from ..block import Sample
from ..engine.results import check_out_dir, json_to
from ..errors import AnalysisError, SimulationError
from ..util.atomic import atomic_paths
from . import frequency

EXIT_OK, EXIT_FAILED = 0, 3
MAX_COLUMNS, MAX_ROWS = 12, 30  # matrices wider or taller than this are left to linear.json


def run(args, load):
    """Run `blocksim trim` or `blocksim linearize` (args from the parser, `load(file,
    sets)` the CLI's loader). DiagramErrors propagate (exit 2); a failure on the model's
    values is printed here (exit 3)."""
    model = load(args.file, args.set)
    out = Path(args.out) if args.out else Path("runs") / model.name
    check_out_dir(out)
    if args.command == "linearize" and args.bode:
        frequency.check_figure_path(args.bode)
    try:
        if args.command == "trim":
            return _trim(model, args, out)
        return _linearize(model, args, out)
    except (AnalysisError, SimulationError) as e:
        print(str(e), file=sys.stderr)
        return EXIT_FAILED


def _trim(model, args, out):
    from .trimming import trim
    path = out / "operating_point.yaml"
    try:
        point = trim(model, args.fix, args.free)
    except AnalysisError as e:
        if getattr(e, "point", None) is not None:
            e.point.write(path)
            e.hint = f"{e.hint}; the point reached is in {path}"
        raise
    verdict = "converged" if point.converged else "not converged"
    print(f"{model.name}: operating point at t = {point.time:g} s ({verdict}, residual "
          f"{point.residual:.3g})")
    sampled = {b.name for b in model.blocks if isinstance(b.sample, Sample)}
    for table, kind in ((point.states, "x"), (point.discrete_states, "xd")):
        for name, value in table.items():
            for k, v in enumerate(np.ravel(value) if kind == "x" or name in sampled else ()):
                print(f"  {name}.{kind}[{k}] = {v:.10g}")
    for block, _ in model.hybrid:
        print(f"  mode: {block.name} {block.mode_text() or block.xd.tolist()}")
    if point.inputs:
        print("free inputs:")
        for name, value in point.inputs.items():
            print(f"  {name} = {_vector(value)}")
    point.write(path)
    print(f"-> {path}")
    return EXIT_OK


def _linearize(model, args, out):
    from .linear_model import linearization
    lin = linearization(model, args.input, args.output, args.open, at=args.at, op=args.op,
                        pade=args.pade, period=args.period, states=args.states)
    system = lin.system
    equilibrium = ("an equilibrium" if lin.residual <= 1e-6 else "not an equilibrium")
    print(f"{model.name}: linearised at {lin.point}, t = {lin.time:g} s ({equilibrium}, "
          f"residual {lin.residual:.3g})")
    print(f"{lin.domain}: {_count(lin.states, 'state')}, {_count(lin.inputs, 'input')}, "
          f"{_count(lin.outputs, 'output')}" + (f"; loop opened at {', '.join(lin.opened)}"
                                                if lin.opened else ""))
    if lin.converted:
        print(f"converted to it (zero-order hold): {', '.join(lin.converted)}")
    if args.pade is not None:
        print(f"transport delays: Padé approximation of order {args.pade}")
    print(f"exact Jacobians: {', '.join(lin.exact) or 'none'}")
    print(f"differenced (central differences): {', '.join(lin.differenced) or 'none'}"
          + (f" (error estimate {lin.difference_error:.1g} of a block's largest entry; an "
             "entry within its estimate of 0 is 0)" if lin.differenced else ""))
    for name, mode in lin.modes:
        print(f"mode: {name} {mode}")
    for letter, matrix, rows, cols in (("A", lin.A, lin.states, lin.states),
                                       ("B", lin.B, lin.states, lin.inputs),
                                       ("C", lin.C, lin.outputs, lin.states),
                                       ("D", lin.D, lin.outputs, lin.inputs)):
        print(f"\n{letter} =")
        print(_table(matrix, rows, cols))
    # what the model says; a part that cannot be computed is a note, the model is kept
    notes = []
    poles, zeros, gain, margins = (
        _attempt(what, compute, system, notes) for what, compute in (
            ("the poles", frequency.poles), ("the zeros", frequency.zeros),
            ("the DC gain", frequency.dc_gain), ("the margins", frequency.margins)))
    square = system.ninputs == system.noutputs
    print(f"\npoles: {_complex_list(poles)}")
    print(f"zeros: {_complex_list(zeros) if square else '(a square model only)'}")
    print(f"DC gain: {_vector(gain)}")
    if margins is not None and (args.open or args.bode):
        print("margins: " + frequency.margins_text(margins))
    for note in notes:
        print(f"note: {note}")
    files = _write(lin, out, {"poles": None if poles is None else _pairs(poles),
                              "zeros": None if zeros is None else _pairs(zeros),
                              "dc_gain": None if gain is None else gain.tolist(),
                              "notes": notes}, margins)
    if args.bode:
        files.append(frequency.bode(system, args.bode, margins))
    print("-> " + ", ".join(str(f) for f in files))
    return EXIT_OK


def _attempt(what, compute, system, notes):
    """compute(system), or None with a note saying why it could not be computed (a large or
    badly scaled model: an eigenvalue problem that does not converge)."""
    try:
        return compute(system)
    except (np.linalg.LinAlgError, ValueError, ArithmeticError) as e:
        notes.append(f"{what} could not be computed: {e}")
        return None


def _write(lin, out, summary, margins):
    """linear.npz (A B C D, states inputs outputs, dt) and linear.json (the same, how the
    model was made, and `summary`: poles, zeros, DC gain), written together."""
    npz, js = out / "linear.npz", out / "linear.json"
    arrays = {"A": lin.A, "B": lin.B, "C": lin.C, "D": lin.D,
              "states": np.array(lin.states, dtype=str), "inputs": np.array(lin.inputs, dtype=str),
              "outputs": np.array(lin.outputs, dtype=str)}
    if lin.dt is not None:
        arrays["dt"] = np.array(lin.dt)
    data = {key: (value.tolist() if key in "ABCD" else list(value) if key != "dt" else lin.dt)
            for key, value in arrays.items()}
    data.update(time=lin.time, point=lin.point, model=lin.domain, converted=lin.converted,
                opened=lin.opened, exact=lin.exact, differenced=lin.differenced,
                difference_error=lin.difference_error,
                modes=dict(lin.modes), **summary)
    if margins is not None:
        data["margins"] = dict(zip(("gain", "phase_deg", "phase_crossover_rad_s",
                                    "gain_crossover_rad_s"), margins))
    with atomic_paths(npz, js) as (tmp_npz, tmp_js):
        with open(tmp_npz, "wb") as f:
            np.savez(f, **arrays)
        json_to(tmp_js, data)
    return [npz, js]


def _table(matrix, rows, cols):
    if matrix.size == 0:
        return f"  (empty: {matrix.shape[0]} x {matrix.shape[1]})"
    if matrix.shape[1] > MAX_COLUMNS or matrix.shape[0] > MAX_ROWS:
        return f"  ({matrix.shape[0]} x {matrix.shape[1]}: see linear.json)"
    cells = [[f"{v:.4g}" for v in row] for row in matrix]
    width = max(max(len(c) for c in cols), max(len(c) for row in cells for c in row)) + 2
    label = max(len(r) for r in rows) + 2
    lines = [" " * label + "".join(f"{c:>{width}}" for c in cols)]
    lines += [f"{r:<{label}}" + "".join(f"{c:>{width}}" for c in row) for r, row in zip(rows, cells)]
    return "\n".join(lines)


def _count(items, word):
    return f"{len(items)} {word}{'' if len(items) == 1 else 's'}"


NOT_COMPUTED = "(not computed: see the note)"


def _complex_list(values):
    if values is None:
        return NOT_COMPUTED
    return "none" if len(values) == 0 else ", ".join(_complex(v) for v in values)


def _complex(v):
    v = complex(v)
    if abs(v.imag) <= 1e-12 * max(1.0, abs(v)):
        return f"{v.real:.6g}"
    return f"{v.real:.6g}{'+' if v.imag >= 0 else '-'}{abs(v.imag):.6g}j"


def _pairs(values):
    return [[float(np.real(v)), float(np.imag(v))] for v in values]


def _vector(value):
    if value is None:
        return NOT_COMPUTED
    a = np.asarray(value, dtype=float)
    if a.size == 1:
        return f"{float(a.reshape(())):.6g}"
    return np.array2string(a, precision=6, separator=", ", max_line_width=100)
