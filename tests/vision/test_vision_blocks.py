"""Vision blocks (camera, image_jacobian, ibvs) through the block contract: outputs against
the library and hand values, shapes and errors, the camera's visibility report and view."""
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from blocks.animation import frame_times
from blocks.vision.blocks import Camera, Ibvs, ImageJacobian, visibility_report
from blocks.vision.features import interaction_matrix
from blocksim.block import FinalRun, PortError
from blocksim.errors import SimulationError
from blocksim.language.library import Library
from blocksim.params import ParamError
from vision_helpers import ASYM_CAMERA, DEMO6_CAMERA, DEMO6_POINTS, R_PUMA_Q0, demo6_camera, pose, rot

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "blocks"))  # the block test rig
from harness import Rig  # noqa: E402

SPEC = Path(__file__).resolve().parents[1] / "data" / "spec_blocks.md"  # blocks.md's tables

INTRINSICS = {k: list(v) if isinstance(v, tuple) else v for k, v in ASYM_CAMERA.items()
              if k != "size"}  # fx = 1000 px, fy = 500 px, (u0, v0) = (320, 240)
CAMERA = dict(INTRINSICS, size=list(ASYM_CAMERA["size"]))  # 640 x 480
# demos.md, demo6: desired features.
DEMO6_DESIRED = [[256, 456], [456, 456], [456, 256], [256, 256]]

R_ANY = rot(np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8]), 1.1)
T_ANY = pose(R_ANY, [0.2, -1.0, 0.5])


def world(T, Pc):
    """World coordinates of camera-frame points: P = R·Pc + t (the definition of the pose)."""
    return np.asarray(Pc, dtype=float) @ T[:3, :3].T + T[:3, 3]


def camera_rig(points, **params):
    return Rig(Camera, dict(CAMERA, points=np.asarray(points).tolist(), **params), name="cam")


def final_run(t, poses, out_dir=None, plots=False, complete=True, mp4=False):
    return FinalRun(t=np.asarray(t, dtype=float), inputs=[np.asarray(poses)], out_dir=out_dir,
                    plots=plots, complete=complete, messages=[], reports={}, mp4=mp4)


# ---- camera ------------------------------------------------------------------------------

def test_camera_hand_values_through_the_block():
    # Camera-frame points: on the optical axis at 0.5 m and 7 m -> the principal point;
    # (0.1, -0.05, 2) -> u = 320 + 1000·0.1/2 = 370, v = 240 + 500·(−0.05)/2 = 227.5.
    Pc = [[0.0, 0.0, 0.5], [0.0, 0.0, 7.0], [0.1, -0.05, 2.0]]
    rig = camera_rig(world(T_ANY, Pc)).set(T=T_ANY)
    np.testing.assert_allclose(rig.out(), [[320, 240], [320, 240], [370, 227.5]], atol=1e-9)


def test_camera_matches_library_projection_for_demo6():
    cam = dict(DEMO6_CAMERA, points=DEMO6_POINTS.tolist())
    rig = Rig(Camera, {k: list(v) if isinstance(v, tuple) else v for k, v in cam.items()})
    for T in (pose(R_PUMA_Q0, [0.5, 0.0, 0.0]), pose(R_PUMA_Q0 @ rot([0, 1, 0], 0.2), [0.3, 0.1, 0.2])):
        expected, info = demo6_camera().project(DEMO6_POINTS, T)
        assert info.visible.all()
        np.testing.assert_allclose(rig.set(T=T).out(), expected, rtol=1e-12)


def test_camera_ports_and_outside_points_are_computed():
    rig = camera_rig(world(T_ANY, [[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]]))
    (T_in,), (uv_out,) = rig.block.ports()
    assert (T_in.name, T_in.shape, uv_out.name, uv_out.shape) == ("T", (4, 4), "uv", (2, 2))
    # 320 + 1000·1/1 = 1320 > w = 640: outside, but still the true projection.
    np.testing.assert_allclose(rig.set(T=T_ANY).out()[0], [1320, 240], atol=1e-9)
    with pytest.raises(PortError) as e:  # the compiler checks declared shapes the same way
        Rig(Camera, dict(CAMERA, points=[[0, 0, 1]]), {"T": (3, 3)})
    assert e.value.port == "T"


@pytest.mark.parametrize("z", [0.0, -1.5])
def test_point_at_or_behind_the_camera_stops_the_run(z):
    rig = camera_rig(world(T_ANY, [[0.0, 0.0, 2.0], [0.1, 0.2, z]])).set(T=T_ANY)
    with pytest.raises(SimulationError) as e:
        rig.outputs(t=1.25)
    err = e.value
    assert (err.block, err.port, err.time) == ("cam", "uv", 1.25)
    assert "point(s) 1 " in err.message and "behind the camera" in err.message


@pytest.mark.parametrize("params, bad", [
    ({"points": [0.0, 0.0, 1.0]}, "points"),  # not (p, 3)
    ({"points": [[0.0, 0.0]]}, "points"),
    ({"scale": [1e5, 1e5, 1e5]}, "scale"),
    ({"scale": [1e5, -1e5]}, "scale"),
    ({"principal": 3.0}, "principal"),
    ({"size": [640, 0]}, "size"),
    ({"f": 0.0}, "f"),
    ({"desired": [[1.0, 2.0]]}, "desired"),  # one desired feature for two points
    ({"desired": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]}, "desired"),
    ({"fps": 0}, "fps"),
])
def test_camera_parameter_errors(params, bad):
    with pytest.raises(ParamError) as e:
        Rig(Camera, {**CAMERA, "points": [[0, 0, 1], [0.1, 0, 1]], **params})
    assert e.value.param == bad


# ---- visibility report -------------------------------------------------------------------

def sideways_run():
    """Camera axes = world axes, moving along world x by −0.6·t over t = 0..1 (11 samples).
    Point 0 at (0, 0, 2): u = 320 + 1000·(0 + 0.6t)/2 = 320 + 300t <= 620, always inside.
    Point 1 at (0.25, 0, 2): u = 445 + 300t > 640 from t = 0.65, i.e. outside at the
    samples 0.7, 0.8, 0.9, 1.0. Trapezoid weights 0.05 at the ends, 0.1 inside: the time
    outside is 0.1 + 0.1 + 0.1 + 0.05 = 0.35 of the 1 s run."""
    t = np.linspace(0.0, 1.0, 11)
    poses = np.array([pose(np.eye(3), [-0.6 * tk, 0.0, 0.0]) for tk in t])
    return t, poses, [[0.0, 0.0, 2.0], [0.25, 0.0, 2.0]]


def test_report_when_a_point_leaves_the_image():
    t, poses, points = sideways_run()
    rig = camera_rig(points)
    run = final_run(t, poses)
    rig.block.finalize(run)
    report = json.loads(json.dumps(run.reports["cam"]))  # JSON-able as meta.json needs
    assert report["all_visible"] is False
    assert report["image_size"] == [640, 480]
    inside, leaving = report["points"]
    assert inside == {"left_image": False, "first_outside": None, "fraction_outside": 0.0}
    assert leaving["left_image"] is True
    assert leaving["first_outside"] == pytest.approx(0.7)
    assert leaving["fraction_outside"] == pytest.approx(0.35)
    assert len(run.messages) == 1 and "point 1 out of view from t = 0.7 s" in run.messages[0]


def test_report_all_visible_and_empty_recording():
    t, poses, points = sideways_run()
    rig = camera_rig(points[:1])
    run = final_run(t, poses)
    rig.block.finalize(run)
    assert run.reports["cam"]["all_visible"] is True and run.messages == []
    empty = final_run([], np.zeros((0, 4, 4)))
    rig.block.finalize(empty)
    assert empty.reports["cam"]["points"] == [
        {"left_image": False, "first_outside": None, "fraction_outside": 0.0}]


def test_report_counts_points_behind_the_camera_as_out_of_view():
    # The mask comes from the recorded poses; a pose with the point behind the camera
    # (recorded e.g. by a run that failed there) counts as out of view.
    rig = camera_rig([[0.0, 0.0, 2.0]])
    poses = [pose(np.eye(3), [0.0, 0.0, 0.0]), pose(np.eye(3), [0.0, 0.0, 3.0])]
    run = final_run([0.0, 2.0], poses, complete=False)
    rig.block.finalize(run)
    # Out of view at the last of two samples, which carries half of the 2 s step: 1 s of 2.
    assert run.reports["cam"]["points"] == [
        {"left_image": True, "first_outside": 2.0, "fraction_outside": 0.5}]


def test_visibility_report_with_a_single_sample_uses_the_sample_share():
    report = visibility_report([3.0], np.array([[True, False]]))
    assert [pt["fraction_outside"] for pt in report["points"]] == [1.0, 0.0]
    assert report["points"][0]["first_outside"] == 3.0


# ---- camera view ---------------------------------------------------------------------------

def test_frame_times_keep_animation_time_equal_to_simulation_time():
    times, rate = frame_times(np.array([0.0, 0.2]), 25, 300)
    np.testing.assert_allclose(times, [0, 0.04, 0.08, 0.12, 0.16, 0.2])  # 0.2 s · 25 + 1
    assert rate == 25
    # 100 s at 25 fps would be 2501 frames: rate 25/9 (25/8 gives 313 > 300) on the grid
    # 1 + i·0.36 s up to 100.72 s (278 frames), then the end, 101 s.
    times, rate = frame_times(np.array([1.0, 101.0]), 25, 300)
    assert rate == 25 / 9 and len(times) == 279
    np.testing.assert_allclose(np.diff(times[:-1]), 0.36)
    assert times[-2] == pytest.approx(100.72) and times[-1] == 101.0
    times, rate = frame_times(np.array([2.0]), 25, 300)
    assert times.tolist() == [2.0] and rate == 25


def test_camera_view_writes_gif_and_png(tmp_path, monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: None)  # no ffmpeg: GIF with pillow
    t, poses, points = sideways_run()
    rig = Rig(Camera, dict(CAMERA, points=points, view=True, fps=10,
                           desired=[[320, 240], [420, 240]]), name="sub/cam")
    rig.block.finalize(final_run(t, poses, out_dir=tmp_path, plots=True))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sub.cam.gif", "sub.cam.png"]
    with Image.open(tmp_path / "sub.cam.gif") as gif:
        assert gif.n_frames == 11  # 1 s at 10 frames per second, both ends
        assert gif.info["duration"] == 100  # ms: one frame per 0.1 s of simulation
        assert 640 <= max(gif.size) <= 800  # legible: animation.MIN_SIDE on the long side
    with Image.open(tmp_path / "sub.cam.png") as png:
        assert png.size == gif.size


def test_camera_view_pipes_frames_to_ffmpeg_when_asked(tmp_path, stand_in_ffmpeg):
    # A stand-in ffmpeg records what it was given: bytes on stdin, frame size and rate.
    stand_in_ffmpeg("a = sys.argv[1:]\n"
                    "n = len(sys.stdin.buffer.read())\n"
                    "open(a[-1], 'w').write(f\"{n} {a[a.index('-s') + 1]} {a[a.index('-r') + 1]}\")\n")
    out = tmp_path / "run"
    t, poses, points = sideways_run()
    rig = Rig(Camera, dict(CAMERA, points=points, view=True, fps=10), name="cam")
    rig.block.finalize(final_run(t, poses, out_dir=out, plots=True, mp4=True))
    assert sorted(p.name for p in out.iterdir()) == ["cam.gif", "cam.mp4", "cam.png"]
    with Image.open(out / "cam.png") as png:
        w, h = png.size
    assert w % 2 == 0 and h % 2 == 0  # yuv420p needs even sizes
    assert (out / "cam.mp4").read_text() == f"{11 * w * h * 4} {w}x{h} 10"  # 11 RGBA frames
    # not asked for: no MP4, though ffmpeg is there
    rig.block.finalize(final_run(t, poses, out_dir=tmp_path / "gif", plots=True))
    assert sorted(p.name for p in (tmp_path / "gif").iterdir()) == ["cam.gif", "cam.png"]


@pytest.mark.parametrize("view, plots, out", [(True, False, True), (False, True, True),
                                              (True, True, False)])
def test_camera_view_draws_nothing_unless_asked(tmp_path, view, plots, out):
    t, poses, points = sideways_run()
    rig = camera_rig(points, view=view)
    run = final_run(t, poses, out_dir=tmp_path if out else None, plots=plots)
    rig.block.finalize(run)
    assert list(tmp_path.iterdir()) == []
    assert "cam" in run.reports  # the report does not depend on plotting


# ---- image_jacobian --------------------------------------------------------------------------

def test_image_jacobian_matches_library_and_infers_shape():
    uv = np.array([[100.0, 50.0], [400.0, 300.0], [320.0, 240.0]])
    depth = [0.8, 1.5, 3.0]
    rig = Rig(ImageJacobian, dict(INTRINSICS, depth=depth), {"uv": (3, 2)})
    assert rig.out_shapes == {"L": (6, 6)}
    expected = interaction_matrix(uv, np.array(depth), 1000.0, 500.0, 320.0, 240.0)
    np.testing.assert_allclose(rig.set(uv=uv).out(), expected, rtol=1e-12)


def test_image_jacobian_at_the_principal_point_by_hand():
    # ū = v̄ = 0, Z = 2: u row [−fx/Z, 0, 0, 0, −fx, 0], v row [0, −fy/Z, 0, fy, 0, 0].
    rig = Rig(ImageJacobian, dict(INTRINSICS, depth=2.0), {"uv": (1, 2)}).set(uv=[[320, 240]])
    np.testing.assert_allclose(rig.out(), [[-500, 0, 0, 0, -1000, 0], [0, -250, 0, 500, 0, 0]])


@pytest.mark.parametrize("uv, depth", [((8,), 2.0), ((4, 3), 2.0), ((0, 2), 2.0),
                                       ((4, 2), [1.0, 2.0, 3.0])])
def test_image_jacobian_input_errors(uv, depth):
    with pytest.raises(PortError) as e:
        Rig(ImageJacobian, dict(INTRINSICS, depth=depth), {"uv": uv})
    assert e.value.port == "uv"


@pytest.mark.parametrize("params, bad", [({"depth": [[1.0, 2.0]]}, "depth"),
                                         ({"depth": -1.0}, "depth"),
                                         ({"principal": [1, 2, 3]}, "principal")])
def test_image_jacobian_parameter_errors(params, bad):
    with pytest.raises(ParamError) as e:
        Rig(ImageJacobian, {**INTRINSICS, "depth": 2.0, **params}, {"uv": (4, 2)})
    assert e.value.param == bad


# ---- ibvs ----------------------------------------------------------------------------------

@pytest.mark.parametrize("depth", [2.0, [1.0, 1.5, 2.5, 0.8]])
def test_ibvs_is_gain_times_explicit_pseudo_inverse(depth):
    uv = np.array([[200.0, 300.0], [350.0, 220.0], [260.0, 120.0], [100.0, 100.0]])
    rig = Rig(Ibvs, dict(INTRINSICS, gain=0.1, desired=DEMO6_DESIRED, depth=depth))
    assert rig.out_shapes == {"v": (6,)}
    L = interaction_matrix(uv, np.asarray(depth), 1000.0, 500.0, 320.0, 240.0)
    expected = 0.1 * np.linalg.pinv(L) @ (np.array(DEMO6_DESIRED) - uv).reshape(-1)
    np.testing.assert_allclose(rig.set(uv=uv).out(), expected, rtol=1e-9, atol=1e-15)


def test_ibvs_zero_velocity_at_the_goal_and_declared_input_shape():
    rig = Rig(Ibvs, dict(INTRINSICS, gain=0.5, desired=DEMO6_DESIRED, depth=2.0))
    (uv_in,), _ = rig.block.ports()
    assert (uv_in.name, uv_in.shape) == ("uv", (4, 2))
    np.testing.assert_array_equal(rig.set(uv=DEMO6_DESIRED).out(), np.zeros(6))
    with pytest.raises(PortError) as e:
        Rig(Ibvs, dict(INTRINSICS, gain=0.5, desired=DEMO6_DESIRED, depth=2.0), {"uv": (3, 2)})
    assert e.value.port == "uv"


@pytest.mark.parametrize("params, bad", [({"desired": [256, 456]}, "desired"),
                                         ({"desired": [[1, 2, 3]]}, "desired"),
                                         ({"depth": [1.0, 2.0]}, "depth"),
                                         ({"gain": 0.0}, "gain"),
                                         ({"scale": 8e4}, "scale")])
def test_ibvs_parameter_errors(params, bad):
    with pytest.raises(ParamError) as e:
        Rig(Ibvs, {**INTRINSICS, "gain": 0.1, "desired": DEMO6_DESIRED, "depth": 2.0, **params})
    assert e.value.param == bad


# ---- the contract: catalogue and blocks.md ---------------------------------------------------

def vision_rows():
    """(type, param names, {input: cell}, {output: cell}) of blocks.md's Vision table."""
    section = SPEC.read_text().split("## Vision", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().split("|")[1:-1]]
        if len(cells) == 5 and cells[0].startswith("`"):
            params = re.split(r",\s*(?![^\[\(]*[\]\)])", cells[1].strip("`"))
            ports = [dict(re.findall(r"`(\w+) \(([^)]*)\)`", c)) for c in cells[2:4]]
            rows.append((cells[0].strip("`"), [re.match(r"\w+", p).group() for p in params], *ports))
    return rows


def test_vision_blocks_follow_blocks_md():
    rows = vision_rows()
    assert [r[0] for r in rows] == ["camera", "image_jacobian", "ibvs"]
    library = Library()
    for type_name, params, inputs, outputs in rows:
        cls = library.block_class(type_name)
        assert cls in (Camera, ImageJacobian, Ibvs) and cls.type == type_name and cls.__doc__
        names = [p.name for p in cls.params]
        assert names[:len(params)] == params  # extras (camera: desired, fps) come after
        if type_name == "camera":
            assert not cls.params[names.index("view")].default
            block = Rig(cls, dict(CAMERA, points=[[0, 0, 1]] * 3)).block
        elif type_name == "ibvs":
            block = Rig(cls, dict(INTRINSICS, gain=1, desired=[[0, 0]] * 3, depth=1)).block
        else:
            block = Rig(cls, dict(INTRINSICS, depth=1), {"uv": (3, 2)}).block
        ins, outs = block.ports()
        assert [p.name for p in ins] == list(inputs) and [p.name for p in outs] == list(outputs)
