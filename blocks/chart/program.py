"""A chart's actions and conditions compiled, and the tables its machine runs on.

One source for both modes: the machine (machine.py) and the compiled form (lowering.py) read
the same tables, and every action and condition is compiled from the same parsed text
(`statements.parse_action`, `statements.comparisons`) by the expression language: here into
closures, there into C (`accel.expression.lower_expression`).

The chart's memory is one flat array, the `store` (the discrete state): per state its
activity (1.0 / 0.0) and the time it was entered, per every-action the periods counted, a
flag set once the chart has been entered, then the data and the held outputs. Expressions
see the chart's variables, its inputs, outputs and data, as positional arguments in that
order (`Program.names`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from blocksim.errors import DiagramError, DiagramErrors
from blocksim.language import expr
from blocksim.language.diagram import suggest
from blocksim.language.statements import comparisons, parse_action

MAX_CHAIN = 100  # transitions at one instant before it is a loop


@dataclass
class Var:
    name: str
    kind: str  # input, output, data
    shape: tuple
    offset: int  # in the store (-1 for an input)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=int))


@dataclass
class Statement:
    """`target[index] = value`: `index` () or one entry per axis: ("at", fn, text) an index
    expression, ("slice", slice, text) constant bounds."""
    target: int  # index into Program.vars
    index: tuple
    value: object  # compiled expression (callable of the variables)
    value_text: str
    shape: tuple  # the value's shape on sample values


@dataclass
class Action:
    statements: list
    text: str


@dataclass
class Leaf:
    """A comparison of a continuous chart's condition: indicator plus - minus."""
    transition: int
    plus: object
    minus: object
    plus_text: str
    minus_text: str
    direction: int


class Program:
    """The compiled chart: variables, actions, conditions, leaves and the machine's tables."""

    def __init__(self, block, spec, p, continuous):
        self.spec, self.continuous = spec, continuous
        self.functions = {**p._functions, **expr.MATRIX_FUNCTIONS}
        self.params, self.dotted = p._names, p._dotted
        S, E = len(spec.states), sum(len(s.every) for s in spec.states)
        self.n_states = S
        self.ACTIVE, self.ENTERED, self.COUNT, self.STARTED = 0, S, 2 * S, 2 * S + E
        offset = self.STARTED + 1
        self.vars = [Var(n, "input", s, -1) for n, s in spec.inputs.items()]
        for kind, table in (("data", {n: v.shape for n, v in spec.data.items()}),
                            ("output", spec.outputs)):
            for name, shape in table.items():
                self.vars.append(Var(name, kind, tuple(shape), offset))
                offset += int(np.prod(shape, dtype=int))
        self.size = offset
        # the variables as expressions list them: inputs, outputs, data
        order = {"input": 0, "output": 1, "data": 2}
        self.vars.sort(key=lambda v: order[v.kind])
        self.names = tuple(v.name for v in self.vars)
        self.index = {v.name: k for k, v in enumerate(self.vars)}
        self._block, self._problems = block, []
        self.actions = []  # Action, by id
        self.guards = []  # (fn, text), by id
        self.leaves = []  # Leaf
        self._build_tables()
        if self._problems:
            raise self._problems[0] if len(self._problems) == 1 else DiagramErrors(self._problems)

    # -- initial values and samples ---------------------------------------------------------
    def initial_store(self):
        store = np.zeros(self.size)
        for v in self.vars:
            if v.kind == "data":
                store[v.offset:v.offset + v.size] = np.broadcast_to(
                    self.spec.data[v.name], v.shape).ravel()
        return store

    def samples(self):
        """Values to evaluate expressions on once, for their shapes: the data's initial
        values, zeros elsewhere; then the same with the zeros random."""
        store = self.initial_store()
        rng = np.random.default_rng(0)
        for fill in (np.zeros, lambda s: rng.uniform(0.5, 1.5, s)):
            yield tuple(np.array(fill(v.shape), dtype=float) if v.kind != "data" else
                        store[v.offset:v.offset + v.size].reshape(v.shape)
                        for v in self.vars)

    # -- compiling --------------------------------------------------------------------------
    def _fail(self, text, message):
        self._problems.append(DiagramError(message, file=text.loc.file, line=text.loc.line,
                                           block=self._block))

    def _compile(self, source, text):
        """A callable of the variables for expression `source` (part of `text`), with the
        shape of its value; None (and a problem) when it does not compile."""
        try:
            fn = expr.compile_expr(source, self.names, self.params, functions=self.functions,
                                   dotted=self.dotted)
        except expr.Unavailable:
            return None, None
        except expr.ExprError as e:
            message = str(e)
            if "unknown name" in message:
                message = message.replace("unknown name", "undeclared name") + \
                    " (declare it under inputs, outputs or data)"
            self._fail(text, f"'{source}': {message}")
            return None, None
        errors = []
        for args in self.samples():
            try:
                return fn, np.shape(fn.checked(*args))
            except expr.LimitError as e:
                errors = [e]
                break
            except (expr.ExprError, ArithmeticError, LookupError, ValueError, TypeError) as e:
                errors.append(e)
        self._fail(text, f"'{source}' cannot be evaluated: {errors[0]}")
        return None, None

    def action(self, text, outputs_only=False, assigned=None):
        """The id of the compiled action `text` (a Text), or -1 for none. A continuous
        chart's during action (`outputs_only`) assigns outputs only, and reads an output
        only once it is assigned in this evaluation: by an earlier statement or by an
        enclosing state's during action (`assigned`, a set the action's targets join), so
        that its outputs are functions of the inputs and data, whenever it runs."""
        if text is None:
            return -1
        try:
            parsed = parse_action(text.text)
        except expr.ExprError as e:
            self._fail(text, str(e))
            return -1
        statements = []
        for a in parsed:
            k = self.index.get(a.target)
            if k is None:
                self._fail(text, f"'{a.text}': undeclared name '{a.target}'"
                                 f"{suggest(a.target, self.names)} (declare it under outputs "
                                 "or data)")
                continue
            var = self.vars[k]
            if var.kind == "input":
                self._fail(text, f"'{a.text}': assignment to the input '{a.target}' (inputs "
                                 "are read only; assign outputs or data)")
                continue
            if outputs_only and var.kind == "data":
                self._fail(text, f"'{a.text}': a during action of a continuous chart runs at "
                                 "every evaluation of the outputs, so it may assign outputs "
                                 "only; change data in entry, exit, every or a transition's "
                                 "do (or give the chart a sample time)")
                continue
            fn, shape = self._compile(a.value, text)
            index = self._index(a, var, text)
            if fn is None or index is None:
                continue
            if outputs_only:
                read = set(fn.names).union(*(part[1].names for part in index
                                             if part[0] == "at"))
                early = sorted(n for n in read if n in self.index and
                               self.vars[self.index[n]].kind == "output" and n not in assigned)
                if early:
                    self._fail(text, f"'{a.text}': a during action of a continuous chart "
                                     f"reads the output '{early[0]}' before assigning it, so "
                                     "its value would depend on how often the chart is "
                                     "evaluated; assign it first (here or in an enclosing "
                                     "state's during), or keep the value in data")
                    continue
                assigned.add(a.target)
            region = np.zeros(var.shape)[tuple(i if kind == "slice" else 0
                                                for kind, i, _ in index)] if index else \
                np.zeros(var.shape)
            try:
                np.broadcast_to(np.zeros(shape), np.shape(region))
            except ValueError:
                self._fail(text, f"'{a.text}': a value of shape {shape} cannot be assigned "
                                 f"to {a.target}{'[...]' if index else ''} of shape "
                                 f"{np.shape(region)}")
                continue
            statements.append(Statement(k, index, fn, a.value, shape))
        self.actions.append(Action(statements, text.text))
        return len(self.actions) - 1

    def _index(self, a, var, text):
        """A target's index: per axis ("at", fn, text) or ("slice", slice, text); None
        (and a problem) when it cannot be one."""
        if not a.index:
            return ()
        if len(a.index) > len(var.shape):
            self._fail(text, f"'{a.text}': {a.target} has {len(var.shape)} axes, indexed "
                             f"with {len(a.index)}")
            return None
        index = []
        for part in a.index:
            if isinstance(part, tuple):
                try:
                    bounds = [None if b is None else
                              int(expr.evaluate(b, self.params, functions=self.functions))
                              for b in part]
                except (expr.ExprError, TypeError, ValueError) as e:
                    self._fail(text, f"'{a.text}': a slice of a target has constant integer "
                                     f"bounds ({e})")
                    return None
                index.append(("slice", slice(*bounds), ":".join("" if b is None else b
                                                                 for b in part)))
            else:
                fn, shape = self._compile(part, text)
                if fn is None:
                    return None
                if shape != ():
                    self._fail(text, f"'{a.text}': an index is a single number, '{part}' "
                                     f"has shape {shape}")
                    return None
                index.append(("at", fn, part))
        return tuple(index)

    def guard(self, text):
        """The id of the compiled condition `text`, or -1 for none; a continuous chart's
        condition also gives its comparisons as leaves (indicators)."""
        if text is None:
            return -1
        fn, shape = self._compile(text.text, text)
        if fn is None:
            return -1
        if shape != ():
            self._fail(text, f"'{text.text}': a condition is a single truth value, this one "
                             f"has shape {shape} (use max(...), min(...) or an index)")
            return -1
        self.guards.append((fn, text.text))
        return len(self.guards) - 1

    def leaves_of(self, transition, text):
        try:
            found = comparisons(text.text)
        except expr.ExprError as e:
            self._fail(text, str(e))
            return
        for c in found:
            plus, ps = self._compile(c.plus, text)
            minus, ms = self._compile(c.minus, text)
            if plus is None or minus is None:
                continue
            if ps != () or ms != ():
                self._fail(text, f"'{c.text}': both sides of a comparison are single "
                                 f"numbers, here shapes {ps} and {ms}")
                continue
            self.leaves.append(Leaf(transition, plus, minus, c.plus, c.minus, c.direction))

    # -- the machine's tables ---------------------------------------------------------------
    def _build_tables(self):
        spec = self.spec
        states, trs = spec.states, spec.transitions
        self.children = [list(s.children) for s in states]
        self.entry = [self.action(s.entry) for s in states]
        self.exit = [self.action(s.exit) for s in states]
        self.during = []
        given = []  # per state: the outputs its during actions and its ancestors' assign
        for s in states:
            assigned = set(given[s.parent]) if s.parent >= 0 else set()
            self.during.append(self.action(s.during, outputs_only=self.continuous,
                                           assigned=assigned))
            given.append(assigned)
        self.every = []  # (state, period, action)
        for s in states:
            for e in s.every:
                self.every.append((s.index, e.period, self.action(e.action)))
        self.t_source = [t.source for t in trs]
        self.t_guard = [self.guard(t.when) for t in trs]
        self.t_do = [self.action(t.do) for t in trs]
        self.t_after = [t.after for t in trs]
        self.t_exit = [t.exit_root for t in trs]
        self.t_enter = [list(t.enter) for t in trs]
        self.outgoing = [[k for k, t in enumerate(trs) if t.source == s.index] for s in states]
        if self.continuous:
            for k, t in enumerate(trs):
                if self.t_guard[k] >= 0:  # a condition that compiled: its comparisons
                    self.leaves_of(k, t.when)
        self.tops = list(spec.tops)
        self.leaf_index = {s: k for k, s in enumerate(spec.leaves)}

    def loop_text(self, chain):
        """The message of a transition loop: the states of the cycle the chain ended in."""
        last = chain[-1]
        before = [k for k in range(len(chain) - 1) if chain[k] == last]
        cycle = chain[before[-1] + 1:] if before else chain
        path = self.spec.states
        names = [path[self.t_source[cycle[0]]].path] + [path[self.spec.transitions[k].target].path
                                                         for k in cycle]
        return (f"transition loop: {' -> '.join(names)} (more than {MAX_CHAIN} transitions "
                "at one instant without the chart settling)")
