"""What blocks logged during a run (block.RunHandle.log), as results and meta.json.

A logging block (a state chart) notes two integers at an instant: the state it entered and
the transition that entered it (-1: entered when the chart started), indices into its
`journal_names()`. results.npz gets `chart_t` (the times), `chart_state` (the state, an
index into meta.json's `chart_states`, "Chart.State.Sub") and `chart_transition` (an index
into `chart_transitions`, "Chart: From -> To", or -1); meta.json's `charts` counts, per
block, the entries of each state and the transitions taken.
"""
from __future__ import annotations

import numpy as np


def logging_blocks(model):
    """[(index, block)] of the model's blocks that log (`uses_run`), found once per
    structure."""
    kept = model.__dict__.get("_logging")
    if kept is None or kept[0] is not model.blocks:
        kept = model.__dict__["_logging"] = (
            model.blocks, [(k, b) for k, b in enumerate(model.blocks) if b.uses_run])
    return kept[1]


def journal_results(model, journal):
    """({name: array} for results.npz, {key: value} for meta.json) of a run's journal
    (rows t, block index, a, b); both empty for a model without logging blocks."""
    logging = logging_blocks(model)
    if not logging:
        return {}, {}
    journal = np.asarray(journal, dtype=float).reshape(-1, 4)
    states, transitions, first, charts = [], [], {}, {}
    for k, block in logging:
        names, labels = block.journal_names()
        first[k] = (len(states), len(transitions))
        states += [f"{block.name}.{n}" for n in names]
        transitions += [f"{block.name}: {label}" for label in labels]
        rows = journal[journal[:, 1] == k]
        entered = np.bincount(rows[:, 2].astype(np.int64), minlength=len(names))
        taken = _taken(rows, len(labels))
        charts[block.name] = {"entries": {n: int(c) for n, c in zip(names, entered)},
                              "transitions": {label: int(c) for label, c in zip(labels, taken)}}
    offsets = np.array([first.get(int(k), (0, 0)) for k in journal[:, 1]],
                       dtype=np.int64).reshape(-1, 2)
    a, b = journal[:, 2].astype(np.int64), journal[:, 3].astype(np.int64)
    arrays = {"chart_t": journal[:, 0].copy(), "chart_state": a + offsets[:, 0],
              "chart_transition": np.where(b >= 0, b + offsets[:, 1], -1)}
    return arrays, {"chart_states": states, "chart_transitions": transitions, "charts": charts}


def _taken(rows, n):
    """How many times each transition was taken: rows entering states by one transition at
    one instant are one taking (unless they enter the same state again: a loop round)."""
    counts = np.zeros(n, dtype=np.int64)
    last = None
    for t, _, state, k in rows:
        if k < 0:
            last = None
            continue
        key = (t, k)
        if last is None or last[0] != key or state in last[1]:
            counts[int(k)] += 1
            last = (key, {state})
        else:
            last[1].add(state)
    return counts
