"""The compiled form of enabled and triggered subsystems: their block's methods
(engine/conditional.py, statement for statement) and the gates of the plans (codegen.py).

The block is the engine's, not the library's, and its C needs what only the model knows: the
range of states inside the subsystem (reset on enabling, derivatives zeroed on disabling)
and, for a triggered subsystem, the functions of the blocks it runs (compiler/conditions.py's
run_entries, written as calls of the blocks' functions, which come before its own).
"""
from __future__ import annotations

from ..engine.compiler.conditions import run_entries, state_ranges
from ..engine.conditional import EnabledSubsystem
from .lowering import Lowering


def gate_text(flags):
    """C true while the flags (indices into the discrete state) are all > 0."""
    return " && ".join(f"rt->XD[{i}] > 0.0" for i in flags)


def when(flags, statement):
    """`statement` run only while the flags are all > 0 (gate_text)."""
    return f"if ({gate_text(flags)}) {statement}" if flags else statement


def lower_conditional(model, block, c, index):
    """The Lowering of a conditional subsystem's block; `index`: block name -> its number."""
    (a, b), (d0, d1) = state_ranges(model, block.name)
    outputs = block.p.outputs
    reset, offset = [], 0  # the outputs set to their initial values, P_initial[...]
    for port in outputs:
        n = c.n_out[port]
        reset.append(c.loop(n, f"out_{port}[i] = P_initial[{offset} + i];"))
        offset += n
    reset = " ".join(reset)
    copy = " ".join(c.loop(c.n_out[p], f"out_{p}[i] = in_{p}[i];") for p in outputs)
    k = index[block.name]
    if isinstance(block, EnabledSubsystem):
        states = (_copy("X", a, b) + _copy("XD", d0, d1)
                  if block.p.states_when_enabling == "reset" else "")
        held = f"memset(rt->DX + {a}, 0, sizeof(double) * {b - a}); " if b > a else ""
        outputs_reset = "1" if block.p.outputs_when_disabled == "reset" else "first"
        return Lowering({
            "decide": ("double on = in_enable[0] > 0.0 ? 1.0 : 0.0; "
                       "if (on != xd[0]) { int first = xd[0] == -1.0; (void)first; "
                       + (f"if (on != 0.0 && !first) {{ {states}}} " if states else "")
                       + f"if (on == 0.0) {{ {held}if ({outputs_reset}) {{ {reset} }} }} "
                       "xd[0] = on; } out_enable[0] = on;"),
            "output": copy,
            "indicator": "z[0] = in_enable[0];",
            "crossing": (f"b{k}_decide(rt, t); changed = xd[0] != xd[1]; xd[1] = xd[0];")},
            doc="an enabled subsystem")
    run = [when(flags, _call(what, owned, index)) for what, owned, flags
           in run_entries(model, block.name)]
    d = block.direction
    fired = f"(({d} >= 0 && before <= 0.0 && now > 0.0) || ({d} <= 0 && before >= 0.0 && now < 0.0))"
    if block.p.enable:
        fired += " && in_enable[0] > 0.0"
    return Lowering({
        "run": " ".join(run) + f" {copy} xd[1] += 1.0; xd[2] = 1.0;",
        "edge": f"double before = xd[0], now = in_trigger[0]; "
                f"if (t == xd[3]) {{ xd[0] = now; return; }} xd[0] = now; "
                f"if ({fired}) b{k}_run(rt, t);",
        "output": (f"if (isnan(xd[0])) {{ xd[3] = t; {reset} }} "
                   f"b{k}_edge(rt, t); out_trigger[0] = xd[1];"),
        "advance": "xd[0] = in_trigger[0];",
        "indicator": "z[0] = in_trigger[0];",
        "crossing": (f"b{k}_edge(rt, t); out_trigger[0] = xd[1]; "
                     "changed = xd[2] != 0.0; xd[2] = 0.0;")},
        doc="a triggered subsystem")


def _copy(buffer, start, stop):
    """C setting the states [start, stop) of `buffer` (X, XD) to their initial values."""
    if stop == start:
        return ""
    return (f"memcpy(rt->{buffer} + {start}, rt->{buffer}0 + {start}, "
            f"sizeof(double) * {stop - start}); ")


def _call(what, block, index):
    """C calling one entry of a triggered subsystem's run."""
    j = index[block.name]
    if what == "modes":
        return (f"{{ static const signed char none[{block.z.size}] = {{0}}; "
                f"b{j}_crossing(rt, t, none); }}")
    return f"b{j}_{what}(rt, t);"
