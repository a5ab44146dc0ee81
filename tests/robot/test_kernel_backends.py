"""The C kernels (``blocks.robot._ckernels``) against the reference source ``_kernels.py``.

Independent truth: ``_kernels.py`` run as plain Python (``BLOCKSIM_KERNELS=python``) and, where
numba is installed, compiled by numba; the C module is a second implementation of the same
equations. Every kernel, every built-in robot, robots with base/tool transforms, friction,
prismatic joints, both DH conventions, twist robots (helical joints, arbitrary link frames)
and n > 32 (the C kernels' heap work arrays), single configurations and stacks. Each backend
runs in its own process, chosen at import by the environment variable, and writes its answers
for the same states (fixed seed) to a file; this module's ``__main__`` is that process. Also:
which backend is chosen for which environment, numba never imported with the C backend,
argument errors.
"""

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

C = pytest.importorskip("blocks.robot._ckernels",
                        reason="C extension not built (no compiler at install time)")

ROOT = Path(__file__).resolve().parents[2]
HAVE_NUMBA = importlib.util.find_spec("numba") is not None
ROBOTS = ["puma560", "puma560akb", "stanford", "twolink", "puma560 dressed", "stanford dressed",
          "random mdh", "random 40", "twist puma560 dressed", "random twists"]
STACK = 4
CONSTANTS = ["SIGMA", "SLIDE", "X", "FRAME", "M", "RX", "RY", "RZ", "I0", "MOTOR", "VISCOUS", "UP",
             "DOWN", "NP", "BASE", "TOOL", "NW", "RNE_WORK"]


# ---------------------------------------------------------------- what every backend computes
def _random_robot(rng, n, convention, config):
    """n links of random geometry and inertia (I = A·Aᵀ + 0.01·1, positive definite), random
    friction and motor inertia, gear ratios of both signs."""
    from blocks.robot import Link

    links = []
    for j in range(n):
        A = rng.normal(size=(3, 3)) * 0.1
        links.append(Link(alpha=rng.uniform(-math.pi, math.pi), a=rng.uniform(-0.5, 0.5),
                          d=0.0 if config[j] == "P" else rng.uniform(-0.5, 0.5),
                          theta=rng.uniform(-1, 1) if config[j] == "P" else 0.0,
                          type="prismatic" if config[j] == "P" else "revolute",
                          offset=rng.uniform(-1, 1), m=rng.uniform(0.5, 5),
                          r=rng.normal(size=3) * 0.1, I=A @ A.T + 0.01 * np.eye(3),
                          Jm=rng.uniform(0, 1e-3), G=rng.choice([-1, 1]) * rng.uniform(1, 100),
                          B=rng.uniform(0, 1e-3), Tc=(rng.uniform(0, 0.5), -rng.uniform(0, 0.5)),
                          convention=convention))
    return links


def _random_twists(rng, n):
    """A TwistRobot of n joints: revolute, helical (pitch) and prismatic about random axes,
    random link frames, inertias, friction, motor inertia and gear ratios of both signs."""
    from blocks.robot import TwistRobot
    from blocks.robot.twists import exp_twist, screw, translation

    twists = [translation(rng.normal(size=3)) if k % 3 == 1 else
              screw(rng.normal(size=3), rng.normal(size=3), 0.05 * (k % 3)) for k in range(n)]
    twists = [t / np.linalg.norm(t[3:] if t[3:].any() else t[:3]) for t in twists]
    A = rng.normal(size=(n, 3, 3)) * 0.1
    return TwistRobot(twists, exp_twist(rng.normal(size=6), 1.0),
                      frames=[exp_twist(rng.normal(size=6), 1.0) for _ in range(n)],
                      m=rng.uniform(0.5, 5, n), r=rng.normal(size=(n, 3)) * 0.1,
                      I=A @ np.swapaxes(A, 1, 2) + 0.01 * np.eye(3), Jm=rng.uniform(0, 1e-3, n),
                      G=rng.choice([-1, 1], n) * rng.uniform(1, 100, n), B=rng.uniform(0, 1e-3, n),
                      Tc=np.column_stack([rng.uniform(0, 0.5, n), -rng.uniform(0, 0.5, n)]),
                      gravity=(0.3, -0.2, 9.81), base=exp_twist(rng.normal(size=6), 1.0),
                      tool=exp_twist(rng.normal(size=6), 0.5))


def _robots():
    from blocks.robot import SerialLink, TwistRobot, load_robot
    from blocks.robot.transforms import rpy2tr, transl

    rng = np.random.default_rng(2024)
    base = transl(0.1, -0.2, 0.3) @ rpy2tr(0.3, -0.4, 1.1)
    tool = transl(0.02, -0.01, 0.15) @ rpy2tr(-0.7, 0.2, 0.5)
    out = {name: load_robot(name) for name in ROBOTS[:4]}
    # puma560 carries viscous and Coulomb friction; gravity oblique to the base
    out["puma560 dressed"] = out["puma560"].configure(base=base, tool=tool,
                                                      gravity=(0.5, -1.0, 9.81))
    out["stanford dressed"] = out["stanford"].configure(base=tool, tool=base)
    out["random mdh"] = SerialLink(_random_robot(rng, 7, "modified", "RPRRPRR"), base=base,
                                   tool=tool, gravity=(0.3, 0.2, 9.81))
    out["random 40"] = SerialLink(_random_robot(rng, 40, "standard", "RRPR" * 10), base=tool,
                                  tool=base)
    out["twist puma560 dressed"] = TwistRobot.from_dh(out["puma560 dressed"])
    out["random twists"] = _random_twists(rng, 7)
    return out


def _states(rng, m, n):
    q = rng.uniform(-math.pi, math.pi, m * n)
    qd = rng.normal(size=m * n)
    qd[::3] = 0.0                      # friction at rest: Tc = 0
    return q, qd, rng.normal(size=m * n), rng.normal(size=m * n), rng.normal(size=6 * m)


def _answers(K, robot, rng):
    """name -> array for every kernel of module K at m = 1 and m = STACK random states."""
    P, W, g, n = robot._P, robot._W, robot._g, robot.n
    res = {}
    for m in (1, STACK):
        q, qd, qdd, tau, fext = _states(rng, m, n)
        calls = {
            "fkine": (K.fkine, (P, W, q), (4 * m, 4)),
            "fkine_all": (K.fkine_all, (P, W, q), (4 * m * (n + 1), 4)),
            "jacob0": (K.jacobian, (P, W, q, False), (6 * m, n)),
            "jacobn": (K.jacobian, (P, W, q, True), (6 * m, n)),
            "jacob_dot": (K.jacob_dot, (P, W, q, qd), (6 * m,)),
            "friction": (K.friction, (P, qd), (m * n,)),
            "rne": (K.rne, (P, W, g, q, qd, qdd, fext[:6]), (m * n,)),
            "rne_fext_rows": (K.rne, (P, W, g, q, qd, qdd, fext), (m * n,)),
            "inertia": (K.inertia, (P, W, q), (m * n, n)),
            "coriolis": (K.coriolis, (P, W, q, qd), (m * n, n)),
            "accel": (K.accel, (P, W, g, q, qd, tau, fext), (m * n,)),
        }
        for name, (fn, args, shape) in calls.items():
            out = np.full(shape, np.nan)
            fn(*args, out)
            res[f"{name} m={m}"] = out
    return res


def _dump(path):
    """Run in a subprocess: every robot's answers from the backend chosen by the environment."""
    from blocks.robot import backend

    robots = _robots()
    K = next(iter(robots.values()))._k
    arrays = {f"{r}|{k}": v for r, robot in robots.items()
              for k, v in _answers(K, robot, np.random.default_rng(7)).items()}
    arrays.update({f"const|{c}": np.array(getattr(K, c)) for c in CONSTANTS})
    np.savez(path, **arrays)
    print(json.dumps({"backend": backend.name(), "module": K.__name__,
                      "numba imported": "numba" in sys.modules}))


# ---------------------------------------------------------------- running the backends
def _env(**settings):
    env = {k: v for k, v in os.environ.items() if k not in ("BLOCKSIM_KERNELS", "BLOCKSIM_NO_JIT")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env.update(settings)
    return env


def _run(script_args, **settings):
    return subprocess.run([sys.executable, *script_args], env=_env(**settings), cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    """backend -> (report, answers) for c, python and (when installed) numba."""
    tmp = tmp_path_factory.mktemp("kernels")
    got = {}
    for name in ("c", "python") + (("numba",) if HAVE_NUMBA else ()):
        path = tmp / f"{name}.npz"
        done = _run([__file__, str(path)], BLOCKSIM_KERNELS=name)
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout.splitlines()[-1])
        with np.load(path) as data:
            got[name] = report, {k: data[k] for k in data.files}
    return got


def _compare(mine, reference, robot):
    """Every answer of `robot` within 1e-12 of the reference, relative to the array's scale."""
    keys = [k for k in reference if k.startswith(robot + "|")]
    assert keys and set(keys) <= set(mine)
    bad = []
    for key in keys:
        ref, val = reference[key], mine[key]
        assert np.all(np.isfinite(val)), f"{key}: entries left unwritten"
        scale = np.max(np.abs(ref))
        err = np.max(np.abs(val - ref))
        if not err <= 1e-12 * scale:
            bad.append(f"{key}: max |diff| {err:.3g}, scale {scale:.3g}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("robot", ROBOTS)
def test_c_equals_plain_python(answers, robot):
    assert answers["c"][0]["module"] == "blocks.robot._ckernels"
    assert answers["python"][0]["backend"] == "python"
    _compare(answers["c"][1], answers["python"][1], robot)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
@pytest.mark.parametrize("robot", ROBOTS)
def test_c_equals_numba(answers, robot):
    assert answers["numba"][0]["backend"] == "numba"
    _compare(answers["c"][1], answers["numba"][1], robot)


def test_layout_constants_match_the_reference(answers):
    """P and W are packed by SerialLink from the module's constants: both modules agree."""
    ref = answers["python"][1]
    for c in CONSTANTS:
        assert getattr(C, c) == int(ref[f"const|{c}"]), c


# ---------------------------------------------------------------- backend choice
_PROBE = """
import json, sys
from blocks.robot import load_robot, backend
import blocks.robot.dynamics_blocks, blocks.robot.kinematics_blocks
r = load_robot("puma560")
r.accel(r.poses["qn"], [0.1] * 6, [0.0] * 6)
print(json.dumps([backend.name(), r._k.__name__, "numba" in sys.modules]))
"""


@pytest.mark.parametrize("settings, expected", [
    ({}, ["c", "blocks.robot._ckernels", False]),
    ({"BLOCKSIM_KERNELS": "c"}, ["c", "blocks.robot._ckernels", False]),
    ({"BLOCKSIM_KERNELS": " C "}, ["c", "blocks.robot._ckernels", False]),
    ({"BLOCKSIM_KERNELS": "python"}, ["python", "blocks.robot._kernels", False]),
    ({"BLOCKSIM_NO_JIT": "1"}, ["python", "blocks.robot._kernels", False]),
    ({"BLOCKSIM_NO_JIT": "1", "BLOCKSIM_KERNELS": "c"}, ["python", "blocks.robot._kernels", False]),
    pytest.param({"BLOCKSIM_KERNELS": "numba"}, ["numba", "blocks.robot._kernels", True],
                 marks=pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")),
])
def test_backend_chosen_by_environment(settings, expected):
    """C by default and never numba with it (the robot block's import included)."""
    done = _run(["-c", _PROBE], **settings)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == expected


def test_unknown_backend_is_an_error():
    done = _run(["-c", _PROBE], BLOCKSIM_KERNELS="fortran")
    assert done.returncode != 0
    assert "BLOCKSIM_KERNELS must be one of c, numba, python, got 'fortran'" in done.stderr


# ---------------------------------------------------------------- arguments
@pytest.fixture(scope="module")
def puma():
    from blocks.robot import load_robot
    r = load_robot("puma560")
    return r._P, r._W, r._g


def _raises(message, fn, *args):
    with pytest.raises(ValueError, match=message):
        fn(*args)


def test_argument_errors(puma):
    P, W, g = puma
    q, z6, out = np.zeros(6), np.zeros(6), np.empty(6)
    _raises("not a positive multiple of n", C.rne, P, W, g, np.zeros(7), np.zeros(7),
            np.zeros(7), z6, np.empty(7))
    _raises("not a positive multiple of n", C.fkine, P, W, np.zeros(0), np.empty((0, 4)))
    _raises("q, qd, qdd and out lengths differ", C.rne, P, W, g, q, q, q, z6, np.empty(12))
    _raises("fext must have 6 or 6", C.rne, P, W, g, q, q, q, np.zeros(12), out)
    _raises("out has the wrong shape", C.fkine, P, W, q, np.empty((8, 4)))
    _raises("out has the wrong shape", C.inertia, P, W, q, np.empty((6, 5)))
    _raises("out must have 2 dimensions", C.inertia, P, W, q, np.empty(36))
    _raises("q must be a float64 array", C.fkine, P, W, np.zeros(6, int), np.empty((4, 4)))
    _raises("q must be a C-contiguous", C.fkine, P, W, np.zeros(12)[::2], np.empty((4, 4)))
    _raises("q must be a C-contiguous", C.fkine, P, W, [0.0] * 6, np.empty((4, 4)))
    ro = np.empty((4, 4))
    ro.flags.writeable = False
    _raises("out must be a writable", C.fkine, P, W, q, ro)
    _raises(rf"P must be an \(n, {C.NP}\) array", C.fkine, P[:, 1:].copy(), W, q, np.empty((4, 4)))
    _raises(f"W must have {C.NW} elements", C.fkine, P, W[1:].copy(), q, np.empty((4, 4)))
    _raises("g must have 3 elements", C.rne, P, W, np.zeros(2), q, q, q, z6, out)
    with pytest.raises(TypeError, match="takes 8 arguments"):
        C.rne(P, W, g, q, q, q, z6)


def test_accel_reports_a_singular_inertia_matrix(puma):
    """Massless links and no motor inertia: M(q) = 0, the Cholesky factorisation must fail
    with the message of _kernels.py (the robot block turns it into a SimulationError)."""
    P, W, g = puma
    P = P.copy()
    P[:, [C.M, *range(C.I0, C.I0 + 9), C.MOTOR]] = 0.0      # mass, inertia, motor inertia
    _raises("inertia matrix is not positive definite", C.accel, P, W, g, np.zeros(6),
            np.zeros(6), np.ones(6), np.zeros(6), np.empty(6))


def test_inputs_may_be_read_only(puma):
    """Inputs are only read: a frozen array (e.g. a block's constant default input) is fine."""
    P, W, g = puma
    q = np.linspace(-1, 1, 6)
    T = np.empty((4, 4))
    C.fkine(P, W, q, T)
    q.flags.writeable = False
    T2 = np.empty((4, 4))
    C.fkine(P, W, q, T2)
    assert np.array_equal(T, T2)


def test_subtract_coulomb_ramp():
    """out = tau − Fc(qd), Fc = up·min(qd/δ, 1) above zero and down·max(qd/δ, −1) below
    (the robot block's regularised Coulomb friction), written out with numpy here. up and
    down are the levels of coulomb_levels, |G|·Tc+ and −|G|·Tc−, both ≥ 0: Fc opposes
    motion, Fc = up at qd ≥ δ and −down at qd ≤ −δ."""
    rng = np.random.default_rng(3)
    qd = np.array([-1.0, -2e-4, 0.0, 3e-4, 2.0, -0.0, 1e-3, -1e-3])
    tau = rng.normal(size=8)
    up, down = rng.uniform(0, 1, 8), rng.uniform(0, 1, 8)
    band = 1e-3
    out = np.empty(8)
    C.subtract_coulomb(qd, tau, up, down, 1.0 / band, out)
    s = qd / band
    expected = tau - np.where(s > 0, up * np.minimum(s, 1), down * np.maximum(s, -1))
    np.testing.assert_allclose(out, expected, rtol=1e-15, atol=0)
    fc = tau - out
    assert np.all(np.sign(fc) == np.sign(qd))         # friction opposes motion (0 at rest)
    far = np.abs(qd) >= band
    np.testing.assert_allclose(fc[far], np.where(qd > 0, up, -down)[far], rtol=1e-12)


if __name__ == "__main__":
    _dump(sys.argv[1])
