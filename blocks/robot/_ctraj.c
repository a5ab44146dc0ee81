/*
 * The ctraj block's straight-line motion between two poses, for compiled diagrams: the terms
 * CartesianTrajectory.set_poses computes (blocks/robot/trajectory.py) with the quaternion
 * arithmetic of quaternion.py, and the pose and velocity of CartesianTrajectory.into,
 * operation by operation; numpy's products and maximum as numpy computes them (rt_matmul_ex,
 * rt_dot, rt_maximum of the accelerated mode's runtime). Transforms are 4x4 row-major.
 */

/* The terms of a motion: T0, T1, sin_term, cos_term, dp (4x4 each), spin (3), phi. */
typedef struct {
    double T0[16], T1[16], S[16], C[16], D[16], spin[3], phi;
} CTrajTerms;

/* quat_from_rot of T's rotation: d = [s, vx, vy, vz], s >= 0 (Shepperd's pivot) */
static void ctraj_quat(const double *T, double *d)
{
    double r00 = T[0], r01 = T[1], r02 = T[2], r10 = T[4], r11 = T[5], r12 = T[6];
    double r20 = T[8], r21 = T[9], r22 = T[10];
    double trace = r00 + r11 + r22;
    double pivots[4] = {trace, r00, r11, r22};
    int k = 0;
    for (int i = 1; i < 4; i++)
        if (pivots[i] > pivots[k])
            k = i;
    double d32 = r21 - r12, d13 = r02 - r20, d21 = r10 - r01;
    double s12 = r01 + r10, s13 = r02 + r20, s23 = r12 + r21;
    double rows[4][4] = {{1.0 + trace, d32, d13, d21},
                         {d32, 1.0 + 2 * r00 - trace, s12, s13},
                         {d13, s12, 1.0 + 2 * r11 - trace, s23},
                         {d21, s13, s23, 1.0 + 2 * r22 - trace}};
    double two_x = sqrt(rt_maximum(rows[k][k], 0.0));
    for (int i = 0; i < 4; i++) {
        d[i] = rows[k][i] / two_x;
        d[i] *= 0.5;
    }
    if (d[0] < 0)
        for (int i = 0; i < 4; i++)
            d[i] *= -1.0;
}

/* quaternion.arc_sign(a, b): +1 or -1, the sign of b for the shorter arc from a; a half turn
   (|a.b| <= half_turn) by the poses: the arc nearer the identity, else the relative axis */
static double ctraj_arc_sign(const double *a, const double *b, double half_turn)
{
    double dot = rt_dot(a, b, 4);
    if (fabs(dot) > half_turn)
        return dot > 0.0 ? 1.0 : -1.0;
    if (fabs(a[0]) > half_turn && fabs(b[0]) > half_turn)
        return a[0] * b[0] > 0.0 ? 1.0 : -1.0;
    const double *v1 = a + 1, *v2 = b + 1;
    double u[3] = {v1[1] * v2[2] - v1[2] * v2[1], v1[2] * v2[0] - v1[0] * v2[2],
                   v1[0] * v2[1] - v1[1] * v2[0]};
    for (int i = 0; i < 3; i++) {
        double c = a[0] * v2[i] - b[0] * v1[i] - u[i];
        if (fabs(c) > half_turn)
            return c > 0.0 ? 1.0 : -1.0;
    }
    return 1.0;
}

/* CartesianTrajectory.set_poses(T0, T1); half_turn: quaternion.HALF_TURN */
static void ctraj_poses(CTrajTerms *m, const double *T0, const double *T1, double half_turn)
{
    double a[4], b[4], inv[4], rel[4], K[9], tmp[9], ra[3];
    ctraj_quat(T0, a);
    ctraj_quat(T1, b);
    double aa = rt_dot(a, a, 4);                /* Quaternion.inv: conj / (d @ d) */
    inv[0] = a[0] / aa;
    for (int i = 1; i < 4; i++)
        inv[i] = -a[i] / aa;
    /* Hamilton product inv * b: s1 s2 - v1.v2, s1 v2 + s2 v1 + v1 x v2 */
    const double *v1 = inv + 1, *v2 = b + 1;
    double s1 = inv[0], s2 = b[0], cross[3];
    cross[0] = v1[1] * v2[2] - v1[2] * v2[1];
    cross[1] = v1[2] * v2[0] - v1[0] * v2[2];
    cross[2] = v1[0] * v2[1] - v1[1] * v2[0];
    rel[0] = s1 * s2 - rt_dot(v1, v2, 3);
    for (int i = 0; i < 3; i++)
        rel[1 + i] = s1 * v2[i] + s2 * v1[i] + cross[i];
    double sign = ctraj_arc_sign(a, b, half_turn);
    for (int i = 0; i < 4; i++)
        rel[i] *= sign;
    double sin_half = sqrt(rt_dot(rel + 1, rel + 1, 3));
    m->phi = 2.0 * atan2(sin_half, rel[0]);
    double axis[3] = {0.0, 0.0, 0.0};
    if (sin_half > 0.0)
        for (int i = 0; i < 3; i++)
            axis[i] = rel[1 + i] / sin_half;
    K[0] = 0.0; K[1] = -axis[2]; K[2] = axis[1];             /* skew(axis) */
    K[3] = axis[2]; K[4] = 0.0; K[5] = -axis[0];
    K[6] = -axis[1]; K[7] = axis[0]; K[8] = 0.0;
    memset(m->S, 0, sizeof m->S);
    memset(m->C, 0, sizeof m->C);
    memset(m->D, 0, sizeof m->D);
    rt_matmul_ex(T0, 4, 1, K, 3, 1, 3, 3, 3, tmp);            /* R0 @ K */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            m->S[4 * i + j] = tmp[3 * i + j];
    rt_matmul_ex(m->S, 4, 1, K, 3, 1, 3, 3, 3, tmp);          /* sin_term @ K */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            m->C[4 * i + j] = tmp[3 * i + j];
    for (int i = 0; i < 3; i++)
        m->D[4 * i + 3] = T1[4 * i + 3] - T0[4 * i + 3];
    rt_matmul_ex(T0, 4, 1, axis, 1, 1, 3, 3, 1, ra);          /* R0 @ axis */
    for (int i = 0; i < 3; i++)
        m->spin[i] = m->phi * ra[i];
    memcpy(m->T0, T0, sizeof m->T0);
    memcpy(m->T1, T1, sizeof m->T1);
}

/* CartesianTrajectory.into(t, T, v) for the motion m over [0, tf] */
static void ctraj_into(const CTrajTerms *m, double tf, double t, double *T, double *v)
{
    if (t < 0.0) {
        memcpy(T, m->T0, sizeof m->T0);
    } else if (t > tf) {
        memcpy(T, m->T1, sizeof m->T1);
    } else {
        double tau = t / tf;
        double s = tau * tau * tau * (10.0 + tau * (-15.0 + 6.0 * tau));
        double a = s * m->phi, sa = sin(a), ca = 1.0 - cos(a);
        for (int i = 0; i < 16; i++)
            T[i] = m->T0[i] + sa * m->S[i] + ca * m->C[i] + s * m->D[i];
    }
    if (t <= 0.0 || t >= tf) {
        for (int i = 0; i < 6; i++)
            v[i] = 0.0;
        return;
    }
    double tau = t / tf;
    double rate = 30.0 * tau * tau * pow(1.0 - tau, 2.0) / tf;
    for (int i = 0; i < 3; i++) {
        v[i] = m->D[4 * i + 3] * rate;
        v[3 + i] = m->spin[i] * rate;
    }
}
