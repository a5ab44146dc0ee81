"""Whether a model compiles: every block's lowering, collected and checked.

`lowerings(model)` asks each block for its compiled form (the contract is in lowering.py)
and checks it has code for every method the simulator calls on that block; a block without
one (or with a faulty one) is named in `NotCompilable`. It runs no code generator: the
mode decision (mode.py) asks it first, so that a diagram that cannot compile, or need not,
costs no generated source.
"""
from __future__ import annotations

from ..block import TRIGGERED, Sample, overrides
from ..engine.conditional import Conditional
from .behaviour import lower_behaviour
from .conditional import lower_conditional
from .lowering import LowerContext, Lowering, LoweringError

FAULTY = "has a faulty compiled form: "  # then what its lower() did


class NotCompilable(Exception):
    """The diagram has blocks without a compiled form: `blocks` lists (name, type, why),
    `why` a phrase that follows the type ("has no compiled form")."""

    def __init__(self, blocks):
        self.blocks = blocks
        super().__init__(", ".join(f"{n} ({t})" for n, t, _ in blocks))


def has_lowering(block):
    """Whether the block's type has a compiled form (an enabled or triggered subsystem's
    block has one here, accel/conditional.py; a declared behaviour has one), without asking
    for it."""
    return isinstance(block, Conditional) or overrides(block, "lower") or \
        block.behaviour is not None


def required(model, block, calcs):
    """The methods the simulator calls on `block`: its output calcs and the others."""
    cs, _ = model.state_slices[block.name]
    need = list(calcs)
    if overrides(block, "derivative") and cs.stop > cs.start:
        need.append("derivative")
    if isinstance(block.sample, Sample) or block.sample == TRIGGERED:
        need.append("update")
    need += [m for m in ("event", "reschedule", "initialize") if overrides(block, m)]
    if block.z is not None:
        need += ["indicator", "crossing"] + (["advance"] if hasattr(block, "advance") else [])
    if block.keeps_history:
        need.append("remember")
    return need


def lowerings(model):
    """{block name: (Lowering, LowerContext)} of every block; NotCompilable naming the blocks
    that have no lowering (or a faulty one)."""
    missing, out = [], {}
    calcs = {}
    for node in model.nodes:
        calcs.setdefault(node.block.name, []).append(node.calc)
    index = {b.name: k for k, b in enumerate(model.blocks)}
    for k, block in enumerate(model.blocks):
        ctx = _context(model, block, k)
        try:
            low = block_lowering(model, block, ctx, index)
            if low is None:
                missing.append((block.name, block.type, "has no compiled form"))
                continue
            lacking = [m for m in required(model, block, calcs.get(block.name, ()))
                       if m not in low.code]
            if lacking:
                raise LoweringError(f"has a lowering without code for {', '.join(lacking)}")
        except LoweringError as e:
            missing.append((block.name, block.type, str(e)))
            continue
        out[block.name] = (low, ctx)
    if missing:
        raise NotCompilable(missing)
    return out


def block_lowering(model, block, ctx, index):
    """The Lowering (or None) of one block of `model`: a conditional subsystem's block's is
    the model's (accel/conditional.py), any other block's its own; `index`: block name ->
    its number."""
    if isinstance(block, Conditional):
        return lower_conditional(model, block, ctx, index)
    return lowering_of(block, ctx)


def lowering_of(block, ctx):
    """`block.lower(ctx)` with its declared behaviour lowered (accel/behaviour.py) for the
    methods its texts write: a Lowering or None (no compiled form); LoweringError when it
    raises or gives anything else (a block type's fault, a plugin's: the block is named, and
    auto runs it in normal mode)."""
    if hasattr(block, "pack"):
        raise LoweringError(f"{FAULTY}its pack() is no longer read: declare its numbers "
                            "(declare and derive, docs/custom-blocks.md)")
    if not overrides(block, "lower") and block.behaviour is not None:
        return lower_behaviour(block, ctx)
    try:
        low = block.lower(ctx)
    except LoweringError:
        raise
    except Exception as e:  # noqa: BLE001 - whatever a block type's code raises
        raise LoweringError(f"{FAULTY}its lower() raised {type(e).__name__}: {e}") from None
    if low is None:
        return None
    if not isinstance(low, Lowering):
        raise LoweringError(f"{FAULTY}its lower() gave {_kind(low)}, not a Lowering")
    if not (isinstance(low.code, dict) and all(isinstance(k, str) and isinstance(v, str)
                                               for k, v in low.code.items())):
        raise LoweringError(f"{FAULTY}its lower() gave code that is not C text per method "
                            "(a dict of strings)")
    if not (isinstance(low.scratch, int) and low.scratch >= 0):
        raise LoweringError(f"{FAULTY}its lower() gave {_kind(low.scratch)} as the scratch, "
                            "not a number of doubles")
    if block.behaviour is not None:  # its handlers by hand, the rest from its texts
        texts = lower_behaviour(block, ctx)
        low.code = {**low.code, **texts.code}
        low.scratch = max(low.scratch, texts.scratch)
    return low


def _kind(value):
    return "None" if value is None else f"a {type(value).__name__}"


def _context(model, block, k):
    ins, outs = model.ports[block.name]
    shape_in = {p: v.shape for p, v in zip(ins, block.u) if v is not None}
    shape_out = {p: v.shape for p, v in zip(outs, block.y)}
    cs, ds = model.state_slices[block.name]
    return LowerContext(shape_in, shape_out, nx=cs.stop - cs.start, nxd=ds.stop - ds.start,
                        nz=0 if block.z is None else block.z.size, prefix=f"b{k}_")
