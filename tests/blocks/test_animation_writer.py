"""The animation writer against what it was given: GIF frames decoded by Pillow equal the
drawn frames, each frame after the first stores only the rectangle that changed (read from
the file's image descriptors), durations add up to the frame times, and the stamped clock
lands where matplotlib draws the same text."""
import struct

import numpy as np
import pytest
from PIL import Image, ImageSequence

from blocks.animation import Clock, write_animation
from blocksim.block import FinalRun

W, H = 80, 60
TIMES = np.array([0.0, 0.1, 0.25, 0.3, 0.5])


def scene(k):
    """Frame k (RGBA): white, a blue 6x6 square moving 5 px right per frame (it stays put
    from frame 3 to 4), and from frame 2 on a red line that no earlier frame has."""
    frame = np.full((H, W, 4), 255, dtype=np.uint8)
    x = 10 + 5 * min(k, 3)
    frame[20:26, x:x + 6, :3] = (31, 119, 180)
    if k >= 2:
        frame[50, 5:70, :3] = (214, 39, 40)
    return frame


def run(tmp_path, **kw):
    return FinalRun(t=TIMES, inputs=[], out_dir=tmp_path, plots=True, complete=True,
                    messages=[], reports={}, **kw)


def descriptors(data):
    """(left, top, width, height) of every image in a GIF file, by walking its blocks."""
    assert data[:6] == b"GIF89a"
    flags = data[10]
    pos = 13 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0)
    images = []

    def skip_sub_blocks(pos):
        while data[pos]:
            pos += data[pos] + 1
        return pos + 1

    while data[pos] != 0x3B:
        if data[pos] == 0x21:                      # extension: label, sub-blocks
            pos = skip_sub_blocks(pos + 2)
        else:
            assert data[pos] == 0x2C
            images.append(struct.unpack("<4H", data[pos + 1:pos + 9]))
            assert not data[pos + 9] & 0x80        # no local colour table: one palette
            pos = skip_sub_blocks(pos + 11)        # LZW minimum code size, then data
    return images


def test_gif_frames_equal_the_drawn_frames(tmp_path):
    last = write_animation(run(tmp_path), tmp_path / "a", scene, TIMES, 10.0, "a")
    np.testing.assert_array_equal(last, scene(4)[..., :3])
    with Image.open(tmp_path / "a.gif") as gif:
        frames = [np.asarray(f.convert("RGB")) for f in ImageSequence.Iterator(gif)]
        durations = [f.info["duration"] for f in ImageSequence.Iterator(gif)]
    assert len(frames) == 5
    for k, frame in enumerate(frames):
        np.testing.assert_array_equal(frame, scene(k)[..., :3], err_msg=f"frame {k}")
    # shown until the next frame's time, the last for 1/rate: 0.1, 0.15, 0.05, 0.2, 0.1 s
    assert durations == [100, 150, 50, 200, 100]
    assert not (tmp_path / "a.mp4").exists()


def test_each_frame_stores_only_what_changed(tmp_path):
    write_animation(run(tmp_path), tmp_path / "a", scene, TIMES, 10.0, "a")
    images = descriptors((tmp_path / "a.gif").read_bytes())
    # the first frame whole; then the square's old and new places (x 10..20 -> 15..21);
    # frame 2 also the new red line; frame 4: nothing moved, one (transparent) pixel
    assert images == [(0, 0, W, H), (10, 20, 11, 6), (5, 20, 65, 31), (20, 20, 11, 6),
                      (0, 0, 1, 1)]


def test_rounded_durations_do_not_drift(tmp_path):
    times = np.arange(31) / 30.0                   # 30 fps: 3.33 cs per frame
    write_animation(run(tmp_path), tmp_path / "a", lambda k: scene(k % 4), times, 30.0, "a")
    with Image.open(tmp_path / "a.gif") as gif:
        total = sum(f.info["duration"] for f in ImageSequence.Iterator(gif))
    assert total == pytest.approx(1000 * (1 + 1 / 30), abs=10)


def test_clock_is_stamped_where_matplotlib_draws_its_slot():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    def picture(visible):
        fig = Figure(figsize=(4, 3), dpi=100, layout="constrained")
        canvas = FigureCanvasAgg(fig)
        ax = fig.subplots()
        ax.set_title("left", loc="left", fontsize=8)
        slot = ax.set_title("t = 12.34 s", loc="right", fontsize=8,
                            alpha=1.0 if visible else 0.0)
        canvas.draw()
        frame = np.asarray(canvas.buffer_rgba())
        if not visible:
            clock = Clock(slot)
            clock.place(canvas)
            clock.stamp(frame, 12.34)
        return frame[..., :3].astype(int).sum(axis=2) < 3 * 128  # dark pixels

    drawn, stamped = picture(True), picture(False)
    boxes = []
    for ink in (drawn, stamped):
        rows, cols = np.nonzero(ink[:40, 200:])   # the right-hand title, top band
        boxes.append(np.array([rows.min(), rows.max(), cols.min(), cols.max()]))
    assert np.abs(boxes[0] - boxes[1]).max() <= 2, boxes
    assert 0.7 < stamped[:40, 200:].sum() / drawn[:40, 200:].sum() < 1.3
