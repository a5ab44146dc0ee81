"""`blocksim export FILE --c DIR`: the diagram as a C library, a header and a main writing
CSV, built with `cc *.c -lm` alone (no Python, no numpy at run time).

References: `blocksim run --csv` of the same diagram (its results.csv), and values worked out
by hand for the library's calls. The exported code takes the C library's functions where
accelerated mode calls numpy's ufunc loops, and its own sums where it calls numpy's BLAS:
those of OpenBLAS's x86-64 kernels for short dot products and products of up to 3 columns
(the adaptive solvers' on 1 to 3 states), in order elsewhere. With a fixed step, or an
adaptive one on up to 3 states, the CSV equals run's bit for bit; elsewhere a last bit of an
error norm can move an adaptive step, so those runs are compared on an output grid (the
values at the same times)."""
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.accel.lowering import Lowering
from blocksim.accel.toolchain import compiler
from blocksim.block import Block, In, Out
from blocksim.cli import main
from blocksim.engine.csvio import read_csv
from blocksim.language import library

ROOT = Path(__file__).resolve().parents[2]


def _built(directory, *flags):
    """Build the exported files in `directory` as the docs say: cc *.c -lm."""
    sources = sorted(p.name for p in directory.glob("*.c"))
    subprocess.run([*compiler()[0], "-O2", *flags, *sources, "-lm", "-o", "diagram"],
                   cwd=directory, check=True, capture_output=True)
    return directory / "diagram"


def _run_csv(diagram, out, sets):
    """blocksim run's CSV in normal mode: the interpreter, not the generated C the export
    shares with accelerated mode."""
    args = ["run", str(diagram), "--csv", "--no-plots", "--quiet", "--mode", "normal",
            "--out", str(out)]
    assert main(args + [a for s in sets for a in ("--set", s)]) == 0
    return read_csv(out / "results.csv")[:2]


@pytest.mark.parametrize("name, sets", [
    ("msd", ["simulation.output_interval=0.05"]),
    # adaptive rows, no grid: 2 and 3 states, the stepper's sums are numpy's (rt_blas.c)
    ("msd", []),
    ("pid_controller", []),
    ("demo3_controller", ["simulation.output_interval=0.05"]),
    ("pid_motor", ["simulation.solver=rk4", "simulation.step=0.01"]),
    ("msd", ["simulation.solver=rk4", "simulation.step=0.01"]),
    ("gearbox", ["simulation.output_interval=1"]),  # a chart: its machine and helpers
])
def test_exported_csv_equals_run(name, sets, tmp_path, capsys):
    diagram = ROOT / "diagrams" / f"{name}.yaml"
    out = tmp_path / "c"
    assert main(["export", str(diagram), "--c", str(out),
                 *(a for s in sets for a in ("--set", s))]) == 0
    assert "cc *.c -lm" in capsys.readouterr().out
    assert {p.name for p in out.iterdir()} == {"main.c", f"{name}.c", f"{name}.h"}
    program = _built(out)
    subprocess.run([str(program), "exported.csv"], cwd=out, check=True)
    header, values = read_csv(out / "exported.csv")[:2]
    run_header, run_values = _run_csv(diagram, tmp_path / "run", sets)
    assert header == run_header
    assert values.shape == run_values.shape
    assert np.array_equal(values[:, 0], run_values[:, 0])
    scale = np.maximum(np.abs(run_values).max(axis=0), 1.0)
    assert np.all(np.abs(values - run_values) <= 1e-12 * scale)


def test_a_build_for_the_machine_keeps_the_runs_sums(tmp_path):
    """Built with -march=native (fused multiply-adds available), the exported code still
    rounds every product and sum as run does: it turns contraction off itself, since a
    compiler may fuse a * b + c by default (GCC does). Reference: blocksim run --csv, bit
    for bit for pid_motor at rk4 (as test_exported_csv_equals_run); failed before the
    sources said so (47 fused multiply-adds in the program, the CSV apart in last bits)."""
    out = tmp_path / "c"
    sets = ["simulation.solver=rk4", "simulation.step=0.01"]
    assert main(["export", str(ROOT / "diagrams" / "pid_motor.yaml"), "--c", str(out),
                 *(a for s in sets for a in ("--set", s))]) == 0
    try:
        program = _built(out, "-march=native")
    except subprocess.CalledProcessError:
        pytest.skip("this compiler takes no -march=native")
    subprocess.run([str(program), "exported.csv"], cwd=out, check=True)
    values = read_csv(out / "exported.csv")[1]
    run_values = _run_csv(ROOT / "diagrams" / "pid_motor.yaml", tmp_path / "run", sets)[1]
    assert values.shape == run_values.shape and np.array_equal(values, run_values)


LOOP = """\
blocksim: 1
name: loop
inputs:
  u: Int
outputs:
  x: Int.y
  dbl: Twice.y
blocks:
  Int:   {type: integrator, x0: 1}
  Twice: {type: gain, K: 2}
wires:
  - Int -> Twice
simulation: {stop: 10, solver: rk4, step: 0.1}
record: {x: Int.y}
"""

LOOP_MAIN = r"""
#include <stdio.h>
#include "loop.h"
int main(void)
{
    loop_model *m = loop_init();
    double u = 3.0, out[loop_OUTPUTS_SIZE], x = 5.0, dx = 0.0;
    loop_set_input(m, loop_INPUT_u, &u);
    int s1 = loop_advance(m, 1.0);
    loop_outputs(m, out);
    printf("%d %.17g %.17g %.17g\n", s1, loop_time(m), out[loop_OUTPUT_x], out[loop_OUTPUT_dbl]);
    u = -1.0;
    loop_set_input(m, loop_INPUT_u, &u);
    int s2 = loop_advance(m, 2.5);
    loop_outputs(m, out);
    printf("%d %.17g %.17g %.17g\n", s2, loop_time(m), out[loop_OUTPUT_x], out[loop_OUTPUT_dbl]);
    int d = loop_derivatives(m, 2.5, &x, &dx);
    printf("%d %d %.17g\n", loop_NX, d, dx);
    int s3 = loop_advance(m, 50.0);
    printf("%d %.17g %s|\n", s3, loop_time(m), loop_error(m));
    loop_terminate(m);
    return 0;
}
"""


def test_the_library_advances_with_the_inputs_set(tmp_path):
    """x' = u from x(0) = 1: u = 3 to t = 1 gives x = 4; u = -1 to t = 2.5 gives x = 2.5
    (by hand; rk4 is exact on a constant rate); the output dbl = 2x; the derivative at any x
    is the input, -1; past the stop (10) the run ends there (1)."""
    (tmp_path / "loop.yaml").write_text(LOOP)
    out = tmp_path / "c"
    assert main(["export", str(tmp_path / "loop.yaml"), "--c", str(out)]) == 0
    (out / "main.c").write_text(LOOP_MAIN)
    lines = subprocess.run([str(_built(out))], check=True, capture_output=True,
                           text=True).stdout.splitlines()
    first, second, deriv, end = (line.split() for line in lines)
    assert first[0] == "0" and [float(v) for v in first[1:]] == pytest.approx([1, 4, 8],
                                                                              abs=1e-12)
    assert second[0] == "0" and [float(v) for v in second[1:]] == pytest.approx([2.5, 2.5, 5],
                                                                                abs=1e-12)
    assert deriv == ["1", "0", "-1"]
    assert end == ["1", "10", "|"]


def test_refusals_name_the_block(tmp_path, capsys):
    """A block whose compiled form opens a file at run time (an FMU), a stiff solver (its
    loop is scipy's): exit 2 at the block's (setting's) line, nothing written."""
    out = tmp_path / "c"
    assert main(["export", str(ROOT / "diagrams" / "fmu_motor.yaml"), "--c", str(out)]) == 2
    err = capsys.readouterr().err
    assert "fmu_motor.yaml:12: error: block 'Motor': cannot export: block type 'fmu' calls " \
           "the FMU's binary, opened from dc_motor.fmu at run time" in err
    assert main(["export", str(ROOT / "diagrams" / "msd.yaml"), "--c", str(out), "--set",
                 "simulation.solver=radau"]) == 2
    err = capsys.readouterr().err
    assert "cannot export: solver radau is scipy's" in err and "Traceback" not in err
    assert not out.exists()


FUNCTIONS = """\
blocksim: 1
name: fns
blocks:
  Clock: {type: clock}
  A:     {type: function, inputs: [t], expr: "array([[2 + sin(t), cos(t), 0.5], [0.3, 3 + t, sin(2*t)], [t, 0.1, 4]])"}
  Elem:  {type: function, inputs: [t], expr: "array([exp(-t), log(1 + t), log10(2 + t), tan(t/3), asin(sin(t)/2), acos(cos(t)/2), atan(t), sinh(t), cosh(t), tanh(t), exp2(t), log2(1 + t), asinh(t), acosh(1 + t), atanh(t/20), (1 + t)**2.5, atan2(t, 2), hypot(t, 3), mod(t, 0.7), mod(-t, 0.7), rem(-t, 0.7)])"}
  Lin:   {type: function, inputs: [A], expr: "array([det(A), cond(A)])"}
  Inv:   {type: function, inputs: [A], expr: inv(A)}
  Pinv:  {type: function, inputs: [A], expr: "pinv(A[0:2, :])"}
  Solve: {type: function, inputs: [A], expr: "solve(A, array([1, 2, 3]))"}
wires:
  - Clock -> A
  - Clock -> Elem
  - A -> Lin
  - A -> Inv
  - A -> Pinv
  - A -> Solve
simulation: {stop: 5, solver: rk4, step: 0.25}
record: {e: Elem.y, lin: Lin.y, inv: Inv.y, pinv: Pinv.y, solve: Solve.y}
"""


def test_functions_without_numpy_agree_with_run(tmp_path):
    """The C library's elementary functions and the runtime's own LU and SVD (rt_linalg.c)
    stand in for numpy's loops and LAPACK: their values equal `blocksim run`'s (numpy's) to
    rounding, 1e-12 of each column's scale."""
    diagram = tmp_path / "fns.yaml"
    diagram.write_text(FUNCTIONS)
    out = tmp_path / "c"
    assert main(["export", str(diagram), "--c", str(out)]) == 0
    subprocess.run([str(_built(out)), "exported.csv"], cwd=out, check=True)
    header, values = read_csv(out / "exported.csv")[:2]
    run_header, run_values = _run_csv(diagram, tmp_path / "run", [])
    assert header == run_header and values.shape == run_values.shape == (21, 1 + 21 + 2 + 9 + 6 + 3)
    scale = np.maximum(np.abs(run_values).max(axis=0), 1.0)
    assert np.all(np.abs(values - run_values) <= 1e-12 * scale)


def docs_program_angles(tmp_path, text, k):
    """The angles printed by program k of the markdown `text` (its C blocks) built as
    main.c of pid_controller.yaml's export, after checking it prints what the page shows
    next (the first block starting 't = ')."""
    program = re.findall(r"```c\n(.*?)```", text, re.S)[k]
    shown = re.search(r"```\n(t = .*?)```", text, re.S).group(1)
    out = tmp_path / "pidc"
    assert main(["export", str(ROOT / "diagrams" / "pid_controller.yaml"), "--c", str(out)]) == 0
    (out / "main.c").write_text(program)
    printed = subprocess.run([str(_built(out))], check=True, capture_output=True,
                             text=True).stdout
    assert printed == shown
    return [float(line.split("theta =")[1].split()[0]) for line in printed.splitlines()
            if "theta =" in line]


def test_docs_closed_loop_follows_pid_motor(tmp_path):
    """docs/export.md's program closes the loop around pid_controller.yaml's export with the
    motor in C (Euler, 1 ms) and prints what the page shows; the reference is `blocksim run`
    of pid_motor.yaml (the same loop, continuous, without its load): the angles agree to
    the 1 ms discretisation's error (0.05 rad; 1e-4 rad at t = 8 s, settled)."""
    theta = docs_program_angles(tmp_path, (ROOT / "docs" / "export.md").read_text(), 1)
    run = blocksim.run(ROOT / "diagrams" / "pid_motor.yaml",
                       overrides={"blocks.Load.after": 0, "simulation.output_interval": 1.0})
    reference = run["theta"][1:9]
    assert np.abs(np.array(theta) - reference).max() < 0.05
    assert abs(theta[-1] - reference[-1]) < 1e-4


class _Tripler(Block):
    """y = 3 u: a plugin block with a compiled form of its own."""

    def ports(self):
        return [In("u")], [Out("y")]

    def output(self, t):
        np.multiply(self.u[0], 3.0, out=self.y[0])

    def lower(self, c):
        return Lowering({"output": c.loop(c.n_out["y"], "out_y[i] = 3.0 * in_u[0];")})


def test_a_plugins_block_is_refused_even_with_a_compiled_form(monkeypatch, tmp_path, capsys):
    """Accelerated mode runs a plugin's C in this process; an export would carry code that
    is not blocksim's: refused at the block's line, naming the package."""
    monkeypatch.setattr(library, "_registered", {})
    blocksim.register_block(type("tripler", (_Tripler,), {}), name="tripler")
    diagram = tmp_path / "plugin.yaml"
    diagram.write_text("blocksim: 1\nblocks:\n  C: {type: clock}\n  Thrice: {type: tripler}\n"
                       "wires: [C -> Thrice]\nsimulation: {stop: 1}\nrecord: {y: Thrice.y}\n")
    assert main(["export", str(diagram), "--c", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert "plugin.yaml:4: error: block 'Thrice': cannot export: block type 'tripler' is a " \
           "plugin's" in err and "Traceback" not in err


def test_a_place_the_file_system_refuses_is_the_diagrams_error(tmp_path, capsys):
    """An export into a folder that cannot be made (under a plain file) ends with the
    diagram's FILE: error line and exit 2, not a traceback (was FileNotFoundError /
    NotADirectoryError from mkdir); nothing is written."""
    blocker = tmp_path / "plain"
    blocker.write_text("a file, not a folder")
    diagram = ROOT / "diagrams" / "msd.yaml"
    for target in (["--c", str(blocker / "c")], ["--fmu", str(blocker / "m.fmu")]):
        assert main(["export", str(diagram), *target]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"{diagram}: error: cannot write the export to ")
        assert "Traceback" not in err
    assert [p.name for p in tmp_path.iterdir()] == ["plain"]
