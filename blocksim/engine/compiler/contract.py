"""Pass 5b, contract: what a block declares must fit together before it is laid out.

Built-in blocks keep these rules by construction; a plugin may not, and a broken rule would
otherwise surface as a traceback from deep inside the layout (numpy: "cannot reshape array
of size 2 into shape ()"). Each broken rule is reported with the block's FILE:LINE, the port
and the rule, as in docs/custom-blocks.md:

- an output declared `state=True` is the block's whole continuous state (`dstate=True`: its
  discrete state), so that state has exactly as many elements as the output's shape;
  `state=slice(...)` selects that many elements of it;
- the inputs named in `rates` are inputs of the block, and a block with rates declares
  indicators (the rates are read by `indicator` and `crossing`).
"""
from __future__ import annotations

import numpy as np

_DOCS = "docs/custom-blocks.md, 'The contract a block keeps'"


def check_contracts(spec, built, out_shapes, problems):
    for name, block in built.blocks.items():
        ins, outs = built.ports[name]
        loc = spec.blocks[name].loc
        states = {"state": (_size(block.continuous_state()), "continuous_state()"),
                  "dstate": (_size(block.discrete_state()), "discrete_state()")}
        for port in outs.values():
            for kind in ("state", "dstate"):
                alias = getattr(port, kind)
                if alias is None:
                    continue
                size, method = states[kind]
                problem = _alias_problem(kind, alias, size, method,
                                         out_shapes[(name, port.name)])
                if problem:
                    problems.add(loc.error(problem, block=name, port=port.name, hint=_DOCS))
        rates = tuple(getattr(block, "rates", ()))
        unknown = [r for r in rates if r not in ins]
        if unknown:
            problems.add(loc.error(
                f"rates names {', '.join(map(repr, unknown))}, not an input of the block "
                f"(inputs: {', '.join(ins) or 'none'})", block=name, hint=_DOCS))
        elif rates and block.zero_crossings() is None:
            problems.add(loc.error(
                "the block declares rates but no zero_crossings(): rates are read by its "
                "indicators", block=name, hint=_DOCS))


def _size(state):
    return 0 if state is None else int(np.asarray(state).size)


def _alias_problem(kind, alias, size, method, shape):
    """Why an output aliasing a state cannot be laid out, or None."""
    need = int(np.prod(shape, dtype=int))
    if alias is True:
        if size != need:
            return (f"the output is declared {kind}=True, so the block's {method} must have "
                    f"{need} element(s), its shape {shape}; it has {size}")
        return None
    if not isinstance(alias, slice):
        return f"{kind}= must be True or a slice of the state, got {alias!r}"
    got = len(range(size)[alias])
    if got != need:
        return (f"the output is declared {kind}={alias!r}, which selects {got} of the "
                f"{size} element(s) of the block's {method}; its shape {shape} needs {need}")
    return None
