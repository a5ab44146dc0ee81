/*
 * blocks.robot._ckernels: the robot kernels of _kernels.py written in C.
 *
 * Same names, arguments, packed layouts and results as blocks/robot/_kernels.py, which is the
 * reference and documents the joint frames and the equations: robot_base._kernels() may
 * return either module, for every kind of robot (DH or twists).
 *
 *   P (n, NP)   per joint: SIGMA, SLIDE, X (3x4), FRAME (3x4), M, RX..RZ, I0..I0+8,
 *               MOTOR, VISCOUS, UP, DOWN
 *   W (NW,)     base (3x4 row-major [R | p]), tool in the last joint frame (3x4)
 *   g (3,)      base acceleration that models gravity, in the base frame
 *   q, qd, ...  flat (m*n,): m configurations of n joint values, row-major
 *   outputs     filled in place; matrices stacked by rows: fkine (4m, 4), fkine_all
 *               (4m(n+1), 4), jacobian (6m, n), inertia and coriolis (m*n, n); vectors
 *               (m*n,), jacob_dot (6m,)
 *
 * Each algorithm is one row function (one configuration, the _*_row of _kernels.py), in
 * _kernel_rows.c (plain C, which compiled diagrams of accelerated mode include too); a kernel
 * is a table entry (its argument letters, output shape and work size) that the one driver
 * run() parses, checks and loops over the rows. Every array argument goes through the buffer
 * protocol: float64 and C-contiguous, outputs writable (numpy arrays or anything exporting
 * such a buffer; no numpy headers needed). Violations raise ValueError.
 *
 * The arithmetic follows _kernels.py operation by operation (same association order), so with
 * floating-point contraction off (setup.py passes -ffp-contract=off) the results equal the
 * plain-Python kernels bit for bit on IEEE-754 hardware. A change to _kernels.py must be made
 * in _kernel_rows.c too (tests/robot/test_kernel_backends.py compares the two); an editable
 * install rebuilds this module only when pip install -e runs again.
 *
 * Work arrays live on the C stack up to WORK_LOCAL doubles (enough for n <= 32 in every
 * kernel); a larger robot gets them from PyMem_Malloc once per call.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#include "_kernel_rows.c"          /* the row functions: the algorithms themselves */

#define WORK_LOCAL 2560          /* doubles: accel needs n^2 + 42n + 12 (2380 at n = 32) */
#define MAX_BUFS 8

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

typedef int (*RowFn)(const Call *c, ptrdiff_t k, double *work);

/* A kernel: its arguments, one letter each (P, W, g gravity (3,), q joint array (m*n,), b flag,
 * f tip wrench (6 or 6m), o output), their names, the output of m configurations
 * (m*(rn*n + r1), cn*n + c1), or (m*(rn*n + r1),) when cn = c1 = 0, the work doubles
 * w2*n^2 + w1*n + w0 and the row function. */
typedef struct {
    const char *name, *sig, *const *names;
    Py_ssize_t rn, r1, cn, c1, w2, w1, w0;
    RowFn row;
} Kernel;

static int fail(const char *message)
{
    PyErr_SetString(PyExc_ValueError, message);
    return -1;
}

/* Every argument of a call to K checked and its data in c; -1 with an exception otherwise. */
static int parse(const Kernel *K, Args *a, PyObject *const *args, Py_ssize_t nargs, Call *c)
{
    Py_ssize_t nsig = (Py_ssize_t)strlen(K->sig), s[2], so[2] = {0, 0}, len[3], nx = 0, nf = -1;
    int out2 = K->cn || K->c1;
    if (nargs != nsig) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", K->name, nsig,
                     nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nsig; i++) {
        const char *name = K->names[i];
        switch (K->sig[i]) {
        case 'P':
            if (!(c->P = arg(a, args[i], 2, 0, name, s)))
                return -1;
            if (s[1] != NP || s[0] < 1) {
                PyErr_Format(PyExc_ValueError, "P must be an (n, %d) array with n >= 1", NP);
                return -1;
            }
            c->n = s[0];
            break;
        case 'W':
            if (!(c->W = arg(a, args[i], 1, 0, name, s)))
                return -1;
            if (s[0] != NW) {
                PyErr_Format(PyExc_ValueError, "W must have %d elements", NW);
                return -1;
            }
            break;
        case 'g':
            if (!(c->g = arg(a, args[i], 1, 0, name, s)))
                return -1;
            if (s[0] != 3)
                return fail("g must have 3 elements");
            break;
        case 'q':
            if (!(c->x[nx] = arg(a, args[i], 1, 0, name, s)))
                return -1;
            len[nx++] = s[0];
            break;
        case 'b':
            if ((c->flag = PyObject_IsTrue(args[i])) < 0)
                return -1;
            break;
        case 'f':
            if (!(c->fext = arg(a, args[i], 1, 0, name, s)))
                return -1;
            nf = s[0];
            break;
        case 'o':
            if (!(c->out = arg(a, args[i], out2 ? 2 : 1, 1, name, so)))
                return -1;
            break;
        }
    }
    if (len[0] % c->n != 0 || len[0] == 0)
        return fail("joint array length is not a positive multiple of n");
    c->m = len[0] / c->n;
    int joint_out = !out2 && K->rn == 1 && K->r1 == 0;
    int differ = joint_out && so[0] != len[0];
    for (Py_ssize_t i = 1; i < nx; i++)
        differ |= len[i] != len[0];
    if (differ) {
        char message[128] = "";
        for (Py_ssize_t i = 0; i < nsig; i++) {
            if (K->sig[i] != 'q' && !(joint_out && K->sig[i] == 'o'))
                continue;
            if (message[0])
                strcat(message, i == nsig - 1 || (!joint_out && i == nsig - 2) ? " and " : ", ");
            strcat(message, K->names[i]);
        }
        strcat(message, " lengths differ");
        return fail(message);
    }
    if (nf >= 0) {
        if (nf != 6 && nf != 6 * c->m)
            return fail("fext must have 6 or 6*m elements");
        c->fstep = nf == 6 ? 0 : 6;
    }
    if (so[0] != c->m * (K->rn * c->n + K->r1) || (out2 && so[1] != K->cn * c->n + K->c1))
        return fail("out has the wrong shape");
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

/* The driver of every kernel: parse, check, then one row function call per configuration. */
static PyObject *run(const Kernel *K, PyObject *const *args, Py_ssize_t nargs)
{
    Args a;
    a.count = 0;
    Work w;
    w.p = NULL;
    Call c;
    memset(&c, 0, sizeof c);
    PyObject *res = NULL;
    double *work;
    if (parse(K, &a, args, nargs, &c) < 0
        || !(work = work_get(&w, (size_t)(K->w2 * c.n * c.n + K->w1 * c.n + K->w0))))
        goto done;
    for (Py_ssize_t k = 0; k < c.m; k++)
        if (K->row(&c, k, work) == ROW_NOT_POSITIVE_DEFINITE) {
            PyErr_SetString(PyExc_ValueError, "inertia matrix is not positive definite");
            goto done;
        }
    res = Py_NewRef(Py_None);
done:
    work_free(&w);
    args_release(&a);
    return res;
}

/* ------------------------------------------------------------------ the kernels */

static const char *const N_PWQO[] = {"P", "W", "q", "out"};
static const char *const N_JAC[] = {"P", "W", "q", "in_tool", "out"};
static const char *const N_PWQQO[] = {"P", "W", "q", "qd", "out"};
static const char *const N_FRICTION[] = {"P", "qd", "out"};
static const char *const N_RNE[] = {"P", "W", "g", "q", "qd", "qdd", "fext", "out"};
static const char *const N_ACCEL[] = {"P", "W", "g", "q", "qd", "tau", "fext", "out"};

/*                                             name   sig  names     rn r1 cn c1 w2 w1  w0 */
static const Kernel K_fkine = {"fkine", "PWqo", N_PWQO, 0, 4, 0, 4, 0, 0, 0, fkine_row};
static const Kernel K_fkine_all = {"fkine_all", "PWqo", N_PWQO, 4, 4, 0, 4, 0, 12, 12,
                                   fkine_all_row};
static const Kernel K_jacobian = {"jacobian", "PWqbo", N_JAC, 0, 6, 1, 0, 0, 12, 12,
                                  jacobian_row};
static const Kernel K_jacob_dot = {"jacob_dot", "PWqqo", N_PWQQO, 0, 6, 0, 0, 0, 0, 0,
                                   jacob_dot_row};
static const Kernel K_friction = {"friction", "Pqo", N_FRICTION, 1, 0, 0, 0, 0, 0, 0,
                                  friction_row};
static const Kernel K_rne = {"rne", "PWgqqqfo", N_RNE, 1, 0, 0, 0, 0, RNE_WORK, 0,
                             rne_kernel_row};
static const Kernel K_inertia = {"inertia", "PWqo", N_PWQO, 1, 0, 1, 0, 0, 22, 12,
                                 inertia_kernel_row};
static const Kernel K_coriolis = {"coriolis", "PWqqo", N_PWQQO, 1, 0, 1, 0, 0, 54, 12,
                                  coriolis_row};
static const Kernel K_accel = {"accel", "PWgqqqfo", N_ACCEL, 1, 0, 0, 0, 1, RNE_WORK + 24, 12,
                               accel_row};

#define KERNEL(name, doc)                                                                    \
    PyDoc_STRVAR(name##_doc, doc);                                                           \
    static PyObject *k_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs)      \
    {                                                                                        \
        return run(&K_##name, args, nargs);                                                  \
    }

KERNEL(fkine, "fkine(P, W, q, out)\n--\n\n"
       "End-effector pose base*T_0(q_0)...T_{n-1}(q_{n-1})*tool: q (m*n,), out (4m, 4).")
KERNEL(fkine_all, "fkine_all(P, W, q, out)\n--\n\n"
       "World poses of the base and of the robot's link frames: q (m*n,), out (4m(n+1), 4).")
KERNEL(jacobian, "jacobian(P, W, q, in_tool, out)\n--\n\n"
       "Geometric Jacobian (6, n) per configuration, rows [v; w] of the tool point, in the\n"
       "world frame (jacob0) or, when in_tool is true, the tool frame (jacobn). out (6m, n).")
KERNEL(jacob_dot, "jacob_dot(P, W, q, qd, out)\n--\n\n"
       "Jdot(q, qd)*qd in the world frame: tool-point acceleration and angular acceleration\n"
       "at qdd = 0. q, qd (m*n,), out (6m,) rows [a; wdot].")
KERNEL(friction, "friction(P, qd, out)\n--\n\n"
       "Joint friction torques F(qd) = |G|(B|G| qd + Tc); qd and out (m*n,).")
KERNEL(rne, "rne(P, W, g, q, qd, qdd, fext, out)\n--\n\n"
       "Inverse dynamics tau = M(q)qdd + C(q,qd)qd + F(qd) + g(q) [+ J^T fext] for m\n"
       "configurations by recursive Newton-Euler. g (3,) the base acceleration modelling\n"
       "gravity (base frame); fext (6,) for all rows or (6m,) one wrench per row; q, qd, qdd,\n"
       "out (m*n,).")
KERNEL(inertia, "inertia(P, W, q, out)\n--\n\n"
       "Joint-space inertia matrices M(q), motor inertia G^2*Jm included, by the composite-rigid-\n"
       "body algorithm; q (m*n,), out (m*n, n).")
KERNEL(coriolis, "coriolis(P, W, q, qd, out)\n--\n\n"
       "Coriolis/centripetal matrix C(q, qd) of the Christoffel symbols, Mdot - 2C skew-\n"
       "symmetric; motor inertia and friction do not contribute. q, qd (m*n,), out (m*n, n).")
KERNEL(accel, "accel(P, W, g, q, qd, tau, fext, out)\n--\n\n"
       "Forward dynamics qdd = M(q)^-1 (tau - rne(q, qd, 0)) for m configurations, solved by\n"
       "Cholesky; ValueError when M is not positive definite. q, qd, tau, out (m*n,).")

/* ------------------------------------------------------------------ block helper */

PyDoc_STRVAR(subtract_coulomb_doc,
"subtract_coulomb(x, tau, up, down, scale, out)\n--\n\n"
"out = tau - Fc with Fc_j = coulomb(up_j, down_j, s_j) for the Coulomb directions\n"
"s_j = clip(x_j*scale, -1, 1) (the robot block's friction band: x = qd, scale = 1/band).\n"
"All (n,).");

static PyObject *k_subtract_coulomb(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const char *const names[] = {"x", "tau", "up", "down", "scale", "out"};
    Args a;
    a.count = 0;
    const double *in[4];
    double *out, scale;
    Py_ssize_t s[6];
    PyObject *res = NULL;
    if (nargs != 6) {
        PyErr_Format(PyExc_TypeError, "subtract_coulomb() takes 6 arguments (%zd given)", nargs);
        return NULL;
    }
    for (int i = 0; i < 4; i++)
        if (!(in[i] = arg(&a, args[i], 1, 0, names[i], s + i)))
            goto done;
    if (((scale = PyFloat_AsDouble(args[4])) == -1.0 && PyErr_Occurred())
        || !(out = arg(&a, args[5], 1, 1, names[5], s + 5)))
        goto done;
    Py_ssize_t n = s[0];
    if (s[1] < n || s[2] < n || s[3] < n || s[5] < n) {
        PyErr_SetString(PyExc_ValueError, "tau, up, down and out need as many elements as x");
        goto done;
    }
    subtract_coulomb_row(n, in[0], in[1], in[2], in[3], scale, out);
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
        {"SIGMA", SIGMA}, {"SLIDE", SLIDE}, {"X", X}, {"FRAME", FRAME}, {"M", M}, {"RX", RX},
        {"RY", RY}, {"RZ", RZ}, {"I0", I0}, {"MOTOR", MOTOR}, {"VISCOUS", VISCOUS}, {"UP", UP},
        {"DOWN", DOWN}, {"NP", NP}, {"BASE", BASE}, {"TOOL", TOOL}, {"NW", NW},
        {"RNE_WORK", RNE_WORK},
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
"Robot kinematics and dynamics kernels in C, with the names, packed arrays and results of\n"
"blocks.robot._kernels (see there for the joint frames, the equations and the layouts).");

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_ckernels", module_doc, 0, methods, slots, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit__ckernels(void)
{
    return PyModuleDef_Init(&moduledef);
}
