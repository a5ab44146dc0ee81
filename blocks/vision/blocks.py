"""Vision blocks: `camera` (pinhole projection, visibility report, camera-view animation),
`image_jacobian` (point-feature interaction matrix) and `ibvs` (the IBVS control law).

They share the intrinsic parameters f (m), scale = [ax, ay] (px/m) and principal = [u0, v0]
(px), i.e. focal lengths fx = f·ax, fy = f·ay in pixels. Features are (p, 2) arrays of pixel
positions (u, v), flattened row by row (u1, v1, u2, v2, ...) wherever a vector is needed.
"""

import numpy as np

from blocksim.accel.lowering import LowerContext, Lowering, needs_lapack
from blocksim.util.atomic import atomic_path
from blocksim.block import Block, In, Out, PortError
from blocksim.errors import SimulationError
from blocksim.params import Param, ParamError
from blocks.animation import Clock, frame_times, write_animation
from blocks.vision.camera import CentralCamera
from blocks.vision.features import interaction_matrix
from blocks.vision.ibvs import IBVS

INTRINSICS = (
    Param("f", "scalar", doc="focal length (m)", positive=True),
    Param("scale", doc="[ax, ay] pixels per metre on the sensor (px/m)", positive=True),
    Param("principal", doc="[u0, v0] principal point (px)"),
)
DEPTH = Param("depth", doc="assumed depth Z (m): one value, or one per point", positive=True)

# Camera view: at most this many frames (a long run gets fewer frames per second, so that
# animation time stays simulation time), drawn small to keep the GIF small.
VIEW_INCHES, VIEW_DPI = 6.4, 100  # the image's long side: 640 px (animation.MIN_SIDE)
CLOCK = "t = {:.2f} s"


def _pair(p, name):
    value = getattr(p, name)
    if value.shape != (2,):
        raise ParamError(name, f"expected two values [x, y], got shape {value.shape}")
    return float(value[0]), float(value[1])


def _focal(p):
    """(fx, fy, u0, v0) in pixels from the parameters f, scale, principal."""
    ax, ay = _pair(p, "scale")
    u0, v0 = _pair(p, "principal")
    return p.f * ax, p.f * ay, u0, v0


def _rows(p, name, columns):
    value = getattr(p, name)
    if value.ndim != 2 or value.shape[1] != columns or value.shape[0] == 0:
        raise ParamError(name, f"expected a (p, {columns}) array, one row per point, "
                               f"got shape {value.shape}")
    return value


def _depth(p, points):
    """The depth parameter: a scalar, or (p,) when the number of points p is known."""
    depth = p.depth
    if depth.ndim > 1 or (points is not None and depth.shape not in ((), (points,))):
        want = "a scalar" + (f" or {points} values (one per point)" if points else " or a vector")
        raise ParamError("depth", f"expected {want}, got shape {depth.shape}")
    return depth


class Camera(Block):
    """Pinhole camera looking at fixed world points from pose T: uv (p,2) in pixels.

    (X, Y, Z) = T⁻¹·P is a point P in the camera frame (z along the optical axis, x towards
    increasing u, y towards increasing v, i.e. image down), and

        u = u0 + f·ax·X/Z,    v = v0 + f·ay·Y/Z      (px)

    Input T (4,4): the camera pose in the world. Output uv (p,2): one row (u, v) per point.
    A point with Z <= 0 (at or behind the camera) has no image: the run stops with an error.
    Points outside the image (0 <= u <= w, 0 <= v <= h) are projected normally; after the
    run meta.json reports for each point whether it left the image (or went behind the
    camera), the first time it did and the fraction of the time it spent out of view
    (trapezoidal rule over the recorded samples); the points whose going behind the camera
    stopped the run are marked so (behind_camera, from the failure's time).

    view: true draws the "camera view" after the run (unless plots are off): the image
    plane (v down, as in an image), the current features (dots), their trails and the
    `desired` features (hollow squares; a parameter used for drawing only) into
    `<block>.gif` (and `.mp4` when the run asks for MP4 and ffmpeg is installed) and the
    final frame into `<block>.png`; a subsystem block's `/` becomes `.` in the file names.
    Animation time is simulation time: the recording is resampled at `fps` frames per simulated
    second, or at fps/2, fps/3, ... (shown in the title) when that would exceed 300 frames.
    """

    type = "camera"
    records_inputs = True
    params = INTRINSICS + (
        Param("size", doc="[w, h] image width and height (px)", positive=True),
        Param("points", doc="(p,3) world points (m), one per row"),
        Param("view", "bool", False, "draw the camera view after the run"),
        Param("desired", "value", (), "(p,2) desired features drawn in the view (px)"),
        Param("fps", "scalar", 25.0, "camera-view frames per simulated second", positive=True),
    )

    _values = ("points", "f", "scale", "principal", "size", "desired")

    def __init__(self, name, params):
        super().__init__(name, params)
        self._p = len(self._camera(self.p)[0])
        self.values_changed()
        self._compiled_behind = None  # the points behind it when a compiled run failed

    def _camera(self, p):
        """(points (p, 3), the CentralCamera, desired features or None) of parameters `p`,
        checked."""
        points = _rows(p, "points", 3)
        cam = CentralCamera(p.f, _pair(p, "scale"), _pair(p, "principal"), _pair(p, "size"))
        desired = None
        if p.desired.size:
            desired = _rows(p, "desired", 2)
            if len(desired) != len(points):
                raise ParamError("desired", f"{len(desired)} desired features for "
                                            f"{len(points)} points")
        return points, cam, desired

    def values_changed(self):
        _, self._cam, self._desired = self._camera(self.p)

    # run data: the points, the focal lengths fx, fy and the principal point (px); compiled
    # code notes the points behind the camera when the run failed (W_behind)
    def declare(self, d):
        d.derived("points", (self._p, 3))
        d.derived("focal", (2,))
        d.derived("centre", (2,))
        d.value(*self._values)
        d.work("behind", self._p)

    def derive(self, p):
        points, cam, _ = self._camera(p)
        return {"points": points, "focal": [cam.fx, cam.fy], "centre": [cam.u0, cam.v0]}

    def ports(self):
        return ([In("T", shape=(4, 4), doc="camera pose in the world")],
                [Out("uv", shape=(self._p, 2), doc="feature positions (px)")])

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        T = u[0]
        self._R, self._t = T[:3, :3], T[:3, 3]
        self._points = self.v.points
        self._offset = np.empty_like(self._points)
        self._pc = np.empty_like(self._points)
        self._xy, self._z = self._pc[:, :2], self._pc[:, 2:]
        self._uv = y[0]

    def output(self, t):
        # P_c = Rᵀ·(P − t), row-wise (P − t)·R; then uv = centre + focal·(X, Y)/Z.
        np.subtract(self._points, self._t, out=self._offset)
        np.matmul(self._offset, self._R, out=self._pc)
        if self._z.min() <= 0.0:
            self._behind(t)
        np.divide(self._xy, self._z, out=self._uv)
        self._uv *= self.v.focal
        self._uv += self.v.centre

    # compiled: (P - t) @ R is numpy's matmul of the (p, 3) offsets and the rotation part of
    # the input (row stride 4): its gemm
    def lower(self, c):
        p = self._p
        return Lowering({"output": (
            f"double offset[{3 * p}], pc[{3 * p}];\n"
            + c.loop(3 * p, "offset[i] = P_points[i] - in_T[3 + 4 * (i % 3)];") + "\n"
            f"rt_matmul_ex(offset, 3, 1, in_T, 4, 1, {p}, 3, 3, pc);\n"
            "int behind = 0, nan = 0;\n"
            + c.loop(p, "if (isnan(pc[3 * i + 2])) nan = 1; else if (pc[3 * i + 2] <= 0.0) "
                        "behind = 1;") + "\n"
            "if (behind && !nan) { char which[512] = \"\"; int used = 0;\n"
            + c.loop(p, "W_behind[i] = pc[3 * i + 2] <= 0.0;") + "\n"
            + c.loop(p, "if (pc[3 * i + 2] <= 0.0 && used < 400) used += snprintf(which + used, "
                        "sizeof which - used, \"%s%d (Z = %.3g m)\", used ? \", \" : \"\", i, "
                        "pc[3 * i + 2]);")
            + '\nFAIL("point(s) %s at or behind the camera: no image", which); return; }\n'
            + c.loop(p, f"out_uv[2 * i] = pc[3 * i] / pc[3 * i + 2]; "
                        f"out_uv[2 * i + 1] = pc[3 * i + 1] / pc[3 * i + 2]; "
                        "out_uv[2 * i] *= P_focal[0]; out_uv[2 * i + 1] *= P_focal[1]; "
                        "out_uv[2 * i] += P_centre[0]; out_uv[2 * i + 1] += P_centre[1];"))})

    def compiled_work(self, work):
        self._compiled_behind = np.flatnonzero(work.behind).tolist()

    def _behind(self, t):
        z = self._z[:, 0]
        bad = np.flatnonzero(z <= 0.0)
        which = ", ".join(f"{i} (Z = {z[i]:.3g} m)" for i in bad)
        error = SimulationError(f"point(s) {which} at or behind the camera: no image",
                                block=self.name, port="uv", time=t)
        error.points_behind = bad.tolist()  # for the visibility report (finalize)
        raise error

    # ---- after the run -------------------------------------------------------------------
    def finalize(self, run):
        t = np.asarray(run.t, dtype=float)
        poses = np.asarray(run.inputs[0], dtype=float).reshape(len(t), 4, 4)
        uv, hidden = self._replay(poses)
        report = visibility_report(t, hidden)
        self._behind_at_failure(run.error, report)
        report["image_size"] = list(self._cam.size)
        run.reports[self.name] = report
        gone = [(i, pt) for i, pt in enumerate(report["points"]) if pt["left_image"]]
        if gone:
            run.messages.append(f"{self.name}: " + "; ".join(
                f"point {i} behind the camera at t = {pt['first_outside']:.4g} s (the run "
                "stopped there)" if pt.get("behind_camera") and not pt["fraction_outside"]
                else f"point {i} out of view from t = {pt['first_outside']:.4g} s "
                     f"({100 * pt['fraction_outside']:.3g}% of the time)" for i, pt in gone))
        if self.p.view and run.plots and run.out_dir is not None and len(t):
            self._draw_view(run, t, uv)

    def _behind_at_failure(self, error, report):
        """The run ended because points went behind this camera, at an instant that no
        recorded row holds: the report says so (left_image, first_outside = the failure's
        time, behind_camera), so that it agrees with the error."""
        behind = getattr(error, "points_behind", self._compiled_behind)
        if behind is None or getattr(error, "block", None) != self.name:
            return
        report["all_visible"] = False
        for i in behind:
            point = report["points"][i]
            point["left_image"] = True
            point["behind_camera"] = True
            if point["first_outside"] is None:
                point["first_outside"] = float(error.time)

    def _replay(self, poses):
        """Projections of the points from a sequence of poses (N,4,4): uv (N,p,2) and the
        (N,p) mask of points out of view (behind the camera or outside the image)."""
        n, p = len(poses), self._p
        pc = (self.v.points - poses[:, None, :3, 3]) @ poses[:, :3, :3]
        uv, vis = self._cam.project_camera_frame(pc.reshape(n * p, 3))
        return uv.reshape(n, p, 2), ~vis.visible.reshape(n, p)

    def _draw_view(self, run, t, uv):
        times, rate = frame_times(t, self.p.fps)
        heading = self.name + (f"  ({rate:g} fps)" if rate != self.p.fps else "") + \
            ("  (incomplete)" if not run.complete else "")
        draw = self._view_frames(t, uv, times, heading)
        base = run.out_dir / self.name.replace("/", ".")
        last = write_animation(run, base, draw, times, rate, self.name)
        from PIL import Image

        with atomic_path(f"{base}.png") as tmp:
            Image.fromarray(last).save(tmp)

    def _view_frames(self, t, uv, times, heading):
        """draw(k): the camera-view frame at times[k], an RGBA (H, W, 4) uint8 view of the
        canvas that the next call overwrites: features interpolated linearly between the
        recorded samples, trails through every recorded sample so far. The image plane,
        desired features, heading and the room for the clock (the right-hand title) are laid
        out and drawn once; each frame restores them and draws only the features, trails and
        clock (blitting)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        w, h = self._cam.size
        fig = Figure(figsize=_view_size(w, h), dpi=VIEW_DPI, layout="constrained")
        canvas = FigureCanvasAgg(fig)
        ax = fig.subplots()
        ax.set_xlim(0, w)
        ax.set_ylim(h, 0)  # v points down, as in an image
        ax.set_aspect("equal")
        ax.set_xlabel("u (px)", fontsize=7)
        ax.set_ylabel("v (px)", fontsize=7)
        ax.tick_params(labelsize=6)
        ax.set_title(heading, loc="left", fontsize=8)
        clock = Clock(ax.set_title(Clock.widest(CLOCK, times), loc="right", fontsize=8,
                                   alpha=0.0), CLOCK)
        colours = [f"C{i % 10}" for i in range(uv.shape[1])]
        if self._desired is not None:
            for (du, dv), c in zip(self._desired, colours):
                ax.plot(du, dv, "s", mfc="none", mec=c, ms=8)
        trails = [ax.plot([], [], "-", lw=1, color=c, animated=True)[0] for c in colours]
        marks = [ax.plot([], [], "o", color=c, ms=5, animated=True)[0] for c in colours]
        paths = uv.transpose(1, 0, 2)  # (p, N, 2)
        now = np.stack([[np.interp(times, t, path[:, c]) for c in (0, 1)] for path in paths])
        canvas.draw()
        fig.set_layout_engine("none")  # the layout made for the clock's room stays
        clock.place(canvas)
        background = canvas.copy_from_bbox(fig.bbox)
        frame = np.asarray(canvas.buffer_rgba())

        def draw(k):
            tk = times[k]
            canvas.restore_region(background)
            m = np.searchsorted(t, tk, side="right")
            for trail, mark, path, (u, v) in zip(trails, marks, paths, now[:, :, k]):
                trail.set_data(np.append(path[:m, 0], u), np.append(path[:m, 1], v))
                mark.set_data([u], [v])
                ax.draw_artist(trail)
                ax.draw_artist(mark)
            clock.stamp(frame, tk)
            return frame
        return draw


def _view_size(w, h):
    """Figure size (in) for a w x h image: its long side VIEW_INCHES, plus room for labels,
    rounded to even pixel counts (video encoders need them)."""
    s = VIEW_INCHES / max(w, h)
    return tuple(2 * round((x * s + 0.7) * VIEW_DPI / 2) / VIEW_DPI for x in (w, h))


def visibility_report(t, hidden):
    """JSON-able per-point summary of an (N,p) out-of-view mask sampled at times t (N,):
    left_image, first_outside (s, or None) and fraction_outside, the share of [t0, tN] out
    of view by the trapezoidal rule (the share of samples when the run has no duration)."""
    t = np.asarray(t, dtype=float)
    weights = np.zeros(len(t))
    if len(t) > 1:
        steps = np.diff(t) / 2
        weights[:-1] += steps
        weights[1:] += steps
    total = weights.sum()
    points = []
    for out in np.asarray(hidden, dtype=bool).T:
        if total > 0:
            fraction = float(weights @ out / total)
        else:
            fraction = float(out.mean()) if len(out) else 0.0
        points.append({"left_image": bool(out.any()),
                       "first_outside": float(t[np.argmax(out)]) if out.any() else None,
                       "fraction_outside": fraction})
    return {"all_visible": not any(pt["left_image"] for pt in points), "points": points}


class ImageJacobian(Block):
    """Point-feature interaction matrix L (2p,6) of features uv (p,2): d(uv)/dt = L · v_cam.

    v_cam = [v; ω] is the camera velocity in the camera frame (m/s, rad/s), the points fixed
    in the world; rows are ordered u1, v1, u2, v2, ... With ū = u − u0, v̄ = v − v0, depth Z:

        du/dt = [−fx/Z,  0,     ū/Z,  ū·v̄/fy,       −(fx² + ū²)/fx,  fx·v̄/fy] · v_cam
        dv/dt = [0,     −fy/Z,  v̄/Z,  (fy² + v̄²)/fy,  −ū·v̄/fx,       −fy·ū/fx] · v_cam

    with fx = f·ax, fy = f·ay. depth: the assumed Z (m), one value or one per point.
    """

    type = "image_jacobian"
    params = INTRINSICS + (DEPTH,)

    _values = ("f", "scale", "principal", "depth")

    def __init__(self, name, params):
        super().__init__(name, params)
        self.values_changed()

    def values_changed(self):
        self._fx, self._fy, self._u0, self._v0 = _focal(self.p)
        self._z = _depth(self.p, None)

    def ports(self):
        return [In("uv", doc="features (p,2) (px)")], [Out("L", doc="interaction matrix (2p,6)")]

    def infer(self, shapes):
        uv = shapes["uv"]
        if len(uv) != 2 or uv[1] != 2 or uv[0] == 0:
            raise PortError("uv", f"expected features of shape (p, 2), got {uv}")
        if self._z.shape not in ((), (uv[0],)):
            raise PortError("uv", f"{uv[0]} features but {self._z.shape[0]} depths")
        self._points = uv[0]
        return {"L": (2 * uv[0], 6)}

    def declare(self, d):
        _declare_interaction(d, self._points)
        d.value(*self._values)

    def derive(self, p):
        return _interaction_numbers(p, self._points, _depth(p, self._points))

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._uv, self._L = u[0], y[0]

    def output(self, t):
        self._L[...] = interaction_matrix(self._uv, self._z, self._fx, self._fy, self._u0, self._v0)

    def lower(self, c):
        return Lowering({"output": _c_interaction(c.shape_in["uv"][0], "in_uv", "out_L")})


class Ibvs(Block):
    """Image-based visual servoing: v = gain · pinv(L(uv, depth)) · (desired − uv).

    Input uv (p,2) features (px); output v (6) = [v; ω], the camera velocity demand in the
    camera frame (m/s, rad/s). desired − uv is flattened row by row (u1, v1, u2, v2, ...),
    L is the `image_jacobian` at the current features with the assumed depth (m, one value
    or one per point); pinv(L)·e is the minimum-norm least-squares solution of L·v = e.
    """

    type = "ibvs"
    params = (
        Param("gain", "scalar", doc="λ > 0 (1/s)", positive=True),
        Param("desired", doc="(p,2) desired features (px)"),
    ) + INTRINSICS + (DEPTH,)

    _values = ("gain", "desired", "f", "scale", "principal", "depth")

    def __init__(self, name, params):
        super().__init__(name, params)
        self.values_changed()

    def values_changed(self):
        self._law = self._control(self.p)

    @staticmethod
    def _control(p):
        desired = _rows(p, "desired", 2)
        return IBVS(p.gain, desired, *_focal(p), _depth(p, len(desired)))

    # run data: the interaction matrix's numbers, the gain and the desired features s*
    def declare(self, d):
        points = len(self._law.desired)
        _declare_interaction(d, points)
        d.derived("gain", ())
        d.derived("s_star", (2 * points,))
        d.value(*self._values)

    def derive(self, p):
        law = self._control(p)
        return {**_interaction_numbers(p, len(law.desired), law.depth), "gain": law.gain,
                "s_star": law._s_star}

    def ports(self):
        return ([In("uv", shape=self._law.desired.shape, doc="features (px)")],
                [Out("v", shape=(6,), doc="camera velocity [v; ω] in the camera frame")])

    def bind(self, u, y, x, dx, xd):
        super().bind(u, y, x, dx, xd)
        self._uv, self._v = u[0], y[0]

    def output(self, t):
        self._v[...] = self._law.velocity(self._uv)

    # compiled: L as image_jacobian's, e = s* - uv, v = gain * lstsq(L, e)[0] (numpy's dgelsd)
    def lower(self, c):
        needs_lapack()
        p = len(self._law.desired)
        return Lowering({"output": (
            f"double L[{12 * p}], e[{2 * p}], sol[6];\n" + _c_interaction(p, "in_uv", "L") + "\n"
            + c.loop(2 * p, "e[i] = P_s_star[i] - in_uv[i];") + "\n"
            f"long long info = rt_lstsq(L, {2 * p}, 6, e, sol);\n"
            'if (info != 0) FAIL("%s", info > 0 ? "SVD did not converge in Linear Least '
            'Squares" : "no LAPACK");\n'
            + c.loop(6, "out_v[i] = P_gain[0] * sol[i];"))})


def _declare_interaction(d, points):
    """The run data of interaction_matrix: [fx, fy, u0, v0] and 1/Z per point."""
    d.derived("camera", (4,))
    d.derived("inv_depth", (points,))


def _interaction_numbers(p, points, depth):
    """The numbers of interaction_matrix ([fx, fy, u0, v0], 1/Z per point) of parameters p."""
    return {"camera": _focal(p),
            "inv_depth": np.broadcast_to(1.0 / np.asarray(depth, dtype=float), (points,))}


def _c_interaction(p, uv, L):
    """C of interaction_matrix(uv, depth, fx, fy, u0, v0) into L (2p, 6), its numbers
    (`_interaction_numbers`) in P_camera and P_inv_depth, operation by operation."""
    return LowerContext.loop(p, (
        "double fx = P_camera[0], fy = P_camera[1], iz = P_inv_depth[i], "
        "du = {uv}[2 * i] - P_camera[2], dv = {uv}[2 * i + 1] - P_camera[3]; "
        "double *a = {L} + 12 * i, *b = a + 6; "
        "a[0] = -fx * iz; a[1] = 0.0; a[2] = du * iz; a[3] = du * dv / fy; "
        "a[4] = -(fx + du * du / fx); a[5] = (fx / fy) * dv; "
        "b[0] = 0.0; b[1] = -fy * iz; b[2] = dv * iz; b[3] = fy + dv * dv / fy; "
        "b[4] = -du * dv / fx; b[5] = -(fy / fx) * du;").format(uv=uv, L=L))
