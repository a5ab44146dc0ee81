"""After a fault: which block, which port, what went wrong, and when.

The hot path checks nothing. When a run meets a non-finite value, a solver failure or an
exception from a block, these functions find the culprit from the model alone (its blocks
and buffers), recomputing the failing instant with numpy's floating-point checks on, so the
normal path pays nothing for them.
"""
from __future__ import annotations

import numpy as np

from ..block import Block
from ..errors import SimulationError
from ..language.expr import ExprError
from .conditional import Gates

_FAULTS = (("divide by zero encountered in log", "log of zero"),
           ("invalid value encountered in log", "log of a negative number"),
           ("invalid value encountered in sqrt", "square root of a negative number"),
           ("invalid value encountered in arcsin", "asin of a value outside [-1, 1]"),
           ("invalid value encountered in arccos", "acos of a value outside [-1, 1]"),
           ("invalid value encountered in arccosh", "acosh of a value below 1"),
           ("invalid value encountered in arctanh", "atanh of a value outside [-1, 1]"),
           ("divide by zero encountered in arctanh", "atanh of -1 or 1"),
           ("invalid value encountered in power", "power of a negative number"),
           ("divide by zero encountered in power", "power of zero with a negative exponent"),
           ("divide by zero", "division by zero"),
           ("invalid value encountered in divide", "division of zero by zero"),
           ("overflow", "overflow (the value is too large for a float64)"))

# what a block's method may raise on the values it meets (a function block's index out of
# range, a singular matrix): the data's fault, not a bug; block_failure names the block
BLOCK_FAULTS = (ExprError, ArithmeticError, LookupError, ValueError, TypeError, MemoryError)


def nonfinite(model, t, y, compiled=None):
    """A SimulationError naming the first block (in dataflow order) whose output is not
    finite at time t with continuous state y, saying what went wrong when numpy's
    floating-point checks pinpoint it (division by zero, log of a negative number), or the
    state; None when all is finite. The outputs are recomputed one by one with the checks
    on. After a compiled run, `compiled(t, y)` computes every output in compiled code
    first, and the blocks that keep a history keep those: the run's history is the
    compiled code's, the interpreted block has none."""
    model.xbuf[:] = y
    if compiled is not None:
        compiled(t, y)
    gates = Gates(model)  # a disabled block computes nothing
    for node in model.nodes:
        block = node.block
        if node.group == "continuous" and not (compiled and block.keeps_history):
            calc = gates.node(node)
            try:
                with np.errstate(all="raise", under="ignore"):
                    calc(t)
            except (FloatingPointError, ZeroDivisionError) as e:
                return SimulationError(_fault_text(e), block=block.name,
                                       port=node.ports[0] if len(node.ports) == 1 else None,
                                       time=t)
            except (ArithmeticError, ValueError):
                pass  # not a floating-point fault: the finiteness check below decides
            with np.errstate(all="ignore"):
                calc(t)  # the values a failed check left unwritten
        for port in node.ports:
            if not np.isfinite(model.outputs[(block.name, port)]).all():
                return SimulationError("signal is not finite (NaN or inf)",
                                       block=block.name, port=port, time=t)
    with np.errstate(all="ignore"):
        for block in model.blocks:
            cs, _ = model.state_slices[block.name]
            if not np.isfinite(y[cs]).all():
                return SimulationError("continuous state is not finite (NaN or inf)",
                                       block=block.name, time=t)
            derivative = gates.method(block, "derivative")
            if cs.stop > cs.start and derivative is not None:
                derivative(t)
                if not np.isfinite(model.dxbuf[cs]).all():
                    return SimulationError("state derivative is not finite (NaN or inf)",
                                           block=block.name, time=t)
    return None


def nonfinite_state(model, t, y, compiled=None):
    """The error for a non-finite state y after a step to t."""
    return nonfinite(model, t, y, compiled) or SimulationError("state is not finite", time=t)


def nonfinite_signal(model, t, compiled=None):
    """The error for a non-finite value among the signals or states recorded at t."""
    return nonfinite(model, t, model.xbuf.copy(), compiled) or SimulationError(
        "a signal is not finite", time=t)


def after_solver_failure(model, f, t, y, error, compiled=None):
    """The error to report when the solver failed at (t, y), the last accepted point: the
    first non-finite signal there or just after, else the block whose state changes
    fastest, else None (the solver's own error stands)."""
    return _first_nonfinite_after(model, t, y, compiled) or _fastest_state(model, f, t, y, error)


def _first_nonfinite_after(model, t, y, compiled):
    """The first non-finite signal at t or just after it: the next few representable times
    (where a step that fell below the round-off limit failed), then probing forward as the
    failed steps did; or None."""
    s = model.settings
    err = nonfinite(model, t, y, compiled)
    probe = t
    for _ in range(64):
        if err is not None:
            return err
        probe = np.nextafter(probe, np.inf)
        if probe > s.stop:
            break
        err = nonfinite(model, float(probe), y, compiled)
    probe = 1e-10 * max(1.0, abs(t))
    while err is None and probe < s.max_step and t + probe <= s.stop:
        err = nonfinite(model, t + probe, y, compiled)
        probe *= 10
    return err


def _fastest_state(model, f, t, y, error):
    """With every value finite (a state growing without bound, a stiff or discontinuous
    right-hand side): the error naming the block whose state changes fastest relative to
    its tolerance at (t, y), the likely culprit; None when there is no continuous state."""
    if not len(y):
        return None
    s = model.settings
    with np.errstate(all="ignore"):
        rate = np.abs(f(t, y)) / (s.atol + s.rtol * np.abs(y))
    if not np.isfinite(rate).any():
        return None
    k = int(np.nanargmax(np.where(np.isfinite(rate), rate, -1.0)))
    for block in model.blocks:
        cs, _ = model.state_slices[block.name]
        if cs.start <= k < cs.stop:
            dx = model.dxbuf[k] if np.isfinite(model.dxbuf[k]) else float("nan")
            return SimulationError(f"{error.message}; the state changing fastest there is "
                                   f"this block's (|dx/dt| = {abs(dx):.3g}, |x| = "
                                   f"{abs(y[k]):.3g})", block=block.name,
                                   time=error.time if error.time is not None else t)
    return None


def _fault_text(exc):
    """numpy's floating-point error (or Python's ZeroDivisionError) -> what the user did."""
    text = str(exc)
    for needle, meaning in _FAULTS:
        if needle in text:
            return meaning
    return f"invalid arithmetic ({text})"


def _failing_block(exc):
    """(name, method, time) of the innermost block method that raised `exc` (from its
    traceback: the method's `self` and its argument `t`), or Nones."""
    name = method = time = None
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        owner = frame.f_locals.get("self")
        if isinstance(owner, Block):
            name, method = owner.name, frame.f_code.co_name
            t = frame.f_locals.get("t")
            time = float(t) if isinstance(t, (float, int, np.floating)) else None
        tb = tb.tb_next
    return name, method, time


def block_failure(model, exc, last_time):
    """A SimulationError for an exception raised by a block's computation (a function
    block's index out of range, a singular matrix...): the block, the output port its
    method computes and the time (the method's, else the last derivative evaluation's)."""
    name, method, time = _failing_block(exc)
    port = None
    for node in model.nodes:
        if node.block.name == name and node.calc == method:
            port = "/".join(node.ports)
    what = "" if isinstance(exc, ExprError) else f"{type(exc).__name__}: "
    error = SimulationError(f"{what}{exc}", block=name, port=port,
                            time=last_time if time is None else time)
    error.__cause__ = exc
    return error


def failure_notes(model):
    """What the blocks noted during a failed run that may explain it (`Block.notes`), each
    naming its block: "block 'ijacob': the Jacobian it inverts was nearly singular ..."."""
    return [f"block '{b.name}': {note}" for b in model.blocks for note in b.notes()]
