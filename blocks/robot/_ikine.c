/*
 * The ikine block's numerical inverse kinematics for compiled diagrams: ikine() of
 * blocks/robot/ikine.py (damped least squares, joint limits, restarts), operation by operation,
 * over the kernels' row functions (_kernel_rows.c, written in before this file), numpy's
 * products and solve as numpy computes them (rt_matmul_ex, rt_dot, rt_solve, rt_svd_full of
 * the accelerated mode's runtime), and scipy's Rotation.from_matrix(...).as_rotvec() as its
 * Cython backend computes it (scipy/spatial/transform/_rotation_cy.pyx: Markley's pivot, the
 * quaternion normalised, made canonical, the angle by atan2). The restarts' random starting
 * points do not depend on the pose: the block computes them once (numpy.random.default_rng).
 */

enum { IK_OK = 0, IK_SINGULAR = 1, IK_LEFT_HANDED = 2, IK_SVD = 3 };

/* A robot and what ikine() derives from its arguments once */
typedef struct {
    const double *P, *W, *g;      /* the robot's kernel arguments */
    const double *lo, *hi;        /* joint limits, -inf / inf where a joint has none */
    const double *revolute;       /* 1 for a revolute joint with limits */
    const double *mask;           /* the 6 weights of the pose error */
    int limited;                  /* some joint has limits */
    ptrdiff_t n;
} IKineRobot;

/* numpy.mod (npy_remainder) */
static double ik_mod(double a, double b)
{
    double mod = fmod(a, b);
    if (!b)
        return mod;
    if (mod) {
        if ((b < 0) != (mod < 0))
            mod += b;
    } else {
        mod = copysign(0.0, b);
    }
    return mod;
}

/* _Limits.apply: q inside the limits (out), a revolute joint outside moved by the fewest
   turns, and the joints that were clamped */
static void ik_apply(const IKineRobot *k, const double *q, double *out, char *clamped)
{
    const double two_pi = 2 * 3.141592653589793;
    for (ptrdiff_t j = 0; j < k->n; j++) {
        double v = q[j];
        clamped[j] = 0;
        if (k->limited && k->revolute[j] != 0.0) {
            double lo = k->lo[j], hi = k->hi[j];
            double turns = v > hi ? -ceil((v - hi) / two_pi) : v < lo ? ceil((lo - v) / two_pi)
                                                                       : 0.0;
            double moved = v + turns * two_pi;
            int inside = moved >= lo && moved <= hi;
            double over = ik_mod(v - hi, two_pi);
            double under = ik_mod(lo - v, two_pi);
            v = inside ? moved : over <= under ? hi : lo;
            clamped[j] = !inside;
        }
        if (k->limited) {
            clamped[j] |= (v < k->lo[j]) | (v > k->hi[j]);
            v = rt_clip(v, k->lo[j], k->hi[j]);
        }
        out[j] = v;
    }
}

/* scipy: Rotation.from_matrix(M).as_rotvec() of the 3x3 row-major M (written over) */
static int ik_rotvec(double *M, double *rv)
{
    double det = M[0] * (M[4] * M[8] - M[5] * M[7]) - M[1] * (M[3] * M[8] - M[5] * M[6])
                 + M[2] * (M[3] * M[7] - M[4] * M[6]);
    if (det <= 0)
        return IK_LEFT_HANDED;
    double G[9], U[9], s[3], Vt[9], q[4];
    rt_matmul_ex(M, 3, 1, M, 1, 3, 3, 3, 3, G);         /* matrix @ matrix.T (syrk) */
    int orthogonal = 1;
    for (int i = 0; i < 9; i++) {
        double eye = i % 4 == 0 ? 1.0 : 0.0;
        orthogonal &= fabs(G[i] - eye) <= 1e-12 + 1e-05 * fabs(eye);
    }
    if (!orthogonal) {                                    /* orthogonal Procrustes: U Vt */
        if (rt_svd_full(M, 3, 3, U, s, Vt) != 0)
            return IK_SVD;
        rt_matmul_ex(U, 3, 1, Vt, 3, 1, 3, 3, 3, M);
    }
    double decision[4] = {M[0], M[4], M[8], M[0] + M[4] + M[8]};
    int choice = 0;
    double vmax = decision[0];
    for (int i = 1; i < 4; i++)
        if (decision[i] > vmax) {
            choice = i;
            vmax = decision[i];
        }
    if (choice != 3) {
        int i = choice, j = (i + 1) % 3, l = (j + 1) % 3;
        q[i] = 1 - decision[3] + 2 * M[4 * i];
        q[j] = M[3 * j + i] + M[3 * i + j];
        q[l] = M[3 * l + i] + M[3 * i + l];
        q[3] = M[3 * l + j] - M[3 * j + l];
    } else {
        q[0] = M[7] - M[5];
        q[1] = M[2] - M[6];
        q[2] = M[3] - M[1];
        q[3] = 1 + decision[3];
    }
    double norm = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (norm != 0)
        for (int i = 0; i < 4; i++)
            q[i] /= norm;
    if (q[3] < 0 || (q[3] == 0 && q[0] < 0) || (q[3] == 0 && q[0] == 0 && q[1] < 0)
        || (q[3] == 0 && q[0] == 0 && q[1] == 0 && q[2] < 0))
        for (int i = 0; i < 4; i++)
            q[i] *= -1.0;
    double angle = 2 * atan2(sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]), q[3]), scale;
    if (angle <= 1e-3) {
        double angle2 = angle * angle;
        scale = 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880;
    } else {
        scale = angle / sin(angle / 2);
    }
    for (int i = 0; i < 3; i++)
        rv[i] = scale * q[i];
    return IK_OK;
}

/* _tool_error(fkine(q), Tt): e (6) = [R^T (p_t - p); rotation vector of R^T R_t] */
static int ik_error(const IKineRobot *k, const double *q, const double *Tt, double *e)
{
    double Tq[16], d[3], M[9], work[ROW_WORK(k->n)];
    const double F0[6] = {0};
    Call c = {k->P, k->W, k->g, F0, {q, NULL, NULL}, Tq, k->n, 1, 0, 0};
    fkine_row(&c, 0, work);
    for (int i = 0; i < 3; i++)
        d[i] = Tt[4 * i + 3] - Tq[4 * i + 3];
    rt_matmul_ex(Tq, 1, 4, d, 1, 1, 3, 3, 1, e);         /* R.T @ (p_t - p) */
    rt_matmul_ex(Tq, 1, 4, Tt, 4, 1, 3, 3, 3, M);        /* R.T @ R_t */
    return ik_rotvec(M, e + 3);
}

/* e @ (W * e) */
static double ik_cost(const IKineRobot *k, const double *e)
{
    double we[6];
    for (int i = 0; i < 6; i++)
        we[i] = k->mask[i] * e[i];
    return rt_dot(e, we, 6);
}

/* _step: qn = q + dq with H dq = g, the joints a step takes past a limit held there */
static int ik_step(const IKineRobot *k, const double *H, const double *g, const double *q,
                   double *qn)
{
    ptrdiff_t n = k->n;
    double x[DIM(n)], dq[DIM(n)];
    char clamped[DIM(n)], freej[DIM(n)];
    if (rt_solve(H, n, g, 1, dq) != 0)
        return IK_SINGULAR;
    for (ptrdiff_t j = 0; j < n; j++) {
        x[j] = q[j] + dq[j];
        freej[j] = 1;
    }
    ik_apply(k, x, qn, clamped);
    for (;;) {
        int more = 0, any_free = 0;
        for (ptrdiff_t j = 0; j < n; j++)
            more |= clamped[j] && freej[j];
        if (!more)
            return IK_OK;
        for (ptrdiff_t j = 0; j < n; j++) {
            freej[j] = freej[j] && !clamped[j];
            any_free |= freej[j];
        }
        if (!any_free)
            return IK_OK;
        ptrdiff_t fr[DIM(n)], he[DIM(n)], nf = 0, nh = 0;
        for (ptrdiff_t j = 0; j < n; j++) {
            if (freej[j])
                fr[nf++] = j;
            else
                he[nh++] = j;
        }
        double d[DIM(nh)], Hff[DIM(nf * nf)], Hfh[DIM(nf * nh)], Hd[DIM(nf)], r[DIM(nf)],
            sol[DIM(nf)];
        for (ptrdiff_t i = 0; i < nh; i++)
            d[i] = qn[he[i]] - q[he[i]];
        for (ptrdiff_t i = 0; i < nf; i++) {
            for (ptrdiff_t j = 0; j < nf; j++)
                Hff[i * nf + j] = H[fr[i] * n + fr[j]];
            for (ptrdiff_t j = 0; j < nh; j++)
                Hfh[i * nh + j] = H[fr[i] * n + he[j]];
        }
        rt_matmul_ex(Hfh, nh, 1, d, 1, 1, nf, nh, 1, Hd);
        for (ptrdiff_t i = 0; i < nf; i++)
            r[i] = g[fr[i]] - Hd[i];
        if (rt_solve(Hff, nf, r, 1, sol) != 0)
            return IK_SINGULAR;
        for (ptrdiff_t j = 0; j < n; j++)
            x[j] = qn[j];
        for (ptrdiff_t i = 0; i < nf; i++)
            x[fr[i]] = q[fr[i]] + sol[i];
        ik_apply(k, x, qn, clamped);
    }
}

/* _solve_one: Levenberg-Marquardt from q (written with the answer); *res the error's norm,
   *its the trial steps */
static int ik_solve_one(const IKineRobot *k, const double *Tt, double *q, int ilimit,
                        double tol, double lam, double *res, long long *its)
{
    ptrdiff_t n = k->n;
    double e[6], en[6], J[DIM(6 * n)], JW[DIM(6 * n)], A[DIM(n * n)], g[DIM(n)],
        H[DIM(n * n)], qn[DIM(n)], work[ROW_WORK(n)];
    const double F0[6] = {0};
    int status = ik_error(k, q, Tt, e);
    if (status)
        return status;
    double cost = ik_cost(k, e);
    for (int it = 1; it <= ilimit; it++) {
        if (sqrt(cost) < tol) {
            *res = sqrt(cost);
            *its = it - 1;
            return IK_OK;
        }
        Call c = {k->P, k->W, k->g, F0, {q, NULL, NULL}, J, n, 1, 0, 1};
        jacobian_row(&c, 0, work);                           /* jacobn */
        for (ptrdiff_t i = 0; i < 6 * n; i++)               /* J.T * W, Fortran-ordered */
            JW[i] = J[i] * k->mask[i / n];
        rt_matmul_ex(JW, 1, n, J, n, 1, n, 6, n, A);         /* JW @ J */
        rt_matmul_ex(JW, 1, n, e, 1, 1, n, 6, 1, g);         /* JW @ e */
        for (ptrdiff_t i = 0; i < n; i++)
            for (ptrdiff_t j = 0; j < n; j++)
                H[i * n + j] = A[i * n + j] + lam * ((i == j ? A[i * n + i] : 0.0)
                                                     + (i == j ? 1.0 : 0.0));
        if ((status = ik_step(k, H, g, q, qn)) != 0)
            return status;
        if ((status = ik_error(k, qn, Tt, en)) != 0)
            return status;
        double cn = ik_cost(k, en);
        if (cn < cost) {
            for (ptrdiff_t j = 0; j < n; j++)
                q[j] = qn[j];
            for (int i = 0; i < 6; i++)
                e[i] = en[i];
            cost = cn;
            lam = PYMAX(lam / 3.0, 1e-12);
        } else {
            lam *= 4.0;
            if (lam > 1e12) {
                *res = sqrt(cost);
                *its = it;
                return IK_OK;
            }
        }
    }
    *res = sqrt(cost);
    *its = ilimit;
    return IK_OK;
}

/* ikine() for one pose Tt: q from `start` (the limits applied) and, when an attempt stalls,
   from starts[0..restarts) (n each); *res the best attempt's error, *total the trial steps
   of all attempts */
static int ik_solve(const IKineRobot *k, const double *Tt, const double *start,
                    const double *starts, int restarts, int ilimit, double tol, double lam,
                    double *q, double *res, long long *total)
{
    ptrdiff_t n = k->n;
    double qs[DIM(n)], best[DIM(n)], best_res = 0.0;
    int have = 0;
    *total = 0;
    for (ptrdiff_t j = 0; j < n; j++)
        qs[j] = start[j];
    for (int attempt = 0; attempt < restarts + 1; attempt++) {
        double r;
        long long its;
        int status = ik_solve_one(k, Tt, qs, ilimit, tol, lam, &r, &its);
        if (status)
            return status;
        *total += its;
        if (!have || r < best_res) {
            for (ptrdiff_t j = 0; j < n; j++)
                best[j] = qs[j];
            best_res = r;
            have = 1;
        }
        if (r < tol)
            break;
        if (attempt < restarts)
            for (ptrdiff_t j = 0; j < n; j++)
                qs[j] = starts[attempt * n + j];
    }
    for (ptrdiff_t j = 0; j < n; j++)
        q[j] = best[j];
    *res = best_res;
    return IK_OK;
}

/* ---- the closed form of a Puma-type arm with a spherical wrist (ikine6s) ----------------- */

/* What ikine6s takes from its robot and configuration letters: signs s1, s3, s4, s5 of sin
 * alpha_1,3,4,5, the wrist offset c6 = Rx(alpha_6)^T [a6, 0, d6], D = d2 + d3, d1, a2, a2^2,
 * L = hypot(a3, d4), beta, 2 a2 L, alpha_1..6, the joint offsets, the inverses of base and
 * tool (4x4), and left, up, flip (1 or 0). */
typedef struct {
    double s1, s3, s4, s5, c6[3], D, d1, a2, a2sq, L, beta, den, alpha[6], offset[6];
    double Binv[16], Tinv[16], left, up, flip;
} Puma;

static double ik_sign(double x)
{
    return x >= 0 ? 1.0 : -1.0;
}

/* _rx(alpha) and _rz(theta), 3x3 row-major */
static void ik_rx(double alpha, double *R)
{
    double c = cos(alpha), s = sin(alpha);
    R[0] = 1.0; R[1] = 0; R[2] = 0; R[3] = 0; R[4] = c; R[5] = -s; R[6] = 0; R[7] = s; R[8] = c;
}

static void ik_rz(double theta, double *R)
{
    double c = cos(theta), s = sin(theta);
    R[0] = c; R[1] = -s; R[2] = 0; R[3] = s; R[4] = c; R[5] = 0; R[6] = 0; R[7] = 0; R[8] = 1;
}

/* the 3x3 product a @ b (numpy's gemm) into out (may not alias) */
static void ik_mm(const double *a, const double *b, double *out)
{
    rt_matmul_ex(a, 3, 1, b, 3, 1, 3, 3, 3, out);
}

/* np.pi - np.mod(np.pi - x, 2 pi): angles wrapped to (-pi, pi] */
static double ik_wrap(double x)
{
    const double pi = 3.141592653589793;
    return pi - ik_mod(pi - x, 2 * pi);
}

/* ikine6s of one world pose Tw into q (6); 0, or 1 (wrist centre too close to joint 1's axis:
 * *a = its distance, *b = |D|) or 2 (out of the arm's reach: *a = the distance, *b and *c the
 * range), as _solve_6s raises IKineError */
static int ik_puma(const Puma *p, const double *Tw, double *q, double *a, double *b, double *c)
{
    double T1[16], T[16], Rc[3], w[3], th[6];
    rt_matmul_ex(p->Binv, 4, 1, Tw, 4, 1, 4, 4, 4, T1);          /* Binv @ Tw @ Tinv */
    rt_matmul_ex(T1, 4, 1, p->Tinv, 4, 1, 4, 4, 4, T);
    rt_matmul_ex(T, 4, 1, p->c6, 1, 1, 3, 3, 1, Rc);             /* R @ c6 */
    for (int i = 0; i < 3; i++)
        w[i] = T[4 * i + 3] - Rc[i];
    double D = p->D, rho2 = pow(w[0], 2.0) + pow(w[1], 2.0);
    if (rho2 < D * D) {
        *a = sqrt(rho2);
        *b = fabs(D);
        return 1;
    }
    double x1 = sqrt(rho2 - D * D) * (p->left != 0.0 ? -1.0 : 1.0) * ik_sign(p->s1 * D);
    th[0] = atan2(w[1], w[0]) - atan2(-p->s1 * D, x1);
    double y1 = p->s1 * (w[2] - p->d1), L = p->L;
    double cc = (x1 * x1 + y1 * y1 - p->a2sq - L * L) / p->den;
    if (fabs(cc) > 1.0 + 1e-12) {
        *a = hypot(x1, y1);
        *b = fabs(p->a2 - L);
        *c = p->a2 + L;
        return 2;
    }
    double psi = acos(rt_clip(cc, -1.0, 1.0)) * (p->up != 0.0 ? -1.0 : 1.0) * p->s1 * ik_sign(x1);
    th[1] = atan2(y1, x1) - atan2(L * sin(psi), p->a2 + L * cos(psi));
    th[2] = psi - p->beta;
    double R03[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, A[9], B[9], Rz[9], Rx[9], M1[9], M[9];
    for (int j = 0; j < 3; j++) {
        ik_rz(th[j], Rz);
        ik_rx(p->alpha[j], Rx);
        ik_mm(R03, Rz, A);
        ik_mm(A, Rx, R03);
    }
    rt_matmul_ex(R03, 1, 3, T, 4, 1, 3, 3, 3, M1);               /* R03.T @ R */
    ik_rx(p->alpha[5], Rx);
    rt_matmul_ex(M1, 3, 1, Rx, 1, 3, 3, 3, 3, M);                /* @ Rx(alpha_6).T */
    double sin5 = -p->s4 * hypot(M[2], M[5]) * (p->flip != 0.0 ? -1.0 : 1.0);
    th[4] = atan2(sin5, -p->s4 * p->s5 * M[8]);
    if (fabs(sin5) > 1e-12) {
        double g = ik_sign(sin5);
        th[3] = atan2(p->s5 * g * M[5], p->s5 * g * M[2]);
        th[5] = atan2(-p->s4 * g * M[7], p->s4 * g * M[6]);
    } else {                      /* wrist singularity: only theta4 + -theta6 is determined */
        th[3] = 0.0;
        ik_rz(th[3], Rz);
        ik_rx(p->alpha[3], Rx);
        ik_mm(Rz, Rx, A);
        ik_rz(th[4], Rz);
        ik_mm(A, Rz, B);
        ik_rx(p->alpha[4], Rx);
        ik_mm(B, Rx, A);
        rt_matmul_ex(A, 1, 3, M, 3, 1, 3, 3, 3, B);              /* (...).T @ M */
        th[5] = atan2(B[3], B[0]);
    }
    for (int i = 0; i < 6; i++)
        q[i] = ik_wrap(th[i] - p->offset[i]);
    return 0;
}
