"""Every exact Jacobian a block declares (Block.jacobian) against a second algorithm: central
differences of the block's own methods (what the linearisation does for blocks that
declare none), at points with non-trivial inputs and states, in each mode."""
import numpy as np
import pytest

import blocksim
from blocksim.analysis.jacobians import _differenced, linear_part
from blocksim.analysis.operating import at_start

U2 = [0.7, -1.3]
U3 = [0.4, -0.9, 1.6]

# (block under test, {input port: constant value}, discrete state to set after the start:
# {slice: value} (a discrete block's first hit done, integrators not at rest))
CASES = {
    "gain scalar": ({"type": "gain", "K": 2.5}, {"u": U3}, {}),
    "gain vector": ({"type": "gain", "K": [1, -2, 3]}, {"u": U3}, {}),
    "gain matrix": ({"type": "gain", "K": [[1, 2, 3], [4, 5, 6]]}, {"u": U3}, {}),
    "gain on a matrix": ({"type": "gain", "K": [[1, 2], [3, 4]]},
                         {"u": [[1, 2, 3], [4, 5, 6]]}, {}),
    "sum broadcast": ({"type": "sum", "signs": "+-|+"}, {"u1": U3, "u2": 0.5, "u3": U3}, {}),
    "product": ({"type": "product", "ops": "/*"}, {"u1": U3, "u2": 0.5}, {}),
    "matmul": ({"type": "matmul"}, {"u1": [[1, 2, 3], [4, 5, 6]], "u2": U3}, {}),
    "math exp": ({"type": "math", "fn": "exp"}, {"u": U3}, {}),
    "abs": ({"type": "abs"}, {"u": U3}, {"0:3": [1, -1, 1]}),
    "relational": ({"type": "relational", "op": "<"}, {"u1": U3, "u2": 0.5}, {}),
    "integrator": ({"type": "integrator", "x0": [0.3, 0.1]}, {"u": U2}, {}),
    "integrator held": ({"type": "integrator", "x0": [1.0, 0.1], "upper": 1.0}, {"u": U2}, {}),
    "integrator reset": ({"type": "integrator", "reset": "rising"},
                         {"u": 0.4, "reset": -1.0}, {}),
    "derivative": ({"type": "derivative", "tau": 0.01}, {"u": U2}, {}),
    "state space": ({"type": "state_space", "A": [[-1, 2], [0, -3]], "B": [[1, 0], [2, 1]],
                     "C": [[1, 1], [0, 2]], "D": [[0.5, 0], [0, -1]], "x0": [0.2, -0.4]},
                    {"u": U2}, {}),
    "transfer function": ({"type": "transfer_function", "num": [2, 1], "den": [1, 3, 2]},
                          {"u": 0.8}, {}),
    "pid linear": ({"type": "pid", "Kp": 3, "Ki": 2, "Kd": 0.5, "N": 20, "x0": 0.3},
                   {"e": 0.2}, {}),
    "pi": ({"type": "pid", "Kp": 3, "Ki": 2}, {"e": U2}, {}),
    "pid saturated": ({"type": "pid", "Kp": 3, "Ki": 2, "Kd": 0.5, "upper": 0.1,
                       "anti_windup": "clamping"}, {"e": 0.2}, {}),
    "pid back-calculation": ({"type": "pid", "Kp": 3, "Ki": 2, "Kd": 0.5, "lower": -0.1,
                              "anti_windup": "back_calculation", "Kb": 4}, {"e": -0.2}, {}),
    "discrete pid": ({"type": "pid", "Kp": 3, "Ki": 2, "Kd": 0.5, "N": 20, "period": 0.1,
                      "method": "trapezoidal"}, {"e": 0.2}, {"0:3": [0.1, 0.05, 1]}),
    "discrete pid clamped": ({"type": "pid", "Kp": 3, "Ki": 2, "Kd": 0.5, "period": 0.1,
                              "upper": 0.2, "anti_windup": "clamping"}, {"e": 0.2},
                             {"0:3": [0.1, 0.05, 1]}),
    "discrete pid back-calculation": ({"type": "pid", "Kp": 3, "Ki": 2, "Kd": 0.5,
                                       "period": 0.1, "method": "backward_euler",
                                       "upper": 0.2, "anti_windup": "back_calculation",
                                       "Kb": 3}, {"e": 0.2}, {"0:3": [0.1, 0.05, 1]}),
    "zoh": ({"type": "zoh", "period": 0.1}, {"u": U2}, {}),
    "unit delay": ({"type": "unit_delay", "period": 0.1, "x0": [0.2, 0.3]}, {"u": U2}, {}),
    "discrete integrator": ({"type": "discrete_integrator", "period": 0.1, "K": 2,
                             "method": "trapezoidal", "x0": 0.2}, {"u": U2},
                            {"2:3": [1]}),
    "discrete integrator clipped": ({"type": "discrete_integrator", "period": 0.1,
                                     "method": "backward_euler", "x0": [0.2, 0.5],
                                     "upper": 0.55}, {"u": U2}, {"2:3": [1]}),
    "discrete state space": ({"type": "discrete_state_space", "A": [[0.5, 0.1], [0, 0.9]],
                              "B": [[1], [0.5]], "C": [[1, -1]], "D": 0.2, "period": 0.1,
                              "x0": [0.3, 0.1]}, {"u": [0.4]}, {}),
    "discrete transfer function": ({"type": "discrete_transfer_function", "num": [1, 0.5],
                                    "den": [1, -0.3, 0.1], "period": 0.1}, {"u": 0.4}, {}),
    "saturation inside": ({"type": "saturation", "lower": -1, "upper": 1}, {"u": [0.5, -0.2]}, {}),
    "saturation outside": ({"type": "saturation", "lower": -1, "upper": 1},
                           {"u": [1.5, -2.0]}, {}),
    "dead zone": ({"type": "dead_zone", "start": -0.5, "end": 0.5}, {"u": [0.2, -0.8]}, {}),
    "relay": ({"type": "relay", "on": 0.1, "off": -0.1}, {"u": U2}, {}),
    "switch": ({"type": "switch", "threshold": 0.5}, {"u1": U3, "u2": [1, 0, 1], "u3": 2.0}, {}),
    "switch scalar control": ({"type": "switch"}, {"u1": U3, "u2": -1.0, "u3": U3}, {}),
    "mux": ({"type": "mux", "inputs": 2}, {"u1": U2, "u2": [[1, 2], [3, 4]]}, {}),
    "demux": ({"type": "demux", "sizes": [1, 2]}, {"u": U3}, {}),
    "selector": ({"type": "selector", "indices": [2, 0, 2]}, {"u": [[1, 2], [3, 4], [5, 6]]}, {}),
    "reshape": ({"type": "reshape", "shape": [2, 3], "order": "F"}, {"u": [1, 2, 3, 4, 5, 6]}, {}),
    # a function block's expression differentiated forward, operation by operation
    "function": ({"type": "function", "inputs": ["a", "b"],
                  "expr": "[a[0]*sin(b), a[1]**2 + b, hypot(a[0], b) - mod(a[1], 0.5)]"},
                 {"a": U2, "b": 0.4}, {}),
    "function matrices": ({"type": "function", "inputs": ["M", "v"],
                           "expr": "inv(M) @ v + det(M) * transpose(M) @ v"},
                          {"M": [[2, 1], [0.5, 3]], "v": U2}, {}),
}


def yaml_value(v):
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return "[" + ", ".join(v) + "]"
    return repr(np.asarray(v, dtype=float).tolist())


@pytest.mark.parametrize("case", CASES)
def test_a_declared_jacobian_equals_central_differences_of_the_blocks_methods(tmp_path, case):
    block, inputs, discrete = CASES[case]
    lines = ["blocksim: 1", "blocks:",
             "  B: {" + ", ".join(f"{k}: {yaml_value(v) if not isinstance(v, str) else repr(v)}"
                                  for k, v in block.items()) + "}"]
    lines += [f"  In_{port}: {{type: constant, value: {yaml_value(v)}}}"
              for port, v in inputs.items()]
    lines += ["wires:"] + [f"  - In_{port} -> B.{port}" for port in inputs]
    lines += ["simulation: {stop: 1}"]
    path = tmp_path / "rig.yaml"
    path.write_text("\n".join(lines) + "\n")
    model = blocksim.load(path)
    evaluator = at_start(model)
    b = next(x for x in model.blocks if x.name == "B")
    for where, value in discrete.items():
        start, stop = map(int, where.split(":"))
        b.xd[start:stop] = value
    evaluator.outputs()
    part = linear_part(model, b, evaluator.t, pade=None)
    assert part.exact
    sampled = part.discrete
    (A, B, C, D), _ = _differenced(model, b, evaluator.t, sampled)
    own = model.state_slices["B"][1 if sampled else 0]
    keep = part.indices - own.start
    scale = max(1.0, np.abs(D).max(initial=0), np.abs(B).max(initial=0))
    for name, got, want in (("A", part.A, A[np.ix_(keep, keep)]), ("B", part.B, B[keep]),
                            ("C", part.C, C[:, keep]), ("D", part.D, D)):
        np.testing.assert_allclose(got, want, atol=1e-8 * scale, err_msg=f"{case}: {name}")
