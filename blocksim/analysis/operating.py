"""Operating points: the states (and constant inputs) at which every continuous state's
derivative is zero and the discrete states are at a fixed point; their file,
operating_point.yaml; starting a model from one (`run --op`, `linearize --op`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from ..block import Sample
from ..engine.compiler.layout import indexed
from ..errors import DiagramError
from ..language import expr
from ..language.diagram import suggest
from ..language.yamlio import YMap, load_yaml_file
from ..util.atomic import atomic_path
from .evaluation import Evaluator
from .offsets import add_offset
from .signals import resolve

KEYS = ("time", "states", "discrete_states", "inputs", "residual", "converged")
EQUILIBRIUM_TOL = 1e-6  # the largest |dx/dt| (|x[k+1] - x[k]|) of an equilibrium, as Drake's


@dataclass
class OperatingPoint:
    """States by block (continuous; `discrete_states`: of the sampled blocks, and the modes
    of the hybrid ones) as x0 would be written, the constant inputs added to signals by name, the residual (the largest
    |dx/dt| or |x[k+1] - x[k]|) and whether a trim converged."""
    time: float
    states: dict = field(default_factory=dict)
    discrete_states: dict = field(default_factory=dict)
    inputs: dict = field(default_factory=dict)
    residual: float = 0.0
    converged: bool = True

    def write(self, path):
        """operating_point.yaml (written whole or not at all)."""
        data = {"time": self.time, "states": _plain(self.states),
                "discrete_states": _plain(self.discrete_states),
                "inputs": _plain(self.inputs), "residual": float(self.residual),
                "converged": bool(self.converged)}
        text = yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=100)
        with atomic_path(Path(path)) as tmp:
            tmp.write_text("# an operating point written by `blocksim trim`; "
                           "`blocksim run FILE --op THIS` starts from it\n" + text)

    @classmethod
    def read(cls, path):
        """An operating point from its file; DiagramError (FILE:LINE) for what is not one."""
        path = str(path)
        doc = load_yaml_file(path)
        if not isinstance(doc, YMap):
            raise DiagramError("an operating point is a mapping with the keys "
                               + ", ".join(KEYS), file=path)
        for key in doc:
            if key not in KEYS:
                raise DiagramError(f"unknown key '{key}'{suggest(key, KEYS)}", file=path,
                                   line=doc.key_line(key), hint="keys: " + ", ".join(KEYS))
        parts = {}
        for key in ("states", "discrete_states", "inputs"):
            node = doc.get(key) or {}
            if not isinstance(node, dict):
                raise DiagramError(f"'{key}' must map names to values", file=path,
                                   line=doc.key_line(key))
            parts[key] = {str(k): _value(v, path, _line(node, k, doc.key_line(key)))
                          for k, v in node.items()}
        time = _value(doc.get("time", 0.0), path, doc.key_line("time"))
        return cls(float(time), parts["states"], parts["discrete_states"], parts["inputs"],
                   float(doc.get("residual", 0.0) or 0.0), bool(doc.get("converged", True)))


def _line(node, key, default):
    return node.key_line(key) if isinstance(node, YMap) else default


def _value(raw, path, line):
    try:
        return np.asarray(expr.evaluate(raw, {}), dtype=float)
    except (expr.ExprError, ValueError, TypeError) as e:
        raise DiagramError(f"expected a number or a list of numbers: {e}", file=path,
                           line=line) from None


def _plain(values):
    """Arrays as YAML writes x0: a number for one element, else a flat list."""
    out = {}
    for name, v in values.items():
        v = np.asarray(v, dtype=float)
        out[name] = float(v.reshape(())) if v.size == 1 and v.ndim <= 1 else v.tolist()
    return out


def capture(model, t, inputs=None, residual=0.0, converged=True):
    """The OperatingPoint the model's buffers hold now; `inputs`: {name: value} added."""
    states, discrete = {}, {}
    for block in model.blocks:
        cs, ds = model.state_slices[block.name]
        if cs.stop > cs.start:
            states[block.name] = model.xbuf[cs].copy()
        if ds.stop > ds.start:  # sampled blocks' states, and the modes of hybrid ones
            discrete[block.name] = model.xdbuf[ds].copy()
    return OperatingPoint(float(t), states, discrete, dict(inputs or {}), float(residual),
                          bool(converged))


def start_from(model, op, file="--op"):
    """Make the model start from the operating point `op` (an OperatingPoint or its file):
    its states become the initial states and its inputs are added to their signals. Returns
    the OperatingPoint."""
    if not isinstance(op, OperatingPoint):
        file = str(op)
        op = OperatingPoint.read(op)
    for table, discrete in ((op.states, False), (op.discrete_states, True)):
        for name, value in table.items():
            if name not in model.state_slices:
                raise DiagramError(f"unknown block '{name}'{suggest(name, model.state_slices)}",
                                   file=file)
            part = model.state_slices[name][1 if discrete else 0]
            target = (model.xd0 if discrete else model.x0)[part]
            try:
                target[:] = np.broadcast_to(value, target.shape)
            except ValueError:
                raise DiagramError(f"block '{name}' has {target.size} "
                                   f"{'discrete' if discrete else 'continuous'} state elements, "
                                   f"the operating point gives {np.size(value)}",
                                   file=file, block=name) from None
    model.context.version += 1  # the run's initial states are the Context's: written there
    for text, value in op.inputs.items():
        signal = resolve(model, text, file)
        added = add_offset(model, signal)
        try:
            indexed(added, signal.index)[...] = value
        except ValueError:
            raise DiagramError(f"input '{text}' has shape {signal.shape}, the operating point "
                               f"gives {np.shape(value)}", file=file) from None
    return op


def equilibrium_rows(model, t):
    """The conditions of an equilibrium: [(name, discrete, index)] for every continuous
    state (dx/dt = 0) and the sampled blocks' states that move (x[k+1] = x[k]; a block's
    Jacobian may leave out copies and flags)."""
    rows = []
    for block in model.blocks:
        cs, ds = model.state_slices[block.name]
        rows += [(f"{block.name}.x[{k}]", False, cs.start + k) for k in range(cs.stop - cs.start)]
        if moves_at_hits(model, block):
            declared = block.jacobian(0)
            states = range(ds.stop - ds.start) if declared is None or declared.states is None \
                else declared.states
            rows += [(f"{block.name}.xd[{k}]", True, ds.start + k) for k in states]
    return rows


def moves_at_hits(model, block):
    """Whether a block's discrete state is a dynamic state: a sampled block's, with inputs
    (a sampled source only counts its hits: time, not a state to settle)."""
    cs, ds = model.state_slices[block.name]
    return (isinstance(block.sample, Sample) and ds.stop > ds.start and cs.stop == cs.start
            and any(u is not None for u in block.u))


def residuals(evaluator, rows):
    """dx/dt, or x[k+1] - x[k], for each row of `equilibrium_rows` at the evaluated point."""
    rates = evaluator.rates()
    after = evaluator.next_discrete() - evaluator.model.xdbuf
    return np.array([after[k] if discrete else rates[k] for _, discrete, k in rows])


def worst(names, values, count=3):
    """The largest residuals by name: 'Robot.x[7] = -9.81, ...'."""
    order = np.argsort(-np.abs(values))[:count]
    return ", ".join(f"{names[k]} = {values[k]:.3g}" for k in order if values[k] != 0.0)


def at_start(model):
    """The Evaluator of the model's initial point (its start time), evaluated."""
    evaluator = Evaluator(model, model.settings.start)
    evaluator.start()
    return evaluator
