"""The `plot_robot` block: a stick-figure animation of a serial-link robot, drawn after the run
from the recorded joint angles."""
from __future__ import annotations


import numpy as np

from blocksim.util.atomic import atomic_path
from blocksim.accel.lowering import computes_nothing
from blocksim.block import Block, In
from blocksim.params import Param

from ..animation import Clock, TextStamp, frame_times, resample, write_animation

AXIS_FRACTION = 0.15
FLOOR_FRACTION = 0.05
FIGSIZE = (6.4, 6.4)  # inches; times DPI: whole, even pixel counts (yuv420p video)
DPI = 100  # 640 px a side: animation.MIN_SIDE
CLOCK = "t = {:.2f} s"
HEADING = 0.955  # baseline of the heading and the clock (figure fraction)


class PlotRobot(Block):
    """Animates the robot's stick figure from the recorded joint angles q (n): a GIF and a PNG.

    The animation goes into `<block>.gif` (and `<block>.mp4` when the run asks for MP4,
    `blocksim run --mp4`, and ffmpeg is installed) and `<block>.png` (the final frame), in
    the run directory; a subsystem block's `/` becomes `.` in the file names.

    Drawn in 3-D: the links as a line through the link-frame origins (fkine_all) ending at the
    tool point (marked), the tool frame's x, y, z axes as short red, green, blue segments, and
    the arm's shadow (its vertical projection) on the floor. The floor is z = 0 when the arm stays
    above it during the whole run; otherwise it lies a little below the arm's lowest point.
    The axis limits are fixed for the whole animation (a cube around everything the arm
    reaches during the run, equal aspect). Each joint is named where its axis passes through
    the drawing (a point of joint_axes), q1..qn as the toolbox numbers joints; joints whose
    points coincide (a spherical wrist's) share one label, "q4 q5 q6". The heading gives the
    robot's name, "(incomplete)" when the run did not finish, and the time.

    Animation time is simulation time: the recording is resampled at `fps` frames per second
    of simulated time (linear interpolation of each joint between recorded samples; the last
    frame is the end of the run). At most 300 frames are drawn (blocks.animation.MAX_FRAMES):
    a longer run is drawn at fps/2, fps/3, ... (the first that fits) and the heading shows
    the rate used.
    Nothing is drawn when plots are off or the run has no output directory.

    robot: an entry of the diagram's `robots:` section. fps: frames per second (> 0).
    """

    type = "plot_robot"
    records_inputs = True
    lower = computes_nothing  # compiled: its inputs are recorded, as in normal mode
    params = (
        Param("robot", "resource", doc="robot to draw (an entry of robots:)", section="robots"),
        Param("fps", "scalar", 25.0, "frames per second of simulated time", positive=True),
    )

    def ports(self):
        return [In("q", shape=(self.p.robot.n,), doc="joint angles (rad or m)")], []

    def finalize(self, run):
        if not run.plots or run.out_dir is None:
            return
        if len(run.t) == 0:
            run.messages.append(f"{self.name}: nothing recorded, no animation")
            return
        t = np.asarray(run.t, dtype=float)
        times, rate = frame_times(t, self.p.fps)
        robot = self.p.robot
        qs = resample(t, run.inputs[0], times)
        points, tools = _geometry(robot, qs)
        heading = (robot.name + (f"  ({rate:g} fps)" if rate != self.p.fps else "")
                   + ("  (incomplete)" if not run.complete else ""))
        draw = _frames(points, tools, times, heading, _joint_labels(robot, qs))
        stem = self.name.replace("/", ".")
        last = write_animation(run, run.out_dir / stem, draw, times, rate, self.name)
        from PIL import Image

        with atomic_path(run.out_dir / f"{stem}.png") as tmp:
            Image.fromarray(last).save(tmp)


def _geometry(robot, qs):
    """Per frame: the drawn polyline (base origin, link-frame origins, tool point) as
    (m, n+2, 3) and the tool pose (m, 4, 4), for joint angles qs (m, n)."""
    tools = np.asarray(robot.fkine(qs))
    origins = np.asarray(robot.fkine_all(qs))[:, :, :3, 3]
    return np.concatenate([origins, tools[:, None, :3, 3]], axis=1), tools


def _joint_labels(robot, qs):
    """Per frame, the labels of the joints at the points where their axes are drawn:
    [(position (3,), 'q1 q2'), ...], joints numbered from 1, coincident points (within
    1e-9 of the scene's size) sharing one label."""
    points = np.asarray(robot.joint_axes(qs)[1])
    tol = 1e-9 * max(float(np.ptp(points)), 1.0)
    frames = []
    for frame in points:
        groups = []
        for j, p in enumerate(frame, 1):
            for group in groups:
                if np.abs(group[0] - p).max() <= tol:
                    group[1].append(f"q{j}")
                    break
            else:
                groups.append((p, [f"q{j}"]))
        frames.append([(p, " ".join(names)) for p, names in groups])
    return frames


def _layout(points):
    """The fixed scene for polylines `points` (m, k, 3) of every frame: the floor height, the
    length of the drawn tool axes, and the centre (3,) and half-width of the cube of axis
    limits, which holds the arm, the floor and the tool axes in every frame."""
    low, high = points.min(axis=(0, 1)), points.max(axis=(0, 1))
    span = float(max(high - low)) or 1.0
    axis_length = AXIS_FRACTION * span
    floor = 0.0 if low[2] >= 0 else low[2] - FLOOR_FRACTION * span
    low = np.minimum(low, [np.inf, np.inf, floor]) - axis_length
    high = high + axis_length
    return floor, axis_length, (low + high) / 2, float(max(high - low)) / 2


def _frames(points, tools, times, heading, labels):
    """draw(k): frame k as an RGBA array (H, W, 4) uint8, a view of the canvas that the next
    call overwrites. The axes, panes, ticks and heading are drawn once; each frame restores
    that background and draws only the arm, its shadow, the tool axes, the joints' labels
    (labels[k]: [(position (3,), text), ...]) and the time (blitting: a full redraw of 3-D
    axes costs ~20x more; the texts are stamped, not laid out by matplotlib per frame)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator
    from mpl_toolkits.mplot3d.art3d import Line3DCollection

    floor, axis_length, centre, half = _layout(points)
    fig = Figure(figsize=FIGSIZE, dpi=DPI)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0.0, 0.0, 1.0, 0.92), projection="3d")
    ax.set_box_aspect((1, 1, 1), zoom=0.85)
    for set_lim, c in zip((ax.set_xlim, ax.set_ylim, ax.set_zlim), centre):
        set_lim(c - half, c + half)
    for axis, label in zip((ax.xaxis, ax.yaxis, ax.zaxis), "xyz"):
        axis.set_label_text(f"{label} (m)", fontsize=7)
        axis.set_tick_params(labelsize=6)
        axis.set_major_locator(MaxNLocator(5))
    # the shadow's, the links' and the tool axes' segments in one collection (one draw call)
    segments = len(points[0]) - 1
    sticks = Line3DCollection(_sticks(points[0], tools[0], floor, axis_length),
                              colors=["0.65"] * segments + ["tab:blue"] * segments + list("rgb"),
                              linewidths=[3] * (2 * segments) + [2] * 3, capstyle="round",
                              animated=True)
    ax.add_collection3d(sticks)
    joints, = ax.plot([], [], [], color="tab:blue", ls="", marker="o", ms=4, animated=True)
    tool, = ax.plot([], [], [], color="k", ls="", marker="o", ms=5, animated=True)
    fig.text(0.03, HEADING, heading, va="baseline", fontsize=9)
    clock = Clock(fig.text(0.97, HEADING, Clock.widest(CLOCK, times), ha="right",
                           va="baseline", fontsize=9, alpha=0.0), CLOCK)
    names = TextStamp(fig.text(0, 0, "", fontsize=7, color="0.2"))

    canvas.draw()
    clock.place(canvas)
    background = canvas.copy_from_bbox(fig.bbox)
    frame = np.asarray(canvas.buffer_rgba())
    height = canvas.get_width_height()[1]

    def draw(k):
        p = points[k]
        canvas.restore_region(background)
        sticks.set_segments(_sticks(p, tools[k], floor, axis_length))
        sticks.do_3d_projection()  # a collection is projected by the axes' draw
        joints.set_data_3d(p[:, 0], p[:, 1], p[:, 2])
        tool.set_data_3d(p[-1:, 0], p[-1:, 1], p[-1:, 2])
        for artist in (sticks, joints, tool):
            ax.draw_artist(artist)
        if labels[k]:
            xs, ys = _pixels(ax, height, np.array([at for at, _ in labels[k]]))
            for x, y, (_, text) in zip(xs, ys, labels[k]):
                names.stamp(frame, " " + text, x, y, keep=True)
        clock.stamp(frame, times[k])
        return frame
    return draw


def _pixels(ax, height, points):
    """Pixel columns and rows (from the top) of 3-D points (k, 3) in the 3-D axes `ax` as
    drawn (its projection and data transform), in a canvas `height` pixels high."""
    from mpl_toolkits.mplot3d import proj3d

    x, y, _ = proj3d.proj_transform(points[:, 0], points[:, 1], points[:, 2], ax.get_proj())
    shown = ax.transData.transform(np.column_stack([x, y]))
    return shown[:, 0], height - shown[:, 1]


def _sticks(p, T, floor, length):
    """The segments (2k + 3, 2, 3) drawn for the polyline p (k + 1, 3): its shadow on the
    floor, the links, and the tool frame's x, y, z axes of `length` from its origin."""
    shadow = p.copy()
    shadow[:, 2] = floor
    axes = np.stack([np.broadcast_to(T[:3, 3], (3, 3)), T[:3, 3] + length * T[:3, :3].T], axis=1)
    return np.concatenate([np.stack([shadow[:-1], shadow[1:]], axis=1),
                           np.stack([p[:-1], p[1:]], axis=1), axes])
