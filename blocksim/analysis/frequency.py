"""What a linear model says, by python-control: poles, zeros, DC gain, stability margins,
and the Bode plot with the margins marked."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from ..util.atomic import atomic_path


def poles(system):
    return np.sort_complex(system.poles())


def zeros(system):
    """The invariant zeros of a square model (as many inputs as outputs), else None."""
    if system.ninputs != system.noutputs or not system.nstates:
        return None if system.ninputs != system.noutputs else np.zeros(0, complex)
    values = system.zeros()
    return np.sort_complex(values[np.isfinite(values)])


def dc_gain(system):
    """The steady-state gain G(0) (G(1) of a discrete model), inf where it is unbounded.
    Where A is close to singular (an integrator, a free joint) python-control's `dcgain`
    returns rounding noise, so the limit is taken: G at s = d and d/2 (d a millionth of
    the fastest pole's magnitude, at least 1e-6); a channel that grows towards s = 0 is
    infinite, the others keep G(d/2)."""
    n = system.nstates
    A = system.A
    if n == 0 or np.linalg.cond(A - (np.eye(n) if system.isdtime() else 0)) < 1e10:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            gain = np.real_if_close(system.dcgain())
        return np.asarray(gain, dtype=float).reshape(system.noutputs, system.ninputs)
    d = 1e-6 * max(1.0, float(np.max(np.abs(system.poles()))))
    near, nearer = (_response(system, s) for s in (d, d / 2))
    return np.where(np.abs(nearer) > 1.5 * np.abs(near), np.copysign(np.inf, nearer.real),
                    nearer.real)


def _response(system, s):
    """G at the complex frequency s (z = e^(s dt) for a discrete model)."""
    x = np.exp(s * system.dt) if system.isdtime() else s
    with np.errstate(all="ignore"):
        return np.asarray(system(x), dtype=complex).reshape(system.noutputs, system.ninputs)


def margins(system):
    """(gain margin, phase margin in degrees, frequency where the phase is -180 deg,
    frequency where the gain is 1) of a SISO loop, python-control's `margin`; None for MIMO.
    inf or nan where a crossing does not exist."""
    if system.ninputs != 1 or system.noutputs != 1:
        return None
    import control
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return tuple(float(v) for v in control.margin(system))


def margins_text(margins):
    """The margins `margins()` gives, in words (inf or nan: the crossing that is missing)."""
    gm, pm, wg, wp = margins
    gain = "inf (the phase never reaches -180 deg)" if not np.isfinite(gm) else \
        f"{gm:.4g} ({20 * np.log10(gm):.3g} dB) at {wg:.4g} rad/s"
    phase = "inf (the gain never crosses 1)" if not np.isfinite(pm) else \
        f"{pm:.4g} deg at {wp:.4g} rad/s"
    return f"gain margin {gain}; phase margin {phase}"


def bode(system, path):
    """The Bode plot (every input-output pair) into `path` (.png, .svg, .pdf); a SISO loop's
    gain and phase margins are marked, as python-control's `bode_plot` draws them."""
    import control
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    rows, cols = 2 * system.noutputs, system.ninputs
    figure = Figure(figsize=(4 + 3 * cols, 1.5 + 2.2 * rows), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(rows, cols, sharex=True, squeeze=False)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        control.bode_plot(system, ax=axes, dB=True, title=f"Bode plot: {system.name}",
                          display_margins=system.ninputs == 1 and system.noutputs == 1)
    found = margins(system)
    if found is not None:  # in words: python-control's title said 'Gm = inf dB (at nan rad/s)'
        axes[0, 0].set_title("")
        figure.suptitle(f"{system.name}: {margins_text(found)}", fontsize=9)
    path = Path(path)
    with atomic_path(path) as tmp:
        figure.savefig(tmp, dpi=120)
    return path
