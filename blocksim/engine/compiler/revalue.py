"""The one route for new values into a compiled Model: `--set` on a loaded model,
`Model.set`, a sweep's runs, in both modes. Nothing is rebuilt: the values are written into
the model's Context (engine/context.py) and the blocks' parameters.

`Revalue(compilation)` is made once per compiled structure, on the first change of values,
with its map of which expressions read which names (each scope's parameters, each block's
parameters, the settings, the robots' options). `apply(model, changes)`:

1. the overrides are applied to a copy of the spec, as at load (an unknown path is its
   error); a `record:` entry or the diagram's name is structure;
2. the parameters set, and those that read a name whose value changed, are evaluated
   again, scope by scope in dependency order; a robot whose options changed, or that reads
   a changed parameter, takes every value evaluated again as at load (the robots whose
   options and parameters are the same are not built again);
3. each block a change reaches has those of its parameters evaluated and checked by their
   `Param`s as at load; each must be a value its declaration names (`d.param`,
   `d.value`: rundata.py) of the shape it had, its `derive` must take them and give the
   facts it gave, its states their sizes;
4. the settings are evaluated again when they may have changed (the solver is structure),
   the time events when the settings or a block announcing them changed, and the run's
   budget checked again;
5. everything is written at once: P, x0, xd0, the blocks' parameters (`values_changed`
   called), settings, events, the spec; the Context's version moves on.

Whatever else changed is structure: `apply` returns False having written nothing, and the
caller compiles the new spec. A value refused raises what load raises, nothing written.

The direct way, inside the route: when every change is a plain number for a parameter that
is one number of P and nothing else (rundata.direct_param: stored as given, read by no
Python) of a block without `values_changed`, steps 2-4 come to checking it by its Param and
writing it into P and the block's parameters, which `apply` does without them; the spec
and its overrides are what the general way makes. A value its Param refuses takes the
general way, which says why. The Context's version stays (nothing computed from the values
changed). A sweep's runs (`base`) take the general way: theirs is batch/columns.py.
"""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np

from ...errors import Problems
from ...language import expr
from ...language.diagram import apply_overrides
from ...params import ParamError
from ...block import Sample, overrides
from ...rundata import Structural, direct_param, sample_of, values_of
from ..context import write
from .blocks import param_value
from .records import check_recording
from .settings import check_rates, simulation_settings
from .values import dependency_order, evaluate_parameter, evaluate_values, same_data

_EVALUATED = ("value", "scalar", "int", "string", "data")  # the kinds whose text may read names
_OWN = ("string", "data")  # evaluated by the block itself, when it `reads_names`
_NUMBERS = (int, float)  # the raw values the direct way takes (not a bool, a text, a list)


class Revalue:
    """The route of new values into the Model of `compilation` (see the module docstring)."""

    def __init__(self, compilation):
        self.comp = compilation
        self.orders = {}  # scope -> (its raw values, their dependency order)
        self.blocks = {b.name: b for b in compilation.built.blocks.values()}
        self.index = {name: k for k, name in enumerate(self.blocks)}
        self.read = {}  # id of a raw value -> (the value, the names it reads)
        # the dependency map: scope -> {name: {block: {its parameters whose text reads the
        # name}}} (a resource parameter reads its resource's name in scope 0); made once,
        # a block's entries made again when a change sets its parameters
        self.readers = {}
        self.registered = {}  # block -> {(scope, name)} of its entries
        for name in self.blocks:
            self._register(compilation.spec, name)
        self.settings_reads = self._settings_reads(compilation.spec)
        self.direct = {}  # path -> (the settings it was found for, (block, Param, offset) or None)

    def _register(self, spec, name):
        """The dependency map's entries of block `name` as `spec` writes it (those it had
        dropped first), by the rule `_parameters` reaches parameters with."""
        for scope, read in self.registered.pop(name, ()):
            del self.readers[scope][read][name]
        block, bspec, entries = self.blocks[name], spec.blocks[name], set()
        for param in type(block).params:
            value = bspec.params.get(param.name)
            raw = param.default if value is None else value.raw
            if param.kind == "resource":
                reads, scope = ({raw} if isinstance(raw, str) else ()), 0
            elif param.kind in _EVALUATED and value is not None and \
                    (param.kind not in _OWN or type(block).reads_names):
                reads, scope = self._reads(raw), bspec.scope
            else:
                continue
            for read in reads:
                self.readers.setdefault(scope, {}).setdefault(read, {}).setdefault(
                    name, set()).add(param.name)
                entries.add((scope, read))
        self.registered[name] = entries

    def _settings_reads(self, spec):
        """The names the simulation settings' texts read."""
        return set().union(*(self._reads(v.raw) for v in spec.simulation.values()))

    def reached(self, changed, set_blocks):
        """{block: its parameters} a change reaches, in the diagram's block order: those set
        (`set_blocks`), and those whose text reads a name of `changed` ({scope: names})."""
        found = {name: set(params) for name, params in set_blocks.items()}
        for scope, names in changed.items():
            readers = self.readers.get(scope, {})
            for read in names:
                for name, params in readers.get(read, {}).items():
                    found.setdefault(name, set()).update(params)
        return {name: found[name] for name in sorted(found, key=self.index.__getitem__)}

    def _reads(self, raw):
        """The names the raw value `raw` reads (its text parsed once)."""
        found = self.read.get(id(raw))
        if found is None or found[0] is not raw:
            found = self.read[id(raw)] = (raw, expr.names_in(raw))
        return found[1]

    def _scope(self, spec, k):
        """(its parameters in dependency order, {parameter: the names its raw value
        reads}) of scope k of `spec` (an override reads the including scope's names)."""
        scope = spec.scopes[k]
        raws = {key: (scope.overrides.get(key) or value).raw
                for key, value in scope.params.items()}
        kept = self.orders.get(k)
        if kept is None or kept[0].keys() != raws.keys() or \
                any(kept[0][key] is not raw for key, raw in raws.items()):
            kept = self.orders[k] = (raws, dependency_order(scope.params, scope.overrides)[0])
        return kept[1], {key: self._reads(raw) for key, raw in raws.items()}

    # ---- the route ---------------------------------------------------------------------
    def apply(self, model, changes, via="--set", base=None):
        """Write `changes` [(path, raw) or (path, raw, Loc)] into `model`; True when done,
        False when they change the structure (nothing written). `base`: the spec the changes
        apply to (a sweep's run: the paths an earlier run set are evaluated again from it),
        else the model's own."""
        if base is None and self._direct(model, changes, via):
            return True
        self.direct = {}  # a block's Python may read other parameters after this change
        spec = (base or model.spec).copy()
        apply_overrides(spec, changes, via=via)
        paths = changed_paths(changes) | (self.comp.dirty if base is not None else set())
        plan = self._plan(model, spec, paths)
        if plan is None:
            return False
        try:
            self._commit(model, spec, plan)
        except Structural:  # a state of another size: taken back
            return False
        if base is not None:
            self.comp.dirty = changed_paths(changes)
        for name in plan.set_blocks:  # their texts may read other names now
            self._register(spec, name)
        if plan.set_settings:
            self.settings_reads = self._settings_reads(spec)
        return True

    def _direct(self, model, changes, via):
        """The direct way (see the module docstring): True when taken, False (nothing
        written) when a change is not a number for a direct parameter or its Param refuses
        it."""
        staged = []
        for item in changes:
            if type(item) not in (tuple, list) or len(item) != 2 or \
                    type(item[0]) is not str or type(item[1]) not in _NUMBERS:
                return False
            target = self._direct_target(model, item[0])
            if target is None:
                return False
            block, param, offset = target
            try:
                staged.append((block, param.name, offset, param.convert(item[1])))
            except (ValueError, OverflowError):  # refused: the general way says why
                return False
        if not staged:
            return False
        spec = model.spec.copy()
        apply_overrides(spec, changes, via=via)
        values, P = self.comp.values, model.context.P
        for block, name, offset, value in staged:
            P[offset] = value
            block.p = _with(block.p, {name: value}, values, spec.blocks[block.name].scope)
            self._register(spec, block.name)
        self.comp.spec = model.spec = spec
        return True

    def _direct_target(self, model, path):
        """(block, Param, offset in P) of `path` when it names a direct parameter
        (rundata.direct_param) of a block whose type has no values_changed, else None;
        found once for the settings' span."""
        settings = model.settings
        kept = self.direct.get(path)
        if kept is None or kept[0] is not settings:
            parts, found = path.split("."), None
            block = self.blocks.get(parts[1]) if len(parts) == 3 else None
            # the general way calls values_changed, which may read the block's views
            if parts[0] == "blocks" and block is not None and \
                    not overrides(block, "values_changed") and \
                    parts[1] not in model.spec.subsystems and parts[1] in model.slots:
                slots = model.slots[parts[1]]
                param = direct_param(block, slots.data, parts[2], settings.start,
                                     settings.stop)
                if param is not None:
                    found = (block, param, slots.offsets()[parts[2]][0])
            kept = self.direct[path] = (settings, found)
        return kept[1]

    def _plan(self, model, spec, paths):
        """What the new spec's values change, checked, without writing anything: a
        SimpleNamespace, or None for a change of structure."""
        problems = Problems()
        set_params, set_blocks, set_settings, set_robots = {}, {}, False, False
        for path in paths:
            parts = path.split(".")
            if parts[0] == "parameters":
                set_params.setdefault(0, set()).add(parts[1])
            elif parts[0] == "simulation":
                set_settings = True
            elif parts[0] == "robots":
                set_robots = True
            elif parts[0] == "blocks" and parts[1] in spec.subsystems:
                if len(parts) != 4 or parts[2] != "parameters":  # an enable's options
                    return None
                set_params.setdefault(spec.subsystems[parts[1]].scope, set()).add(parts[3])
            elif parts[0] == "blocks" and parts[1] in self.blocks:
                set_blocks.setdefault(parts[1], set()).add(parts[2])
            elif parts[0] == "inputs" and parts[1] in self.blocks:  # an inport's value
                set_blocks.setdefault(parts[1], set()).add("value")
            else:  # a record, the diagram's name or description
                return None
        changed = self._closure(spec, set_params)
        # the parameters the robots read when they were built
        robots_read = set().union(*(used for _, _, used in self.comp.built_sections.values()))
        with expr.shared_budget():
            built = None  # the robots built for this spec, when they were evaluated again
            if set_robots or robots_read & changed.get(0, set()):
                built = dict(self.comp.built_sections)
                values, changed = self._all_values(spec, built, problems)
            else:
                values = self._scope_values(spec, set_params, changed, problems)
            problems.check()
            stage = self._blocks(model, spec, values, changed, set_blocks, problems)
            if stage is None:
                return None
            samples = _retimed(model, stage)
            if samples is None:
                return None
            settings = model.settings
            if set_settings or self.settings_reads & changed.get(0, set()):
                top = values.scopes[0] if values.scopes else {}
                settings = simulation_settings(
                    spec.simulation, lambda raw: expr.evaluate(raw, top, dotted=values.dotted),
                    problems, spec.file)
                problems.check()
                if settings.solver != model.settings.solver:
                    return None
        return SimpleNamespace(values=values, stage=stage, settings=settings, built=built,
                               samples=samples, set_blocks=set_blocks,
                               set_settings=set_settings)

    def _closure(self, spec, set_params):
        """{scope: names} that may change: those set and those reading them, within each
        scope and into the scopes it includes (names only, nothing evaluated)."""
        changed = {}
        for k, scope in enumerate(spec.scopes):
            outer = changed.get(scope.parent, set()) if scope.parent is not None else set()
            names = set(set_params.get(k, ()))
            if not names and not outer:
                continue
            order, reads = self._scope(spec, k)
            for key in order:
                if reads[key] & (outer if key in scope.overrides else names):
                    names.add(key)
            if names:
                changed[k] = names
        return changed

    def _scope_values(self, spec, set_params, changed, problems):
        """The compilation's Values with the scopes' parameters that may change evaluated
        again (a copy when there are any: the compilation's are not touched); `changed`
        narrowed to those whose value did change."""
        old = self.comp.values
        if not changed:  # blocks' own parameters set
            return old
        values = dataclasses.replace(old, scopes=list(old.scopes))
        for k, scope in enumerate(spec.scopes):
            if k not in changed:
                continue
            order, _ = self._scope(spec, k)
            parent = values.scopes[scope.parent] if scope.parent is not None else None
            names = dict(old.scopes[k])
            for key in order:
                if key in changed[k]:
                    names[key] = evaluate_parameter(scope, key, names, parent, old, problems)
            changed[k] = {key for key in changed[k] if not same_data(names[key],
                                                                     old.scopes[k][key])}
            values.scopes[k] = names
        return values

    def _all_values(self, spec, built, problems):
        """Every value evaluated again as at load (robots involved: those of `built` whose
        options are the same are not built again, new ones are added to it), and {scope:
        the names whose value changed}, the changed robots' names among scope 0's."""
        old = self.comp.values
        values = evaluate_values(spec, self.comp.lib, problems, built)
        changed = {}
        for k, names in enumerate(values.scopes):
            diff = {key for key, v in names.items()
                    if key not in old.scopes[k] or not same_data(v, old.scopes[k][key])}
            if diff:
                changed[k] = diff
        robots = {name for name, robot in values.resources.get("robots", {}).items()
                  if old.resources.get("robots", {}).get(name) is not robot}
        if robots:
            changed.setdefault(0, set()).update(robots)
        return values, changed

    def _blocks(self, model, spec, values, changed, set_blocks, problems):
        """[(block, its new parameters, their run data)] of the blocks the change reaches,
        checked; None when one of them changes structure."""
        stage = []
        for name, params in self.reached(changed, set_blocks).items():
            block, bspec = self.blocks[name], spec.blocks[name]
            new = self._parameters(block, bspec, spec, values, params,
                                   set_blocks.get(name, set()), problems)
            if new is None:
                return None
            if not new:
                continue
            slots = model.slots.get(name)
            if slots is None or not set(new) <= slots.data.values:
                return None
            if any(np.shape(v) != np.shape(getattr(block.p, k)) for k, v in new.items()
                   if k != "_names"):
                return None
            p = _with(block.p, new, values, bspec.scope)
            try:
                arrays, facts = values_of(block, slots.data, p, slots.facts)
            except ParamError as e:
                loc = bspec.params[e.param].loc if e.param in bspec.params else bspec.loc
                problems.add(loc.error(e.message, block=name, param=e.param))
                continue
            except Exception:  # noqa: BLE001 - Structural, or a fault: a compile tells which
                return None
            if not same_data(facts, slots.facts):
                return None
            stage.append((block, p, arrays))
        problems.check()
        return stage

    def _parameters(self, block, bspec, spec, values, reached, directly, problems):
        """{parameter: new value} of a block's parameters `reached` (set, `directly`, or
        reading a changed name: `_names` when only its expressions' names changed),
        evaluated and checked as at load (a resource: the diagram section's entry, a robot,
        by name)."""
        new = {}
        names = values.scopes[bspec.scope]
        for param in type(block).params:
            if param.name not in reached:
                continue
            value = bspec.params.get(param.name)
            raw, loc = (param.default, bspec.loc) if value is None else (value.raw, value.loc)
            if param.kind in _OWN and param.name not in directly:
                new["_names"] = names  # texts of its own: a function's, a chart's
                continue
            try:
                found = param_value(param, raw, names, loc, bspec, spec, values)
            except expr.Unavailable:
                continue  # reported where the name it uses failed
            except Exception as e:  # noqa: BLE001 - DiagramError: a value refused
                problems.add(e)
                continue
            if not same_data(found, getattr(block.p, param.name)):
                new[param.name] = found
        return new

    # ---- writing ---------------------------------------------------------------------------
    def _commit(self, model, spec, plan):
        """Write the plan into the model; its states, events and budget are checked after
        (the blocks told of their new values first: a chart's data are its initial states),
        and a failure there takes everything back."""
        context, comp = model.context, self.comp
        kept = (context.P.copy(), context.x0.copy(), context.xd0.copy(), context.settings,
                context.events, {b.name: b.p for b, _, _ in plan.stage})
        retimed = {}
        try:
            for block, p, arrays in plan.stage:
                write(context, model.slots[block.name], arrays)
                block.p = p
                block.values_changed()
            _retime(model, plan.samples)
            retimed = plan.samples
            retimed_settings = plan.settings is not context.settings or bool(plan.samples)
            context.settings = plan.settings
            self._states(model, plan.stage)
            self._events(model, plan.settings, spec, retimed_settings, plan.stage)
        except BaseException:
            context.P[:], context.x0[:], context.xd0[:] = kept[0], kept[1], kept[2]
            context.settings, context.events = kept[3], kept[4]
            for block, _, _ in plan.stage:
                if block.p is not kept[5][block.name]:
                    block.p = kept[5][block.name]
                    block.values_changed()
            _retime(model, {new: old for old, new in retimed.items()})
            raise
        comp.spec, comp.values, model.spec = spec, plan.values, spec
        if plan.built is not None:
            comp.built_sections = plan.built
        model.resources = plan.values.resources
        model.subsystems = {name: (sub.source, {k: plan.values.scopes[sub.scope][k]
                                                for k in spec.scopes[sub.scope].params})
                            for name, sub in spec.subsystems.items()}
        context.version += 1

    @staticmethod
    def _states(model, stage):
        """The staged blocks' initial states into x0 and xd0: Structural when their sizes
        changed."""
        context = model.context
        for block, _, _ in stage:
            cs, ds = model.state_slices[block.name]
            for state, part, target in ((block.continuous_state(), cs, context.x0),
                                        (block.discrete_state(), ds, context.xd0)):
                flat = np.zeros(0) if state is None else np.asarray(state, float).ravel()
                if flat.size != part.stop - part.start:
                    raise Structural(f"{block.name}: its state's size changed")
                target[part] = flat

    @staticmethod
    def _events(model, s, spec, new_settings, stage):
        """The time events and the run's budget, checked as at load: with new settings (or
        sample times) every block's, else those of the staged blocks (the others' are as
        they were checked); the events made again when the settings are new or a staged
        block announces some, the recording's size checked when the settings are new."""
        problems = Problems()
        blocks = model.blocks if new_settings else [block for block, _, _ in stage]
        if new_settings or any(overrides(block, "events") for block in blocks):
            model.context.events = sorted(((float(t), b) for b in model.blocks
                                           for t in b.events(s.start, s.stop)),
                                          key=lambda e: e[0])
        check_rates(s, blocks, model.context.events, problems, spec)
        if new_settings:
            check_recording(spec, s, model.record, model.sinks, problems)
        problems.check()


def _retimed(model, stage):
    """{old sample time: new} of the staged blocks' new values (rundata.sample_of); None
    when blocks that shared one would no longer, or the other way round."""
    new = {}
    for block, p, _ in stage:
        sample = sample_of(model.slots[block.name].data, p)
        if sample is not None and sample != block.sample:
            new[block.name] = sample
    if not new:
        return {}
    pairs = {}
    for block in model.blocks:
        if isinstance(block.sample, Sample):
            sample = new.get(block.name, block.sample)
            if pairs.setdefault(block.sample, sample) != sample:
                return None
    if len(set(pairs.values())) != len(pairs):
        return None
    return {old: new for old, new in pairs.items() if old != new}


def _retime(model, samples):
    """The blocks' and nodes' sample times `samples` {old: new} (nodes that inherit one
    follow it)."""
    if samples:
        for block in model.blocks:
            block.sample = samples.get(block.sample, block.sample) \
                if isinstance(block.sample, Sample) else block.sample
        for node in model.nodes:
            node.sample = samples.get(node.sample, node.sample)


def changed_paths(changes):
    """The dotted paths of overrides ("path=value" text, or (path, value[, loc]))."""
    return {item.split("=", 1)[0].strip() if isinstance(item, str) else item[0]
            for item in changes}


def _with(p, new, values, scope):
    """A block's parameters `p` with the `new` values, and the names its expressions read
    as the evaluated `values` give them for its `scope` (as blocks.py builds them)."""
    return SimpleNamespace(**{**vars(p), **new, "_names": values.scopes[scope],
                              "_dotted": values.dotted, "_functions": values.functions})
