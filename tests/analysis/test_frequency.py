"""What a linear model says (analysis/frequency.py, response.py) against values derived by
hand and python-control's own on well-conditioned transfer functions: stability margins
(none where the loop has no crossover, where python-control's polynomials gave a margin
of 4.5e15 at 6.7e7 rad/s; a 200-state loop, where they failed), the DC gain (exactly 0,
where a limit gave 2.15e-7; signed infinities of integrators), the zeros of a badly scaled
model."""
import warnings

import control
import numpy as np
import pytest
import scipy.optimize

from blocksim.analysis import frequency
from loops import chain

S = control.tf("s")


def pc_margin(L):
    """python-control's own margin of a transfer function (its polynomial method)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [float(v) for v in control.margin(L)]


@pytest.mark.parametrize("L", [
    # K/(s(s+1)(s+2)), by hand: the phase is -180 deg at w^2 = 2, where |L| = K/6: gm 3
    2 / (S * (S + 1) * (S + 2)),
    # 10/(s+1)^2: |L| = 1 at 1 + w^2 = 10, w = 3; phase -2 atan 3: pm 36.87 deg; no gm
    10 / (S + 1) ** 2,
    # the PID and motor loop of diagrams/pid_motor.yaml
    (8 + 5 / S + 2.5 * 50 * S / (S + 50)) * 2 / (0.5 * S + 1) / S,
    # discrete: 0.3/(z(z - 1)) and 0.5/(z(z - 0.5)) at 0.1 s
    control.tf([0.3], [1, -1, 0], 0.1), control.tf([0.5], [1, -0.5, 0], 0.1),
], ids=["3rd order", "no phase crossover", "pid motor", "discrete integrator", "discrete"])
def test_margins_equal_python_controls_on_well_conditioned_loops(L):
    found = frequency.margins(control.ss(L))
    want = pc_margin(L)
    np.testing.assert_allclose(found, want, rtol=1e-9, equal_nan=True)


def test_margins_worked_out_by_hand():
    gm, pm, w180, wc = frequency.margins(control.ss(2 / (S * (S + 1) * (S + 2))))
    assert (gm, w180) == (pytest.approx(3.0, rel=1e-12), pytest.approx(np.sqrt(2), rel=1e-12))
    gm, pm, w180, wc = frequency.margins(control.ss(10 / (S + 1) ** 2))
    assert np.isinf(gm) and np.isnan(w180)
    assert (pm, wc) == (pytest.approx(180 - 2 * np.degrees(np.arctan(3)), rel=1e-12),
                        pytest.approx(3.0, rel=1e-12))
    # a discrete loop whose phase reaches -180 deg at the Nyquist frequency pi/T: 1.5/(z + 0.5)
    # is -3 at z = -1, a gain margin of 1/3 (the closed loop's pole is at z = -2); python-control
    # finds none
    gm, _, w180, _ = frequency.margins(control.ss(control.tf([1.5], [1, 0.5], 0.1)))
    assert (gm, w180) == (pytest.approx(1 / 3, rel=1e-12), pytest.approx(np.pi / 0.1))
    assert np.isinf(pc_margin(control.tf([1.5], [1, 0.5], 0.1))[0])


def test_a_loop_without_crossover_has_infinite_margins_not_rounding_artefacts():
    # 1/(s + 1)^2: |L| < 1 for w > 0 and the phase -2 atan(w) only tends to -180 deg: neither
    # crossing exists. python-control, on the state space, found a phase crossover in the
    # rounding of its polynomials ('gain margin 4.5e15 at 6.7e7 rad/s').
    L = control.ss(1 / (S + 1) ** 2)
    assert pc_margin(L)[0] > 1e15
    gm, pm, w180, wc = frequency.margins(L)
    assert np.isinf(gm) and np.isinf(pm) and np.isnan(w180) and np.isnan(wc)
    # a loop of gains alone (python-control: no time base, which is not a discrete one)
    assert frequency.margins(control.ss([], [], [], [[2.0]]))[:2] == (np.inf, np.inf)
    assert frequency.margins_text((gm, pm, w180, wc)) == (
        "gain margin inf (the phase never reaches -180 deg); phase margin inf (the gain "
        "never crosses 1)")


def test_the_margins_of_a_200_state_loop_are_its_closed_form():
    a, L = chain()
    with pytest.raises(np.linalg.LinAlgError):  # python-control: its polynomials overflow
        pc_margin(L)
    gm, pm, w180, wc = frequency.margins(L)
    # by hand: |L| = 2 prod 1/sqrt(1 + (w/a_k)^2), phase -sum atan(w/a_k); the phase crosses
    # -180 deg (mod 360) where sum atan(w/a_k) = (2j + 1) pi; python-control's choice of
    # several: the gain margin nearest 1 in log, the phase margin smallest in size
    magnitude = lambda w: 2 * np.prod(1 / np.sqrt(1 + (w / a) ** 2))  # noqa: E731
    turn = lambda w: np.sum(np.arctan(w / a))  # noqa: E731
    crossings = [scipy.optimize.brentq(lambda w: turn(w) - (2 * j + 1) * np.pi, 1e-3, 1e4)
                 for j in range(int((turn(1e4) / np.pi - 1) // 2) + 1)]
    with np.errstate(divide="ignore"):  # far out |L| underflows: an infinite margin
        margins = np.array([1 / magnitude(w) for w in crossings])
    k = np.argmin(np.abs(np.log(margins)))
    assert gm == pytest.approx(margins[k], rel=1e-9)
    assert w180 == pytest.approx(crossings[k], rel=1e-9)
    w1 = scipy.optimize.brentq(lambda w: magnitude(w) - 1, 1e-3, 10)
    assert wc == pytest.approx(w1, rel=1e-9)
    assert pm == pytest.approx(np.remainder(-np.degrees(turn(w1)), 360) - 180, abs=1e-7)


def test_a_dc_gain_that_is_zero_is_zero_and_integrators_are_signed_infinities():
    # a cart-pole linearised about upright (states: cart velocity, position, pole rate,
    # angle; M = 1, m = 0.1, l = 0.5, g = 9.81): x'' = F - 0.981 th, th'' = 21.582 th - 2 F.
    # By hand: the position from F has a double pole at 0 (+inf: x'' ~ F for small s); the
    # pole rate th' = -2 s F/(s^2 - 21.582) is 0 at s = 0, exactly. The limit the DC gain
    # took at s = 1e-6 |pole|/2 gave 2.15e-7 for it.
    A = [[0, 0, 0, -0.981], [1, 0, 0, 0], [0, 0, 0, 21.582], [0, 0, 1, 0]]
    system = control.ss(A, [[1], [0], [-2], [0]], [[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], 0)
    np.testing.assert_allclose(frequency.dc_gain(system), [[np.inf], [0.0], [2 / 21.582]],
                               rtol=1e-14, atol=0)
    # -1/s^2 tends to -inf; 1/s - 1/s = 0 structurally shared is finite: 1/(s + 1) + 1/s - 1/s
    assert frequency.dc_gain(control.ss(-1 / S**2)) == [[-np.inf]]
    both = control.ss([[0, 0], [0, -1]], [[1], [1]], [[1, 1], [-1, 0]], 0)  # two outputs
    np.testing.assert_array_equal(frequency.dc_gain(both), [[np.inf], [-np.inf]])
    # a discrete integrator T/(z - 1) and a lag 0.5/(z - 0.5): inf and 1
    np.testing.assert_array_equal(frequency.dc_gain(control.ss(control.tf([0.1], [1, -1], 0.1))),
                                  [[np.inf]])
    assert frequency.dc_gain(control.ss(control.tf([0.5], [1, -0.5], 0.1))) == [[1.0]]
    # the msd: 1/(m s^2 + c s + k) at 0 is 1/k
    msd = control.ss(1 / (S**2 + 0.4 * S + 4))
    assert frequency.dc_gain(msd) == [[pytest.approx(0.25, rel=1e-15)]]


def test_the_zeros_of_a_badly_scaled_model_keep_their_digits():
    # a 1e4 s delay (Padé, order 10) after a lag: the approximation is all-pass, num(s) =
    # den(-s), so every zero is a pole of the delay mirrored; unbalanced, python-control's
    # zeros of it were off by 19 %
    T, n = 1e4, 10
    num, den = control.pade(1.0, n)
    delay = control.ss(control.tf(num, den))  # in p = T s: scaled below
    delay = control.ss(delay.A / T, delay.B / T, delay.C, delay.D)
    loop = control.series(control.ss(-1, 1, 0.5, 0), delay)
    mirrored = -np.sort_complex(delay.poles())
    zeros = frequency.zeros(loop)
    assert len(zeros) == n
    assert max(np.min(np.abs(z - mirrored)) / abs(z) for z in zeros) < 1e-9
