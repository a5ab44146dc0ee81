"""Unity feedback loops for the tests: Ref -> Error.u1, Error -> the forward blocks in turn,
the last one (through an optional feedback block) -> Error.u2; and a long chain of lags."""
import control
import numpy as np


def loop(path, forward, back=None, ref=0.0, name="loop"):
    """Write the loop's diagram to `path`; `forward` lists (name, block as YAML flow text),
    `back` is one such pair or None. Returns the path."""
    blocks = [("Ref", f"{{type: constant, value: {ref}}}"), ("Error", '{type: sum, signs: "+-"}'),
              *forward, *([back] if back else [])]
    chain = ["Error"] + [n for n, _ in forward] + ([back[0]] if back else [])
    wires = ["Ref -> Error.u1"] + [f"{a} -> {b}" for a, b in zip(chain, chain[1:])]
    wires.append(f"{chain[-1]} -> Error.u2")
    path.write_text("\n".join(["blocksim: 1", f"name: {name}", "blocks:"]
                              + [f"  {n}: {text}" for n, text in blocks]
                              + ["wires:"] + [f"  - {w}" for w in wires]
                              + ["simulation: {stop: 5}", ""]))
    return path


def chain(n=200):
    """A loop of n first-order lags a_k/(s + a_k), a_k from 1 to 20 (the first 1/(s + 1)),
    times 2: L(jw) = 2 prod a_k/(jw + a_k)."""
    a = np.linspace(1, 20, n)
    A = np.diag(-a) + np.diag(a[1:], k=-1)
    B = np.zeros((n, 1))
    B[0, 0] = 1
    C = np.zeros((1, n))
    C[0, -1] = 2
    return a, control.ss(A, B, C, 0)
