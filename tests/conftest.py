"""Fixtures shared by the test folders."""
import hashlib
import os
import sys
from pathlib import Path

import pytest


@pytest.fixture(autouse=True, scope="session")
def _accel_cache(tmp_path_factory):
    """Accelerated mode compiles into a cache of the session's own (one compile per
    structure, shared by the tests and the processes they start), never the user's. Under
    pytest-xdist the workers share one (the folder above each worker's own temporary folder
    is the run's): a structure two workers need is compiled once, as by two processes of a
    user (the cache is safe for that: tests/accel/test_accel_runs.py)."""
    previous = os.environ.get("BLOCKSIM_CACHE_DIR")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        cache = tmp_path_factory.getbasetemp().parent / "accel_cache"
        cache.mkdir(exist_ok=True)
    else:
        cache = tmp_path_factory.mktemp("accel_cache")
    os.environ["BLOCKSIM_CACHE_DIR"] = str(cache)
    yield
    if previous is None:
        os.environ.pop("BLOCKSIM_CACHE_DIR", None)
    else:
        os.environ["BLOCKSIM_CACHE_DIR"] = previous


@pytest.fixture
def stand_in_ffmpeg(tmp_path, monkeypatch):
    """`install(body)`: an executable `ffmpeg` in its own folder, a Python script running
    `body` (with sys imported), put first on the PATH (or alone on it with
    `alone=True`); returns its path. Tests of the animation writers read what it was given."""
    def install(body, alone=False):
        folder = tmp_path / "stand-in-bin"
        folder.mkdir(exist_ok=True)
        program = folder / "ffmpeg"
        program.write_text(f"#!{sys.executable}\nimport sys\n{body}")
        program.chmod(0o755)
        if alone:
            monkeypatch.setenv("PATH", str(folder))
        else:
            monkeypatch.setenv("PATH", str(folder), prepend=os.pathsep)
        return program
    return install


@pytest.fixture
def run_diagram(tmp_path):
    """`run(text, **overrides)`: the diagram `text` written to a file and run by
    blocksim.run with the overrides (dotted paths as keys); returns the Result."""
    import blocksim

    def run(text, **overrides):
        path = tmp_path / "d.yaml"
        path.write_text(text)
        return blocksim.run(path, overrides=overrides)
    return run


@pytest.fixture
def plugin_diagram(monkeypatch, tmp_path):
    """`diagram(kind, variants)`: the path of a diagram S -> P -> I (a step of 1 at t = 0.5,
    plugin block P of type `kind`, an integrator; rk4, step 0.01, to t = 1), with the plugin
    types registered: `twice` (y = 2u, with a sound compiled form and Jacobian) and each of
    `variants` {type: {method: function}}, `twice` with those methods replaced."""
    import numpy as np

    import blocksim
    from blocksim.accel.lowering import Lowering
    from blocksim.block import Block, In, Jacobian, Out
    from blocksim.language import library

    class Twice(Block):
        type = "twice"

        def ports(self):
            return [In("u")], [Out("y", feedthrough=("u",))]

        def infer(self, shapes):
            return {"y": shapes["u"]}

        def output(self, t):
            np.multiply(self.u[0], 2.0, out=self.y[0])

        def declare(self, d):
            d.derived("gain", ())

        def derive(self, p):
            return {"gain": 2.0}

        def lower(self, c):
            return Lowering({"output": c.loop(c.n_out["y"], "out_y[i] = in_u[i] * P_gain[0];")})

        def jacobian(self, pade=None):
            return Jacobian(np.zeros((0, 0)), np.zeros((0, 1)), np.zeros((1, 0)), [[2.0]])

    monkeypatch.setattr(library, "_registered", {})

    def diagram(kind, variants):
        blocksim.register_block(Twice, name="twice")
        for name, methods in variants.items():
            blocksim.register_block(type(name, (Twice,), {"type": name, **methods}), name=name)
        path = tmp_path / f"{kind}.yaml"
        path.write_text("blocksim: 1\nname: plugins\nblocks:\n  S: {type: step, time: 0.5}\n"
                        f"  P: {{type: {kind}}}\n  I: {{type: integrator}}\n"
                        "wires: [S -> P, P -> I]\n"
                        "simulation: {stop: 1, solver: rk4, step: 0.01}\nrecord: {i: I.y}\n")
        return path
    return diagram


# ---- FMUs built once per test session from the C models in tests/fmu/models (FMI 2.0 and
# 3.0), with the machine's C compiler against the FMI headers fmpy ships ----
FMU_SOURCES = Path(__file__).parent / "fmu" / "models"
FMU_MODELS = ("dahlquist", "vanderpol", "bouncing_ball", "stair", "feedthrough", "lag",
              "ticker", "stiff", "sawtooth")


@pytest.fixture(scope="session")
def fmus(tmp_path_factory):
    """{(model name, FMI version): path of its FMU}."""
    pytest.importorskip("fmpy")
    from blocksim.fmi.build import BuildError, build_fmu, model_from_yaml
    out = tmp_path_factory.mktemp("fmus")
    built = {}
    try:
        for name in FMU_MODELS:
            model = model_from_yaml(FMU_SOURCES / f"{name}.yaml")
            for fmi in (2, 3):
                built[name, fmi] = build_fmu(model, out / f"{name}_fmi{fmi}.fmu", fmi)
    except BuildError as e:
        if "no C compiler" in str(e):
            pytest.skip(str(e))
        raise
    return built


@pytest.fixture(scope="session")
def fmu_diagram(fmus):
    """fmu_diagram(name, fmi, text): a diagram file beside the FMU of (name, fmi), `FMU` in the
    text standing for its file name."""
    def write(name, fmi, text):
        fmu = fmus[name, fmi]
        path = fmu.parent / f"{fmu.stem}_{hashlib.sha1(text.encode()).hexdigest()[:10]}.yaml"
        path.write_text(text.replace("FMU", fmu.name))
        return path
    return write
