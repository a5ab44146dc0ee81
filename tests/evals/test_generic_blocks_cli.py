"""The version 1.1 generic blocks run end to end from the command line, in one diagram whose
every recorded signal is checked against an independent computation: the chirp's formula,
numpy/scipy interpolation of it, scipy.signal.dlsim of its samples, default_rng draws, the
pulse's exact area, the measured file played back."""
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import interpolate, signal

from blocksim.cli import main

ROOT = Path(__file__).resolve().parents[2]

TOUR = """
blocksim: 1
name: tour
description: the version 1.1 generic blocks that work without a feedback loop, in one diagram
parameters: {T: 0.1}
blocks:
  Chirp:  {type: chirp, amplitude: 0.9, f0: 0.2, f1: 1.5, t1: 4}
  Pulse:  {type: pulse, amplitude: 2, period: 0.4, width: 0.3, delay: 0.1}
  Area:   {type: integrator}
  Noise:  {type: noise, power: 0.002, period: 0.05, seed: 9}
  Rand:   {type: random, distribution: uniform, low: -1, high: 1, period: 0.2, seed: 3,
           shape: [2]}
  Table:  {type: lookup, x: [-1, -0.2, 0.3, 1], y: [2, 0, 1, -1], method: pchip}
  Map:    {type: lookup_2d, x: [-1, 0, 1], y: [-1, 1], z: [[0, 1], [2, 3], [4, 6]]}
  Exp:    {type: math, fn: exp}
  DTF:    {type: discrete_transfer_function, num: [0.3, 0.1], den: [1, -0.6], period: T}
  Vec:    {type: reshape, shape: [1]}
  DSS:    {type: discrete_state_space, A: [[0.5, 0.2], [0, 0.8]], B: [[1], [0.5]],
           C: [[1, 1]], D: 0.2, period: T, x0: [1, 0]}
  DInt:   {type: discrete_integrator, K: 3, period: T, method: trapezoidal, lower: -0.2,
           upper: 0.25}
  Delay:  {type: transport_delay, delay: 0.3, x0: -1}
  Quant:  {type: quantizer, interval: 0.2}
  Half:   {type: constant, value: 0.5}
  Above:  {type: relational, op: ">"}
  Not:    {type: logical, op: not}
  Meas:   {type: from_file, file: meas.csv, method: previous}
  Save:   {type: to_file, file: saved.csv, inputs: 2}
wires:
  - Pulse -> Area
  - Chirp -> Table
  - Chirp -> Map.u1
  - Chirp -> Map.u2
  - Chirp -> Exp
  - Chirp -> DTF
  - Chirp -> Vec
  - Vec -> DSS
  - Chirp -> DInt
  - Chirp -> Delay
  - Chirp -> Quant
  - Chirp -> Above.u1
  - Half -> Above.u2
  - Above -> Not
  - Meas -> Save.u1
  - Exp -> Save.u2
simulation: {stop: 4, rtol: 1e-8, atol: 1e-10}
record: {chirp: Chirp.y, area: Area.y, noise: Noise.y, rand: Rand.y, table: Table.y,
         map: Map.y, exp: Exp.y, dtf: DTF.y, dss: DSS.y, dint: DInt.y, meas: Meas.y,
         delayed: Delay.y, quant: Quant.y, below: Not.y}
"""


def chirp(t):
    return 0.9 * np.sin(2 * np.pi * (0.2 * t + (1.5 - 0.2) * t ** 2 / (2 * 4)))


@pytest.fixture(scope="module")
def tour(tmp_path_factory):
    d = tmp_path_factory.mktemp("tour")
    (d / "tour.yaml").write_text(TOUR)
    tm = np.array([0.0, 0.7, 1.9, 2.5, 3.2])
    (d / "meas.csv").write_text("t,v\n" + "".join(f"{a!r},{b!r}\n" for a, b in
                                                 zip(tm.tolist(), [1.0, -2.0, 0.5, 4.0, 3.0])))
    cli = subprocess.run([sys.executable, "-m", "blocksim", "run", "tour.yaml", "--csv",
                          "--out", "run"], capture_output=True, text=True, cwd=d,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert cli.returncode == 0, cli.stderr
    with np.load(d / "run" / "results.npz") as npz:
        data = {k: npz[k] for k in npz.files}
    return d, data


def hits(t, period):
    """Index k of the last hit k*period at or before each time (hits are landed on exactly)."""
    return np.floor(t / period + 1e-9).astype(int)


def test_sources(tour):
    _, r = tour
    t = r["t"]
    np.testing.assert_allclose(r["chirp"], chirp(t), atol=1e-13)
    # 9 whole pulses fit in [0.1, 3.7]; the 10th is 2 high from 3.7 to 3.82: area exact
    assert r["area"][-1] == pytest.approx(2 * 0.3 * 0.4 * 10, rel=1e-12)
    z = np.random.default_rng(9).standard_normal(81)
    np.testing.assert_array_equal(r["noise"], math.sqrt(0.002 / 0.05) * z[hits(t, 0.05)])
    draws = -1 + 2 * np.random.default_rng(3).random((21, 2))
    np.testing.assert_array_equal(r["rand"], draws[hits(t, 0.2)])


def test_transport_delay(tour):
    _, r = tour
    t = r["t"]
    np.testing.assert_allclose(r["delayed"], np.where(t < 0.3, -1.0, chirp(t - 0.3)), atol=1e-7)
    assert 0.3 in t  # the jump from x0 to u(0) is landed on


def test_quantizer_and_logic(tour):
    _, r = tour
    c = chirp(r["t"])
    at_step = np.abs(np.abs(c) / 0.2 % 1 - 0.5) < 1e-6  # a row at a located step
    expected = 0.2 * np.sign(c) * np.floor(np.abs(c) / 0.2 + 0.5)
    np.testing.assert_allclose(r["quant"][~at_step], expected[~at_step], atol=1e-15)
    at_edge = np.abs(c - 0.5) < 1e-6
    np.testing.assert_array_equal(r["below"][~at_edge], (c <= 0.5)[~at_edge])


def test_tables_and_math(tour):
    _, r = tour
    c = chirp(r["t"])
    pchip = interpolate.PchipInterpolator([-1, -0.2, 0.3, 1], [2, 0, 1, -1])
    np.testing.assert_allclose(r["table"], pchip(c), atol=1e-9)
    grid = interpolate.RegularGridInterpolator(([-1, 0, 1], [-1, 1]), [[0, 1], [2, 3], [4, 6]])
    np.testing.assert_allclose(r["map"], grid(np.column_stack([c, c])), atol=1e-9)
    np.testing.assert_allclose(r["exp"], np.exp(c), rtol=1e-9)


def test_discrete_systems(tour):
    _, r = tour
    t = r["t"]
    k = hits(t, 0.1)
    samples = chirp(0.1 * np.arange(41))
    _, dtf = signal.dlsim(([0.3, 0.1], [1, -0.6], 0.1), samples)
    np.testing.assert_allclose(r["dtf"], dtf[k, 0], atol=1e-12)
    _, dss, _ = signal.dlsim(([[0.5, 0.2], [0, 0.8]], [[1], [0.5]], [[1, 1]], 0.2, 0.1),
                             samples, x0=[1, 0])
    np.testing.assert_allclose(r["dss"][:, 0], dss[k, 0], atol=1e-12)
    y = [0.0]  # trapezoidal recursion, clipped to [-0.2, 0.25]
    for n in range(1, 41):
        y.append(min(max(y[-1] + 3 * 0.1 * (samples[n] + samples[n - 1]) / 2, -0.2), 0.25))
    np.testing.assert_allclose(r["dint"], np.array(y)[k], atol=1e-12)
    assert r["dint"].max() == 0.25 and r["dint"].min() == -0.2  # both limits reached


def test_files(tour):
    d, r = tour
    t = r["t"]
    tm = np.array([0.0, 0.7, 1.9, 2.5, 3.2])
    held = np.array([1.0, -2.0, 0.5, 4.0, 3.0])[np.searchsorted(tm, t, side="right") - 1]
    np.testing.assert_array_equal(r["meas"], held)
    assert set(tm) <= set(t)  # the solver landed on every time point of the file
    saved = np.genfromtxt(d / "run" / "saved.csv", delimiter=",", names=True)
    np.testing.assert_array_equal(saved["t"], t)
    np.testing.assert_array_equal(saved["u1"], held)
    np.testing.assert_array_equal(saved["u2"], r["exp"])
    results = np.genfromtxt(d / "run" / "results.csv", delimiter=",", names=True)
    np.testing.assert_array_equal(results["rand1"], r["rand"][:, 1])  # header rand[1]


@pytest.mark.parametrize("block, param, words", [
    ("{type: discrete_transfer_function, num: [1], den: [0, 1, 0.5], period: 0.1}", "den",
     "leading coefficient"),
    ("{type: lookup, x: [], y: []}", "x", "empty"),
    ("{type: lookup, x: [0, 2, 1], y: [1, 2, 3]}", "x", "strictly increasing"),
    ("{type: lookup_2d, x: [0, 1], y: [1, 1], z: [[1, 2], [3, 4]]}", "y", "strictly increasing"),
    ("{type: transport_delay, delay: -0.5}", "delay", "> 0"),
    ("{type: pulse, width: 1.5}", "width", "< 1"),
    ("{type: noise, seed: 1.5}", "seed", "integer"),
    ("{type: math, fn: ln}", "fn", "expected one of"),
])
def test_bad_parameters_are_reported_at_their_line(tmp_path, monkeypatch, capsys, block, param,
                                                   words):
    (tmp_path / "bad.yaml").write_text(f"""blocksim: 1
blocks:
  Src: {{type: sine}}
  Bad: {block}
simulation: {{stop: 1}}
""")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "bad.yaml"]) == 2  # the command line, in this process
    err = capsys.readouterr().err
    assert "Traceback" not in err
    first = err.splitlines()[0]
    assert first.startswith("bad.yaml:4: error:") and f"'{param}'" in first and words in first, \
        err
