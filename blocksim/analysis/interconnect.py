"""The diagram's linear model from its blocks' (Parts, all in one time domain) and its wires.

With s the parts' states, Y their outputs and U their inputs (flattened, port order),
w the perturbations and z the measurements:

    ds = A s + B U,   Y = C s + D U               (block-diagonal, the parts')
    U = S (Y + F w) + E w                         (the wires; a loop opening empties its rows)
    z = P (Y + F w) or the rows of U it measures  (an opened input: the signal before the cut)

F adds a perturbation to an output wherever it goes, E to one input port. The wires are
acyclic through direct feedthrough (the compiler refuses algebraic loops), so I - D S is
invertible and Y = (I - D S)^-1 (C s + D (S F + E) w).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from ..engine.compiler.layout import indexed


class _Index:
    """Consecutive places for port signals: key (block, port) -> (start, shape), in the order
    of `rank` (the keys are collected first, then `place`d)."""

    def __init__(self):
        self.shapes, self.at, self.size = {}, {}, 0

    def add(self, key, shape):
        self.shapes.setdefault(key, tuple(shape))

    def place(self, rank=None):
        for key in sorted(self.shapes, key=rank) if rank else self.shapes:
            shape = self.shapes[key]
            self.at[key] = (self.size, shape)
            self.size += int(np.prod(shape, dtype=int))

    def rows(self, key, index=None):
        """The places of a port signal's elements (of its element or slice `index`)."""
        start, shape = self.at[key]
        grid = np.arange(start, start + int(np.prod(shape, dtype=int))).reshape(shape)
        return np.atleast_1d(indexed(grid, index)).ravel()


def interconnect(model, parts, inputs, outputs, opened):
    """(A, B, C, D) from the perturbations `inputs` to the measurements `outputs` (Signals),
    the wires into the `opened` Signals' ports cut; states in the order of `parts`."""
    return Wiring(model, parts, inputs, outputs, opened).join(parts)


class Wiring:
    """Everything of the interconnection but the parts' matrices: the places of the parts'
    outputs and inputs, S, the perturbations and the measurements (see the module
    docstring). Built once for parts of given blocks and state counts, it joins the matrices
    of such parts at any point (`join`): a run's state Jacobian is joined again and again."""

    def __init__(self, model, parts, inputs, outputs, opened):
        ys, us = _Index(), _Index()
        in_names = {b.name: list(model.ports[b.name][0]) for b in model.blocks}
        owner = {b.name: b for b in model.blocks}
        for part in parts:
            b = part.block
            for port, y in zip(model.ports[b.name][1], b.y):
                ys.add((b.name, port), y.shape)
            for port, u in zip(in_names[b.name], b.u):
                us.add((b.name, port), np.shape(u) if u is not None else (0,))
        for signal in (*inputs, *outputs):
            for end in signal.ends:
                if signal.output:
                    ys.add(end, model.outputs[end].shape)
                else:
                    u = owner[end[0]].u[in_names[end[0]].index(end[1])]
                    us.add(end, np.shape(u))
                    driver = model.drivers.get(end)
                    if driver is not None:
                        ys.add(driver[:2], model.outputs[driver[:2]].shape)
        # outputs in dataflow order (states first): D S is then strictly lower triangular
        order = {(n.block.name, port): k for k, n in enumerate(model.nodes) for port in n.ports}
        ys.place(rank=lambda key: order.get(key, -1))
        us.place()
        cut = {end for signal in opened for end in signal.ends}
        S_full = np.zeros((us.size, ys.size))
        for key in us.at:
            driver = model.drivers.get(key)
            if driver is not None and driver[:2] in ys.at:
                S_full[us.rows(key), ys.rows(driver[:2], driver[2])] = 1.0
        S = S_full.copy()
        for key in cut & set(us.at):
            S[us.rows(key)] = 0.0
        self.S = S
        self.F, E = _perturbations(inputs, ys, us)
        self.G = S @ self.F + E
        self.n, self.ny, self.nu = sum(len(p.names) for p in parts), ys.size, us.size
        self.places = []  # per part: (its states, its outputs' rows, its inputs' rows)
        k = 0
        for part in parts:
            b, m = part.block, len(part.names)
            yr = np.concatenate([ys.rows((b.name, p)) for p in model.ports[b.name][1]]
                                or [[]]).astype(int)
            ur = np.concatenate([us.rows((b.name, p)) for p in in_names[b.name]]
                                or [[]]).astype(int)
            self.places.append((np.arange(k, k + m), yr, ur))
            k += m
        self.P_y, self.P_w = _measurements(outputs, ys, us, S, S_full, self.F, self.G, cut)

    def join(self, parts):
        """(A, B, C, D) of the diagram from `parts` (the blocks and state counts the wiring
        was built for, in its order)."""
        n, ny, nu, S = self.n, self.ny, self.nu, self.S
        A, B = np.zeros((n, n)), np.zeros((n, nu))
        C, D = np.zeros((ny, n)), np.zeros((ny, nu))
        for part, (xs, yr, ur) in zip(parts, self.places):
            A[np.ix_(xs, xs)] = part.A
            B[np.ix_(xs, ur)] = part.B
            C[np.ix_(yr, xs)] = part.C
            D[np.ix_(yr, ur)] = part.D
        Y_s, Y_w = _outputs(D @ S, C, D @ self.G)
        return (A + B @ S @ Y_s, B @ S @ Y_w + B @ self.G, self.P_y @ Y_s,
                self.P_y @ Y_w + self.P_w)


def _outputs(DS, C, DG):
    """Y = (I - D S)^-1 (C s + D G w) as (Y_s, Y_w): forward substitution in dataflow order,
    which keeps the zeros of the structure exact (a general solve smears rounding over
    them); a general solve only if a block declared feedthrough it does not have."""
    closed = np.eye(DS.shape[0]) - DS
    if np.any(np.triu(DS)):
        return np.linalg.solve(closed, C), np.linalg.solve(closed, DG)
    solve = scipy.linalg.solve_triangular
    return (solve(closed, C, lower=True, unit_diagonal=True),
            solve(closed, DG, lower=True, unit_diagonal=True))


def _perturbations(inputs, ys, us):
    """F (outputs x w) and E (inputs x w): where each perturbation element is added."""
    k = sum(s.size for s in inputs)
    F, E = np.zeros((ys.size, k)), np.zeros((us.size, k))
    col = 0
    for signal in inputs:
        cols = np.arange(col, col + signal.size)
        for end in signal.ends:
            index = ys if signal.output else us
            target = F if signal.output else E
            target[index.rows(end, signal.index), cols] = 1.0
        col += signal.size
    return F, E


def _measurements(outputs, ys, us, S, S_full, F, G, cut):
    """z = P_y Y + P_w w: an output reads Y + F w, an input port U (before a cut: the
    signal arriving at it)."""
    rows_y, rows_w = [], []
    for signal in outputs:
        end = signal.ends[0]
        if signal.output:
            r = ys.rows(end, signal.index)
            rows_y.append(np.eye(ys.size)[r])
            rows_w.append(F[r])
        else:
            r = us.rows(end, signal.index)
            wire = S_full if end in cut else S
            rows_y.append(wire[r])
            rows_w.append(wire[r] @ F if end in cut else G[r])
    k = F.shape[1]
    return (np.vstack(rows_y) if rows_y else np.zeros((0, ys.size)),
            np.vstack(rows_w) if rows_w else np.zeros((0, k)))
