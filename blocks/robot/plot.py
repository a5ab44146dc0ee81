"""The `plot_robot` block: a stick-figure animation of a serial-link robot, drawn after the run
from the recorded joint angles."""
from __future__ import annotations


import numpy as np

from blocksim.util.atomic import atomic_path
from blocksim.block import Block, In
from blocksim.params import Param

from ..animation import frame_times, resample, write_animation

AXIS_FRACTION = 0.15
FLOOR_FRACTION = 0.05
FIGSIZE = (6.4, 6.4)  # inches; times DPI: whole, even pixel counts (yuv420p video)
DPI = 100  # 640 px a side: animation.MIN_SIDE


class PlotRobot(Block):
    """Animates the robot's stick figure from the recorded joint angles q (n): a GIF and a PNG.

    The animation goes into `<block>.gif` (and `<block>.mp4` when ffmpeg is on the PATH) and
    `<block>.png` (the final frame), in the run directory; a subsystem block's `/` becomes
    `.` in the file names.

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
        frames = _frames(points, tools, times, heading, _joint_labels(robot, qs))
        stem = self.name.replace("/", ".")
        last = write_animation(run, run.out_dir / stem, frames, times, rate, self.name)
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
    """Yield the frames as RGB arrays (H, W, 3) uint8. The axes, panes, ticks and heading are
    drawn once; each frame restores that background and draws only the arm, its shadow, the
    tool axes and the time (blitting: a full redraw of 3-D axes costs ~20x more)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

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
    shadow, = ax.plot([], [], [], color="0.65", lw=3, solid_capstyle="round", animated=True)
    links, = ax.plot([], [], [], color="tab:blue", lw=3, marker="o", ms=4, animated=True)
    tool, = ax.plot([], [], [], color="k", ls="", marker="o", ms=5, animated=True)
    frame_axes = [ax.plot([], [], [], color=c, lw=2, animated=True)[0] for c in "rgb"]
    fig.text(0.03, 0.97, heading, va="top", fontsize=9)
    clock = fig.text(0.97, 0.97, "", ha="right", va="top", fontsize=9, animated=True)
    names = [ax.text(0, 0, 0, "", fontsize=7, color="0.2", animated=True)
             for _ in range(max(map(len, labels), default=0))]

    canvas.draw()
    background = canvas.copy_from_bbox(fig.bbox)
    for p, T, t, joints in zip(points, tools, times, labels):
        canvas.restore_region(background)
        shadow.set_data_3d(p[:, 0], p[:, 1], np.full(len(p), floor))
        links.set_data_3d(p[:, 0], p[:, 1], p[:, 2])
        tool.set_data_3d(p[-1:, 0], p[-1:, 1], p[-1:, 2])
        for k, line in enumerate(frame_axes):
            line.set_data_3d(*np.column_stack((T[:3, 3], T[:3, 3] + axis_length * T[:3, k])))
        clock.set_text(f"t = {t:.2f} s")
        for name, (at, text) in zip(names, joints):
            name.set_position_3d(at)
            name.set_text(" " + text)
        for artist in (shadow, links, tool, *frame_axes, *names[:len(joints)]):
            ax.draw_artist(artist)
        fig.draw_artist(clock)
        yield np.array(canvas.buffer_rgba())[:, :, :3]


