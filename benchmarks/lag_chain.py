"""A chain of first-order lags as a diagram: a unit step through n lags y' = u - 2y, each a
sum, an integrator and a gain in a feedback loop (3n + 1 blocks, n loops that only the
integrators' x0 shape). Issue 30's load benchmark; benchmarks/load.py times it.

    python benchmarks/lag_chain.py 666 > lag2000.yaml
"""
import sys


def lag_chain(n, mode=None, source="{type: step, time: 0}"):
    """The diagram's YAML; `mode` a simulation.mode to write into it (e.g. accelerated),
    `source` the block the chain starts from (tests/engine/test_loop_shapes.py feeds it a
    vector)."""
    lines = ["blocksim: 1", "name: lagchain", "blocks:", f"  Src: {source}"]
    wires = []
    prev = "Src.y"
    for i in range(n):
        lines += [f"  S{i}: {{type: sum, signs: '+-'}}", f"  I{i}: {{type: integrator}}",
                  f"  G{i}: {{type: gain, K: 2.0}}"]
        wires += [f"  - {prev} -> S{i}.u1", f"  - G{i} -> S{i}.u2", f"  - S{i} -> I{i}",
                  f"  - I{i} -> G{i}"]
        prev = f"I{i}.y"
    lines.append("wires:")
    lines += wires
    extra = f", mode: {mode}" if mode else ""
    lines.append(f"simulation: {{stop: 1, solver: rk4, step: 0.01{extra}}}")
    lines.append(f"record: {{y: I{n - 1}.y}}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(lag_chain(int(sys.argv[1])))
