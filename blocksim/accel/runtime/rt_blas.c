/* numpy's dot and matmul on small C-contiguous arrays, computed as numpy computes them: the
   same BLAS functions (numpy's own BLAS library, whose entry points Python hands over with
   rt_set_blas) chosen by numpy's rules (numpy/_core/src/common/cblasfuncs.c for dot,
   umath/matmul.c.src for matmul). A BLAS kernel sums in its own order (blocks, fused
   multiply-add); calling the same kernel gives the same bits, which the solvers' error
   control would otherwise amplify (a step size differing in its 12th digit). Without a
   BLAS (none found, and an exported diagram's code) the sums are this file's: those of
   OpenBLAS's x86-64 kernels where their C is known (a dot product of up to 15 terms, a
   transposed product into up to 3 values: an adaptive solver's on up to 3 states), with
   C99's fma, so the bits are numpy's there on any machine; in order elsewhere (OpenBLAS's
   wider kernels are per-CPU assembly): results then agree up to reordering. */

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

RT_API void rt_set_blas(int ilp64, void *ddot, void *dgemv, void *daxpy, void *dgemm)
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
    if (!blas_fn[0]) {  /* OpenBLAS's x86-64 ddot below 16 elements: one fused chain */
        double s = 0.0;
        for (BL i = 0; i < n; i++)
            s = fma(x[i * incx], y[i * incy], s);
        return s;
    }
    if (blas_ilp64)
        return ((ddot64_t)blas_fn[0])(n, x, incx, y, incy);
    return ((ddot32_t)blas_fn[0])((int)n, x, (int)incx, y, (int)incy);
}

/* element (i, j) of a row-major (order ROW_MAJOR) or column-major matrix with leading
   dimension ld, transposed when trans */
static double b_at(int order, int trans, const double *A, BL ld, BL i, BL j)
{
    if (trans) {
        BL k = i;
        i = j;
        j = k;
    }
    return order == ROW_MAJOR ? A[i * ld + j] : A[j * ld + i];
}

/* y = op(A) x, op(A) M x N (cblas_dgemv's arguments; alpha 1, beta 0) */
static void b_gemv(int order, int trans, BL M, BL N, const double *A, BL lda, const double *x,
                   BL incx, double *y, BL incy)
{
    if (!blas_fn[1] && order == ROW_MAJOR && trans == TRANS && N < 4) {
        /* OpenBLAS's x86-64 dgemv_n for fewer than 4 rows (a row-major transposed product
           is its column-major dgemv_n), as its C compiles with fused multiply-adds:
           contiguous, the sum four terms at a time, each pair fused, then the rest fused
           one by one; else fused one by one */
        for (BL i = 0; i < N; i++) {
            double s = 0.0;
            BL j = 0;
            if (lda == N && incx == 1)
                for (; j + 4 <= M; j += 4) {
                    s += fma(A[j * lda + i], x[j], A[(j + 1) * lda + i] * x[j + 1]);
                    s += fma(A[(j + 2) * lda + i], x[j + 2], A[(j + 3) * lda + i] * x[j + 3]);
                }
            for (; j < M; j++)
                s = fma(A[j * lda + i], x[j * incx], s);
            y[i * incy] = 0.0 + s;  /* added to the zeroed y */
        }
        return;
    }
    if (!blas_fn[1]) {
        BL rows = trans == TRANS ? N : M, cols = trans == TRANS ? M : N;
        for (BL i = 0; i < rows; i++) {
            double s = 0.0;
            for (BL j = 0; j < cols; j++)
                s += b_at(order, trans == TRANS, A, lda, i, j) * x[j * incx];
            y[i * incy] = s;
        }
        return;
    }
    if (blas_ilp64)
        ((dgemv64_t)blas_fn[1])(order, trans, M, N, 1.0, A, lda, x, incx, 0.0, y, incy);
    else
        ((dgemv32_t)blas_fn[1])(order, trans, (int)M, (int)N, 1.0, A, (int)lda, x, (int)incx,
                                0.0, y, (int)incy);
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

/* a leading dimension as numpy passes it for a contiguous row of n: at least 1 (BLAS refuses
   0, e.g. for an empty inner dimension) */
#define BL_LD(n) ((n) > 1 ? (BL)(n) : (BL)1)

/* C = op(A) op(B), C M x N row-major with ldc (cblas_dgemm's arguments; alpha 1, beta 0) */
static void b_gemm(int tA, int tB, BL M, BL N, BL K, const double *A, BL lda, const double *B,
                   BL ldb, double *C, BL ldc)
{
    if (!blas_fn[3]) {
        for (BL i = 0; i < M; i++)
            for (BL j = 0; j < N; j++) {
                double s = 0.0;
                for (BL l = 0; l < K; l++)
                    s += b_at(ROW_MAJOR, tA == TRANS, A, lda, i, l)
                         * b_at(ROW_MAJOR, tB == TRANS, B, ldb, l, j);
                C[i * ldc + j] = s;
            }
        return;
    }
    if (blas_ilp64)
        ((dgemm64_t)blas_fn[3])(ROW_MAJOR, tA, tB, M, N, K, 1.0, A, lda, B, ldb, 0.0, C, ldc);
    else
        ((dgemm32_t)blas_fn[3])(ROW_MAJOR, tA, tB, (int)M, (int)N, (int)K, 1.0, A, (int)lda, B,
                                (int)ldb, 0.0, C, (int)ldc);
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
        b_gemv(ROW_MAJOR, TRANS, k, n, B, n, a, 1, out, 1);
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
        b_gemv(ROW_MAJOR, NO_TRANS, r, k, A, k, B, 1, out, 1);
    else
        b_gemm(NO_TRANS, NO_TRANS, r, n, k, A, BL_LD(k), B, BL_LD(n), out, BL_LD(n));
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
        b_gemv(ROW_MAJOR, TRANS, n, k, B, k, A, 1, out, 1);
    } else if (k == 1) {                /* matrix @ vector */
        b_gemv(ROW_MAJOR, NO_TRANS, q, n, A, n, B, 1, out, 1);
    } else {
        b_gemm(NO_TRANS, NO_TRANS, q, k, n, A, BL_LD(n), B, BL_LD(k), out, BL_LD(k));
    }
}
