"""plot_robot: frame times and interpolation checked by hand, the scene geometry of a planar
2-link stand-in derived by hand, the files written (GIF or MP4, final-frame PNG) from tiny
recordings, nothing written without plots or a run directory, and the real Puma 560."""
import math
import os
import shutil

import numpy as np
import pytest
from PIL import Image, ImageSequence

import blocksim
from blocksim.block import FinalRun
from blocks.catalog import BLOCKS
from blocks.robot import load_robot
from blocks.animation import MAX_FRAMES, frame_times, resample
from blocks.robot import plot
from blocks.robot.plot import PlotRobot

SIDE = round(plot.FIGSIZE[0] * plot.DPI)  # frame width and height in pixels (square figure)


class TwoLink:
    """Stand-in robot: planar 2-link, both joints about z, link lengths a1, a2, base lifted to
    height h, a tool offset d along the last frame's x. Frames by hand: the elbow at
    a1·(cos q1, sin q1, 0), the wrist a2 further along angle q1 + q2. q (2,) or (m, 2)."""

    name = "two-link"
    n = 2

    def __init__(self, a1=1.0, a2=0.5, h=0.0, d=0.0):
        self.a1, self.a2, self.h, self.d = a1, a2, h, d

    @staticmethod
    def _pose(angle, x, y, z):
        c, s = math.cos(angle), math.sin(angle)
        return np.array([[c, -s, 0, x], [s, c, 0, y], [0, 0, 1, z], [0, 0, 0, 1.0]])

    def fkine_all(self, q):
        if np.ndim(q) == 2:  # a stack of configurations, as SerialLink
            return np.array([self.fkine_all(row) for row in q])
        q1, q12 = q[0], q[0] + q[1]
        elbow = (self.a1 * math.cos(q1), self.a1 * math.sin(q1))
        wrist = (elbow[0] + self.a2 * math.cos(q12), elbow[1] + self.a2 * math.sin(q12))
        return np.array([self._pose(0.0, 0, 0, self.h), self._pose(q1, *elbow, self.h),
                         self._pose(q12, *wrist, self.h)])

    def fkine(self, q):
        return self.fkine_all(q)[..., -1, :, :] @ self._pose(0.0, self.d, 0, 0)

    def joint_axes(self, q):
        """Both axes along z, through the base and the elbow (by hand, as fkine_all)."""
        origins = self.fkine_all(q)[..., :2, :3, 3]
        return np.broadcast_to([0.0, 0.0, 1.0], origins.shape), origins, np.zeros(2)


def make(robot, fps=25.0, name="arm"):
    return PlotRobot(name, {"robot": robot, "fps": PlotRobot.params[1].convert(fps)})


def final_run(t, q, out_dir, *, plots=True, complete=True, mp4=False):
    return FinalRun(t=np.asarray(t, dtype=float), inputs=[np.asarray(q, dtype=float)],
                    out_dir=out_dir, plots=plots, complete=complete, messages=[], reports={},
                    mp4=mp4)


@pytest.fixture
def no_ffmpeg(monkeypatch, tmp_path_factory):
    """A PATH without ffmpeg: the block writes a GIF."""
    monkeypatch.setenv("PATH", str(tmp_path_factory.mktemp("empty_path")))


# --- frame times and resampling ---------------------------------------------------------------

def test_frame_times_on_the_grid_of_the_requested_rate():
    times, rate = frame_times(np.array([0.0, 0.3, 1.0]), 4.0)
    assert rate == 4.0
    np.testing.assert_allclose(times, [0, 0.25, 0.5, 0.75, 1.0], atol=1e-15)


def test_frame_times_end_off_the_grid_is_the_last_frame():
    times, _ = frame_times(np.array([1.0, 1.9]), 4.0)  # 1 + k/4 up to 1.75, then the end
    np.testing.assert_allclose(times, [1.0, 1.25, 1.5, 1.75, 1.9], atol=1e-15)


def test_frame_times_of_a_single_row():
    times, rate = frame_times(np.array([2.5]), 25.0)
    assert rate == 25.0
    np.testing.assert_array_equal(times, [2.5])


def test_frame_cap_lowers_the_rate_by_a_whole_factor():
    t = np.array([0.0, 20.0])
    # 20 s at 25 fps is 501 frames > 300: fps/2 = 12.5 gives 20*12.5 + 1 = 251 frames
    times, rate = frame_times(t, 25.0)
    assert MAX_FRAMES == 300 and rate == 12.5 and len(times) == 251
    np.testing.assert_allclose(times[:3], [0, 0.08, 0.16])
    assert times[-1] == 20.0
    # with at most 250 frames fps/2 (251 frames) does not fit: fps/3 = 25/3 has grid times
    # 3k/25 up to k = 166 (19.92 s), then the end: 167 + 1 frames
    times, rate = frame_times(t, 25.0, max_frames=250)
    assert rate == 25 / 3 and len(times) == 168
    np.testing.assert_allclose(times[[1, -2, -1]], [0.12, 19.92, 20.0])
    # a 10 s run at 25 fps (251 frames) is not capped
    assert frame_times(np.array([0.0, 10.0]), 25.0)[1] == 25.0


def test_resample_interpolates_each_joint_linearly():
    t = np.array([0.0, 1.0, 3.0])
    q = np.array([[0.0, 10.0], [1.0, 10.0], [3.0, 4.0]])
    # joint 1 is q = t; joint 2 is 10 until t = 1, then falls by 3 per second
    np.testing.assert_allclose(resample(t, q, np.array([0.0, 0.5, 2.0, 3.0])),
                               [[0, 10], [0.5, 10], [2, 7], [3, 4]])


# --- scene geometry ---------------------------------------------------------------------------

def test_stick_figure_points_and_tool_pose_of_the_two_link():
    robot = TwoLink(a1=1.0, a2=0.5, h=0.2, d=0.1)
    points, tools = plot._geometry(robot, np.array([[0.0, math.pi / 2]]))
    # base (0, 0, h), elbow (a1, 0, h), wrist (a1, a2, h), tool d further along y (angle pi/2)
    np.testing.assert_allclose(points[0], [[0, 0, 0.2], [1, 0, 0.2], [1, 0.5, 0.2],
                                           [1, 0.6, 0.2]], atol=1e-15)
    np.testing.assert_allclose(tools[0][:3, :3], [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15)


def test_floor_at_zero_when_the_arm_stays_above_it():
    points = np.array([[[0, 0, 0.2], [1, 0, 0.2], [1, 0.5, 0.7]]])
    floor, axis_length, centre, half = plot._layout(points)
    # span: largest extent of the points' box = 1 (x); axes 0.15 long
    assert floor == 0.0 and axis_length == pytest.approx(0.15)
    # cube: x in [-0.15, 1.15], y in [-0.15, 0.65], z in [0 - 0.15, 0.85] -> half 0.65
    assert half == pytest.approx(0.65)
    np.testing.assert_allclose(centre, [0.5, 0.25, 0.35])


def test_floor_below_the_lowest_point_when_the_arm_goes_below_zero():
    points = np.array([[[0, 0, 0], [0, 0, -2.0]], [[0, 0, 0], [0.5, 0, -1.0]]])
    floor, _, centre, half = plot._layout(points)
    # lowest point -2, span 2 (z): floor 5 % of the span below it
    assert floor == pytest.approx(-2.1)
    low, high = centre - half, centre + half
    assert (low <= [0, 0, floor]).all() and (high >= [0.5, 0, 0]).all()


# --- block declarations -----------------------------------------------------------------------

def test_declarations_and_catalogue_entry():
    block = make(TwoLink())
    (q,), outputs = block.ports()
    assert (q.name, q.shape, outputs) == ("q", (2,), [])
    assert block.records_inputs and PlotRobot.type == "plot_robot"
    assert BLOCKS["plot_robot"] == "blocks.robot.plot:PlotRobot"
    with pytest.raises(ValueError, match="> 0"):
        PlotRobot.params[1].convert(0)


# --- files ------------------------------------------------------------------------------------

def test_gif_and_final_frame_png(tmp_path, no_ffmpeg):
    t = [0.0, 0.5, 1.0]
    q = [[0, 0], [0.5, 0.5], [1.0, 1.5]]
    run = final_run(t, q, tmp_path)
    make(TwoLink(), fps=4).finalize(run)
    assert sorted(os.listdir(tmp_path)) == ["arm.gif", "arm.png"]  # no temporary left over
    gif = Image.open(tmp_path / "arm.gif")
    frames = [f.convert("RGB") for f in ImageSequence.Iterator(gif)]
    # 0, 0.25, 0.5, 0.75, 1.0 s, each shown for 1/4 s
    assert len(frames) == 5 and gif.size == (SIDE, SIDE)
    assert [f.info["duration"] for f in ImageSequence.Iterator(gif)] == [250] * 5
    first, last = (np.asarray(f, dtype=float) for f in (frames[0], frames[-1]))
    assert np.abs(first - last).max() > 100  # the arm moved
    png = np.asarray(Image.open(tmp_path / "arm.png").convert("RGB"), dtype=float)
    assert png.shape == (SIDE, SIDE, 3)
    # the PNG is the last frame in full colour; the GIF's palette keeps the first frame's
    # colours exactly and moves only a few anti-aliased edge pixels
    def changed(a, b):
        return (np.abs(a - np.asarray(b, dtype=float)).sum(axis=2) > 0).mean()
    assert changed(png, last) < 0.005 < changed(png, frames[-2])
    assert SIDE >= 640  # legible (animation.MIN_SIDE)
    assert run.messages == []  # no MP4 asked for


def test_mp4_asked_for_without_ffmpeg_is_a_note(tmp_path, no_ffmpeg):
    run = final_run([0.0, 0.5], [[0, 0], [0.5, 0.5]], tmp_path, mp4=True)
    make(TwoLink(), fps=4).finalize(run)
    assert sorted(os.listdir(tmp_path)) == ["arm.gif", "arm.png"]
    assert run.messages == ["arm: MP4 skipped (ffmpeg is not installed); the animation is in "
                            "arm.gif"]


def test_single_recorded_row(tmp_path, no_ffmpeg):
    make(TwoLink(), fps=4).finalize(final_run([0.0], [[0.3, 0.4]], tmp_path))
    assert Image.open(tmp_path / "arm.gif").n_frames == 1
    assert (tmp_path / "arm.png").is_file()


def test_incomplete_run_changes_only_the_heading(tmp_path, no_ffmpeg):
    robot = TwoLink()
    make(robot, name="done").finalize(final_run([0.0], [[0.3, 0.4]], tmp_path))
    make(robot, name="cut").finalize(final_run([0.0], [[0.3, 0.4]], tmp_path, complete=False))
    done, cut = (np.asarray(Image.open(tmp_path / f"{name}.png"), dtype=float)
                 for name in ("done", "cut"))
    changed = np.argwhere(np.abs(done - cut).sum(axis=2) > 0)
    # the heading sits in the top band (the axes start 8 % below the top), left of the clock
    assert len(changed) and changed[:, 0].max() < 0.08 * SIDE
    assert changed[:, 1].max() < 0.7 * SIDE


def test_nothing_written_without_plots_or_run_directory(tmp_path, monkeypatch, no_ffmpeg):
    monkeypatch.chdir(tmp_path)
    t, q = [0.0, 1.0], [[0, 0], [1, 1]]
    make(TwoLink()).finalize(final_run(t, q, tmp_path, plots=False))
    make(TwoLink()).finalize(final_run(t, q, None))
    assert os.listdir(tmp_path) == []


def test_empty_recording_is_reported(tmp_path, no_ffmpeg):
    run = final_run(np.zeros(0), np.zeros((0, 2)), tmp_path)
    make(TwoLink()).finalize(run)
    assert os.listdir(tmp_path) == [] and run.messages == ["arm: nothing recorded, no animation"]


def test_subsystem_block_name_gives_dotted_file_names(tmp_path, no_ffmpeg):
    make(TwoLink(), fps=2, name="arm/plot").finalize(final_run([0, 0.5], [[0, 0], [1, 1]],
                                                               tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["arm.plot.gif", "arm.plot.png"]


def test_mp4_frames_are_piped_to_ffmpeg(tmp_path, stand_in_ffmpeg):
    # a stand-in ffmpeg on the PATH records its arguments and the number of bytes it read
    stand_in_ffmpeg("data = sys.stdin.buffer.read()\n"
                    "with open(sys.argv[-1], 'w') as f:\n"
                    "    f.write(' '.join(sys.argv[1:-1]) + '|' + str(len(data)))\n", alone=True)
    out = tmp_path / "run"
    make(TwoLink(), fps=4).finalize(final_run([0, 0.5, 1.0], [[0, 0], [1, 1], [2, 2]], out,
                                              mp4=True))
    # the GIF (what the run report shows) is written in the same pass
    assert sorted(os.listdir(out)) == ["arm.gif", "arm.mp4", "arm.png"]
    args, size = (out / "arm.mp4").read_text().split("|")
    assert f"-s {SIDE}x{SIDE} -r 4 -i -" in args
    assert "-pix_fmt rgba" in args and int(size) == 5 * SIDE * SIDE * 4  # 5 RGBA frames
    with Image.open(out / "arm.gif") as gif:
        assert gif.n_frames == 5


@pytest.mark.skipif(not shutil.which("ffmpeg"), reason="ffmpeg not installed")
def test_mp4_with_the_real_ffmpeg(tmp_path):
    make(TwoLink(), fps=4).finalize(final_run([0, 0.5, 1.0], [[0, 0], [1, 1], [2, 2]], tmp_path,
                                              mp4=True))
    assert (tmp_path / "arm.mp4").stat().st_size > 0 and (tmp_path / "arm.png").is_file()
    assert (tmp_path / "arm.gif").is_file()


def test_failing_ffmpeg_leaves_no_mp4(tmp_path, stand_in_ffmpeg):
    """ffmpeg exiting with an error: a RuntimeError naming it, no MP4 (not even partial)."""
    stand_in_ffmpeg("sys.stdin.buffer.read()\nsys.stderr.write('no codec')\nsys.exit(1)\n",
                    alone=True)
    out = tmp_path / "run"
    with pytest.raises(RuntimeError, match="ffmpeg failed: no codec"):
        make(TwoLink(), fps=4).finalize(final_run([0, 0.5, 1.0], [[0, 0], [1, 1], [2, 2]], out,
                                                  mp4=True))
    assert not any(p.suffix == ".mp4" for p in out.iterdir())


# --- the real Puma 560 ------------------------------------------------------------------------

def test_joints_are_labelled_q1_to_qn_where_their_axes_are_drawn():
    """The stand-in's joints at its base and elbow; the Puma's, numbered as the toolbox,
    with its shoulder joints (axes through the origin) and its wrist joints 5 and 6 (axes
    through the wrist centre) sharing a label each (robots spec: a spherical wrist)."""
    arm = TwoLink(a1=1.0, h=0.5)
    (frame,) = plot._joint_labels(arm, np.array([[math.pi / 2, 0.3]]))
    assert [text for _, text in frame] == ["q1", "q2"]
    np.testing.assert_allclose([p for p, _ in frame], [[0, 0, 0.5], [0, 1, 0.5]], atol=1e-15)
    puma = load_robot("puma560")
    q = np.array([puma.poses["qn"], puma.poses["qr"]])
    for joints, qk in zip(plot._joint_labels(puma, q), q):
        assert [text for _, text in joints] == ["q1 q2", "q3", "q4", "q5 q6"]
        wrist = puma.fkine(qk)[:3, 3]  # no tool offset: the tool point is the wrist centre
        np.testing.assert_allclose(joints[-1][0], wrist, atol=1e-12)


def test_puma_geometry_and_files(tmp_path, no_ffmpeg):
    puma = load_robot("puma560")
    qz, qr = puma.poses["qz"], puma.poses["qr"]
    points, tools = plot._geometry(puma, np.array([qz]))
    # published: Puma 560 fkine(qz) translation (0.4521, -0.15005, 0.4318) m (RTB, standard DH)
    np.testing.assert_allclose(points[0, -1], [0.4521, -0.15005, 0.4318], atol=1e-12)
    np.testing.assert_allclose(points[0, -1], puma.fkine(qz)[:3, 3])
    assert plot._layout(points)[0] == 0.0  # base on z = 0, nothing below: floor z = 0
    make(puma, fps=5).finalize(final_run([0.0, 0.2, 0.4], [qz, (qz + qr) / 2, qr], tmp_path))
    assert Image.open(tmp_path / "arm.gif").n_frames == 3  # 0, 0.2, 0.4 s
    assert (tmp_path / "arm.png").is_file()


def test_puma_in_a_diagram(tmp_path, no_ffmpeg):
    path = tmp_path / "move.yaml"
    path.write_text("""
blocksim: 1
robots:
  p560: {model: puma560}
blocks:
  traj: {type: jtraj, q0: p560.qz, qf: p560.qr, tf: 0.5}
  plot: {type: plot_robot, robot: p560, fps: 4}
wires: [traj.q -> plot.q]
simulation: {stop: 0.5}
""")
    result = blocksim.run(path, out=tmp_path / "run", plots=True)
    assert not [m for m in result.messages if "warning" in m]
    assert Image.open(tmp_path / "run" / "plot.gif").n_frames == 3  # 0, 0.25, 0.5 s
    assert (tmp_path / "run" / "plot.png").is_file()
