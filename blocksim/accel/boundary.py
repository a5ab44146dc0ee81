"""What Python and the compiled runtime must agree on, written once.

Each table lists names in the order of their numbers. Python reads them by name
(`INFO.nsteps`, `STATUS.DONE`); every diagram's generated source begins with their C
`#define`s (`defines()`), which the runtime (runtime/*.c) uses by name, so no number a table
owns is written twice (tests/accel/test_boundary.py checks the runtime's C for literals).
The engine's constants that the runtime mirrors step for step (the steppers' factors, the
event iteration's rounds) come from the engine modules that own them.
"""
from __future__ import annotations

import numpy as np

from ..engine import events, history_samples, rates, simulator
from ..engine.recorder import planned_rows
from ..engine.solvers import IMPLICIT, adaptive_rk, tableaus


class Table:
    """Names numbered from `first` in order, read as attributes (`STATUS.DONE == 1`) and
    written as C's `#define PREFIX_NAME number` (with `#define COUNT n` when `count` names
    it)."""

    def __init__(self, prefix, names, first=0, count=None):
        self.prefix, self.names, self.first, self.count = prefix, tuple(names), first, count
        for k, name in enumerate(self.names):
            setattr(self, name, first + k)

    def __len__(self):
        return len(self.names)

    def c_name(self, name):
        return self.prefix + name.upper()

    def defines(self):
        lines = [f"#define {self.c_name(n)} {self.first + k}" for k, n in enumerate(self.names)]
        if self.count:
            lines.append(f"#define {self.count} {len(self.names)}")
        return lines


# the settings the compiled loop reads (rt_configure), one float row in this order
SETTINGS = Table("RT_S_", ("start", "stop", "rtol", "atol", "max_step", "step",
                           "output_interval", "event_tol", "max_consecutive_events",
                           "max_steps", "edges", "refine", "planned_rows"),
                 count="RT_NSETTINGS")
# the buffers rt_bind takes, in order: the model's signals, states, derivatives, discrete
# states, indicators, the workspace, parameters, the constants of unwired inputs, the
# initial states and the rates of watched inputs
BIND = Table("RT_B_", ("S", "X", "DX", "XD", "Z", "W", "P", "K", "X0", "XD0", "DU"),
             count="RT_NBIND")
# the buffers a block's port may lie in (the generated tables of channels name them)
VIEWS = Table("RT_BUF_", ("S", "X", "XD", "K", "DU"))
# the outcome of rt_run (RT_TIMED_OUT: a batch's run over its time limit; RT_PAUSED: an
# exported diagram's run at its caller's time, blocksim export)
STATUS = Table("RT_", ("MORE", "DONE", "FAILED", "TIMED_OUT", "PAUSED"))
# the failures rt_info reports (0: none); runner.py turns each into normal mode's exception
ERRORS = Table("RT_E_", ("NONE", "BUDGET", "STIFF", "ROUNDOFF", "FIXED_NONFINITE",
                         "NONFINITE_STATE", "NONFINITE_RECORD", "SETTLE", "ZENO", "BLOCK",
                         "MEMORY"))
# what a history's "remember" is told: a point of a step, a piece's end, the step's end, an
# event instant (Block.remember's kinds)
REMEMBER = Table("RT_REMEMBER_", ("step", "piece", "end", "event"))
# rt_info's numbers, in order
INFO = Table("RT_INFO_", ("nsteps", "nrejected", "nfev", "error", "error_t", "error_block",
                          "error_num0", "error_num1", "error_num2", "error_num3",
                          "progress_t", "last_time", "stepper_t"), count="RT_NINFO")
# the row tables rt_rows hands out: results, the sinks' own rows, the indices of result
# rows among those, events (t, hybrid block), the journal (t, block, a, b: RunHandle.log)
ROWS = Table("RT_ROWS_", ("results", "sinks", "sink_rows", "events", "journal"))
# the blocks rt_blocks marks: those of a failed event iteration, those of a Zeno chain
INVOLVED = Table("RT_INVOLVED_", ("iteration", "zeno"))
# a batch's arguments (rt_batch_setup), one row per run or one for all
BATCH = Table("RT_BATCH_", ("P", "K", "W0", "X0", "XD0", "SETTINGS", "SERIES", "CLK"),
              count="RT_NBATCH")
# rt_batch_outcomes' numbers per run
OUTCOMES = Table("RT_OUT_", ("status", "rows", "events", "nsteps", "nrejected", "nfev",
                             "wall", "cpu"), count="RT_NOUT")
# the compiled steppers: fixed-step RK, embedded RK (rk23, rk45), and Dop853's error norm
KINDS = Table("RK_KIND_", ("fixed", "embedded", "dop853"))
# every solver: its compiled stepper's kind and tableau, or "stiff" (scipy's stepper on
# compiled evaluations: the compiled loop is not used)
SOLVERS = {"euler": ("fixed", tableaus.EULER), "rk2": ("fixed", tableaus.HEUN),
           "rk4": ("fixed", tableaus.RK4), "rk23": ("embedded", tableaus.BS23),
           "rk45": ("embedded", tableaus.DP54), "dop853": ("dop853", tableaus.DOP853),
           **dict.fromkeys(IMPLICIT, ("stiff", None))}
STIFF = tuple(name for name, (kind, _) in SOLVERS.items() if kind == "stiff")
# the engine's numbers the runtime mirrors, from the modules that own them
CONSTANTS = {
    "SNAP": simulator.SNAP, "PLOT_POINTS": simulator.PLOT_POINTS,
    "MAX_ROUNDS": events.MAX_ROUNDS,
    "SAFETY": adaptive_rk.SAFETY, "MIN_FACTOR": adaptive_rk.MIN_FACTOR,
    "MAX_FACTOR": adaptive_rk.MAX_FACTOR, "STIFF_TEST_EVERY": adaptive_rk.STIFF_TEST_EVERY,
    "STIFF_STEPS": adaptive_rk.STIFF_STEPS, "NONSTIFF_STEPS": adaptive_rk.NONSTIFF_STEPS,
    "HS_MAX_HALVINGS": history_samples.MAX_HALVINGS, "HS_FLOOR": history_samples.FLOOR,
    "HS_MARGIN": history_samples.MARGIN, "RATE_POINTS": rates.SPAN_POINTS,
}
TABLES = (SETTINGS, BIND, VIEWS, STATUS, ERRORS, REMEMBER, INFO, ROWS, INVOLVED, BATCH,
          OUTCOMES, KINDS)


def defines():
    """The C `#define`s of every table and constant, for the head of a generated source."""
    lines = [line for table in TABLES for line in table.defines()]
    return lines + [f"#define {name} {value!r}" for name, value in CONSTANTS.items()]


def settings_row(s, edges=False):
    """The settings `s` (engine Settings) as the compiled loop reads them (SETTINGS);
    `edges`: the sinks get rows of their own (figures); the rows the recording is planned
    for (`recorder.planned_rows`)."""
    values = {name: getattr(s, name, None) for name in SETTINGS.names}
    values["output_interval"] = s.output_interval or 0.0
    values["edges"] = float(edges)
    values["planned_rows"] = float(planned_rows(s))
    return np.array([values[name] for name in SETTINGS.names], dtype=float)
