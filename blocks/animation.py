"""Shared helpers for the animations drawn after a run: frame times, resampling, and the
GIF / MP4 writers (plot_robot, the camera view, planar_plot).

Animation time is simulation time: recordings (taken at solver steps or on a grid) are
resampled at a fixed frame rate, with a cap on the number of frames for long runs.
"""
import contextlib
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np

from blocksim.util.atomic import atomic_path

# At most this many frames: longer runs are drawn at a lower rate (see frame_times).
MAX_FRAMES = 300
# Animations are at least this many pixels on their long side, to be legible.
MIN_SIDE = 640


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


def write_animation(run, base, frames, times, rate, who):
    """The frames at `times` (an iterable of (H, W, 3) uint8) into `<base>.gif` (what the run
    report shows), and in the same pass into `<base>.mp4` when ffmpeg is on the PATH (else one
    line in run.messages says the MP4 was skipped); the drawing's progress goes to
    run.progress frame by frame. Returns the last frame."""
    frames = _reporting(frames, len(times), run.progress)
    ffmpeg = shutil.which("ffmpeg")
    if not ffmpeg:
        run.messages.append(f"{who}: MP4 skipped (ffmpeg is not installed); the animation is "
                            f"in {Path(base).name}.gif")
        return write_gif(f"{base}.gif", frames, times, rate)
    with _mp4(ffmpeg, f"{base}.mp4", rate) as pipe:
        return write_gif(f"{base}.gif", pipe.passing(frames), times, rate)


def _reporting(frames, count, progress):
    """The frames, with progress(k / count) told after frame k (when progress is given)."""
    for k, frame in enumerate(frames, 1):
        yield frame
        if progress is not None:
            progress(k / count)


def write_gif(path, frames, times, rate):
    """Write the frames as a looping GIF, each shown until the next frame's time (the last for
    1/rate). One global palette for all frames (see _Palette): unchanged pixels keep their
    index, so each frame stores only what moved, and no frame carries its own colour table.
    Returns the last frame."""
    from PIL import Image

    images = []
    for frame in frames:
        if not images:
            palette = _Palette(frame)
        image = Image.frombytes("P", frame.shape[1::-1], palette.indices(frame).tobytes())
        image.putpalette(palette.rgb)
        images.append(image)
    durations = np.append(np.diff(times), 1 / rate) * 1000  # ms
    with atomic_path(path) as tmp:
        images[0].save(tmp, save_all=True, append_images=images[1:], loop=0,
                       duration=durations.tolist(), palette=palette.rgb, optimize=True)
    return frame


class _Palette:
    """The GIF palette: the first frame's 255 most frequent colours (background, panes, the
    drawing's colours), kept exactly; any other colour (anti-aliased edges) maps to the nearest
    of them, found once and then cached. Index 255 stays free: the GIF writer uses it for
    "unchanged" pixels."""

    def __init__(self, first):
        values, counts = np.unique(_codes(first), return_counts=True)
        self._codes = values[np.argsort(-counts, kind="stable")[:255]]
        self._colours = _rgb(self._codes)
        self.rgb = self._colours.astype(np.uint8).tobytes()
        self._lookup = np.full(1 << 24, 255, dtype=np.uint8)  # colour code -> index, 255: unknown
        self._lookup[self._codes] = np.arange(len(self._codes))

    def indices(self, frame):
        """Palette indices (H, W) uint8 of an RGB frame (H, W, 3)."""
        codes = _codes(frame)
        found = self._lookup[codes]
        unknown = found == 255
        if unknown.any():
            new = np.unique(codes[unknown])
            distance = ((_rgb(new)[:, None, :] - self._colours[None, :, :]) ** 2).sum(axis=2)
            self._lookup[new] = distance.argmin(axis=1)
            found = self._lookup[codes]
        return found


def _codes(frame):
    """RGB (..., 3) uint8 -> one int per colour, 0xRRGGBB."""
    frame = frame.astype(np.int32)
    return (frame[..., 0] << 16) | (frame[..., 1] << 8) | frame[..., 2]


def _rgb(codes):
    """0xRRGGBB codes (k,) -> colours (k, 3) int."""
    return np.stack([(codes >> shift) & 255 for shift in (16, 8, 0)], axis=1)


@contextlib.contextmanager
def _mp4(ffmpeg, path, rate):
    """A _FramePipe to ffmpeg writing `path` atomically: the file appears when the block ends
    without an error; otherwise ffmpeg is stopped and nothing is left."""
    with atomic_path(path) as tmp:
        pipe = _FramePipe(ffmpeg, tmp, rate)
        try:
            yield pipe
        except BaseException:
            pipe.kill()
            raise
        pipe.close()


class _FramePipe:
    """Frames to ffmpeg as raw RGB at a constant rate, encoded as yuv420p (which common
    players read; frame sides must be even). ffmpeg starts at the first frame."""

    def __init__(self, ffmpeg, path, rate):
        self._command = [ffmpeg, "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt",
                         "rgb24", "-s", None, "-r", f"{rate:g}", "-i", "-", "-pix_fmt",
                         "yuv420p", str(path)]
        self._proc = None

    def passing(self, frames):
        """The frames, each also sent to ffmpeg."""
        for frame in frames:
            if self._proc is None:
                height, width, _ = frame.shape
                self._command[self._command.index(None)] = f"{width}x{height}"
                self._proc = subprocess.Popen(self._command, stdin=subprocess.PIPE,
                                              stderr=subprocess.PIPE)
            self._proc.stdin.write(frame.tobytes())
            yield frame

    def close(self):
        if self._proc is not None:
            _, err = self._proc.communicate()
            if self._proc.returncode:
                raise RuntimeError(f"ffmpeg failed: {err.decode(errors='replace').strip()}")

    def kill(self):
        if self._proc is not None:
            self._proc.kill()
            self._proc.communicate()
