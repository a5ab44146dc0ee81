"""The transport delay: y(t) = u(t - delay), from a history of u kept from the solver's steps."""
import bisect
import math

import numpy as np

from blocksim.accel.lowering import Lowering, fits_stack
from blocksim.block import Jacobian, exact_time
from blocksim.params import Param

from .continuous import tf_realisation
from .discrete import ShapedByX0


MAX_DENOMINATOR = 10**9  # block.exact_time's largest denominator
HISTORY_WORK, HISTORY_SLOTS = 15, 7  # the C History's workspace scalars and memory slots
HISTORY_M = 9  # its HIST_M: samples per interpolation (a table of HIST_M x size)


class History:
    """u(t) for past t, from samples the simulator takes after every accepted step.

    A piece [t0, tk] of a step contributes u at k equally spaced times t1..tk after its start,
    k the degree of the solver's dense output on that step (3 for a cubic Hermite, 4 for rk45,
    7 for dop853, the order for bdf and lsoda); with u at t0 (the previous sample) they give
    the polynomial of degree k through k + 1 points, which reproduces u along the solver's
    dense output (exactly when u is linear in the state), not a straight line between
    accepted steps; the simulator cuts a step into as many pieces as it takes to reproduce u
    to the solver's tolerance (an input that depends on time by itself). Pieces are kept in Newton's divided-difference form,
    u = c0 + (t - t0)(c1 + (t - t1)(c2 + ...)), whose rounding errors are multiplied by powers
    of the step size: fine for steps of any length (a step too short for distinct sample
    times gets the straight line). The pieces fall into segments separated by breakpoints
    (times at which u jumps, at events): a lookup never mixes two segments, so a jump stays
    a jump.
    """

    GROW = 256
    DEGREE = 8  # the highest degree kept (LSODA's Adams orders above are rare)

    def __init__(self, size):
        self.size = size
        self.clear()

    def clear(self):
        n, m = self.GROW, self.DEGREE + 1
        self.nodes = np.zeros((n, m))  # t0, t1, ... of each piece (t0 first, end last used)
        self.end = np.zeros(n)  # the end of each piece
        self.coef = np.zeros((n, m, self.size))  # c0, c1, ... (unused ones 0)
        self.count = 0  # pieces stored
        self.base = 0  # absolute index of piece 0 (older pieces were dropped)
        self.seg_first = []  # absolute index of each segment's first piece
        self.seg_start = []  # the value each segment starts with
        self.seg_time = []  # the time each segment starts at
        self.seg_base = 0  # absolute index of segment 0 (older segments were dropped)
        self.last_t = None
        self.last_u = None
        self.step_start = None  # the start of the step being added (lookups reach back there)
        self._pending = []  # samples (t, u) of the step being added
        self._drop = 0  # pieces at the start that no lookup needs any more
        self.degree = np.zeros(n, int)  # of each piece
        self._weights = np.ones(m)
        self._cache = None  # the piece of the last lookup: (segment, from, to, views)

    # ---- building ------------------------------------------------------------------------
    def start_segment(self, t, u):
        self.seg_first.append(self.base + self.count)
        self.seg_start.append(np.array(u, dtype=float).reshape(self.size))
        self.seg_time.append(t)
        self.last_t, self.last_u = t, self.seg_start[-1]
        self.step_start = t
        self._pending = []

    def add_sample(self, t, u, end):
        """A sample of the current piece; `end`: the last one, at the piece's end."""
        self._pending.append((t, np.array(u, dtype=float).reshape(self.size)))
        if end:
            self._add_piece([(self.last_t, self.last_u)] + self._pending[-self.DEGREE:])
            self.last_t, self.last_u = self._pending[-1]
            self._pending = []

    def _add_piece(self, points):
        if self.count == self.end.size:
            self._grow()
        k = self.count
        times = np.array([p[0] for p in points])
        table = np.array([p[1] for p in points])  # divided differences, column by column
        nodes, coef = self.nodes[k], self.coef[k]
        nodes[:] = times[0]
        coef[:] = 0.0
        if np.all(np.diff(times) > 0):
            nodes[:len(times)] = times
            coef[0] = table[0]
            for j in range(1, len(times)):
                table = (table[1:] - table[:-1]) / (times[j:] - times[:-j])[:, None]
                coef[j] = table[0]
            self.degree[k] = len(times) - 1
        else:  # a step too short for distinct sample times: the straight line (a step of
            # no length at all, between a jump and its echo one float later: the value)
            coef[0] = table[0]
            span = times[-1] - times[0]
            if span > 0:
                coef[1] = (table[-1] - table[0]) / span
            self.degree[k] = 1 if span > 0 else 0
        self.end[k] = times[-1]
        self.count = k + 1

    def forget_before(self, t):
        """Lookups from now on are at times >= t: the pieces ending before t may go (when the
        arrays are full), and so may the segments followed by one starting before t (at
        once, when they are many: a fast sampled input makes a segment per sample)."""
        self._drop = int(np.searchsorted(self.end[:self.count], t))
        done = bisect.bisect_left(self.seg_time, t) - 1
        if done > max(64, len(self.seg_time) // 2):
            for segments in (self.seg_first, self.seg_start, self.seg_time):
                del segments[:done]
            self.seg_base += done

    def _grow(self):
        """Room for more pieces: drop the ones no lookup needs any more when they are at least
        half of them, else double the arrays."""
        keep = self._drop
        self._cache = None  # the arrays move
        if keep >= self.count // 2:
            for a in (self.nodes, self.end, self.coef, self.degree):
                a[:self.count - keep] = a[keep:self.count]
            self.count -= keep
            self.base += keep
            self._drop = 0
            return
        n = 2 * self.end.size
        self.nodes = np.concatenate([self.nodes, np.zeros_like(self.nodes)])[:n]
        self.end = np.concatenate([self.end, np.zeros_like(self.end)])[:n]
        self.coef = np.concatenate([self.coef, np.zeros_like(self.coef)])[:n]
        self.degree = np.concatenate([self.degree, np.zeros_like(self.degree)])[:n]

    # ---- lookup --------------------------------------------------------------------------
    def value(self, s, tau, out):
        """u(tau) within segment s into `out` (flat, size): the piece holding tau, the first
        or last piece of the segment extrapolated when tau lies outside it. Lookups move
        forward in time: the piece found last is tried first."""
        cache = self._cache
        if cache is None or cache[0] != s or not cache[1] <= tau <= cache[2]:
            cache = self._find(s, tau)
            if cache is None:  # no step yet in this segment: its starting value
                out[:] = self.seg_start[s - self.seg_base]
                return
        _, _, _, nodes, coef, w = cache
        if w is None:  # a scalar signal: Horner's rule on floats, c0 + (tau - t0)(c1 + ...)
            v = coef[-1]
            for j in range(len(nodes) - 1, -1, -1):
                v = v * (tau - nodes[j]) + coef[j]
            out[0] = v
            return
        # Newton form: sum_j c_j prod_{i<j} (tau - t_i)
        np.subtract(tau, nodes, out=w[1:])
        np.cumprod(w, out=w)
        np.dot(w, coef, out=out)

    def _find(self, s, tau):
        i = s - self.seg_base
        first = max(self.seg_first[i] - self.base, 0)
        last = (self.seg_first[i + 1] - self.base if i + 1 < len(self.seg_first)
                else self.count) - 1
        if last < first:
            return None
        k = min(int(np.searchsorted(self.end[first:last + 1], tau)) + first, last)
        d = self.degree[k]
        lo = self.nodes[k, 0] if k > first else -np.inf  # (pieces are only ever appended)
        hi = self.end[k]
        nodes, coef = self.nodes[k, :d], self.coef[k, :d + 1]
        if self.size == 1:
            self._cache = (s, lo, hi, nodes.tolist(), coef[:, 0].tolist(), None)
        else:
            self._cache = (s, lo, hi, nodes, coef, self._weights[:d + 1])
        return self._cache


class TransportDelay(ShapedByX0):
    """y(t) = u(t - delay) from t = start + delay on, x0 before: a pure time delay.

    The past of u comes from the solver's dense output: after every accepted step the
    simulator hands the block u at as many equally spaced points of each piece of the step
    as the degree of the dense output, in as many pieces as it takes for the polynomial
    through those and the piece's start value to reproduce u to the solver's tolerance
    (rtol, atol), also where u depends on time by itself (a source through long steps). The breakpoints of u -- a jump at a source switch, a sample hit or a
    zero-crossing event -- reappear exactly `delay` later: the block announces each as a
    time event the solver lands on, and the output jumps there. The same holds for the jump
    from x0 to u(start) at start + delay.
    Input: u, any shape. Output: y, u's shape (x0, scalar or that shape), no direct
    feedthrough, so a loop through a transport delay is not algebraic (a delay differential
    equation). delay > 0 (s), at least the spacing of floats at the run's largest |t|
    (3.6e-15 s at t = 20). A solver step longer than the delay needs u beyond what is
    known and extrapolates the last piece: keep max_step (or a fixed step) at most `delay`.
    """

    type = "transport_delay"
    time_dependent = True
    keeps_history = True
    params = (
        Param("delay", "scalar", doc="the delay (s), > 0", positive=True),
        Param("x0", "value", 0.0, "output for t < start + delay"),
    )

    def ports(self):
        return self._x0_ports(feedthrough=())

    def durations(self):
        return {"delay": self.p.delay}

    # run data: the delay, x0 broadcast to the signal and the exact delay n/d * 2^e as
    # n // 2^32, n % 2^32, d, e (exact_parts); compiled code keeps the History's scalars and
    # the samples of the piece being added in its workspace (runtime/rt_history.c)
    def declare(self, d):
        d.param("delay")
        d.param("x0", self._shape)
        d.derived("exact", (4,))
        size = math.prod(self._shape)
        d.work("history", np.r_[History.GROW,
                                np.zeros(HISTORY_WORK - 1 + 9 * size + History.DEGREE)])

    def derive(self, p):
        return {"exact": exact_parts(p.delay)}

    def discrete_state(self):
        return np.array([-1.0])  # the segment of the history the output reads; -1: x0

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        size = int(np.prod(self._shape, dtype=int))
        self._history = History(size)
        self._x0 = self.v.x0.reshape(size)
        self._y = y[0].reshape(size, copy=False)

    def later(self, t):
        """t + delay, rounded once from exact fractions: a jump echoed onto a sample hit or a
        source switch lands on the same float as that (0.2 + 0.1 is the hit at 0.3). Always
        after t: a delay below t's resolution (1e-15 at t = 16; refused when the diagram is
        compiled) would round back onto t, an echo at the instant being handled, which is
        never delivered; it would come one float later instead."""
        return max(float(exact_time(t) + exact_time(self.p.delay)), math.nextafter(t, math.inf))

    def events(self, start, stop):
        first = self.later(start)
        return (first,) if first <= stop else ()

    def initialize(self, t):
        self._history.clear()

    def event(self, t):
        self.xd[0] += 1.0  # a delayed breakpoint (or the first one, at start + delay)

    def remember(self, t, kind):
        """u at time t: a sample inside a piece of an accepted step (kind "step"), at the
        end of a piece ("piece") or of the step ("end"), or the value after an event at t
        ("event"). Returns the times at which the solver must land: t + delay when u jumped
        at the event. Lookups from now on reach back to the step's start minus the delay
        (the grid rows inside the step), so older pieces may go."""
        h = self._history
        u = self.u[0].reshape(-1)
        if h.last_t is None:  # the start
            h.start_segment(t, u)
        elif kind == "event":
            h.forget_before(t - self.p.delay)
            h.step_start = t
            if not np.array_equal(u, h.last_u):
                h.start_segment(t, u)
                return (self.later(t),)
        else:
            h.add_sample(t, u, kind != "step")
            if kind == "end":
                h.forget_before(h.step_start - self.p.delay)
                h.step_start = t
        return ()

    def output(self, t):
        s = int(self.xd[0])
        if s < 0:
            self._y[:] = self._x0
            return
        self._history.value(s, t - self.p.delay, self._y)

    # ---- compiled form: the History in C (runtime/rt_history.c), its arrays in memory
    # slots. Outputs read the history and move its cache, as History.value does.
    def lower(self, c):
        size = self._y.size
        fits_stack(HISTORY_M * size, "the history's interpolation table")
        history = f"RtHistory H = {{rt, mem0_, {size}, W_history}};"
        later = ("RtExact delay = {(i128)P_exact[0] * ((i128)1 << 32) + (i128)P_exact[1], "
                 "(long long)P_exact[2], (int)P_exact[3]}; SCHEDULE(PYMAX("
                 "rt_exact_sum(rt_exact_time(t), delay), nextafter(t, INFINITY)));")
        same = c.loop(size, "if (in_u[i] != hist_last_u(&H)[i]) same = 0;")
        x0 = c.loop(size, "out_y[i] = P_x0[i];")
        return Lowering({
            "initialize": (f"_Static_assert(HIST_WORK == {HISTORY_WORK} && HIST_SLOTS == "
                           f"{HISTORY_SLOTS} && HIST_M == {HISTORY_M}, "
                           "\"blocks/delay.py's sizes\"); "
                           f"{history} rt_hist_clear(&H);"),
            "event": "xd[0] += 1.0;",
            "output": (f"int s = (int)xd[0]; if (s < 0) {{ {x0} }} "
                       f"else {{ {history} rt_hist_value(&H, s, t - P_delay[0], out_y); }}"),
            "remember": (
                f"{history}\n"
                "if (W_history[H_HAS_LAST] == 0) rt_hist_start(&H, t, in_u);\n"
                "else if (kind == RT_REMEMBER_EVENT) {\n"
                "    rt_hist_forget(&H, t - P_delay[0]); W_history[H_STEP_START] = t; "
                f"int same = 1; {same}\n"
                f"    if (!same) {{ rt_hist_start(&H, t, in_u); {later} }}\n"
                "} else {\n"
                "    rt_hist_sample(&H, t, in_u, kind != RT_REMEMBER_STEP);\n"
                "    if (kind == RT_REMEMBER_END) { rt_hist_forget(&H, W_history[H_STEP_START] "
                "- P_delay[0]); W_history[H_STEP_START] = t; }\n}")},
            memory=HISTORY_SLOTS)

    def jacobian(self, pade=None):
        """exp(-delay*s) per element by its Padé approximation of order `pade` (python-control's
        `pade`): states of the linear model alone, `pade[k]`; order 0 is a gain of 1. Realised
        in p = delay*s and balanced (a diagonal similarity in powers of 2, so exact), then
        scaled to s (A, B divided by the delay): in s, or unbalanced, the coefficients span
        so many decades that rounding moved the poles of a long delay (order 18 of 1e4 s: by
        24 %) and the loop's zeros (order 10 of 0.2 s: by 75 %)."""
        import control
        import scipy.linalg
        num, den = control.pade(1.0, pade)
        a, b, c, d = tf_realisation(np.asarray(num, float), np.asarray(den, float))
        if pade:
            _, (scale, _) = scipy.linalg.matrix_balance(a, permute=False, separate=True)
            a, b, c = a * scale / scale[:, None], b / scale[:, None], c * scale
        a, b = a / self.p.delay, b / self.p.delay
        eye = np.eye(self._y.size)
        A, B, C, D = (np.kron(eye, m) for m in (a, b, c, d))
        return Jacobian(A, B, C, D, labels=tuple(f"pade[{k}]" for k in range(A.shape[0])))


def exact_parts(x):
    """exact_time(x) = n/d * 2^e as the four numbers compiled code reads exactly from doubles
    (runtime/rt_exact.c RtExact): n // 2^32, n % 2^32, d <= 1e9, e."""
    exact = exact_time(x)
    n, d, e = exact.numerator, exact.denominator, 0
    if d > MAX_DENOMINATOR:  # the float's binary value: d a power of 2
        d, e = 1, 1 - d.bit_length()
    return n >> 32, n & 0xFFFFFFFF, d, e
