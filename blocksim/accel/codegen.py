"""Model -> C source: one function per block method, the diagram's plans, the solver's tableau.

The compiled Model already holds the schedule (nodes in dataflow order, grouped constant /
discrete / continuous), the buffers and every view. `generate(model)` asks every block for
its lowering (`lowering.py`), finds each view's place in the buffers, and writes readable
C: a comment naming each block above its functions, then the plans the simulator runs
(`dg_cont`: the continuous outputs, `dg_deriv`, `dg_hit`: the outputs at a sample hit,
`dg_update`, `dg_indicators`, `dg_crossing`, ...), then the runtime (runtime/*.c) included
after them. The source holds only structure, and so do the numbers that come with it (the
constants of unwired inputs, the workspace's initial values); a run's values (parameters,
initial states, settings, series of exact sample times, time events, data arrays) are the
model's Context's (arguments.py), so that a `--set` or a sweep reuses the compiled code.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..block import Sample, overrides
from ..engine import history_samples, rates
from ..engine.solvers import tableaus
from . import boundary, ufuncs
from .compilable import lowerings
from .conditional import gate_text, when
from .lowering import LoweringError, double_table

RUNTIME = Path(__file__).parent / "runtime"
RUNTIME_FILES = ("rt.h", "rt_exact.c", "rt_blas.c", "rt_ufunc.c", "rt_linalg.c", "rt_history.c",
                 "rt_expr.c", "rt_stepper.c", "rt_loop.c", "rt_api.c", "rt_batch.c")
HELPERS = 7  # the runtime files before the blocks' functions (the rest come after)



@dataclass
class Generated:
    """The source of a diagram, the numbers that come with it (`constants`: the defaults of
    unwired inputs, K; `work`: the workspace's initial values, W0) and what binding a run
    and reading its results needs."""
    source: str
    constants: np.ndarray
    work: np.ndarray
    record: list  # (name, shape) of the result channels (record entries, then sinks' inputs)
    sink_channels: list  # (block name, [shapes]) of the sinks' inputs
    hybrid_names: list = field(default_factory=list)
    offsets: dict = field(default_factory=dict)  # block -> its Places
    contexts: dict = field(default_factory=dict)  # block -> its LowerContext
    data_names: dict = field(default_factory=dict)  # block -> names of its data arrays
    series_counts: dict = field(default_factory=dict)  # block -> its exact series


class _Locator:
    """Where each view lies: (buffer, offset) in the model's signals, xbuf, xdbuf, or the
    constants collected from unwired inputs' defaults."""

    def __init__(self, model):
        # (name, first address, end address) of each buffer
        self.bases = [(name, buf.__array_interface__["data"][0],
                       buf.__array_interface__["data"][0] + buf.nbytes)
                      for name, buf in (("S", model.signals), ("X", model.xbuf),
                                        ("XD", model.xdbuf), ("DU", model.dubuf))]
        self.constants = []
        self.nconst = 0

    def __call__(self, view):
        view = np.asarray(view)
        if view.dtype != np.float64 or not view.flags.c_contiguous:
            raise LoweringError("has a port that is not a contiguous float array")
        if view.size == 0:
            return "S", 0
        addr = view.__array_interface__["data"][0]
        for name, start, end in self.bases:
            if start <= addr < end:
                return name, (addr - start) // 8
        offset = self.nconst  # an unwired input's default: a constant of the run
        self.constants.append(view.ravel())
        self.nconst += view.size
        return "K", offset


def generate(model, lows=None):
    """The C source of `model` and its run-time values, from its blocks' lowerings `lows`
    (compilable.lowerings: NotCompilable if a block lacks a compiled form)."""
    return _Writer(model, lowerings(model) if lows is None else lows).write()


class _Writer:
    def __init__(self, model, lows):
        self.m, self.lows = model, lows
        self.locate = _Locator(model)
        self.lines = []
        self.index = {b.name: k for k, b in enumerate(model.blocks)}
        self.z0 = {b.name: sl.start for b, sl in model.hybrid}  # first indicator of a block

    def emit(self, *lines):
        self.lines.extend(lines)

    # -- the whole file -----------------------------------------------------------------------
    def write(self):
        m = self.m
        work, self.offsets = [], {}
        nw, nd, nmem = 0, 0, 0
        for block in m.blocks:
            low, _ = self.lows[block.name]
            slots = m.slots.get(block.name)
            w = _joined([initial for _, initial in slots.data.work_arrays] if slots else [])
            self.offsets[block.name] = Places(slots.p0 if slots else 0, nw, nd, nmem,
                                              nw + w.size)
            work += [w, np.zeros(low.scratch)]
            nw, nd, nmem = nw + w.size + low.scratch, nd + len(low.data), nmem + low.memory
        clocks = [b for b in m.blocks if isinstance(b.sample, Sample)]
        self.series0, k = {}, len(clocks)
        for block in m.blocks:  # each block's first row of the exact series, after the clocks'
            self.series0[block.name] = k
            k += self.lows[block.name][0].series
        self.prelude(nd, nmem, clocks, k)
        self.support()
        for block in m.blocks:
            self.block(block)
        self.plans(clocks)
        self.emit(*(f'#include "{name}"' for name in RUNTIME_FILES[HELPERS:]))
        return Generated("\n".join(self.lines) + "\n", _joined(self.locate.constants),
                         _joined(work), self.record_shapes, self.sink_shapes,
                         [b.name for b, _ in m.hybrid], self.offsets,
                         {name: ctx for name, (_, ctx) in self.lows.items()},
                         {name: low.data for name, (low, _) in self.lows.items()},
                         {name: low.series for name, (low, _) in self.lows.items()})

    def prelude(self, nd, nmem, clocks, nseries):
        m, s = self.m, self.m.settings
        self.emit(f"/* {_comment(m.name)}: compiled by blocksim (accelerated mode).",
                  f"   Blocks: {len(m.blocks)}, solver {s.solver}. Generated: edit the diagram, "
                  "not this file. */", "")
        sizes = {"NS": m.signals.size, "NX": m.xbuf.size, "NXD": m.xdbuf.size,
                 "NZ": m.zbuf.size, "NH": len(m.hybrid), "NCLK": len(clocks),
                 "NSER": nseries, "NDATA": nd, "NMEM": nmem,
                 "HISTORY": int(any(b.keeps_history for b in m.blocks)),
                 "HIST_WIDTH": sum(u.size for u in self.history_inputs()),
                 "NRATE": len(m.rates), "RATE_WIDTH": sum(v.size for v, _ in m.rates),
                 "NDU": m.dubuf.size,
                 "ADVANCE": int(any(hasattr(b, "advance") for b, _ in m.hybrid))}
        self.emit(*(f"#define {k} {v}" for k, v in sizes.items()))
        self.emit(*boundary.defines())
        self.tableau(s.solver)
        self.emit(*ufuncs.c_defines())
        self.emit(*(f'#include "{name}"' for name in RUNTIME_FILES[:HELPERS]), "")
        self.emit(_int_table("ZDIR", m.zdirs.tolist()))
        self.emit(_int_table("CLK_SERIES", list(range(len(clocks)))))
        self.channels()
        self.rates()
        self.table("HIST", self.history_inputs())

    def support(self):
        """The C files the blocks' lowerings call into (Lowering.support), each once, in
        the order the blocks first name them."""
        paths = dict.fromkeys(Path(p).resolve() for b in self.m.blocks
                              for p in self.lows[b.name][0].support)
        for path in paths:
            self.emit(f"/* ---- {_comment(path.name)}, used by the blocks below ---- */",
                      _support_text(path), "")

    def tableau(self, solver):
        kind, T = boundary.SOLVERS[solver]
        if kind == "stiff":  # scipy's stepper: the compiled loop is not used
            kind, T = "fixed", tableaus.EULER
        m = len(T.c)
        self.emit(f"/* the tableau of {solver} (blocksim/engine/solvers/tableaus.py) */",
                  f"#define RK_KIND {boundary.KINDS.c_name(kind)}", f"#define RK_M {m}",
                  f"#define RK_S {T.stages}", f"#define RK_ND {0 if T.D is None else len(T.D)}")
        self.emit(double_table("RK_C", T.c), double_table("RK_A", np.asarray(T.A)[:m, :m]))
        # where histories sample a step (engine/history_samples.py): the dense output's degree
        k = 3 if kind == "fixed" or T.D is None else 3 + len(T.D)
        self.emit(f"#define HS_K {k}", double_table("HS_W", history_samples.midpoint_weights(k)))
        if kind == "fixed":
            self.emit(double_table("RK_B", T.b))
            return
        i, j, bound = T.stiffness
        self.emit(f"#define RK_ERROR_ORDER {T.error_order}", f"#define RK_STIFF_I {i}",
                  f"#define RK_STIFF_J {j}", f"#define RK_STIFF_BOUND {bound!r}",
                  double_table("RK_E", T.e),
                  double_table("RK_E3", tableaus.DOP853_E3 if kind == "dop853" else np.zeros(1)),
                  double_table("RK_D", np.zeros(1) if T.D is None else T.D))

    def channels(self):
        """The recorded channels as {buffer, offset, size} tables: the results' rows (the
        `record:` signals, then the sinks' inputs unless the sinks have rows of their own),
        the sinks' own rows, the stop blocks' inputs."""
        m = self.m
        rec = [(name, view) for name, (view, _) in m.record.items()]
        sink_views = [(f"{b.name}.{i}", v) for b, views in m.sinks for i, v in enumerate(views)]
        self.record_shapes = [(n, tuple(v.shape)) for n, v in rec + sink_views]
        self.sink_shapes = [(b.name, [tuple(v.shape) for v in views]) for b, views in m.sinks]
        # without figures the results' rows hold the sinks' inputs (the first NREC_OWN
        # channels are the record's); with them (`edges`) the sinks have rows of their own
        self.table("REC", [v for _, v in rec + sink_views])
        self.table("SINK", [v for _, v in sink_views])
        self.table("STOP", list(m.stops))
        self.emit(f"#define NREC_OWN {len(rec)}",
                  f"#define REC_WIDTH_OWN {sum(v.size for _, v in rec)}")

    def rates(self):
        """The inputs hybrid blocks watch (engine/rates.py): where each input and its du
        lie, the weights of the central difference, which indicators read rates."""
        m = self.m
        rows = []
        for view, du in m.rates:
            (buf, off), (_, du_off) = self.locate(view), self.locate(du)
            rows.append(f"{{RT_BUF_{buf}, {off}, {view.size}, {du_off}}}")
        self.emit(f"static const int RATE_CHANNELS[DIM(NRATE)][4] = "
                  f"{{{', '.join(rows) or '{0, 0, 0, 0}'}}};",
                  double_table("RATE_W", rates.WEIGHTS))
        watching = np.zeros(m.zbuf.size, int)
        for block, sl in m.hybrid:
            watching[sl] = bool(block.rates)
        self.emit(_int_table("RATE_Z", watching))

    def history_inputs(self):
        """The inputs of the blocks that keep a history, in the order the simulator
        concatenates them (Simulation.remember)."""
        return [u for b in self.m.blocks if b.keeps_history for u in b.u if u is not None]

    def table(self, name, views):
        rows = []
        for v in views:
            buf, off = self.locate(v)
            rows.append(f"{{RT_BUF_{buf}, {off}, {v.size}}}")
        self.emit(f"#define N{name} {len(views)}",
                  f"static const int {name}_CHANNELS[DIM(N{name})][3] = "
                  f"{{{', '.join(rows) or '{0, 0, 0}'}}};",
                  f"#define {name}_WIDTH {sum(v.size for v in views)}")

    # -- one block --------------------------------------------------------------------------
    def block(self, block):
        m, k = self.m, self.index[block.name]
        low, ctx = self.lows[block.name]
        places = self.offsets[block.name]
        d0 = places.d0
        cs, ds = m.state_slices[block.name]
        ins, outs = m.ports[block.name]
        names = []
        for port, view in zip(ins, block.u):
            if view is not None:
                buf, off = self.locate(view)
                names.append(f"const double *in_{port} = rt->{buf} + {off};")
        for port, view in zip(outs, block.y):
            buf, off = self.locate(view)
            names.append(f"double *out_{port} = rt->{buf} + {off};")
        for port, du in zip(block.rates, block.du or ()):
            names.append(f"const double *du_{port} = rt->DU + {self.locate(du)[1]};")
        z0 = self.z0.get(block.name, 0)
        own = [("double *", "x", f"rt->X + {cs.start}"),
               ("double *", "dx", f"rt->DX + {cs.start}"),
               ("double *", "xd", f"rt->XD + {ds.start}"), ("double *", "z", f"rt->Z + {z0}"),
               *accessors(m.slots.get(block.name), places, low),
               ("const int ", "self_", k), ("const int ", "mem0_", places.mem0),
               ("const int ", "ser0_", self.series0[block.name])]
        names += [f"{kind}{name} = {value};" for kind, name, value in own]
        names += [f"const double *D_{n} = rt->data[{d0 + i}]; "
                  f"long long N_{n} = rt->ndata[{d0 + i}];"
                  for i, n in enumerate(low.data)]
        doc = f": {low.doc}" if low.doc else ""
        self.emit("", f"/* ---- block {k}: {_comment(block.name)} ({block.type}){_comment(doc)} */")
        for name, ints in ctx.tables:
            self.emit(_int_table(name, ints))
        unused = " ".join(f"(void){name};" for _, name, _ in own)
        self.emit(f"#define B{k}_NAMES {' '.join(names)} {unused}")
        if low.helpers:
            self.emit(low.helpers)
        for method, code in low.code.items():
            head, tail = "void", ""
            args = "RT *rt, double t"
            if method == "crossing":
                head, args = "int", args + ", const signed char *crossed"
                tail = " return changed;"
                code = "int changed = 0; " + code
            elif method == "remember":
                args += ", int kind"
            self.emit(f"static inline {head} b{k}_{method}({args})",
                      f'{{ B{k}_NAMES const char *method_ = "{method}"; (void)method_;',
                      *_indented(code), f"{tail} }}")

    # -- the plans ----------------------------------------------------------------------------
    def plans(self, clocks):
        m, k = self.m, self.index
        clock_of = {b.name: i for i, b in enumerate(clocks)}
        # a node that inherits a sample time is due with the first clock of that sample
        clock_of_sample = {}
        for i, b in enumerate(clocks):
            clock_of_sample.setdefault(b.sample, i)
        # the blocks of conditional subsystems run while their gates are open; a triggered
        # subsystem runs its own (their nodes are "triggered", in no plan: conditional.py)
        call = lambda node: when(node.gate, f"b{k[node.block.name]}_{node.calc}(rt, t);")  # noqa: E731
        flags = {b.name: _block_flags(m, b) for b in m.blocks}
        method = lambda b, f: when(flags[b.name], f"b{k[b.name]}_{f}(rt, t);")  # noqa: E731
        const = [call(n) for n in m.nodes if n.group == "constant"]
        cont = [call(n) for n in m.nodes if n.group == "continuous"]
        hit = [call(n) if n.group != "discrete" else
               f"if (due[{clock_of_sample[n.sample]}]) {call(n)}"
               for n in m.nodes if n.group in ("continuous", "discrete", "event")]
        deriv = [method(b, "derivative") for b in m.blocks
                 if overrides(b, "derivative") and flags[b.name] is not None
                 and m.state_slices[b.name][0].stop > m.state_slices[b.name][0].start]
        update = [f"if (due[{clock_of[b.name]}]) {method(b, 'update')}" for b in clocks]
        init = [f"b{k[b.name]}_initialize(rt, t);" for b in m.blocks
                if overrides(b, "initialize")]
        ind = [method(b, "indicator") for b, _ in m.hybrid if flags[b.name] is not None]
        cross = []
        for h, (b, sl) in enumerate(m.hybrid):
            handler = f"b{k[b.name]}_crossing(rt, t, crossed + {sl.start})"
            if flags[b.name]:
                handler = f"({gate_text(flags[b.name])} ? {handler} : 0)"
            if flags[b.name] is not None:
                cross.append(f"changed[{h}] = (char){handler};")
        advance = [method(b, "advance") for b, _ in m.hybrid
                   if hasattr(b, "advance") and flags[b.name] is not None]
        events = []
        for b in m.blocks:
            code = self.lows[b.name][0].code
            if "event" in code or "reschedule" in code:
                calls = " ".join(f"b{k[b.name]}_{f}(rt, t);" for f in ("event", "reschedule")
                                 if f in code)
                events.append(f"case {k[b.name]}: {calls} break;")
        remember = [f"b{k[b.name]}_remember(rt, t, kind);" for b in m.blocks if b.keeps_history]
        release = [f"b{k[b.name]}_release(rt, 0.0);" for b in m.blocks
                   if "release" in self.lows[b.name][0].code]
        self.emit("", "/* ---- the plans the simulator runs (Simulation's) ---- */")
        self.function("dg_const", "double t", const, "the constant outputs, once")
        self.function("dg_cont", "double t", cont, "outputs of every evaluation, dataflow order")
        self.function("dg_deriv", "double t", deriv, "the derivatives")
        self.function("dg_hit", "double t, const char *due", hit,
                      "outputs at an event instant: continuous, due discrete, event nodes")
        self.function("dg_update", "double t, const char *due", update, "discrete updates")
        self.function("dg_initialize", "double t", init, "initial states from inputs")
        self.function("dg_indicators", "double t", ind, "zero-crossing indicators")
        self.function("dg_crossing", "double t, const signed char *crossed, char *changed",
                      cross, "the event handlers, dataflow order")
        self.function("dg_advance", "double t", advance, "after an accepted step")
        self.function("dg_event", "int block, double t",
                      ["switch (block) {", *events, "default: break;", "}"] if events else [],
                      "a time event of a block")
        self.function("dg_remember", "double t, int kind", remember, "histories of inputs")
        self.function("dg_release", "int unused", release, "what blocks keep, at a run's end")

    def function(self, name, args, body, doc):
        self.emit(f"/* {doc} */", f"static void {name}(RT *rt, {args})", "{",
                  "    (void)rt;", *("    " + line for line in body), "}")


class Places(NamedTuple):
    """Where a block's numbers lie: its parameters in P, workspace in W, data arrays,
    memory slots and its lowering's scratch in W."""
    p0: int
    w0: int
    d0: int
    mem0: int
    t0: int


def accessors(slots, places, low):
    """The C names of a block's run data, (type, name, value): `P_NAME` per declared array
    and `W_NAME` per work array, and `T` for its lowering's scratch."""
    names = []
    if slots is not None:
        k = places.p0
        for a in slots.data.arrays:
            names.append(("const double *", f"P_{a.name}", f"rt->P + {k}"))
            k += a.size
        k = places.w0
        for name, initial in slots.data.work_arrays:
            names.append(("double *", f"W_{name}", f"rt->W + {k}"))
            k += initial.size
    if low.scratch:
        names.append(("double *", "T", f"rt->W + {places.t0}"))
    return names
def _block_flags(model, block):
    """The flags a block's own methods are gated by (compiler/conditions.py), or None for a
    block a triggered subsystem runs."""
    gate = model.gates.get(block.name)
    if gate is None:
        return ()
    return None if gate.owner is not None else gate.flags


@functools.lru_cache(maxsize=None)
def _support_text(path):
    return path.read_text()


def _joined(parts):
    parts = [np.asarray(p, dtype=float).ravel() for p in parts]
    return np.ascontiguousarray(np.concatenate(parts)) if parts else np.zeros(0)


def _int_table(name, values):
    values = [int(v) for v in np.asarray(values).ravel()]
    items = ", ".join(map(str, values)) or "0"
    return f"static const int {name}[{max(len(values), 1)}] = {{{items}}};"


def _comment(text):
    return str(text).replace("*/", "* /").replace("\n", " ")


def _indented(code):
    return ["    " + line for line in code.strip().splitlines()] if code.strip() else []
