/*
 * blocks.robot._ckernels: the serial-link kernels of _kernels.py written in C.
 *
 * Same names, arguments, packed layouts and results as blocks/robot/_kernels.py (which is the
 * reference and documents the equations): serial_link._kernels() may return either module.
 *
 *   P (n, NP)   per-link parameters, columns SIGMA, A, THETA, D, OFFSET, M, RX..RZ,
 *               I0..I0+8 (inertia about the COM, row-major), JM, G, B, TCP, TCN, CA, SA
 *   W (NW,)     base (3x4 row-major [R | p]), tool (3x4), MDH flag (0 standard, 1 modified)
 *   g (3,)      base acceleration that models gravity, in the base frame
 *   q, qd, ...  flat (m*n,): m configurations of n joint values, row-major
 *   outputs     filled in place; matrices stacked by rows: fkine (4m, 4), fkine_all
 *               (4m(n+1), 4), jacobian (6m, n), inertia and coriolis (m*n, n); vectors
 *               (m*n,), jacob_dot (6m,)
 *
 * Every array argument goes through the buffer protocol: float64 and C-contiguous, outputs
 * writable (numpy arrays or anything exporting such a buffer; no numpy headers needed).
 * Shapes are checked as in _kernels.py and violations raise ValueError.
 *
 * The arithmetic follows _kernels.py operation by operation (same association order), so with
 * floating-point contraction off (setup.py passes -ffp-contract=off) the results equal the
 * plain-Python kernels bit for bit on IEEE-754 hardware. A change to _kernels.py must be made
 * here too (tests/robot/test_kernel_backends.py compares the two); an editable install rebuilds
 * this module only when pip install -e runs again.
 *
 * Work arrays live on the C stack up to WORK_LOCAL doubles (enough for n <= 32 in every
 * kernel); a larger robot gets them from PyMem_Malloc once per call.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

/* column layout of P (as _kernels.py) */
enum { SIGMA, A, THETA, D, OFFSET, M, RX, RY, RZ, I0,
       JM = 18, G, B, TCP, TCN, CA, SA, NP };
/* layout of W */
enum { BASE = 0, TOOL = 12, MDH = 24, NW = 25 };

#define WORK_LOCAL 2560          /* doubles: accel needs 79n + n^2 + 12 (2476 at n = 32) */
#define MAX_BUFS 8

static const double EYE[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};

/* ------------------------------------------------------------------ argument handling */

/* The buffers a call holds; released together on every exit path. */
typedef struct {
    Py_buffer view[MAX_BUFS];
    int count;
} Args;

static void args_release(Args *a)
{
    for (int i = 0; i < a->count; i++)
        PyBuffer_Release(&a->view[i]);
    a->count = 0;
}

/* Data pointer of a float64 C-contiguous buffer of `ndim` dimensions (writable when `out`);
 * shape[0..ndim-1] receives its shape. NULL with ValueError set otherwise. */
static double *arg(Args *a, PyObject *obj, int ndim, int out, const char *name,
                   Py_ssize_t *shape)
{
    Py_buffer *v = &a->view[a->count];
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (out ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, v, flags) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s must be a %sC-contiguous float64 array", name,
                     out ? "writable " : "");
        return NULL;
    }
    a->count++;
    const char *f = v->format;
    if (f && (f[0] == '@' || f[0] == '='))
        f++;
    if (v->itemsize != 8 || !f || f[0] != 'd' || f[1] != '\0') {
        PyErr_Format(PyExc_ValueError, "%s must be a float64 array", name);
        return NULL;
    }
    if (v->ndim != ndim) {
        PyErr_Format(PyExc_ValueError, "%s must have %d dimension%s, got %d", name, ndim,
                     ndim == 1 ? "" : "s", v->ndim);
        return NULL;
    }
    for (int i = 0; i < ndim; i++)
        shape[i] = v->shape[i];
    return (double *)v->buf;
}

/* P (n, NP) and W (NW,): the robot, with n >= 1. */
static int robot_args(Args *a, PyObject *const *args, const double **P, const double **W,
                      Py_ssize_t *n)
{
    Py_ssize_t sp[2], sw[1];
    if (!(*P = arg(a, args[0], 2, 0, "P", sp)))
        return -1;
    if (sp[1] != NP || sp[0] < 1) {
        PyErr_Format(PyExc_ValueError, "P must be an (n, %d) array with n >= 1", (int)NP);
        return -1;
    }
    if (!(*W = arg(a, args[1], 1, 0, "W", sw)))
        return -1;
    if (sw[0] != NW) {
        PyErr_Format(PyExc_ValueError, "W must have %d elements", (int)NW);
        return -1;
    }
    *n = sp[0];
    return 0;
}

/* Number of rows m of a flat (m*n,) joint array of length len (the _rows of _kernels.py). */
static Py_ssize_t rows(Py_ssize_t len, Py_ssize_t n)
{
    if (len % n != 0 || len == 0) {
        PyErr_SetString(PyExc_ValueError, "joint array length is not a positive multiple of n");
        return -1;
    }
    return len / n;
}

static int check_out(const Py_ssize_t *shape, Py_ssize_t r, Py_ssize_t c)
{
    if (shape[0] != r || shape[1] != c) {
        PyErr_SetString(PyExc_ValueError, "out has the wrong shape");
        return -1;
    }
    return 0;
}

static int nargs_is(Py_ssize_t nargs, Py_ssize_t want, const char *fn)
{
    if (nargs != want) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", fn, want, nargs);
        return -1;
    }
    return 0;
}

/* Work arrays: on the stack when small, else on the heap. Callers set only p = NULL: an
 * initialiser would clear all of local[] (20 KB) on every call. */
typedef struct {
    double *p;
    double local[WORK_LOCAL];
} Work;

static double *work_get(Work *w, size_t count)
{
    if (count <= WORK_LOCAL)
        return w->p = w->local;
    w->p = PyMem_Malloc(count * sizeof(double));
    if (!w->p)
        PyErr_NoMemory();
    return w->p;
}

static void work_free(Work *w)
{
    if (w->p && w->p != w->local)
        PyMem_Free(w->p);
    w->p = NULL;
}

/* ------------------------------------------------------------------ small helpers */

/* r = a x b (r may alias neither a nor b: callers pass temporaries) */
static inline void cross(double ax, double ay, double az, double bx, double by, double bz,
                         double *r)
{
    r[0] = ay * bz - az * by;
    r[1] = az * bx - ax * bz;
    r[2] = ax * by - ay * bx;
}

/* r = R v, R the rotation part of the 3x4 frame t */
static inline void rv(const double *t, double x, double y, double z, double *r)
{
    r[0] = t[0] * x + t[1] * y + t[2] * z;
    r[1] = t[4] * x + t[5] * y + t[6] * z;
    r[2] = t[8] * x + t[9] * y + t[10] * z;
}

/* r = R^T v */
static inline void rtv(const double *t, double x, double y, double z, double *r)
{
    r[0] = t[0] * x + t[4] * y + t[8] * z;
    r[1] = t[1] * x + t[5] * y + t[9] * z;
    r[2] = t[2] * x + t[6] * y + t[10] * z;
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

/* Link transform ^{j-1}A_j (3x4) of link j for joint value qj.
 * Standard DH A = Rz(th) Tz(d) Tx(a) Rx(alpha); modified A = Rx(alpha) Tx(a) Rz(th) Tz(d). */
static inline void dh(const double *P, int mdh, Py_ssize_t j, double qj, double *t)
{
    const double *p = P + j * NP;
    double v = qj + p[OFFSET], th, d;
    if (p[SIGMA] == 0.0) {
        th = v;
        d = p[D];
    } else {
        th = p[THETA];
        d = v;
    }
    double ct = cos(th), st = sin(th), ca = p[CA], sa = p[SA], a = p[A];
    if (mdh) {
        t[0] = ct;      t[1] = -st;     t[2] = 0.0;  t[3] = a;
        t[4] = ca * st; t[5] = ca * ct; t[6] = -sa;  t[7] = -sa * d;
        t[8] = sa * st; t[9] = sa * ct; t[10] = ca;  t[11] = ca * d;
    } else {
        t[0] = ct; t[1] = -st * ca; t[2] = st * sa;  t[3] = a * ct;
        t[4] = st; t[5] = ct * ca;  t[6] = -ct * sa; t[7] = a * st;
        t[8] = 0.0; t[9] = sa;      t[10] = ca;      t[11] = d;
    }
}

/* F (n+1, 12): F[k] = T0 A_1 ... A_k, T0 = base or identity; q the n joint values. */
static void frames(const double *P, const double *W, Py_ssize_t n, int use_base,
                   const double *q, double *F)
{
    int mdh = W[MDH] != 0.0;
    double a[12];
    memcpy(F, use_base ? W + BASE : EYE, 12 * sizeof(double));
    for (Py_ssize_t j = 0; j < n; j++) {
        dh(P, mdh, j, q[j], a);
        mul(F + 12 * j, a, F + 12 * (j + 1));
    }
}

/* Axis z and a point o of joint k: frame k (standard) or k+1 (modified). */
static inline void axis(const double *F, int mdh, Py_ssize_t k, double *z, double *o)
{
    const double *f = F + 12 * (mdh ? k + 1 : k);
    z[0] = f[2]; z[1] = f[6]; z[2] = f[10];
    o[0] = f[3]; o[1] = f[7]; o[2] = f[11];
}

/* Write the 3x4 frame t as a 4x4 homogeneous transform at out (16 doubles, row-major). */
static inline void put(double *out, const double *t)
{
    memcpy(out, t, 12 * sizeof(double));
    out[12] = 0.0; out[13] = 0.0; out[14] = 0.0; out[15] = 1.0;
}

/* ------------------------------------------------------------------ kinematics */

PyDoc_STRVAR(fkine_doc,
"fkine(P, W, q, out)\n--\n\n"
"End-effector pose base*A_1...A_n*tool: q (m*n,), out (4m, 4), one 4x4 block per row.");

static PyObject *k_fkine(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Args a;
    a.count = 0;
    const double *P, *W, *q;
    double *out;
    Py_ssize_t n, sq[1], so[2];
    PyObject *res = NULL;
    if (nargs_is(nargs, 4, "fkine") < 0 || robot_args(&a, args, &P, &W, &n) < 0
        || !(q = arg(&a, args[2], 1, 0, "q", sq)) || !(out = arg(&a, args[3], 2, 1, "out", so)))
        goto done;
    Py_ssize_t m = rows(sq[0], n);
    if (m < 0 || check_out(so, 4 * m, 4) < 0)
        goto done;
    int mdh = W[MDH] != 0.0;
    for (Py_ssize_t k = 0; k < m; k++) {
        double t[12], u[12];
        memcpy(t, W + BASE, sizeof t);
        for (Py_ssize_t j = 0; j < n; j++) {
            dh(P, mdh, j, q[k * n + j], u);
            mul(t, u, t);
        }
        mul(t, W + TOOL, t);
        put(out + 16 * k, t);
    }
    res = Py_NewRef(Py_None);
done:
    args_release(&a);
    return res;
}

PyDoc_STRVAR(fkine_all_doc,
"fkine_all(P, W, q, out)\n--\n\n"
"Frames [base, base*A_1, ..., base*A_1...A_n] (tool not applied): q (m*n,),\n"
"out (4m(n+1), 4), 4x4 blocks.");

static PyObject *k_fkine_all(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Args a;
    a.count = 0;
    Work w;
    w.p = NULL;
    const double *P, *W, *q;
    double *out, *F;
    Py_ssize_t n, sq[1], so[2];
    PyObject *res = NULL;
    if (nargs_is(nargs, 4, "fkine_all") < 0 || robot_args(&a, args, &P, &W, &n) < 0
        || !(q = arg(&a, args[2], 1, 0, "q", sq)) || !(out = arg(&a, args[3], 2, 1, "out", so)))
        goto done;
    Py_ssize_t m = rows(sq[0], n);
    if (m < 0 || check_out(so, 4 * m * (n + 1), 4) < 0 || !(F = work_get(&w, 12 * (n + 1))))
        goto done;
    for (Py_ssize_t k = 0; k < m; k++) {
        frames(P, W, n, 1, q + k * n, F);
        for (Py_ssize_t f = 0; f <= n; f++)
            put(out + 16 * (k * (n + 1) + f), F + 12 * f);
    }
    res = Py_NewRef(Py_None);
done:
    work_free(&w);
    args_release(&a);
    return res;
}

PyDoc_STRVAR(jacobian_doc,
"jacobian(P, W, q, in_tool, out)\n--\n\n"
"Geometric Jacobian (6, n) per configuration, rows [v; w] of the tool point.\n"
"Column k, revolute: [z_k x (p_e - o_k); z_k]; prismatic: [z_k; 0]; in the world frame\n"
"(jacob0), or in the tool frame when in_tool is true (jacobn). q (m*n,), out (6m, n).");

static PyObject *k_jacobian(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Args a;
    a.count = 0;
    Work w;
    w.p = NULL;
    const double *P, *W, *q;
    double *out, *F;
    Py_ssize_t n, sq[1], so[2];
    PyObject *res = NULL;
    int in_tool;
    if (nargs_is(nargs, 5, "jacobian") < 0 || robot_args(&a, args, &P, &W, &n) < 0
        || !(q = arg(&a, args[2], 1, 0, "q", sq)) || (in_tool = PyObject_IsTrue(args[3])) < 0
        || !(out = arg(&a, args[4], 2, 1, "out", so)))
        goto done;
    Py_ssize_t m = rows(sq[0], n);
    if (m < 0 || check_out(so, 6 * m, n) < 0 || !(F = work_get(&w, 12 * (n + 1))))
        goto done;
    int mdh = W[MDH] != 0.0;
    for (Py_ssize_t k = 0; k < m; k++) {
        double te[12], z[3], o[3], v[3], om[3], r[3];
        frames(P, W, n, 1, q + k * n, F);
        mul(F + 12 * n, W + TOOL, te);
        double ex = te[3], ey = te[7], ez = te[11];
        double *J = out + 6 * k * n;
        for (Py_ssize_t j = 0; j < n; j++) {
            axis(F, mdh, j, z, o);
            if (P[j * NP + SIGMA] == 0.0) {
                cross(z[0], z[1], z[2], ex - o[0], ey - o[1], ez - o[2], v);
                om[0] = z[0]; om[1] = z[1]; om[2] = z[2];
            } else {
                v[0] = z[0]; v[1] = z[1]; v[2] = z[2];
                om[0] = om[1] = om[2] = 0.0;
            }
            if (in_tool) {
                rtv(te, v[0], v[1], v[2], r);
                memcpy(v, r, sizeof r);
                rtv(te, om[0], om[1], om[2], r);
                memcpy(om, r, sizeof r);
            }
            J[j] = v[0];
            J[n + j] = v[1];
            J[2 * n + j] = v[2];
            J[3 * n + j] = om[0];
            J[4 * n + j] = om[1];
            J[5 * n + j] = om[2];
        }
    }
    res = Py_NewRef(Py_None);
done:
    work_free(&w);
    args_release(&a);
    return res;
}

/* acc += b x r + w x (w x r): transport of a point acceleration along r on a rigid body */
static inline void transport(double *acc, const double *b, const double *w, const double *r)
{
    double c[3], u[3], uu[3];
    cross(b[0], b[1], b[2], r[0], r[1], r[2], c);
    cross(w[0], w[1], w[2], r[0], r[1], r[2], u);
    cross(w[0], w[1], w[2], u[0], u[1], u[2], uu);
    acc[0] = acc[0] + c[0] + uu[0];
    acc[1] = acc[1] + c[1] + uu[1];
    acc[2] = acc[2] + c[2] + uu[2];
}

PyDoc_STRVAR(jacob_dot_doc,
"jacob_dot(P, W, q, qd, out)\n--\n\n"
"Jdot(q, qd)*qd in the world frame: tool-point acceleration and angular acceleration at\n"
"qdd = 0, by an outward recursion over the joint axes. q, qd (m*n,), out (6m,) rows [a; wdot].");

static PyObject *k_jacob_dot(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Args a;
    a.count = 0;
    Work wk;
    wk.p = NULL;
    const double *P, *W, *q, *qd;
    double *out, *F;
    Py_ssize_t n, sq[1], sqd[1], so[1];
    PyObject *res = NULL;
    if (nargs_is(nargs, 5, "jacob_dot") < 0 || robot_args(&a, args, &P, &W, &n) < 0
        || !(q = arg(&a, args[2], 1, 0, "q", sq)) || !(qd = arg(&a, args[3], 1, 0, "qd", sqd))
        || !(out = arg(&a, args[4], 1, 1, "out", so)))
        goto done;
    Py_ssize_t m = rows(sq[0], n);
    if (m < 0)
        goto done;
    if (sqd[0] != sq[0] || so[0] != 6 * m) {
        PyErr_SetString(PyExc_ValueError, "qd or out has the wrong length");
        goto done;
    }
    if (!(F = work_get(&wk, 12 * (n + 1))))
        goto done;
    int mdh = W[MDH] != 0.0;
    for (Py_ssize_t k = 0; k < m; k++) {
        double w[3] = {0, 0, 0};     /* angular velocity of the previous body */
        double b[3] = {0, 0, 0};     /* its angular acceleration */
        double acc[3] = {0, 0, 0};   /* acceleration of its frame origin */
        double O[3], z[3], o[3], r[3], s[3], te[12];
        frames(P, W, n, 1, q + k * n, F);
        O[0] = F[3]; O[1] = F[7]; O[2] = F[11];
        for (Py_ssize_t j = 0; j < n; j++) {
            double qdj = qd[k * n + j];
            axis(F, mdh, j, z, o);
            /* acceleration of the axis point o, as a point of the previous body */
            r[0] = o[0] - O[0]; r[1] = o[1] - O[1]; r[2] = o[2] - O[2];
            transport(acc, b, w, r);
            cross(w[0], w[1], w[2], z[0] * qdj, z[1] * qdj, z[2] * qdj, s);
            if (P[j * NP + SIGMA] == 0.0) {
                b[0] = b[0] + s[0]; b[1] = b[1] + s[1]; b[2] = b[2] + s[2];
                w[0] = w[0] + z[0] * qdj; w[1] = w[1] + z[1] * qdj; w[2] = w[2] + z[2] * qdj;
            } else {
                acc[0] = acc[0] + 2.0 * s[0];
                acc[1] = acc[1] + 2.0 * s[1];
                acc[2] = acc[2] + 2.0 * s[2];
            }
            const double *N = F + 12 * (j + 1);
            r[0] = N[3] - o[0]; r[1] = N[7] - o[1]; r[2] = N[11] - o[2];
            transport(acc, b, w, r);
            O[0] = N[3]; O[1] = N[7]; O[2] = N[11];
        }
        mul(F + 12 * n, W + TOOL, te);
        r[0] = te[3] - O[0]; r[1] = te[7] - O[1]; r[2] = te[11] - O[2];
        transport(acc, b, w, r);
        double *y = out + 6 * k;
        y[0] = acc[0]; y[1] = acc[1]; y[2] = acc[2];
        y[3] = b[0]; y[4] = b[1]; y[5] = b[2];
    }
    res = Py_NewRef(Py_None);
done:
    work_free(&wk);
    args_release(&a);
    return res;
}

/* ------------------------------------------------------------------ dynamics */

/* Link-side friction of joint j: |G|(B|G| qd + Tc), Tc = Tc+ (qd > 0), Tc- (qd < 0), 0 at rest */
static inline double friction1(const double *P, Py_ssize_t j, double qdj)
{
    const double *p = P + j * NP;
    double g = fabs(p[G]);
    double f = g * g * p[B] * qdj;
    if (qdj > 0.0)
        f += g * p[TCP];
    else if (qdj < 0.0)
        f += g * p[TCN];
    return f;
}

PyDoc_STRVAR(friction_doc,
"friction(P, qd, out)\n--\n\n"
"Joint friction torques F(qd) = |G|(B|G| qd + Tc); qd and out (m*n,).");

static PyObject *k_friction(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Args a;
    a.count = 0;
    const double *P, *qd;
    double *out;
    Py_ssize_t sp[2], sqd[1], so[1];
    PyObject *res = NULL;
    if (nargs_is(nargs, 3, "friction") < 0 || !(P = arg(&a, args[0], 2, 0, "P", sp)))
        goto done;
    if (sp[1] != NP || sp[0] < 1) {
        PyErr_Format(PyExc_ValueError, "P must be an (n, %d) array with n >= 1", (int)NP);
        goto done;
    }
    if (!(qd = arg(&a, args[1], 1, 0, "qd", sqd)) || !(out = arg(&a, args[2], 1, 1, "out", so))
        || rows(sqd[0], sp[0]) < 0)
        goto done;
    if (so[0] != sqd[0]) {
        PyErr_SetString(PyExc_ValueError, "out has the wrong length");
        goto done;
    }
    for (Py_ssize_t i = 0; i < sqd[0]; i++)
        out[i] = friction1(P, i % sp[0], qd[i]);
    res = Py_NewRef(Py_None);
done:
    args_release(&a);
    return res;
}

#define RNE_WORK 21   /* per link: A_j (12), p (3), F = m*vdot_c (3), N = I wdot + w x I w (3) */

/* Recursive Newton-Euler for one configuration (the _rne_row of _kernels.py, which states the
 * equations): q, qd, qdd the n joint values of the row, fext its tip wrench (6, tool frame,
 * about the tool point); writes the n joint torques to out; work (n, RNE_WORK). */
static void rne_row(const double *P, const double *W, Py_ssize_t n, const double *g,
                    const double *q, const double *qd, const double *qdd, const double *fext,
                    double *out, double *work)
{
    int mdh = W[MDH] != 0.0;
    double w[3] = {0, 0, 0}, al[3] = {0, 0, 0}, v[3] = {g[0], g[1], g[2]};
    double t[12], p[3], c[3], u[3], uu[3], r[3];
    for (Py_ssize_t j = 0; j < n; j++) {
        const double *pj = P + j * NP;
        double qdj = qd[j], qddj = qdd[j];
        dh(P, mdh, j, q[j], t);
        if (mdh) {
            p[0] = t[3]; p[1] = t[7]; p[2] = t[11];
            cross(al[0], al[1], al[2], p[0], p[1], p[2], c);
            cross(w[0], w[1], w[2], p[0], p[1], p[2], u);
            cross(w[0], w[1], w[2], u[0], u[1], u[2], uu);
            rtv(t, v[0] + c[0] + uu[0], v[1] + c[1] + uu[1], v[2] + c[2] + uu[2], v);
            rtv(t, w[0], w[1], w[2], r);
            memcpy(w, r, sizeof r);
            rtv(t, al[0], al[1], al[2], r);
            memcpy(al, r, sizeof r);
            if (pj[SIGMA] == 0.0) {
                al[0] = al[0] + w[1] * qdj;
                al[1] = al[1] - w[0] * qdj;
                al[2] = al[2] + qddj;
                w[2] += qdj;
            } else {
                v[0] = v[0] + 2.0 * w[1] * qdj;
                v[1] = v[1] - 2.0 * w[0] * qdj;
                v[2] = v[2] + qddj;
            }
        } else {
            rtv(t, t[3], t[7], t[11], p);
            if (pj[SIGMA] == 0.0) {
                rtv(t, al[0] + w[1] * qdj, al[1] - w[0] * qdj, al[2] + qddj, al);
                rtv(t, w[0], w[1], w[2] + qdj, r);
                memcpy(w, r, sizeof r);
                rtv(t, v[0], v[1], v[2], r);
                memcpy(v, r, sizeof r);
            } else {
                rtv(t, w[0], w[1], w[2], r);
                memcpy(w, r, sizeof r);
                rtv(t, al[0], al[1], al[2], r);
                memcpy(al, r, sizeof r);
                rtv(t, v[0], v[1], v[2] + qddj, r);
                memcpy(v, r, sizeof r);
                cross(w[0], w[1], w[2], t[8], t[9], t[10], c);
                v[0] = v[0] + 2.0 * qdj * c[0];
                v[1] = v[1] + 2.0 * qdj * c[1];
                v[2] = v[2] + 2.0 * qdj * c[2];
            }
            cross(al[0], al[1], al[2], p[0], p[1], p[2], c);
            cross(w[0], w[1], w[2], p[0], p[1], p[2], u);
            cross(w[0], w[1], w[2], u[0], u[1], u[2], uu);
            v[0] = v[0] + c[0] + uu[0];
            v[1] = v[1] + c[1] + uu[1];
            v[2] = v[2] + c[2] + uu[2];
        }
        /* COM acceleration, Newton and Euler */
        const double *I = pj + I0;
        cross(al[0], al[1], al[2], pj[RX], pj[RY], pj[RZ], c);
        cross(w[0], w[1], w[2], pj[RX], pj[RY], pj[RZ], u);
        cross(w[0], w[1], w[2], u[0], u[1], u[2], uu);
        double mj = pj[M];
        double Iw0 = I[0] * w[0] + I[1] * w[1] + I[2] * w[2];
        double Iw1 = I[3] * w[0] + I[4] * w[1] + I[5] * w[2];
        double Iw2 = I[6] * w[0] + I[7] * w[1] + I[8] * w[2];
        double e[3];
        cross(w[0], w[1], w[2], Iw0, Iw1, Iw2, e);
        double *wj = work + j * RNE_WORK;
        memcpy(wj, t, 12 * sizeof(double));
        wj[12] = p[0];
        wj[13] = p[1];
        wj[14] = p[2];
        wj[15] = mj * (v[0] + c[0] + uu[0]);
        wj[16] = mj * (v[1] + c[1] + uu[1]);
        wj[17] = mj * (v[2] + c[2] + uu[2]);
        wj[18] = I[0] * al[0] + I[1] * al[1] + I[2] * al[2] + e[0];
        wj[19] = I[3] * al[0] + I[4] * al[1] + I[5] * al[2] + e[1];
        wj[20] = I[6] * al[0] + I[7] * al[1] + I[8] * al[2] + e[2];
    }

    /* tip wrench: tool frame about the tool point -> frame n about its origin */
    double f[3], nm[3], z[3];
    const double *tool = W + TOOL;
    rv(tool, fext[0], fext[1], fext[2], f);
    rv(tool, fext[3], fext[4], fext[5], nm);
    cross(tool[3], tool[7], tool[11], f[0], f[1], f[2], c);
    nm[0] = nm[0] + c[0]; nm[1] = nm[1] + c[1]; nm[2] = nm[2] + c[2];
    for (Py_ssize_t j = n - 1; j >= 0; j--) {
        const double *pj = P + j * NP;
        const double *wj = work + j * RNE_WORK;
        if (j < n - 1) {
            const double *wn = wj + RNE_WORK;
            rv(wn, f[0], f[1], f[2], r);
            memcpy(f, r, sizeof r);
            rv(wn, nm[0], nm[1], nm[2], r);
            memcpy(nm, r, sizeof r);
        }
        double Fx = wj[15], Fy = wj[16], Fz = wj[17];
        double sx = pj[RX], sy = pj[RY], sz = pj[RZ];
        if (mdh) {
            if (j < n - 1) {
                const double *wn = wj + RNE_WORK;
                cross(wn[12], wn[13], wn[14], f[0], f[1], f[2], c);
                nm[0] = nm[0] + c[0]; nm[1] = nm[1] + c[1]; nm[2] = nm[2] + c[2];
            }
            cross(sx, sy, sz, Fx, Fy, Fz, c);
            z[0] = 0.0; z[1] = 0.0; z[2] = 1.0;
        } else {
            double px = wj[12], py = wj[13], pz = wj[14];
            cross(px, py, pz, f[0], f[1], f[2], u);
            cross(px + sx, py + sy, pz + sz, Fx, Fy, Fz, c);
            nm[0] = nm[0] + u[0]; nm[1] = nm[1] + u[1]; nm[2] = nm[2] + u[2];
            z[0] = wj[8]; z[1] = wj[9]; z[2] = wj[10];
        }
        nm[0] = nm[0] + c[0] + wj[18];
        nm[1] = nm[1] + c[1] + wj[19];
        nm[2] = nm[2] + c[2] + wj[20];
        f[0] = f[0] + Fx; f[1] = f[1] + Fy; f[2] = f[2] + Fz;
        double tau;
        if (pj[SIGMA] == 0.0)
            tau = nm[0] * z[0] + nm[1] * z[1] + nm[2] * z[2];
        else
            tau = f[0] * z[0] + f[1] * z[1] + f[2] * z[2];
        double gj = pj[G];
        out[j] = tau + gj * gj * pj[JM] * qdd[j] + friction1(P, j, qd[j]);
    }
}

/* g (3,) and fext (6 or 6m): arguments 2 and 6 of rne and accel; *fstep 0 or 6. */
static int dyn_args(Args *a, PyObject *gobj, PyObject *fobj, Py_ssize_t m, const double **g,
                    const double **fext, Py_ssize_t *fstep)
{
    Py_ssize_t sg[1], sf[1];
    if (!(*g = arg(a, gobj, 1, 0, "g", sg)))
        return -1;
    if (sg[0] != 3) {
        PyErr_SetString(PyExc_ValueError, "g must have 3 elements");
        return -1;
    }
    if (!(*fext = arg(a, fobj, 1, 0, "fext", sf)))
        return -1;
    if (sf[0] != 6 && sf[0] != 6 * m) {
        PyErr_SetString(PyExc_ValueError, "fext must have 6 or 6*m elements");
        return -1;
    }
    *fstep = sf[0] == 6 ? 0 : 6;
    return 0;
}

PyDoc_STRVAR(rne_doc,
"rne(P, W, g, q, qd, qdd, fext, out)\n--\n\n"
"Inverse dynamics tau = M(q)qdd + C(q,qd)qd + F(qd) + g(q) [+ J^T fext] for m configurations\n"
"by recursive Newton-Euler. g (3,) the base acceleration modelling gravity (base frame);\n"
"fext (6,) for all rows or (6m,) one wrench per row; q, qd, qdd, out (m*n,).");

static PyObject *k_rne(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Args a;
    a.count = 0;
    Work wk;
    wk.p = NULL;
    const double *P, *W, *g, *q, *qd, *qdd, *fext;
    double *out, *work;
    Py_ssize_t n, sq[1], sqd[1], sqdd[1], so[1], fstep;
    PyObject *res = NULL;
    if (nargs_is(nargs, 8, "rne") < 0 || robot_args(&a, args, &P, &W, &n) < 0
        || !(q = arg(&a, args[3], 1, 0, "q", sq)) || !(qd = arg(&a, args[4], 1, 0, "qd", sqd))
        || !(qdd = arg(&a, args[5], 1, 0, "qdd", sqdd))
        || !(out = arg(&a, args[7], 1, 1, "out", so)))
        goto done;
    Py_ssize_t m = rows(sq[0], n);
    if (m < 0)
        goto done;
    if (sqd[0] != sq[0] || sqdd[0] != sq[0] || so[0] != sq[0]) {
        PyErr_SetString(PyExc_ValueError, "q, qd, qdd and out lengths differ");
        goto done;
    }
    if (dyn_args(&a, args[2], args[6], m, &g, &fext, &fstep) < 0
        || !(work = work_get(&wk, RNE_WORK * n)))
        goto done;
    for (Py_ssize_t k = 0; k < m; k++) {
        Py_ssize_t o = k * n;
        rne_row(P, W, n, g, q + o, qd + o, qdd + o, fext + k * fstep, out + o, work);
    }
    res = Py_NewRef(Py_None);
done:
    work_free(&wk);
    args_release(&a);
    return res;
}

/* Joint-space inertia of one configuration by the composite-rigid-body algorithm, in the base
 * frame (the _inertia_row of _kernels.py, which states the equations); writes the n x n
 * matrix at out (row-major, row stride n). F (n+1, 12) and C (n, 10) are work arrays. */
static void inertia_row(const double *P, const double *W, Py_ssize_t n, const double *q,
                        double *out, double *F, double *C)
{
    int mdh = W[MDH] != 0.0;
    frames(P, W, n, 0, q, F);
    double Mc = 0.0, ccx = 0.0, ccy = 0.0, ccz = 0.0;
    double Ixx = 0.0, Iyy = 0.0, Izz = 0.0, Ixy = 0.0, Iyz = 0.0, Ixz = 0.0;
    for (Py_ssize_t k = n - 1; k >= 0; k--) {
        const double *t = F + 12 * (k + 1), *pk = P + k * NP, *I = pk + I0;
        double s[3], c0[3], c1[3], c2[3];
        rv(t, pk[RX], pk[RY], pk[RZ], s);
        double cx = t[3] + s[0], cy = t[7] + s[1], cz = t[11] + s[2];
        /* columns of R*I: c0, c1, c2; then R*I*R^T */
        rv(t, I[0], I[3], I[6], c0);
        rv(t, I[1], I[4], I[7], c1);
        rv(t, I[2], I[5], I[8], c2);
        double wxx = c0[0] * t[0] + c1[0] * t[1] + c2[0] * t[2];
        double wyy = c0[1] * t[4] + c1[1] * t[5] + c2[1] * t[6];
        double wzz = c0[2] * t[8] + c1[2] * t[9] + c2[2] * t[10];
        double wxy = c0[0] * t[4] + c1[0] * t[5] + c2[0] * t[6];
        double wyz = c0[1] * t[8] + c1[1] * t[9] + c2[1] * t[10];
        double wxz = c0[0] * t[8] + c1[0] * t[9] + c2[0] * t[10];
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
        Ixx += Mc * (dy * dy + dz * dz) + wxx + mk * (ey * ey + ez * ez);
        Iyy += Mc * (dx * dx + dz * dz) + wyy + mk * (ex * ex + ez * ez);
        Izz += Mc * (dx * dx + dy * dy) + wzz + mk * (ex * ex + ey * ey);
        Ixy += -Mc * dx * dy + wxy - mk * ex * ey;
        Iyz += -Mc * dy * dz + wyz - mk * ey * ez;
        Ixz += -Mc * dx * dz + wxz - mk * ex * ez;
        Mc = Mn;
        ccx = nx; ccy = ny; ccz = nz;
        double *Ck = C + 10 * k;
        Ck[0] = Mc; Ck[1] = ccx; Ck[2] = ccy; Ck[3] = ccz;
        Ck[4] = Ixx; Ck[5] = Iyy; Ck[6] = Izz; Ck[7] = Ixy; Ck[8] = Iyz; Ck[9] = Ixz;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        const double *Ci = C + 10 * i;
        double z[3], o[3], p[3], L[3];
        axis(F, mdh, i, z, o);
        double Mi = Ci[0], cx = Ci[1], cy = Ci[2], cz = Ci[3];
        if (P[i * NP + SIGMA] == 0.0) {
            cross(z[0], z[1], z[2], cx - o[0], cy - o[1], cz - o[2], p);
            p[0] = Mi * p[0]; p[1] = Mi * p[1]; p[2] = Mi * p[2];
            L[0] = Ci[4] * z[0] + Ci[7] * z[1] + Ci[9] * z[2];
            L[1] = Ci[7] * z[0] + Ci[5] * z[1] + Ci[8] * z[2];
            L[2] = Ci[9] * z[0] + Ci[8] * z[1] + Ci[6] * z[2];
        } else {
            p[0] = Mi * z[0]; p[1] = Mi * z[1]; p[2] = Mi * z[2];
            L[0] = L[1] = L[2] = 0.0;
        }
        for (Py_ssize_t j = 0; j <= i; j++) {
            double h[3], mji;
            axis(F, mdh, j, z, o);
            if (P[j * NP + SIGMA] == 0.0) {
                cross(cx - o[0], cy - o[1], cz - o[2], p[0], p[1], p[2], h);
                mji = z[0] * (L[0] + h[0]) + z[1] * (L[1] + h[1]) + z[2] * (L[2] + h[2]);
            } else {
                mji = z[0] * p[0] + z[1] * p[1] + z[2] * p[2];
            }
            out[j * n + i] = mji;
            out[i * n + j] = mji;
        }
        double gi = P[i * NP + G];
        out[i * n + i] += gi * gi * P[i * NP + JM];
    }
}

PyDoc_STRVAR(inertia_doc,
"inertia(P, W, q, out)\n--\n\n"
"Joint-space inertia matrices M(q), motor inertia G^2*Jm included, by the composite-rigid-\n"
"body algorithm; q (m*n,), out (m*n, n).");

static PyObject *k_inertia(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Args a;
    a.count = 0;
    Work wk;
    wk.p = NULL;
    const double *P, *W, *q;
    double *out, *F;
    Py_ssize_t n, sq[1], so[2];
    PyObject *res = NULL;
    if (nargs_is(nargs, 4, "inertia") < 0 || robot_args(&a, args, &P, &W, &n) < 0
        || !(q = arg(&a, args[2], 1, 0, "q", sq)) || !(out = arg(&a, args[3], 2, 1, "out", so)))
        goto done;
    Py_ssize_t m = rows(sq[0], n);
    if (m < 0 || check_out(so, m * n, n) < 0 || !(F = work_get(&wk, 12 * (n + 1) + 10 * n)))
        goto done;
    for (Py_ssize_t k = 0; k < m; k++)
        inertia_row(P, W, n, q + k * n, out + k * n * n, F, F + 12 * (n + 1));
    res = Py_NewRef(Py_None);
done:
    work_free(&wk);
    args_release(&a);
    return res;
}

PyDoc_STRVAR(coriolis_doc,
"coriolis(P, W, q, qd, out)\n--\n\n"
"Coriolis/centripetal matrix C(q, qd) with Mdot - 2C skew-symmetric:\n"
"C = sum_i m_i Jv_i^T Jvdot_i + Jw_i^T (I_i Jwdot_i + w_i x I_i Jw_i), base frame; motor\n"
"inertia and friction do not contribute. q, qd (m*n,), out (m*n, n).");

static PyObject *k_coriolis(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Args a;
    a.count = 0;
    Work wk;
    wk.p = NULL;
    const double *P, *W, *q, *qd;
    double *out, *F, *K, *J;
    Py_ssize_t n, sq[1], sqd[1], so[2];
    PyObject *res = NULL;
    if (nargs_is(nargs, 5, "coriolis") < 0 || robot_args(&a, args, &P, &W, &n) < 0
        || !(q = arg(&a, args[2], 1, 0, "q", sq)) || !(qd = arg(&a, args[3], 1, 0, "qd", sqd))
        || !(out = arg(&a, args[4], 2, 1, "out", so)))
        goto done;
    Py_ssize_t m = rows(sq[0], n);
    if (m < 0)
        goto done;
    if (sqd[0] != sq[0]) {
        PyErr_SetString(PyExc_ValueError, "q and qd lengths differ");
        goto done;
    }
    if (check_out(so, m * n, n) < 0 || !(F = work_get(&wk, 12 * (n + 1) + 27 * n + 12 * n)))
        goto done;
    K = F + 12 * (n + 1);   /* per joint/link: z, o, zdot, odot, w, c, cdot, I (6) */
    J = K + 27 * n;         /* per column: Jv, Jw, m*Jvdot, u = I Jwdot + w x I Jw */
    int mdh = W[MDH] != 0.0;
    for (Py_ssize_t k = 0; k < m; k++) {
        const double *qdk = qd + k * n;
        double w[3] = {0, 0, 0}, v[3] = {0, 0, 0}, O[3] = {0, 0, 0};
        double z[3], o[3], c[3], vo[3], dz[3], s[3], u[3], c0[3], c1[3], c2[3];
        frames(P, W, n, 0, q + k * n, F);
        for (Py_ssize_t j = 0; j < n; j++) {
            const double *pj = P + j * NP, *I = pj + I0;
            double qdj = qdk[j];
            axis(F, mdh, j, z, o);
            cross(w[0], w[1], w[2], o[0] - O[0], o[1] - O[1], o[2] - O[2], c);
            vo[0] = v[0] + c[0]; vo[1] = v[1] + c[1]; vo[2] = v[2] + c[2];
            cross(w[0], w[1], w[2], z[0], z[1], z[2], dz);
            const double *t = F + 12 * (j + 1);
            if (pj[SIGMA] == 0.0) {     /* body j turns about the axis */
                w[0] = w[0] + z[0] * qdj; w[1] = w[1] + z[1] * qdj; w[2] = w[2] + z[2] * qdj;
                s[0] = s[1] = s[2] = 0.0;
            } else {                    /* body j slides along the axis */
                s[0] = z[0] * qdj; s[1] = z[1] * qdj; s[2] = z[2] * qdj;
            }
            cross(w[0], w[1], w[2], t[3] - o[0], t[7] - o[1], t[11] - o[2], c);
            v[0] = vo[0] + c[0] + s[0]; v[1] = vo[1] + c[1] + s[1]; v[2] = vo[2] + c[2] + s[2];
            O[0] = t[3]; O[1] = t[7]; O[2] = t[11];
            rv(t, pj[RX], pj[RY], pj[RZ], s);
            cross(w[0], w[1], w[2], s[0], s[1], s[2], u);
            rv(t, I[0], I[3], I[6], c0);
            rv(t, I[1], I[4], I[7], c1);
            rv(t, I[2], I[5], I[8], c2);
            double *Kj = K + 27 * j;
            Kj[0] = z[0]; Kj[1] = z[1]; Kj[2] = z[2];
            Kj[3] = o[0]; Kj[4] = o[1]; Kj[5] = o[2];
            Kj[6] = dz[0]; Kj[7] = dz[1]; Kj[8] = dz[2];
            Kj[9] = vo[0]; Kj[10] = vo[1]; Kj[11] = vo[2];
            Kj[12] = w[0]; Kj[13] = w[1]; Kj[14] = w[2];
            Kj[15] = O[0] + s[0]; Kj[16] = O[1] + s[1]; Kj[17] = O[2] + s[2];
            Kj[18] = v[0] + u[0]; Kj[19] = v[1] + u[1]; Kj[20] = v[2] + u[2];
            Kj[21] = c0[0] * t[0] + c1[0] * t[1] + c2[0] * t[2];
            Kj[22] = c0[1] * t[4] + c1[1] * t[5] + c2[1] * t[6];
            Kj[23] = c0[2] * t[8] + c1[2] * t[9] + c2[2] * t[10];
            Kj[24] = c0[0] * t[4] + c1[0] * t[5] + c2[0] * t[6];
            Kj[25] = c0[1] * t[8] + c1[1] * t[9] + c2[1] * t[10];
            Kj[26] = c0[0] * t[8] + c1[0] * t[9] + c2[0] * t[10];
        }
        double *Ck = out + k * n * n;
        for (Py_ssize_t i = 0; i < n * n; i++)
            Ck[i] = 0.0;
        for (Py_ssize_t i = 0; i < n; i++) {
            const double *Ki = K + 27 * i;
            double mi = P[i * NP + M];
            double cx = Ki[15], cy = Ki[16], cz = Ki[17];
            double dcx = Ki[18], dcy = Ki[19], dcz = Ki[20];
            double wx = Ki[12], wy = Ki[13], wz = Ki[14];
            double Ixx = Ki[21], Iyy = Ki[22], Izz = Ki[23];
            double Ixy = Ki[24], Iyz = Ki[25], Ixz = Ki[26];
            for (Py_ssize_t b = 0; b <= i; b++) {
                const double *Kb = K + 27 * b;
                double zx = Kb[0], zy = Kb[1], zz = Kb[2];
                double dzx = Kb[6], dzy = Kb[7], dzz = Kb[8];
                double jv[3], jw[3], dj[3], uu[3];
                if (P[b * NP + SIGMA] == 0.0) {
                    double rx = cx - Kb[3], ry = cy - Kb[4], rz = cz - Kb[5], ax[3], e[3];
                    cross(zx, zy, zz, rx, ry, rz, jv);
                    cross(dzx, dzy, dzz, rx, ry, rz, ax);
                    cross(zx, zy, zz, dcx - Kb[9], dcy - Kb[10], dcz - Kb[11], e);
                    dj[0] = ax[0] + e[0]; dj[1] = ax[1] + e[1]; dj[2] = ax[2] + e[2];
                    jw[0] = zx; jw[1] = zy; jw[2] = zz;
                    /* u = I zdot + w x (I z) */
                    double hx = Ixx * zx + Ixy * zy + Ixz * zz;
                    double hy = Ixy * zx + Iyy * zy + Iyz * zz;
                    double hz = Ixz * zx + Iyz * zy + Izz * zz;
                    cross(wx, wy, wz, hx, hy, hz, e);
                    uu[0] = Ixx * dzx + Ixy * dzy + Ixz * dzz + e[0];
                    uu[1] = Ixy * dzx + Iyy * dzy + Iyz * dzz + e[1];
                    uu[2] = Ixz * dzx + Iyz * dzy + Izz * dzz + e[2];
                } else {
                    jv[0] = zx; jv[1] = zy; jv[2] = zz;
                    dj[0] = dzx; dj[1] = dzy; dj[2] = dzz;
                    jw[0] = jw[1] = jw[2] = 0.0;
                    uu[0] = uu[1] = uu[2] = 0.0;
                }
                double *Jb = J + 12 * b;
                Jb[0] = jv[0]; Jb[1] = jv[1]; Jb[2] = jv[2];
                Jb[3] = jw[0]; Jb[4] = jw[1]; Jb[5] = jw[2];
                Jb[6] = mi * dj[0]; Jb[7] = mi * dj[1]; Jb[8] = mi * dj[2];
                Jb[9] = uu[0]; Jb[10] = uu[1]; Jb[11] = uu[2];
            }
            for (Py_ssize_t r = 0; r <= i; r++) {
                const double *Ja = J + 12 * r;
                for (Py_ssize_t b = 0; b <= i; b++) {
                    const double *Jb = J + 12 * b;
                    Ck[r * n + b] += (Ja[0] * Jb[6] + Ja[1] * Jb[7] + Ja[2] * Jb[8]
                                      + Ja[3] * Jb[9] + Ja[4] * Jb[10] + Ja[5] * Jb[11]);
                }
            }
        }
    }
    res = Py_NewRef(Py_None);
done:
    work_free(&wk);
    args_release(&a);
    return res;
}

PyDoc_STRVAR(accel_doc,
"accel(P, W, g, q, qd, tau, fext, out)\n--\n\n"
"Forward dynamics qdd = M(q)^-1 (tau - rne(q, qd, 0)) for m configurations: the bias from one\n"
"Newton-Euler pass at qdd = 0, M by the composite-rigid-body algorithm, the solve by Cholesky\n"
"M = L L^T. Raises ValueError when M is not positive definite. q, qd, tau, out (m*n,).");

static PyObject *k_accel(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Args a;
    a.count = 0;
    Work wk;
    wk.p = NULL;
    const double *P, *W, *g, *q, *qd, *tau, *fext;
    double *out, *work;
    Py_ssize_t n, sq[1], sqd[1], st[1], so[1], fstep;
    PyObject *res = NULL;
    if (nargs_is(nargs, 8, "accel") < 0 || robot_args(&a, args, &P, &W, &n) < 0
        || !(q = arg(&a, args[3], 1, 0, "q", sq)) || !(qd = arg(&a, args[4], 1, 0, "qd", sqd))
        || !(tau = arg(&a, args[5], 1, 0, "tau", st))
        || !(out = arg(&a, args[7], 1, 1, "out", so)))
        goto done;
    Py_ssize_t m = rows(sq[0], n);
    if (m < 0)
        goto done;
    if (sqd[0] != sq[0] || st[0] != sq[0] || so[0] != sq[0]) {
        PyErr_SetString(PyExc_ValueError, "q, qd, tau and out lengths differ");
        goto done;
    }
    if (dyn_args(&a, args[2], args[6], m, &g, &fext, &fstep) < 0
        || !(work = work_get(&wk, RNE_WORK * n + 12 * (n + 1) + 10 * n + n * n + 2 * n)))
        goto done;
    double *F = work + RNE_WORK * n, *C = F + 12 * (n + 1), *L = C + 10 * n;
    double *zero = L + n * n, *b = zero + n;
    for (Py_ssize_t i = 0; i < n; i++)
        zero[i] = 0.0;
    for (Py_ssize_t k = 0; k < m; k++) {
        Py_ssize_t o = k * n;
        rne_row(P, W, n, g, q + o, qd + o, zero, fext + k * fstep, b, work);
        inertia_row(P, W, n, q + o, L, F, C);
        for (Py_ssize_t i = 0; i < n; i++)
            b[i] = tau[o + i] - b[i];
        /* Cholesky, lower triangle of L in place */
        for (Py_ssize_t j = 0; j < n; j++) {
            double s = L[j * n + j];
            for (Py_ssize_t p = 0; p < j; p++)
                s -= L[j * n + p] * L[j * n + p];
            if (!(s > 0.0)) {
                PyErr_SetString(PyExc_ValueError, "inertia matrix is not positive definite");
                goto done;
            }
            s = sqrt(s);
            L[j * n + j] = s;
            for (Py_ssize_t i = j + 1; i < n; i++) {
                double r = L[i * n + j];
                for (Py_ssize_t p = 0; p < j; p++)
                    r -= L[i * n + p] * L[j * n + p];
                L[i * n + j] = r / s;
            }
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            double r = b[i];
            for (Py_ssize_t p = 0; p < i; p++)
                r -= L[i * n + p] * b[p];
            b[i] = r / L[i * n + i];
        }
        for (Py_ssize_t i = n - 1; i >= 0; i--) {
            double r = b[i];
            for (Py_ssize_t p = i + 1; p < n; p++)
                r -= L[p * n + i] * b[p];
            b[i] = r / L[i * n + i];
        }
        for (Py_ssize_t i = 0; i < n; i++)
            out[o + i] = b[i];
    }
    res = Py_NewRef(Py_None);
done:
    work_free(&wk);
    args_release(&a);
    return res;
}

/* ------------------------------------------------------------------ block helper */

PyDoc_STRVAR(subtract_coulomb_doc,
"subtract_coulomb(qd, tau, up, down, inv_band, out)\n--\n\n"
"out = tau - Fc(qd) with the regularised Coulomb friction of the robot block:\n"
"Fc_j = up_j*min(s, 1) for s = qd_j*inv_band > 0, down_j*max(s, -1) otherwise. All (n,).");

static PyObject *k_subtract_coulomb(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Args a;
    a.count = 0;
    const double *qd, *tau, *up, *down;
    double *out, inv_band;
    Py_ssize_t s0[1], s1[1], s2[1], s3[1], s5[1];
    PyObject *res = NULL;
    if (nargs_is(nargs, 6, "subtract_coulomb") < 0
        || !(qd = arg(&a, args[0], 1, 0, "qd", s0)) || !(tau = arg(&a, args[1], 1, 0, "tau", s1))
        || !(up = arg(&a, args[2], 1, 0, "up", s2)) || !(down = arg(&a, args[3], 1, 0, "down", s3))
        || ((inv_band = PyFloat_AsDouble(args[4])) == -1.0 && PyErr_Occurred())
        || !(out = arg(&a, args[5], 1, 1, "out", s5)))
        goto done;
    Py_ssize_t n = s0[0];
    if (s1[0] < n || s2[0] < n || s3[0] < n || s5[0] < n) {
        PyErr_SetString(PyExc_ValueError, "tau, up, down and out need as many elements as qd");
        goto done;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        double s = qd[j] * inv_band, f;
        if (s > 0.0)
            f = up[j] * (1.0 < s ? 1.0 : s);
        else
            f = down[j] * (-1.0 > s ? -1.0 : s);
        out[j] = tau[j] - f;
    }
    res = Py_NewRef(Py_None);
done:
    args_release(&a);
    return res;
}

/* ------------------------------------------------------------------ module */

#define FASTCALL(name) {#name, (PyCFunction)(void (*)(void))k_##name, METH_FASTCALL, name##_doc}

static PyMethodDef methods[] = {
    FASTCALL(fkine),
    FASTCALL(fkine_all),
    FASTCALL(jacobian),
    FASTCALL(jacob_dot),
    FASTCALL(friction),
    FASTCALL(rne),
    FASTCALL(inertia),
    FASTCALL(coriolis),
    FASTCALL(accel),
    FASTCALL(subtract_coulomb),
    {NULL, NULL, 0, NULL}
};

static int exec_module(PyObject *mod)
{
    static const struct { const char *name; int value; } constants[] = {
        {"SIGMA", SIGMA}, {"A", A}, {"THETA", THETA}, {"D", D}, {"OFFSET", OFFSET}, {"M", M},
        {"RX", RX}, {"RY", RY}, {"RZ", RZ}, {"I0", I0}, {"JM", JM}, {"G", G}, {"B", B},
        {"TCP", TCP}, {"TCN", TCN}, {"CA", CA}, {"SA", SA}, {"NP", NP},
        {"BASE", BASE}, {"TOOL", TOOL}, {"MDH", MDH}, {"NW", NW},
    };
    for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++)
        if (PyModule_AddIntConstant(mod, constants[i].name, constants[i].value) < 0)
            return -1;
    return 0;
}

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, exec_module},
    {0, NULL}
};

PyDoc_STRVAR(module_doc,
"Serial-link kinematics and dynamics kernels in C, with the names, packed arrays and\n"
"results of blocks.robot._kernels (see there for the equations and layouts).");

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_ckernels", module_doc, 0, methods, slots, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit__ckernels(void)
{
    return PyModuleDef_Init(&moduledef);
}
