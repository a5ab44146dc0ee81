"""Cost of the planar n-R functions against n, like seed 001's Table 2.

    python benchmarks/planar.py

µs per call (median of repeats) of kinmodel, dynmodel, forward_dynamics and the three
indices for n = 2, 3, 4, 5, 10, 20, 50, and the growth exponent p of cost ~ n^p fitted
between n = 10 and n = 50 (where fixed call overhead no longer dominates). The paper's
recursions make kinematics O(n) to O(n^2) and its dynamics O(n^2).
"""
import math
import statistics
import sys
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from blocks.planar import dynmodel, forward_dynamics, idxcn, idxgrav, idxman, kinmodel  # noqa: E402

SIZES = (2, 3, 4, 5, 10, 20, 50)


def per_call(fn, budget=0.05, repeat=5):
    number = max(1, int(budget / max(timeit.timeit(fn, number=1), 1e-7)))
    return statistics.median(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def cases(n, rng):
    q, qd, tau = rng.uniform(-1, 1, (3, n))
    L, Lc, m, ml, I, B = (np.full(n, 1.0), np.full(n, 0.4), np.full(n, 1.0), np.full(n, 0.5),
                          np.full(n, 0.1), np.full(n, 0.05))
    return {
        "kinmodel": lambda: kinmodel(q, qd, L),
        "dynmodel": lambda: dynmodel(q, qd, L, Lc, m, ml, I, B),
        "forward_dynamics": lambda: forward_dynamics(q, qd, tau, L, Lc, m, ml, I, B),
        "idxman": lambda: idxman(q, L),
        "idxcn": lambda: idxcn(q, L),
        "idxgrav": lambda: idxgrav(q, L, Lc, m, ml),
    }


def main():
    rng = np.random.default_rng(0)
    table = {}
    for n in SIZES:
        for name, fn in cases(n, rng).items():
            fn()  # compile / warm
            table.setdefault(name, {})[n] = per_call(fn)
    print("µs per call" + "".join(f"{f'n={n}':>10}" for n in SIZES) + f"{'growth n^p':>12}")
    for name, row in table.items():
        p = math.log(row[50] / row[10]) / math.log(50 / 10)
        print(f"{name:<17}" + "".join(f"{row[n]:>10.2f}" for n in SIZES) + f"{p:>12.2f}")


if __name__ == "__main__":
    main()
