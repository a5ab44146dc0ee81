"""Random sources: statistics over 10^4 hits, and the reproducibility contract -- hit k gives
draw k of numpy.random.default_rng(seed), whatever the solver or the run."""
import numpy as np
import pytest
from harness import Rig

import blocksim
from blocksim.block import Sample
from blocksim.params import ParamError
from blocks.random_sources import Noise, Random

N = 10_000


def hits(rig, n, period):
    rig.start(0.0)
    out = [rig.y["y"].copy()]
    rig.block.update(0.0)
    for k in range(1, n):
        out.append(rig.hit(k * period))
    return np.array(out)


def test_noise_variance_is_power_over_period_and_mean_zero():
    power, period = 0.02, 0.005
    rig = Rig(Noise, {"power": power, "period": period, "seed": 7})
    assert rig.block.sample == Sample(period)
    y = hits(rig, N, period)
    var = power / period  # Simulink's band-limited white noise: N(0, power/period)
    sigma = np.sqrt(var)
    # sample mean: standard error sigma/sqrt(N); sample variance: relative error sqrt(2/N)
    assert abs(y.mean()) < 4 * sigma / np.sqrt(N)
    assert abs(y.var() / var - 1) < 4 * np.sqrt(2 / N)
    # hit k is draw k of default_rng(seed), scaled
    np.testing.assert_array_equal(y, sigma * np.random.default_rng(7).standard_normal(N))


def test_noise_vector_shape_and_power_per_element():
    rig = Rig(Noise, {"power": [1, 4], "period": 1, "seed": 1, "shape": [2]})
    assert rig.out_shapes == {"y": (2,)}
    y = hits(rig, N, 1.0)
    np.testing.assert_allclose(y.std(axis=0), [1, 2], rtol=0.05)  # sqrt(power/period)
    z = np.random.default_rng(1).standard_normal((N, 2))  # elements drawn row by row
    np.testing.assert_array_equal(y, z * [1, 2])


def test_random_uniform_and_normal():
    u = hits(Rig(Random, {"distribution": "uniform", "low": -1, "high": 3, "period": 1,
                          "seed": 5}), N, 1.0)
    assert u.min() >= -1 and u.max() < 3
    assert abs(u.mean() - 1) < 4 * (4 / np.sqrt(12)) / np.sqrt(N)  # U[a,b): sd (b-a)/sqrt(12)
    np.testing.assert_array_equal(u, -1 + 4 * np.random.default_rng(5).random(N))
    g = hits(Rig(Random, {"mean": 10, "std": 0.5, "period": 1, "seed": 5}), N, 1.0)
    assert abs(g.mean() - 10) < 4 * 0.5 / np.sqrt(N)
    assert abs(g.std() / 0.5 - 1) < 4 * np.sqrt(1 / (2 * N))


def test_same_seed_same_sequence_other_seed_other_sequence():
    a = hits(Rig(Noise, {"seed": 11}), 3000, 0.1)  # crosses chunk boundaries
    b = hits(Rig(Noise, {"seed": 11}), 3000, 0.1)
    c = hits(Rig(Noise, {"seed": 12}), 3000, 0.1)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_a_second_run_restarts_the_sequence():
    rig = Rig(Noise, {"seed": 2})
    first = hits(rig, 1500, 0.1)
    rig.xd[:] = 0.0  # a new run starts from the initial discrete state
    np.testing.assert_array_equal(hits(rig, 1500, 0.1), first)


NOISY = """
blocksim: 1
blocks:
  N: {type: noise, power: 0.5, period: 0.01, seed: 42}
  R: {type: random, period: 0.03, seed: 4, distribution: uniform, shape: [2]}
  plant: {type: transfer_function, num: [1], den: [0.2, 1]}
wires: [N -> plant]
simulation: {stop: 3}
record: {n: N.y, r: R.y, y: plant.y}
"""


@pytest.mark.parametrize("solver", ["rk45", "euler", "radau", "dop853"])
def test_same_sequence_with_every_solver(tmp_path, solver):
    path = tmp_path / "noisy.yaml"
    path.write_text(NOISY)
    grid = {"simulation.output_interval": 0.01}
    r = blocksim.run(path, overrides={"simulation.solver": solver, **grid})
    # one row per hit of N (t = 0.01 k); hit k holds sqrt(power/period) * z_k
    k = np.round(r.t / 0.01).astype(int)
    z = np.random.default_rng(42).standard_normal(301)
    np.testing.assert_array_equal(r["n"], np.sqrt(0.5 / 0.01) * z[k])
    draws = np.random.default_rng(4).random((101, 2))
    np.testing.assert_array_equal(r["r"], draws[np.floor(r.t / 0.03 + 1e-9).astype(int)])
    assert r.meta["seeds"] == {"N": 42, "R": 4}


@pytest.mark.parametrize("cls, params, bad", [
    (Noise, {"power": -1}, "power"),
    (Noise, {"period": 0}, "period"),
    (Noise, {"shape": [2.5]}, "shape"),
    (Noise, {"shape": [[2]]}, "shape"),
    (Noise, {"seed": -3}, "seed"),
    (Noise, {"power": [1, 2, 3], "shape": [2]}, "power"),
    (Random, {"period": 1, "low": 2, "high": 1, "distribution": "uniform"}, "high"),
    (Random, {"period": 1, "std": -1}, "std"),
    # 10^10 elements: a MemoryError (74.5 GiB) when the first draws were made
    (Random, {"period": 1, "shape": [100_000, 100_000]}, "shape"),
    (Noise, {"shape": [10**7 + 1]}, "shape"),
])
def test_parameter_errors(cls, params, bad):
    with pytest.raises(ParamError) as e:
        Rig(cls, params)
    assert e.value.param == bad


def test_a_large_signal_draws_the_same_stream_in_smaller_chunks():
    # 1024 draws were made at a time whatever the shape (10^7 elements: 80 GB at once); the
    # chunks hold about a million values now, and hit k is still draw k of the stream
    rig = Rig(Random, {"period": 1.0, "shape": [3000], "seed": 5})
    got = hits(rig, 800, 1.0)
    np.testing.assert_array_equal(got, np.random.default_rng(5).standard_normal((800, 3000)))


def test_the_compiled_form_draws_a_large_signal_in_the_same_small_chunks():
    # run_data (the draws of a run's hits, for accelerated mode) still drew 1024 at a time:
    # 2^21 elements made 16 GB for three hits. Now as many draws as the hits need, in the
    # chunks the interpreted block uses, and the same stream
    block = Rig(Random, {"period": 1.0, "shape": [1 << 21], "seed": 7}).block
    draws = block.run_data(0.0, 2.5)["draws"]  # hits at t = 0, 1, 2
    assert draws.size <= 4 * (1 << 21)
    expected = np.random.default_rng(7).standard_normal((3, 1 << 21))
    np.testing.assert_array_equal(draws[:3], expected)
