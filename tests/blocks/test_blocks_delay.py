"""transport_delay: its history (cubic pieces from three samples per step, segments at
breakpoints, old pieces dropped) driven by hand as the simulator drives it, then whole runs
through the solvers: a delayed sine against sin(w(t - delay)) and a delayed step whose edge
lands exactly `delay` later."""
import numpy as np
import pytest
from harness import Rig

import blocksim
from blocksim.params import ParamError
from blocks.delay import TransportDelay


def feed(rig, f, t0, t1):
    """What the simulator does after an accepted step [t0, t1]: u at t0 + h/3, t0 + 2h/3, t1."""
    h = t1 - t0
    for t in (t0 + h / 3, t0 + 2 * h / 3, t1):
        rig.set(u=f(t))
        assert rig.block.remember(t) == ()


def started(delay, f, shape=(), x0=0.0):
    rig = Rig(TransportDelay, {"delay": delay, "x0": x0}, {"u": shape})
    rig.block.initialize(0.0)
    rig.set(u=f(0.0))
    assert rig.block.remember(0.0) == ()  # the start: the first sample, no breakpoint
    return rig


def test_before_start_plus_delay_outputs_x0_then_u_delayed():
    rig = started(0.5, np.sin, x0=7.0)
    assert rig.block.events(0.0, 10.0) == (0.5,)  # the jump from x0 to u(0) is landed on
    assert rig.block.events(0.0, 0.4) == ()
    assert rig.out(0.3) == 7.0
    for a, b in zip(np.arange(0, 2, 0.1), np.arange(0.1, 2.05, 0.1)):
        feed(rig, np.sin, a, b)
    rig.block.event(0.5)
    assert rig.out(0.5) == 0.0  # u(0) = sin 0, exactly (the first sample)
    assert rig.out(1.7) == pytest.approx(np.sin(1.2), abs=1e-6)


def test_pieces_are_cubic_accurate_not_linear():
    w, h = 3.0, 0.05
    rig = started(0.5, lambda t: np.sin(w * t))
    grid = np.arange(0, 5.0001, h)
    for a, b in zip(grid[:-1], grid[1:]):
        feed(rig, lambda t: np.sin(w * t), a, b)
    rig.block.event(0.5)
    t = np.linspace(0.5, 5.0, 997)
    err = np.max(np.abs([rig.out(s) - np.sin(w * (s - 0.5)) for s in t]))
    # cubic interpolation on nodes h/3 apart: |error| <= max|d4u/dt4| (h/3)^4 / 4! times the
    # maximum of |r(r-1)(r-2)(r-3)| on [0, 3], which is 1 (at r = 3/2 +- sqrt(5)/2); a straight
    # line between the accepted steps would be off by up to w^2 h^2 / 8 = 2.8e-3
    bound = w ** 4 * (h / 3) ** 4 / 24
    assert err <= bound
    assert err < 1e-3 * w ** 2 * h ** 2 / 8


def test_a_jump_at_an_event_is_a_breakpoint_announced_delay_later():
    before, after = (lambda t: 0.0), (lambda t: 2.0)
    rig = started(0.4, before)
    for a in np.arange(0, 1.0 - 1e-12, 0.25):
        feed(rig, before, a, a + 0.25)  # the steps land on 1.0 (a source switch)
    rig.set(u=2.0)
    assert rig.block.remember(1.0) == (1.4,)  # the value after the event: a jump
    rig.set(u=2.0)
    assert rig.block.remember(1.0) == ()  # reported once
    for a in np.arange(1.0, 2.0 - 1e-12, 0.25):
        feed(rig, after, a, a + 0.25)
    rig.block.event(0.4)  # the start's segment
    # up to the breakpoint's echo the output reads the old segment, even a rounding past it
    assert rig.out(1.4) == 0.0 and rig.out(np.nextafter(1.4, 2.0)) == 0.0
    rig.block.event(1.4)
    assert rig.out(1.4) == 2.0  # right-continuous after the echo
    assert rig.out(1.9) == 2.0


def test_vector_signal_and_old_pieces_dropped():
    f = lambda t: np.array([np.sin(t), np.cos(2 * t)])  # noqa: E731
    rig = started(0.3, f, shape=(2,))
    history = rig.block._history
    grid = np.arange(0, 30.0001, 0.01)
    for a, b in zip(grid[:-1], grid[1:]):
        feed(rig, f, a, b)
    rig.block.event(0.3)
    np.testing.assert_allclose(rig.out(29.9), f(29.6), atol=1e-9)
    assert history.count < 600 and history.base > 2000  # memory stays bounded


@pytest.mark.parametrize("delay", [0, -1])
def test_delay_must_be_positive(delay):
    with pytest.raises(ParamError) as e:
        Rig(TransportDelay, {"delay": delay}, {"u": ()})
    assert e.value.param == "delay"
