"""Small chart diagrams for the tests: a chart fed by a step `go` (0, then 1 at t = 1) and a
ramp `x` (slope 1 from t = 0), whose actions write codes into its output `trace` in the
order they run (`mark(c)` appends code c)."""
import numpy as np
import yaml

import blocksim

TRACE = 16


def mark(code):
    """An action appending `code` to the trace."""
    return f"trace[n] = {code}; n = n + 1"


def chart_diagram(chart, stop=2.0, extra=None, record=None, simulation=None):
    """The diagram text of `chart` (a dict: the chart block's keys) in the harness."""
    block = {"type": "chart", "inputs": {"go": 1, "x": 1},
             "outputs": {"trace": TRACE}, "data": {"n": 0}, **chart}
    doc = {
        "blocksim": 1, "name": "chart_case",
        "blocks": {"Go": {"type": "step", "time": 1.0}, "X": {"type": "ramp", "slope": 1.0},
                   "C": block, **(extra or {})},
        "wires": ["Go -> C.go", "X -> C.x"],
        "simulation": {"stop": stop, "solver": "rk45", "rtol": 1e-9, "atol": 1e-12,
                       "mode": "normal", **(simulation or {})},
        "record": {"trace": "C.trace", "leaf": "C.leaf", **(record or {})},
    }
    return yaml.safe_dump(doc, sort_keys=False)


def run_chart(tmp_path, chart, name="case.yaml", **kw):
    path = tmp_path / name
    path.write_text(chart_diagram(chart, **kw))
    return blocksim.run(path, out=tmp_path / "run")


def trace(result):
    """The codes the chart's actions wrote, in order."""
    final = result["trace"][-1]
    n = int(np.count_nonzero(final))
    return [int(c) for c in final[:n]]


def entries(tmp_path, result):
    """(t, state path, transition label or None) of every state the chart entered."""
    with np.load(tmp_path / "run" / "results.npz") as z:
        t, s, k = z["chart_t"], z["chart_state"], z["chart_transition"]
    states, labels = result.meta["chart_states"], result.meta["chart_transitions"]
    return [(float(ti), states[si].split(".", 1)[1], labels[ki].split(": ", 1)[1]
             if ki >= 0 else None) for ti, si, ki in zip(t, s, k)]
