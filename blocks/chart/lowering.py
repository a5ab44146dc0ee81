"""The chart's compiled form: its tables as C tables, its actions and conditions lowered
from the same parsed text as the closures normal mode runs (`accel.expression`), and
_chart.c, the machine, which machine.py mirrors.

Its run data (blocksim/rundata.py): P_after, each transition's `after` time (0 without),
P_every, each every action's period, P_constants, the constants of the lowered
expressions (each expression's at its own offset). Its workspace: W_store, a discrete
chart's working copy of the store; W_pending, its log of the instant (a count, then state
and transition pairs); W_held, a continuous chart's outputs while its during actions run;
W_scratch, a value to assign, an index, the sides of a comparison. The expressions'
temporaries are the lowering's scratch T, each expression's at its own offset.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from blocksim.accel.expression import lower_expression
from blocksim.accel.lowering import LowerContext, Lowering

from .program import MAX_CHAIN

CHART_C = Path(__file__).with_name("_chart.c")


class ChartCode:
    """The C of one chart (`program`): `lower(c)` writes it and lays out its run data (the
    arrays `run_data()` gives, which depend on the values only, their sizes and the code
    on the structure)."""

    def __init__(self, program, discrete):
        self.program, self.spec, self.discrete = program, program.spec, discrete
        p = self.program
        self.after = np.array([t if t is not None else 0.0 for t in p.t_after], dtype=float)
        self.every = np.array([period for _, period, _ in p.every], dtype=float)
        self.constants, self.nconstants = [], 0
        self.scratch = 0  # T: the expressions' temporaries
        most = max(len(p.t_enter[k]) for k in range(len(p.t_enter))) if p.t_enter else 0
        n_out = sum(v.size for v in p.vars if v.kind == "output")
        big = max([v.size for v in p.vars] + [1])
        self.work = {  # name -> size (zeros at the start of a run)
            "store": p.size if discrete else 0,
            "pending": 1 + 2 * ((MAX_CHAIN + 2) * max(most, 1) + p.n_states) if discrete
            else 0,
            "held": 0 if discrete else n_out,
            "scratch": big + 3}
        self.index_slot = big + 2  # in W_scratch: an index's value

    @classmethod
    def laid_out(cls, program, discrete):
        """The code of `program` written once without a generated source around it (its run
        data and its text, which decide whether new values fit compiled code)."""
        code = cls(program, discrete)
        code.text = str(code.lower(LowerContext({}, {})).code)
        return code

    def run_data(self):
        """{name: values} of the declared arrays (P_after, P_every, P_constants)."""
        return {"after": self.after, "every": self.every,
                "constants": np.concatenate(self.constants) if self.constants
                else np.zeros(0)}

    def store(self):
        return "W_store" if self.discrete else "xd"

    def expression(self, text, pointers, dest):
        """C that computes expression `text` into `dest` (a C pointer), the variables that
        are not inputs at `pointers` (name -> C pointer)."""
        p = self.program
        shapes = [v.shape for v in p.vars]
        code = lower_expression(text, p.names, shapes, p.params, functions=p.functions,
                                dotted=p.dotted)
        p0, t0 = self.nconstants, self.scratch
        self.constants.append(code.constants)
        self.nconstants += code.constants.size
        self.scratch += code.scratch
        names = " ".join(f"const double *in_{n} = {ptr}; (void)in_{n};"
                         for n, ptr in pointers.items())
        temps = (f"double *T_ = T + {t0}; (void)T_;", "double *T = T_; (void)T;") \
            if code.scratch else ("", "")
        return (f"{{ const double *C_ = P_constants + {p0}; (void)C_; {temps[0]} "
                f"double *to_ = {dest}; {names}\n"
                f"{{ const double *P_constants = C_; (void)P_constants; {temps[1]} "
                f"double *out_y = to_;\n{code.code}\n}} }}")

    def pointers(self, outputs, data):
        """name -> C pointer of each output and data variable: the outputs at `outputs`
        (a function of the variable), the data at `data`."""
        return {v.name: outputs(v) if v.kind == "output" else data(v)
                for v in self.program.vars if v.kind != "input"}

    def in_store(self):
        store = self.store()
        return self.pointers(lambda v: f"{store} + {v.offset}", lambda v: f"{store} + {v.offset}")

    # -- actions ------------------------------------------------------------------------------
    def action(self, action, pointers, c):
        """C of the assignments of `action` (an id), variables at `pointers`."""
        p = self.program
        out = []
        for n, st in enumerate(p.actions[action].statements):
            var = p.vars[st.target]
            code = [self.expression(st.value_text, pointers, "W_scratch")]
            dynamic = []
            shape = var.shape
            for d, (kind, _, text) in enumerate(st.index):
                if kind == "at":
                    slot = self.index_slot
                    k = f"k{d}_"
                    code.append(self.expression(text, pointers, f"W_scratch + {slot}"))
                    n_d = shape[d]
                    code.append(
                        f"double {k}v = W_scratch[{slot}]; if (!isfinite({k}v) || {k}v != trunc({k}v)) "
                        f"{{ FAIL(\"an index must be an integer, got %g\", {k}v); return; }} "
                        f"long long {k} = (long long){k}v; if ({k} < -{n_d} || {k} >= {n_d}) "
                        f"{{ FAIL(\"index %lld is out of bounds for an axis of size {n_d}\", "
                        f"{k}); return; }} if ({k} < 0) {k} += {n_d};")
                    dynamic.append(f" + {k} * {int(np.prod(shape[d + 1:], dtype=int))}")
            full = np.arange(var.size).reshape(var.shape)
            key = tuple(what if kind == "slice" else 0 for kind, what, _ in st.index)
            region = full[key] if st.index else full
            dst = np.asarray(region).ravel()
            src = np.broadcast_to(np.arange(int(np.prod(st.shape, dtype=int))).reshape(st.shape),
                                  np.shape(region)).ravel()
            name = f"as{action}_{n}"
            dt, stab = c.table(f"{name}_d", dst), c.table(f"{name}_s", src)
            target = pointers[var.name].replace("const ", "")
            code.append(f"{{ double *to = (double *)({target}){''.join(dynamic)}; "
                        "const double *from = W_scratch; "
                        + c.loop(dst.size, f"to[{dt}[i]] = from[{stab}[i]];") + " }")
            out.append("{ " + "\n".join(code) + " }")
        return "\n".join(out)

    # -- the whole block ----------------------------------------------------------------------
    def lower(self, c):
        p, spec, k = self.program, self.spec, c.prefix
        tables = self.tables(c)
        store = self.store()
        acts = "\n".join(f"case {a}: {{ {self.action(a, self.in_store(), c)} }} break;"
                         for a in range(len(p.actions)))
        guards = "\n".join(
            f"case {g}: {{ {self.expression(text, self.in_store(), 'W_scratch')}"
            f" *truth = W_scratch[0]; }} break;"
            for g, (_, text) in enumerate(p.guards))
        names = ", ".join(f'"{s.path}"' for s in spec.states)
        macro = f"B{k[1:-1]}_NAMES"  # the block's names (codegen)
        helpers = (
            f"static void {k}act(RT *rt, double t, int which, const char *method_)\n"
            f"{{ {macro} (void)method_;\nswitch (which) {{\n{acts}\ndefault: break; }} }}\n"
            f"static void {k}guard(RT *rt, double t, int which, const char *method_, "
            f"double *truth)\n{{ {macro} (void)method_;\n"
            f"switch (which) {{\n{guards}\ndefault: break; }} }}\n"
            f"static const char *const {k}names[] = {{{names}}};\n"
            f"static const ChartTables {k}tables = {{{tables}, {k}names}};\n")
        pending = "W_pending" if self.discrete else "NULL"
        machine = (f"Chart M = {{rt, self_, method_, &{k}tables, {store}, P_after, P_every,"
                   f" {k}act, {k}guard, {pending}}};")
        states = self.write_states(c, store)
        ports = [v for v in p.vars if v.kind == "output"]
        if self.discrete:
            size = p.size
            to_ports = " ".join(f"memcpy(out_{v.name}, {store} + {v.offset}, "
                                f"sizeof(double) * {v.size});" for v in ports)
            code = {
                "output": (f"memcpy({store}, xd, sizeof(double) * {size}); W_pending[0] = "
                           f"0.0; {machine}\nchart_step(&M, t); if (rt->error) return; "
                           f"{to_ports}\n{states}"),
                "update": (f"memcpy(xd, {store}, sizeof(double) * {size}); "
                           "for (long long j = 0; j < (long long)W_pending[0]; j++) "
                           "LOG(W_pending[1 + 2 * j], W_pending[2 + 2 * j]);"
                           " W_pending[0] = 0.0;"),
                "initialize": (f"memcpy({store}, xd, sizeof(double) * {size}); {machine} "
                               f"{to_ports}\n{states}")}
        else:
            held = {}
            off = 0
            for v in ports:
                held[v.name] = off
                off += v.size
            during_ptr = self.pointers(lambda v: f"W_held + {held[v.name]}",
                                       lambda v: f"xd + {v.offset}")
            during = "\n".join(
                f"if (xd[{p.ACTIVE + s}] != 0.0) {{ {self.action(p.during[s], during_ptr, c)} }}"
                for s in range(p.n_states) if p.during[s] >= 0)
            code = {
                "output": (" ".join(f"memcpy(W_held + {held[v.name]}, xd + {v.offset}, "
                                    f"sizeof(double) * {v.size});" for v in ports)
                           + f"\n{during}\n"
                           + " ".join(f"memcpy(out_{v.name}, W_held + {held[v.name]}, "
                                      f"sizeof(double) * {v.size});" for v in ports)
                           + f"\n{{ {machine} {states} }}"),
                "indicator": self.indicators(),
                "crossing": (" ".join(f"memcpy(xd + {v.offset}, out_{v.name}, "
                                      f"sizeof(double) * {v.size});" for v in ports)
                             + f"\n{machine}\nchanged = chart_step(&M, t);"),
                "initialize": ""}
        return Lowering(code, scratch=self.scratch, support=(CHART_C,),
                        helpers=helpers, doc=f"a chart of {len(spec.states)} states")

    def write_states(self, c, store):
        p, spec = self.program, self.spec
        lines = [f"out_{spec.states[s].port}[0] = {store}[{p.ACTIVE + s}];"
                 for s in spec.active]
        leaf = c.table("leaf_index", [p.leaf_index.get(s, -1) for s in range(p.n_states)])
        regions = len(spec.tops) if spec.parallel else 1
        lines += [f"out_leaf[{r}] = chart_leaf(&M, {r}, {leaf});" for r in range(regions)]
        return " ".join(lines)

    def indicators(self):
        p = self.program
        pointers = self.pointers(lambda v: f"out_{v.name}", lambda v: f"xd + {v.offset}")
        a, b = 0, 1
        lines = []
        for k, leaf in enumerate(p.leaves):
            source = p.t_source[leaf.transition]
            lines.append(
                f"if (xd[{p.ACTIVE + source}] != 0.0) {{ "
                f"{self.expression(leaf.plus_text, pointers, f'W_scratch + {a}')}\n"
                f"{self.expression(leaf.minus_text, pointers, f'W_scratch + {b}')}\n"
                f"z[{k}] = W_scratch[{a}] - W_scratch[{b}]; }} else z[{k}] = 1.0;")
        return "\n".join(lines)

    def tables(self, c):
        """The ChartTables initialiser (without the names) of this chart."""
        p, spec = self.program, self.spec
        S = p.n_states

        def flat(lists):
            starts, items = [], []
            for row in lists:
                starts.append(len(items))
                items += row
            return starts, [len(row) for row in lists], items

        child0, nchild, children = flat(p.children)
        chain0, nchain, chain = flat([spec.default_chain(s) for s in range(S)])
        out0, nout, outgoing = flat(p.outgoing)
        enter0, nenter, enter = flat(p.t_enter)
        t = lambda name, ints: c.table(name, ints)  # noqa: E731
        return ", ".join(str(v) for v in (
            S, len(p.every), int(spec.parallel), len(p.tops), spec.initial, int(self.discrete),
            p.ACTIVE, p.ENTERED, p.COUNT, p.STARTED,
            t("tops", p.tops), t("child0", child0), t("nchild", nchild),
            t("children", children), t("chain0", chain0), t("nchain", nchain),
            t("chain", chain), t("entry", p.entry), t("exit", p.exit), t("during", p.during),
            t("out0", out0), t("nout", nout), t("outgoing", outgoing),
            t("t_source", p.t_source), t("t_target", [tr.target for tr in spec.transitions]),
            t("t_guard", p.t_guard), t("t_do", p.t_do),
            t("t_has_after", [int(a is not None) for a in p.t_after]), t("t_exit", p.t_exit),
            t("t_enter0", enter0), t("t_nenter", nenter), t("enter", enter),
            t("every_state", [s for s, _, _ in p.every]),
            t("every_action", [a for _, _, a in p.every])))
