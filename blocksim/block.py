"""The block contract: what a block declares and the functions the simulator calls.

A block type is a subclass of `Block` with a `type` name, a docstring (its equation, shown by
`blocksim blocks TYPE`) and a tuple of `Param`s. An instance is built once per compiled
diagram with validated parameters in `self.p`. The compiler then asks it, in this order:

1. `ports()` -> (inputs, outputs): `In` / `Out` declarations. Shapes may depend on
   parameters; `shape=None` means "inferred". Each output declares its *feedthrough*, the
   inputs its value depends on at the same instant (per output port, not per block), and the
   method (`calc`) that computes it. An output may alias the block's state (`state=` /
   `dstate=`), which makes it free to evaluate and never part of an algebraic loop.
2. `infer(shapes)` -> shapes of the outputs declared with `shape=None`, given every input's
   shape; raise `PortError` for an input shape the block cannot take (or `ParamError` for
   a parameter that does not fit the inputs). A block with an initial value also answers
   `initial_shapes()`: the output shapes its x0 implies, used when a loop through the block
   has no other source of shape.
3. `continuous_state()` / `discrete_state()` -> flat initial values (or None), after shapes.
4. `bind(u, y, x, dx, xd)` gives the block numpy views: `u` a tuple of input views in port
   order (each is its driver's output view, no copy), `y` the output views, `x`/`dx` its
   slice of the continuous state and derivative, `xd` its discrete state. The outputs that
   are computed (not state aliases) lie consecutively, in port order, in one flat view
   `self.y_flat`, set before `bind`: a block whose outputs come out of one computation can
   write them all at once. Views never change afterwards, so the hot-path methods below take
   only the time.

Hot-path methods (no validation, no allocation that can be avoided, no dict lookups):
`output(t)` (or the method named by an output's `calc`) writes `y`; `derivative(t)` writes
`dx`; `update(t)` changes `xd` at the block's sample hits; `event(t)` switches a mode kept in
`xd` at the times `events()` announced (a source discontinuity the solver lands on).
Blocks keep no other simulation state in attributes: outputs are functions of (t, u, x, xd).
A block may pick its computing method per instance by assigning it in `__init__` or `infer`
(e.g. `self.output = self._matmul`): the methods are looked up once, after those calls
and after `bind` (which makes the methods of a declared `behaviour`, on the views it binds).

Zero crossings (hybrid blocks: saturation, relay, limited integrator, ...). Between events a
block's outputs and derivatives are smooth functions computed in a *mode* frozen in its
discrete state `xd` (a saturation in its upper mode outputs `upper`), so no solver step ever
contains a kink. The block declares scalar indicator functions whose zeros are the instants
where the mode must be re-examined:

- `zero_crossings()` -> one direction per indicator (RISING: - to +, FALLING: + to -, EITHER),
  asked after the shapes are known; the compiler then sets `self.z`, the block's view of the
  indicator buffer, before `bind`.
- `indicator(t)` writes `self.z` from (t, u, x, xd). The engine evaluates it after every
  accepted step; when an indicator changed sign in its direction (rising: z_prev <= 0 < z,
  falling: z_prev >= 0 > z), it locates the earliest crossing on the solver's dense output,
  cuts the step there and handles the event. An indicator that means nothing in the current
  mode may be written as a constant 1.0.
- `crossing(t, crossed)` is the event handler, called at every event instant (a located
  crossing, a time event, a sample hit, the start) for every block with indicators, in
  dataflow order. `crossed` (int8, one per indicator) is +1 / -1 where that indicator crossed
  rising / falling along the solution (a located crossing: it went through 0), +2 / -2 where
  it jumped across 0 at this instant (a source switch, a sample hit, another handler's
  change), 0 elsewhere. The block re-derives its modes from
  its inputs and state (using `crossed` to break ties at a threshold), performs edge-triggered
  actions (a reset, a count) only on `crossed`, and may write its state `x`. It returns True
  when it changed anything: the engine then recomputes the outputs, re-evaluates the
  indicators and calls the handlers again with the crossings the event itself caused (event
  iteration), before recording the values after the event (right-continuous).

A hybrid block whose modes depend on the history of its input (a hit crossing: the side
of the offset its input is on) may also define `advance(t)`, called after every accepted step
(without a crossing) to update its discrete state; the indicators are evaluated again
afterwards. `advance` returning True asks for an event instant at the step's end (a step
event: an FMU's completedIntegratorStep), where the handlers run as at any event.
A hybrid block whose time events become known only during the run (an FMU's nextEventTime)
defines `next_events(t)`: asked after the event iteration at every event instant (the
start included), it returns times (> t) the solver must land on; the block's `crossing`
runs there as at every event instant.

Rates of inputs: a hybrid block whose mode changes where an input turns (backlash: its input
reaches an extremum) names those inputs in `rates`; the compiler gives it `self.du`, one
array per named input (of its shape), which holds the input's derivative in time whenever
`indicator` or `crossing` is called: inside a step from the solver's dense output, at an
event instant the right derivative in the modes after the event (engine/rates.py). An
indicator written from `du` locates the extremum to the event tolerance. `du` is not valid in
`output` or `derivative`.

Time events: `events(start, stop)` lists times the solver lands on, where `event(t)` is called
(a source switch); `reschedule(t)`, called right after `event(t)`, may add further times (a
pulse train announces its next edge).

Linearisation (optional, `blocksim linearize` and `trim`): `jacobian(pade)` returns the
block's exact `Jacobian` at its current inputs, states and modes (see that class), or None,
the default: the block's own methods are then differenced (central differences).
`mode_text()` says in a few words which mode a hybrid block is in ('upper (gain 0)').

The run's journal (`uses_run = True`, a chart): the simulator gives such a block `self.run`,
a `RunHandle`, for each run: `self.run.log(a, b)` notes two integers at the instant being
handled (a state chart: the state entered and the
transition that entered it; `journal_names()` names them), which the run returns as its
journal (`chart_t`, `chart_state`, `chart_transition` in results.npz: engine/journal.py).
Outside a run (a linearisation) the handle does nothing.

History (`keeps_history = True`, the transport delay): after every accepted step the simulator
evaluates the outputs along the step in pieces of k equally spaced points, k the degree of
the solver's dense output there, as many pieces as it takes for the polynomial through each
piece's points (and its start) to reproduce the inputs to the solver's tolerance, and calls
`remember(t, "step")` at each point ("piece" at the end of a piece, "end" at the step's
end); at every event instant, the start included, it calls `remember(t, "event")` after the
event, which returns the times (if any) at which `event` must be called (a jump of the
input, echoed later). Lookups after a step reach back to its start minus the delay.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction
from types import SimpleNamespace

import numpy as np

CONSTANT = "constant"
# the `sample` of a discrete block given no period: it runs at the trigger of the triggered
# subsystem it is in (its sample hits are the trigger's edges; elsewhere it is an error)
TRIGGERED = "triggered"

ALL = "all"

# directions of zero-crossing indicators
RISING, FALLING, EITHER = 1, -1, 0


class PortError(ValueError):
    """Raised by a block about one of its ports; the compiler adds file, line and block."""

    def __init__(self, port, message):
        super().__init__(message)
        self.port = port
        self.message = message


@dataclass(frozen=True)
class In:
    """An input port. `shape=None` accepts any shape; `optional` inputs may stay unwired and
    then read `default` broadcast to `shape`, or, with `default=None`, are bound as None
    (the block supplies the value itself)."""
    name: str
    shape: tuple | None = None
    optional: bool = False
    default: float = 0.0
    doc: str = ""


@dataclass(frozen=True)
class Out:
    """An output port.

    feedthrough: ALL (depends on every input at the same instant), or a tuple of input names
    (possibly empty: the output depends only on state and time).
    calc: name of the block method that computes it (outputs sharing a calc are computed by
    one call). state / dstate: True or a slice: the output *is* that part of the block's
    continuous / discrete state (reshaped), computed by nobody.
    elements: names of the output's elements in row-major order (a robot's q1..qn), which
    figures use for the lines of a signal wired straight from this port; () for none.
    """
    name: str
    shape: tuple | None = None
    feedthrough: object = ALL
    calc: str = "output"
    state: object = None
    dstate: object = None
    doc: str = ""
    elements: tuple = ()

    @property
    def aliased(self):
        return self.state is not None or self.dstate is not None


def exact_time(x):
    """A time as the fraction the engine counts in: the simplest one (denominator <= 1e9) that
    rounds to the float x, else x's exact binary value. Times computed from these as
    offset + k*period or t + delay, then rounded once to float, agree to the last bit whoever
    computes them (sample hits, a pulse's edges, a delayed jump): 3*0.1 is 0.3, and so is
    0.2 + 0.1, not 0.30000000000000004."""
    return _exact_time(float(x))


@functools.lru_cache(maxsize=4096)  # the same few times, for every run of a sweep
def _exact_time(x):
    simple = Fraction(x).limit_denominator(10**9)
    return simple if float(simple) == x else Fraction(x)


@dataclass(frozen=True)
class Jacobian:
    """A block's linear model at its current values (inputs, states, modes), for linearising
    a diagram. With u every input flattened in port order (an input bound as None is empty),
    y every output flattened in port order (state aliases included) and s the states:

        ds/dt = A s + B u,        y = C s + D u          (a continuous block)
        s[k+1] = A s[k] + B u[k], y[k] = C s[k] + D u[k]  (a sampled block, at its hits)

    s is the block's continuous state, or the discrete state of a sampled block, restricted
    to the indices `states` (None: all of it; leave out parts that only copy others or flag
    the first hit), or, when `labels` are given, states of the linear model alone that the
    simulation does not have (a delay's Padé states), one label each ('pade[0]')."""
    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    states: tuple | None = None
    labels: tuple = ()


@dataclass(frozen=True)
class Sample:
    """A discrete sample time: hits at offset + k*period."""
    period: float
    offset: float = 0.0


class RunHandle:
    """What a run offers a block that `uses_run`: its journal (the module docstring).
    This one, outside any run, does nothing."""

    def log(self, a, b):
        pass


NO_RUN = RunHandle()


class Block:
    """Base class of every block type (see the module docstring for the contract)."""

    type: str = ""
    params: tuple = ()
    # True for blocks that read the time (sources): they are never folded into constants.
    time_dependent = False
    # True for blocks that end the run (normally, complete) when their input is non-zero.
    stops = False
    # True for blocks that keep a history of their inputs (see `remember` in the docstring).
    keeps_history = False
    # True for blocks whose inputs the simulator records for `finalize` (sinks, and blocks
    # that draw or report after the run, e.g. a camera's view).
    records_inputs = False
    # For those blocks: the signal wired to each input, as written in a diagram
    # ('Position.y', 'Robot.q[0:3]'; '' when unwired), set by the compiler (axis labels),
    # and the names of each input's elements when its driver's port declares them (the
    # driver's `Out.elements`, indexed as the wire indexes it; () otherwise): legends.
    signal_names = ()
    signal_elements = ()
    # Inputs whose derivative in time the block's indicators read (`du`, see above).
    rates = ()
    # True for blocks that log into the run's journal (see above).
    uses_run = False
    # True for blocks that evaluate their own 'string' or 'data' parameters against the
    # diagram's names (p._names: a function's expression, a chart's texts, an FMU's start
    # values); the values route then gives them a changed name. Other blocks' texts (a
    # scope's labels and units) are only text, whatever names they seem to read.
    reads_names = False

    def __init__(self, name, params):
        self.name = name
        self.p = SimpleNamespace(**params)
        self.sample = None  # None: continuous; CONSTANT; TRIGGERED; or a Sample

    # ---- declarations -------------------------------------------------------------------
    def ports(self):
        raise NotImplementedError

    def infer(self, shapes):
        """Output shapes for outputs declared with shape=None, given every input's shape.
        Also the place to check input shapes and precompute. Default: nothing to infer, or
        the single input's shape (element-wise blocks)."""
        undeclared = [o.name for o in self.ports()[1] if o.shape is None]
        if not undeclared:
            return {}
        if len(shapes) == 1:
            (shape,) = shapes.values()
            return {name: shape for name in undeclared}
        raise NotImplementedError(f"{type(self).__name__} must implement infer()")

    def initial_shapes(self):
        """Output shapes implied by the block's initial value (x0), for outputs declared with
        shape=None: used only when nothing else fixes the shape of a loop through the block
        (a scalar x0 then makes the loop's signal a scalar). Default: none."""
        return None

    def continuous_state(self):
        return None

    def discrete_state(self):
        return None

    def events(self, start, stop):
        """Times in (start, stop] at which `event(t)` must be called (source switches)."""
        return ()

    def durations(self):
        """{parameter: seconds} of the lengths of time the block measures off from t (a
        delay), refused when the diagram is compiled if below the time's resolution over
        the run, where t + it rounds back onto t (a sample period is checked alike)."""
        return {}

    def zero_crossings(self):
        """Directions (RISING / FALLING / EITHER) of the block's indicators, or None."""
        return None

    def journal_names(self):
        """For a block that logs (`uses_run`): (names of the first numbers it logs, names of
        the second), e.g. a chart's states and its transitions."""
        return (), ()

    def input_marks(self):
        """For drawings: (one mark per input port, drawn there instead of the port's name,
        the parameter the marks show, then left out of the box), e.g. a sum's + and - signs,
        or None."""
        return None

    # ---- wiring --------------------------------------------------------------------------
    y_flat = None
    z = None  # the block's indicator values (set by the compiler when it has indicators)
    du = None  # d/dt of the inputs named in `rates` (set by the compiler)

    def bind(self, u, y, x, dx, xd):
        self.u, self.y, self.x, self.dx, self.xd = u, y, x, dx, xd
        if self.behaviour is not None:  # its methods, on these views
            self.behaviour.bind(self)

    run = NO_RUN  # the run's RunHandle while a run uses the block (`uses_run`)

    # ---- behaviour written once (blocksim/language/behaviour.py) ---------------------------
    # A Behaviour: the block's outputs, derivative and update as expressions of its inputs,
    # run data and states, from which it gets its methods in both modes and its Jacobian.
    behaviour = None

    # ---- hot path ------------------------------------------------------------------------
    def output(self, t):
        pass

    def derivative(self, t):
        pass

    def update(self, t):
        pass

    def event(self, t):
        pass

    def reschedule(self, t):
        """Further times (> t) at which `event` must be called, asked right after `event(t)`."""
        return ()

    def indicator(self, t):
        pass

    def crossing(self, t, crossed):
        """Handle an event instant; True when the mode, state or output changed."""
        return False

    def initialize(self, t):
        """Called once at the start of every run, after a first evaluation of all outputs,
        for blocks whose initial state is defined from their inputs (rate limiter,
        derivative) or whose held outputs start from their state (zoh, unit_delay); it may
        write states and outputs. The outputs are evaluated again afterwards. A block that
        watches what it computes (see `notes`) forgets an earlier run here."""

    def notes(self):
        """Lines about what this block computed that may explain a failed run, asked when a
        run fails, before its diagnosis recomputes anything: e.g. that a matrix it inverted
        was nearly singular, when and how badly (an ijacob at a robot's singularity, long
        before the failure it causes). The block observes that on the hot path at the cost
        of a comparison; () by default."""
        return ()

    # ---- run data (blocksim/rundata.py) --------------------------------------------------
    v = None  # views of the block's declared arrays in the run's values (set by the compiler)

    def declare(self, d):
        """Declare the block's run data on `d` (a RunData): its parameters and derived
        arrays, the parameters whose change is a value, its facts, its workspace."""

    def derive(self, p):
        """{name: array} of the declared derived arrays and facts, from the parameters `p`
        (as `self.p` holds them); raise ParamError for a value the block cannot take."""
        return {}

    def values_changed(self):
        """Called after a change of values was written (self.p, self.v): a block whose
        interpreted form keeps an object made from its values (a compiled expression, a
        trajectory) makes it again."""

    # ---- compiled form (accelerated mode; the contract: blocksim/accel/lowering.py) -------
    def lower(self, c):
        """The block's compiled form (a Lowering), or None: it has none (yet)."""
        return None

    def run_data(self, start, stop):
        """The per-run arrays its Lowering.data names, {name: array}, for a run over
        [start, stop]."""
        return {}

    # ---- linearisation (optional) -----------------------------------------------------
    def jacobian(self, pade=None):
        """The block's exact `Jacobian` at its current inputs, states and modes, or None (the
        default): its methods are then differenced. `pade`: the order of the Padé
        approximation of a delay (a block that keeps a history), None when none was given.
        A block with a `behaviour` gets it from its texts."""
        return None if self.behaviour is None else self.behaviour.jacobian(self)

    def describe(self):
        """Lines `blocksim check` prints under the block (what a file it reads declares:
        an FMU's parameters and states; a chart's states and transitions); () by default."""
        return ()

    @classmethod
    def describe_file(cls, path):
        """Lines `blocksim blocks TYPE FILE` prints: what a file a block of this type reads
        declares (an FMU's ports, parameters and states), found without running anything in
        it; None (the default): the type reads no such file."""
        return None

    def log(self):
        """Lines for the run's messages after the run (an FMU's warnings); () by default."""
        return ()

    def mode_text(self):
        """For a block with modes: the modes at its current values in a few words, printed
        by the linearisation ('upper (gain 0)'); None: its discrete state is printed."""
        return None

    # ---- end of run ----------------------------------------------------------------------
    def files(self):
        """Names of the files a block with `records_inputs` writes into the run directory
        under names of its own choosing (e.g. a to_file's `file`), checked when the diagram
        is compiled: no two blocks, and none of the run's own files, share a name. Figures
        named after the block need not be listed."""
        return ()

    def finalize(self, run):
        """Called after the run for blocks with `records_inputs`, with a `FinalRun`: draw
        figures, print lines (`run.messages`), add a JSON-able report (`run.reports`)."""


def overrides(block, method):
    """Whether `block`'s type defines `method` itself, or its behaviour does (the simulator
    calls it then)."""
    return getattr(type(block), method) is not getattr(Block, method) or (
        block.behaviour is not None and method in block.behaviour.methods)


@dataclass
class FinalRun:
    """What a sink sees after the run: its recorded inputs and where to write files.

    `t` is non-decreasing: the recorded rows, and when figures are drawn also points of the
    solver's dense output (at least PLOT_POINTS per run) and, at every event, two rows with the
    same time: the value just before the event, then the value after it (a vertical edge).
    `rows` marks the rows that are the run's recorded rows (results.npz's times), e.g. for a
    block that writes the inputs to a file.
    """
    t: object
    inputs: list
    out_dir: object  # pathlib.Path or None (no files)
    plots: bool
    complete: bool
    messages: list  # lines the CLI prints at the end (e.g. the display block)
    reports: dict  # block name -> JSON-able report, stored under "blocks" in meta.json
    rows: object = None  # bool array over t, or None: every row is a recorded row
    progress: object = None  # callable(fraction done) for long drawing (animations), or None
    mp4: bool = False  # animations also as MP4 (asked for: `blocksim run --mp4`)
    error: object = None  # the exception that ended a failed run (its block, time), or None

    def recorded(self):
        """(t, inputs) at the run's recorded rows only (results.npz's times)."""
        if self.rows is None:
            return self.t, self.inputs
        return self.t[self.rows], [np.asarray(u)[self.rows] for u in self.inputs]
