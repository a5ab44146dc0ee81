"""Robot data files: ``load_robot(name_or_path)`` and ``robot_from_dict(data)``.

A robot file (YAML, read by the diagrams' safe loader ``blocksim.language.yamlio``: the same limits,
duplicate keys and malformed tagged values are errors with a line) has the keys of
``shared/spec/robots.md``::

    name: Puma 560            # optional strings: name, manufacturer, comment
    convention: standard      # or modified
    gravity: [0, 0, 9.81]     # optional; base, tool: optional 4x4 lists
    poses: {qz: [0, 0, 0, 0, 0, 0]}
    links:
      - {alpha: pi/2, a: 0, d: 0, m: 0, r: [0, 0, 0], I: [0, 0.35, 0, 0, 0, 0],
         Jm: 200e-6, G: -62.6111, B: 1.48e-3, Tc: [0.395, -0.435], qlim: [-160*pi/180, 160*pi/180]}

Link keys: alpha, a, theta (prismatic only), d (revolute only), type (revolute|prismatic),
offset, m, r, I (6 values [Ixx Iyy Izz Ixy Iyz Ixz] or 3x3), Jm, G, B, Tc ([Tc+, Tc-] or one
value t meaning [t, -t]), qlim. A number may be written as a string built from numbers, ``pi``,
unary minus, ``*`` and ``/`` (e.g. "pi/2", "-160*pi/180", "200e-6").

Errors raise ``RobotDataError`` (a ValueError) naming the source and key path, e.g.
``puma560.yaml: links[2].m: expected a number``.
"""

import difflib
import functools
import math
import re
from pathlib import Path

from .link import Link
from .serial_link import SerialLink

MODELS_DIR = Path(__file__).with_name("models")
ALIASES = {"p560": "puma560", "p560m": "puma560akb", "stanf": "stanford", "tl": "twolink"}

_ROBOT_KEYS = ("name", "manufacturer", "comment", "convention", "gravity", "base", "tool",
               "poses", "links")
_LINK_KEYS = ("alpha", "a", "theta", "d", "type", "offset", "m", "r", "I", "Jm", "G", "B", "Tc",
              "qlim")
_TOKEN = re.compile(r"\s*(?:(\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)|(pi)|([-+*/]))")


class RobotDataError(ValueError):
    """Invalid robot data; the message names the source and the key path."""

    def __init__(self, message, path="", source="<inline>"):
        self.path = path
        self.source = source
        where = ": ".join(x for x in (source, path) if x)
        super().__init__(f"{where}: {message}" if where else message)


def parse_number(text):
    """Value of a number or a string of numbers and ``pi`` joined by ``*`` and ``/``, each
    factor with optional unary signs: "pi/2" -> 1.5708, "-160*pi/180" -> -2.7925.
    Raises ValueError for anything else."""
    s = str(text)
    tokens, pos = [], 0
    while pos < len(s):
        t = _TOKEN.match(s, pos)
        if t is None or t.end() == pos:
            if s[pos:].strip():
                raise ValueError(f"cannot read {text!r} as a number")
            break
        tokens.append(t.group(1) or t.group(2) or t.group(3))
        pos = t.end()
    value, op, i = 1.0, "*", 0
    while True:
        sign = 1.0
        while i < len(tokens) and tokens[i] in "+-":
            sign = -sign if tokens[i] == "-" else sign
            i += 1
        if i == len(tokens) or tokens[i] in "*/":
            raise ValueError(f"cannot read {text!r} as a number")
        x = sign * (math.pi if tokens[i] == "pi" else float(tokens[i]))
        value = value * x if op == "*" else value / x
        i += 1
        if i == len(tokens):
            return value
        op = tokens[i]
        if op not in "*/":
            raise ValueError(f"cannot read {text!r} as a number")
        i += 1


class _Reader:
    """Typed access to a nested mapping with key paths in the error messages."""

    def __init__(self, source):
        self.source = source

    def fail(self, path, message):
        raise RobotDataError(message, path, self.source)

    def number(self, value, path, finite=True):
        """A float; NaN never, ±inf only with `finite=False` (joint limits)."""
        x = None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                x = float(value)
            except OverflowError:
                self.fail(path, f"the number {value} is too large for a float64")
        elif isinstance(value, str):
            try:
                x = parse_number(value)
            except (ValueError, ZeroDivisionError):
                pass
        if x is None:
            self.fail(path, f"expected a number, got {value!r}")
        if math.isnan(x) or (finite and math.isinf(x)):
            self.fail(path, f"expected a finite number, got {value!r}")
        return x

    def vector(self, value, path, sizes, finite=True):
        if not isinstance(value, (list, tuple)):
            self.fail(path, f"expected a list of {' or '.join(map(str, sizes))} numbers, "
                            f"got {value!r}")
        if len(value) not in sizes:
            self.fail(path, f"expected {' or '.join(map(str, sizes))} values, got {len(value)}")
        return [self.number(v, f"{path}[{i}]", finite) for i, v in enumerate(value)]

    def matrix(self, value, path, rows, cols):
        if not isinstance(value, (list, tuple)) or len(value) != rows:
            self.fail(path, f"expected a {rows}x{cols} matrix (list of {rows} rows)")
        return [self.vector(row, f"{path}[{i}]", (cols,)) for i, row in enumerate(value)]

    def string(self, value, path, choices=None):
        if not isinstance(value, str):
            self.fail(path, f"expected a string, got {value!r}")
        if choices and value not in choices:
            self.fail(path, f"expected one of {', '.join(choices)}, got {value!r}")
        return value

    def mapping(self, value, path, allowed):
        if not isinstance(value, dict):
            self.fail(path, f"expected a mapping, got {type(value).__name__}")
        for key in value:
            if key not in allowed:
                near = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f"; did you mean {near[0]!r}?" if near else \
                    f"; allowed keys: {', '.join(allowed)}"
                self.fail(f"{path}.{key}" if path else str(key), f"unknown key{hint}")
        return value


def _link(rd, data, path, convention):
    rd.mapping(data, path, _LINK_KEYS)
    kw = {"convention": convention}
    for key in ("alpha", "a", "theta", "d", "offset", "m", "Jm", "G", "B"):
        if key in data:
            kw[key] = rd.number(data[key], f"{path}.{key}")
    if "type" in data:
        kw["type"] = rd.string(data["type"], f"{path}.type", ("revolute", "prismatic"))
    if "r" in data:
        kw["r"] = rd.vector(data["r"], f"{path}.r", (3,))
    if "I" in data:
        value = data["I"]
        if isinstance(value, (list, tuple)) and value and isinstance(value[0], (list, tuple)):
            kw["I"] = rd.matrix(value, f"{path}.I", 3, 3)
        else:
            kw["I"] = rd.vector(value, f"{path}.I", (6,))
    if "Tc" in data:
        value = data["Tc"]
        kw["Tc"] = rd.vector(value, f"{path}.Tc", (2,)) if isinstance(value, (list, tuple)) \
            else rd.number(value, f"{path}.Tc")
    if "qlim" in data:
        kw["qlim"] = rd.vector(data["qlim"], f"{path}.qlim", (2,), finite=False)
        if not kw["qlim"][0] <= kw["qlim"][1]:
            rd.fail(f"{path}.qlim", "expected [min, max] with min <= max")
    try:
        return Link(**kw)
    except ValueError as e:
        rd.fail(path, str(e))


def robot_from_dict(data, source="<inline>"):
    """A ``SerialLink`` from a mapping with the robot-file keys (strict: unknown keys, wrong
    types or lengths raise ``RobotDataError`` naming ``source`` and the key path)."""
    rd = _Reader(source)
    rd.mapping(data, "", _ROBOT_KEYS)
    if "links" not in data:
        rd.fail("links", "missing (a list of link mappings)")
    convention = rd.string(data.get("convention", "standard"), "convention",
                           ("standard", "modified"))
    links = data["links"]
    if not isinstance(links, list) or not links:
        rd.fail("links", "expected a non-empty list of link mappings")
    links = [_link(rd, L, f"links[{i}]", convention) for i, L in enumerate(links)]
    kw = {}
    for key in ("name", "manufacturer", "comment"):
        if key in data:
            kw[key] = rd.string(data[key], key)
    if "gravity" in data:
        kw["gravity"] = rd.vector(data["gravity"], "gravity", (3,))
    for key in ("base", "tool"):
        if key in data:
            kw[key] = rd.matrix(data[key], key, 4, 4)
    poses = data.get("poses", {})
    if not isinstance(poses, dict):
        rd.fail("poses", "expected a mapping name -> joint list")
    kw["poses"] = {str(k): rd.vector(v, f"poses.{k}", (len(links),)) for k, v in poses.items()}
    try:
        return SerialLink(links, convention=convention, **kw)
    except ValueError as e:
        rd.fail("", str(e))


def available():
    """Names of the built-in models."""
    return list(_builtin())


@functools.lru_cache(maxsize=1)
def _builtin():
    """The built-in models' names, sorted: the package's files, listed once (a robot built
    per run of a sweep checked its model against a listing of the folder)."""
    return tuple(sorted(p.stem for p in MODELS_DIR.glob("*.yaml")))


def load_robot(name_or_path):
    """A built-in model by name ('puma560', 'puma560akb', 'stanford', 'twolink', or the
    toolbox aliases p560, p560m, stanf, tl) or a robot YAML file by path."""
    text = str(name_or_path)
    if isinstance(name_or_path, Path) or text.endswith((".yaml", ".yml")) or "/" in text:
        path = Path(text)
        if not path.is_file():
            raise RobotDataError(f"no such robot file {text!r}")
    else:
        key = ALIASES.get(text.lower(), text.lower())
        path = MODELS_DIR / f"{key}.yaml"
        if not path.is_file():
            names = available() + sorted(ALIASES)
            near = difflib.get_close_matches(text.lower(), names, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise RobotDataError(f"unknown robot {text!r}{hint} (built-in: {', '.join(available())})")
    stat = path.stat()
    return _robot_file(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=32)
def _robot_file(path, mtime_ns, size):
    """The robot of a robot file, cached by path, modification time and size: a batch of runs
    builds the same model, perturbed, for every run, and parsing and checking the file were
    most of that. Robots are immutable, so the calls can share one."""
    from blocksim.errors import DiagramError
    from blocksim.language.yamlio import load_yaml_file

    try:  # the diagrams' loader: its limits, strict keys, UTF-8 and tags, with lines
        data = load_yaml_file(path)
    except DiagramError as e:
        where = Path(path).name + (f":{e.line}" if e.line is not None else "")
        hint = f" ({e.hint})" if e.hint else ""
        raise RobotDataError(f"{e.message}{hint}", source=where) from None
    return robot_from_dict(data, source=Path(path).name)
