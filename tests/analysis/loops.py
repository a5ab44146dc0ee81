"""Models for the tests: unity feedback loops (Ref -> Error.u1, Error -> the forward blocks in
turn, the last one, through an optional feedback block, -> Error.u2), a long chain of lags,
and a cart-pole whose dynamics are one function block."""
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


# a cart (M = 1 kg) with a pole (a point mass m = 0.1 kg at l = 0.5 m; th = 0 upright) pushed by
# F, its accelerations in one function block and its states in four integrators. About the
# upright rest, by hand: x'' = (F - m g th)/M = F - 0.981 th and
# th'' = ((M + m) g th - F)/(M l) = 21.582 th - 2 F.
CARTPOLE = """
blocksim: 1
name: cartpole
parameters: {M: 1.0, m: 0.1, l: 0.5, g: 9.81}
blocks:
  F: {type: constant, value: 0}
  Dyn: {type: function, inputs: [f, th, thd], expr: "[(f + m*sin(th)*(l*thd**2 - g*cos(th)))/(M + m*sin(th)**2), (g*sin(th)*(M + m) - cos(th)*(f + m*l*thd**2*sin(th)))/(l*(M + m*sin(th)**2))]"}
  Xdd: {type: function, inputs: [a], expr: "a[0]"}
  Thdd: {type: function, inputs: [a], expr: "a[1]"}
  Xd: {type: integrator}
  X: {type: integrator}
  Thd: {type: integrator}
  Th: {type: integrator}
wires: [F -> Dyn.f, Th -> Dyn.th, Thd -> Dyn.thd, Dyn -> Xdd, Dyn -> Thdd, Xdd -> Xd, Xd -> X,
        Thdd -> Thd, Thd -> Th]
simulation: {stop: 1}
"""
