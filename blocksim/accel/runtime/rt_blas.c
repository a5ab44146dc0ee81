/* numpy's dot and matmul on small C-contiguous arrays, computed as numpy computes them: the
   same BLAS functions (numpy's own BLAS library, whose entry points Python hands over with
   rt_set_blas) chosen by numpy's rules (numpy/_core/src/common/cblasfuncs.c for dot,
   umath/matmul.c.src for matmul). A BLAS kernel sums in its own order (blocks, fused
   multiply-add); calling the same kernel gives the same bits, which the solvers' error
   control would otherwise amplify (a step size differing in its 12th digit). Without a
   BLAS (none found) the sums run in order: results then agree up to reordering. */

static int blas_ilp64;
static void *blas_fn[4];  /* ddot, dgemv, daxpy, dgemm */
enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };

typedef long long BL;
typedef double (*ddot64_t)(BL, const double *, BL, const double *, BL);
typedef double (*ddot32_t)(int, const double *, int, const double *, int);
typedef void (*dgemv64_t)(int, int, BL, BL, double, const double *, BL, const double *, BL,
                          double, double *, BL);
typedef void (*dgemv32_t)(int, int, int, int, double, const double *, int, const double *,
                          int, double, double *, int);
typedef void (*daxpy64_t)(BL, double, const double *, BL, double *, BL);
typedef void (*daxpy32_t)(int, double, const double *, int, double *, int);
typedef void (*dgemm64_t)(int, int, int, BL, BL, BL, double, const double *, BL,
                          const double *, BL, double, double *, BL);
typedef void (*dgemm32_t)(int, int, int, int, int, int, double, const double *, int,
                          const double *, int, double, double *, int);

void rt_set_blas(int ilp64, void *ddot, void *dgemv, void *daxpy, void *dgemm)
{
    blas_ilp64 = ilp64;
    blas_fn[0] = ddot;
    blas_fn[1] = dgemv;
    blas_fn[2] = daxpy;
    blas_fn[3] = dgemm;
}

/* x . y over n elements with strides */
static double b_ddot(BL n, const double *x, BL incx, const double *y, BL incy)
{
    if (!blas_fn[0]) {
        double s = 0.0;
        for (BL i = 0; i < n; i++)
            s += x[i * incx] * y[i * incy];
        return s;
    }
    if (blas_ilp64)
        return ((ddot64_t)blas_fn[0])(n, x, incx, y, incy);
    return ((ddot32_t)blas_fn[0])((int)n, x, (int)incx, y, (int)incy);
}

/* y = A x (trans: A^T x) for A (m, n) row-major with leading dimension lda */
static void b_dgemv(int trans, BL m, BL n, const double *A, BL lda, const double *x, BL incx,
                    double *y)
{
    if (!blas_fn[1]) {
        BL rows = trans ? n : m, cols = trans ? m : n;
        for (BL i = 0; i < rows; i++) {
            double s = 0.0;
            for (BL j = 0; j < cols; j++)
                s += (trans ? A[j * lda + i] : A[i * lda + j]) * x[j * incx];
            y[i] = s;
        }
        return;
    }
    int t = trans ? TRANS : NO_TRANS;
    if (blas_ilp64)
        ((dgemv64_t)blas_fn[1])(ROW_MAJOR, t, m, n, 1.0, A, lda, x, incx, 0.0, y, 1);
    else
        ((dgemv32_t)blas_fn[1])(ROW_MAJOR, t, (int)m, (int)n, 1.0, A, (int)lda, x, (int)incx,
                                0.0, y, 1);
}

/* y = a x + y (y zeroed by the caller: numpy's scalar products) */
static void b_daxpy(BL n, double a, const double *x, BL incx, double *y)
{
    if (!blas_fn[2]) {
        for (BL i = 0; i < n; i++)
            y[i] += a * x[i * incx];
        return;
    }
    if (blas_ilp64)
        ((daxpy64_t)blas_fn[2])(n, a, x, incx, y, 1);
    else
        ((daxpy32_t)blas_fn[2])((int)n, a, x, (int)incx, y, 1);
}

/* C = A B, A (m, k), B (k, n), all row-major and contiguous */
static void b_dgemm(BL m, BL n, BL k, const double *A, const double *B, double *C)
{
    if (!blas_fn[3]) {
        for (BL i = 0; i < m; i++)
            for (BL j = 0; j < n; j++) {
                double s = 0.0;
                for (BL l = 0; l < k; l++)
                    s += A[i * k + l] * B[l * n + j];
                C[i * n + j] = s;
            }
        return;
    }
    if (blas_ilp64)
        ((dgemm64_t)blas_fn[3])(ROW_MAJOR, NO_TRANS, NO_TRANS, m, n, k, 1.0, A, k > 1 ? k : 1,
                                B, n > 1 ? n : 1, 0.0, C, n > 1 ? n : 1);
    else
        ((dgemm32_t)blas_fn[3])(ROW_MAJOR, NO_TRANS, NO_TRANS, (int)m, (int)n, (int)k, 1.0, A,
                                k > 1 ? (int)k : 1, B, n > 1 ? (int)n : 1, 0.0, C,
                                n > 1 ? (int)n : 1);
}

/* numpy.dot(a, b) of two vectors of n elements */
static double rt_dot(const double *a, const double *b, int n)
{
    if (n == 0)
        return 0.0;
    if (n == 1)
        return a[0] * b[0];
    return 0.0 + b_ddot(n, a, 1, b, 1);
}

/* numpy.dot(a, B, out): a (k,), B (k, n) -> out (n,) */
static void rt_dot_vm(const double *a, int k, const double *B, int n, double *out)
{
    if (n == 0)
        return;
    if (k == 0) {
        memset(out, 0, sizeof(double) * n);
    } else if (k == 1) {  /* a scalar times a row */
        if (n == 1) {
            out[0] = a[0] * B[0];
        } else {
            memset(out, 0, sizeof(double) * n);
            b_daxpy(n, a[0], B, 1, out);
        }
    } else if (n == 1) {
        out[0] = 0.0 + b_ddot(k, a, 1, B, 1);
    } else {
        b_dgemv(1, k, n, B, n, a, 1, out);
    }
}

/* numpy.dot(A, B, out): A (r, k) with r, k > 1, B (k, n) -> out (r, n) */
static void rt_dot_mm(const double *A, int r, int k, const double *B, int n, double *out)
{
    if (n == 0)
        return;
    if (r == 1)
        rt_dot_vm(A, k, B, n, out);
    else if (n == 1)
        b_dgemv(0, r, k, A, k, B, 1, out);
    else
        b_dgemm(r, n, k, A, B, out);
}

/* numpy.matmul(A, B, out): A (q, n) row-major, B (n, k) (k = 1 for a vector B) */
static void rt_matmul(const double *A, int q, int n, const double *B, int k, double *out)
{
    if (q == 0 || k == 0)
        return;
    if (n == 0) {
        memset(out, 0, sizeof(double) * q * k);
    } else if (q == 1 && k == 1) {      /* row @ column */
        out[0] = 0.0 + b_ddot(n, A, 1, B, 1);
    } else if (n == 1) {                /* outer products: no sums */
        for (int i = 0; i < q; i++)
            for (int j = 0; j < k; j++)
                out[i * k + j] = 0.0 + A[i] * B[j];
    } else if (q == 1) {                /* vector @ matrix */
        b_dgemv(1, n, k, B, k, A, 1, out);
    } else if (k == 1) {                /* matrix @ vector */
        b_dgemv(0, q, n, A, n, B, 1, out);
    } else {
        b_dgemm(q, k, n, A, B, out);
    }
}
