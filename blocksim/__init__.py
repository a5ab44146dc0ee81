"""blocksim: block-diagram simulation for robot control.

    import blocksim
    result = blocksim.run("diagrams/demo1.yaml", overrides={"simulation.stop": 2})
    result.t, result["q"]
    model = blocksim.load("diagrams/demo1.yaml")   # validated, compiled, not yet simulated
    table = blocksim.sweep("sweeps/demo3_gains.yaml", workers=2)   # many runs, one table

`run`, `load`, `execute`, `sweep`, `trim` and `linearize` (operating points and linear
models, docs/linear.md) and `register_block` (a block type of your own, see
docs/custom-blocks.md) are imported on first use, so that importing a light module
such as `blocksim.errors` does not load the engine.
"""
from .errors import BlocksimError, DiagramError, DiagramErrors, SimulationError

__all__ = ["run", "load", "execute", "sweep", "trim", "linearize", "register_block",
           "BlocksimError", "DiagramError", "DiagramErrors", "SimulationError"]
__version__ = "0.1.0"


def __getattr__(name):
    """The entry point `name`, imported on first use and kept (later uses find it here)."""
    if name in ("run", "load", "execute"):
        from . import api
        found = getattr(api, name)
    elif name == "sweep":
        from .batch.run import sweep as found
    elif name in ("trim", "linearize"):
        from . import analysis
        found = getattr(analysis, name)
    elif name == "register_block":
        from .language.library import register_block as found
    else:
        raise AttributeError(f"module 'blocksim' has no attribute {name!r}")
    globals()[name] = found
    return found
