"""The block library's catalogue: families of type name -> "module:Class", imported when used.

Adding a block type is one line in its family below. `blocksim blocks` lists the families in
this order under their titles, each block with the first paragraph of its class docstring
(one complete sentence on one line); `blocksim blocks --markdown > docs/blocks.md` regenerates
the reference page. Importing a block module on demand keeps start-up fast: a diagram that
uses no robot block never imports the robot library, and matplotlib is imported only by sinks
that plot. `SECTIONS` names the diagram-level sections the library understands (e.g.
`robots:`), each with the function that builds one entry, `SECTION_FUNCTIONS` the
expression functions that take one of its entries (`fkine(p560, q)`), and `SECTION_NOTES`
a line about it for `blocksim check`.
"""

FAMILIES = {
    "sources": {
        "constant": "blocks.sources:Constant",
        "clock": "blocks.sources:Clock",
        "step": "blocks.sources:Step",
        "ramp": "blocks.sources:Ramp",
        "sine": "blocks.sources:Sine",
        "table": "blocks.sources:Table",
        "pulse": "blocks.generators:Pulse",
        "chirp": "blocks.generators:Chirp",
        "noise": "blocks.random_sources:Noise",
        "random": "blocks.random_sources:Random",
        "from_file": "blocks.files:FromFile",
    },
    "continuous": {
        "integrator": "blocks.continuous:Integrator",
        "derivative": "blocks.continuous:Derivative",
        "rate_limiter": "blocks.continuous:RateLimiter",
        "state_space": "blocks.continuous:StateSpace",
        "transfer_function": "blocks.continuous:TransferFunction",
        "pid": "blocks.pid:Pid",
        "transport_delay": "blocks.delay:TransportDelay",
        "fmu": "blocks.fmu.block:Fmu",
    },
    "discrete": {
        "zoh": "blocks.discrete:ZeroOrderHold",
        "unit_delay": "blocks.discrete:UnitDelay",
        "discrete_transfer_function": "blocks.discrete_systems:DiscreteTransferFunction",
        "discrete_state_space": "blocks.discrete_systems:DiscreteStateSpace",
        "discrete_integrator": "blocks.discrete_systems:DiscreteIntegrator",
    },
    "math": {
        "gain": "blocks.math:Gain",
        "sum": "blocks.math:Sum",
        "product": "blocks.math:Product",
        "matmul": "blocks.math:MatMul",
        "function": "blocks.math:Function",
        "sign": "blocks.switching:Sign",
        "abs": "blocks.switching:Abs",
        "min_max": "blocks.switching:MinMax",
        "math": "blocks.math_functions:Math",
        "lookup": "blocks.lookup:Lookup",
        "lookup_2d": "blocks.lookup:Lookup2D",
        "lookup_nd": "blocks.lookup_nd:LookupND",
    },
    "discontinuities": {
        "saturation": "blocks.discontinuities:Saturation",
        "dead_zone": "blocks.discontinuities:DeadZone",
        "relay": "blocks.discontinuities:Relay",
        "backlash": "blocks.discontinuities:Backlash",
        "hit_crossing": "blocks.discontinuities:HitCrossing",
        "quantizer": "blocks.quantizer:Quantizer",
    },
    "logic": {
        "relational": "blocks.switching:Relational",
        "logical": "blocks.logic:Logical",
        "chart": "blocks.chart.block:Chart",
    },
    "routing": {
        "mux": "blocks.signals:Mux",
        "demux": "blocks.signals:Demux",
        "selector": "blocks.signals:Selector",
        "reshape": "blocks.signals:Reshape",
        "switch": "blocks.switching:Switch",
    },
    "sinks": {
        "scope": "blocks.sinks:Scope",
        "xy_graph": "blocks.sinks:XYGraph",
        "display": "blocks.sinks:Display",
        "terminator": "blocks.sinks:Terminator",
        "stop": "blocks.sinks:Stop",
        "to_file": "blocks.files:ToFile",
    },
    "robot": {
        "robot": "blocks.robot.dynamics_blocks:Robot",
        "rne": "blocks.robot.dynamics_blocks:Rne",
        "gravload": "blocks.robot.dynamics_blocks:GravLoad",
        "inertia": "blocks.robot.dynamics_blocks:Inertia",
        "coriolis": "blocks.robot.dynamics_blocks:Coriolis",
        "energy": "blocks.robot.dynamics_blocks:Energy",
        "fkine": "blocks.robot.kinematics_blocks:FKine",
        "jacob0": "blocks.robot.kinematics_blocks:Jacob0",
        "jacobn": "blocks.robot.kinematics_blocks:Jacobn",
        "ijacob": "blocks.robot.kinematics_blocks:IJacob",
        "jacob_dot": "blocks.robot.kinematics_blocks:JacobDot",
        "ikine": "blocks.robot.ikine_block:IKine",
        "tr2diff": "blocks.robot.transform_blocks:Tr2Diff",
        "xyz2tr": "blocks.robot.transform_blocks:Xyz2Tr",
        "tr2xyz": "blocks.robot.transform_blocks:Tr2Xyz",
        "eul2tr": "blocks.robot.transform_blocks:Eul2Tr",
        "tr2eul": "blocks.robot.transform_blocks:Tr2Eul",
        "rpy2tr": "blocks.robot.transform_blocks:Rpy2Tr",
        "tr2rpy": "blocks.robot.transform_blocks:Tr2Rpy",
        "jtraj": "blocks.robot.trajectory_blocks:JTraj",
        "ctraj": "blocks.robot.trajectory_blocks:CTraj",
        "mstraj": "blocks.robot.trajectory_blocks:MSTraj",
        "plot_robot": "blocks.robot.plot:PlotRobot",
    },
    "vision": {
        "camera": "blocks.vision.blocks:Camera",
        "image_jacobian": "blocks.vision.blocks:ImageJacobian",
        "ibvs": "blocks.vision.blocks:Ibvs",
    },
    "planar": {
        "planar_kinematics": "blocks.planar.blocks:PlanarKinematics",
        "planar_model": "blocks.planar.blocks:PlanarModel",
        "planar_robot": "blocks.planar.blocks:PlanarRobot",
        "planar_index": "blocks.planar.blocks:PlanarIndex",
        "planar_plot": "blocks.planar.plot:PlanarPlot",
    },
}

FAMILY_TITLES = {
    "sources": "Sources: signals made from time alone",
    "continuous": "Continuous: blocks with continuous states",
    "discrete": "Discrete: blocks that run at sample hits",
    "math": "Math: arithmetic and functions of the inputs",
    "discontinuities": "Discontinuities: modes switched exactly at located zero crossings",
    "logic": "Logic: comparisons, switches and truth values",
    "routing": "Routing: splitting, joining and reshaping signals",
    "sinks": "Sinks: plots, displays and the end of a run",
    "robot": "Robot: serial-link robots (Robotics Toolbox for MATLAB, release 7)",
    "vision": "Vision: cameras and visual servoing",
    "planar": "Planar: n-R planar manipulators (Zlajpah)",
}

BLOCKS = {name: target for family in FAMILIES.values() for name, target in family.items()}

SECTIONS = {
    "robots": "blocks.robot.section:build_robot",
}

# Expression functions whose first argument is an entry of a section (fkine(p560, q)).
SECTION_FUNCTIONS = {
    "robots": "blocks.robot.expressions:FUNCTIONS",
}

# What `blocksim check` says about a section a diagram uses, given its entries (e.g. which
# robot kernels run, and each robot's table).
SECTION_NOTES = {
    "robots": "blocks.robot.section:describe",
}
