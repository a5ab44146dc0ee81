"""The generic blocks against the user contract: blocks.md's "Generic" tables (version 1 and
the additions of version 1.1: type names, parameter names and defaults, port names), and the
catalogue's own consistency."""
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from harness import Rig, convert_params

from blocks.catalog import BLOCKS
from blocksim.language import expr
from blocksim.language.library import Library
from blocksim.params import REQUIRED

# The generic blocks live in the top-level modules of blocks/ (not blocks/robot, ...).
GENERIC = sorted(t for t, target in BLOCKS.items() if target.count(".") == 1)
LIBRARY = Library()
# the block tables of the specification (blocks.md, hybrid.md), copied into the repository
SPEC = Path(__file__).resolve().parents[1] / "data" / "spec_blocks.md"
HYBRID = SPEC.with_name("spec_hybrid.md")
CHARTS = SPEC.with_name("spec_charts.md")  # lookup_nd (charts.md: mode logic and tables)

# The fewest parameters (and input shapes) each block needs to be built.
MINIMAL = {
    "constant": ({"value": 1}, {}),
    "table": ({"times": [0, 1], "values": [0, 1]}, {}),
    "gain": ({"K": 2}, {"u": ()}),
    "function": ({"expr": "2*u"}, {"u": ()}),
    "matmul": ({}, {"u1": (2, 2), "u2": (2,)}),
    "saturation": ({"lower": 0, "upper": 1}, {"u": ()}),
    "demux": ({"sizes": [1, 2]}, {"u": (3,)}),
    "selector": ({"indices": 0}, {"u": (3,)}),
    "reshape": ({"shape": [3]}, {"u": (3,)}),
    "rate_limiter": ({"rising": 1, "falling": -1}, {"u": ()}),
    "state_space": ({"A": -1, "B": 1, "C": 1, "D": 0}, {}),
    "transfer_function": ({"num": [1], "den": [1, 1]}, {}),
    "zoh": ({"period": 1}, {"u": ()}),
    "unit_delay": ({"period": 1}, {"u": ()}),
    "discrete_transfer_function": ({"num": [1], "den": [1, 0.5], "period": 1}, {}),
    "discrete_state_space": ({"A": 0.5, "B": 1, "C": 1, "D": 0, "period": 1}, {}),
    "discrete_integrator": ({"period": 1}, {"u": ()}),
    "random": ({"period": 1}, {}),
    "lookup": ({"x": [0, 1], "y": [0, 1]}, {"u": ()}),
    "lookup_2d": ({"x": [0, 1], "y": [0, 1], "z": [[0, 1], [1, 2]]}, {}),
    "lookup_nd": ({"breakpoints": [[0, 1], [0, 1]], "table": [[0, 1], [1, 2]]}, {}),
    "math": ({"fn": "exp"}, {"u": ()}),
    "from_file": ({"file": str(Path(__file__).parent / "data" / "two_points.csv")}, {}),
    "to_file": ({"file": "x.csv"}, {}),
    "logical": ({"op": "and"}, {"u1": (), "u2": ()}),
    "quantizer": ({"interval": 0.5}, {"u": ()}),
    "pid": ({}, {"e": ()}),
    "transport_delay": ({"delay": 1}, {"u": ()}),
    "dead_zone": ({"start": -1, "end": 1}, {"u": ()}),
    "backlash": ({"width": 1}, {"u": ()}),
    "relational": ({"op": "<"}, {"u1": (), "u2": ()}),
}

COSMETIC = {"scope", "xy_graph", "display"}
# A period left out only inside a triggered subsystem (charts.md: "its blocks are then
# discrete, with the trigger as their sample hits"): optional in the schema, required
# elsewhere by the compiler (tests/engine/test_conditional.py)
TRIGGERED_PERIOD = {"zoh", "unit_delay", "discrete_transfer_function", "discrete_state_space"}
# Parameters beyond blocks.md, each an addition for users (axis labels and units of figures)
EXTRAS = {"scope": ("units",), "xy_graph": ("xlabel", "ylabel", "units", "labels"),
          # blocks.md: "Discrete blocks run at hits offset + k*period"; its rows list the
          # offset for zoh only
          **{t: ("offset",) for t in ("unit_delay", "discrete_transfer_function",
                                     "discrete_state_space", "discrete_integrator", "pid",
                                     "noise", "random")}}


def table_rows(text):
    """(type, params cell, inputs cell, outputs cell) of each row of a markdown block table."""
    rows = []
    for line in text.splitlines():
        # split on the | outside backticks (sum's "`|` ignored" is inside)
        cells = [c.strip() for c in re.split(r"\|(?=(?:[^`]*`[^`]*`)*[^`]*$)", line.strip())[1:-1]]
        if len(cells) == 5 and cells[0].startswith("`"):
            rows.append((cells[0].strip("`"), *cells[1:4]))
    return rows


def generic_rows():
    """The Generic tables of blocks.md (every section whose heading starts with "Generic"),
    with the rows hybrid.md adds or changes: a params cell starting with "adds" extends the
    row of blocks.md; "`sign` / `abs`" is two types."""
    rows = {}
    for section in (SPEC.read_text() + CHARTS.read_text()).split("\n## Generic")[1:]:
        rows.update((r[0], r) for r in table_rows(section.split("\n## ", 1)[0]))
    rows.pop("subsystem", None)  # subsystems are the loader's
    for name, params, inputs, outputs in table_rows(HYBRID.read_text()):
        for type_name in name.replace("`", "").split(" / "):
            if params.startswith("adds") and type_name in rows:
                params = rows[type_name][1] + ", " + params
            rows[type_name] = (type_name, params, inputs, outputs)
    return list(rows.values())


def ticked(cell):
    """Comma-separated items inside the backticks of a table cell, after dropping the
    cell's remarks in parentheses (`delay (> 0)`, `(absent: continuous)`, `z (len x × len y)`;
    an empty `()` is a value and stays)."""
    items = []
    for chunk in re.findall(r"`([^`]*)`", _remarks.sub("", cell)):
        items += [item.strip() for item in chunk.split(",") if item.strip()]
    return items


_remarks = re.compile(r"\s*\((?=[^()]*[^()\s])[^()]*\)")


def optional_params(cell):
    """Parameters the cell marks as optional without a default: "`x` (optional)" or
    "`x` (absent: ...)"."""
    return set(re.findall(r"`(\w+)`\s*\((?:optional|absent)", cell))


ROWS = generic_rows()


def test_the_generic_tables_were_parsed():
    assert len(ROWS) >= 44


def build(type_name):
    params, inputs = MINIMAL.get(type_name, ({}, {}))
    cls = LIBRARY.block_class(type_name)
    wired = {p.name: () for p in cls("probe", convert_params(cls, params)).ports()[0]
             if p.shape is None and not p.optional}
    return Rig(cls, params, {**wired, **inputs})


@pytest.mark.parametrize("type_name", GENERIC)
def test_catalogue_entries_are_documented(type_name):
    cls = LIBRARY.block_class(type_name)
    assert cls.type == type_name
    assert cls.__doc__ and len(cls.__doc__.strip()) > 20
    for param in cls.params:
        assert param.doc, f"{type_name}.{param.name} has no doc"
    build(type_name)  # builds with the documented defaults


def test_every_catalogue_generic_type_is_in_the_spec():
    assert set(GENERIC) <= {row[0] for row in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=[row[0] for row in ROWS])
def test_parameter_names_and_defaults_match_the_spec(row):
    type_name, params, _, _ = row
    cls = LIBRARY.block_class(type_name)
    assert cls is not None, f"{type_name} is not in the catalogue"
    expected = {}
    optional = optional_params(params)
    for item in ticked(params):
        name, _, default = item.partition("=")
        expected[name.strip()] = default.split(" (")[0].strip() or None
    extras = EXTRAS.get(type_name, ())
    assert [p.name for p in cls.params if p.name not in extras] == list(expected), type_name
    for param in cls.params:
        if param.name in extras:
            assert not param.required, (type_name, param.name)
            continue
        text = expected[param.name]
        if param.name in optional or (type_name in TRIGGERED_PERIOD and param.name == "period"):
            assert param.default is None, (type_name, param.name)
            continue
        if text is None:
            # no default in the spec: required, except the sinks' cosmetic options
            # (title, axis limits, labels, format), which default to "automatic"
            required = param.default is REQUIRED
            assert required != (type_name in COSMETIC), (type_name, param.name)
            continue
        value = yaml.safe_load(text)
        if param.kind in ("value", "scalar") and isinstance(value, str):
            # 1e-3, -inf (strings in YAML 1.1), eps
            value = () if value == "()" else expr.evaluate(value, {})
        got, want = param.convert(param.default), param.convert(value)
        assert np.array_equal(got, want) if isinstance(got, np.ndarray) else got == want, \
            f"{type_name}.{param.name}: default {param.default!r}, spec {text}"


def _ports_match(spec_names, ports):
    """`u1..uN` in the spec stands for u1, u2, ... (at least one)."""
    if len(spec_names) == 1 and spec_names[0].endswith("N"):
        prefix = spec_names[0][0]
        return bool(ports) and ports == [f"{prefix}{i + 1}" for i in range(len(ports))]
    return ports == spec_names


@pytest.mark.parametrize("row", ROWS, ids=[row[0] for row in ROWS])
def test_port_names_match_the_spec(row):
    type_name, _, inputs, outputs = row
    if type_name == "function":  # one input per name in `inputs`: see test_blocks_math
        return
    inputs = inputs.split(", plus")[0]  # ports that exist only "when asked"
    assert LIBRARY.block_class(type_name) is not None, f"{type_name} is not in the catalogue"
    ins, outs = build(type_name).block.ports()
    assert _ports_match(ticked(inputs), [p.name for p in ins]), (type_name, inputs)
    assert _ports_match(ticked(outputs), [p.name for p in outs]), (type_name, outputs)
