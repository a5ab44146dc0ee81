"""How well-conditioned the matrices a block inverts are, watched during a run, so that a run
that fails after a nearly singular inversion says so (`Block.notes`).

Near a singular matrix its inverse grows without bound, and so does everything computed
from it: a resolved-rate or visual-servo loop through a robot's singularity commands huge
joint rates, and the run fails much later for what looks like another reason (a camera
that ends up facing away from its target). The condition number of each inversion is
cheap to know once the inverse is computed: κ₁(A) = ‖A‖₁·‖A⁻¹‖₁ (maximum absolute column
sums; within a factor n of the 2-norm κ₂ = σ_max/σ_min, which a pseudo-inverse gets from its
SVD).
"""
from __future__ import annotations

import functools
import math

import numpy as np

ILL_CONDITIONED = 1e3  # a condition number above this: the inverse amplifies 1000-fold


class ConditionWatch:
    """The inversions of one block during a run: the earliest whose condition number
    exceeded ILL_CONDITIONED (time, value) and the worst (time, value), over every
    evaluation (a rejected step's too, which may come before earlier times are evaluated).
    `see` costs two comparisons; `reset` starts a new run."""
    __slots__ = ("what", "first", "worst", "worst_t", "now", "_abs", "_sums")

    def __init__(self, what):
        self.what = what  # what is inverted, for the note: "the Jacobian", "inv()"
        self.now = 0.0  # the time of the evaluation under way (set by the block)
        self._abs = self._sums = np.zeros(0)
        self.reset()

    def reset(self):
        self.first, self.worst, self.worst_t = None, 0.0, None

    def see(self, t, cond):
        if cond > self.worst:
            self.worst, self.worst_t = cond, t
        if cond > ILL_CONDITIONED and (self.first is None or t < self.first[0]):
            self.first = (t, cond)

    # compiled code keeps a watch in 5 numbers of its block's workspace (W_watch, declared
    # `d.work("watch", WORK)`): [worst, its time, first time, first condition number, 1 when
    # there is a first]; C_SEE updates them as `see` does
    WORK = (0.0, np.nan, np.nan, 0.0, 0.0)
    C_SEE = ("if (cond > W_watch[0]) { W_watch[0] = cond; W_watch[1] = t; } "
             f"if (cond > {ILL_CONDITIONED!r} && (W_watch[4] == 0.0 || t < W_watch[2])) "
             "{ W_watch[2] = t; W_watch[3] = cond; W_watch[4] = 1.0; }")

    def load(self, work):
        """Take the watch of a compiled run from its 5 numbers (WORK's layout)."""
        worst, worst_t, first_t, first_cond, have = (float(v) for v in work)
        self.worst, self.worst_t = worst, None if math.isnan(worst_t) else worst_t
        self.first = (first_t, first_cond) if have else None

    def inverse(self, t, A, Ainv):
        """Note the inversion Ainv = A⁻¹ of a square A (n, n), by its κ₁."""
        self.see(t, self._norm1(A) * self._norm1(Ainv))

    def _norm1(self, A):
        if self._abs.shape != A.shape:  # scratch for the hot path, sized once
            self._abs, self._sums = np.empty(A.shape), np.empty(A.shape[-1])
        np.abs(A, out=self._abs)
        return np.sum(self._abs, axis=0, out=self._sums).max()

    def notes(self):
        """The note for a failed run, or () when every inversion was well-conditioned."""
        if self.first is None:
            return ()
        t, cond = self.first
        return (f"{self.what} was nearly singular from t = {t:.6g} (condition number "
                f"{cond:.3g}; the worst, {self.worst:.3g}, at t = {self.worst_t:.6g}): its "
                f"inverse, and what is computed from it, grows without bound there, which may "
                f"explain the failure",)


def pinv_cond(A):
    """(A⁺, κ₂(A)): the Moore–Penrose pseudo-inverse by SVD, singular values below 1e-15 ×
    the largest treated as zero (numpy.linalg.pinv's rule), and σ_max/σ_min (inf when A is
    rank-deficient)."""
    u, s, vt = np.linalg.svd(A, full_matrices=False)
    keep = s > 1e-15 * s[..., :1]
    inverse = np.divide(1.0, s, out=np.zeros_like(s), where=keep)
    with np.errstate(divide="ignore"):
        cond = s[..., 0] / s[..., -1]
    return np.swapaxes(vt, -1, -2) @ (inverse[..., None] * np.swapaxes(u, -1, -2)), cond


def watched_functions(watch):
    """`inv` and `pinv` of the expression language that tell `watch` each inversion's
    condition number (the largest of a stack's), at the time `watch.now`."""
    @functools.wraps(np.linalg.inv)
    def inv(A):
        Ainv = np.linalg.inv(A)
        sums = np.abs(A).sum(axis=-2).max(axis=-1) * np.abs(Ainv).sum(axis=-2).max(axis=-1)
        watch.see(watch.now, float(np.max(sums)))
        return Ainv

    @functools.wraps(np.linalg.pinv)
    def pinv(A):
        Ainv, cond = pinv_cond(np.asarray(A, dtype=np.float64))
        watch.see(watch.now, float(np.max(cond)))
        return Ainv

    return inv, pinv
