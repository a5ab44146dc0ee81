"""Planar dynamics against an energy-based Lagrangian model and physical invariants."""
import numpy as np
import pytest

import planar_reference as ref
from blocks.planar import dynmodel, forward_dynamics, inertia_rate, kinmodel

ORDER = ("L", "Lc", "m", "ml", "I", "B")


def model(q, qd, arm, g0=9.81):
    return dynmodel(q, qd, *(arm[k] for k in ORDER), g0=g0)


def rate(q, qd, arm):
    return inertia_rate(q, qd, *(arm[k] for k in ORDER))


def state(n, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(-np.pi, np.pi, n), rng.uniform(-2.0, 2.0, n)


CASES = [(1, 1), (2, 2), (3, 3), (4, 4), (7, 5)]


@pytest.mark.parametrize("n,seed", CASES)
def test_against_energy_based_lagrangian(n, seed):
    arm = ref.random_arm(n, seed)
    q, qd = state(n, seed + 50)
    x, J, Jd, H, h, g = model(q, qd, arm)
    Hd = rate(q, qd, arm)
    # kinematic part is kinmodel's
    for a, b in zip((x, J, Jd), kinmodel(q, qd, arm["L"])):
        np.testing.assert_array_equal(a, b)
    # H: Hessian of T(q, qd) in qd (exact polarization of the quadratic form)
    np.testing.assert_allclose(H, ref.inertia(q, arm), rtol=1e-12, atol=1e-12)
    # Hd: central differences of the reference H along qd
    np.testing.assert_allclose(Hd, ref.inertia_rate(q, qd, arm), atol=1e-6)
    # h - B qd: Coriolis/centrifugal from the Lagrange equations, Hd qd - dT/dq
    np.testing.assert_allclose(h - arm["B"] * qd, ref.coriolis(q, qd, arm), atol=1e-6)
    # g: gradient of V = g0 sum m y
    np.testing.assert_allclose(g, ref.gravity(q, arm), atol=1e-6)


def test_paper_4r_arm_against_energy_based_lagrangian():
    # the paper's Table 1 arm at its section-4.1 configuration, moving
    arm, q, qd = ref.ARM4, ref.Q4, np.array([1.0, -0.5, 2.0, 0.3])
    _, _, _, H, h, g = model(q, qd, arm)
    np.testing.assert_allclose(H, ref.inertia(q, arm), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h - arm["B"] * qd, ref.coriolis(q, qd, arm), atol=1e-6)
    np.testing.assert_allclose(g, ref.gravity(q, arm), atol=1e-6)


def test_single_link_by_hand():
    # one link about a fixed joint: H = I + m lc^2 + ml l^2, h = B qd (no Coriolis),
    # g = g0 (m lc + ml l) cos q -- derived by hand (pendulum with a tip mass)
    L, Lc, m, ml, I, B = 0.8, 0.3, 2.0, 0.5, 0.07, 0.1
    q, qd = 0.6, -1.3
    _, _, _, H, h, g = dynmodel([q], [qd], [L], [Lc], [m], [ml], [I], [B], g0=9.81)
    Hd = inertia_rate([q], [qd], [L], [Lc], [m], [ml], [I], [B])
    assert H[0, 0] == pytest.approx(I + m * Lc ** 2 + ml * L ** 2, rel=1e-14)
    assert Hd[0, 0] == 0.0
    assert h[0] == pytest.approx(B * qd, rel=1e-14)
    assert g[0] == pytest.approx(9.81 * (m * Lc + ml * L) * np.cos(q), rel=1e-14)


@pytest.mark.parametrize("n", [2, 5, 12])
def test_power_balance_and_symmetry(n):
    # passivity: qd^T (h - B qd) = 1/2 qd^T Hd qd (Coriolis forces do no work with Hd - 2C
    # skew); H symmetric positive definite, Hd symmetric
    arm = ref.random_arm(n, seed=30 + n)
    q, qd = state(n, 31 + n)
    _, _, _, H, h, _ = model(q, qd, arm)
    Hd = rate(q, qd, arm)
    lhs = qd @ (h - arm["B"] * qd)
    assert lhs == pytest.approx(0.5 * qd @ Hd @ qd, rel=1e-12, abs=1e-12)
    np.testing.assert_array_equal(H, H.T)
    np.testing.assert_array_equal(Hd, Hd.T)
    assert np.linalg.eigvalsh(H).min() > 0


def test_gravity_scales_with_g0():
    arm = ref.random_arm(3, seed=8)
    q, qd = state(3, 9)
    g_moon = model(q, qd, arm, g0=1.62)[5]
    np.testing.assert_allclose(g_moon, ref.gravity(q, arm, g0=1.62), atol=1e-7)
    assert np.all(model(q, qd, arm, g0=0.0)[5] == 0.0)


@pytest.mark.parametrize("n,seed", [(3, 40), (6, 41)])
def test_forward_dynamics_solves_the_model(n, seed):
    arm = ref.random_arm(n, seed)
    q, qd = state(n, seed + 1)
    tau = np.random.default_rng(seed + 2).normal(size=n) * 5
    qdd = forward_dynamics(q, qd, tau, *(arm[k] for k in ORDER))
    _, _, _, H, h, g = model(q, qd, arm)
    np.testing.assert_allclose(H @ qdd + h + g, tau, atol=1e-10)
    np.testing.assert_allclose(qdd, np.linalg.solve(H, tau - h - g), rtol=1e-10, atol=1e-10)


def test_free_motion_conserves_energy():
    # no friction, no torque: T + V (reference energies) is constant along the motion;
    # RK4 with dt = 1 ms over 1 s keeps it to ~2e-10 relative (measured)
    arm = dict(ref.ARM4, B=np.zeros(4))
    data = [arm[k] for k in ORDER]

    def f(y):
        return np.concatenate([y[4:], forward_dynamics(y[:4], y[4:], np.zeros(4), *data)])

    y = np.concatenate([ref.Q4, [0.5, -1.0, 0.0, 2.0]])

    def energy(y):
        return ref.kinetic(y[:4], y[4:], arm) + ref.potential(y[:4], arm)

    E0, dt = energy(y), 1e-3
    for _ in range(1000):
        k1 = f(y)
        k2 = f(y + 0.5 * dt * k1)
        k3 = f(y + 0.5 * dt * k2)
        k4 = f(y + dt * k3)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    assert abs(energy(y) - E0) < 1e-8 * abs(E0)
    assert np.abs(y[:4] - ref.Q4).max() > 0.5    # it did move


def test_non_physical_data_is_rejected():
    zeros = np.zeros(2)
    with pytest.raises(ValueError, match="positive definite"):
        forward_dynamics(zeros, zeros, zeros, np.ones(2), zeros, zeros, zeros, zeros, zeros)
    with pytest.raises(ValueError, match="Lc"):
        dynmodel(zeros, zeros, np.ones(2), np.ones(3), zeros, zeros, zeros, zeros)


def test_dynmodel_returns_the_papers_six_values():
    """Seed 001: [x, J, Jd, H, h, g] = dynmodel(q, qd, L, Lc, m, ml, I, B), so a script for the
    paper ports line for line (issue 16); x, J, Jd are kinmodel's and dH/dt is inertia_rate."""
    L, Lc, m = np.array([1.0, 0.8, 0.6]), np.array([0.5, 0.4, 0.3]), np.array([2.0, 1.5, 1.0])
    ml, I, B = np.array([0.0, 0.0, 0.5]), np.array([0.2, 0.1, 0.05]), np.array([0.1, 0.1, 0.1])
    q, qd = np.array([0.3, -0.6, 1.1]), np.array([0.5, -0.2, 0.9])
    out = dynmodel(q, qd, L, Lc, m, ml, I, B)
    assert len(out) == 6
    x, J, Jd, H, h, g = out
    assert [a.shape for a in out] == [(2,), (2, 3), (2, 3), (3, 3), (3,), (3,)]
    for a, b in zip((x, J, Jd), kinmodel(q, qd, L)):
        np.testing.assert_array_equal(a, b)
    # the power balance ties h to the separately returned dH/dt: qd^T (h - B qd) = ½ qd^T Hd qd
    Hd = inertia_rate(q, qd, L, Lc, m, ml, I, B)
    assert qd @ (h - B * qd) == pytest.approx(0.5 * qd @ Hd @ qd, rel=1e-12)
