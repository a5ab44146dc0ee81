"""The `planar_plot` block: the planar arm in its task plane, drawn after the run."""
from __future__ import annotations

import numpy as np

from blocksim.util.atomic import atomic_path
from blocksim.accel.lowering import computes_nothing
from blocksim.block import Block, In
from blocksim.params import Param

from ..animation import Clock, frame_times, resample, write_animation
from .kinematics import kin_link

SNAPSHOT_PERIOD = 0.1  # s between the configurations drawn in the snapshot (paper's Fig. 8)


class PlanarPlot(Block):
    """Draws a planar n-R arm in the x-y plane from the recorded joint angles q: a GIF and a PNG.

    `<block>.gif` (and `<block>.mp4` when the run asks for MP4), an animation of the arm
    with the tip's trace (and the desired tip position xd when wired), at `fps` frames per
    second of simulated time (resampled from the recording); and `<block>.png`, the paper's
    Fig. 8 style snapshot: the arm's configuration every 0.1 s drawn over the whole tip
    trace. A subsystem block's `/`
    becomes `.` in the file names. Nothing is drawn when plots are off.

    Inputs: q (n) joint angles (rad); xd (2) desired tip position (optional).
    Parameters: L link lengths (n,), xlim, ylim (axis limits; default: fit the motion),
    fps frames per second (at most 300 frames are drawn; longer runs use a lower rate).
    """

    type = "planar_plot"
    records_inputs = True
    lower = computes_nothing  # compiled: its inputs are recorded, as in normal mode
    params = (
        Param("L", doc="link lengths (n,) m"),
        Param("xlim", "value", None, "x axis limits [min, max] m"),
        Param("ylim", "value", None, "y axis limits [min, max] m"),
        Param("fps", "scalar", 25.0, "frames per second of simulated time", positive=True),
    )

    def ports(self):
        n = np.asarray(self.p.L).size
        return [In("q", shape=(n,)), In("xd", shape=(2,), optional=True, default=np.nan)], []

    def finalize(self, run):
        if not run.plots or run.out_dir is None or len(run.t) == 0:
            return
        from matplotlib.figure import Figure

        t = np.asarray(run.t, dtype=float)
        L = np.asarray(self.p.L, dtype=float).ravel()
        q = np.asarray(run.inputs[0]).reshape(len(t), -1)
        xd = np.asarray(run.inputs[1]).reshape(len(t), 2)
        joints = np.array([kin_link(qk, L) for qk in q])  # (N, n+1, 2)
        tip = joints[:, -1]
        xlim, ylim = self._limits(joints, xd)
        stem = self.name.replace("/", ".")
        note = "" if run.complete else " (incomplete)"

        # the snapshot: configurations every SNAPSHOT_PERIOD over the tip trace
        fig = Figure(figsize=(6, 4.5), dpi=90)
        ax = fig.add_subplot()
        snaps = resample(t, q, np.arange(t[0], t[-1] + 1e-9, SNAPSHOT_PERIOD))
        for qs in snaps:
            pts = kin_link(qs, L)
            ax.plot(pts[:, 0], pts[:, 1], "-", color="0.55", lw=0.8)
        if np.isfinite(xd).any():
            ax.plot(xd[:, 0], xd[:, 1], "k--", lw=1, label="desired")
        ax.plot(tip[:, 0], tip[:, 1], "r", lw=1.5, label="tip")
        ax.plot(joints[-1, :, 0], joints[-1, :, 1], "o-", color="C0", lw=2, ms=3, label="final")
        self._axes(ax, xlim, ylim, f"configurations every {SNAPSHOT_PERIOD:g} s{note}")
        ax.legend(fontsize=7, loc="best")
        with atomic_path(run.out_dir / f"{stem}.png") as tmp:
            fig.savefig(tmp)

        # the animation
        times, rate = frame_times(t, self.p.fps)
        draw = self._frames(t, resample(t, q, times), resample(t, xd, times), tip, times,
                            L, (xlim, ylim), note)
        write_animation(run, run.out_dir / stem, draw, times, rate, self.name)

    def _frames(self, t, qf, xdf, tip, times, L, limits, note):
        """draw(k): the animation's frame k, an RGBA (H, W, 4) view of the canvas that the
        next call overwrites: the axes, grid and labels drawn once, then per frame only the
        arm, the tip's trace so far, the desired tip position and the time (blitting)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(6.4, 5.12), dpi=100)  # 640 x 512 px: animation.MIN_SIDE
        canvas = FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        self._axes(ax, *limits, "")
        fmt = "t = {:5.2f} s" + note
        clock = Clock(ax.set_title(Clock.widest(fmt, times), fontsize=9, alpha=0.0), fmt)
        (trace,) = ax.plot([], [], "r", lw=1, animated=True)
        (arm,) = ax.plot([], [], "o-", color="C0", lw=2, ms=3, animated=True)
        (goal,) = ax.plot([], [], "kx", ms=6, animated=True)
        canvas.draw()
        clock.place(canvas)
        background = canvas.copy_from_bbox(fig.bbox)
        frame = np.asarray(canvas.buffer_rgba())

        def draw(k):
            tk, xk = times[k], xdf[k]
            canvas.restore_region(background)
            pts = kin_link(qf[k], L)
            arm.set_data(pts[:, 0], pts[:, 1])
            done = t <= tk
            trace.set_data(tip[done, 0], tip[done, 1])
            goal.set_data([xk[0]], [xk[1]])
            for artist in (trace, arm, goal):
                ax.draw_artist(artist)
            clock.stamp(frame, tk)
            return frame
        return draw

    def _limits(self, joints, xd):
        pts = joints.reshape(-1, 2)
        finite = xd[np.isfinite(xd).all(axis=1)]
        if len(finite):
            pts = np.vstack([pts, finite])
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        pad = 0.05 * float(max(hi - lo)) + 1e-3
        auto = [(lo[0] - pad, hi[0] + pad), (lo[1] - pad, hi[1] + pad)]
        xlim = tuple(self.p.xlim) if self.p.xlim is not None else auto[0]
        ylim = tuple(self.p.ylim) if self.p.ylim is not None else auto[1]
        return xlim, ylim

    @staticmethod
    def _axes(ax, xlim, ylim, title):
        ax.set_xlim(*xlim)
        ax.set_ylim(*ylim)
        ax.set_aspect("equal")
        ax.grid(True, alpha=0.3)
        ax.set_xlabel("x (m)")
        ax.set_ylabel("y (m)")
        ax.set_title(title, fontsize=9)
