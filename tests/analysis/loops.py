"""Unity feedback loops for the tests: Ref -> Error.u1, Error -> the forward blocks in turn,
the last one (through an optional feedback block) -> Error.u2."""


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
