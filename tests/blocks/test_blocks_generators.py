"""Signal generators: the pulse train (edges, exact area over many periods through every
solver) and the chirp against its phase formula."""
import math
from fractions import Fraction

import numpy as np
import pytest
from harness import Rig

import blocksim
from blocksim.params import ParamError
from blocks.generators import Chirp, Pulse


def test_pulse_edges_and_levels():
    rig = Rig(Pulse, {"amplitude": 3, "period": 2, "width": 0.25, "delay": 1}).start(0.0)
    # rising at 1 + 2k, falling at 1 + 2k + 0.5; each edge announces the next one
    assert rig.block.events(0.0, 6.0) == (1.0,)
    assert rig.block.events(1.0, 6.0) == (1.5,)  # (start, stop]
    assert rig.block.events(5.6, 6.0) == ()
    assert rig.out(0.9) == 0.0
    t = 1.0
    for level, after in [(3.0, 1.5), (0.0, 3.0), (3.0, 3.5), (0.0, 5.0)]:
        rig.block.event(t)
        assert rig.out(t) == level, t  # right-continuous at every edge
        (t,) = rig.block.reschedule(t)
        assert t == after


@pytest.mark.parametrize("start, level", [(0.0, 1.0), (0.3, 0.0), (1.0, 1.0), (1.2, 1.0)])
def test_pulse_state_at_start(start, level):
    rig = Rig(Pulse, {"period": 1, "width": 0.25}).start(start)
    assert rig.out(start) == level


def test_pulse_edges_do_not_drift_over_many_periods():
    rig = Rig(Pulse, {"period": 0.1, "width": 0.3})
    edges = [rig.block.events(-1.0, 1000.0)[0]]
    for _ in range(19999):  # the 10000 periods starting at 0, edge after edge
        edges += rig.block.reschedule(edges[-1])
    # computed as k*period (+ width*period), never by accumulation: each edge is the float
    # nearest the decimal value k/10 (k + 0.3)/10, as the sample hits are
    np.testing.assert_array_equal(edges[0::2], [float(Fraction(k, 10)) for k in range(10000)])
    np.testing.assert_array_equal(edges[1::2],
                                  [float(Fraction(10 * k + 3, 100)) for k in range(10000)])


PULSE_SAMPLED = """
blocksim: 1
blocks:
  P: {type: pulse, period: 0.2, width: 0.5}
  Z: {type: zoh, period: 0.1}
wires: [P -> Z]
simulation: {stop: 3, output_interval: 0.1}
record: {p: P.y, z: Z.y}
"""


def test_pulse_edges_coincide_with_sample_hits(tmp_path):
    """A pulse of period 0.2 (high for 0.1) sampled every 0.1 s: its edges k*0.1 are sample
    hits, where the values after the edge hold (format.md, right-continuous), so pulse and
    zoh read 1, 0, 1, 0, ... at t = 0, 0.1, 0.2, ... (edges computed as k*0.1 in floats put
    0.30000000000000004 after the hit at 0.3, and the zoh sampled the value before it)."""
    path = tmp_path / "sampled.yaml"
    path.write_text(PULSE_SAMPLED)
    r = blocksim.run(path)
    expected = (np.arange(31) % 2 == 0).astype(float)  # high on [0.2k, 0.2k + 0.1)
    np.testing.assert_array_equal(r["p"], expected)
    np.testing.assert_array_equal(r["z"], expected)


PULSE_AREA = """
blocksim: 1
blocks:
  P: {type: pulse, amplitude: 2.5, period: 0.3, width: 0.37, delay: 0.05}
  I: {type: integrator}
wires: [P -> I]
simulation: {stop: 30.05, max_step: 1}
record: {area: I.y, p: P.y}
"""


@pytest.mark.parametrize("solver", ["rk45", "rk4", "euler", "bdf"])
def test_pulse_area_over_many_periods_is_exact(tmp_path, solver):
    path = tmp_path / "pulse.yaml"
    path.write_text(PULSE_AREA)
    r = blocksim.run(path, overrides={"simulation.solver": solver, "simulation.step": 0.7})
    # 100 whole periods after the delay, each of area amplitude*width*period
    assert r["area"][-1] == pytest.approx(100 * 2.5 * 0.37 * 0.3, rel=1e-12)
    # every edge is a recorded row: the steps land on them
    for k in (0, 57, 99):
        assert np.any(np.abs(r.t - (0.05 + k * 0.3)) < 1e-12)
        assert np.any(np.abs(r.t - (0.05 + (k + 0.37) * 0.3)) < 1e-12)


def test_pulse_width_must_be_a_fraction():
    for width in (0, 1, 1.5):
        with pytest.raises(ParamError) as e:
            Rig(Pulse, {"width": width})
        assert e.value.param == "width"


def test_chirp_against_its_phase_formula():
    a, f0, f1, t1 = 1.5, 0.2, 3.0, 4.0
    rig = Rig(Chirp, {"amplitude": a, "f0": f0, "f1": f1, "t1": t1})
    for t in np.linspace(0, 6, 37):  # also past t1: the sweep continues at the same rate
        phase = 2 * math.pi * (f0 * t + (f1 - f0) * t * t / (2 * t1))
        assert rig.out(t) == pytest.approx(a * math.sin(phase), abs=1e-12)


def test_chirp_instantaneous_frequency_sweeps_linearly():
    # zero crossings of sin(phi(t)) are where phi = k*pi; their spacing is 1/(2 f(t)), so the
    # local frequency from two neighbouring crossings near t1 must be close to f1
    f0, f1, t1 = 1.0, 5.0, 2.0
    rig = Rig(Chirp, {"f0": f0, "f1": f1, "t1": t1})
    t = np.linspace(1.8, 2.2, 40001)
    y = np.array([rig.out(s) for s in t])
    crossings = t[:-1][np.sign(y[:-1]) != np.sign(y[1:])]
    mids = 0.5 * (crossings[1:] + crossings[:-1])
    freq = 1 / (2 * np.diff(crossings))
    np.testing.assert_allclose(freq, f0 + (f1 - f0) * mids / t1, rtol=1e-3)
