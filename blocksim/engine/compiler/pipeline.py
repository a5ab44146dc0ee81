"""The passes in order: a DiagramSpec compiled into a Model, and re-parameterised.

    values    robots and parameters                     (values.py)
    blocks    blocks built, ports declared              (blocks.py)
    inports   the diagram's own inputs shaped           (inports.py)
    wires     one driver per input                      (wires.py)
    schedule  dataflow order, algebraic loops           (schedule.py)
    shapes    output shapes along the wires             (shapes.py)
    contract  declarations that fit together            (contract.py)
    layout    buffers, views, blocks bound              (layout.py)
    classify  constant / discrete / continuous groups   (schedule.py)
    gates     conditional subsystems' gates and groups  (conditions.py)
    records   records, sinks, stops                     (records.py)

Each pass collects all of its problems; they are raised together at the points below (the
wires' problems with the blocks', so a typo in a block and in a wire show at once).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ...errors import Problems
from ...params import ParamError
from ...language import expr
from ...language.library import Library
from ...util.gcpause import without_gc
from ..context import lay_out_run_data
from .blocks import build_blocks, plugin_fault
from .conditions import attach, decisions_first, gate_nodes
from .contract import check_contracts
from .inports import shape_inports
from .layout import (bind_blocks, initial_states, joined, lay_out, lay_out_indicators,
                     lay_out_rates)
from .model import Model, run_config
from .records import check_recording, records, signals
from .schedule import classify, order_nodes
from .settings import check_rates, simulation_settings
from .shapes import propagate_shapes
from .values import evaluate_values
from .wires import resolve_wires


class Compilation:
    """One diagram's passes and their outputs; `reparameterise` binds a spec that differs
    only in values into the same layout."""

    def __init__(self, spec, library):
        self.spec = spec
        self.lib = library
        # robots built from the same raw options are the same data: kept between the specs
        # re-parameterised into this layout
        self.built_sections = {}

    @property
    def resources(self):
        """The built sections of the last spec: section -> {name: object} (robots)."""
        return self.values.resources

    def values_and_blocks(self, check=True):
        """Passes 1 and 2 on `self.spec` and its settings, each one's problems reported
        together (unless `check` is false: the caller goes on to the wires, whose problems
        are reported with the blocks'); returns the Settings."""
        self.values = evaluate_values(self.spec, self.lib, self.problems, self.built_sections)
        top = self.values.scopes[0] if self.values.scopes else {}
        settings = simulation_settings(
            self.spec.simulation,
            lambda raw: expr.evaluate(raw, top, dotted=self.values.dotted),
            self.problems, self.spec.file)
        self.built = shape_inports(self.spec, self.values,
                                   build_blocks(self.spec, self.lib, self.values, self.problems),
                                   self.problems)
        if check:
            self.problems.check()
        return settings

    def compile(self):
        """Every pass, on `self.spec`: the Model."""
        with expr.shared_budget():  # the diagram's values are bounded together
            self.problems = Problems()
            settings = self.values_and_blocks(check=False)
            self.drivers = resolve_wires(self.spec, self.built.ports, self.problems)
            self.problems.check()
            # algebraic loops first: a feedthrough cycle also stalls shape inference
            self.nodes, self.node_of = order_nodes(self.built, self.drivers, self.problems)
            self.nodes = decisions_first(self.nodes, self.drivers, self.node_of)
            self.out_shapes = propagate_shapes(self.spec, self.built, self.drivers,
                                               self.problems)
            self.problems.check()
            check_contracts(self.spec, self.built, self.out_shapes, self.problems)
            self.problems.check()
            self.run_data()
            self.layout = lay_out(self.built, self.out_shapes, self.drivers, self.nodes)
            classify(self.nodes, self.built, self.drivers, self.node_of, self.layout.slices)
            self.gates = gate_nodes(self.spec, self.built, self.nodes, self.layout.slices,
                                    self.problems)
            self.problems.check()
            return self.model(settings)

    def run_data(self):
        """The blocks' declared run data laid out, their values in a Context."""
        def refused(name, e, method):
            bspec = self.spec.blocks[name]
            if isinstance(e, ParamError):
                loc = bspec.params[e.param].loc if e.param in bspec.params else bspec.loc
                self.problems.add(loc.error(e.message, block=name, param=e.param))
            else:
                block = self.built.blocks[name]
                self.problems.add(plugin_fault(self.lib, bspec, type(block), e,
                                               f"in {method}()"))

        self.slots, self.context = lay_out_run_data(self.built.blocks, refused)
        self.problems.check()

    def model(self, settings):
        record, sinks, stops = records(self.spec, self.built, self.drivers, self.layout.views,
                                       self.problems)
        outports = signals(self.spec, self.built, self.layout.views, self.spec.outputs,
                           self.problems)
        self.problems.check()
        spec, lay, blocks = self.spec, self.layout, self.built.blocks
        # by time only (stable: blocks switching at the same time keep declaration order)
        events = sorted(((float(t), b) for b in blocks.values()
                         for t in b.events(settings.start, settings.stop)), key=lambda e: e[0])
        check_rates(settings, blocks.values(), events, self.problems, spec)
        self.problems.check()
        check_recording(spec, settings, record, sinks, self.problems)
        self.problems.check()
        model = Model(
            name=spec.name, description=spec.description, file=spec.file,
            settings=settings, blocks=list(blocks.values()), nodes=self.nodes,
            signals=lay.signals, x0=lay.x0, xd0=lay.xd0, xbuf=lay.xbuf, dxbuf=lay.dxbuf,
            xdbuf=lay.xdbuf, outputs=lay.views, record=record, sinks=sinks, stops=stops,
            events=events, state_slices=lay.slices, config=run_config(spec, settings),
            hybrid=lay.hybrid, zbuf=lay.zbuf, zdirs=lay.zdirs, rates=lay.rates,
            dubuf=lay.dubuf, spec=spec, context=self.context, slots=self.slots,
            inports={name: blocks[name] for name in spec.inputs if name in blocks},
            outports=outports,
            resources=self.values.resources,
            ports=self.built.ports, drivers=self.drivers,
            subsystems={name: (sub.source, {k: self.values.scopes[sub.scope][k]
                                            for k in spec.scopes[sub.scope].params})
                        for name, sub in spec.subsystems.items()},
            gates=self.gates,
        )
        attach(model)
        return model

    def reparameterise(self, spec):
        """A Model of `spec` in this compilation's layout (its buffers, views and execution
        order), or None when `spec` differs in structure from the spec compiled last: other
        wires or blocks, or a block whose type, ports (shapes, feedthrough, state aliases),
        inferred output shapes, state sizes, sample time or flags differ. Values are
        evaluated and checked as by `compile` (DiagramErrors are raised the same way); the
        robots of the `robots:` section are rebuilt only when their options changed."""
        if spec.wires is not self.spec.wires and spec.wires != self.spec.wires:
            return None
        if spec.blocks.keys() != self.spec.blocks.keys():
            return None
        kept = dict(self.__dict__)
        try:
            with expr.shared_budget():
                model = self._reparameterise(spec)
        except BaseException:
            self.__dict__.update(kept)
            raise
        if model is None:
            self.__dict__.update(kept)
        return model

    def _reparameterise(self, spec):
        old = self.built
        self.spec, self.problems = spec, Problems()
        settings = self.values_and_blocks()
        if any(_block_structure(block, self.built.ports[name])
               != _block_structure(old.blocks[name], old.ports[name])
               for name, block in self.built.blocks.items()):
            return None
        # every block's `infer`, with the inputs' (unchanged) shapes
        out_shapes = propagate_shapes(spec, self.built, self.drivers, self.problems)
        self.problems.check()
        if out_shapes != self.out_shapes:
            return None
        lay = self.layout
        xc, xd = initial_states(self.built.blocks)
        for name, c, d in zip(self.built.blocks, xc, xd):
            cs, ds = lay.slices[name]
            if c.size != cs.stop - cs.start or d.size != ds.stop - ds.start:
                return None
        self.run_data()
        # the buffers as a fresh layout has them
        lay = self.layout = dataclasses.replace(lay, x0=joined(xc), xd0=joined(xd))
        lay.signals[:] = 0.0
        lay.xbuf[:] = lay.x0
        lay.dxbuf[:] = 0.0
        lay.xdbuf[:] = lay.xd0
        self.nodes = [dataclasses.replace(n, block=self.built.blocks[n.block.name])
                      for n in self.nodes]
        self.node_of = {(n.block.name, p): n for n in self.nodes for p in n.ports}
        zdirs = lay.zdirs
        lay_out_indicators(lay, self.built.blocks, self.nodes)  # the new blocks' indicators
        if not np.array_equal(lay.zdirs, zdirs):
            return None
        lay_out_rates(lay, self.built, self.drivers)
        bind_blocks(lay, self.built, self.drivers)
        return self.model(settings)


def _block_structure(block, ports):
    """What a block contributes to the layout and schedule; equal structures may share one."""
    ins, outs = ports
    return (type(block), tuple(ins.values()), tuple(outs.values()), block.sample,
            block.time_dependent, block.stops, block.records_inputs, tuple(block.rates))


@without_gc
def compile_diagram(spec, library=None):
    """Check and lay out a DiagramSpec; raises DiagramError(s) listing every problem found."""
    return Compilation(spec, library or Library()).compile()


class ModelCache:
    """Compile once, then re-parameterise: a Model for each spec of a batch of runs.

    Runs of a sweep mostly change values (a gain, the stop time, a perturbed robot), not
    structure. `model(spec)` compiles the first spec fully and keeps the compilation (wires,
    execution order, buffers and views). For a later spec it re-evaluates only what values
    affect (robots whose options changed, parameters, settings, blocks) and binds the new
    blocks into the kept layout, when every block declares the same structure (see
    `Compilation.reparameterise`); otherwise it compiles the spec fully and keeps that one.
    Consecutive models share their buffers: simulate one at a time, in one thread.
    """

    def __init__(self, library=None):
        self.library = library or Library()
        self.compiler = None
        self.compiles = 0
        self.reuses = 0

    def model(self, spec):
        """A Model for `spec` (a DiagramSpec); raises DiagramError(s) as compile_diagram."""
        if self.compiler is not None:
            model = self.compiler.reparameterise(spec)
            if model is not None:
                self.reuses += 1
                return model
        compilation = Compilation(spec, self.library)
        model = compilation.compile()
        self.compiler = compilation
        self.compiles += 1
        return model
