"""A chart block's YAML read into plain data: variables, the state tree, the transitions.

Everything is checked here, every problem reported together with the file and line it is
written on: state names, one initial state per level, transitions between states that exist
(with a suggestion), not between parallel regions, `after` times > 0, actions that assign
only outputs and data. The expressions themselves are compiled by program.py. States are
numbered in preorder (a parent before its children, siblings in the order written), the
numbering the chart's tables, its outputs and meta.json use.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from blocksim.errors import DiagramError, DiagramErrors, DiagramWarning
from blocksim.language import expr
from blocksim.language.diagram import NAME_RE, YAML_BOOL_HINT, Loc, suggest
from blocksim.language.yamlio import YList, YMap

STATE_KEYS = ("initial", "entry", "during", "exit", "states")
TRANSITION_KEYS = ("from", "to", "when", "do", "after")
LEAF_OUTPUT = "leaf"  # the output holding the active leaf's index


@dataclass
class Text:
    """An action or a condition as written, and where."""
    text: str
    loc: Loc

    @property
    def shown(self):
        """The text on one line (a YAML block's line breaks as spaces)."""
        return " ".join(self.text.split())


@dataclass
class Every:
    """A during action run every `period` s after its state was entered."""
    period: float
    action: Text


@dataclass
class State:
    index: int
    name: str
    path: str  # dotted from the top: Track.Coarse
    parent: int  # -1 at the top
    loc: Loc
    initial: bool = False
    children: list = field(default_factory=list)
    entry: Text | None = None
    during: Text | None = None
    every: list = field(default_factory=list)  # Every
    exit: Text | None = None

    @property
    def port(self):
        """The name of its active-state output (both modes): in_Track_Coarse."""
        return "in_" + self.path.replace(".", "_")

    @property
    def leaf(self):
        return not self.children


@dataclass
class Transition:
    index: int
    source: int
    target: int
    loc: Loc
    when: Text | None = None
    do: Text | None = None
    after: float | None = None
    exit_root: int = -1  # the outermost state it exits (the domain's child on its side)
    enter: tuple = ()  # the states it enters, outermost first (the target's default chain)

    def label(self):
        """`after(T) [when] / do`, as a drawing and meta.json show it."""
        parts = [f"after({self.after:g})"] if self.after is not None else []
        if self.when is not None:
            parts.append(f"[{self.when.shown}]")
        if self.do is not None:
            parts.append(f"/ {self.do.shown}")
        return " ".join(parts)


@dataclass
class ChartSpec:
    inputs: dict  # name -> shape
    outputs: dict  # name -> shape
    data: dict  # name -> initial value (float array)
    states: list  # State, preorder
    transitions: list  # Transition, grouped by source in preorder, listed order within
    parallel: bool
    active: list  # indices of the states with an in_<State> output
    tops: list  # the top-level states
    initial: int  # the initial top-level state (-1 for parallel regions)

    @property
    def leaves(self):
        return [s.index for s in self.states if s.leaf]

    def default_chain(self, s):
        """The states entered below s by default (its initial child, and so on)."""
        chain = []
        while self.states[s].children:
            s = next(c for c in self.states[s].children if self.states[c].initial)
            chain.append(s)
        return chain

    def ancestors(self, s):
        """s and the states containing it, innermost first."""
        out = []
        while s != -1:
            out.append(s)
            s = self.states[s].parent
        return out


class _Reader:
    """Collects the problems of one chart block, each located."""

    def __init__(self, block, fallback):
        self.block, self.fallback = block, fallback
        self.errors = []

    def loc(self, node, key=None):
        """Where `node[key]` (a key of a mapping, an item of a list) is written."""
        if isinstance(node, YMap):
            return Loc(node.file or self.fallback.file,
                       node.key_line(key) if key is not None else node.line)
        if isinstance(node, YList):
            return Loc(node.file or self.fallback.file,
                       node.item_line(key) if key is not None else node.line)
        return self.fallback

    def error(self, loc, message, param, hint=None):
        self.errors.append(DiagramError(message, file=loc.file, line=loc.line,
                                        block=self.block, param=param, hint=hint))

    def mapping(self, value, param, what):
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.error(self.fallback if not hasattr(value, "line") else self.loc(value),
                       f"{what} must be a mapping, got {type(value).__name__}", param)
            return {}
        return value

    def raise_all(self):
        if len(self.errors) == 1:
            raise self.errors[0]
        if self.errors:
            raise DiagramErrors(self.errors)


def read_chart(block, p):
    """The ChartSpec of chart block `block` with validated parameters `p` (DiagramError or
    DiagramErrors listing every problem)."""
    r = _Reader(block, p._loc)
    r.names, r.functions = p._names, p._functions
    inputs = _sizes(r, p.inputs, "inputs")
    outputs = _sizes(r, p.outputs, "outputs")
    data = _data(r, p)
    _check_names(r, p, inputs, outputs, data)
    states, tops = [], []
    raw = r.mapping(p.states, "states", "states")
    if not raw:
        r.error(r.loc(p.states) if raw is not None else p._loc,
                "a chart needs states: a mapping of state names", "states")
    for name, body in raw.items():
        tops.append(_state(r, raw, name, body, -1, "", states))
    initial = _initials(r, raw, tops, states, -1, p.parallel)
    spec = ChartSpec(inputs, outputs, data, states, [], bool(p.parallel), [], tops, initial)
    spec.transitions = _transitions(r, p, spec)
    spec.active = _active(r, p, spec)
    r.raise_all()
    _warn_unreachable(block, spec)
    return spec


def _sizes(r, value, param):
    """inputs/outputs: name -> size (1: a scalar, n: a vector) or shape list."""
    shapes = {}
    for name, size in r.mapping(value, param, param).items():
        loc = r.loc(value, name)
        if isinstance(size, bool) or not (isinstance(size, int) and size >= 1) and not (
                isinstance(size, list) and size and all(isinstance(d, int) and not
                                                       isinstance(d, bool) and d >= 1
                                                       for d in size)):
            r.error(loc, f"'{name}': give its size (1 for a scalar, n for a vector) or its "
                         f"shape as a list ([3, 3]), got {size!r}", param)
            continue
        shapes[str(name)] = tuple(size) if isinstance(size, list) else \
            (() if size == 1 else (size,))
    return shapes


def _data(r, p):
    data = {}
    for name, value in r.mapping(p.data, "data", "data").items():
        try:
            data[str(name)] = np.asarray(expr.evaluate(value, p._names, dotted=p._dotted,
                                                       functions=p._functions), dtype=float)
        except expr.ExprError as e:
            r.error(r.loc(p.data, name), f"data '{name}': {e}", "data")
    return data


def _check_names(r, p, inputs, outputs, data):
    seen = {}
    for param, names, value in (("inputs", inputs, p.inputs), ("outputs", outputs, p.outputs),
                                ("data", data, p.data)):
        for name in names:
            loc = r.loc(value, name)
            if not NAME_RE.match(name):
                r.error(loc, f"'{name}' is not a valid name (letters, digits, _)", param)
            elif name in seen:
                r.error(loc, f"'{name}' is declared twice (in {seen[name]} and {param})", param)
            else:
                try:
                    expr.check_not_reserved(name)
                except expr.ExprError as e:
                    r.error(loc, str(e), param)
            seen.setdefault(name, param)
    if LEAF_OUTPUT in outputs or any(n.startswith("in_") for n in outputs):
        bad = LEAF_OUTPUT if LEAF_OUTPUT in outputs else next(n for n in outputs
                                                              if n.startswith("in_"))
        r.error(r.loc(p.outputs, bad), f"output '{bad}': '{LEAF_OUTPUT}' and names beginning "
                                       "with in_ are the chart's own outputs (the active leaf, "
                                       "the active states)", "outputs")


def _state(r, parent_map, name, body, parent, prefix, states):
    loc = r.loc(parent_map, name)
    if isinstance(name, bool):
        r.error(loc, f"a state named {name} (YAML's reading of an unquoted On, Off, Yes, "
                     "No...): quote the name", "states", hint=YAML_BOOL_HINT)
    name = str(name)
    if not NAME_RE.match(name):
        r.error(loc, f"state '{name}': a state's name is letters, digits and _", "states")
    index = len(states)
    state = State(index, name, prefix + name, parent, loc)
    states.append(state)
    if body is None:
        body = {}
    if not isinstance(body, dict):
        r.error(loc, f"state '{state.path}' must be a mapping ({{}} for a plain state), got "
                     f"{body!r:.40}", "states")
        return index
    for key in body:
        if key not in STATE_KEYS:
            r.error(r.loc(body, key), f"state '{state.path}': unknown key '{key}'"
                                      f"{suggest(key, STATE_KEYS)}", "states",
                    hint="a state has " + ", ".join(STATE_KEYS))
    initial = body.get("initial", False)
    if not isinstance(initial, bool):
        r.error(r.loc(body, "initial"), f"state '{state.path}': initial is true or false",
                "states")
    state.initial = initial is True
    for key in ("entry", "exit"):
        if key in body:
            setattr(state, key, _text(r, body, key, f"state '{state.path}' {key}"))
    if "during" in body:
        _during(r, body, state)
    inner = body.get("states")
    if inner is not None:
        inner = r.mapping(inner, "states", f"the states of '{state.path}'")
        state.children = [_state(r, inner, n, b, index, state.path + ".", states)
                          for n, b in inner.items()]
        _initials(r, inner, state.children, states, index, False)
    return index


def _text(r, node, key, what):
    value = node[key]
    if not isinstance(value, str) or not value.strip():
        r.error(r.loc(node, key), f"{what} must be a text (an expression or statements), "
                                  f"got {value!r:.40}", "states" if "state" in what else
                "transitions")
        return None
    return Text(value, r.loc(node, key))


def _during(r, body, state):
    value = body["during"]
    items = value if isinstance(value, list) else [value]
    for k, item in enumerate(items):
        where = value if isinstance(value, list) else body
        key = k if isinstance(value, list) else "during"
        if isinstance(item, str):
            if state.during is not None:
                r.error(r.loc(where, key), f"state '{state.path}': one during action besides "
                                           "the every ones (join statements with ;)", "states")
            state.during = Text(item, r.loc(where, key))
        elif isinstance(item, dict) and set(item) == {"every", "do"}:
            period = _time(r, item, "every", state.path, "states")
            text = _text(r, item, "do", f"state '{state.path}' every")
            if period is not None and text is not None:
                state.every.append(Every(period, text))
        else:
            r.error(r.loc(where, key), f"state '{state.path}': a during action is a text or "
                                       "{every: T, do: action}", "states")


def _time(r, node, key, what, param):
    """The time `node[key]` (an after or every) > 0, or None with an error on `param`."""
    try:
        value = float(np.asarray(expr.evaluate(node[key], r.names, functions=r.functions)))
    except (expr.ExprError, TypeError, ValueError) as e:
        r.error(r.loc(node, key), f"{what}: {key}: {e}", param)
        return None
    if not (np.isfinite(value) and value > 0):
        r.error(r.loc(node, key), f"{what}: {key} must be a time > 0 (s), got {value:g}",
                param)
        return None
    return value


def _initials(r, node, children, states, parent, parallel):
    """The initial child of a level (one, marked initial: true); parallel regions: none."""
    marked = [c for c in children if states[c].initial]
    where = "the chart" if parent == -1 else f"state '{states[parent].path}'"
    if parallel:
        for c in marked:
            r.error(states[c].loc, f"state '{states[c].path}' is a parallel region (always "
                                   "active): initial does not apply", "states")
        return -1
    if not children:
        return -1
    if not marked:
        r.error(r.loc(node) if parent == -1 else states[parent].loc,
                f"{where} has no initial state: mark one of "
                f"{', '.join(states[c].name for c in children)} with initial: true", "states")
        return -1
    if len(marked) > 1:
        r.error(states[marked[1]].loc, f"{where} has two initial states, "
                                       f"{states[marked[0]].name} and {states[marked[1]].name}:"
                                       " one per level", "states")
    return marked[0]


def _find(r, spec, name, loc, what):
    """The state a transition names: its dotted path, or a name unique in the chart."""
    if isinstance(name, bool):  # YAML 1.1's On, Off, Yes, No: the state so named, if one is
        words = ("on", "yes", "true", "y") if name else ("off", "no", "false", "n")
        same = [s for s in spec.states if s.name.lower() in words]
        if len(same) == 1:
            return same[0].index
        r.error(loc, f"{what} must name a state, got {name} (YAML reads an unquoted On, Off, "
                     "Yes, No as true or false): quote the name", "transitions")
        return -1
    if not isinstance(name, str):
        r.error(loc, f"{what} must name a state, got {name!r}", "transitions")
        return -1
    for s in spec.states:
        if s.path == name:
            return s.index
    same = [s for s in spec.states if s.name == name]
    if len(same) == 1:
        return same[0].index
    if len(same) > 1:
        r.error(loc, f"{what} '{name}' is ambiguous: " + " or ".join(s.path for s in same),
                "transitions")
        return -1
    r.error(loc, f"{what}: unknown state '{name}'"
                 f"{suggest(name, [s.path for s in spec.states] + [s.name for s in spec.states])}",
            "transitions", hint="states: " + ", ".join(s.path for s in spec.states))
    return -1


def _transitions(r, p, spec):
    raw = p.transitions if p.transitions is not None else []
    if not isinstance(raw, list):
        r.error(r.loc(raw) if hasattr(raw, "line") else p._loc,
                "transitions must be a list of {from, to, when, do, after}", "transitions")
        return []
    found = []
    for k, item in enumerate(raw):
        loc = r.loc(raw, k)
        if not isinstance(item, dict):
            r.error(loc, f"transition {k + 1} must be a mapping {{from, to, when, do, after}}",
                    "transitions")
            continue
        for key in item:
            if key not in TRANSITION_KEYS:
                r.error(r.loc(item, key), f"transition {k + 1}: unknown key '{key}'"
                                          f"{suggest(key, TRANSITION_KEYS)}", "transitions",
                        hint="a transition has " + ", ".join(TRANSITION_KEYS))
        if "from" not in item or "to" not in item:
            r.error(loc, f"transition {k + 1} needs from: and to:", "transitions")
            continue
        source = _find(r, spec, item["from"], r.loc(item, "from"), f"transition {k + 1} from")
        target = _find(r, spec, item["to"], r.loc(item, "to"), f"transition {k + 1} to")
        t = Transition(k, source, target, loc)
        for key in ("when", "do"):
            if key in item:
                setattr(t, key, _text(r, item, key, f"transition {k + 1} {key}"))
        if "after" in item:
            t.after = _time(r, item, "after", f"transition {k + 1}", "transitions")
        if source >= 0 and target >= 0 and _route(r, spec, t):
            found.append(t)
    # priority: outer states' first (preorder), then the order written
    found.sort(key=lambda t: (t.source, t.index))
    return found


def _route(r, spec, t):
    """The states a transition exits and enters (external semantics: a transition between a
    state and its own descendant or itself leaves and re-enters the outer one)."""
    up_source, up_target = spec.ancestors(t.source), spec.ancestors(t.target)
    domain = next((s for s in up_source[1:] if s in up_target[1:]), -1)
    if domain == -1 and spec.parallel:
        names = (spec.states[t.source].path, spec.states[t.target].path)
        r.error(t.loc, f"transition {names[0]} -> {names[1]}: parallel regions are always "
                       "active; a transition stays inside one region", "transitions")
        return False
    below = lambda chain: chain[chain.index(domain) - 1] if domain != -1 else chain[-1]
    t.exit_root = below(up_source)
    path = up_target[:up_target.index(domain)] if domain != -1 else up_target
    t.enter = tuple(reversed(path)) + tuple(spec.default_chain(t.target))
    return True


def _active(r, p, spec):
    """The states with an in_<State> output: a list of states, or a mapping state -> 1
    (true) as the spec writes it, `active: {Track: 1}` (0 or false: no output)."""
    raw = p.active if p.active is not None else []
    if isinstance(raw, str):
        raw = [raw]
    if isinstance(raw, dict):
        names = []
        for name, on in raw.items():
            if on in (0, 1) and not isinstance(on, float):  # 0, 1, false, true
                if on:
                    names.append((name, r.loc(raw, name)))
            else:
                r.error(r.loc(raw, name), f"active: '{name}: {on}': 1 (or true) gives the "
                                          "state an output in_<State>, 0 none", "active")
    elif isinstance(raw, list):
        names = [(name, r.loc(raw, k)) for k, name in enumerate(raw)]
    else:
        r.error(p._loc, "active must be a list of states or a mapping {state: 1}", "active")
        return []
    found = []
    for name, loc in names:
        s = _find(r, spec, name, loc, "active")
        if s >= 0:
            found.append(s)
    return found


def _warn_unreachable(block, spec):
    """A warning for every state no run can enter (not entered by default from the start,
    not the target of a transition from a state that can be entered)."""
    entered = set()

    def enter(states):
        new = [s for s in states if s not in entered]
        entered.update(new)
        return bool(new)

    tops = spec.tops if spec.parallel else ([spec.initial] if spec.initial >= 0 else [])
    for s in tops:
        enter([*spec.ancestors(s)[::-1], *spec.default_chain(s)])
    changed = True
    while changed:
        changed = False
        for t in spec.transitions:
            if t.source in entered:
                changed |= enter(t.enter)
    for s in spec.states:
        if s.index not in entered:
            warnings.warn(DiagramWarning(
                f"state '{s.path}' is unreachable: no transition from a state the chart can "
                "be in leads to it", file=s.loc.file, line=s.loc.line, block=block),
                stacklevel=2)
