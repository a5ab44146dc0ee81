"""Accelerated-mode tests compile into a cache of their own, shared by the session (one
compile per structure), never the user's."""
import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _accel_cache(tmp_path_factory):
    previous = os.environ.get("BLOCKSIM_CACHE_DIR")
    os.environ["BLOCKSIM_CACHE_DIR"] = str(tmp_path_factory.mktemp("accel_cache"))
    yield
    if previous is None:
        os.environ.pop("BLOCKSIM_CACHE_DIR", None)
    else:
        os.environ["BLOCKSIM_CACHE_DIR"] = previous
