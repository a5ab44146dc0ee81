"""DiagramSpec -> Model: everything is checked and laid out once, before simulating.

The compiler is a sequence of passes (pipeline.py lists them, each module takes and returns
plain data): robots and parameters are evaluated; blocks are built from validated
parameters and declare their ports; wires are resolved (one driver per input, every
required input wired); the output computations are put in a deterministic dataflow order
(an algebraic loop is printed as its cycle, port by port); shapes are propagated and checked
at both ends of wires; one signal buffer gives every output a view, every input *is* its
driver's view, and each block gets its slices of one state vector; the computations are
split into constant, discrete-rate and continuous groups; records, sinks and stops are
collected. Each pass collects all of its problems and reports them together. New values go
into a compiled Model by one route (revalue.py), which rebuilds nothing.
"""
from .model import MAX_STEPS, RESERVED_RECORDS, Model, Node, Settings, plain
from .pipeline import Compilation, compile_diagram

__all__ = ["compile_diagram", "Compilation", "Model", "Node", "Settings", "plain",
           "MAX_STEPS", "RESERVED_RECORDS"]
