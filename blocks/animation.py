"""Shared helpers for the animations drawn after a run: frame times, resampling, and the
GIF / MP4 writers (plot_robot, the camera view, planar_plot).

Animation time is simulation time: recordings (taken at solver steps or on a grid) are
resampled at a fixed frame rate, with a cap on the number of frames for long runs.
"""
import contextlib
import math
import shutil
import struct
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


class TextStamp:
    """Text blended into frames by Pillow's FreeType, in the font, size and colour of the
    matplotlib Text `like`: matplotlib lays a text out anew each time it draws it (about
    1.5 ms at 640 px), a stamp costs a tenth of that, and the mask of a text stamped again
    (a joint's label) is kept."""

    def __init__(self, like):
        from matplotlib import font_manager
        from matplotlib.colors import to_rgb
        from PIL import ImageFont

        prop = like.get_fontproperties()
        self._font = ImageFont.truetype(font_manager.findfont(prop),
                                        round(prop.get_size_in_points() * like.figure.dpi / 72))
        self._colour = np.array(to_rgb(like.get_color()), dtype=np.float32) * 255
        self._kept = {}

    def _mask(self, text, anchor):
        """(alpha (h, w, 1) in [0, 1], left, top): the text's coverage and its offset from
        the anchor point."""
        from PIL import Image, ImageDraw

        left, top, right, bottom = self._font.getbbox(text, anchor=anchor)
        mask = Image.new("L", (max(right - left, 1), max(bottom - top, 1)))
        ImageDraw.Draw(mask).text((-left, -top), text, font=self._font, fill=255, anchor=anchor)
        return np.asarray(mask, dtype=np.float32)[..., None] / 255, left, top

    def stamp(self, rgba, text, x, y, anchor="ls", keep=False):
        """Blend `text` into the frame rgba (H, W, 4) uint8 at pixel (x, y) (from the top
        left), placed by the Pillow `anchor` ('ls': the left end of the baseline);
        `keep` keeps the text's mask for the next time."""
        key = (text, anchor)
        mask = self._kept.get(key) or self._mask(text, anchor)
        if keep:
            self._kept[key] = mask
        alpha, left, top = mask
        x0, y0 = int(round(x)) + left, int(round(y)) + top
        height, width = rgba.shape[:2]
        rows = slice(max(y0, 0), min(y0 + alpha.shape[0], height))
        cols = slice(max(x0, 0), min(x0 + alpha.shape[1], width))
        if rows.start >= rows.stop or cols.start >= cols.stop:
            return
        alpha = alpha[rows.start - y0:rows.stop - y0, cols.start - x0:cols.stop - x0]
        region = rgba[rows, cols, :3]
        region[...] = region * (1 - alpha) + self._colour * alpha + 0.5


class Clock:
    """The time of each frame as text (e.g. 't = 1.25 s') stamped (TextStamp) where `slot`
    was laid out: `slot` is a matplotlib Text aligned on its baseline (va="baseline", as
    axes titles are) holding the widest such text, drawn transparent, so that the layout
    leaves room for the clock; the stamp takes its font, size, colour, baseline and side.
    Call `place(canvas)` once the canvas is drawn (the layout final)."""

    def __init__(self, slot, fmt="t = {:.2f} s"):
        self._slot, self._fmt = slot, fmt

    @staticmethod
    def widest(fmt, times):
        """The longest text of `fmt` over the frame times (the slot's text)."""
        return max((fmt.format(t) for t in (times[0], times[-1])), key=len)

    def place(self, canvas):
        slot = self._slot
        self._text = TextStamp(slot)
        self._x, y = slot.get_transform().transform(slot.get_unitless_position())
        self._baseline = canvas.get_width_height()[1] - y
        self._anchor = {"left": "ls", "center": "ms", "right": "rs"}[
            slot.get_horizontalalignment()]

    def stamp(self, rgba, t):
        """Write the text for time t into the frame rgba (H, W, 4) uint8, in place."""
        self._text.stamp(rgba, self._fmt.format(t), self._x, self._baseline, self._anchor)


def write_animation(run, base, draw, times, rate, who):
    """The animation whose frame k, at times[k], is `draw(k)` (an RGBA (H, W, 4) uint8 array,
    possibly a view that the next call overwrites) into `<base>.gif` (what the run report
    shows) and, when the run asks for it (`run.mp4`), in the same pass into `<base>.mp4`
    through ffmpeg (one line in run.messages when ffmpeg is not installed). The GIF's palette
    is made from the first, middle and last frames (drawn once more for it: what appears
    during the run, a trace, gets its own colours). The drawing's progress goes to
    run.progress frame by frame. Returns the last frame as RGB (H, W, 3), a copy."""
    count = len(times)
    palette = _Palette([_codes(draw(k)) for k in sorted({0, count // 2, count - 1})])
    frames = _reporting((draw(k) for k in range(count)), count, run.progress)
    ffmpeg = shutil.which("ffmpeg") if run.mp4 else None
    if run.mp4 and not ffmpeg:
        run.messages.append(f"{who}: MP4 skipped (ffmpeg is not installed); the animation is "
                            f"in {Path(base).name}.gif")
    if not ffmpeg:
        return write_gif(f"{base}.gif", frames, times, rate, palette)
    with _mp4(ffmpeg, f"{base}.mp4", rate) as pipe:
        return write_gif(f"{base}.gif", pipe.passing(frames), times, rate, palette)


def _reporting(frames, count, progress):
    """The frames, with progress(k / count) told after frame k (when progress is given)."""
    for k, frame in enumerate(frames, 1):
        yield frame
        if progress is not None:
            progress(k / count)


def write_gif(path, frames, times, rate, palette):
    """Write the RGBA frames as a looping GIF in `palette` (a _Palette), each shown until the
    next frame's time (the last for 1/rate), as they come. Each frame after the first
    stores only the rectangle that changed, its unchanged pixels transparent, so a frame
    costs what moved in it. Returns the last frame as RGB (H, W, 3), a copy."""
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        gif = _GifStream(f, _centiseconds(times, rate), palette)
        frame = None
        for frame in frames:
            gif.add(frame)
        f.write(b";")
    return np.array(frame[..., :3])


def _centiseconds(times, rate):
    """Display time of each frame in GIF units (1/100 s): differences of the rounded frame
    times, so that rounding does not accumulate; the last frame lasts 1/rate."""
    ends = np.round(100 * np.append(times, times[-1] + 1 / rate)).astype(np.int64)
    return np.maximum(np.diff(ends), 1)


TRANSPARENT = 255  # the palette index of "unchanged" pixels in frames after the first


class _GifStream:
    """A GIF89a written frame by frame: the logical screen with the global palette, a
    loop-forever extension, then per frame a graphic control block (its duration; after
    the first frame transparency index 255 and disposal "leave in place") and the LZW data of
    the changed rectangle (encoded by Pillow's GIF encoder)."""

    def __init__(self, file, durations, palette):
        self._file, self._durations, self._palette = file, durations, palette
        self._k = 0
        self._codes = None

    def add(self, rgba):
        if self._codes is None:
            self._start(rgba)
            return
        codes, previous = self._spare, self._codes
        _codes(rgba, out=codes)
        changed = np.not_equal(codes, previous, out=self._changed)
        rows = np.flatnonzero(changed.any(axis=1))
        if not rows.size:  # nothing moved: one transparent pixel
            rows = cols = np.zeros(1, int)
        else:
            cols = np.flatnonzero(changed[rows[0]:rows[-1] + 1].any(axis=0))
        box = (slice(rows[0], rows[-1] + 1), slice(cols[0], cols[-1] + 1))
        moved = changed[box]
        part = np.full(moved.shape, TRANSPARENT, dtype=np.uint8)
        part[moved] = self._palette.indices(codes[box][moved])
        self._codes, self._spare = codes, previous
        self._frame(part, cols[0], rows[0], transparent=True)

    def _start(self, rgba):
        codes = _codes(rgba)
        height, width = codes.shape
        self._codes, self._spare = codes, np.empty_like(codes)
        self._changed = np.empty(codes.shape, dtype=bool)
        table = np.zeros((256, 3), np.uint8)
        table[:len(self._palette.colours)] = self._palette.colours
        self._file.write(b"GIF89a" + struct.pack("<HHBBB", width, height, 0xF7, 0, 0)
                         + table.tobytes()
                         + b"!\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00")
        self._frame(self._palette.indices(codes), 0, 0, transparent=False)

    def _frame(self, indices, x, y, transparent):
        from PIL import GifImagePlugin, Image

        delay = int(self._durations[min(self._k, len(self._durations) - 1)])
        self._k += 1
        flags = (1 << 2) | 1 if transparent else 0  # disposal 1: leave in place; transparency
        self._file.write(struct.pack("<4BHBB", 0x21, 0xF9, 4, flags, delay, TRANSPARENT, 0))
        image = Image.frombuffer("L", indices.shape[::-1], np.ascontiguousarray(indices), "raw",
                                 "L", 0, 1)
        for chunk in GifImagePlugin.getdata(image, offset=(int(x), int(y))):
            self._file.write(chunk)


class _Palette:
    """The GIF palette: the 255 most frequent colours of some frames (background, panes, the
    drawing's colours), kept exactly; any other colour (anti-aliased edges) maps to the
    nearest of them, found once and then cached. Index 255 stays free: it marks unchanged
    pixels."""

    def __init__(self, frames):
        values, counts = np.unique(np.concatenate([f.ravel() for f in frames]),
                                   return_counts=True)
        self._codes = values[np.argsort(-counts, kind="stable")[:255]]
        self.colours = _rgb(self._codes)
        self._lookup = np.full(1 << 24, TRANSPARENT, dtype=np.uint8)  # code -> index
        self._lookup[self._codes] = np.arange(len(self._codes))

    def indices(self, codes):
        """Palette indices (uint8) of colour codes (any shape)."""
        found = self._lookup[codes]
        unknown = found == TRANSPARENT
        if unknown.any():
            new = np.unique(codes[unknown])
            offsets = _rgb(new)[:, None, :].astype(int) - self.colours[None, :, :]
            self._lookup[new] = (offsets ** 2).sum(axis=2).argmin(axis=1)
            found = self._lookup[codes]
        return found


def _codes(frame, out=None):
    """RGBA (H, W, 4) uint8 -> one int per colour (H, W): R + G·2^8 + B·2^16 (the pixel's
    four bytes read as one little-endian number, alpha masked off), into `out` if given."""
    return np.bitwise_and(np.ascontiguousarray(frame).view("<u4")[..., 0], np.uint32(0xFFFFFF),
                          out=out)


def _rgb(codes):
    """Colour codes (k,) -> colours (k, 3) uint8."""
    codes = np.asarray(codes, dtype=np.uint32)
    return np.stack([(codes >> shift) & 255 for shift in (0, 8, 16)], axis=1).astype(np.uint8)


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
    """Frames to ffmpeg as raw RGBA at a constant rate, encoded as yuv420p (which common
    players read; frame sides must be even). ffmpeg starts at the first frame."""

    def __init__(self, ffmpeg, path, rate):
        self._command = [ffmpeg, "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt",
                         "rgba", "-s", None, "-r", f"{rate:g}", "-i", "-", "-pix_fmt",
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
