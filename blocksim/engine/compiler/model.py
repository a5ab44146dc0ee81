"""The compiler's output: a `Model` (what the simulator runs) and the data it is made of."""
from __future__ import annotations

import operator
from dataclasses import dataclass, field

import numpy as np

from ...errors import DiagramError, DiagramErrors

MAX_STEPS = 10_000_000  # default simulation.max_steps

# names results.npz uses besides the records: the time and the events of hybrid blocks
RESERVED_RECORDS = ("t", "events_t", "events_block")


@dataclass
class Settings:
    start: float
    stop: float
    solver: str
    rtol: float
    atol: float
    max_step: float
    step: float
    output_interval: float | None
    refine: int = 1  # result rows per solver step (k - 1 of them inside it, from the dense output)
    event_tol: float = 1e-10
    max_consecutive_events: int = 1000
    max_steps: int = MAX_STEPS  # most solver steps, result rows, sample hits of a run
    mode: str = "auto"  # normal / accelerated / auto (blocksim/accel/mode.py)


@dataclass
class Node:
    """One output computation: a block method producing one or more of its output ports."""
    block: object
    calc: str
    ports: list
    inputs: tuple  # input names the outputs depend on at the same instant
    # constant / discrete / continuous; event (at event instants only: an enable's decision,
    # a triggered subsystem); triggered (run by the triggered subsystem it is in)
    group: str = "continuous"
    sample: object = None  # a discrete node's Sample: its block's, or the one it inherits
    order: int = 0  # declaration index (Model.nodes holds the nodes in dataflow order)
    gate: tuple = ()  # indices of the discrete-state flags that must be > 0 (conditions.py)

    @property
    def label(self):
        return f"{self.block.name}.{'/'.join(self.ports)}"


@dataclass
class Model:
    """A compiled diagram, ready to simulate (see simulator.simulate): its structure, and in
    `context` the values of its next run (engine/context.py: `settings`, `x0`, `xd0` and
    `events` read them there).

    `set(path, value)` changes values in place, as Simulink's set_param; `block(name)` is a
    block of the diagram (e.g. a robot block's `.robot`); `resources` holds the built
    diagram sections (`resources["robots"]["p560"]`).
    """
    name: str
    description: str
    file: str
    blocks: list
    nodes: list  # all output computations in dataflow order
    signals: np.ndarray
    xbuf: np.ndarray
    dxbuf: np.ndarray
    xdbuf: np.ndarray
    outputs: dict  # (block name, port) -> view
    record: dict  # record name -> (view, signal text)
    sinks: list  # (block, [views])
    stops: list  # views
    state_slices: dict  # block name -> (continuous slice, discrete slice)
    hybrid: tuple = ()  # (block, slice of zbuf) of blocks with indicators, in dataflow order
    zbuf: np.ndarray = field(default_factory=lambda: np.zeros(0))  # indicator values
    zdirs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    rates: tuple = ()  # (input view, du array) of the inputs hybrid blocks watch
    dubuf: np.ndarray = field(default_factory=lambda: np.zeros(0))  # the du arrays' buffer
    seeds: dict = field(default_factory=dict)
    subsystems: dict = field(default_factory=dict)  # name -> (source, {parameter: value})
    spec: object = None  # the DiagramSpec compiled (its subsystem structure, for drawing)
    resources: dict = field(default_factory=dict)  # section -> {name: object} (the robots)
    # what compiled it (a pipeline.Compilation): the route of its new values
    compilation: object = field(default=None, repr=False, compare=False)
    # the wiring, for analyses of the compiled diagram (linearisation): block name ->
    # (inputs {name: In}, outputs {name: Out}), and (consumer block, input port) ->
    # (driver block, output port, index, wire location)
    ports: dict = field(default_factory=dict)
    drivers: dict = field(default_factory=dict)
    # the run's values (engine/context.py) and where each declaring block's lie in them
    context: object = None
    slots: dict = field(default_factory=dict)  # block name -> context.Slots
    # the diagram's own ports (top-level `inputs:` / `outputs:`): input name -> its Inport
    # block, output name -> (view, signal text)
    inports: dict = field(default_factory=dict)
    outports: dict = field(default_factory=dict)
    # blocks inside enabled or triggered subsystems: name -> conditions.Gate
    gates: dict = field(default_factory=dict)

    # ---- the values of the next run, in the Context ----------------------------------------
    @property
    def settings(self):
        return self.context.settings

    @settings.setter
    def settings(self, settings):
        self.context.settings = settings
        self.context.version += 1

    @property
    def x0(self):
        return self.context.x0

    @property
    def xd0(self):
        return self.context.xd0

    @property
    def events(self):
        """The time events the blocks announce, sorted (time, block)."""
        return self.context.events

    @property
    def config(self):
        """The resolved configuration for meta.json (raw values after --set, plain JSON)."""
        spec, settings = self.spec, self.settings
        kept = self.__dict__.get("_config")
        if kept is None or kept[0] is not spec or kept[1] is not settings:
            config = run_config(spec, settings, kept)
            kept = self.__dict__["_config"] = (spec, settings, config)
        return kept[2]

    def set(self, path, value=None):
        """Change values of the diagram in place, as Simulink's set_param:
        `model.set("blocks.Kp.K", 400)`, or several at once, `model.set({"blocks.Kp.K": 400,
        "simulation.stop": 5})`. Paths are those of `--set` and `overrides=` (blocks.B.P,
        parameters.N, simulation.KEY, robots.R.OPTION, record.NAME, blocks.S.parameters.N,
        a conditional subsystem's blocks.S.initial and options);
        values are what the diagram could say there (a number, a list, an expression as a
        string). The values are checked as `blocksim.load` checks them (DiagramError, the
        model unchanged); a change of values is written into the model's Context (no block
        rebuilt, compiled code kept), a change of structure compiles the diagram anew. The
        next run uses the new values. Returns the model."""
        if self.compilation is None:
            raise ValueError("this Model was not made by blocksim.load: load the diagram "
                             "to change its values")
        changes = list(path.items()) if isinstance(path, dict) else [(path, value)]
        try:
            self.compilation.change(self, changes, via="model.set")
        except (DiagramError, DiagramErrors) as e:
            raise _said_at_set(e, [change[0] for change in changes]) from None
        return self

    def block(self, name):
        """The block called `name` (an inner block of a subsystem: 'Outer/Inner')."""
        for block in self.blocks:
            if block.name == name:
                return block
        from ...language.diagram import suggest
        raise KeyError(f"no block '{name}' in {self.name}"
                       f"{suggest(name, [b.name for b in self.blocks])}")


def plain(v):
    """Raw YAML data (YMap, YList, numpy values inside) as plain JSON-able Python data."""
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, (np.ndarray, np.generic)):
        return v.tolist()
    return v


def run_config(spec, settings, previous=None):
    """The resolved configuration for meta.json (raw values after --set, plain JSON).
    `previous`: (an earlier spec of the diagram, its settings, its configuration), whose
    entries are taken where the spec holds the same Value objects (a change of values
    replaces a few; DiagramSpec.copy shares the others) or the settings are the same."""
    was, was_settings, old = previous or (None, None, {})
    params = spec.scopes[0].params if spec.scopes else {}
    was_params = was.scopes[0].params if was is not None and was.scopes else None
    return {
        "parameters": old["parameters"] if _same(params, was_params) else _raws(params),
        "robots": _entries(spec.robots, was and was.robots, old.get("robots"), _itself,
                           _raws),
        "blocks": _entries(spec.blocks, was and was.blocks, old.get("blocks"), _params,
                           _block_entry),
        "wires": old["wires"] if was is not None and was.wires is spec.wires else
        [f"{w.src.text()} -> {w.dst.text()}" for w in spec.wires],
        "simulation": old["simulation"] if settings is was_settings else
        {k: getattr(settings, k) for k in settings.__dataclass_fields__},
        "record": old["record"] if _same(spec.record, was and was.record) else
        _raws(spec.record),
    }


def _same(values, before):
    """Whether two sections hold the same Value objects under the same keys."""
    return before is not None and before.keys() == values.keys() and all(
        map(operator.is_, before.values(), values.values()))


def _raws(values):
    return {k: plain(v.raw) for k, v in values.items() if k != "__loc__"}


def _itself(entry):
    return entry


def _params(block):
    return block.params


def _block_entry(block):
    return {"type": block.type, **_raws(block.params)}


def _entries(new, before, old, values, make):
    """{name: make(entry)} of a section, taken from the previous one `old` where the
    entry's values are the same as `before`'s."""
    before = before or {}
    out = {}
    for name, entry in new.items():
        was = before.get(name)
        out[name] = old[name] if was is not None and (
            was is entry or _same(values(entry), values(was))) else make(entry)
    return out


def _said_at_set(error, paths):
    """The DiagramError(s) of a Model.set, each said at the set: a change of structure
    compiled anew is refused at the diagram's line where it does not fit (a wire's shapes),
    which the user did not change; that line becomes the hint."""
    from ...language.diagram import override_origin
    where = override_origin("model.set", paths[0]) if len(paths) == 1 else \
        f"model.set of {', '.join(map(str, paths))}"
    errors = error.errors if isinstance(error, DiagramErrors) else [error]
    for err in errors:
        if not (err.file or "").startswith("model.set"):
            place = f" at {err.file}" + (f":{err.line}" if err.line is not None else "") \
                if err.file else ""
            err.hint = f"in the diagram{place}" + (f"; {err.hint}" if err.hint else "")
            err.file, err.line = where, None
    return errors[0] if len(errors) == 1 else DiagramErrors(errors)
