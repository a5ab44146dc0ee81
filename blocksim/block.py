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
(e.g. `self.output = self._matmul`): the methods are looked up once, after those calls.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

CONSTANT = "constant"

ALL = "all"


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
    """
    name: str
    shape: tuple | None = None
    feedthrough: object = ALL
    calc: str = "output"
    state: object = None
    dstate: object = None
    doc: str = ""

    @property
    def aliased(self):
        return self.state is not None or self.dstate is not None


@dataclass(frozen=True)
class Sample:
    """A discrete sample time: hits at offset + k*period."""
    period: float
    offset: float = 0.0


class Block:
    """Base class of every block type (see the module docstring for the contract)."""

    type: str = ""
    params: tuple = ()
    # True for blocks that read the time (sources): they are never folded into constants.
    time_dependent = False
    # True for blocks that end the run (normally, complete) when their input is non-zero.
    stops = False
    # True for blocks whose inputs the simulator records for `finalize` (sinks, and blocks
    # that draw or report after the run, e.g. a camera's view).
    records_inputs = False

    def __init__(self, name, params):
        self.name = name
        self.p = SimpleNamespace(**params)
        self.sample = None  # None: continuous; CONSTANT; or a Sample

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

    # ---- wiring --------------------------------------------------------------------------
    y_flat = None

    def bind(self, u, y, x, dx, xd):
        self.u, self.y, self.x, self.dx, self.xd = u, y, x, dx, xd

    # ---- hot path ------------------------------------------------------------------------
    def output(self, t):
        pass

    def derivative(self, t):
        pass

    def update(self, t):
        pass

    def event(self, t):
        pass

    def initialize(self, t):
        """Called once at the start, after a first evaluation of all outputs, for blocks whose
        initial state is defined from their inputs (rate limiter, derivative) or whose held
        outputs start from their state (zoh, unit_delay); it may write states and outputs.
        The outputs are evaluated again afterwards."""

    # ---- end of run ----------------------------------------------------------------------
    def finalize(self, run):
        """Called after the run for blocks with `records_inputs`, with a `FinalRun`: draw
        figures, print lines (`run.messages`), add a JSON-able report (`run.reports`)."""


@dataclass
class FinalRun:
    """What a sink sees after the run: its recorded inputs and where to write files."""
    t: object
    inputs: list
    out_dir: object  # pathlib.Path or None (no files)
    plots: bool
    complete: bool
    messages: list  # lines the CLI prints at the end (e.g. the display block)
    reports: dict  # block name -> JSON-able report, stored under "blocks" in meta.json
