"""Every run's uniform draws at once, bit for bit those of its own generator.

Run i of a sweep draws from `numpy.random.default_rng(SeedSequence(seed, spawn_key=(i,)))`
(spec.py): made one by one, that is some 16 us a run, 16 s for a million. When every
`random:` path is `uniform(a, b)` (one 64-bit output each, in the order written) the same
numbers come from numpy's own algorithms vectorised over the runs:
- SeedSequence: the seed's words (padded to the pool of 4 when a spawn key follows) are
  hashed into the pool, the same for every run; the spawn key i is then mixed into each
  pool word; `generate_state(4, uint64)` hashes the pool out again
  (numpy/random/bit_generator.pyx: hashmix, mix, generate_state);
- PCG64 (XSL-RR 128/64) seeded with those words as pcg64_set_seed does (state from words
  0-1, increment from 2-3, high word first), stepped before each output
  (numpy/random/src/pcg64);
- Generator.uniform: low + (high - low) * ((output >> 11) * 2**-53).
`uniform_draws` gives None for anything else (the caller draws run by run).
"""
from __future__ import annotations

import numpy as np

INIT_A, MULT_A, INIT_B, MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
MIX_L, MIX_R = 0xCA01F9DD, 0x4973F715
POOL = 4
_MULT = (0x2360ED051FC65DA4, 0x4385DF649FCCF645)  # PCG's 128-bit multiplier (high, low)
_M32 = 0xFFFFFFFF


def _words(n):
    """A non-negative integer as numpy coerces it: 32-bit words, least significant first."""
    out = []
    while True:
        out.append(n & _M32)
        n >>= 32
        if not n:
            return out


# the 32-bit arithmetic of SeedSequence, on Python ints or uint64 arrays alike
def _hashmix(value, const):
    """(the hashed value, the next hash constant)."""
    value = (value ^ const) & _M32
    const = (const * MULT_A) & _M32
    value = (value * const) & _M32
    return value ^ (value >> 16), const


def _mix(x, y):
    r = (MIX_L * x - MIX_R * y) & _M32
    return r ^ (r >> 16)


def _states(seed, runs):
    """generate_state(4, uint64) of SeedSequence(seed, spawn_key=(i,)) for every run i in
    `runs` (a uint64 array of values below 2**32): four uint64 arrays."""
    entropy = _words(seed)
    entropy += [0] * (POOL - len(entropy))  # the pool's size, a spawn key following
    pool, const = [], INIT_A
    for word in entropy[:POOL]:
        value, const = _hashmix(word, const)
        pool.append(value)
    for src in range(POOL):  # the same for every run: Python ints
        for dst in range(POOL):
            if src != dst:
                value, const = _hashmix(pool[src], const)
                pool[dst] = _mix(pool[dst], value)
    for word in [*entropy[POOL:], runs]:  # then the rest of the seed and the spawn key
        for dst in range(POOL):
            value, const = _hashmix(word, const)
            pool[dst] = _mix(pool[dst], value)
    const, out = INIT_B, []
    for k in range(2 * POOL):  # 8 words of 32 bits, cycling the pool
        value = (pool[k % POOL] ^ const) & _M32
        const = (const * MULT_B) & _M32
        value = (value * const) & _M32
        out.append(value ^ (value >> 16))
    return [out[2 * j] | (out[2 * j + 1] << 32) for j in range(POOL)]


def _mul_lo(a, b):
    """(a * b) mod 2**64 and its high 64 bits, of uint64 arrays."""
    mask = np.uint64(_M32)
    s32 = np.uint64(32)
    a0, a1, b0, b1 = a & mask, a >> s32, b & mask, b >> s32
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    middle = (p00 >> s32) + (p01 & mask) + (p10 & mask)
    high = p11 + (p01 >> s32) + (p10 >> s32) + (middle >> s32)
    return a * b, high


def _step(hi, lo, inc_hi, inc_lo):
    """state * multiplier + increment, mod 2**128."""
    m_hi, m_lo = np.uint64(_MULT[0]), np.uint64(_MULT[1])
    low, carry_hi = _mul_lo(lo, np.broadcast_to(m_lo, lo.shape))
    high = carry_hi + lo * m_hi + hi * m_lo
    new_lo = low + inc_lo
    return high + inc_hi + (new_lo < low).astype(np.uint64), new_lo


def uniform_draws(seed, dists, runs):
    """{path: the draw of each run of `runs` (an array of run indices)} for `dists` [(path,
    Distribution)] when all are uniform and the seed an integer, else None (see the module
    docstring)."""
    runs = np.asarray(runs, dtype=np.int64)
    if not isinstance(seed, int) or seed < 0 or (len(runs) and runs.max() >= 2**32) or \
            any(d.name != "uniform" for _, d in dists):
        return None
    with np.errstate(over="ignore"):
        s0, s1, s2, s3 = _states(seed, runs.astype(np.uint64))
        # pcg64_set_seed: increment (words 2, 3) << 1 | 1; state 0 stepped, plus the state
        # (words 0, 1), stepped again
        inc_hi = (s2 << np.uint64(1)) | (s3 >> np.uint64(63))
        inc_lo = (s3 << np.uint64(1)) | np.uint64(1)
        hi, lo = inc_hi, inc_lo  # state 0 stepped once
        lo2 = lo + s1
        hi, lo = hi + s0 + (lo2 < lo).astype(np.uint64), lo2
        hi, lo = _step(hi, lo, inc_hi, inc_lo)
        out = {}
        for path, d in dists:
            hi, lo = _step(hi, lo, inc_hi, inc_lo)
            x = hi ^ lo
            rot = hi >> np.uint64(58)
            word = (x >> rot) | (x << ((np.uint64(64) - rot) & np.uint64(63)))
            u = (word >> np.uint64(11)).astype(float) * (1.0 / 9007199254740992.0)
            low, high = d.args
            out[path] = low + (high - low) * u
    return out
