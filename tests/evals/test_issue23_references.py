"""Issue 23's wrong results, checked end to end as a user meets them (diagrams written from
the docs, run through blocksim.run and blocksim.sweep) against references built here: the
play operator, closed forms, an event-switched model of the clamped PI integrated by scipy
and a fixed-step loop of the textbook controller, scipy.signal's lsim and dlsim.

No expected number comes from blocksim: each is derived in the test, its source beside it.
"""
import math

import numpy as np
import pytest
import scipy.signal as signal
from scipy.integrate import solve_ivp
from scipy.linalg import expm

import blocksim


def run_text(tmp_path, text, **overrides):
    path = tmp_path / "d.yaml"
    path.write_text(text)
    return blocksim.run(str(path), overrides=overrides or None)


# ---- item 1: backlash ---------------------------------------------------------------------------
BACKLASH = """\
blocksim: 1
name: backlash
blocks:
  S: {type: sine}
  B: {type: backlash, width: 0.6}
wires: [S -> B]
simulation: {stop: 20, solver: rk4, step: 0.01}
record: {y: B.y}
"""


def play_operator(t, u, width, y0, extrema):
    """The play (backlash) operator, y_k = clip(y_k-1, u_k - w/2, u_k + w/2), applied on the
    times t merged with the input's extrema: between consecutive points u is monotone, where
    the operator is exact (Krasnosel'skii & Pokrovskii), so this is the true output at t."""
    times = np.union1d(t, [e for e in extrema if t[0] <= e <= t[-1]])
    y, out = y0, {}
    for ti in times:
        y = min(max(y, u(ti) - width / 2), u(ti) + width / 2)
        out[ti] = y
    return np.array([out[ti] for ti in t])


@pytest.mark.parametrize("overrides", [
    {}, {"simulation.solver": "rk45", "simulation.output_interval": 0.05},
    {"simulation.solver": "rk45", "simulation.output_interval": 0.05, "simulation.stop": 60}])
def test_backlash_holds_after_every_turn_as_the_play_operator(tmp_path, overrides):
    r = run_text(tmp_path, BACKLASH, **overrides)
    extrema = np.pi / 2 + np.pi * np.arange(30)  # turning points of sin t
    expected = play_operator(r.t, np.sin, 0.6, 0.0, extrema)
    assert np.abs(r["y"] - expected).max() < 1e-9
    # the numbers: after the peak y holds 0.7 until u = 0.4 (t = pi - asin(0.4))
    hold = (r.t > np.pi / 2) & (r.t < np.pi - math.asin(0.4) - 1e-6)
    assert hold.sum() > 2 and np.abs(r["y"][hold] - 0.7).max() < 1e-9
    # ... and the turn near 14.1 (t = 4.5 pi) is not missed: y holds 0.7 after it
    late = (r.t > 4.5 * np.pi) & (r.t < 5 * np.pi - math.asin(0.4) - 1e-6)
    assert late.sum() > 0 and np.abs(r["y"][late] - 0.7).max() < 1e-9


def test_backlash_turns_are_located_events(tmp_path):
    r = run_text(tmp_path, BACKLASH, **{"simulation.solver": "rk45"})  # default steps
    expected = play_operator(r.t, np.sin, 0.6, 0.0, np.pi / 2 + np.pi * np.arange(7))
    assert np.abs(r["y"] - expected).max() < 1e-9
    turns = np.pi / 2 + np.pi * np.arange(6)  # extrema of sin t before t = 20
    nearest = np.abs(r.events_t[:, None] - turns[None, :]).min(axis=0)
    assert np.all(nearest <= 1e-10 * np.maximum(1, turns) * 2)  # event_tol (default)


# ---- item 2: transport delay of a source --------------------------------------------------------
CHIRP = """\
blocksim: 1
name: delayed_chirp
blocks:
  C: {type: chirp, f0: 0.2, f1: 2, t1: 10}
  D: {type: transport_delay, delay: 0.7}
wires: [C -> D]
simulation: {stop: 10, solver: rk45, rtol: 1e-10, atol: 1e-12}
record: {y: D.y}
"""


def chirp(t):
    """The chirp block's closed form (blocksim blocks chirp): sin(2 pi (f0 t + (f1-f0) t^2/(2 t1)))."""
    return np.sin(2 * np.pi * (0.2 * t + 1.8 * t ** 2 / 20))


@pytest.mark.parametrize("solver", ["rk45", "dop853", "radau"])
@pytest.mark.parametrize("rows", [{"simulation.output_interval": 0.001},
                                  {"simulation.refine": 20}])
def test_delayed_chirp_between_steps_within_the_tolerance(tmp_path, solver, rows):
    r = run_text(tmp_path, CHIRP, **{"simulation.solver": solver}, **rows)
    expected = np.where(r.t >= 0.7, chirp(r.t - 0.7), 0.0)  # y(t) = u(t - 0.7), x0 = 0 before
    after = r.t > 0.7
    assert after.sum() > 900
    assert np.all(np.abs(r["y"] - expected)[after] <= 1e-10 * np.abs(expected[after]) + 1e-12
                  + 1e-10)  # rtol |y| + atol, with a tolerance's worth for the source's own error
    assert np.all(r["y"][~after] == 0.0)


# ---- item 3: time-weighted sweep metrics --------------------------------------------------------
CROWDED = """\
blocksim: 1
name: crowded
parameters: {w: 1.0}
blocks:
  S: {type: sine, amplitude: 2, frequency: w}
  B: {type: sine, amplitude: 2, frequency: w, bias: 1}
  Fast: {type: sine, frequency: 300}
  Gate: {type: step, time: 1, before: 1, after: 0}
  Prod: {type: product}
  X: {type: integrator}
wires: [Fast -> Prod.u1, Gate -> Prod.u2, Prod -> X]
simulation: {stop: 10, solver: rk45, rtol: 1e-8}
record: {s: S.y, b: B.y}
"""


def test_rms_mean_std_are_time_averages_on_adaptive_rows(tmp_path):
    """An integrator of sin(300 t) during the first second crowds three quarters of the
    solver's rows into it. Over whole periods of s = 2 sin(w t) the time averages are, by
    hand: rms = 2/sqrt(2), mean = 0, std = 2/sqrt(2); of b = 1 + s: rms = sqrt(1 + 2), mean 1,
    std sqrt(2); the trapezoid rule on rows h apart errs by at most h^2/12 max|f''|, with
    f'' of s^2 at most 8 w^2 and of s at most 2 w^2."""
    path = tmp_path / "d.yaml"
    path.write_text(CROWDED)
    w = 2 * np.pi / 10 * np.array([1, 2, 5, 10])  # 1, 2, 5 and 10 periods in 10 s
    table = blocksim.sweep(str(path), grid={"parameters.w": w.tolist()}, workers=1,
                           metrics={"rms_s": "rms(s)", "mean_s": "mean(s)", "std_s": "std(s)",
                                    "rms_b": "rms(b)", "mean_b": "mean(b)", "std_b": "std(b)",
                                    "h": "max(diff(t))", "crowd": "sum(t < 1) / sum(t >= 0)",
                                    "row_rms_s": "sqrt(sum(s**2) / sum(s * 0 + 1))"})
    rows = table.rows
    assert [row["status"] for row in rows] == ["ok"] * 4
    for wk, row in zip(w, rows):
        bound = row["h"] ** 2 / 12 * 8 * wk ** 2  # on a mean of s^2 (or of b^2 - 2 b + 1)
        assert abs(row["rms_s"] ** 2 - 2) <= bound
        assert abs(row["mean_s"]) <= bound / 4
        assert abs(row["std_s"] ** 2 - 2) <= 2 * bound
        assert abs(row["rms_b"] ** 2 - 3) <= 2 * bound
        assert abs(row["mean_b"] - 1) <= bound / 4
        assert abs(row["std_b"] ** 2 - 2) <= 2 * bound
        assert row["crowd"] > 0.7
    # one row one vote would be far off: rms 0.92 instead of 1.41 at one period
    assert abs(rows[0]["row_rms_s"] - math.sqrt(2)) > 0.3


# ---- item 4: a grid row at a located event ------------------------------------------------------
def test_grid_row_at_an_event_holds_its_own_time(tmp_path):
    """x' = x, x(0) = 1 reaches the saturation's upper limit e^2 at t = 2, a grid time."""
    r = run_text(tmp_path, """\
blocksim: 1
name: grid_event
blocks:
  X: {type: integrator, x0: 1}
  Sat: {type: saturation, upper: exp(2), lower: -1}
  S: {type: sine}
  Clk: {type: clock}
wires: [X -> X, X -> Sat]
simulation: {stop: 4, solver: rk45, rtol: 1e-10, atol: 1e-12, max_step: 0.13,
             output_interval: 0.25}
record: {s: S.y, c: Clk.t, x: X.y, sat: Sat.y}
""")
    assert np.array_equal(r.t, 0.25 * np.arange(17))
    assert abs(r.events_t[0] - 2.0) <= 1e-10 * 2
    assert np.abs(r["s"] - np.sin(r.t)).max() < 1e-15   # sources at the row's own time
    assert np.abs(r["c"] - r.t).max() < 1e-15
    assert np.abs(r["x"] / np.exp(r.t) - 1).max() < 1e-9
    assert np.abs(r["sat"] - np.minimum(np.exp(r.t), np.exp(2))).max() < 1e-8


# ---- item 5: PI with clamping anti-windup -------------------------------------------------------
PI = """\
blocksim: 1
name: pi_clamping
blocks:
  R: {type: step, time: 0}
  E: {type: sum, signs: "+-"}
  C: {type: pid, Kp: 2, Ki: 10, lower: -1.5, upper: 1.5, anti_windup: clamping}
  P: {type: transfer_function, num: [1], den: [1, 1]}
wires: [R -> E.u1, P -> E.u2, E -> C, C -> P]
simulation: {stop: 5, solver: rk45, rtol: 1e-10, atol: 1e-12, output_interval: 0.01}
record: {y: P.y, u: C.u}
"""
KP, KI, LIMIT = 2.0, 10.0, 1.5


def clamped_pi_reference(t):
    """The clamping PI on 1/(s+1) from rest, reference 1, as an event-switched system derived
    by hand. Saturated at +1.5 with the integral clamped (Ki e > 0 pushes out) while
    u_raw = 2(1 - y) > 1.5, i.e. until y = 0.25; then u_raw stays at the limit with the
    integral moving at r = 2 y' (clamping allows 0 < r <= Ki e) until 2 (1.5 - y) = 10 (1 - y),
    y = 0.875, t2 = ln(1.5 / 0.625); y = 1.5 (1 - e^-t) all along. From t2 linear with
    xi = 1.5 - 2 (1 - 0.875), integrated by scipy."""
    t2 = math.log(1.5 / 0.625)
    y, u = np.empty_like(t), np.empty_like(t)
    sat = t <= t2
    y[sat], u[sat] = 1.5 * (1 - np.exp(-t[sat])), LIMIT
    linear = solve_ivp(lambda s, z: [-z[0] + KP * (1 - z[0]) + z[1], KI * (1 - z[0])],
                       (t2, t.max()), [0.875, LIMIT - KP * 0.125], rtol=1e-12, atol=1e-14,
                       dense_output=True)
    z = linear.sol(t[~sat])
    y[~sat], u[~sat] = z[0], KP * (1 - z[0]) + z[1]
    assert np.all(np.abs(u[~sat]) <= LIMIT)  # never at a limit again
    return y, u, (-math.log(1 - 0.25 / 1.5), t2)


def textbook_loop(stop, dt):
    """The controller as a textbook loop of forward-Euler steps: integrate Ki e unless the
    output is saturated and e pushes it further out (it chatters at the limit)."""
    y = xi = 0.0
    ys = [y]
    for _ in range(int(round(stop / dt))):
        e = 1 - y
        raw = KP * e + xi
        u = min(max(raw, -LIMIT), LIMIT)
        clamped = raw != u and np.sign(e) == np.sign(raw)
        xi += 0.0 if clamped else dt * KI * e
        y += dt * (u - y)
        ys.append(y)
    return np.arange(len(ys)) * dt, np.array(ys)


@pytest.mark.parametrize("overrides", [{}, {"simulation.solver": "rk4", "simulation.step": 0.01}])
def test_pi_with_clamping_runs_and_matches_an_event_switched_reference(tmp_path, overrides):
    r = run_text(tmp_path, PI, **overrides)
    y, u, switches = clamped_pi_reference(r.t)
    tol = 1e-8 if not overrides else 1e-6  # rk4 with step 0.01: h^4 ~ 1e-8 per unit time
    assert np.abs(r["y"] - y).max() < tol
    assert np.abs(r["u"] - u).max() < 10 * tol
    if not overrides:
        assert np.allclose(r.events_t, switches, atol=1e-9)
    # the textbook loop converges to the same solution as its step shrinks
    te, ye = textbook_loop(5.0, 1e-4)
    assert np.abs(np.interp(r.t, te, ye) - r["y"]).max() < 5e-5


# ---- item 7: a scalar into a one-input state space ----------------------------------------------
def test_scalar_into_one_input_state_space_against_lsim_and_dlsim(tmp_path):
    r = run_text(tmp_path, """\
blocksim: 1
name: scalar_ss
blocks:
  U: {type: step, time: 0.5, after: 2}
  G: {type: state_space, A: [[0, 1], [-4, -0.4]], B: [0, 1], C: [1, 0], D: 0}
  Dz: {type: discrete_state_space, A: [[1, 0.1], [-0.4, 0.96]], B: [0, 0.1], C: [1, 0],
       D: 0.5, period: 0.1}
wires: [U -> G, U -> Dz]
simulation: {stop: 10, solver: rk45, rtol: 1e-10, atol: 1e-12, output_interval: 0.05}
record: {y: G.y, yd: Dz.y}
""")
    assert r["y"].shape == r["yd"].shape == r.t.shape  # one output: a scalar signal
    A, B, C = np.array([[0, 1], [-4, -0.4]]), np.array([[0.0], [1]]), np.array([[1.0, 0]])
    after = r.t >= 0.5
    _, y, _ = signal.lsim((A, B, C, np.zeros((1, 1))), 2 * np.ones(after.sum()),
                          r.t[after] - 0.5)
    assert np.abs(r["y"][after] - y).max() < 1e-8 and np.all(r["y"][~after] == 0)
    k = np.arange(101)
    _, yk, _ = signal.dlsim((np.array([[1, 0.1], [-0.4, 0.96]]), np.array([[0], [0.1]]), C,
                             np.array([[0.5]]), 0.1), np.where(k >= 5, 2.0, 0.0))
    hit = np.floor(r.t / 0.1 + 1e-9).astype(int)  # held from hit k to hit k + 1
    assert np.abs(r["yd"] - yk[hit, 0]).max() < 1e-12


# ---- item 9: parameters in any order ------------------------------------------------------------
def test_parameters_in_any_order(tmp_path):
    r = run_text(tmp_path, """\
blocksim: 1
name: unordered
parameters: {zeta: c/(2*sqrt(k*m)), wn: sqrt(k/m), c: 2*m*0.1*sqrt(k/m), k: 4*m, m: 2.5}
blocks:
  W: {type: constant, value: [wn, zeta]}
simulation: {stop: 1}
record: {w: W.y}
""")
    # m = 2.5, k = 10, wn = sqrt(k/m) = 2, c = 2 m 0.1 wn = 1, zeta = c / (2 sqrt(k m)) = 0.1
    assert r["w"][-1] == pytest.approx([2.0, 0.1], rel=1e-15)


# ---- item 12: blocks fed by a zoh inherit its rate ----------------------------------------------
def test_zoh_fed_blocks_give_the_sampled_values(tmp_path):
    r = run_text(tmp_path, """\
blocksim: 1
name: inherited
blocks:
  S: {type: sine}
  Z: {type: zoh, period: 0.1}
  G: {type: gain, K: 3}
  F: {type: function, expr: "u**2 + 1"}
  K1: {type: constant, value: 2}
  P: {type: product, ops: "**"}
  I: {type: integrator}
  X: {type: integrator, x0: 1}
  Mix: {type: sum, signs: "++"}
wires: [S -> Z, Z -> G, G -> F, F -> P.u1, K1 -> P.u2, P -> I, G -> Mix.u1, X -> Mix.u2, X -> X]
simulation: {stop: 3, solver: rk45, rtol: 1e-11, atol: 1e-12}
record: {p: P.y, i: I.y, mix: Mix.y}
""")
    k = np.floor(r.t / 0.1 + 1e-9).astype(int)  # the last hit at or before t
    held = 3 * np.sin(0.1 * k)
    p_k = 2 * (9 * np.sin(0.1 * np.arange(31)) ** 2 + 1)  # P at each hit
    assert np.abs(r["p"] - 2 * (held ** 2 + 1)).max() < 1e-13
    integral = np.concatenate([[0.0], np.cumsum(0.1 * p_k[:-1])])  # of a staircase
    assert np.abs(r["i"] - (integral[k] + p_k[k] * (r.t - 0.1 * k))).max() < 1e-10
    # a sum of the sampled signal and a continuous one stays continuous: e^t + held
    assert np.abs(r["mix"] - (held + np.exp(r.t))).max() < 1e-9 * np.exp(3)
