"""What a scope draws, against closed forms: smooth curves from the solver's dense output
(no polygon of the solver's steps) and discrete signals as stairs with vertical edges."""
from pathlib import Path

import numpy as np
import pytest

import blocks.sinks
import blocksim

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def drawn(monkeypatch, tmp_path):
    """Run a diagram with plots; {block name: figure} as the sinks saved them."""
    saved = {}
    monkeypatch.setattr(blocks.sinks, "_save",
                        lambda block, run, fig: saved.__setitem__(block.name, fig))

    def run(path, overrides=None):
        blocksim.run(path, overrides=overrides, out=tmp_path / "out", plots=True)
        return saved
    return run


def polyline(line):
    """A drawn line as the function a reader sees: linear between its points."""
    x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
    return lambda t: np.interp(t, x, y)


def test_msd_velocity_is_drawn_as_a_smooth_curve(drawn):
    # msd: x'' + 0.4 x' + 4 x = F, F a unit step at t = 1, from rest. With wn = 2,
    # s = zeta*wn = 0.2, wd = sqrt(wn^2 - s^2): v(t) = exp(-s tau) sin(wd tau) / wd, tau = t - 1.
    fig = drawn(ROOT / "diagrams" / "msd.yaml")["Scope"]
    line = fig.axes[1].lines[0]
    assert len(line.get_xdata()) >= 1000
    wd = np.sqrt(4 - 0.04)
    t = np.linspace(1, 20, 20001)
    exact = np.exp(-0.2 * (t - 1)) * np.sin(wd * (t - 1)) / wd
    # drawn from the 167 accepted steps, the polygon is off by 3.3e-3 near the peaks
    assert np.abs(polyline(line)(t) - exact).max() < 2e-4


def test_a_discrete_signal_is_drawn_as_stairs(drawn, tmp_path):
    path = tmp_path / "zoh.yaml"
    path.write_text("""blocksim: 1
blocks:
  C: {type: clock}
  Hold: {type: zoh, period: 0.25}
  S: {type: scope, inputs: 2}
wires: [C -> Hold, Hold -> S.u1, C -> S.u2]
simulation: {stop: 2}
""")
    fig = drawn(path)["S"]
    held = polyline(fig.axes[0].lines[0])
    k = np.arange(8)
    # between hits the line is flat at the value sampled at the hit: u(t_k) = t_k = k/4
    for frac in (0.01, 0.5, 0.99):
        np.testing.assert_allclose(held((k + frac) / 4), k / 4, atol=1e-12)
    x = np.asarray(fig.axes[0].lines[0].get_xdata())
    for tk in k[1:] / 4:  # a vertical edge at every hit: two points at t_k
        assert np.count_nonzero(np.abs(x - tk) < 1e-12) >= 2, tk
