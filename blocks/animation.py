"""Shared helpers for the animations drawn after a run: frame times and resampling.

Animation time is simulation time: recordings (taken at solver steps or on a grid) are
resampled at a fixed frame rate, with a cap on the number of frames for long runs.
"""
import math

import numpy as np

# At most this many frames: longer runs are drawn at a lower rate (see frame_times).
MAX_FRAMES = 300


def frame_times(t, fps, max_frames=MAX_FRAMES):
    """Frame times for a recording whose times are `t` (increasing): start, start + 1/rate,
    start + 2/rate, ... up to the end, and the end time itself as the last frame when it is
    not on that grid. rate = fps / k with the smallest integer k >= 1 that gives at most
    `max_frames` frames, so a long run keeps a bounded drawing time and its frames stay on the
    grid of the requested rate. Returns (times, rate). max_frames >= 2 (start and end)."""
    start, end = float(t[0]), float(t[-1])
    k = max(1, math.ceil((end - start) * fps / max_frames))
    while True:
        rate = fps / k
        steps = math.floor((end - start) * rate + 1e-6)  # an end within 1e-6 frame is on the grid
        times = np.minimum(start + np.arange(steps + 1) / rate, end)
        if end - times[-1] > 1e-6 / rate:
            times = np.append(times, end)
        if len(times) <= max_frames:
            return times, rate
        k += 1


def resample(t, q, times):
    """Joint angles q (N, n) recorded at times t (N,), linearly interpolated per joint at
    `times` (m,) -> (m, n)."""
    q = np.asarray(q, dtype=float).reshape(len(t), -1)
    return np.column_stack([np.interp(times, t, column) for column in q.T])
