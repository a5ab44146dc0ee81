"""A valid diagram never ends in a traceback (issue 16): random diagrams built from the block
catalogue — random blocks, signal shapes, wires that type-check, feedback through states,
inline subsystems, discrete rates, switch times that coincide with each other and with
sample hits, every solver — are checked and run through the CLI, which must return 0, or
fail cleanly with 2 (refused) or 3 (the simulation failed, e.g. a reciprocal of zero), never
raise. The CLI catches only blocksim's own errors, so any other exception (exit 1 in a
shell) fails the test with its traceback.

Profiles: "ci" (the default) is derandomized and bounded, so the suite is reproducible and
fast; BLOCKSIM_HYPOTHESIS=dev explores more, with fresh random examples each run.
"""
import contextlib
import io
import os
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from blocksim.cli import main
from blocksim.engine.solvers import SOLVERS

settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True,
                          database=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=400, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
PROFILE = os.environ.get("BLOCKSIM_HYPOTHESIS", "ci")

SHAPES = [(), (2,), (3,), (2, 2)]
SWITCH_TIMES = [0.25, 0.5, 0.5, 0.75]  # repeated on purpose: coincident switches
PERIODS = [0.05, 0.1, 0.25]  # their hits coincide with each other and with SWITCH_TIMES


def literal(value):
    """A YAML flow literal of a number or nested list."""
    return str(np.asarray(value, dtype=float).round(3).tolist())


@st.composite
def array(draw, shape, low=-2.0, high=2.0):
    n = int(np.prod(shape, dtype=int))
    values = draw(st.lists(st.floats(low, high, allow_nan=False), min_size=n, max_size=n))
    return np.reshape(values, shape)


# -- block recipes: draw(shape) -> (type parameters, input ports, output port) ---------------
@st.composite
def source(draw, shape):
    kind = draw(st.sampled_from(["constant", "step", "sine", "ramp", "pulse", "table", "clock",
                                 "noise"]))
    if kind == "constant":
        return {"type": "constant", "value": literal(draw(array(shape)))}
    if kind == "step":
        return {"type": "step", "time": draw(st.sampled_from(SWITCH_TIMES)),
                "before": literal(draw(array(shape))), "after": literal(draw(array(shape)))}
    if kind == "sine":
        return {"type": "sine", "amplitude": literal(draw(array(shape, 0.1, 2))),
                "frequency": draw(st.sampled_from([0.5, 1.0, 3.0]))}
    if kind == "ramp":
        return {"type": "ramp", "slope": literal(draw(array(shape))),
                "start": draw(st.sampled_from(SWITCH_TIMES))}
    if kind == "pulse":
        return {"type": "pulse", "amplitude": literal(draw(array(shape, 0.1, 2))),
                "period": draw(st.sampled_from(PERIODS + [0.5])), "width": 0.5,
                "delay": draw(st.sampled_from([0.0] + SWITCH_TIMES))}
    if kind == "table":
        times = sorted(set(draw(st.lists(st.sampled_from([0.0, *SWITCH_TIMES, 1.0]),
                                         min_size=2, max_size=4))))
        if len(times) < 2:
            times = [0.0, 0.5]
        values = draw(array((len(times), *shape)))
        return {"type": "table", "times": literal(times), "values": literal(values),
                "method": draw(st.sampled_from(["linear", "previous"]))}
    if kind == "noise":
        return {"type": "noise", "shape": literal(shape) if shape else "[]",
                "period": draw(st.sampled_from(PERIODS)), "seed": draw(st.integers(0, 9))}
    return None  # clock: scalar time, only for shape ()


ELEMENTWISE_EXPRS = ["2*u", "sin(u) + u", "u*u - 1", "abs(u)", "u/(1 + u*u)", "max(u, 0)",
                     "exp(-u*u)", "1/u"]


@st.composite
def siso(draw):
    """An element-wise block: any input shape, output of the same shape."""
    kind = draw(st.sampled_from([
        "gain", "saturation", "integrator", "unit_delay", "zoh", "rate_limiter", "abs",
        "sign", "dead_zone", "relay", "backlash", "quantizer", "math", "function",
        "transport_delay", "discrete_integrator", "hit_crossing", "derivative"]))
    a = draw(st.sampled_from([0.5, 1.0, 2.0]))
    params = {
        "gain": {"K": draw(st.sampled_from([-2.0, 0.5, 3.0]))},
        "saturation": {"lower": -a, "upper": a},
        "integrator": {"x0": draw(st.sampled_from([0.0, 1.0]))},
        "unit_delay": {"period": draw(st.sampled_from(PERIODS))},
        "zoh": {"period": draw(st.sampled_from(PERIODS)),
                "offset": draw(st.sampled_from([0.0, 0.05]))},
        "rate_limiter": {"rising": a, "falling": -a},
        "abs": {}, "sign": {},
        "dead_zone": {"start": -a / 2, "end": a / 2},
        "relay": {"on": a / 2, "off": -a / 2},
        "backlash": {"width": a / 2},
        "quantizer": {"interval": a / 4},
        "math": {"fn": draw(st.sampled_from(["exp", "sin", "tanh", "sqrt", "reciprocal"]))},
        "function": {"expr": draw(st.sampled_from(ELEMENTWISE_EXPRS))},
        "transport_delay": {"delay": draw(st.sampled_from([0.05, 0.2]))},
        "discrete_integrator": {"period": draw(st.sampled_from(PERIODS))},
        "hit_crossing": {},
        "derivative": {},
    }[kind]
    return {"type": kind, **params}


def out_port(block):
    return "n" if block["type"] == "hit_crossing" else "y"


STATEFUL = ("integrator", "unit_delay")  # outputs without feedthrough: may close a loop


class Builder:
    """Grows a diagram block by block; every input is wired from an earlier output of the
    same shape, except the inputs of stateful blocks, which may also come from later ones."""

    def __init__(self, draw):
        self.draw = draw
        self.blocks = {}
        self.wires = []
        self.outputs = {shape: [] for shape in SHAPES}  # shape -> ["Block.port", ...]
        self.pending = []  # (block name, port, shape): feedback inputs wired at the end
        self.robots = False

    def name(self, prefix):
        return f"{prefix}{len(self.blocks)}"

    def signal(self, shape):
        """An existing output of `shape`, or a new source of it."""
        existing = self.outputs[shape]
        if existing and self.draw(st.booleans()):
            return self.draw(st.sampled_from(existing))
        block = self.draw(source(shape))
        if block is None:
            block = {"type": "clock"} if shape == () else \
                {"type": "constant", "value": literal(np.ones(shape))}
        name = self.name("Src")
        self.blocks[name] = block
        self.outputs[shape].append(f"{name}.{'t' if block['type'] == 'clock' else 'y'}")
        return self.outputs[shape][-1]

    def add(self, shape):
        kinds = ["siso", "siso", "siso", "sum", "product", "min_max", "switch", "subsystem"]
        kind = self.draw(st.sampled_from(kinds + (["robot", "rne"] if shape == (2,) else [])))
        if kind in ("robot", "rne"):
            self.robot(kind)
            return
        if kind == "siso":
            block = self.draw(siso())
            name = self.name("B")
            self.blocks[name] = block
            if block["type"] in STATEFUL and self.draw(st.booleans()):
                self.pending.append((name, "u", shape))
            else:
                self.wires.append(f"{self.signal(shape)} -> {name}.u")
            self.outputs[shape].append(f"{name}.{out_port(block)}")
            return
        if kind == "subsystem":
            self.subsystem(shape)
            return
        n = self.draw(st.integers(2, 3))
        name = self.name("M")
        if kind == "sum":
            block = {"type": "sum", "signs": "".join(self.draw(st.lists(
                st.sampled_from("+-"), min_size=n, max_size=n)))}
        elif kind == "product":
            block = {"type": "product", "ops": "*" + "".join(self.draw(st.lists(
                st.sampled_from("*/"), min_size=n - 1, max_size=n - 1)))}
        elif kind == "min_max":
            block = {"type": "min_max", "fn": self.draw(st.sampled_from(["min", "max"])),
                     "inputs": n}
        else:
            block, n = {"type": "switch", "threshold": 0.0}, 3
        self.blocks[name] = block
        for i in range(1, n + 1):
            self.wires.append(f"{self.signal(shape)} -> {name}.u{i}")
        self.outputs[shape].append(f"{name}.y")

    def robot(self, kind):
        """The two-link arm of the robots section (n = 2): forward dynamics driven by a
        torque (states q, qd: may close a loop), or inverse dynamics of three signals."""
        self.robots = True
        name = self.name("R")
        if kind == "robot":
            self.blocks[name] = {"type": "robot", "robot": "arm"}
            if self.draw(st.booleans()):
                self.pending.append((name, "tau", (2,)))
            else:
                self.wires.append(f"{self.signal((2,))} -> {name}.tau")
            self.outputs[(2,)] += [f"{name}.q", f"{name}.qd"]
        else:
            self.blocks[name] = {"type": "rne", "robot": "arm"}
            for port in ("q", "qd", "qdd"):
                self.wires.append(f"{self.signal((2,))} -> {name}.{port}")
            self.outputs[(2,)].append(f"{name}.tau")

    def subsystem(self, shape):
        """An inline subsystem: a chain of one to three element-wise blocks."""
        chain = self.draw(st.lists(siso(), min_size=1, max_size=3))
        inner = {f"I{k}": block for k, block in enumerate(chain)}
        wires = [f"I{k - 1}.{out_port(chain[k - 1])} -> I{k}.u" for k in range(1, len(chain))]
        name = self.name("Sub")
        self.blocks[name] = {"type": "subsystem", "diagram": {
            "blocks": inner, "wires": wires, "inputs": {"u": "I0.u"},
            "outputs": {"y": f"I{len(chain) - 1}.{out_port(chain[-1])}"}}}
        self.wires.append(f"{self.signal(shape)} -> {name}.u")
        self.outputs[shape].append(f"{name}.y")

    def finish(self):
        for name, port, shape in self.pending:
            self.wires.append(f"{self.draw(st.sampled_from(self.outputs[shape]))} -> {name}.{port}")
        sink = self.draw(st.sampled_from(["terminator", "scope", "display", "none"]))
        shape = self.draw(st.sampled_from([s for s in SHAPES if self.outputs[s]]))
        if sink != "none":
            self.blocks["Sink"] = {"type": sink}
            self.wires.append(f"{self.draw(st.sampled_from(self.outputs[shape]))} -> Sink")


def yaml_value(value, indent):
    """Block-style YAML of nested dicts / lists of scalars (strings quoted)."""
    pad = " " * indent
    if isinstance(value, dict):
        return "".join(f"\n{pad}{k}:{yaml_value(v, indent + 2)}" for k, v in value.items())
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return "".join(f"\n{pad}- {v!r}" for v in value)
    if isinstance(value, list):
        return " []"
    return f" {value!r}" if isinstance(value, str) else f" {value}"


@st.composite
def diagrams(draw):
    builder = Builder(draw)
    shapes = draw(st.lists(st.sampled_from(SHAPES), min_size=1, max_size=2, unique=True))
    for _ in range(draw(st.integers(1, 6))):
        builder.add(draw(st.sampled_from(shapes)))
    builder.finish()
    solver = draw(st.sampled_from(SOLVERS))
    simulation = {"stop": 1.0, "solver": solver}
    if solver in ("euler", "rk2", "rk4"):
        simulation["step"] = draw(st.sampled_from([0.01, 0.025]))
    if draw(st.booleans()):
        simulation["output_interval"] = draw(st.sampled_from([0.05, 0.1, 0.3]))
    record = {f"r{k}": signal for k, signal in
              enumerate(draw(st.lists(st.sampled_from(sum(builder.outputs.values(), [])),
                                      max_size=3, unique=True)))}
    doc = {"blocks": builder.blocks, "wires": builder.wires, "simulation": simulation}
    if builder.robots:
        friction = draw(st.sampled_from(["none", "viscous", "full"]))
        doc = {"robots": {"arm": {"model": "twolink", "friction": friction}}, **doc}
    if record:
        doc["record"] = record
    return "blocksim: 1" + yaml_value(doc, 0) + "\n"


@settings.get_profile(PROFILE)
@given(text=diagrams())
def test_random_valid_diagram_never_ends_in_a_traceback(text):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "random.yaml"
        path.write_text(text)
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            code = main(["run", str(path), "--out", str(Path(folder) / "out"), "--quiet",
                         "--no-plots"])
    err = stderr.getvalue()
    event(f"exit {code}")
    assert code in (0, 2, 3), (code, err, text)
    assert "Traceback" not in err, text
    if code == 2:  # the generator only builds valid diagrams: a refusal is a compiler bug
        raise AssertionError(f"a valid diagram was refused:\n{err}\n{text}")
