"""The block library's catalogue: type name -> "module:Class", imported only when used.

Importing a block module on demand keeps start-up fast: a diagram that uses no robot block
never imports the robot library, and matplotlib is imported only by sinks that plot.
`SECTIONS` names the diagram-level sections the library understands (e.g. `robots:`), each
with the function that builds one entry.
"""

BLOCKS = {
    # sources
    "constant": "blocks.sources:Constant",
    "clock": "blocks.sources:Clock",
    "step": "blocks.sources:Step",
    "ramp": "blocks.sources:Ramp",
    "sine": "blocks.sources:Sine",
    "table": "blocks.sources:Table",
    # math
    "gain": "blocks.math:Gain",
    "sum": "blocks.math:Sum",
    "product": "blocks.math:Product",
    "matmul": "blocks.math:MatMul",
    "function": "blocks.math:Function",
    "saturation": "blocks.math:Saturation",
    # signal routing
    "mux": "blocks.signals:Mux",
    "demux": "blocks.signals:Demux",
    "selector": "blocks.signals:Selector",
    "reshape": "blocks.signals:Reshape",
    # continuous
    "integrator": "blocks.continuous:Integrator",
    "rate_limiter": "blocks.continuous:RateLimiter",
    "derivative": "blocks.continuous:Derivative",
    "state_space": "blocks.continuous:StateSpace",
    "transfer_function": "blocks.continuous:TransferFunction",
    # discrete
    "zoh": "blocks.discrete:ZeroOrderHold",
    "unit_delay": "blocks.discrete:UnitDelay",
    # sinks
    "scope": "blocks.sinks:Scope",
    "xy_graph": "blocks.sinks:XYGraph",
    "display": "blocks.sinks:Display",
    "terminator": "blocks.sinks:Terminator",
    "stop": "blocks.sinks:Stop",
}

SECTIONS = {
    "robots": "blocks.robot.section:build_robot",
}
