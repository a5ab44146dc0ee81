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
    "sign": "blocks.switching:Sign",
    "abs": "blocks.switching:Abs",
    "min_max": "blocks.switching:MinMax",
    "relational": "blocks.switching:Relational",
    # discontinuities (zero crossings)
    "saturation": "blocks.discontinuities:Saturation",
    "dead_zone": "blocks.discontinuities:DeadZone",
    "relay": "blocks.discontinuities:Relay",
    "hit_crossing": "blocks.discontinuities:HitCrossing",
    "backlash": "blocks.discontinuities:Backlash",
    # signal routing
    "mux": "blocks.signals:Mux",
    "demux": "blocks.signals:Demux",
    "selector": "blocks.signals:Selector",
    "reshape": "blocks.signals:Reshape",
    "switch": "blocks.switching:Switch",
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
    # robotics
    "robot": "blocks.robot.dynamics_blocks:Robot",
    "rne": "blocks.robot.dynamics_blocks:Rne",
    "gravload": "blocks.robot.dynamics_blocks:GravLoad",
    "inertia": "blocks.robot.dynamics_blocks:Inertia",
    "fkine": "blocks.robot.kinematics_blocks:FKine",
    "jacob0": "blocks.robot.kinematics_blocks:Jacob0",
    "jacobn": "blocks.robot.kinematics_blocks:Jacobn",
    "ijacob": "blocks.robot.kinematics_blocks:IJacob",
    "tr2diff": "blocks.robot.transform_blocks:Tr2Diff",
    "xyz2tr": "blocks.robot.transform_blocks:Xyz2Tr",
    "tr2xyz": "blocks.robot.transform_blocks:Tr2Xyz",
    "eul2tr": "blocks.robot.transform_blocks:Eul2Tr",
    "tr2eul": "blocks.robot.transform_blocks:Tr2Eul",
    "rpy2tr": "blocks.robot.transform_blocks:Rpy2Tr",
    "tr2rpy": "blocks.robot.transform_blocks:Tr2Rpy",
    "jtraj": "blocks.robot.trajectory_blocks:JTraj",
    "ctraj": "blocks.robot.trajectory_blocks:CTraj",
    "plot_robot": "blocks.robot.plot:PlotRobot",
    # planar n-R manipulators
    "planar_kinematics": "blocks.planar.blocks:PlanarKinematics",
    "planar_model": "blocks.planar.blocks:PlanarModel",
    "planar_robot": "blocks.planar.blocks:PlanarRobot",
    "planar_index": "blocks.planar.blocks:PlanarIndex",
    "planar_plot": "blocks.planar.plot:PlanarPlot",
    # vision
    "camera": "blocks.vision.blocks:Camera",
    "image_jacobian": "blocks.vision.blocks:ImageJacobian",
    "ibvs": "blocks.vision.blocks:Ibvs",
}

SECTIONS = {
    "robots": "blocks.robot.section:build_robot",
}
