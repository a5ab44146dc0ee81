"""Fixtures of the accelerated-mode tests."""
import pytest

from blocksim.accel import build


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty cache directory, and nothing compiled in this process yet."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("BLOCKSIM_CACHE_DIR", str(cache))
    monkeypatch.setattr(build, "_LOADED", {})
    monkeypatch.setattr(build, "_FAILED", {})
    return cache / "accel"
