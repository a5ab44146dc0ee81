"""The block library's catalogue: type name -> "module:Class", imported only when used.

Importing a block module on demand keeps start-up fast: a diagram that uses no robot block
never imports the robot library, and matplotlib is imported only by sinks that plot.
`SECTIONS` names the diagram-level sections the library understands (e.g. `robots:`), each
with the function that builds one entry.
"""

BLOCKS = {
    "constant": "blocks.sources:Constant",
    "step": "blocks.sources:Step",
    "gain": "blocks.math:Gain",
    "integrator": "blocks.continuous:Integrator",
}

SECTIONS = {}
