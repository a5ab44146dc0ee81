"""Continuous blocks: rate limiter, derivative, state space, transfer function, and the
integrator's parameter checks.

Equations are checked on the hot path directly; time responses are integrated with scipy
and compared with closed forms derived by hand (or scipy.linalg.expm for the LTI case).
"""
import math

import numpy as np
import pytest
from harness import Rig
from scipy.linalg import expm

from blocksim.block import Block, PortError
from blocksim.params import ParamError
from blocks.continuous import Derivative, Integrator, RateLimiter, StateSpace, TransferFunction
from blocks.discrete_systems import DiscreteStateSpace, DiscreteTransferFunction

# ---- integrator ---------------------------------------------------------------------------
@pytest.mark.parametrize("params, bad", [
    ({"lower": 1, "upper": 0}, "upper"),
    ({"x0": 2, "upper": 1}, "x0"),  # x0 outside [lower, upper]
    ({"x0": [0, -2], "lower": [-1, -1]}, "x0"),
    ({"lower": [-1, -1], "upper": [1, 1, 1]}, "upper"),  # the limits do not broadcast
    ({"x0": [0, 0], "lower": [-1, -1, -1]}, "lower"),  # a limit that does not fit x0's shape
    ({"x0": [0, 0], "upper": [1, 1, 1]}, "upper"),
])
def test_integrator_parameter_errors(params, bad):
    with pytest.raises(ParamError) as e:
        Rig(Integrator, params, {"u": np.shape(params.get("x0", 0))})
    assert e.value.param == bad


# ---- rate limiter -------------------------------------------------------------------------


def test_rate_limiter_starts_at_its_input_and_clips_the_rate():
    rig = Rig(RateLimiter, {"rising": 2, "falling": -1}, {"u": ()})
    assert rig.block.ports()[1][0].feedthrough == ()
    rig.set(u=5).start(0.0)
    assert rig.y["y"] == 5.0  # y(0) = u(0)
    assert rig.set(u=10).derivative() == 2.0  # (10 - 5)/1e-3 = 5000, clipped to rising
    assert rig.set(u=0).derivative() == -1.0  # -5000, clipped to falling
    assert rig.set(u=5.0005).derivative() == pytest.approx(0.5)  # 0.0005/1e-3, inside limits


def test_rate_limiter_per_element_limits():
    rig = Rig(RateLimiter, {"rising": [1, np.inf], "falling": -3, "tau": 0.5}, {"u": (2,)})
    rig.start(0.0)  # u = 0: y = 0
    rig.set(u=[10, 10])
    np.testing.assert_array_equal(rig.derivative(), [1, 20])  # [clip(20, -3, 1), 10/0.5]


def test_rate_limiter_slew_then_settle():
    # u steps 0 -> 1 at t = 0+: y = 2t (slew) until (1 - y)/tau = 2, i.e. y = 1 - 2 tau at
    # t = 0.5 - tau, then y = 1 - 2 tau exp(-(t - 0.5 + tau)/tau).
    tau = 1e-3
    rig = Rig(RateLimiter, {"rising": 2, "falling": -1, "tau": tau}, {"u": ()}).start(0.0)
    rig.set(u=1)
    assert rig.integrate(0.25)[0] == pytest.approx(0.5, abs=1e-9)
    t = 0.5 + tau  # one time constant into the approach
    assert rig.integrate(t, 0.25)[0] == pytest.approx(1 - 2 * tau * math.exp(-2), abs=1e-8)
    # settled at 1 by t = 0.6 (2 tau exp(-100) away), then down at the falling rate
    assert rig.integrate(0.6, t)[0] == pytest.approx(1.0, abs=1e-9)
    rig.set(u=0)
    assert rig.integrate(0.8, 0.6)[0] == pytest.approx(0.8, abs=1e-9)  # 1 - 1*(0.8 - 0.6)


@pytest.mark.parametrize("params, bad", [
    ({"rising": 1, "falling": 1}, "falling"),
    ({"rising": -1, "falling": -1}, "rising"),
    ({"rising": 1, "falling": -1, "tau": 0}, "tau"),
])
def test_rate_limiter_parameter_errors(params, bad):
    with pytest.raises(ParamError) as e:
        Rig(RateLimiter, params, {"u": ()})
    assert e.value.param == bad


# ---- derivative ---------------------------------------------------------------------------


def test_derivative_equation():
    rig = Rig(Derivative, {"tau": 0.5}, {"u": (2,)})
    rig.x[:] = [2, 0]
    rig.set(u=[5, -1])
    np.testing.assert_array_equal(rig.out(), [6, -2])  # (u - x)/tau
    np.testing.assert_array_equal(rig.derivative(), [6, -2])


def test_derivative_of_a_ramp():
    # u = 3t + 1, x(0) = u(0): e = u - x obeys e' = 3 - e/tau, e(0) = 0, so
    # y = e/tau = 3 (1 - exp(-t/tau)).
    tau = 1e-3
    rig = Rig(Derivative, {"tau": tau}, {"u": ()}).set(u=1.0).start(0.0)
    assert rig.y["y"] == 0.0  # x(0) = u(0): no initial spike
    ramp = {"u": lambda t: 3 * t + 1}
    rig.integrate(2 * tau, inputs=ramp)
    assert rig.out(2 * tau) == pytest.approx(3 * (1 - math.exp(-2)), rel=1e-7)
    rig.integrate(0.1, 2 * tau, inputs=ramp)
    assert rig.out(0.1) == pytest.approx(3.0, rel=1e-7)  # the ramp's slope


def test_derivative_tau_must_be_positive():
    for tau in (0, -1):
        with pytest.raises(ParamError):
            Rig(Derivative, {"tau": tau}, {"u": ()})


# ---- state space --------------------------------------------------------------------------

A = [[0, 1], [-2, -3]]
B = [[0], [1]]
C = [[1, 0]]


def test_state_space_equations_without_feedthrough():
    rig = Rig(StateSpace, {"A": A, "B": B, "C": C, "D": 0}, {"u": (1,)})
    assert rig.block.ports()[1][0].feedthrough == ()  # D = 0
    assert rig.out_shapes == {"y": (1,)}
    np.testing.assert_array_equal(rig.x, [0, 0])  # x0 = 0 broadcast
    rig.x[:] = [1, 2]
    rig.set(u=[3])
    np.testing.assert_array_equal(rig.out(), [1])  # C x
    np.testing.assert_array_equal(rig.derivative(), [2, -5])  # [x2, -2 x1 - 3 x2 + u]


def test_state_space_with_feedthrough_and_x0():
    rig = Rig(StateSpace, {"A": A, "B": B, "C": C, "D": [[0.5]], "x0": [1, 2]}, {"u": (1,)})
    assert rig.block.ports()[1][0].feedthrough == ("u",)
    np.testing.assert_array_equal(rig.x, [1, 2])
    np.testing.assert_array_equal(rig.set(u=[3]).out(), [2.5])  # 1 + 0.5*3


def test_state_space_scalar_shorthands():
    rig = Rig(StateSpace, {"A": -1, "B": 1, "C": 2, "D": 0, "x0": 4}, {"u": (1,)})
    assert rig.out_shapes == {"y": (1,)}
    np.testing.assert_array_equal(rig.out(), [8])  # 2*4


@pytest.mark.parametrize("u, y", [((), ()), ((1,), (1,))])
def test_one_input_takes_a_scalar_and_one_output_follows_its_form(u, y):
    """Simulink expands a scalar into a one-input system: u () or (1,); with one output y
    has u's form. x' = -x + u, y = 2x + 0.5u at x = 4, u = 3: x' = -1, y = 9.5."""
    rig = Rig(StateSpace, {"A": -1, "B": 1, "C": 2, "D": 0.5, "x0": 4}, {"u": u})
    assert rig.out_shapes == {"y": y}
    rig.set(u=3.0)
    np.testing.assert_array_equal(rig.out(), np.full(y, 9.5))
    np.testing.assert_array_equal(rig.derivative(), [-1.0])


def test_one_input_several_outputs_and_wrong_input_shapes():
    rig = Rig(StateSpace, {"A": -1, "B": 1, "C": [[1], [2]], "D": 0, "x0": 1}, {"u": ()})
    assert rig.out_shapes == {"y": (2,)}
    np.testing.assert_array_equal(rig.out(), [1, 2])
    with pytest.raises(PortError, match=r"one input .* scalar or a \(1,\) vector, got shape \(2,\)"):
        Rig(StateSpace, {"A": -1, "B": 1, "C": 1, "D": 0}, {"u": (2,)})


LINEAR = [  # one of each linear type, a scalar u into each; s: the state set before the step
    (StateSpace, {"A": [[-0.3, 1.7, 0.1], [-2.2, -0.9, 0.4], [0.6, 0.05, -1.3]],
                  "B": [0.7, -1.1, 0.35], "C": [[1.3, -0.45, 2.1]], "D": 0.15}),
    (TransferFunction, {"num": [0.3, 1.1, -2.0, 0.7], "den": [1.7, 0.9, 3.1, 0.45]}),
    (DiscreteStateSpace, {"A": [[0.9, 0.13], [-0.21, 0.7]], "B": [1.1, 0.37],
                          "C": [[1.3, 2.9]], "D": 0, "period": 0.1}),
    (DiscreteTransferFunction, {"num": [0.2, -0.5, 0.1], "den": [1, -0.4, 0.25],
                                "period": 0.1}),
]


@pytest.mark.parametrize("cls, params", LINEAR, ids=[cls.type for cls, _ in LINEAR])
def test_linear_systems_are_written_once_and_give_numpys_products_to_the_bit(cls, params):
    """y = C s + D u and s' = A s + B u (the next state of a discrete one) are their declared
    behaviour, no method of their own (both modes and the Jacobian come from the texts); the
    scalar u is read as one element. Second algorithm: numpy's matmul on the realisation."""
    for method in ("output", "derivative", "update", "initialize", "lower", "jacobian"):
        assert getattr(cls, method) is getattr(Block, method), method
    rig = Rig(cls, params, {"u": ()} if "B" in params else {})
    assert rig.out_shapes == {"y": ()}
    discrete = rig.block.sample is not None
    s = rig.xd if discrete else rig.x
    s[:] = np.linspace(-1.3, 2.9, s.size) / 3  # values that round
    v, u = rig.block.v, np.array([0.83])
    y = np.matmul(v.C, s) + np.matmul(v.D, u) if v.D.any() else np.matmul(v.C, s)
    after = np.matmul(v.A, s) + np.matmul(v.B, u)
    assert rig.set(u=u[0]).out().tobytes() == y.tobytes()
    if discrete:
        rig.block.update(0.0)
    assert (s if discrete else rig.derivative()).tobytes() == after.tobytes()
    j = rig.block.jacobian()
    for got, want in zip((j.A, j.B, j.C, j.D), (v.A, v.B, v.C, v.D)):
        np.testing.assert_array_equal(got, want)


def test_state_space_step_response_matches_the_matrix_exponential():
    # Constant u: x(t) = e^{At} x0 + A^-1 (e^{At} - I) B u.
    a, b = np.array(A, float), np.array(B, float)
    x0, u, t = np.array([1.0, -1.0]), np.array([2.0]), 1.3
    rig = Rig(StateSpace, {"A": A, "B": B, "C": C, "D": 0, "x0": x0}, {"u": (1,)}).set(u=u)
    expected = expm(a * t) @ x0 + np.linalg.solve(a, (expm(a * t) - np.eye(2)) @ b @ u)
    np.testing.assert_allclose(rig.integrate(t), expected, atol=1e-8)


@pytest.mark.parametrize("params, bad", [
    ({"A": [[1, 2, 3]], "B": B, "C": C, "D": 0}, "A"),
    ({"A": A, "B": [[1], [2], [3]], "C": C, "D": 0}, "B"),
    ({"A": A, "B": B, "C": [[1, 0, 0]], "D": 0}, "C"),
    ({"A": A, "B": B, "C": C, "D": [[1, 2]]}, "D"),
    ({"A": A, "B": B, "C": C, "D": 0, "x0": [1, 2, 3]}, "x0"),
])
def test_state_space_parameter_errors(params, bad):
    with pytest.raises(ParamError) as e:
        Rig(StateSpace, params)
    assert e.value.param == bad


# ---- transfer function --------------------------------------------------------------------

S = [0.3 + 1j, -2 + 0.5j, 5j, 10.0]


def _frequency_response(block, s):
    """C (sI - A)^-1 B + D of the block's realisation (its run data)."""
    v = block.v
    n = v.A.shape[0]
    return (v.C @ np.linalg.solve(s * np.eye(n) - v.A, v.B) + v.D)[0, 0]


@pytest.mark.parametrize("num, den", [
    ([1, 3], [1, 3, 2]),  # strictly proper, order 2
    ([2, 1], [1, 3]),  # biproper: D = 2
    ([4], [2, 6, 4]),  # non-monic denominator
    ([0, 0, 1], [0, 1, 1]),  # leading zeros: 1/(s + 1)
    ([1, 0, 0, 5], [1, 2, 3, 4]),  # order 3, biproper
])
def test_transfer_function_realisation_gives_back_num_over_den(num, den):
    block = Rig(TransferFunction, {"num": num, "den": den}).block
    for s in S:
        assert _frequency_response(block, s) == pytest.approx(
            np.polyval(num, s) / np.polyval(den, s), rel=1e-12)


def test_transfer_function_feedthrough_only_when_biproper():
    strictly = Rig(TransferFunction, {"num": [1], "den": [1, 1]})
    assert strictly.block.ports()[1][0].feedthrough == ()
    biproper = Rig(TransferFunction, {"num": [2, 1], "den": [1, 3]})
    assert biproper.block.ports()[1][0].feedthrough == ("u",)
    biproper.x[:] = [1.0]
    # (2s + 1)/(s + 3) = 2 + (-5)/(s + 3): A = -3, B = 1, C = -5, D = 2
    assert biproper.set(u=0.5).out() == pytest.approx(-5 * 1.0 + 2 * 0.5)


def test_transfer_function_pure_gain_has_no_state():
    rig = Rig(TransferFunction, {"num": [3], "den": [2]})
    assert rig.x.size == 0
    assert rig.set(u=4).out() == 6.0  # 3/2 * 4


def test_transfer_function_step_response():
    # 1/(s + 1) from rest, unit step: y = 1 - exp(-t)
    rig = Rig(TransferFunction, {"num": [1], "den": [1, 1]}).set(u=1.0)
    rig.integrate(1.0)
    assert rig.out(1.0) == pytest.approx(1 - math.exp(-1), abs=1e-9)


@pytest.mark.parametrize("num, den, bad", [
    ([1, 0, 0], [1, 1], "num"),  # improper
    ([1], [0, 0], "den"),  # zero denominator
    ([[1, 2]], [1, 1], "num"),  # not a vector
])
def test_transfer_function_parameter_errors(num, den, bad):
    with pytest.raises(ParamError) as e:
        Rig(TransferFunction, {"num": num, "den": den})
    assert e.value.param == bad


def test_transfer_function_realisation_that_overflows_is_refused_at_load():
    """num/den = 1e300/(1e-300 s + 1): b0's num[0]/den[0] overflows float64 (1e600), so the
    declared realisation (tf_texts) is refused naming den, not left to fail at t = 0."""
    with pytest.raises(ParamError, match="overflow") as e:
        Rig(TransferFunction, {"num": [1e300], "den": [1e-300, 1]})
    assert e.value.param == "den"
