/*
 * The planar n-R arm's kernels in C, for compiled diagrams (accelerated mode): kinematics.py,
 * dynamics.py and indices.py of this package (Zlajpah's kinmodel, dynmodel, the forward
 * dynamics and the redundancy indices), operation by operation in their order, so that the
 * planar blocks give the bits their interpreted kernels give (numba-compiled or plain
 * Python: both the C library's cos, sin and sqrt, no fused multiply-add). Plain C, after the
 * robot kernels' rows (_kernel_rows.c: the Cholesky solve both share, as their Python twins
 * share _linalg.cholesky_solve); the functions take arrays of n doubles, and work arrays the
 * size their comments give.
 */
#include <math.h>
#include <stddef.h>

/* kinematics._angles: cos, sin and rate of the absolute link angles */
static void planar_angles(ptrdiff_t n, const double *q, const double *qd, double *c, double *s,
                          double *w)
{
    double phi = 0.0, phid = 0.0;
    for (ptrdiff_t k = 0; k < n; k++) {
        phi += q[k];
        phid += qd[k];
        c[k] = cos(phi);
        s[k] = sin(phi);
        w[k] = phid;
    }
}

/* kinematics._kin_fill: x (2), J (2, n), Jd (2, n) */
static void planar_kin_fill(ptrdiff_t n, const double *L, const double *c, const double *s,
                            const double *w, double *x, double *J, double *Jd)
{
    double X = 0.0, Y = 0.0, Xd = 0.0, Yd = 0.0;
    for (ptrdiff_t k = n - 1; k >= 0; k--) {
        double lc = L[k] * c[k], ls = L[k] * s[k];
        X += lc;
        Y += ls;
        Xd -= ls * w[k];
        Yd += lc * w[k];
        J[k] = -Y;
        J[n + k] = X;
        Jd[k] = -Yd;
        Jd[n + k] = Xd;
    }
    x[0] = X;
    x[1] = Y;
}

/* kinematics._kinmodel: out = [x (2), J (2n), Jd (2n)]; work 3n */
static void planar_kinmodel(ptrdiff_t n, const double *q, const double *qd, const double *L,
                            double *out, double *work)
{
    double *c = work, *s = c + n, *w = s + n;
    planar_angles(n, q, qd, c, s, w);
    planar_kin_fill(n, L, c, s, w, out, out + 2, out + 2 + 2 * n);
}

/* dynamics._first_moments: beta, mu */
static void planar_first_moments(ptrdiff_t n, const double *L, const double *Lc, const double *m,
                                 const double *ml, double *beta, double *mu)
{
    double out = 0.0;
    for (ptrdiff_t k = n - 1; k >= 0; k--) {
        out += ml[k];
        mu[k] = out;
        beta[k] = m[k] * Lc[k] + L[k] * out;
        out += m[k];
    }
}

/* dynamics._suffix of a*b (b NULL: of a), or of a*b*e: out (n + 1), out[n] = 0 */
static void planar_suffix(ptrdiff_t n, const double *a, const double *b, const double *e,
                          double *out)
{
    out[n] = 0.0;
    for (ptrdiff_t k = n - 1; k >= 0; k--) {
        double v = b ? a[k] * b[k] : a[k];
        if (e)
            v = v * e[k];
        out[k] = out[k + 1] + v;
    }
}

/* dynamics._inertia: H (n, n); work 2(n + 1) */
static void planar_inertia(ptrdiff_t n, const double *L, const double *c, const double *s,
                           const double *beta, const double *diag, double *H, double *work)
{
    double *C = work, *Sn = C + n + 1, hjj = 0.0;
    planar_suffix(n, beta, c, NULL, C);
    planar_suffix(n, beta, s, NULL, Sn);
    for (ptrdiff_t j = n - 1; j >= 0; j--) {
        hjj += diag[j] + 2.0 * L[j] * (c[j] * C[j + 1] + s[j] * Sn[j + 1]);
        H[j * n + j] = hjj;
    }
    for (ptrdiff_t i = 0; i < n; i++) {
        double ac = 0.0, as_ = 0.0;
        for (ptrdiff_t j = i + 1; j < n; j++) {
            ac += L[j - 1] * c[j - 1];
            as_ += L[j - 1] * s[j - 1];
            H[i * n + j] = H[j * n + j] + ac * C[j] + as_ * Sn[j];
            H[j * n + i] = H[i * n + j];
        }
    }
}

/* dynamics._inertia_rate: Hd (n, n); work 4(n + 1) */
static void planar_inertia_rate(ptrdiff_t n, const double *L, const double *c, const double *s,
                                const double *w, const double *beta, double *Hd, double *work)
{
    double *C = work, *Sn = C + n + 1, *Cw = Sn + n + 1, *Sw = Cw + n + 1, hjj = 0.0;
    planar_suffix(n, beta, c, NULL, C);
    planar_suffix(n, beta, s, NULL, Sn);
    planar_suffix(n, beta, c, w, Cw);
    planar_suffix(n, beta, s, w, Sw);
    for (ptrdiff_t j = n - 1; j >= 0; j--) {
        hjj += 2.0 * L[j] * (w[j] * (c[j] * Sn[j + 1] - s[j] * C[j + 1])
                             + s[j] * Cw[j + 1] - c[j] * Sw[j + 1]);
        Hd[j * n + j] = hjj;
    }
    for (ptrdiff_t i = 0; i < n; i++) {
        double ac = 0.0, as_ = 0.0, acw = 0.0, asw = 0.0;
        for (ptrdiff_t j = i + 1; j < n; j++) {
            double lc = L[j - 1] * c[j - 1], ls = L[j - 1] * s[j - 1];
            ac += lc;
            as_ += ls;
            acw += lc * w[j - 1];
            asw += ls * w[j - 1];
            Hd[i * n + j] = Hd[j * n + j] + acw * Sn[j] - asw * C[j] + as_ * Cw[j] - ac * Sw[j];
            Hd[j * n + i] = Hd[i * n + j];
        }
    }
}

/* dynamics._bias: h (n) Coriolis/centrifugal + viscous, g (n) gravity; work 4n + 2 */
static void planar_bias(ptrdiff_t n, const double *qd, const double *L, const double *B,
                        double g0, const double *c, const double *s, const double *w,
                        const double *beta, double *h, double *g, double *work)
{
    double *w2 = work, *Cw2 = w2 + n, *Sw2 = Cw2 + n + 1, *cphi = Sw2 + n + 1;
    double pc = 0.0, ps = 0.0, hs = 0.0, gs = 0.0;
    for (ptrdiff_t k = 0; k < n; k++)
        w2[k] = w[k] * w[k];
    planar_suffix(n, beta, c, w2, Cw2);
    planar_suffix(n, beta, s, w2, Sw2);
    for (ptrdiff_t a = 0; a < n; a++) {
        cphi[a] = (L[a] * (s[a] * Cw2[a + 1] - c[a] * Sw2[a + 1])
                   + beta[a] * (s[a] * pc - c[a] * ps));
        pc += L[a] * c[a] * w2[a];
        ps += L[a] * s[a] * w2[a];
    }
    for (ptrdiff_t i = n - 1; i >= 0; i--) {
        hs += cphi[i];
        gs += g0 * beta[i] * c[i];
        h[i] = hs + B[i] * qd[i];
        g[i] = gs;
    }
}

/* The link data of a planar arm: L, Lc, m, ml, I, B (n each) and g0 */
typedef struct {
    const double *L, *Lc, *m, *ml, *I, *B;
    double g0;
    ptrdiff_t n;
} PlanarArm;

/* enough work doubles for any function below */
#define PLANAR_WORK(n) (12 * (n) + 8)

/* the angles, first moments and the diagonal of M (dynmodel and forward dynamics share them);
   work: c, s, w, beta, mu, diag (6n) */
static void planar_common(const PlanarArm *a, const double *q, const double *qd, double *work)
{
    ptrdiff_t n = a->n;
    double *c = work, *s = c + n, *w = s + n, *beta = w + n, *mu = beta + n, *diag = mu + n;
    planar_angles(n, q, qd, c, s, w);
    planar_first_moments(n, a->L, a->Lc, a->m, a->ml, beta, mu);
    for (ptrdiff_t k = 0; k < n; k++)
        diag[k] = a->I[k] + a->m[k] * a->Lc[k] * a->Lc[k] + a->L[k] * a->L[k] * mu[k];
}

/* dynamics._dynmodel: out = [x (2), J, Jd (2n each), H, Hd (n^2 each), h, g (n each)] */
static void planar_dynmodel(const PlanarArm *a, const double *q, const double *qd, double *out,
                            double *work)
{
    ptrdiff_t n = a->n, k = 2 + 4 * n, nn = n * n;
    double *c = work, *s = c + n, *w = s + n, *beta = w + n, *diag = beta + 2 * n;
    double *rest = work + 6 * n;
    planar_common(a, q, qd, work);
    planar_kin_fill(n, a->L, c, s, w, out, out + 2, out + 2 + 2 * n);
    planar_inertia(n, a->L, c, s, beta, diag, out + k, rest);
    planar_inertia_rate(n, a->L, c, s, w, beta, out + k + nn, rest);
    k += 2 * nn;
    planar_bias(n, qd, a->L, a->B, a->g0, c, s, w, beta, out + k, out + k + n, rest);
}

/* dynamics._forward_dynamics: qdd (n) with H qdd = tau - h - g; 0, or 1 when H is not
   positive definite; H the caller's (n, n) */
static int planar_forward_dynamics(const PlanarArm *a, const double *q, const double *qd,
                                   const double *tau, double *qdd, double *H, double *work)
{
    ptrdiff_t n = a->n;
    double *c = work, *s = c + n, *w = s + n, *beta = w + n, *diag = beta + 2 * n;
    double *h = work + 6 * n, *g = h + n, *rest = g + n;
    planar_common(a, q, qd, work);
    planar_inertia(n, a->L, c, s, beta, diag, H, rest);
    planar_bias(n, qd, a->L, a->B, a->g0, c, s, w, beta, h, g, rest);
    for (ptrdiff_t i = 0; i < n; i++)
        qdd[i] = tau[i] - h[i] - g[i];
    return cholesky_solve(n, H, qdd);
}

/* indices._gram: out = [a11, a22, a12, their gradients (n each)]; work 5n */
static void planar_gram(ptrdiff_t n, const double *q, const double *L, double *out,
                        double *work)
{
    double *X = work, *Y = X + n, *a11 = Y + n, *a22 = a11 + n, *a12 = a22 + n;
    double phi = 0.0, x = 0.0, y = 0.0, s11 = 0.0, s22 = 0.0, s12 = 0.0, px = 0.0, py = 0.0;
    for (ptrdiff_t k = 0; k < n; k++) {
        phi += q[k];
        X[k] = L[k] * cos(phi);
        Y[k] = L[k] * sin(phi);
    }
    for (ptrdiff_t k = n - 1; k >= 0; k--) {
        x += X[k];
        y += Y[k];
        X[k] = x;
        Y[k] = y;
        s11 += y * y;
        s22 += x * x;
        s12 -= x * y;
        a11[k] = s11;
        a22[k] = s22;
        a12[k] = s12;
    }
    out[0] = s11;
    out[1] = s22;
    out[2] = s12;
    for (ptrdiff_t j = 0; j < n; j++) {
        out[3 + j] = 2.0 * (X[j] * py - a12[j]);
        out[3 + n + j] = 2.0 * (-Y[j] * px + a12[j]);
        out[3 + 2 * n + j] = -X[j] * px + Y[j] * py + a11[j] - a22[j];
        px += X[j];
        py += Y[j];
    }
}

/* indices._idxman: [w, dw/dq] (n + 1); 0, or 1 at a singular configuration (w = 0);
   work 8n + 3 */
static int planar_idxman(ptrdiff_t n, const double *q, const double *L, double *out,
                         double *work)
{
    double *A = work, *rest = A + 3 + 3 * n;
    planar_gram(n, q, L, A, rest);
    double a11 = A[0], a22 = A[1], a12 = A[2], det = a11 * a22 - a12 * a12;
    double w = sqrt(PYMAX(det, 0.0));
    if (w == 0.0)
        return 1;
    out[0] = w;
    for (ptrdiff_t j = 0; j < n; j++) {
        double ddet = a11 * A[3 + n + j] + a22 * A[3 + j] - 2.0 * a12 * A[3 + 2 * n + j];
        out[1 + j] = ddet / (2.0 * w);
    }
    return 0;
}

/* indices._idxcn: [rho, drho/dq] (n + 1); 0, or 1 at a singular or isotropic J; work 8n + 3 */
static int planar_idxcn(ptrdiff_t n, const double *q, const double *L, double *out,
                        double *work)
{
    double *A = work, *rest = A + 3 + 3 * n;
    planar_gram(n, q, L, A, rest);
    double a11 = A[0], a22 = A[1], a12 = A[2], d = a11 - a22;
    double r = sqrt(d * d + 4.0 * a12 * a12), det = a11 * a22 - a12 * a12;
    if (det <= 0.0 || r == 0.0)
        return 1;
    double s1 = 0.5 * (a11 + a22 + r);
    out[0] = s1 * s1 / det;
    for (ptrdiff_t j = 0; j < n; j++) {
        double g11 = A[3 + j], g22 = A[3 + n + j], g12 = A[3 + 2 * n + j];
        double ds1 = 0.5 * (g11 + g22 + (d * (g11 - g22) + 4.0 * a12 * g12) / r);
        double ddet = a11 * g22 + a22 * g11 - 2.0 * a12 * g12;
        out[1 + j] = s1 * (2.0 * det * ds1 - s1 * ddet) / (det * det);
    }
    return 0;
}

/* indices._idxgrav: [p, dp/dq] (n + 1) with p = g^T W g, W (n, n) symmetric; work 5n */
static void planar_idxgrav(const PlanarArm *a, const double *q, const double *W, double *out,
                           double *work)
{
    ptrdiff_t n = a->n;
    double *beta = work, *mu = beta + n, *g = mu + n, *sg = g + n, *u = sg + n;
    double phi = 0.0, p = 0.0, tail = 0.0, head = 0.0;
    planar_first_moments(n, a->L, a->Lc, a->m, a->ml, beta, mu);
    for (ptrdiff_t k = 0; k < n; k++) {
        phi += q[k];
        g[k] = a->g0 * beta[k] * cos(phi);
        sg[k] = a->g0 * beta[k] * sin(phi);
    }
    for (ptrdiff_t k = n - 2; k >= 0; k--) {
        g[k] += g[k + 1];
        sg[k] += sg[k + 1];
    }
    for (ptrdiff_t i = 0; i < n; i++) {
        u[i] = 0.0;
        for (ptrdiff_t k = 0; k < n; k++)
            u[i] += W[i * n + k] * g[k];
        p += g[i] * u[i];
    }
    out[0] = p;
    for (ptrdiff_t j = n - 1; j >= 0; j--) {
        tail += sg[j] * u[j];
        out[1 + j] = tail;
    }
    for (ptrdiff_t j = 0; j < n; j++) {
        out[1 + j] = -2.0 * (sg[j] * head + out[1 + j]);
        head += u[j];
    }
}
