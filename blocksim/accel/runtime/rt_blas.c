/* numpy's dot and matmul on small C-contiguous arrays, computed as numpy computes them: the
   same BLAS functions (numpy's own BLAS library, whose entry points Python hands over with
   rt_set_blas) chosen by numpy's rules (numpy/_core/src/common/cblasfuncs.c for dot,
   umath/matmul.c.src for matmul). A BLAS kernel sums in its own order (blocks, fused
   multiply-add); the same order gives the same bits, which the solvers' error control would
   otherwise amplify (a step size differing in its 12th digit). This file's kernels sum as
   OpenBLAS's x86-64 kernels do where their C is known (a dot product of up to 15 terms, a
   transposed product into up to 3 values: an adaptive solver's on up to 3 states), with
   C99's fma. With a BLAS they replace its call for the sizes where rt_blas_agree's check
   (once per process) finds its bits; without one (none found, and an exported diagram's
   code) they are the sums, numpy's bits there on any machine with those kernels; in order
   elsewhere (OpenBLAS's wider kernels are per-CPU assembly): results then agree up to
   reordering. */

static int blas_ilp64;
static void *blas_fn[4];  /* ddot, dgemv, daxpy, dgemm */
/* The sizes for which this file's kernels give the loaded BLAS's bits (rt_set_inline, from
   rt_blas_agree's check): bit n of inline_ddot for a contiguous ddot of n < 16 terms, bit N
   of inline_gemv for a contiguous row-major transposed dgemv into N < 4 values summing up to
   INLINE_GEMV_TERMS terms. Those skip the BLAS call (its argument checks, dispatch and
   zeroing of y cost more than the sum itself). */
static unsigned inline_ddot, inline_gemv;
enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112, INLINE_GEMV_TERMS = 16 };

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

/* The kernels' fma is one instruction where the CPU has it (in a library of this process:
   GCC or Clang on x86-64 with glibc make a copy of each kernel for FMA CPUs, chosen at load
   time), a call of C99's fma elsewhere and in an exported diagram; the bits are the same. */
#if !defined(RT_STANDALONE) && defined(__x86_64__) && defined(__GLIBC__) \
    && defined(__has_attribute)
#if __has_attribute(target_clones)
#define RT_FMA_KERNEL __attribute__((target_clones("fma", "default")))
#endif
#endif
#ifndef RT_FMA_KERNEL
#define RT_FMA_KERNEL
#endif

/* OpenBLAS's x86-64 ddot below 16 elements: one fused chain */
RT_FMA_KERNEL static double k_ddot(BL n, const double *x, BL incx, const double *y, BL incy)
{
    double s = 0.0;
    for (BL i = 0; i < n; i++)
        s = fma(x[i * incx], y[i * incy], s);
    return s;
}

/* OpenBLAS's x86-64 dgemv_n for fewer than 4 rows (a row-major transposed product, y = A' x
   with A M x N, is its column-major dgemv_n), as its C compiles with fused multiply-adds:
   contiguous, the sum four terms at a time, each pair fused, then the rest fused one by one;
   else fused one by one */
RT_FMA_KERNEL static void k_gemv_t(BL M, BL N, const double *A, BL lda, const double *x,
                                   BL incx, double *y, BL incy)
{
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
}

static double blas_ddot(BL n, const double *x, BL incx, const double *y, BL incy)
{
    if (blas_ilp64)
        return ((ddot64_t)blas_fn[0])(n, x, incx, y, incy);
    return ((ddot32_t)blas_fn[0])((int)n, x, (int)incx, y, (int)incy);
}

/* cblas_dgemv with alpha 1, beta 0 */
static void blas_gemv(int order, int trans, BL M, BL N, const double *A, BL lda,
                      const double *x, BL incx, double *y, BL incy)
{
    if (blas_ilp64)
        ((dgemv64_t)blas_fn[1])(order, trans, M, N, 1.0, A, lda, x, incx, 0.0, y, incy);
    else
        ((dgemv32_t)blas_fn[1])(order, trans, (int)M, (int)N, 1.0, A, (int)lda, x, (int)incx,
                                0.0, y, (int)incy);
}

/* x . y over n elements with strides */
static double b_ddot(BL n, const double *x, BL incx, const double *y, BL incy)
{
    if (!blas_fn[0] || (n < 16 && incx == 1 && incy == 1 && (inline_ddot >> n & 1)))
        return k_ddot(n, x, incx, y, incy);
    return blas_ddot(n, x, incx, y, incy);
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
    if (order == ROW_MAJOR && trans == TRANS && N < 4
        && (!blas_fn[1] || (lda == N && incx == 1 && incy == 1 && M >= 1
                            && M <= INLINE_GEMV_TERMS && (inline_gemv >> N & 1)))) {
        k_gemv_t(M, N, A, lda, x, incx, y, incy);
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
    blas_gemv(order, trans, M, N, A, lda, x, incx, y, incy);
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

#ifndef RT_STANDALONE
/* ---- which sizes the kernels above may take from the BLAS (checked once per process) ---- */

/* the next of a deterministic sequence of test values (splitmix64): either sign, 53 random
   bits of mantissa, a binary exponent from -8 to 7, so that products and partial sums have
   different exponents and round differently in another order */
static double chk_value(unsigned long long *state)
{
    unsigned long long z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    double m = 1.0 + (double)(z >> 11) * 0x1p-53;
    return ldexp(z & 1 ? -m : m, (int)((z >> 1) & 15) - 8);
}

/* Each size is checked on CHECK_CASES inputs against the BLAS's own entry points, the bits of
   every result compared. On such inputs another summation order (unfused, reversed, in
   pairs, two accumulators) gives the same bits as these kernels in at most 83 % of the cases
   (measured, 20,000 inputs per order and length: an unfused sum of 2 terms; 65-75 % at 3-15
   terms), so it passes the 100 cases of one length with a chance below 1e-8; a dgemv is
   checked at every sum length up to INLINE_GEMV_TERMS, a ddot at every length below 16.
   About 5,000 calls: 1.5 ms once per process. */
enum { CHECK_CASES = 100 };

/* Bit n (1..15) set: the kernel k_ddot gives the BLAS's ddot of n contiguous terms; bit 16 +
   N (N 1..3): k_gemv_t gives its row-major transposed dgemv into N values for every sum
   length 1..INLINE_GEMV_TERMS. 0 without a BLAS. */
RT_API unsigned long long rt_blas_agree(void)
{
    unsigned long long agree = 0, state = 1;
    double x[INLINE_GEMV_TERMS], A[INLINE_GEMV_TERMS * 3], y0[3], y1[3];
    if (blas_fn[0])
        for (int n = 1; n < 16; n++) {
            int same = 1;
            for (int c = 0; c < CHECK_CASES && same; c++) {
                for (int i = 0; i < n; i++) {
                    x[i] = chk_value(&state);
                    A[i] = chk_value(&state);
                }
                double a = k_ddot(n, x, 1, A, 1), b = blas_ddot(n, x, 1, A, 1);
                same = memcmp(&a, &b, sizeof a) == 0;
            }
            agree |= (unsigned long long)same << n;
        }
    if (blas_fn[1])
        for (int N = 1; N < 4; N++) {
            int same = 1;
            for (int M = 1; M <= INLINE_GEMV_TERMS && same; M++)
                for (int c = 0; c < CHECK_CASES && same; c++) {
                    for (int i = 0; i < M; i++)
                        x[i] = chk_value(&state);
                    for (int i = 0; i < M * N; i++)
                        A[i] = chk_value(&state);
                    y0[0] = y0[1] = y0[2] = y1[0] = y1[1] = y1[2] = 1.0;  /* beta 0 zeroes */
                    k_gemv_t(M, N, A, N, x, 1, y0, 1);
                    blas_gemv(ROW_MAJOR, TRANS, M, N, A, N, x, 1, y1, 1);
                    same = memcmp(y0, y1, sizeof y0) == 0;
                }
            agree |= (unsigned long long)same << (16 + N);
        }
    return agree;
}

/* The sizes the kernels take (rt_blas_agree's bits, which Python checks once per process) */
RT_API void rt_set_inline(unsigned long long agree)
{
    inline_ddot = (unsigned)(agree & 0xFFFF);
    inline_gemv = (unsigned)(agree >> 16 & 0xF);
}
#endif
