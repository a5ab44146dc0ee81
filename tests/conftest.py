"""Fixtures shared by the test folders."""
import os
import sys

import pytest


@pytest.fixture(autouse=True, scope="session")
def _accel_cache(tmp_path_factory):
    """Accelerated mode compiles into a cache of the session's own (one compile per
    structure, shared by the tests and the processes they start), never the user's."""
    previous = os.environ.get("BLOCKSIM_CACHE_DIR")
    os.environ["BLOCKSIM_CACHE_DIR"] = str(tmp_path_factory.mktemp("accel_cache"))
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
