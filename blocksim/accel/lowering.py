"""The lowering contract: how a block type gives its compiled (C) form to accelerated mode.

A block whose behaviour is declared in the expression language (`Block.behaviour`:
blocksim/language/behaviour.py) needs none of this: its texts are lowered for it
(accel/behaviour.py), also for the methods they write when it defines `lower` for the others
(a hybrid block's handlers). A block type that compiles otherwise defines, next to its
interpreted methods:

- `lower(self, c)` -> `Lowering`: C statements for each method the simulator calls on this
  block instance (an output calc such as "output", and "derivative", "update", "event",
  "reschedule", "indicator", "crossing", "initialize", "advance", "remember" when the block
  has them). It may depend only on the block's structure (port shapes, state sizes, which
  options are set), never on a parameter's value: values reach the code through the block's
  run data, declared once (`declare`, `derive`: blocksim/rundata.py), which the code reads
  by name (`P_K[i]`, `W_seen[i]`). Changing a value (`--set`, a sweep) changes these
  numbers, not the code, so it never recompiles.
- optionally `run_data(self, start, stop)` -> {name: array} for the per-run arrays the
  lowering declares in `Lowering.data` (e.g. a random source's draws for the run's hits);
  called before compiled runs, it may also prepare files the code opens (an FMU unpacked).
- optionally "release" in `Lowering.code`: C statements run when a compiled run ends (freed
  or reset for another), e.g. to free what the block keeps in its memory slots.
- optionally `compiled_work(self, work)`: a block whose `notes()` report what it watched
  during a run keeps that in its declared workspace in compiled code; after a failed
  compiled run it gets the workspace as the run left it (`work.NAME` per declared work
  array), before its notes are asked for.
- optionally `exact_times(self)` -> [(offset, period), ...] (exact: Fractions, such as
  `block.exact_time` gives), `Lowering.series` of them: time series offset + j*period that
  the code reads rounded once (`SERIES(k, j)`), so that they land on the floats normal mode
  computes (a pulse's edges).

A `lower` that raises, or gives anything else, is a faulty compiled form: the block is named
with the method (compilable.py: `lowering_of`), as one without any; so is a block type that
still defines `pack()`, which blocksim no longer reads.

A lowering whose methods share code may define functions of its own in `Lowering.helpers`:
C at file scope, written after the block's names (the macro `B<k>_NAMES`, which a helper may
open with, as the methods do) and before its methods; their names begin with `c.prefix`.

A lowering whose statements call functions of a C source file of their own (a library of
kernels the interpreted block also runs, compiled into its extension) names the file in
`Lowering.support`: the generator writes each such file once into the diagram's source,
after the runtime's header and before the blocks, so the compiled code calls the very
functions the interpreted block calls. The file holds plain C (no Python headers) and only
`static` definitions.

The C statements are the body of one function each; they see these names (all flat arrays
of doubles, in row-major order; sizes are known when the code is generated: put them in
the code as numbers):

| name | what |
|---|---|
| `t` | the time |
| `in_<port>` | input `<port>` (const; absent for an optional input left unwired with `default=None`) |
| `out_<port>` | output `<port>` (for an output that aliases the state, a pointer into it) |
| `x`, `dx`, `xd`, `z` | the block's continuous state, its derivative, discrete state, indicators |
| `du_<port>` | the rate of change of input `<port>` for a block with `rates` (in "indicator" and "crossing": engine/rates.py computes it) |
| `P_<name>` | the block's declared parameter or derived array `<name>` (`d.param`, `d.derived`), its values in the run's P |
| `W_<name>` | the block's declared work array `<name>` (`d.work`), set to its initial values at the start of every run |
| `T` | the lowering's scratch, `Lowering.scratch` doubles (temporaries a generated form lays out itself, a function block's expression) |
| `crossed`, `changed` | in "crossing": `crossed[i]` is +1 / -1 / 0 per indicator (int8); set `changed = 1` when anything changed (the handler's return value) |
| `kind` | in "remember": `RT_REMEMBER_STEP`, `RT_REMEMBER_PIECE` (a piece's end), `RT_REMEMBER_END` or `RT_REMEMBER_EVENT` |
| `RtHistory`, `rt_hist_*` | the transport delay's History in C (runtime/rt_history.c); `rt_exact_time`, `rt_exact_sum`: block.exact_time and float(exact + exact) |
| `D_<name>`, `N_<name>` | a per-run data array declared in `Lowering.data`, and its length |
| `SCHEDULE(time)` | in "event", "reschedule", "remember", "crossing": a time event of this block at `time` (dropped in "remember" under scipy's solvers, whose simulator runs the interpreted handlers; "crossing" schedules what the block's `next_events` answers) |
| `STEP_EVENT()` | in "advance": an event instant at the end of the step (`advance` returning True) |
| `LOG(a, b)` | a row of the run's journal at the instant being handled (block.RunHandle.log) |
| `FAIL("text")` | end the run with a SimulationError naming this block |
| `GROW(slot, n)` | a pointer to growable memory slot `slot` (< `Lowering.memory`) of at least n doubles |
| `SERIES(k, j)` | time j of the block's exact series k (< `Lowering.series`): offset + j*period, rounded once |
| `rt_search_right(a, n, v)`, `rt_search_left` | numpy.searchsorted(a[:n], v, side) (NaN sorts last) |
| `rt_minimum(a, b)`, `rt_maximum`, `rt_sign(v)`, `rt_clip(v, lo, hi)` | numpy's minimum, maximum, sign and clip of one element (NaN propagates) |
| `rt_ufunc(RT_UF_<NAME>, in, out, n)` | numpy's own inner loop of an elementary function over n doubles (`blocksim/accel/ufuncs.py`) |
| `rt_ufunc1(RT_UF_<NAME>, in, si, out, so, n)`, `rt_ufunc2(RT_UF_<NAME>, a, sa, b, sb, out, so, n)` | the same with element strides (0 repeats an element, as numpy passes for a broadcast operand), for one and two arguments (power, arctan2, hypot, remainder, fmod) |
| `rt_matmul_ex(A, a_m, a_n, B, b_n, b_p, m, n, p, out)` | numpy.matmul of A (m, n) and B (n, p) given by their element strides (a transposed operand: strides swapped), numpy's BLAS call (syrk for A @ A.T) |
| `rt_solve(A, n, B, nrhs, X)`, `rt_inv(A, n, X)` | numpy.linalg.solve and inv (numpy's dgesv); 0, or > 0 for a singular A |
| `rt_pinv(A, m, n, X, &cond)`, `rt_lstsq(A, m, n, b, x)` | numpy.linalg.pinv (and the 2-norm condition number) and lstsq(A, b)[0] (numpy's dgesdd, dgelsd); 0, or > 0 when the SVD failed. A lowering calling these four calls `needs_lapack()`, and `fits_stack(n, what)` with about 8 times the matrix's size (their copies live on the stack) |

`c`, the `LowerContext`, gives the sizes and shapes of the block's ports and states and small
helpers: `c.loop(n, body)` writes a loop over `i`, `c.elem(port, out)` the element of a
broadcast input at the flat index `i` of an output. Arithmetic must mirror the interpreted
method operation by operation (the both-modes test compares the results to 1e-12): write
`a * b + c` where numpy computes `np.multiply(a, b); += c`, keep numpy's order of sums, and
call numpy's own loops (`rt_ufunc`, `rt_matmul`) where numpy's results are not the C library's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


def double_table(name, values):
    """A C table `name` of `values` (flattened; one 0.0 when empty), each read back exactly."""
    values = np.asarray(values, dtype=float).ravel()
    return (f"static const double {name}[{max(values.size, 1)}] = "
            f"{{{', '.join(c_double(v) for v in values) or '0.0'}}};")


def c_double(v):
    """A double as C reads it back exactly (repr; math.h's INFINITY and NAN)."""
    v = float(v)
    if math.isfinite(v):
        return repr(v)
    return "NAN" if math.isnan(v) else ("INFINITY" if v > 0 else "-INFINITY")


class LoweringError(Exception):
    """A block's lowering is missing something the simulator needs (a bug in the lowering)."""


@dataclass
class Lowering:
    """A block's compiled form: C statements per method, and what they use besides ports
    and the block's declared run data."""
    code: dict  # method or output calc -> C statements
    data: tuple = ()  # names of per-run data arrays (values from block.run_data)
    scratch: int = 0  # doubles of scratch the code uses as `T` (zeros at the start)
    memory: int = 0  # growable memory slots (histories)
    series: int = 0  # exact time series (block.exact_times())
    support: tuple = ()  # paths of C source files the code calls into (written in once)
    helpers: str = ""  # C functions of this block at file scope (see below)
    doc: str = ""  # a one-line comment put above the block's functions
    # what the code needs of this process besides its C (a library opened from a file at
    # run time): blocksim export refuses the block, saying so; "" when it needs nothing
    hosted: str = ""


@dataclass
class LowerContext:
    """What a lowering needs to know about its block's instance: the sizes and shapes of its
    ports (`n_in`, `n_out`, `shape_in`, `shape_out`; unwired optional inputs without a
    default are absent from `n_in`) and of its states (`nx`, `nxd`, `nz`)."""
    shape_in: dict
    shape_out: dict
    nx: int = 0
    nxd: int = 0
    nz: int = 0
    tables: list = field(default_factory=list)  # (name, ints) index tables for broadcasting
    prefix: str = ""

    @property
    def n_in(self):
        return {k: math.prod(s) for k, s in self.shape_in.items()}

    @property
    def n_out(self):
        return {k: math.prod(s) for k, s in self.shape_out.items()}

    @staticmethod
    def loop(n, body, var="i"):
        """`for (int i = 0; i < n; i++) { body }` (nothing when n is 0)."""
        if n == 0:
            return ""
        return f"for (int {var} = 0; {var} < {n}; {var}++) {{ {body} }}"

    def elem(self, port, out="y", var="i"):
        """The element of input `port` that numpy broadcasting pairs with element `var`
        (flat, row-major) of output `out`: `in_u[i]`, `in_u[0]` for a scalar, else an
        index table."""
        return f"in_{port}[{self.index(port, out, var)}]"

    def index(self, port, out="y", var="i"):
        """The flat index in input `port` of `elem(port, out, var)` (`i`, `0`, or a table's
        entry), for arrays laid out as the input (a state per input element)."""
        shape, target = tuple(self.shape_in[port]), tuple(self.shape_out[out])
        size = math.prod(shape)
        if shape == target:
            return var
        if size == 1:
            return "0"
        index = np.broadcast_to(np.arange(size).reshape(shape), target).ravel()
        return f"{self.table(f'idx_{port}_{out}', index)}[{var}]"

    def table(self, name, ints):
        """The C name of a constant int table of this block (written once, before its
        functions): for indices that are structure, not values."""
        name = self.prefix + name
        if all(name != known for known, _ in self.tables):
            self.tables.append((name, np.asarray(ints)))
        return name


STACK_DOUBLES = 1 << 17  # what one compiled function may keep on its stack: 1 MB (of 8)


def fits_stack(doubles, what):
    """For a lowering whose C keeps work copies sized by the data on the stack: LoweringError
    (no compiled form: normal mode runs the block) when they hold more than STACK_DOUBLES
    numbers, where a larger stack would crash the process."""
    if doubles > STACK_DOUBLES:
        raise LoweringError(f"needs {doubles:,} numbers of work space for {what}, more than "
                            f"compiled code keeps on its stack ({STACK_DOUBLES:,})")


def needs_lapack():
    """For a lowering that calls numpy.linalg's functions (rt_solve, rt_inv, rt_pinv,
    rt_lstsq): LoweringError (no compiled form: normal mode runs the block) when numpy's
    library does not expose the LAPACK routines they call."""
    from .blas import numpy_lapack
    if numpy_lapack() is None:
        raise LoweringError("needs numpy's LAPACK (dgesv, dgesdd, dgelsd, dgetrf), which this "
                            "numpy does not expose")


def computes_nothing(block, c):
    """The lowering of a block that computes nothing (a sink: the runtime records its
    inputs, as the simulator does); use it as `lower = computes_nothing`."""
    return Lowering({})
