"""Discrete LTI blocks against scipy.signal.dlsim, the discrete integrator against its three
recursions written out by hand (Simulink's Discrete-Time Integrator with initial output x0)."""
import numpy as np
import pytest
from harness import Rig
from scipy import signal

import blocksim
from blocksim.block import Sample
from blocksim.params import ParamError
from blocks.discrete_systems import (DiscreteIntegrator, DiscreteStateSpace,
                                     DiscreteTransferFunction)

T = 0.1
U = np.sin(0.7 * np.arange(30)) + 0.3 * np.cos(2.1 * np.arange(30))  # an arbitrary input


def drive(rig, inputs):
    return rig.hits(T, inputs)


@pytest.mark.parametrize("num, den, x0", [
    ([0.5, 0.2], [1, -0.6, 0.08], [0.0, 0.0]),        # strictly proper: no feedthrough
    ([1, -0.3, 0.1], [1, -1.2, 0.52], [1.0, -2.0]),   # biproper: feedthrough, initial state
    ([0, 0, 2], [2, 0.5], [0.3]),                      # leading zeros of num are dropped
])
def test_discrete_transfer_function_against_dlsim(num, den, x0):
    rig = Rig(DiscreteTransferFunction, {"num": num, "den": den, "period": T, "x0": x0})
    assert rig.block.sample == Sample(T)
    y = drive(rig, U)
    # scipy realises tf in the same controllable canonical form, so x0 means the same there
    _, expected = signal.dlsim((np.trim_zeros(num, "f"), den, T), U, x0=x0)
    np.testing.assert_allclose(y, expected[:, 0], rtol=1e-12, atol=1e-12)
    direct = len(np.trim_zeros(np.asarray(num, float), "f")) == len(den)
    assert rig.block.ports()[1][0].feedthrough == (("u",) if direct else ())


def test_discrete_state_space_against_dlsim():
    A = [[0.9, 0.1], [-0.2, 0.7]]
    B = [[1.0, 0.0], [0.5, 1.0]]
    C = [[1.0, 2.0], [0.0, 1.0], [1.0, 0.0]]
    D = [[0.0, 0.1], [0.0, 0.0], [0.2, 0.0]]
    x0 = [1.0, -1.0]
    u = np.column_stack([U, np.cos(0.3 * np.arange(len(U)))])
    rig = Rig(DiscreteStateSpace, {"A": A, "B": B, "C": C, "D": D, "period": T, "x0": x0})
    assert rig.out_shapes == {"y": (3,)}
    y = drive(rig, u)
    _, expected, _ = signal.dlsim((A, B, C, D, T), u, x0=x0)
    np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-12)


def test_discrete_state_space_before_first_hit_outputs_C_x0():
    rig = Rig(DiscreteStateSpace, {"A": 0.5, "B": 1, "C": 3, "D": 1, "period": 1, "x0": 2},
              {"u": (1,)})
    rig.set(u=[10.0]).start(0.5, hit=False)  # the run starts between hits
    np.testing.assert_array_equal(rig.y["y"], [6.0])  # C x0 = 3*2, u not yet sampled
    np.testing.assert_array_equal(rig.hit(1.0), [16.0])  # C x0 + D u = 6 + 10


def test_discrete_state_space_takes_a_scalar_into_one_input():
    """A scalar input of a one-input, one-output system (issue 23 item 7): y is a scalar and
    equals scipy.signal.dlsim's response."""
    A, B, C, D = [[0.5, 0.2], [0.0, 0.8]], [[1.0], [0.5]], [[1.0, 1.0]], 0.2
    rig = Rig(DiscreteStateSpace, {"A": A, "B": B, "C": C, "D": D, "period": T, "x0": [1, 0]},
              {"u": ()})
    assert rig.out_shapes == {"y": ()}
    y = drive(rig, U)
    _, expected, _ = signal.dlsim((A, B, C, [[D]], T), U, x0=[1, 0])
    np.testing.assert_allclose(y, expected[:, 0], rtol=1e-12, atol=1e-12)


def integrator_recursion(u, K, T, method, x0, lower=-np.inf, upper=np.inf):
    """Simulink's equations: y(0) = x0; n >= 1: FE y(n) = y(n-1) + K T u(n-1),
    BE y(n) = y(n-1) + K T u(n), trapezoidal y(n) = y(n-1) + K T (u(n) + u(n-1))/2, clipped."""
    y = [min(max(x0, lower), upper)]
    for n in range(1, len(u)):
        step = {"forward_euler": u[n - 1], "backward_euler": u[n],
                "trapezoidal": 0.5 * (u[n] + u[n - 1])}[method]
        y.append(min(max(y[-1] + K * T * step, lower), upper))
    return np.array(y)


@pytest.mark.parametrize("method", ["forward_euler", "backward_euler", "trapezoidal"])
def test_discrete_integrator_methods(method):
    rig = Rig(DiscreteIntegrator, {"K": 2.0, "period": T, "method": method, "x0": 0.5},
              {"u": ()})
    y = drive(rig, U)
    np.testing.assert_allclose(y, integrator_recursion(U, 2.0, T, method, 0.5), rtol=1e-13)
    assert rig.block.ports()[1][0].feedthrough == (() if method == "forward_euler" else ("u",))


@pytest.mark.parametrize("method", ["forward_euler", "backward_euler", "trapezoidal"])
def test_discrete_integrator_limits(method):
    u = np.r_[np.ones(15), -np.ones(15)] * 3.0  # drives into the upper limit, then back down
    rig = Rig(DiscreteIntegrator, {"period": T, "method": method, "lower": -0.5, "upper": 1.0},
              {"u": ()})
    y = drive(rig, u)
    expected = integrator_recursion(u, 1.0, T, method, 0.0, -0.5, 1.0)
    np.testing.assert_allclose(y, expected, rtol=1e-13)
    assert y.max() == 1.0 and y.min() == -0.5  # both limits reached and held
    # leaving the limit starts at once (no windup): the first step down is a full step
    k = int(np.argmax(u < 0))
    assert y[k + 1] < 1.0


def test_discrete_integrator_vector_and_parameter_errors():
    rig = Rig(DiscreteIntegrator, {"period": 1, "x0": [1, 2], "K": [1, -1]})
    y = drive(rig, np.ones((3, 2)))
    np.testing.assert_array_equal(y, [[1, 2], [2, 1], [3, 0]])  # forward Euler, T = 1
    with pytest.raises(ParamError) as e:
        Rig(DiscreteIntegrator, {"period": 1, "lower": 1, "upper": 0}, {"u": ()})
    assert e.value.param == "upper"


@pytest.mark.parametrize("params, bad", [
    ({"num": [1], "den": [0, 1, 0.5], "period": 1}, "den"),  # leading zero in den
    ({"num": [1, 2, 3], "den": [1, 0.5], "period": 1}, "num"),  # improper
    ({"num": [1], "den": [0, 0], "period": 1}, "den"),
    ({"num": [1], "den": [1, 0.5], "period": 0}, "period"),
    ({"num": [1], "den": [1, 0.5, 0.1], "period": 1, "x0": [1, 2, 3]}, "x0"),
])
def test_discrete_transfer_function_parameter_errors(params, bad):
    with pytest.raises(ParamError) as e:
        Rig(DiscreteTransferFunction, params)
    assert e.value.param == bad


OFFSET_CASES = {  # block -> its parameters besides period and offset (input: the constant 1)
    "discrete_integrator": "{K: 1}",
    "discrete_transfer_function": "{num: [1], den: [1, -1]}",   # y[k] = y[k-1] + u[k-1]
    "discrete_state_space": "{A: 1, B: 1, C: 1, D: 0}",          # the same accumulator
    "unit_delay": "{}",
    "zoh": "{}",
    "pid": "{Kp: 0, Ki: 1}",                                      # forward-Euler integral
    "noise": "{power: 1, seed: 3}",
    "random": "{seed: 3}",
}


@pytest.mark.parametrize("block", sorted(OFFSET_CASES))
def test_discrete_blocks_act_at_offset_plus_k_period(block, tmp_path):
    """Simulink's sample time [period, offset] (blocks.md: hits at offset + k*period): with
    period 0.1 and offset 0.05 every change of y happens at a hit 0.05 + 0.1k, none before
    0.05. The accumulators (forward Euler, 1/(z-1) realised two ways, PI's integral) give
    y = 0.1*n (integrator, pid: K*T per hit) or n (transfer function, state space) after the
    n-th hit after the first, the delay and hold 1 from the first or second hit."""
    inputs = "" if block in ("noise", "random") else "  One: {type: constant, value: 1}\n"
    wire = "" if block in ("noise", "random") else "  - One -> B\n"
    out = "u" if block == "pid" else "y"  # the pid's ports are e -> u
    extra = OFFSET_CASES[block][1:-1]
    params = "period: 0.1, offset: 0.05" + (f", {extra}" if extra else "")
    path = tmp_path / "d.yaml"
    path.write_text(f"blocksim: 1\nblocks:\n{inputs}  B: {{type: {block}, {params}}}\n"
                    + (f"wires:\n{wire}" if wire else "")
                    + f"simulation: {{stop: 1, output_interval: 0.01}}\nrecord: {{y: B.{out}}}\n")
    r = blocksim.run(str(path))
    t, y = r.t, r["y"].reshape(len(r.t))
    changed = t[1:][np.diff(y) != 0]
    hits = 0.05 + 0.1 * np.round((changed - 0.05) / 0.1)
    np.testing.assert_allclose(changed, hits, atol=1e-12)  # only at hits
    assert np.all(y[t < 0.05] == y[0]) and len(changed) >= 1
    if block in ("noise", "random"):  # a fresh draw at every hit: a change at each of them
        np.testing.assert_allclose(changed, 0.05 + 0.1 * np.arange(10), atol=1e-12)
    n = np.floor((t - 0.05) / 0.1 + 1e-9)  # hits after the first one, at t >= 0.05
    expected = {"discrete_integrator": 0.1 * np.maximum(n, 0),
                "pid": 0.1 * np.maximum(n, 0),
                "discrete_transfer_function": np.maximum(n, 0),
                "discrete_state_space": np.maximum(n, 0),
                "unit_delay": (n >= 1).astype(float),
                "zoh": (n >= 0).astype(float)}.get(block)
    if expected is not None:
        np.testing.assert_allclose(y, expected, atol=1e-12)
