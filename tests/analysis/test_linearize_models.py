"""blocksim.linearize against models derived by hand: the mass-spring-damper's matrices and
transfer function, the PID and DC motor loop against the product C(s)G(s) built with
python-control (and its margins), a saturating loop inside and outside its limit, a
discrete PI loop against the hand-built loop with python-control's c2d of the plant, a
delayed loop against the Padé approximation, a mixed diagram in continuous time."""
from pathlib import Path

import control
import numpy as np
import pytest

import blocksim
from blocksim.analysis import frequency
from loops import CARTPOLE, loop

ROOT = Path(__file__).resolve().parents[2]
MSD = ROOT / "diagrams" / "msd.yaml"
PID_MOTOR = ROOT / "diagrams" / "pid_motor.yaml"
S = control.tf("s")


def response(system, w):
    """The frequency response at the angular frequencies w (rad/s), one SISO channel."""
    return np.array([complex(system(1j * wi if system.isctime() else np.exp(1j * wi * system.dt)))
                     for wi in w])


W = np.logspace(-2, 2, 17)


def test_msd_matrices_and_transfer_function_are_the_hand_derived_ones():
    m, c, k = 1.0, 0.4, 4.0  # diagrams/msd.yaml's parameters
    sys = blocksim.linearize(MSD, inputs=["Force.y"], outputs=["Position.y", "Velocity.y"])
    # states Velocity v, Position x: m v' = F - c v - k x, x' = v
    np.testing.assert_array_equal(sys.A, [[-c / m, -k / m], [1, 0]])
    np.testing.assert_array_equal(sys.B, [[1 / m], [0]])
    np.testing.assert_array_equal(sys.C, [[0, 1], [1, 0]])
    np.testing.assert_array_equal(sys.D, [[0], [0]])
    assert sys.state_labels == ["Velocity_x[0]", "Position_x[0]"]
    assert sys.input_labels == ["Force_y"] and sys.output_labels == ["Position_y", "Velocity_y"]
    position = blocksim.linearize(MSD, inputs=["Force.y"], outputs=["x"])  # a record name
    np.testing.assert_allclose(response(position, W), response(1 / (m * S**2 + c * S + k), W),
                               rtol=1e-12)
    # other parameters through overrides: the same formula
    stiff = blocksim.linearize(MSD, ["Force.y"], ["Position.y"], overrides={"parameters.k": 9})
    np.testing.assert_allclose(response(stiff, W), response(1 / (S**2 + 0.4 * S + 9), W),
                               rtol=1e-12)


def pid_loop(Kp=8.0, Ki=5.0, Kd=2.5, N=50.0, K=2.0, tau=0.5):
    """C(s) G(s) of diagrams/pid_motor.yaml by hand: the PID's own transfer function
    Kp + Ki/s + Kd N s/(s + N), the motor K/(tau s + 1) and the position integrator 1/s."""
    C = Kp + Ki / S + Kd * N * S / (S + N)
    G = K / (tau * S + 1) / S
    return C * G


def test_pid_motor_loop_opened_at_the_feedback_is_c_times_g_with_its_margins():
    L = blocksim.linearize(PID_MOTOR, inputs=["Error.u1"], outputs=["Position.y"],
                           opened=["Error.u2"])
    hand = pid_loop()
    np.testing.assert_allclose(response(L, W), response(hand, W), rtol=1e-10)
    gm, pm, wg, wp = control.margin(L)
    gm0, pm0, wg0, wp0 = control.margin(hand)
    assert pm == pytest.approx(pm0, rel=1e-8) and wp == pytest.approx(wp0, rel=1e-8)
    assert np.isinf(gm) and np.isinf(gm0)
    # another gain: the same product with it
    L20 = blocksim.linearize(PID_MOTOR, ["Error.u1"], ["Position.y"], ["Error.u2"],
                             overrides={"blocks.PID.Kp": 20, "blocks.PID.Kd": 1})
    np.testing.assert_allclose(response(L20, W), response(pid_loop(Kp=20, Kd=1), W), rtol=1e-10)
    assert control.margin(L20)[1] == pytest.approx(control.margin(pid_loop(Kp=20, Kd=1))[1],
                                                   rel=1e-8)


def test_pid_motor_closed_loop_is_the_feedback_of_c_and_g():
    T = blocksim.linearize(PID_MOTOR, inputs=["Ref.y"], outputs=["Position.y"])
    hand = control.feedback(pid_loop(), 1)
    np.testing.assert_allclose(np.sort_complex(T.poles()), np.sort_complex(hand.poles()),
                               rtol=1e-9)
    np.testing.assert_allclose(response(T, W), response(hand, W), rtol=1e-9)


def saturating(path, limit):
    """y' = sat(3 (1 - y)): the error 1 at the start asks 3 of a saturation at +-limit."""
    return loop(path, [("Gain", "{type: gain, K: 3}"),
                       ("Limit", f"{{type: saturation, lower: {-limit}, upper: {limit}}}"),
                       ("Plant", "{type: integrator}")], ref=1.0)


@pytest.mark.parametrize("limit, gain", [(5.0, 1.0), (1.0, 0.0)])
def test_a_saturation_is_a_gain_of_one_inside_its_limits_and_zero_outside(tmp_path, limit, gain):
    # at the start the error is 1, the controller asks 3: inside a limit of 5, outside 1
    path = saturating(tmp_path / "saturating.yaml", limit)
    sat = blocksim.linearize(path, ["Limit.u"], ["Limit.y"], opened=["Limit.u"],
                             at=0.0)  # the block alone
    assert sat.A.shape == (0, 0) and sat.D[0, 0] == gain
    # the loop y' = sat(Kp (r - y)): pole -Kp inside the limits, 0 (open) outside
    closed = blocksim.linearize(path, ["Ref.y"], ["Plant.y"], at=0.0)
    np.testing.assert_allclose(closed.poles(), [-3.0 * gain], atol=1e-12)
    np.testing.assert_allclose(closed.B, [[3.0 * gain]], atol=1e-12)


def discrete_pi(path, T=0.1, Kp=2.0, Ki=1.5, a=0.8):
    """A discrete PI (period T) driving 1/(s + a), sampled back by a zoh."""
    return loop(path, [("PI", f"{{type: pid, Kp: {Kp}, Ki: {Ki}, period: {T}}}"),
                       ("Plant", f"{{type: transfer_function, num: [1], den: [1, {a}]}}")],
                back=("Sample", f"{{type: zoh, period: {T}}}"))


def test_a_discrete_pi_loop_is_the_hand_built_one_with_the_plant_sampled_by_c2d(tmp_path):
    T, Kp, Ki, a = 0.1, 2.0, 1.5, 0.8
    path = discrete_pi(tmp_path / "discrete_pi.yaml", T, Kp, Ki, a)
    closed = blocksim.linearize(path, ["Error.u1"], ["Sample.y"], period=T)
    assert closed.dt == T
    z = control.tf([1, 0], [1], T)  # z, period T
    pi = Kp + Ki * T / (z - 1)  # forward-Euler integral: I(z) = T/(z - 1)
    plant = control.c2d(control.tf([1], [1, a]), T, method="zoh")
    hand = control.feedback(pi * plant, 1)
    np.testing.assert_allclose(np.sort_complex(closed.poles()), np.sort_complex(hand.poles()),
                               rtol=1e-10)
    np.testing.assert_allclose(response(closed, W[:8]), response(hand, W[:8]), rtol=1e-9)
    # the plant by hand too: x[k+1] = e^(-aT) x + (1 - e^(-aT))/a u
    e = np.exp(-a * T)
    sampled = blocksim.linearize(path, ["Plant.u"], ["Sample.y"], opened=["Plant.u"],
                                 period=T)
    np.testing.assert_allclose(sampled.A, [[e]], rtol=1e-12)
    np.testing.assert_allclose(sampled.B, [[(1 - e) / a]], rtol=1e-12)


def test_a_single_rate_discrete_diagram_gives_a_discrete_model_at_its_rate(tmp_path):
    path = loop(tmp_path / "loop.yaml", [
        ("PI", "{type: pid, Kp: 0.5, Ki: 2, period: 0.2}"),
        ("Plant", "{type: discrete_transfer_function, num: [0.3], den: [1, -0.7], period: 0.2}")],
        ref=1.0)
    point = blocksim.trim(path)  # the integral holds the plant at the reference
    assert point.converged
    closed = blocksim.linearize(path, ["Ref.y"], ["Plant.y"], op=point)
    z = control.tf([1, 0], [1], 0.2)  # z, period 0.2 s
    hand = control.feedback((0.5 + 2 * 0.2 / (z - 1)) * 0.3 / (z - 0.7), 1)
    assert closed.dt == 0.2
    np.testing.assert_allclose(np.sort_complex(closed.poles()), np.sort_complex(hand.poles()),
                               rtol=1e-10)
    assert closed.dcgain() == pytest.approx(1.0)  # integral action


def test_a_mixed_diagram_converts_its_discrete_blocks_to_continuous_time(tmp_path):
    path = discrete_pi(tmp_path / "discrete_pi.yaml")
    # the discrete integrator x[k+1] = x + T Ki e is Ki/s in continuous time (zoh, d2c)
    loop = blocksim.linearize(path, ["Error.u1"], ["Sample.y"], opened=["Error.u2"])
    assert loop.isctime()
    hand = (2.0 + 1.5 / S) / (S + 0.8)
    np.testing.assert_allclose(response(loop, W), response(hand, W), rtol=1e-9)


def delayed(path):
    """2/(s + 1) with its output fed back 0.5 s late."""
    return loop(path, [("K", "{type: gain, K: 2}"),
                       ("Plant", "{type: transfer_function, num: [1], den: [1, 1]}")],
                back=("Delay", "{type: transport_delay, delay: 0.5}"), ref=1.0)


def test_a_delay_is_its_pade_approximation_of_the_stated_order(tmp_path):
    path = delayed(tmp_path / "delayed.yaml")
    point = blocksim.trim(path)
    # y = 2/(1 + 2) r at rest: the delay passes its input through
    assert point.states["Plant"] == pytest.approx(2 / 3)
    for order in (1, 3):
        loop = blocksim.linearize(path, ["Error.u1"], ["Error.u2"], ["Error.u2"], op=point,
                                  pade=order)
        hand = 2 / (S + 1) * control.tf(*control.pade(0.5, order))
        np.testing.assert_allclose(response(loop, W), response(hand, W), rtol=1e-9)
    # the exact delay: phase margin 180 - atan(w) - 0.5 w deg at |L| = 1, w = sqrt(3)
    w = np.sqrt(3)
    exact = 180 - np.degrees(np.arctan(w) + 0.5 * w)
    assert control.margin(loop)[1] == pytest.approx(exact, abs=0.01)


def test_a_long_delays_pade_approximation_keeps_its_poles_and_zeros(tmp_path):
    # exp(-sT) ~ R(sT): R's poles p_k do not depend on T, so the delay's are p_k / T; R is
    # all-pass (num(p) = den(-p)), so the loop's zeros are those poles mirrored. By hand for
    # order 2: den(p) = 1 + p/2 + p^2/12, p = -3 +- j sqrt(3). Realised in s directly, the
    # coefficients span (1/T)^n: a 1e4 s delay's poles moved by 24 % at order 18, its zeros
    # by 19 % at order 10 (unbalanced, the zeros of the loop lost every digit).
    for T, order in ((0.5, 2), (1e4, 10)):
        path = loop(tmp_path / "delayed.yaml", [
            ("Plant", "{type: transfer_function, num: [1], den: [1, 1]}"),
            ("Delay", f"{{type: transport_delay, delay: {T}}}")])
        L = blocksim.linearize(path, ["Error.u1"], ["Delay.y"], ["Error.u2"], pade=order)
        delay = np.sort_complex([p for p in L.poles() if abs(p + 1) > 1e-9])
        if order == 2:
            np.testing.assert_allclose(delay, np.array([-3 - 3**0.5 * 1j, -3 + 3**0.5 * 1j]) / T,
                                       rtol=1e-14)
        unit = np.roots(control.pade(1.0, order)[1])  # den(p) of order 10: roots by numpy
        nearest = np.min(np.abs(delay[:, None] - unit[None, :] / T), axis=1)
        np.testing.assert_array_less(nearest, 1e-9 * np.abs(delay))
        zeros = frequency.zeros(L)  # those linearize prints (python-control's: 100 % off)
        assert len(zeros) == order
        nearest = np.min(np.abs(zeros[:, None] + delay[None, :]), axis=1)
        np.testing.assert_array_less(nearest, 1e-9 * np.abs(zeros))


def test_vector_signals_elements_and_subsystem_ports_are_named(tmp_path):
    (tmp_path / "plant.yaml").write_text("""
blocksim: 1
inputs: {u: Lag}
outputs: {y: Lag}
blocks:
  Lag: {type: state_space, A: [[-1, 0], [0, -2]], B: [[1, 0], [0, 1]], C: [[1, 0], [0, 1]], D: 0}
""")
    (tmp_path / "top.yaml").write_text("""
blocksim: 1
name: top
blocks:
  Drive: {type: constant, value: [0, 0]}
  Plant: {type: subsystem, file: plant.yaml}
  Pick:  {type: selector, indices: 1}
wires:
  - Drive -> Plant.u
  - Plant.y -> Pick
simulation: {stop: 1}
record: {both: Plant.y}
""")
    sys = blocksim.linearize(tmp_path / "top.yaml", ["Plant.u[1]"], ["both", "Pick.y"])
    assert sys.input_labels == ["Plant_u[1]"]
    assert sys.output_labels == ["both[0]", "both[1]", "Pick_y"]
    assert sys.state_labels == ["Plant/Lag_x[0]", "Plant/Lag_x[1]"]
    # only the second element of u moves: 1/(s + 2) into y[1]
    np.testing.assert_allclose(sys.dcgain().ravel(), [0.0, 0.5, 0.5], atol=1e-15)


def test_the_states_in_the_order_asked_line_up_with_lqr_weights(tmp_path):
    path = tmp_path / "cartpole.yaml"
    path.write_text(CARTPOLE)
    model = blocksim.linearize(path, ["F.y"], ["X.y", "Th.y"],
                               states=["X", "Xd", "Th.x[0]", "Thd"])  # blocks or states
    assert model.state_labels == ["X_x[0]", "Xd_x[0]", "Th_x[0]", "Thd_x[0]"]
    # by hand (tests/analysis/loops.py), states (x, x', th, th'):
    A = [[0, 1, 0, 0], [0, 0, -0.981, 0], [0, 0, 0, 1], [0, 0, 21.582, 0]]
    B = [[0], [1], [0], [-2]]
    # exact: the function block's expression is differentiated, not differenced
    np.testing.assert_allclose(model.A, A, rtol=1e-15, atol=0)
    np.testing.assert_allclose(model.B, B, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(model.C, [[1, 0, 0, 0], [0, 0, 1, 0]])
    # the weights of python-control's lqr on the hand-written model apply to it as they are
    Q, R = np.diag([10.0, 1.0, 100.0, 1.0]), [[1.0]]
    K, _, _ = control.lqr(model, Q, R)
    K_hand, _, _ = control.lqr(control.ss(A, B, np.eye(4), 0), Q, R)
    np.testing.assert_allclose(K, K_hand, rtol=1e-12)
    # the diagram's own order (the integrators as wired) needs the weights permuted
    plain = blocksim.linearize(path, ["F.y"], ["X.y", "Th.y"])
    assert plain.state_labels == ["Xd_x[0]", "X_x[0]", "Thd_x[0]", "Th_x[0]"]
    # the order as the command line writes it, in one string (it was one name, 'no state or
    # block with states 'X,Xd,Th,Thd'')
    for text in ("X,Xd,Th,Thd", "X, Xd Th.x[0],Thd"):
        again = blocksim.linearize(path, ["F.y"], ["X.y", "Th.y"], states=text)
        assert again.state_labels == model.state_labels
