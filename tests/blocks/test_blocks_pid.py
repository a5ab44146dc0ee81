"""pid: the continuous controller against closed forms (a ramp error; saturation with and
without anti-windup, hand-derived piece by piece), the discrete controller against a hand
recursion and scipy.signal.dlsim, and its parameter checks."""
import numpy as np
import pytest
from harness import Rig
from scipy import signal

import blocksim
from blocksim.params import ParamError
from blocks.pid import Pid

SOLVERS = ["rk45", "dop853", "radau", "rk4"]


RAMP = """
blocksim: 1
blocks:
  E: {type: clock}
  C: {type: pid, Kp: 2, Ki: 3, Kd: 0.5, N: 20}
wires: [E -> C]
simulation: {stop: 2, rtol: 1e-10, atol: 1e-12, step: 1e-3}
record: {u: C.u}
"""


@pytest.mark.parametrize("solver", SOLVERS)
def test_ramp_error_response(run_diagram, solver):
    r = run_diagram(RAMP, **{"simulation.solver": solver})
    t = r.t
    # e = t: P = Kp t, I = Ki t^2/2, D = Kd N s/(s + N) applied to 1/s^2 = Kd (1 - e^{-N t})/s
    #  -> Kd (1 - e^{-N t})
    expected = 2 * t + 3 * t ** 2 / 2 + 0.5 * (1 - np.exp(-20 * t))
    np.testing.assert_allclose(r["u"], expected, atol=1e-7 if solver == "rk4" else 1e-8)


PI_LOOP = """
blocksim: 1
blocks:
  Ref: {type: step, time: 0.5}
  Err: {type: sum, signs: "+-"}
  CONTROLLER
  Plant: {type: transfer_function, num: [1], den: [10, 1]}
wires: [Ref -> Err.u1, Plant -> Err.u2, WIRES]
simulation: {stop: 50, solver: rk45}
record: {y: Plant.y}
"""


def test_a_pi_controller_adds_no_fast_mode(run_diagram):
    """PI (Kd = 0) around the lag 1/(10 s + 1), unit step at 0.5: against scipy's solution of
    xi' = e, 10 y' = -y + 2 e + xi, e = 1 - y, and in as many steps as the same controller
    built from gains and an integrator (the unused derivative filter, rate N = 100, used to
    force rk45 down to steps of 0.03 s: 1500 steps instead of about 60)."""
    from scipy.integrate import solve_ivp

    pid = run_diagram(PI_LOOP.replace("CONTROLLER", "C: {type: pid, Kp: 2, Ki: 1}")
              .replace("WIRES", "Err -> C, C -> Plant"))
    built = run_diagram(PI_LOOP.replace(
        "CONTROLLER", "P: {type: gain, K: 2}\n  I: {type: integrator}\n  U: {type: sum}")
        .replace("WIRES", "Err -> P, Err -> I, P -> U.u1, I -> U.u2, U -> Plant"))
    exact = solve_ivp(lambda t, s: [1 - s[1], (-s[1] + 2 * (1 - s[1]) + s[0]) / 10],
                      (0.5, 50), [0.0, 0.0], rtol=1e-12, atol=1e-12, dense_output=True)
    after = pid.t >= 0.5
    np.testing.assert_allclose(pid["y"][after], exact.sol(pid.t[after])[1], atol=1e-5)
    assert pid.meta["solver"]["nsteps"] <= 1.2 * built.meta["solver"]["nsteps"]


SATURATED = """
blocksim: 1
blocks:
  E: {type: step, time: 2, before: 1, after: -0.25}
  C: {type: pid, Kp: 1, Ki: 1, lower: -1.5, upper: 1.5, Kb: 2}
wires: [E -> C]
simulation: {stop: 4, rtol: 1e-10, atol: 1e-12, step: 0.01, output_interval: 0.01}
record: {u: C.u}
"""


def saturated_expected(t, anti_windup):
    """e = 1 up to t = 2, then -0.25; Kp = Ki = 1, x0 = 0, limits +-1.5.
    u_raw = e + xi. From 0: xi = t, u = 1 + t reaches 1.5 at t = 0.5 (for every variant).
    none: xi = t on, xi(2) = 2; after the step u_raw = -0.25 + 2 - 0.25 (t - 2) stays above
      1.5 until t = 3, then u = u_raw.
    clamping: xi frozen at 0.5 while saturated (Ki e > 0 pushes out); after the step
      u = -0.25 + 0.5 - 0.25 (t - 2), inside the limits at once.
    back_calculation (Kb = 2): saturated, dxi/dt = 1 + Kb (1.5 - (1 + xi)), so
      xi = 0.5 + (1 - exp(-2 (t - 0.5)))/2; after the step u = -0.25 + xi(2) - 0.25 (t - 2)."""
    u = np.minimum(1 + t, 1.5)
    after = t >= 2
    if anti_windup == "none":
        u[after] = np.minimum(1.75 - 0.25 * (t[after] - 2), 1.5)
    elif anti_windup == "clamping":
        u[after] = 0.25 - 0.25 * (t[after] - 2)
    else:
        xi2 = 0.5 + (1 - np.exp(-2 * 1.5)) / 2
        u[after] = -0.25 + xi2 - 0.25 * (t[after] - 2)
    return u


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("anti_windup", ["none", "clamping", "back_calculation"])
def test_saturation_and_anti_windup_against_hand_derived_trajectories(run_diagram, solver,
                                                                     anti_windup):
    r = run_diagram(SATURATED, **{"simulation.solver": solver,
                                  "blocks.C.anti_windup": anti_windup})
    tol = 1e-6 if solver == "rk4" else 1e-8
    np.testing.assert_allclose(r["u"], saturated_expected(r.t, anti_windup), atol=tol)
    # the saturation starts exactly at t = 0.5, a located crossing (to event_tol)
    assert abs(r.events_t[0] - 0.5) < 1e-9
    if anti_windup == "none":  # and it ends (u_raw falls through 1.5) at t = 3
        assert abs(r.events_t[-1] - 3.0) < 1e-9


def test_clamping_resumes_when_the_error_turns_while_saturated(run_diagram):
    # x0 = 2 starts the controller above its limit 1.5. e = 1 - t/2 (Kp = 0.2, Ki = 1):
    # u_raw = 0.2 e + xi. Saturated and Ki e > 0 (pushing out): clamped, xi = 2 frozen. At
    # t = 2 e turns negative while u_raw = 2 is still above the limit: the integral resumes
    # (an event on Ki e), xi = 2 - (t - 2)^2/4, and u_raw = 2.2 - 0.1 t - (t - 2)^2/4 falls
    # through 1.5 where (t - 2)^2 + 0.4 (t - 2) - 2 = 0: t = 2 + (-0.4 + sqrt(8.16))/2.
    text = SATURATED.replace("{type: step, time: 2, before: 1, after: -0.25}",
                             "{type: ramp, slope: -0.5, initial: 1}")
    text = text.replace("Kp: 1, Ki: 1", "Kp: 0.2, Ki: 1, x0: 2")
    r = run_diagram(text, **{"blocks.C.anti_windup": "clamping"})
    t = r.t
    t_exit = 2 + (-0.4 + np.sqrt(8.16)) / 2
    raw = np.where(t < 2, 0.2 * (1 - t / 2) + 2, 2.2 - 0.1 * t - (t - 2) ** 2 / 4)
    np.testing.assert_allclose(r["u"], np.where(t < t_exit, 1.5, raw), atol=1e-8)
    np.testing.assert_allclose(r.events_t, [2.0, t_exit], atol=1e-9)


TEXTBOOK_PI = """
blocksim: 1
blocks:
  R: {type: constant, value: 1}
  E: {type: sum, signs: "+-"}
  C: {type: pid, Kp: 2, Ki: 10, lower: -1.5, upper: 1.5, anti_windup: clamping}
  P: {type: transfer_function, num: [1], den: [1, 1]}
wires: [R -> E.u1, P -> E.u2, E -> C, C -> P]
simulation: {stop: 6, rtol: 1e-10, atol: 1e-12, output_interval: 0.01}
record: {y: P.y, u: C.u}
"""


def textbook_pi_reference(t_end, Kp=2.0, Ki=10.0, U=1.5):
    """The PI loop y' = -y + u, e = 1 - y, u = clip(Kp e + xi, -U, U) with clamping, solved
    piece by piece with scipy (solve_ivp, events) and the modes switched by hand.

    linear:    u = Kp e + xi, xi' = Ki e; leaves when Kp e + xi reaches +-U.
    clamped:   u = +-U, xi' = 0 (Ki e pushes further out); leaves when Kp e + xi comes back
               to the limit, or when e changes sign (integrating: xi' = Ki e, u = +-U).
    sliding:   u = +-U and Kp e + xi = +-U held by the integral: xi' = -Kp e' = Kp y',
               which clamping allows while it lies between 0 and Ki e; leaves for linear
               when Kp y' passes Ki e, for clamped when it changes sign.
    At the limit (Kp e + xi = s U, s = +-1) with y' = -y + s U the mode is: clamped when
    s Kp y' < 0 (the sum rises even without the integral) and s Ki e > 0, sliding when
    0 <= s Kp y' <= s Ki e, else linear. Returns a dense solution (t -> y, xi) and the
    switching times."""
    from scipy.integrate import solve_ivp

    def at_limit(y, s):
        e, dy = 1 - y, -y + s * U
        w, r = s * Ki * e, s * Kp * dy  # both as seen from the limit's side
        if w > 0 and r < 0:
            return ("clamped", s)
        if w > 0 and r <= w:
            return ("sliding", s)
        return ("integrating", s) if w - r > 0 else ("linear", 0)

    t, y, xi = 0.0, 0.0, 0.0
    raw = Kp * 1.0 + xi
    mode = ("clamped", 1) if raw > U and Ki > 0 else ("linear", 0)
    pieces, switches = [], []
    while t < t_end:
        kind, s = mode
        if kind == "linear":
            f = lambda t, z: [-z[0] + Kp * (1 - z[0]) + z[1], Ki * (1 - z[0])]
            events = [lambda t, z: Kp * (1 - z[0]) + z[1] - U,
                      lambda t, z: Kp * (1 - z[0]) + z[1] + U]
        elif kind in ("clamped", "integrating"):
            rate = 0.0 if kind == "clamped" else Ki
            f = lambda t, z, rate=rate, s=s: [-z[0] + s * U, rate * (1 - z[0])]
            events = [lambda t, z, s=s: Kp * (1 - z[0]) + z[1] - s * U, lambda t, z: 1 - z[0]]
        else:  # sliding: xi follows the limit, y' = -y + s U
            f = lambda t, z, s=s: [-z[0] + s * U, Kp * (-z[0] + s * U)]
            events = [lambda t, z, s=s: Kp * (-z[0] + s * U) - Ki * (1 - z[0]),
                      lambda t, z, s=s: -z[0] + s * U]
        for ev in events:
            ev.terminal = True
        sol = solve_ivp(f, (t, t_end), [y, xi], events=events, rtol=1e-12, atol=1e-13,
                        dense_output=True)
        pieces.append((t, sol.t[-1], sol.sol))
        t, (y, xi) = sol.t[-1], sol.y[:, -1]
        if sol.status != 1:
            break
        switches.append(t)
        e = 1 - y
        raw = Kp * e + xi
        if kind == "sliding" and sol.t_events[0].size:  # Kp y' passed Ki e: linear
            mode = ("linear", 0)
        elif kind == "clamped" and sol.t_events[1].size:  # e changed sign
            mode = ("integrating", s)
        elif kind == "integrating" and sol.t_events[1].size:
            mode = ("clamped", s)
        else:  # the sum reached a limit (or sliding lost its sign): decide there
            mode = at_limit(y, s if kind != "linear" else (1 if raw > 0 else -1))
    return pieces, switches


def piecewise(pieces, t):
    out = np.empty((2, len(t)))
    for k, tk in enumerate(t):
        start, end, sol = next(p for p in pieces if tk <= p[1] or p is pieces[-1])
        out[:, k] = sol(tk)
    return out


@pytest.mark.parametrize("solver, tol", [("rk45", 1e-8), ("dop853", 1e-8), ("rk4", 1e-6)])
def test_textbook_pi_with_clamping_slides_along_the_limit(run_diagram, solver, tol):
    """Issue 23 item 5: Kp 2, Ki 10, limits +-1.5, clamping, plant 1/(s + 1), reference 1
    aborted as chattering at t = 0.18 (linear and clamped modes flipping 1e-9 s apart). The
    output must stay at the limit while the integral keeps the PI sum there (sliding), then
    leave it: against the event-switched reference above. By hand: saturated from the start,
    y = 1.5 (1 - e^-t); the sum 2 (1 - y) reaches 1.5 at y = 0.25, t = ln 1.2; the integral
    holds it there while 2 y' <= 10 (1 - y), i.e. until y = 0.875, t = ln 2.4."""
    r = run_diagram(TEXTBOOK_PI, **{"simulation.solver": solver, "simulation.step": 1e-3})
    pieces, switches = textbook_pi_reference(6.0)
    np.testing.assert_allclose(switches[:2], [np.log(1.2), np.log(2.4)], rtol=0, atol=1e-9)
    y, xi = piecewise(pieces, r.t)
    np.testing.assert_allclose(r["y"], y, rtol=0, atol=tol)
    np.testing.assert_allclose(r["u"], np.clip(2 * (1 - y) + xi, -1.5, 1.5), rtol=0, atol=tol)
    assert np.all(r["u"][r.t < np.log(2.4)] == 1.5)
    np.testing.assert_allclose(r.events_t[:2], switches[:2], rtol=0, atol=1e-9 if tol < 1e-7
                               else 1e-6)


def test_sliding_along_either_limit_element_wise(run_diagram):
    """The same loop on two elements at once, references +1 and -1, the plant y' = u - y
    built from an integrator: the second element slides along the lower limit, the mirror
    image of the first (the reference above, negated)."""
    r = run_diagram("""
blocksim: 1
blocks:
  R: {type: constant, value: [1, -1]}
  E: {type: sum, signs: "+-"}
  C: {type: pid, Kp: 2, Ki: 10, lower: -1.5, upper: 1.5, anti_windup: clamping}
  D: {type: sum, signs: "+-"}
  Y: {type: integrator, x0: [0, 0]}
wires: [R -> E.u1, Y -> E.u2, E -> C, C -> D.u1, Y -> D.u2, D -> Y]
simulation: {stop: 6, rtol: 1e-10, atol: 1e-12, output_interval: 0.01}
record: {y: Y.y}
""")
    y, _ = piecewise(textbook_pi_reference(6.0)[0], r.t)
    np.testing.assert_allclose(r["y"], np.column_stack([y, -y]), rtol=0, atol=1e-8)


def discrete_pid_recursion(e, T, Kp, Ki, Kd, N, x0, method, lower=-np.inf, upper=np.inf,
                           anti_windup="none", Kb=1.0):
    """The discrete PID written as output recursions (not the block's state form):
    integrator I of w: I[0] = x0, I[n] = I[n-1] + T (a w[n] + c w[n-1]);
    filter F of d:     F[0] = 0,  F[n] = F[n-1] + T (a d[n] + c d[n-1]), d[n] = N (Kd e[n] - F[n]);
    u = Kp e + I + d, limited; (a, c) = FE (0, 1), BE (1, 0), trapezoidal (1/2, 1/2)."""
    a, c = {"forward_euler": (0, 1), "backward_euler": (1, 0), "trapezoidal": (0.5, 0.5)}[method]
    u, I_prev, F_prev, w_prev, d_prev = [], None, None, None, None
    for n, en in enumerate(e):
        if n == 0:
            d = N * Kd * en
            F, I_base, A = 0.0, x0, 0.0
        else:
            # F = F_prev + T c d_prev + T a d,  d = N (Kd e - F): solve for d
            base = F_prev + T * c * d_prev
            d = N * (Kd * en - base) / (1 + N * T * a)
            F = base + T * a * d
            I_base, A = I_prev + T * c * w_prev, T * a
        w = Ki * en
        raw = Kp * en + I_base + A * w + d
        if anti_windup == "clamping" and (raw > upper and w > 0 or raw < lower and w < 0):
            w = 0.0
            raw = Kp * en + I_base + d
        if anti_windup == "back_calculation" and not lower <= raw <= upper:
            lim = min(max(raw, lower), upper)
            # u_raw = Kp e + I_base + A (w + Kb (lim - u_raw)) + d, solved for u_raw
            raw = (Kp * en + I_base + A * w + d + A * Kb * lim) / (1 + A * Kb)
            w = w + Kb * (lim - raw)
        u.append(min(max(raw, lower), upper))
        I_prev, F_prev, w_prev, d_prev = I_base + A * w, F, w, d
    return np.array(u)


E = np.sin(0.9 * np.arange(40)) + 0.5  # an arbitrary error sequence, mostly positive


def drive(rig, e, T):
    return rig.hits(T, e, inp="e", out="u")


@pytest.mark.parametrize("method", ["forward_euler", "backward_euler", "trapezoidal"])
@pytest.mark.parametrize("limits, anti_windup", [
    ((-np.inf, np.inf), "none"),
    ((-1.0, 2.0), "none"),
    ((-1.0, 2.0), "clamping"),
    ((-1.0, 2.0), "back_calculation"),
])
def test_discrete_pid_against_a_hand_recursion(method, limits, anti_windup):
    gains = dict(Kp=0.8, Ki=1.5, Kd=0.05, N=30.0, x0=0.2)
    T = 0.05
    rig = Rig(Pid, {**gains, "period": T, "method": method, "lower": limits[0],
                    "upper": limits[1], "anti_windup": anti_windup, "Kb": 3.0}, {"e": ()})
    got = drive(rig, E, T)
    expected = discrete_pid_recursion(E, T, **gains, method=method, lower=limits[0],
                                      upper=limits[1], anti_windup=anti_windup, Kb=3.0)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    if limits[1] < np.inf:
        assert got.max() == 2.0  # the example saturates


def test_discrete_forward_euler_pid_is_its_transfer_function():
    # Kp + Ki T/(z - 1) + Kd N (z - 1)/(z - 1 + N T) from rest: scipy.signal.dlsim
    Kp, Ki, Kd, N, T = 0.8, 1.5, 0.05, 30.0, 0.05
    rig = Rig(Pid, {"Kp": Kp, "Ki": Ki, "Kd": Kd, "N": N, "period": T}, {"e": ()})
    got = drive(rig, E, T)
    parts = [([Kp], [1]), ([Ki * T], [1, -1]), ([Kd * N, -Kd * N], [1, -1 + N * T])]
    expected = sum(signal.dlsim((num, den, T), E)[1][:, 0] for num, den in parts)
    np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-12)


def test_vector_gains_per_element():
    rig = Rig(Pid, {"Kp": [1, 2, 3], "period": 1}, {"e": (3,)})
    assert rig.out_shapes == {"u": (3,)}
    np.testing.assert_array_equal(drive(rig, np.ones((2, 3)), 1.0)[-1], [1, 2, 3])


@pytest.mark.parametrize("params, bad", [
    ({"N": 0}, "N"),
    ({"lower": 1, "upper": 0}, "upper"),
    ({"period": -1}, "period"),
    ({"Kb": -1}, "Kb"),
    ({"anti_windup": "clamp"}, "anti_windup"),
])
def test_pid_parameter_errors(params, bad):
    with pytest.raises(ParamError) as e:
        Rig(Pid, params, {"e": ()})
    assert e.value.param == bad


def test_no_feedthrough_for_a_pure_integral_controller():
    assert Rig(Pid, {"Kp": 0, "Ki": 1}, {"e": ()}).block.ports()[1][0].feedthrough == ()
    assert Rig(Pid, {}, {"e": ()}).block.ports()[1][0].feedthrough == ("e",)


def test_a_limit_set_from_infinite_to_finite_saturates(tmp_path):
    """An element of a vector limit made finite by Model.set (the block still limited, so
    no recompile) saturates as in a diagram loaded with that limit: the element's
    indicator read which limits were finite as bound (it stayed -1, no crossing, u = 1 + t
    beyond 1.5). Expected: SATURATED's hand-derived u = min(1 + t, 1.5), element 0 only."""
    path = tmp_path / "vec.yaml"
    path.write_text(SATURATED.replace("before: 1, after: -0.25", "before: [1, 1], after: [1, 1]")
                    .replace("upper: 1.5", "upper: [.inf, 5]"))
    model = blocksim.load(path, {"simulation.mode": "normal"})
    model.set("blocks.C.upper", [1.5, 5])
    r = blocksim.execute(model)
    fresh = blocksim.run(path, {"simulation.mode": "normal", "blocks.C.upper": [1.5, 5]})
    np.testing.assert_allclose(r["u"][:, 0], np.minimum(1 + r.t, 1.5), atol=1e-8)
    np.testing.assert_array_equal(r["u"], fresh["u"])
