"""Homogeneous-transform blocks: build a transform from scalars and take one apart.

Each block computes, with scalar arithmetic on its 4x4 input, the same numbers as the
function of `blocks.robot.transforms` it is named after (release-7 names, seed 000
conventions); angles in radians, lengths in metres.
"""
import math

from blocksim.accel.lowering import Lowering
from blocksim.block import Block, In, Out

_LAST_ROW = (0.0, 0.0, 0.0, 1.0)
_SINGULAR = 16 * 2.220446049250313e-16  # 16 eps: the transforms module's singularity threshold


def _transform(R, x=0.0, y=0.0, z=0.0):
    """Nested rows of [[R, p], [0, 0, 0, 1]] for a 3x3 rotation given as three row tuples."""
    return ((R[0][0], R[0][1], R[0][2], x), (R[1][0], R[1][1], R[1][2], y),
            (R[2][0], R[2][1], R[2][2], z), _LAST_ROW)


# ---- compiled forms (accelerated mode): the same scalar arithmetic in C, whose cos, sin,
# atan2 are the C library's, as Python's math module's; hypot only decides the singular
# case (below 16 eps), where C's and Python's may differ in the last bit.
def _c_transform(R, p=("0.0", "0.0", "0.0")):
    """C writing [[R, p], [0, 0, 0, 1]] into out_T, R as three rows of C expressions."""
    rows = [(*R[k], p[k]) for k in range(3)] + [("0.0", "0.0", "0.0", "1.0")]
    return " ".join(f"out_T[{4 * i + j}] = {e};" for i, row in enumerate(rows)
                    for j, e in enumerate(row))


_C_TRIG = ("double {0} = in_{3}[0], {1} = in_{4}[0], {2} = in_{5}[0]; "
           "double c{0} = cos({0}), s{0} = sin({0}), c{1} = cos({1}), s{1} = sin({1}), "
           "c{2} = cos({2}), s{2} = sin({2});\n")
_C_ELEMENTS = "const double *T = in_T; double r11 = T[0], r12 = T[1], r13 = T[2], " \
              "r21 = T[4], r22 = T[5], r23 = T[6], r31 = T[8], r33 = T[10]; " \
              "(void)r12; (void)r22; (void)r31; (void)r33;\n"


class Xyz2Tr(Block):
    """T = transl(x, y, z): the pure translation [[I, p], [0, 0, 0, 1]], p = [x, y, z] (m).

    Inputs x, y, z scalars; output T (4, 4).
    """

    type = "xyz2tr"

    def ports(self):
        return ([In("x", shape=()), In("y", shape=()), In("z", shape=())],
                [Out("T", shape=(4, 4))])

    def output(self, t):
        x, y, z = self.u
        self.y[0][...] = ((1.0, 0.0, 0.0, float(x)), (0.0, 1.0, 0.0, float(y)),
                          (0.0, 0.0, 1.0, float(z)), _LAST_ROW)

    def lower(self, c):
        eye = (("1.0", "0.0", "0.0"), ("0.0", "1.0", "0.0"), ("0.0", "0.0", "1.0"))
        return Lowering({"output": _c_transform(eye, ("in_x[0]", "in_y[0]", "in_z[0]"))})


class Tr2Xyz(Block):
    """Translation part of T = [[R, p], [0, 0, 0, 1]]: x, y, z = p (scalars) and p (3,) (m).

    Input T (4, 4); outputs x, y, z (scalars) and p (3).
    """

    type = "tr2xyz"

    def ports(self):
        return ([In("T", shape=(4, 4))],
                [Out("x", shape=()), Out("y", shape=()), Out("z", shape=()), Out("p", shape=(3,))])

    def output(self, t):
        T = self.u[0]
        x, y, z, p = self.y
        x[()] = T[0, 3]
        y[()] = T[1, 3]
        z[()] = T[2, 3]
        p[...] = T[:3, 3]

    def lower(self, c):
        return Lowering({"output": "out_x[0] = in_T[3]; out_y[0] = in_T[7]; out_z[0] = in_T[11]; "
                                   "out_p[0] = in_T[3]; out_p[1] = in_T[7]; out_p[2] = in_T[11];"})


class Tr2Diff(Block):
    """Differential motion d (6) between poses T1 and T2, as tr2diff in the Robotics Toolbox.

    As in the Robotics Toolbox for MATLAB, release 7:

        d = [p2 - p1; 1/2 * sum_k c_k(T1) x c_k(T2)],   c_k = k-th column of the rotation,

    whose rotation part is the world-frame rotation vector of R2 R1^T to first order.
    Inputs T1, T2 (4, 4); output d (6) = [dx, dy, dz, delta_x, delta_y, delta_z].
    """

    type = "tr2diff"

    def ports(self):
        return [In("T1", shape=(4, 4)), In("T2", shape=(4, 4))], [Out("d", shape=(6,))]

    def output(self, t):
        a, b = self.u[0].tolist(), self.u[1].tolist()
        wx = wy = wz = 0.0
        for k in range(3):
            ax, ay, az = a[0][k], a[1][k], a[2][k]
            bx, by, bz = b[0][k], b[1][k], b[2][k]
            wx += ay * bz - az * by
            wy += az * bx - ax * bz
            wz += ax * by - ay * bx
        self.y[0][...] = (b[0][3] - a[0][3], b[1][3] - a[1][3], b[2][3] - a[2][3],
                          0.5 * wx, 0.5 * wy, 0.5 * wz)

    def lower(self, c):
        return Lowering({"output": (
            "const double *a = in_T1, *b = in_T2; double wx = 0.0, wy = 0.0, wz = 0.0;\n"
            + c.loop(3, "double ax = a[i], ay = a[4 + i], az = a[8 + i], bx = b[i], "
                        "by = b[4 + i], bz = b[8 + i]; wx += ay * bz - az * by; "
                        "wy += az * bx - ax * bz; wz += ax * by - ay * bx;", "i")
            + "\nout_d[0] = b[3] - a[3]; out_d[1] = b[7] - a[7]; out_d[2] = b[11] - a[11]; "
            "out_d[3] = 0.5 * wx; out_d[4] = 0.5 * wy; out_d[5] = 0.5 * wz;")})


class Eul2Tr(Block):
    """ZYZ Euler angles to a transform T = Rz(a)·Ry(b)·Rz(c), as eul2tr in the Robotics Toolbox.

    Zero translation, as eul2tr in the Robotics Toolbox for MATLAB, release 7. Inputs a, b,
    c scalars (rad); output T (4, 4)."""

    type = "eul2tr"

    def ports(self):
        return ([In("a", shape=()), In("b", shape=()), In("c", shape=())],
                [Out("T", shape=(4, 4))])

    def output(self, t):
        a, b, c = self.u
        ca, sa = math.cos(a), math.sin(a)
        cb, sb = math.cos(b), math.sin(b)
        cc, sc = math.cos(c), math.sin(c)
        self.y[0][...] = _transform((
            (ca * cb * cc - sa * sc, -ca * cb * sc - sa * cc, ca * sb),
            (sa * cb * cc + ca * sc, -sa * cb * sc + ca * cc, sa * sb),
            (-sb * cc, sb * sc, cb)))

    def lower(self, c):
        return Lowering({"output": _C_TRIG.format("a", "b", "c", "a", "b", "c") + _c_transform((
            ("ca * cb * cc - sa * sc", "-ca * cb * sc - sa * cc", "ca * sb"),
            ("sa * cb * cc + ca * sc", "-sa * cb * sc + ca * cc", "sa * sb"),
            ("-sb * cc", "sb * sc", "cb")))})


class Tr2Eul(Block):
    """ZYZ Euler angles a, b, c of T = Rz(a)·Ry(b)·Rz(c), as tr2eul in the Robotics Toolbox.

    As in the Robotics Toolbox for MATLAB, release 7, b in [0, pi]:

        a = atan2(r23, r13),  b = atan2(cos a r13 + sin a r23, r33),
        c = atan2(-sin a r11 + cos a r21, -sin a r12 + cos a r22).

    At the singularity b = 0 or pi (hypot(r13, r23) < 16 eps) only a +- c is defined; as in
    release 7, a = 0 and the whole rotation about z goes to c. Input T (4, 4); outputs a, b, c
    scalars (rad).
    """

    type = "tr2eul"

    def ports(self):
        return [In("T", shape=(4, 4))], [Out("a", shape=()), Out("b", shape=()), Out("c", shape=())]

    def output(self, t):
        (r11, r12, r13, _), (r21, r22, r23, _), (_, _, r33, _), _ = self.u[0].tolist()
        a = 0.0 if math.hypot(r13, r23) < _SINGULAR else math.atan2(r23, r13)
        ca, sa = math.cos(a), math.sin(a)
        ya, yb, yc = self.y
        ya[()] = a
        yb[()] = math.atan2(ca * r13 + sa * r23, r33)
        yc[()] = math.atan2(-sa * r11 + ca * r21, -sa * r12 + ca * r22)

    def lower(self, c):
        return Lowering({"output": _C_ELEMENTS + (
            f"double a = hypot(r13, r23) < {_SINGULAR!r} ? 0.0 : atan2(r23, r13); "
            "double ca = cos(a), sa = sin(a); out_a[0] = a; "
            "out_b[0] = atan2(ca * r13 + sa * r23, r33); "
            "out_c[0] = atan2(-sa * r11 + ca * r21, -sa * r12 + ca * r22);")})


class Rpy2Tr(Block):
    """Roll/pitch/yaw to a transform T = Rz(roll)·Ry(pitch)·Rx(yaw), as rpy2tr in release 7.

    The convention of the Robotics Toolbox for MATLAB, release 7; zero translation. Inputs
    roll, pitch, yaw scalars (rad); output T (4, 4).

    Caution: spatialmath and bdsim name the angles the other way round, T = Rz(yaw)·Ry(pitch)
    ·Rx(roll): the product of rotations about z, y, x is the same, roll and yaw swap places.
    """

    type = "rpy2tr"

    def ports(self):
        return ([In("roll", shape=()), In("pitch", shape=()), In("yaw", shape=())],
                [Out("T", shape=(4, 4))])

    def output(self, t):
        r, p, y = self.u
        cr, sr = math.cos(r), math.sin(r)
        cp, sp = math.cos(p), math.sin(p)
        cy, sy = math.cos(y), math.sin(y)
        self.y[0][...] = _transform((
            (cr * cp, -sr * cy + cr * sp * sy, sr * sy + cr * sp * cy),
            (sr * cp, cr * cy + sr * sp * sy, -cr * sy + sr * sp * cy),
            (-sp, cp * sy, cp * cy)))

    def lower(self, c):
        return Lowering({"output": _C_TRIG.format("r", "p", "y", "roll", "pitch", "yaw")
                         + _c_transform((
                             ("cr * cp", "-sr * cy + cr * sp * sy", "sr * sy + cr * sp * cy"),
                             ("sr * cp", "cr * cy + sr * sp * sy", "-cr * sy + sr * sp * cy"),
                             ("-sp", "cp * sy", "cp * cy")))})


class Tr2Rpy(Block):
    """Roll/pitch/yaw of T = Rz(roll)·Ry(pitch)·Rx(yaw), as tr2rpy in release 7.

    The convention of the Robotics Toolbox for MATLAB, release 7, pitch in [-pi/2, pi/2]:

        roll = atan2(r21, r11),  pitch = atan2(-r31, cos(roll) r11 + sin(roll) r21),
        yaw = atan2(sin(roll) r13 - cos(roll) r23, cos(roll) r22 - sin(roll) r12).

    At the singularity pitch = +-pi/2 (hypot(r11, r21) < 16 eps) roll = 0 and the remaining
    rotation goes to yaw, as in release 7. Input T (4, 4); outputs roll, pitch, yaw scalars
    (rad). Caution: spatialmath and bdsim use T = Rz(yaw)·Ry(pitch)·Rx(roll), so their roll
    is this block's yaw and vice versa.
    """

    type = "tr2rpy"

    def ports(self):
        return ([In("T", shape=(4, 4))],
                [Out("roll", shape=()), Out("pitch", shape=()), Out("yaw", shape=())])

    def output(self, t):
        (r11, r12, r13, _), (r21, r22, r23, _), (r31, _, _, _), _ = self.u[0].tolist()
        roll = 0.0 if math.hypot(r11, r21) < _SINGULAR else math.atan2(r21, r11)
        cr, sr = math.cos(roll), math.sin(roll)
        yr, yp, yy = self.y
        yr[()] = roll
        yp[()] = math.atan2(-r31, cr * r11 + sr * r21)
        yy[()] = math.atan2(sr * r13 - cr * r23, cr * r22 - sr * r12)

    def lower(self, c):
        return Lowering({"output": _C_ELEMENTS + (
            f"double roll = hypot(r11, r21) < {_SINGULAR!r} ? 0.0 : atan2(r21, r11); "
            "double cr = cos(roll), sr = sin(roll); out_roll[0] = roll; "
            "out_pitch[0] = atan2(-r31, cr * r11 + sr * r21); "
            "out_yaw[0] = atan2(sr * r13 - cr * r23, cr * r22 - sr * r12);")})
