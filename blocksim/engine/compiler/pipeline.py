"""The passes in order: a DiagramSpec compiled into a Model; new values written into it.

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
wires' problems with the blocks', so a typo in a block and in a wire show at once). New
values go into a compiled Model by `Compilation.change`: the values route (revalue.py), or a
compile of the new spec.
"""
from __future__ import annotations

from ...errors import Problems
from ...params import ParamError
from ...language import expr
from ...language.diagram import apply_overrides
from ...language.library import Library
from ...util.gcpause import without_gc
from ..context import lay_out_run_data
from .blocks import build_blocks, plugin_fault
from .conditions import attach, decisions_first, gate_nodes
from .contract import check_contracts
from .inports import shape_inports
from .layout import lay_out
from .model import Model
from .revalue import Revalue, changed_paths
from .records import check_recording, records, signals
from .schedule import classify, order_nodes
from .settings import check_rates, simulation_settings
from .shapes import propagate_shapes
from .values import evaluate_values
from .wires import resolve_wires


class Compilation:
    """One diagram's passes and their outputs; `change` writes new values into its Model."""

    def __init__(self, spec, library):
        self.spec = spec
        self.lib = library
        # robots built from the same raw options are the same data: kept between the values
        # written into this compilation's Model
        self.built_sections = {}
        self.revalue = None  # the route of new values (revalue.py), made on first use
        self.dirty = set()  # the paths whose values differ from the base of the last change

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
            self.layout = lay_out(self.built, self.out_shapes, self.drivers, self.nodes,
                                  self.refused)
            self.problems.check()
            classify(self.nodes, self.built, self.drivers, self.node_of, self.layout.slices)
            self.gates = gate_nodes(self.spec, self.built, self.nodes, self.layout.slices,
                                    self.problems)
            self.problems.check()
            return self.model(settings)

    def refused(self, name, e, stage):
        """Block `name`'s failure `stage` ("in derive()"; a ParamError: that parameter's) as
        a problem; a built-in type's failure is raised (its bug)."""
        bspec = self.spec.blocks[name]
        if isinstance(e, ParamError):
            loc = bspec.params[e.param].loc if e.param in bspec.params else bspec.loc
            self.problems.add(loc.error(e.message, block=name, param=e.param))
        else:
            block = self.built.blocks[name]
            self.problems.add(plugin_fault(self.lib, bspec, type(block), e, stage))

    def run_data(self):
        """The blocks' declared run data laid out, their values in a Context."""
        self.slots, self.context = lay_out_run_data(
            self.built.blocks, lambda name, e, method: self.refused(name, e, f"in {method}()"))
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
        context = self.context
        context.x0, context.xd0, context.settings, context.events = \
            lay.x0, lay.xd0, settings, events
        model = Model(
            name=spec.name, description=spec.description, file=spec.file,
            blocks=list(blocks.values()), nodes=self.nodes,
            signals=lay.signals, xbuf=lay.xbuf, dxbuf=lay.dxbuf,
            xdbuf=lay.xdbuf, outputs=lay.views, record=record, sinks=sinks, stops=stops,
            state_slices=lay.slices,
            hybrid=lay.hybrid, zbuf=lay.zbuf, zdirs=lay.zdirs, rates=lay.rates,
            dubuf=lay.dubuf, spec=spec, context=context, slots=self.slots, compilation=self,
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

    def set_values(self, model, changes, via="--set", base=None):
        """Write `changes` (overrides) into `model`, this compilation's Model, when they
        change only values (compiler/revalue.py: nothing rebuilt): True, else False (nothing
        written). `base`: the spec the changes apply to (a sweep's), else the model's.
        DiagramError(s) for a value refused, the model unchanged."""
        if self.revalue is None:
            self.revalue = Revalue(self)
        return self.revalue.apply(model, changes, via, base)

    def change(self, model, changes, via="--set", base=None):
        """`set_values`, or when the changes change the structure, the diagram compiled anew in
        the model's place. True when only values changed."""
        if self.set_values(model, changes, via, base):
            return True
        spec = (base or model.spec).copy()
        apply_overrides(spec, changes, via=via)
        again = Compilation(spec, self.lib)
        again.built_sections = self.built_sections  # its robots when their options are the same
        model.__dict__.update(again.compile().__dict__)
        if base is not None:
            again.dirty = changed_paths(changes)
        return False


@without_gc
def compile_diagram(spec, library=None):
    """Check and lay out a DiagramSpec; raises DiagramError(s) listing every problem found."""
    return Compilation(spec, library or Library()).compile()
