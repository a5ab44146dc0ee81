"""Pass 8, records: what the simulator records, the sinks and the stop blocks.

Input: the DiagramSpec, `Built`, the drivers, the views of the layout, the problems list.
Output: (record, sinks, stops): record name -> (view, signal text) for `record:`; (block,
[input views]) for every block that records its inputs (setting its `signal_names` and
`signal_elements`); the input views of the stop blocks. The files the sinks write are
checked here too.
"""
from __future__ import annotations

import dataclasses

from ...errors import DiagramError
from ...util import memory
from ...language.buses import Bundle
from ...language.diagram import NAME_RE, bool_hint, parse_endpoint, resolve_signal, suggest
from ..recorder import planned_rows
from ..results import RUN_FILES
from .layout import indexed
from .model import RESERVED_RECORDS
from .shapes import index_error
from .wires import driver_text, endpoint


def records(spec, built, drivers, views, problems):
    record = {}
    for key, value in spec.record.items():
        if not isinstance(key, str) or not NAME_RE.match(key) or key in RESERVED_RECORDS:
            problems.add(value.loc.error(f"invalid record name {key!r}: use an identifier "
                                         "other than " + ", ".join(RESERVED_RECORDS),
                                         hint=bool_hint(key)))
            continue
        try:
            signal = resolve_signal(spec, parse_endpoint(value.raw, value.loc))
            if isinstance(signal, Bundle):  # a bus: each element as KEY.ELEMENT
                for name, ep in signal.leaves(key):
                    view = endpoint_view(spec, built, views, ep, value.loc)
                    port = endpoint(spec, built.ports, ep, output=True)
                    record[name] = (view, dataclasses.replace(ep, port=port).text())
            else:
                record[key] = (endpoint_view(spec, built, views, signal, value.loc), value.raw)
        except DiagramError as e:
            problems.add(e)
    sinks, stops = [], []
    for name, block in built.blocks.items():
        ins = built.ports[name][0]
        if block.records_inputs:
            sinks.append((block, [block.u[i] for i in range(len(ins))]))
            block.signal_names = tuple(driver_text(drivers, name, port) for port in ins)
            block.signal_elements = tuple(_elements(built, drivers.get((name, port)),
                                                    block.u[i].size)
                                          for i, port in enumerate(ins))
        if block.stops:
            stops.append(block.u[0])
    _check_files(spec, (block for block, _ in sinks), problems)
    return record, sinks, stops


def signals(spec, built, views, entries, problems):
    """name -> (view, signal text as written) of `entries` (name -> Endpoint: the diagram's
    own outputs)."""
    out = {}
    for name, ep in entries.items():
        try:
            signal = resolve_signal(spec, ep)
            if isinstance(signal, Bundle):
                raise ep.loc.error(f"output '{name}' is a bus: a diagram's outputs are "
                                   "signals", hint="make an output per element")
            out[name] = (endpoint_view(spec, built, views, signal, ep.loc), ep.text())
        except DiagramError as e:
            problems.add(e)
    return out


def check_recording(spec, settings, record, sinks, problems):
    """Refuse a run whose recorded rows cannot fit in memory: the rows the settings plan
    (`recorder.planned_rows`: the output grid's, else at least the fixed step's or
    max_step's), each holding t, every `record:` element and every sink's input element,
    twice: the recording (which grows to the planned rows, not past them) and the results
    copied out of it. A 1000 x 1000 signal over 10^5 steps (1.6 TB) was a MemoryError once
    the run had started. The error is at the entry recording the most (a record entry or a
    sink)."""
    rows = planned_rows(settings)
    # a bus recorded as KEY.ELEMENT counts at its entry KEY
    shares = [(view.size, spec.record[name.partition(".")[0]].loc, None)
              for name, (view, _) in record.items()]
    shares += [(sum(v.size for v in views), spec.blocks[block.name].loc, block.name)
               for block, views in sinks]
    values = 1 + sum(n for n, _, _ in shares)
    needed = 2 * rows * values * 8
    free = memory.available()
    if needed <= free:
        return
    _, loc, block = max(shares, key=lambda share: share[0])
    problems.add(loc.error(
        f"recording {values:,} values a row over the {rows:,} rows planned needs about "
        f"{memory.size_text(needed)} (the recording and the results copied out of it, "
        f"{memory.size_text(needed / 2)} each), more than the {memory.size_text(free)} of "
        "memory available", block=block,
        hint="record fewer or smaller signals (an element: x[0]), a longer output_interval "
             "or step, or a shorter run"))


def _elements(built, driver, size):
    """The names of the elements a wire carries: its driver port's `elements`, indexed as
    the wire indexes the port; () when the port names none (or not `size` of them)."""
    if driver is None:
        return ()
    src, port, index, _ = driver
    names = built.ports[src][1][port].elements
    if index is not None and names:
        names = (names[index],) if isinstance(index, int) else names[slice(*index)]
    return tuple(names) if len(names) == size else ()


def _check_files(spec, sinks, problems):
    """No two blocks write the same file, and none writes one of the run's own files
    (compared without case: some file systems do not tell them apart)."""
    owners = {name.lower(): None for name in RUN_FILES}
    for block in sinks:
        for file in block.files():
            key = file.lower()
            if key not in owners:
                owners[key] = block.name
                continue
            loc = spec.blocks[block.name].loc
            if owners[key] is None:
                problems.add(loc.error(
                    f"writes '{file}', a file the run itself writes",
                    block=block.name, hint="the run's files: " + ", ".join(RUN_FILES)))
            else:
                problems.add(loc.error(
                    f"writes '{file}', which block '{owners[key]}' writes too",
                    block=block.name, hint="give each block its own file name"))


def endpoint_view(spec, built, views, ep, loc):
    """The view of a block's output (an endpoint resolved through subsystems and buses)."""
    if ep.block not in built.ports:
        raise loc.error(f"unknown block '{ep.block}'{suggest(ep.block, built.ports)}")
    port = endpoint(spec, built.ports, ep, output=True)
    view = views[(ep.block, port)]
    if ep.index is None:
        return view
    error = index_error(view.shape, ep.index, f"{ep.block}.{port}")
    if error is not None:
        raise loc.error(error)
    return indexed(view, ep.index)
