"""One time domain for the linear model. Continuous blocks alone give a continuous model,
discrete blocks of one rate a discrete model at that period. A mixed diagram (continuous
and discrete states, or several rates) gives a continuous model, each discrete block
converted from its own period (zero-order hold, `d2c`), or, with a chosen `period`, a
discrete model at it: continuous blocks sampled (`c2d`, zero-order hold), discrete blocks of
another rate resampled. Blocks are converted one by one, as Simulink's linearisation does.
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import scipy.linalg

from ..errors import DiagramError


def choose(parts, period):
    """The model's period (None: continuous) and a sentence saying how it was chosen."""
    dynamic = [p for p in parts if p.names]
    continuous = [p.block.name for p in dynamic if p.period is None]
    rates = sorted({p.period for p in dynamic if p.period is not None})
    if period is not None:
        return period, f"discrete model at the chosen period {period:g} s"
    if not rates:
        return None, "continuous model"
    if not continuous and len(rates) == 1:
        return rates[0], f"discrete model at the diagram's rate, period {rates[0]:g} s"
    return None, ("continuous model: the discrete blocks converted from their periods "
                  "(zero-order hold)")


def convert(parts, period, file):
    """The parts in the model's domain (see the module docstring); returns (parts, the names
    of the blocks converted). A discrete block resampled at a whole multiple k of its period
    holds its input over the k updates: exactly A^k, (I + A + ... + A^(k-1)) B. Otherwise it
    goes through its continuous equivalent; DiagramError when it has none (a pole at z = 0,
    a delay): a discrete model at a multiple of its period is needed."""
    out, converted = [], []
    for part in parts:
        here = part.period
        if not part.names or here == period:
            out.append(part)
            continue
        A, B = part.A, part.B
        steps = None if here is None or period is None else _multiple(period, here)
        if steps is not None:
            A, B = _held(A, B, steps)
        else:
            if here is not None:
                A, B = _to_continuous(part, period, file)
            if period is not None:
                A, B = _to_discrete(A, B, part.C, part.D, period)
        out.append(dataclasses.replace(part, A=A, B=B, period=period))
        converted.append(part.block.name)
    return out, converted


def _multiple(period, here):
    """k when `period` is k times `here` (to rounding), else None."""
    k = round(period / here)
    return k if k >= 1 and abs(k * here - period) <= 1e-9 * period else None


def _held(A, B, k):
    """k updates x <- A x + B u with u held: (A^k, (I + A + ... + A^(k-1)) B)."""
    Ak, S = np.eye(len(A)), np.zeros_like(B)
    for _ in range(k):
        S = A @ S + B
        Ak = A @ Ak
    return Ak, S


def _to_continuous(part, period, file):
    """d2c (zero-order hold): [[Ac, Bc], [0, 0]] = log([[A, B], [0, I]]) / T."""
    n, m = part.B.shape
    M = np.block([[part.A, part.B], [np.zeros((m, n)), np.eye(m)]])
    poles = np.linalg.eigvals(part.A)
    # a real logarithm needs no pole at z = 0 and none on the negative real axis
    ok = not np.any((np.abs(poles) < 1e-8) | ((np.abs(poles.imag) < 1e-12) & (poles.real < 0)))
    if ok:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            L = scipy.linalg.logm(M) / part.period
        ok = np.all(np.isfinite(L)) and np.allclose(np.imag(L), 0.0,
                                                    atol=1e-9 * (1 + np.abs(L).max()))
    if ok:
        L = np.real(L)
        ok = np.allclose(scipy.linalg.expm(L * part.period), M, rtol=1e-8, atol=1e-10)
    if not ok:
        T = part.period
        wanted = ("a continuous model of this mixed diagram" if period is None else
                  f"the model at period {period:g} s, which is not a whole multiple of {T:g} s")
        raise DiagramError(
            f"its period is {T:g} s and it has no continuous-time equivalent, needed for "
            f"{wanted}: a pole on the negative real axis or at z = 0 (poles {_short(poles)})",
            file=file, block=part.block.name,
            hint=f"give --period {T:g} (or a whole multiple of it) for a discrete model whose "
                 "samples fall on the block's updates")
    return L[:n, :n], L[:n, n:]


def _to_discrete(A, B, C, D, period):
    """c2d (zero-order hold), python-control's."""
    import control
    sampled = control.c2d(control.ss(A, B, C, D), period, method="zoh")
    return sampled.A, sampled.B


def _short(values):
    return "[" + ", ".join(f"{v:.3g}" for v in values[:6]) + (", ...]" if len(values) > 6 else "]")
