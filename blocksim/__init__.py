"""blocksim: block-diagram simulation for robot control.

    import blocksim
    result = blocksim.run("diagrams/demo1.yaml", overrides={"simulation.stop": 2})
    result.t, result["q"]
    model = blocksim.load("diagrams/demo1.yaml")   # validated, compiled, not yet simulated
"""
from .api import execute, load, run
from .errors import BlocksimError, DiagramError, DiagramErrors, SimulationError

__all__ = ["run", "load", "execute", "BlocksimError", "DiagramError", "DiagramErrors",
           "SimulationError"]
__version__ = "0.1.0"
