"""Pass 1, values: the `robots:` (library sections) and the parameters of every scope.

Input: the DiagramSpec, the block library, the problems list and the sections built for an
earlier spec (kept by the Compilation: robots built from the same options are the same data).
Output: `Values`, everything an expression in a block parameter may name.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...errors import DiagramError
from ...language import expr
from ...language.diagram import suggest


@dataclass
class Values:
    resources: dict = field(default_factory=dict)  # section -> {name: object}
    constants: dict = field(default_factory=dict)  # bare names (poses every robot agrees on)
    dotted: dict = field(default_factory=dict)  # robot name -> {pose: value}
    scopes: list = field(default_factory=list)  # per scope: {parameter: value}
    # the evaluator's functions, with those of the sections' entries (fkine(p560, q))
    functions: dict = field(default_factory=lambda: expr.FUNCTIONS)

    def evaluate(self, raw, names, loc, what):
        """`raw` evaluated with `names` (and ROBOT.pose), an error at `loc` naming `what`."""
        try:
            return expr.evaluate(raw, names, dotted=self.dotted, functions=self.functions)
        except expr.Unavailable:
            raise
        except expr.ExprError as e:
            raise loc.error(f"{what}: {e}") from None


class _Recording(dict):
    """Names for an expression that note in `used` the ones it reads (name -> value); the
    names in `late` exist but have no value yet (parameters that need a robot)."""

    def __init__(self, names, used, late):
        super().__init__(names)
        self.used, self.late = used, late

    def __contains__(self, key):
        return super().__contains__(key) or key in self.late

    def __getitem__(self, key):
        if key in self.late:
            raise expr.ExprError(f"parameter '{key}' cannot be used here: robots are built "
                                 "before the parameters that use a robot's pose (or that fail)")
        value = super().__getitem__(key)
        self.used[key] = value
        return value


def evaluate_values(spec, library, problems, built_sections):
    """Robots, then every scope's parameters. `built_sections` (robot name -> (options,
    (robot, poses), parameters used)) is read and updated: a robot whose options and the
    parameters it uses are unchanged is not built again. Problems of the robots are raised
    before the parameters are evaluated (a parameter may use a robot's pose)."""
    values = Values()
    _build_sections(spec, library, problems, built_sections, values)
    problems.check()
    _evaluate_scopes(spec, problems, values)
    return values


def _build_sections(spec, library, problems, built_sections, values):
    robots = {}
    if spec.robots:
        builder = library.section_builder("robots")
        if builder is None:
            problems.add(next(iter(spec.robots.values()))["__loc__"].error(
                "this block library has no robots"))
            return
        base_dir = dir_of(spec.file)
        parameters, late = _parameters_before_robots(spec)
        for name, options in spec.robots.items():
            key = (base_dir, {k: v.raw for k, v in options.items() if k != "__loc__"})
            cached = built_sections.get(name)
            if cached is not None and same_data(cached[0], key) and all(
                    same_data(v, parameters.get(k)) for k, v in cached[2].items()):
                robots[name], poses = cached[1]
            else:
                used = {}
                names = _Recording(parameters, used, late)
                try:
                    robots[name], poses = builder(
                        name, options,
                        lambda value, what: values.evaluate(value.raw, names, value.loc, what),
                        base_dir=base_dir)
                except DiagramError as e:
                    problems.add(e)
                    continue
                built_sections[name] = (key, (robots[name], poses), used)
            values.dotted[name] = poses
    values.resources["robots"] = robots
    if robots:  # robots are built first: their own options see the built-in functions only
        values.functions = {**{name: f.bound(robots) for name, f in
                               library.section_functions("robots").items()}, **expr.FUNCTIONS}
    # A bare pose name is a constant only when every robot agrees on it.
    if values.dotted:
        common = set.intersection(*(set(p) for p in values.dotted.values()))
        for pose in common:
            found = [np.asarray(p[pose]) for p in values.dotted.values()]
            if all(v.shape == found[0].shape and np.array_equal(v, found[0]) for v in found):
                values.constants[pose] = found[0]


def _parameters_before_robots(spec):
    """The diagram's top-level parameters that robots may use: those whose values need no
    robot (a parameter may use a robot's pose, so parameters in general come after the
    robots). A parameter that fails here is left out; _evaluate_scopes reports it."""
    names, late = {}, set()
    if spec.scopes:
        params = spec.scopes[0].params
        order, cycles = dependency_order(params, ())
        late.update(name for cycle in cycles for name in cycle)
        for key in order:
            try:
                names[key] = expr.evaluate(params[key].raw, names)
            except expr.ExprError:
                late.add(key)
    return names, late


def dependency_order(params, overridden):
    """(order, cycles) of a scope's parameters (name -> located raw value): an order in which
    each comes after the parameters it uses (a workspace is unordered: `wn: sqrt(k/m)` may
    come before k and m), declaration order where that leaves a choice; and the cycles, each
    a list of names in the order they use each other (their members are not in `order`;
    what uses them is, after them). The overridden parameters take their values from outside
    the scope: they depend on none of it."""
    keys = list(params)
    index = {k: i for i, k in enumerate(keys)}
    uses = {k: set() if k in overridden else expr.names_in(params[k].raw) & index.keys()
            for k in keys}
    users = {k: [] for k in keys}
    for k, deps in uses.items():
        for d in deps:
            users[d].append(k)
    waiting = {k: len(deps) for k, deps in uses.items()}
    ready = [index[k] for k in keys if not waiting[k]]
    heapq.heapify(ready)
    order = []
    while ready:
        k = keys[heapq.heappop(ready)]
        order.append(k)
        for u in users[k]:
            waiting[u] -= 1
            if not waiting[u]:
                heapq.heappush(ready, index[u])
    if len(order) == len(keys):
        return order, []
    left = [k for k in keys if waiting[k]]
    cycles = _cycles({k: uses[k] & set(left) for k in left}, index)
    stuck = {k for cycle in cycles for k in cycle}
    return order + [k for k in left if k not in stuck], cycles


def _cycles(uses, index):
    """The cycles among parameters that use each other: each strongly connected group (or a
    parameter that uses itself) as the path through it from its first-declared member."""
    import networkx as nx  # only on this error path
    graph = nx.DiGraph((k, d) for k, deps in uses.items() for d in deps)
    cycles = []
    for group in nx.strongly_connected_components(graph):
        first = min(group, key=index.get)
        if len(group) == 1 and first not in uses[first]:
            continue
        path = [edge[0] for edge in nx.find_cycle(graph.subgraph(group), source=first)]
        cycles.append(path)
    return sorted(cycles, key=lambda c: index[c[0]])


def _evaluate_scopes(spec, problems, values):
    for scope in spec.scopes:
        names = dict(values.constants)
        parent = values.scopes[scope.parent] if scope.parent is not None else None
        for key in scope.overrides:
            if key not in scope.params:
                v = scope.overrides[key]
                problems.add(v.loc.error(f"the subsystem has no parameter '{key}'"
                                         f"{suggest(key, scope.params)}"))
        order, cycles = dependency_order(scope.params, scope.overrides)
        for cycle in cycles:
            first = scope.params[cycle[0]]
            problems.add(first.loc.error(
                f"parameter '{cycle[0]}' uses itself" if len(cycle) == 1 else
                f"parameters {' -> '.join(cycle + cycle[:1])} depend on each other",
                hint="each parameter may use the others (in any order) but not, through "
                     "them, itself"))
            for key in cycle:
                names[key] = expr.FAILED
        for key in order:
            names[key] = evaluate_parameter(scope, key, names, parent, values, problems)
        values.scopes.append(names)


def evaluate_parameter(scope, key, names, parent, values, problems):
    """The value of parameter `key` of `scope` (`names`: the scope's values so far; `parent`:
    the including scope's, which an override is evaluated in), or expr.FAILED with its
    problem added."""
    dotted = values.dotted
    value = scope.params[key]
    source, env = (scope.overrides[key], parent) if key in scope.overrides else (value, names)
    try:
        expr.check_not_reserved(key)
        if key in dotted:
            raise expr.ExprError(f"'{key}' is also the name of a robot")
        if any(key in poses for poses in dotted.values()):
            raise expr.ExprError(f"'{key}' is a robot's named pose: a parameter "
                                 "may not reuse a constant's name")
        evaluated = values.evaluate(source.raw, env, source.loc, f"parameter '{key}'")
        if isinstance(evaluated, np.ndarray) and np.isnan(evaluated).any():
            raise source.loc.error(f"parameter '{key}' is not a number (NaN)")
        return evaluated
    except expr.Unavailable:  # it uses a failed parameter, reported already
        return expr.FAILED
    except expr.ExprError as e:
        problems.add(value.loc.error(f"parameter '{key}': {e}"))
        return expr.FAILED
    except DiagramError as e:
        problems.add(e)
        return expr.FAILED


def dir_of(file):
    """The directory relative paths of a diagram file are read from."""
    return Path(file).parent if file and not file.startswith("<") else Path.cwd()


SMALL = 64  # arrays up to this size are compared as Python lists (a value set: one number)
NUMERIC = frozenset("biufc")


def same_data(a, b):
    """Equality of plain data (raw YAML values, tuples of them) that may hold numpy arrays."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.shape != b.shape:
            return False
        if a.size <= SMALL and a.dtype.kind in NUMERIC and b.dtype.kind in NUMERIC:
            return a.tolist() == b.tolist()  # array_equal's answer (NaN unequal), 6x quicker
        return bool(np.array_equal(a, b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same_data, a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_data(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b
