/*
 * The robot kernels' row functions in C: one configuration of each algorithm of
 * blocks/robot/_kernels.py (the _*_row functions there), equal to them operation by
 * operation. Plain C, no Python: the extension module _ckernels.c includes this file and
 * wraps each row function as a kernel over m configurations, and accelerated mode writes it
 * into a compiled diagram's source (the robot blocks' lowerings), so both modes call the same
 * functions on the same packed arrays (layouts in _ckernels.c's header comment).
 *
 * A row function returns 0, or ROW_NOT_POSITIVE_DEFINITE (accel_row, when the inertia matrix
 * is not positive definite); work arrays are the caller's.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

enum { ROW_NOT_POSITIVE_DEFINITE = -1 };

/* column layout of P and W (as _kernels.py) */
enum { SIGMA, SLIDE, X, FRAME = 14, M = 26, RX, RY, RZ, I0, MOTOR = 39, VISCOUS, UP, DOWN, NP };
enum { BASE = 0, TOOL = 12, NW = 24 };
enum { RNE_WORK = 18 };

/* work doubles that suffice for any row function of an n-joint robot (coriolis_row needs
 * 54n + 12, accel_row n^2 + 42n + 12) */
#define ROW_WORK(n) ((n) * (n) + 54 * (n) + 12)

static const double EYE[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};

/* ------------------------------------------------------------------ small helpers */

/* r = a x b (r may alias neither a nor b: callers pass temporaries) */
static inline void cross(double ax, double ay, double az, double bx, double by, double bz,
                         double *r)
{
    r[0] = ay * bz - az * by;
    r[1] = az * bx - ax * bz;
    r[2] = ax * by - ay * bx;
}

/* r = A v for the 3x3 matrix A_ij = m[i*rs + j*cs]: rv for the rotation of a 3x4 frame,
 * rtv for its transpose, iv for a 3x3 row-major inertia */
static inline void mv(const double *m, int rs, int cs, double x, double y, double z, double *r)
{
    r[0] = m[0] * x + m[cs] * y + m[2 * cs] * z;
    r[1] = m[rs] * x + m[rs + cs] * y + m[rs + 2 * cs] * z;
    r[2] = m[2 * rs] * x + m[2 * rs + cs] * y + m[2 * rs + 2 * cs] * z;
}
#define rv(t, x, y, z, r) mv(t, 4, 1, x, y, z, r)
#define rtv(t, x, y, z, r) mv(t, 1, 4, x, y, z, r)
#define iv(I, x, y, z, r) mv(I, 3, 1, x, y, z, r)

/* r = a + b x p + w x (w x p): transport of a point acceleration along p on a rigid body */
static inline void transport(const double *a, const double *b, const double *w, double px,
                             double py, double pz, double *r)
{
    double c[3], u[3], uu[3];
    cross(b[0], b[1], b[2], px, py, pz, c);
    cross(w[0], w[1], w[2], px, py, pz, u);
    cross(w[0], w[1], w[2], u[0], u[1], u[2], uu);
    r[0] = a[0] + c[0] + uu[0];
    r[1] = a[1] + c[1] + uu[1];
    r[2] = a[2] + c[2] + uu[2];
}

/* r = t u for 3x4 frames (last row 0 0 0 1 implied); r may alias t or u */
static inline void mul(const double *t, const double *u, double *r)
{
    double s[12];
    s[0] = t[0] * u[0] + t[1] * u[4] + t[2] * u[8];
    s[1] = t[0] * u[1] + t[1] * u[5] + t[2] * u[9];
    s[2] = t[0] * u[2] + t[1] * u[6] + t[2] * u[10];
    s[3] = t[0] * u[3] + t[1] * u[7] + t[2] * u[11] + t[3];
    s[4] = t[4] * u[0] + t[5] * u[4] + t[6] * u[8];
    s[5] = t[4] * u[1] + t[5] * u[5] + t[6] * u[9];
    s[6] = t[4] * u[2] + t[5] * u[6] + t[6] * u[10];
    s[7] = t[4] * u[3] + t[5] * u[7] + t[6] * u[11] + t[7];
    s[8] = t[8] * u[0] + t[9] * u[4] + t[10] * u[8];
    s[9] = t[8] * u[1] + t[9] * u[5] + t[10] * u[9];
    s[10] = t[8] * u[2] + t[9] * u[6] + t[10] * u[10];
    s[11] = t[8] * u[3] + t[9] * u[7] + t[10] * u[11] + t[11];
    memcpy(r, s, sizeof s);
}

/* Write the 3x4 frame t as a 4x4 homogeneous transform at out (16 doubles, row-major). */
static inline void put(double *out, const double *t)
{
    memcpy(out, t, 12 * sizeof(double));
    out[12] = 0.0; out[13] = 0.0; out[14] = 0.0; out[15] = 1.0;
}

/* ------------------------------------------------------------------ the joints */

/* T_j(qj) = X_j Rz(qj) Tz(h qj) (revolute) or X_j Tz(qj) (prismatic); p the row of joint j */
static inline void link_pose(const double *p, double qj, double *t)
{
    const double *x = p + X;
    double px = x[3], py = x[7], pz = x[11];
    if (p[SLIDE] != 0.0) {
        double d = p[SLIDE] * qj;
        px = px + x[2] * d; py = py + x[6] * d; pz = pz + x[10] * d;
    }
    if (p[SIGMA] != 0.0) {
        memcpy(t, x, 12 * sizeof(double));
    } else {
        double c = cos(qj), s = sin(qj);
        t[0] = x[0] * c + x[1] * s; t[1] = x[1] * c - x[0] * s; t[2] = x[2];
        t[4] = x[4] * c + x[5] * s; t[5] = x[5] * c - x[4] * s; t[6] = x[6];
        t[8] = x[8] * c + x[9] * s; t[9] = x[9] * c - x[8] * s; t[10] = x[10];
    }
    t[3] = px; t[7] = py; t[11] = pz;
}

/* F (n+1, 12): F[0] = base or identity, F[j+1] = F[j] T_j(q_j); q the n joint values */
static void frames(const double *P, const double *W, ptrdiff_t n, int use_base,
                   const double *q, double *F)
{
    double t[12];
    memcpy(F, use_base ? W + BASE : EYE, 12 * sizeof(double));
    for (ptrdiff_t j = 0; j < n; j++) {
        link_pose(P + j * NP, q[j], t);
        mul(F + 12 * j, t, F + 12 * (j + 1));
    }
}

/* Angular velocity, angular acceleration and origin acceleration of a link, in its frame. */
typedef struct {
    double w[3], b[3], a[3];
} Motion;

/* One step of the outward Newton-Euler recursion (_outward): s from link j-1 to link j. */
static inline void outward(const double *p, const double *t, double qdj, double qddj, Motion *s)
{
    double a[3];
    transport(s->a, s->b, s->w, t[3], t[7], t[11], a);
    rtv(t, a[0], a[1], a[2], s->a);
    rtv(t, s->w[0], s->w[1], s->w[2], a);
    memcpy(s->w, a, sizeof a);
    rtv(t, s->b[0], s->b[1], s->b[2], a);
    memcpy(s->b, a, sizeof a);
    double h = p[SLIDE];
    if (h != 0.0) {
        double v2 = 2.0 * h * qdj;
        s->a[0] = s->a[0] + v2 * s->w[1];
        s->a[1] = s->a[1] - v2 * s->w[0];
        s->a[2] = s->a[2] + h * qddj;
    }
    if (p[SIGMA] == 0.0) {
        s->b[0] = s->b[0] + s->w[1] * qdj;
        s->b[1] = s->b[1] - s->w[0] * qdj;
        s->b[2] = s->b[2] + qddj;
        s->w[2] += qdj;
    }
}

/* Link centre-of-mass offset s = R r and inertia w = R I R^T [xx, yy, zz, xy, yz, xz] in the
 * axes of the frame t (the rotation of the link's joint frame); p the link's row (_body). */
static inline void body(const double *p, const double *t, double *s, double *w)
{
    const double *I = p + I0;
    double c0[3], c1[3], c2[3];
    rv(t, p[RX], p[RY], p[RZ], s);
    /* columns of R*I: c0, c1, c2; then R*I*R^T */
    rv(t, I[0], I[3], I[6], c0);
    rv(t, I[1], I[4], I[7], c1);
    rv(t, I[2], I[5], I[8], c2);
    w[0] = c0[0] * t[0] + c1[0] * t[1] + c2[0] * t[2];
    w[1] = c0[1] * t[4] + c1[1] * t[5] + c2[1] * t[6];
    w[2] = c0[2] * t[8] + c1[2] * t[9] + c2[2] * t[10];
    w[3] = c0[0] * t[4] + c1[0] * t[5] + c2[0] * t[6];
    w[4] = c0[1] * t[8] + c1[1] * t[9] + c2[1] * t[10];
    w[5] = c0[0] * t[8] + c1[0] * t[9] + c2[0] * t[10];
}

/* ------------------------------------------------------------------ friction */

/* Coulomb torque for the direction s in [-1, 1]: s up (s > 0), s down (s < 0), 0 at s = 0 */
static inline double coulomb(double up, double down, double s)
{
    return s * (s > 0.0 ? up : down);
}

/* Link-side friction of the joint of row p: |G|(B|G| qd + Tc) */
static inline double friction1(const double *p, double qdj)
{
    double s = qdj > 0.0 ? 1.0 : qdj < 0.0 ? -1.0 : 0.0;
    return p[VISCOUS] * qdj + coulomb(p[UP], p[DOWN], s);
}

/* ------------------------------------------------------------------ one configuration */

/* The arguments of a kernel call (the Python module's parse() fills one from its arguments,
 * compiled diagrams write one per call): x[] the joint arrays in order. */
typedef struct {
    const double *P, *W, *g, *fext, *x[3];
    double *out;
    ptrdiff_t n, m, fstep;
    int flag;
} Call;

static int fkine_row(const Call *c, ptrdiff_t k, double *work)
{
    ptrdiff_t n = c->n;
    double t[12], u[12];
    memcpy(t, c->W + BASE, sizeof t);
    for (ptrdiff_t j = 0; j < n; j++) {
        link_pose(c->P + j * NP, c->x[0][k * n + j], u);
        mul(t, u, t);
    }
    mul(t, c->W + TOOL, t);
    put(c->out + 16 * k, t);
    return 0;
}

static int fkine_all_row(const Call *c, ptrdiff_t k, double *F)
{
    ptrdiff_t n = c->n;
    double *out = c->out + 16 * k * (n + 1), t[12];
    frames(c->P, c->W, n, 1, c->x[0] + k * n, F);
    put(out, F);
    for (ptrdiff_t j = 0; j < n; j++) {
        mul(F + 12 * (j + 1), c->P + j * NP + FRAME, t);
        put(out + 16 * (j + 1), t);
    }
    return 0;
}

static int jacobian_row(const Call *c, ptrdiff_t k, double *F)
{
    ptrdiff_t n = c->n;
    const double *P = c->P;
    double te[12], v[3], w[3], r[3];
    double *J = c->out + 6 * k * n;
    frames(P, c->W, n, 1, c->x[0] + k * n, F);
    mul(F + 12 * n, c->W + TOOL, te);
    for (ptrdiff_t j = 0; j < n; j++) {
        const double *f = F + 12 * (j + 1), *p = P + j * NP;
        if (p[SIGMA] == 0.0) {
            cross(f[2], f[6], f[10], te[3] - f[3], te[7] - f[7], te[11] - f[11], v);
            w[0] = f[2]; w[1] = f[6]; w[2] = f[10];
        } else {
            v[0] = v[1] = v[2] = w[0] = w[1] = w[2] = 0.0;
        }
        double h = p[SLIDE];
        if (h != 0.0) {
            v[0] = v[0] + h * f[2]; v[1] = v[1] + h * f[6]; v[2] = v[2] + h * f[10];
        }
        if (c->flag) {
            rtv(te, v[0], v[1], v[2], r);
            memcpy(v, r, sizeof r);
            rtv(te, w[0], w[1], w[2], r);
            memcpy(w, r, sizeof r);
        }
        J[j] = v[0]; J[n + j] = v[1]; J[2 * n + j] = v[2];
        J[3 * n + j] = w[0]; J[4 * n + j] = w[1]; J[5 * n + j] = w[2];
    }
    return 0;
}

static int jacob_dot_row(const Call *c, ptrdiff_t k, double *work)
{
    ptrdiff_t n = c->n;
    const double *q = c->x[0] + k * n, *qd = c->x[1] + k * n, *tool = c->W + TOOL;
    Motion s = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    double t[12], u[12], a[3];
    double *y = c->out + 6 * k;
    memcpy(t, c->W + BASE, sizeof t);
    for (ptrdiff_t j = 0; j < n; j++) {
        link_pose(c->P + j * NP, q[j], u);
        outward(c->P + j * NP, u, qd[j], 0.0, &s);
        mul(t, u, t);
    }
    transport(s.a, s.b, s.w, tool[3], tool[7], tool[11], a);
    rv(t, a[0], a[1], a[2], y);
    rv(t, s.b[0], s.b[1], s.b[2], y + 3);
    return 0;
}

static int friction_row(const Call *c, ptrdiff_t k, double *work)
{
    for (ptrdiff_t j = 0; j < c->n; j++)
        c->out[k * c->n + j] = friction1(c->P + j * NP, c->x[0][k * c->n + j]);
    return 0;
}

/* Recursive Newton-Euler for one configuration (_rne_row): q, qd, qdd the n joint values,
 * fext the tip wrench (6, tool frame, about the tool point); out the n torques. */
static void rne_row(const double *P, const double *W, ptrdiff_t n, const double *g,
                    const double *q, const double *qd, const double *qdd, const double *fext,
                    double *out, double *work)
{
    Motion s = {{0, 0, 0}, {0, 0, 0}, {g[0], g[1], g[2]}};
    double v[3], Iw[3], e[3], Ib[3], f[3], nm[3], c[3], r[3];
    for (ptrdiff_t j = 0; j < n; j++) {
        const double *p = P + j * NP;
        double *wj = work + j * RNE_WORK;
        link_pose(p, q[j], wj);
        outward(p, wj, qd[j], qdd[j], &s);
        transport(s.a, s.b, s.w, p[RX], p[RY], p[RZ], v);
        iv(p + I0, s.w[0], s.w[1], s.w[2], Iw);
        cross(s.w[0], s.w[1], s.w[2], Iw[0], Iw[1], Iw[2], e);
        iv(p + I0, s.b[0], s.b[1], s.b[2], Ib);
        wj[12] = p[M] * v[0]; wj[13] = p[M] * v[1]; wj[14] = p[M] * v[2];
        wj[15] = Ib[0] + e[0]; wj[16] = Ib[1] + e[1]; wj[17] = Ib[2] + e[2];
    }
    const double *tool = W + TOOL;
    rv(tool, fext[0], fext[1], fext[2], f);
    rv(tool, fext[3], fext[4], fext[5], nm);
    cross(tool[3], tool[7], tool[11], f[0], f[1], f[2], c);
    nm[0] = nm[0] + c[0]; nm[1] = nm[1] + c[1]; nm[2] = nm[2] + c[2];
    for (ptrdiff_t j = n - 1; j >= 0; j--) {
        const double *p = P + j * NP, *wj = work + j * RNE_WORK;
        if (j < n - 1) {
            const double *u = wj + RNE_WORK;
            rv(u, f[0], f[1], f[2], r);
            memcpy(f, r, sizeof r);
            rv(u, nm[0], nm[1], nm[2], r);
            memcpy(nm, r, sizeof r);
            cross(u[3], u[7], u[11], f[0], f[1], f[2], c);
            nm[0] = nm[0] + c[0]; nm[1] = nm[1] + c[1]; nm[2] = nm[2] + c[2];
        }
        cross(p[RX], p[RY], p[RZ], wj[12], wj[13], wj[14], c);
        nm[0] = nm[0] + c[0] + wj[15];
        nm[1] = nm[1] + c[1] + wj[16];
        nm[2] = nm[2] + c[2] + wj[17];
        f[0] = f[0] + wj[12]; f[1] = f[1] + wj[13]; f[2] = f[2] + wj[14];
        double tau = p[SIGMA] == 0.0 ? nm[2] : 0.0;
        if (p[SLIDE] != 0.0)
            tau += p[SLIDE] * f[2];
        out[j] = tau + p[MOTOR] * qdd[j] + friction1(p, qd[j]);
    }
}

static int rne_kernel_row(const Call *c, ptrdiff_t k, double *work)
{
    ptrdiff_t o = k * c->n;
    rne_row(c->P, c->W, c->n, c->g, c->x[0] + o, c->x[1] + o, c->x[2] + o,
            c->fext + k * c->fstep, c->out + o, work);
    return 0;
}

/* Joint-space inertia of one configuration by the composite-rigid-body algorithm in the base
 * frame (_inertia_row); out the n x n matrix (row stride n); F (n+1, 12), C (n, 10) work. */
static void inertia_row(const double *P, const double *W, ptrdiff_t n, const double *q,
                        double *out, double *F, double *C)
{
    frames(P, W, n, 0, q, F);
    double Mc = 0.0, ccx = 0.0, ccy = 0.0, ccz = 0.0;
    double Ixx = 0.0, Iyy = 0.0, Izz = 0.0, Ixy = 0.0, Iyz = 0.0, Ixz = 0.0;
    for (ptrdiff_t k = n - 1; k >= 0; k--) {
        const double *t = F + 12 * (k + 1), *pk = P + k * NP;
        double s[3], w[6];
        body(pk, t, s, w);
        double cx = t[3] + s[0], cy = t[7] + s[1], cz = t[11] + s[2];
        double mk = pk[M], Mn = Mc + mk, nx, ny, nz;
        if (Mn > 0.0) {
            nx = (Mc * ccx + mk * cx) / Mn;
            ny = (Mc * ccy + mk * cy) / Mn;
            nz = (Mc * ccz + mk * cz) / Mn;
        } else {
            nx = cx; ny = cy; nz = cz;
        }
        double dx = ccx - nx, dy = ccy - ny, dz = ccz - nz;
        double ex = cx - nx, ey = cy - ny, ez = cz - nz;
        Ixx += Mc * (dy * dy + dz * dz) + w[0] + mk * (ey * ey + ez * ez);
        Iyy += Mc * (dx * dx + dz * dz) + w[1] + mk * (ex * ex + ez * ez);
        Izz += Mc * (dx * dx + dy * dy) + w[2] + mk * (ex * ex + ey * ey);
        Ixy += -Mc * dx * dy + w[3] - mk * ex * ey;
        Iyz += -Mc * dy * dz + w[4] - mk * ey * ez;
        Ixz += -Mc * dx * dz + w[5] - mk * ex * ez;
        Mc = Mn;
        ccx = nx; ccy = ny; ccz = nz;
        double *Ck = C + 10 * k;
        Ck[0] = Mc; Ck[1] = ccx; Ck[2] = ccy; Ck[3] = ccz;
        Ck[4] = Ixx; Ck[5] = Iyy; Ck[6] = Izz; Ck[7] = Ixy; Ck[8] = Iyz; Ck[9] = Ixz;
    }
    for (ptrdiff_t i = 0; i < n; i++) {
        const double *f = F + 12 * (i + 1), *Ci = C + 10 * i, *pi = P + i * NP;
        double Mi = Ci[0], cx = Ci[1], cy = Ci[2], cz = Ci[3], p[3], L[3];
        if (pi[SIGMA] == 0.0) {
            cross(f[2], f[6], f[10], cx - f[3], cy - f[7], cz - f[11], p);
            L[0] = Ci[4] * f[2] + Ci[7] * f[6] + Ci[9] * f[10];
            L[1] = Ci[7] * f[2] + Ci[5] * f[6] + Ci[8] * f[10];
            L[2] = Ci[9] * f[2] + Ci[8] * f[6] + Ci[6] * f[10];
        } else {
            p[0] = p[1] = p[2] = L[0] = L[1] = L[2] = 0.0;
        }
        double h = pi[SLIDE];
        if (h != 0.0) {
            p[0] = p[0] + h * f[2]; p[1] = p[1] + h * f[6]; p[2] = p[2] + h * f[10];
        }
        p[0] = Mi * p[0]; p[1] = Mi * p[1]; p[2] = Mi * p[2];
        for (ptrdiff_t j = 0; j <= i; j++) {
            const double *u = F + 12 * (j + 1), *pj = P + j * NP;
            double hj = pj[SLIDE], r[3];
            double mji = hj != 0.0 ? hj * (u[2] * p[0] + u[6] * p[1] + u[10] * p[2]) : 0.0;
            if (pj[SIGMA] == 0.0) {
                cross(cx - u[3], cy - u[7], cz - u[11], p[0], p[1], p[2], r);
                mji += u[2] * (L[0] + r[0]) + u[6] * (L[1] + r[1]) + u[10] * (L[2] + r[2]);
            }
            out[j * n + i] = mji;
            out[i * n + j] = mji;
        }
        out[i * n + i] += pi[MOTOR];
    }
}

static int inertia_kernel_row(const Call *c, ptrdiff_t k, double *F)
{
    ptrdiff_t n = c->n;
    inertia_row(c->P, c->W, n, c->x[0] + k * n, c->out + k * n * n, F, F + 12 * (n + 1));
    return 0;
}

/* C(q, qd) of one configuration (_coriolis_row, which states the equations). */
static int coriolis_row(const Call *c, ptrdiff_t k, double *F)
{
    ptrdiff_t n = c->n;
    const double *P = c->P, *qd = c->x[1] + k * n;
    double *K = F + 12 * (n + 1);   /* per joint/link: z, o, zdot, odot, w, c, cdot, I (3x3) */
    double *J = K + 30 * n;         /* per column: Jv, Jw, m*Jvdot, u */
    double *Ck = c->out + k * n * n;
    double w[3] = {0, 0, 0}, v[3] = {0, 0, 0};
    frames(P, c->W, n, 0, c->x[0] + k * n, F);
    for (ptrdiff_t j = 0; j < n; j++) {
        const double *t = F + 12 * (j + 1), *prev = F + 12 * j, *p = P + j * NP;
        double qdj = qd[j], e[3], vo[3], dz[3], s[3], u[3], w6[6];
        cross(w[0], w[1], w[2], t[3] - prev[3], t[7] - prev[7], t[11] - prev[11], e);
        vo[0] = v[0] + e[0]; vo[1] = v[1] + e[1]; vo[2] = v[2] + e[2];
        cross(w[0], w[1], w[2], t[2], t[6], t[10], dz);
        if (p[SIGMA] == 0.0) {      /* link j turns about the axis */
            w[0] = w[0] + t[2] * qdj; w[1] = w[1] + t[6] * qdj; w[2] = w[2] + t[10] * qdj;
        }
        memcpy(v, vo, sizeof vo);
        if (p[SLIDE] != 0.0) {       /* and slides along it */
            double sl = p[SLIDE] * qdj;
            v[0] = v[0] + t[2] * sl; v[1] = v[1] + t[6] * sl; v[2] = v[2] + t[10] * sl;
        }
        body(p, t, s, w6);
        cross(w[0], w[1], w[2], s[0], s[1], s[2], u);
        double *Kj = K + 30 * j;
        Kj[0] = t[2]; Kj[1] = t[6]; Kj[2] = t[10];
        Kj[3] = t[3]; Kj[4] = t[7]; Kj[5] = t[11];
        Kj[6] = dz[0]; Kj[7] = dz[1]; Kj[8] = dz[2];
        Kj[9] = vo[0]; Kj[10] = vo[1]; Kj[11] = vo[2];
        Kj[12] = w[0]; Kj[13] = w[1]; Kj[14] = w[2];
        Kj[15] = t[3] + s[0]; Kj[16] = t[7] + s[1]; Kj[17] = t[11] + s[2];
        Kj[18] = v[0] + u[0]; Kj[19] = v[1] + u[1]; Kj[20] = v[2] + u[2];
        Kj[21] = w6[0]; Kj[22] = w6[3]; Kj[23] = w6[5];
        Kj[24] = w6[3]; Kj[25] = w6[1]; Kj[26] = w6[4];
        Kj[27] = w6[5]; Kj[28] = w6[4]; Kj[29] = w6[2];
    }
    for (ptrdiff_t i = 0; i < n * n; i++)
        Ck[i] = 0.0;
    for (ptrdiff_t i = 0; i < n; i++) {
        const double *Ki = K + 30 * i, *Ii = Ki + 21;
        double mi = P[i * NP + M], Lw[3];
        double cx = Ki[15], cy = Ki[16], cz = Ki[17];
        double dcx = Ki[18], dcy = Ki[19], dcz = Ki[20];
        double wx = Ki[12], wy = Ki[13], wz = Ki[14];
        iv(Ii, wx, wy, wz, Lw);
        for (ptrdiff_t b = 0; b <= i; b++) {
            const double *Kb = K + 30 * b, *pb = P + b * NP;
            double zx = Kb[0], zy = Kb[1], zz = Kb[2];
            double dzx = Kb[6], dzy = Kb[7], dzz = Kb[8];
            double jv[3], jw[3], dj[3], uu[3];
            if (pb[SIGMA] == 0.0) {
                double rx = cx - Kb[3], ry = cy - Kb[4], rz = cz - Kb[5], ax[3], e[3], h[3];
                cross(zx, zy, zz, rx, ry, rz, jv);
                cross(dzx, dzy, dzz, rx, ry, rz, ax);
                cross(zx, zy, zz, dcx - Kb[9], dcy - Kb[10], dcz - Kb[11], e);
                dj[0] = ax[0] + e[0]; dj[1] = ax[1] + e[1]; dj[2] = ax[2] + e[2];
                jw[0] = zx; jw[1] = zy; jw[2] = zz;
                /* u = I zdot + (w x I z - I (w x z) - I w x z) / 2 */
                iv(Ii, zx, zy, zz, h);
                cross(wx, wy, wz, h[0], h[1], h[2], e);
                cross(wx, wy, wz, zx, zy, zz, h);
                iv(Ii, h[0], h[1], h[2], ax);
                e[0] = e[0] - ax[0]; e[1] = e[1] - ax[1]; e[2] = e[2] - ax[2];
                cross(Lw[0], Lw[1], Lw[2], zx, zy, zz, h);
                e[0] = e[0] - h[0]; e[1] = e[1] - h[1]; e[2] = e[2] - h[2];
                iv(Ii, dzx, dzy, dzz, h);
                uu[0] = h[0] + 0.5 * e[0]; uu[1] = h[1] + 0.5 * e[1]; uu[2] = h[2] + 0.5 * e[2];
            } else {
                jv[0] = jv[1] = jv[2] = dj[0] = dj[1] = dj[2] = 0.0;
                jw[0] = jw[1] = jw[2] = uu[0] = uu[1] = uu[2] = 0.0;
            }
            double h = pb[SLIDE];
            if (h != 0.0) {
                jv[0] = jv[0] + h * zx; jv[1] = jv[1] + h * zy; jv[2] = jv[2] + h * zz;
                dj[0] = dj[0] + h * dzx; dj[1] = dj[1] + h * dzy; dj[2] = dj[2] + h * dzz;
            }
            double *Jb = J + 12 * b;
            Jb[0] = jv[0]; Jb[1] = jv[1]; Jb[2] = jv[2];
            Jb[3] = jw[0]; Jb[4] = jw[1]; Jb[5] = jw[2];
            Jb[6] = mi * dj[0]; Jb[7] = mi * dj[1]; Jb[8] = mi * dj[2];
            Jb[9] = uu[0]; Jb[10] = uu[1]; Jb[11] = uu[2];
        }
        for (ptrdiff_t r = 0; r <= i; r++) {
            const double *Ja = J + 12 * r;
            for (ptrdiff_t b = 0; b <= i; b++) {
                const double *Jb = J + 12 * b;
                Ck[r * n + b] += (Ja[0] * Jb[6] + Ja[1] * Jb[7] + Ja[2] * Jb[8]
                                  + Ja[3] * Jb[9] + Ja[4] * Jb[10] + Ja[5] * Jb[11]);
            }
        }
    }
    return 0;
}

/* _linalg.cholesky_solve: A (n, n) symmetric positive definite (its lower triangle read),
 * A = L L^T with L written over that triangle, b := A^-1 b in place; 0, or 1 when A is not
 * positive definite (A and b partly overwritten). The planar arm's kernels use it too. */
static int cholesky_solve(ptrdiff_t n, double *A, double *b)
{
    for (ptrdiff_t j = 0; j < n; j++) {
        double s = A[j * n + j];
        for (ptrdiff_t p = 0; p < j; p++)
            s -= A[j * n + p] * A[j * n + p];
        if (!(s > 0.0))
            return 1;
        s = sqrt(s);
        A[j * n + j] = s;
        for (ptrdiff_t i = j + 1; i < n; i++) {
            double r = A[i * n + j];
            for (ptrdiff_t p = 0; p < j; p++)
                r -= A[i * n + p] * A[j * n + p];
            A[i * n + j] = r / s;
        }
    }
    for (ptrdiff_t i = 0; i < n; i++) {
        double r = b[i];
        for (ptrdiff_t p = 0; p < i; p++)
            r -= A[i * n + p] * b[p];
        b[i] = r / A[i * n + i];
    }
    for (ptrdiff_t i = n - 1; i >= 0; i--) {
        double r = b[i];
        for (ptrdiff_t p = i + 1; p < n; p++)
            r -= A[p * n + i] * b[p];
        b[i] = r / A[i * n + i];
    }
    return 0;
}

/* qdd = M^-1 (tau - rne(q, qd, 0)) of one configuration (_accel_row), Cholesky M = L L^T. */
static int accel_row(const Call *c, ptrdiff_t k, double *work)
{
    ptrdiff_t n = c->n, o = k * n;
    double *F = work + RNE_WORK * n, *C = F + 12 * (n + 1), *L = C + 10 * n;
    double *zero = L + n * n, *b = zero + n;
    const double *tau = c->x[2] + o;
    for (ptrdiff_t i = 0; i < n; i++)
        zero[i] = 0.0;
    rne_row(c->P, c->W, n, c->g, c->x[0] + o, c->x[1] + o, zero, c->fext + k * c->fstep, b,
            work);
    inertia_row(c->P, c->W, n, c->x[0] + o, L, F, C);
    for (ptrdiff_t i = 0; i < n; i++)
        b[i] = tau[i] - b[i];
    if (cholesky_solve(n, L, b))
        return ROW_NOT_POSITIVE_DEFINITE;
    for (ptrdiff_t i = 0; i < n; i++)
        c->out[o + i] = b[i];
    return 0;
}

/* out = tau - Fc with Fc_j = coulomb(up_j, down_j, s_j) for the Coulomb directions
 * s_j = clip(x_j*scale, -1, 1) over n joints (the robot block's friction band: x = qd,
 * scale = 1/band; its stick-slip modes: x = mode, scale = 1). */
static void subtract_coulomb_row(ptrdiff_t n, const double *x, const double *tau,
                                 const double *up, const double *down, double scale,
                                 double *out)
{
    for (ptrdiff_t j = 0; j < n; j++) {
        double sj = x[j] * scale;
        sj = sj < -1.0 ? -1.0 : sj;
        sj = sj > 1.0 ? 1.0 : sj;
        out[j] = tau[j] - coulomb(up[j], down[j], sj);
    }
}
