"""What a linear model says: poles, zeros, DC gain, stability margins, and the Bode plot
(python-control's) with the margins marked.

The margins are found on the loop's frequency response (response.py), not read off its
transfer function's polynomials as python-control's `margin` does: rounding in those
polynomials gives crossings that do not exist (1/(s+1)^2 as a state space: 'gain margin
4.5e15 at 6.7e7 rad/s') and fails on large models (200 states: a LinAlgError)."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import scipy.linalg
import scipy.optimize

from ..errors import DiagramError
from ..util.atomic import atomic_path, check_writable_dir
from .response import Response, state_space

PER_DECADE = 200  # frequencies per decade searched for crossings
SPAN = 100.0  # the search runs from the slowest pole or zero / SPAN to the fastest * SPAN
PLOT_SPAN = 10.0  # the Bode plot, likewise (and over the crossings it marks)


def poles(system):
    return np.sort_complex(system.poles())


def zeros(system):
    """The invariant zeros of a square model (as many inputs as outputs), else None: the
    finite generalised eigenvalues of ([[A, B], [C, D]], [[I, 0], [0, 0]]), as python-control
    computes them, after balancing [[A, B], [C, D]] by a diagonal similarity (powers of 2,
    exact; the pencil's eigenvalues and its [[I, 0], [0, 0]] are unchanged). Unbalanced, a
    badly scaled model lost its zeros to rounding (a 1e4 s delay's, order 10: by 19 %)."""
    if system.ninputs != system.noutputs:
        return None
    system = state_space(system)
    n = system.nstates
    if not n:
        return np.zeros(0, complex)
    S = np.block([[system.A, system.B], [system.C, system.D]]).astype(float)
    S, _ = scipy.linalg.matrix_balance(S, permute=False)
    M = np.zeros_like(S)
    M[:n, :n] = np.eye(n)
    values = scipy.linalg.eigvals(S, M)
    return np.sort_complex(values[np.isfinite(values)])


def dc_gain(system):
    """The steady-state gain G(0) (G(1) of a discrete model), outputs x inputs: +-inf where
    an integrator makes it unbounded, 0 where it is zero to rounding (response.py)."""
    return Response(system).dc_gain()


def margins(system):
    """(gain margin, phase margin in degrees, frequency where the phase is -180 deg,
    frequency where the gain is 1) of a SISO loop, None for MIMO; inf margins and nan
    frequencies where a crossing does not exist. Of several crossings, python-control's
    choice: the gain margin nearest 1 (in log), the phase margin smallest in size."""
    if system.ninputs != 1 or system.noutputs != 1:
        return None
    response = Response(system)

    def loop(w):
        return complex(response.frequency([w])[0, 0, 0])

    w = _grid(system)
    L = response.frequency(w)[:, 0, 0]
    # the negative real axis crossed (a sign change through a pole on the axis is not)
    phase_w = [x for x in _crossings(w, L.imag, lambda x: loop(x).imag)
               if _on_negative_axis(loop(x))]
    if system.isdtime(strict=True) and _on_negative_axis(L[-1]):
        phase_w.append(w[-1])  # at the Nyquist frequency G(-1) is real
    with np.errstate(divide="ignore"):
        gain_w = _crossings(w, np.log(np.abs(L)), lambda x: np.log(abs(loop(x))))
    gm, w180, pm, wc = np.inf, np.nan, np.inf, np.nan
    if phase_w:
        with np.errstate(divide="ignore"):
            gms = np.array([1 / abs(loop(x)) for x in phase_w])
        k = int(np.argmin(np.abs(np.log(gms))))
        gm, w180 = float(gms[k]), float(phase_w[k])
    if gain_w:
        pms = np.array([np.remainder(np.degrees(np.angle(loop(x))), 360.0) - 180.0
                        for x in gain_w])
        k = int(np.argmin(np.abs(pms)))
        pm, wc = float(pms[k]), float(gain_w[k])
    return gm, pm, w180, wc


def _on_negative_axis(value):
    return value.real < 0 and abs(value.imag) <= 1e-8 * abs(value)


def _grid(system, span=SPAN, cover=()):
    """Frequencies (rad/s) to look for crossings at: PER_DECADE a decade over the poles'
    and zeros' magnitudes widened by `span` and over the frequencies `cover` (up to the
    Nyquist frequency of a discrete model), and close around each complex pole and zero,
    where the phase turns fast."""
    features = np.concatenate([poles(system), _zeros_or_none(system)]).astype(complex)
    if system.isdtime(strict=True):
        features = np.log(features[features != 0]) / system.dt
    features = features[np.isfinite(features) & (np.abs(features) > 0)]
    size = np.abs(features)
    lo, hi = (size.min() / span, size.max() * span) if size.size else (1e-2, 1e2)
    cover = [w for w in cover if np.isfinite(w) and w > 0]
    lo, hi = min([lo] + [w / 2 for w in cover]), max([hi] + [w * 2 for w in cover])
    top = np.pi / system.dt if system.isdtime(strict=True) else hi
    lo = min(lo, top / 1e4)
    count = int(np.ceil(np.log10(top / lo) * PER_DECADE)) + 1
    near = [abs(f) * (1 + abs(f.real) / abs(f) * np.linspace(-4, 4, 17))
            for f in features if f.imag != 0]
    grid = np.logspace(np.log10(lo), np.log10(top), count)
    grid[-1] = top  # exactly: a discrete model's response is real there
    w = np.concatenate([grid, *near])
    return np.unique(w[(w > 0) & (w <= top)])


def _zeros_or_none(system):
    try:
        found = zeros(system)
    except (np.linalg.LinAlgError, ValueError):
        found = None
    return np.zeros(0) if found is None else found


def _crossings(w, values, f):
    """Where `values` (f on the grid w) changes sign, refined by brentq on f."""
    found = []
    ok = np.isfinite(values)
    for k in np.flatnonzero(ok[:-1] & ok[1:] & (np.sign(values[:-1]) * np.sign(values[1:]) < 0)):
        found.append(scipy.optimize.brentq(f, w[k], w[k + 1], xtol=1e-14 * w[k + 1],
                                           rtol=4 * np.finfo(float).eps))
    return found


def margins_text(margins):
    """The margins `margins()` gives, in words (inf or nan: the crossing that is missing)."""
    gm, pm, wg, wp = margins
    gain = "inf (the phase never reaches -180 deg)" if not np.isfinite(gm) else \
        f"{gm:.4g} ({20 * np.log10(gm):.3g} dB) at {wg:.4g} rad/s"
    phase = "inf (the gain never crosses 1)" if not np.isfinite(pm) else \
        f"{pm:.4g} deg at {wp:.4g} rad/s"
    return f"gain margin {gain}; phase margin {phase}"


def check_figure_path(path):
    """Before any work: `path` can take the Bode plot, a file whose name ends in a format
    the figures are written in (.svg, .png, .pdf) in a directory that can be written;
    DiagramError (exit 2) otherwise."""
    from ..draw.render import FORMATS
    path = Path(path)
    endings = ", ".join(f".{f}" for f in FORMATS)
    if path.is_dir():
        raise DiagramError(f"--bode {path}: that is a directory; give a file name ending in "
                           f"{endings}, e.g. {path / 'bode.png'}", file="--bode")
    if path.suffix.lower().lstrip(".") not in FORMATS:
        raise DiagramError(f"--bode {path}: the file name must end in {endings} (the format "
                           "of the plot)", file="--bode")
    try:
        check_writable_dir(path.parent)
    except OSError as e:
        raise DiagramError(f"--bode {path}: cannot write there: {e.strerror or e}",
                           file="--bode") from None


def bode(system, path, found):
    """The Bode plot (every input-output pair) into `path` (.png, .svg, .pdf), drawn by
    python-control from the response computed here; a SISO loop's margins (`found`, as
    `margins()` gives them; None: not marked) are marked and given in words as its title."""
    import control
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    rows, cols = 2 * system.noutputs, system.ninputs
    figure = Figure(figsize=(4 + 3 * cols, 1.5 + 2.2 * rows), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(rows, cols, sharex=True, squeeze=False)
    w = _grid(system, PLOT_SPAN, () if found is None else found[2:])
    G = Response(system).frequency(w)
    shown = np.all(np.isfinite(G) & (G != 0), axis=(1, 2))  # not a pole, nor below 1e-308
    data = control.FrequencyResponseData(np.moveaxis(G[shown], 0, -1), w[shown],
                                         dt=system.dt, name=system.name,
                                         inputs=system.input_labels,
                                         outputs=system.output_labels)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        control.bode_plot(data, ax=axes, dB=True, title=f"Bode plot: {system.name}",
                          display_margins=False)
    if found is not None:
        _mark(axes[:, 0], found)
        axes[0, 0].set_title("")
        figure.suptitle(f"{system.name}: {margins_text(found)}", fontsize=9)
    path = Path(path)
    with atomic_path(path) as tmp:
        figure.savefig(tmp, dpi=120)
    return path


def _mark(axes, found):
    """0 dB and -180 deg (of the plotted branch) as dashed lines, the gain margin as a bar
    from the magnitude to 0 dB at the phase crossover, the phase margin as a bar from the
    phase to -180 deg at the gain crossover, the crossover frequencies as dotted lines."""
    gm, pm, w180, wc = found
    x, phase = axes[1].get_lines()[0].get_data()
    turns = np.round((phase[len(phase) // 2] + 180) / 360)  # the branch near the middle
    axes[0].axhline(0, color="0.4", linestyle="--", linewidth=0.8)
    axes[1].axhline(360 * turns - 180, color="0.4", linestyle="--", linewidth=0.8)
    with np.errstate(divide="ignore"):
        marks = ((axes[0], w180, 20 * np.log10(gm)), (axes[1], wc, -pm))
    for ax, w, shift in marks:
        if not (np.isfinite(w) and np.isfinite(shift)):
            continue
        x, y = ax.get_lines()[0].get_data()
        at = float(np.interp(np.log(w), np.log(x), y))
        for a in axes:
            a.axvline(w, color="0.4", linestyle=":", linewidth=1)
        ax.plot([w, w], [at, at + shift], color="tab:red", linewidth=2)
