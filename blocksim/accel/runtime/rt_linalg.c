/* numpy's matmul in its general cases and numpy.linalg's solve, inv, pinv and lstsq,
   computed as numpy computes them, for block lowerings: the same BLAS and LAPACK functions
   (those of numpy's own library, whose entry points Python hands over with rt_set_blas and
   rt_set_lapack) with the same arguments, so the results carry the same bits.

   - rt_matmul_ex: numpy.matmul(A, B) for operands with any (positive) element strides, as
     numpy/_core/src/umath/matmul.c.src dispatches it: dot for row @ column, gemv for a
     vector, syrk for a matrix times its own transpose (the upper triangle mirrored), gemm
     with transposes for Fortran-ordered operands, plain sums where a dimension is 1.
   - rt_solve, rt_inv, rt_pinv, rt_lstsq: numpy/linalg/umath_linalg.cpp's calls of dgesv,
     dgesdd and dgelsd (operands copied to column-major, workspace sizes queried as numpy
     queries them) and numpy/linalg/_linalg.py's arithmetic around them (pinv's cutoff
     1e-15 * max(s) and vt^T @ (s^-1 u^T); lstsq's rcond eps * max(m, n)).

   Without numpy's LAPACK (an exported diagram, blocksim export, runs without numpy) the
   factorisations are written out below: LU with partial pivoting for solve, inv and det,
   and the singular value decomposition by one-sided Jacobi rotations for pinv, lstsq, svd
   and cond; they agree with LAPACK's to rounding. Accelerated mode does not use them: a
   lowering that needs LAPACK refuses to compile without numpy's (bit equality with normal
   mode; blocksim.accel.lowering.needs_lapack). Without numpy's BLAS the products are sums
   in order (as rt_blas.c's). Work arrays are the caller's stack. */

enum { COL_MAJOR = 102, UPPER = 121 };

typedef long long LI;  /* a Fortran integer of an ILP64 LAPACK (int for LP64) */
static int lapack_ilp64;
static void *lapack_fn[5];  /* cblas_dsyrk, dgesv_, dgesdd_, dgelsd_, dgetrf_ */

RT_API void rt_set_lapack(int ilp64, void *dsyrk, void *dgesv, void *dgesdd, void *dgelsd,
                   void *dgetrf)
{
    lapack_ilp64 = ilp64;
    lapack_fn[0] = dsyrk;
    lapack_fn[1] = dgesv;
    lapack_fn[2] = dgesdd;
    lapack_fn[3] = dgelsd;
    lapack_fn[4] = dgetrf;
}

/* ---- BLAS calls with numpy's arguments (gemv and gemm: rt_blas.c's) ------------------------ */
typedef void (*syrk64_t)(int, int, int, BL, BL, double, const double *, BL, double, double *,
                         BL);
typedef void (*syrk32_t)(int, int, int, int, int, double, const double *, int, double,
                         double *, int);

/* the upper triangle of C = op(A) op(A)^T, C N x N row-major (cblas_dsyrk's arguments) */
static void la_syrk(int trans, BL N, BL K, const double *A, BL lda, double *C, BL ldc)
{
    if (!lapack_fn[0]) {
        for (BL i = 0; i < N; i++)
            for (BL j = i; j < N; j++) {
                double s = 0.0;
                for (BL l = 0; l < K; l++)
                    s += b_at(ROW_MAJOR, trans == TRANS, A, lda, i, l)
                         * b_at(ROW_MAJOR, trans == TRANS, A, lda, j, l);
                C[i * ldc + j] = s;
            }
        return;
    }
    if (lapack_ilp64)
        ((syrk64_t)lapack_fn[0])(ROW_MAJOR, UPPER, trans, N, K, 1.0, A, lda, 0.0, C, ldc);
    else
        ((syrk32_t)lapack_fn[0])(ROW_MAJOR, UPPER, trans, (int)N, (int)K, 1.0, A, (int)lda,
                                 0.0, C, (int)ldc);
}

/* numpy's is_blasable2d (strides in elements) */
static int la_blasable(BL s1, BL s2, BL d1, BL d2)
{
    return s2 == 1 && s1 >= d2;
}

/* numpy.matmul(A, B) into out (m, p) C-contiguous: A (m, n) with element strides (a_m, a_n),
   B (n, p) with (b_n, b_p); every operand C- or Fortran-contiguous (blasable), so numpy
   copies none of them. */
static void rt_matmul_ex(const double *A, BL a_m, BL a_n, const double *B, BL b_n, BL b_p,
                         BL m, BL n, BL p, double *out)
{
    BL o_m = p, o_p = 1;
    if (m == 0 || n == 0 || p == 0) {   /* numpy's plain loop: zeros */
        for (BL i = 0; i < m * p; i++)
            out[i] = 0.0;
        return;
    }
    int i1_c = la_blasable(a_m, a_n, m, n), i2_c = la_blasable(b_n, b_p, n, p);
    if (m == 1 || n == 1 || p == 1) {
        int i1 = i1_c || la_blasable(a_n, a_m, n, m), i2 = i2_c || la_blasable(b_p, b_n, p, n);
        if (m == 1 && p == 1) {                         /* row @ column: numpy's dot */
            out[0] = 0.0 + b_ddot(n, A, a_n, B, b_n);
        } else if (n == 1 && (p == 1 || m == 1)) {      /* scalar_vec: plain sums */
            goto plain;
        } else if (m == 1 && i2 && la_blasable(a_n, 1, n, 1)) {   /* vector @ matrix */
            if (la_blasable(b_p, b_n, p, n))
                b_gemv(COL_MAJOR, TRANS, n, p, B, b_p, A, a_n, out, o_p);
            else
                b_gemv(ROW_MAJOR, TRANS, n, p, B, b_n, A, a_n, out, o_p);
        } else if (p == 1 && i1 && la_blasable(b_n, 1, n, 1)) {   /* matrix @ vector */
            if (la_blasable(a_m, a_n, m, n))
                b_gemv(COL_MAJOR, TRANS, n, m, A, a_m, B, b_n, out, o_m);
            else
                b_gemv(ROW_MAJOR, TRANS, n, m, A, a_n, B, b_n, out, o_m);
        } else {
            goto plain;
        }
        return;
    }
    {   /* matrix @ matrix: the output is C-ordered, numpy's o_transpose is false */
        int t1 = i1_c ? NO_TRANS : TRANS, t2 = i2_c ? NO_TRANS : TRANS;
        BL lda = i1_c ? a_m : a_n, ldb = i2_c ? b_n : b_p;
        if (A == B && m == p && a_m == b_p && a_n == b_n && t1 != t2) {
            la_syrk(t1, p, n, A, t1 == NO_TRANS ? lda : ldb, out, o_m);
            for (BL i = 0; i < p; i++)
                for (BL j = i + 1; j < p; j++)
                    out[j * o_m + i] = out[i * o_m + j];
        } else {
            b_gemm(t1, t2, m, p, n, A, lda, B, ldb, out, o_m);
        }
        return;
    }
plain:
    for (BL i = 0; i < m; i++)
        for (BL j = 0; j < p; j++) {
            double s = 0.0;
            for (BL l = 0; l < n; l++)
                s += A[i * a_m + l * a_n] * B[l * b_n + j * b_p];
            out[i * o_m + j * o_p] = s;
        }
}

/* ---- LAPACK, as numpy.linalg calls it ------------------------------------------------------- */
typedef void (*gesv64_t)(const LI *, const LI *, double *, const LI *, LI *, double *,
                         const LI *, LI *);
typedef void (*gesv32_t)(const int *, const int *, double *, const int *, int *, double *,
                         const int *, int *);
typedef void (*gesdd64_t)(const char *, const LI *, const LI *, double *, const LI *, double *,
                          double *, const LI *, double *, const LI *, double *, const LI *,
                          LI *, LI *);
typedef void (*gesdd32_t)(const char *, const int *, const int *, double *, const int *,
                          double *, double *, const int *, double *, const int *, double *,
                          const int *, int *, int *);
typedef void (*gelsd64_t)(const LI *, const LI *, const LI *, double *, const LI *, double *,
                          const LI *, double *, const double *, LI *, double *, const LI *,
                          LI *, LI *);
typedef void (*gelsd32_t)(const int *, const int *, const int *, double *, const int *,
                          double *, const int *, double *, const double *, int *, double *,
                          const int *, int *, int *);

static LI la_max(LI a, LI b)
{
    return a > b ? a : b;
}

/* ---- LU and the SVD without LAPACK -------------------------------------------------------- */
/* dgetrf of the column-major (n, n) a without LAPACK: a = P L U in place, ipiv (1-based) the
   row exchanged with each row, the pivot the first largest |a|; info: 0, or the first
   column with a zero pivot (1-based) */
static LI la_lu(LI n, double *a, LI *ipiv)
{
    LI info = 0;
    for (LI j = 0; j < n; j++) {
        LI p = j;
        for (LI i = j + 1; i < n; i++)
            if (fabs(a[j * n + i]) > fabs(a[j * n + p]))
                p = i;
        ipiv[j] = p + 1;
        if (a[j * n + p] == 0.0) {
            if (!info)
                info = j + 1;
            continue;
        }
        if (p != j)
            for (LI k = 0; k < n; k++) {
                double swap = a[k * n + j];
                a[k * n + j] = a[k * n + p];
                a[k * n + p] = swap;
            }
        for (LI i = j + 1; i < n; i++)
            a[j * n + i] /= a[j * n + j];
        for (LI k = j + 1; k < n; k++)
            for (LI i = j + 1; i < n; i++)
                a[k * n + i] -= a[j * n + i] * a[k * n + j];
    }
    return info;
}

/* dgesv without LAPACK: b (n, nrhs, column-major) = a^-1 b by la_lu */
static LI la_lu_solve(LI n, LI nrhs, double *a, LI *ipiv, double *b)
{
    LI info = la_lu(n, a, ipiv);
    if (info)
        return info;
    for (LI r = 0; r < nrhs; r++) {
        double *x = b + r * n;
        for (LI j = 0; j < n; j++) {
            double swap = x[j];
            x[j] = x[ipiv[j] - 1];
            x[ipiv[j] - 1] = swap;
        }
        for (LI j = 0; j < n; j++)
            for (LI i = j + 1; i < n; i++)
                x[i] -= a[j * n + i] * x[j];
        for (LI j = n - 1; j >= 0; j--) {
            x[j] /= a[j * n + j];
            for (LI i = 0; i < j; i++)
                x[i] -= a[j * n + i] * x[j];
        }
    }
    return 0;
}

/* the unit vector orthogonal to the first `filled` columns of the column-major (r, .) q,
   from the first basis vector left after Gram-Schmidt (twice, for orthogonality), into
   column `filled` */
static void la_complete(double *q, LI r, LI filled)
{
    double *v = q + filled * r, best = 0.0;
    for (LI e = 0; e < r && best < 0.5; e++) {
        for (LI i = 0; i < r; i++)
            v[i] = i == e ? 1.0 : 0.0;
        for (int pass = 0; pass < 2; pass++)
            for (LI j = 0; j < filled; j++) {
                double dot = 0.0;
                for (LI i = 0; i < r; i++)
                    dot += q[j * r + i] * v[i];
                for (LI i = 0; i < r; i++)
                    v[i] -= dot * q[j * r + i];
            }
        double norm = 0.0;
        for (LI i = 0; i < r; i++)
            norm += v[i] * v[i];
        best = sqrt(norm);
    }
    for (LI i = 0; i < r; i++)
        v[i] /= best;
}

/* dgesdd without LAPACK: the SVD of the column-major (m, n) a (as la_svd: s descending, u
   and vt row-major, jobz 'S' or 'A'), by one-sided Jacobi rotations (Hestenes) on the
   columns of a, or of its transpose when it has fewer rows than columns; 1 when the
   rotations did not converge */
static LI la_jacobi_svd(char jobz, const double *a, LI m, LI n, double *s, double *u,
                        double *vt)
{
    int tr = m < n;
    LI r = tr ? n : m, c = tr ? m : n, kq = jobz == 'A' ? r : c;
    double w[DIM(r * c)], v[DIM(c * c)], q[DIM(r * r)], sig[DIM(c)];
    LI order[DIM(c)];
    for (LI j = 0; j < c; j++)
        for (LI i = 0; i < r; i++)
            w[j * r + i] = tr ? a[i * m + j] : a[j * m + i];
    for (LI i = 0; i < c * c; i++)
        v[i] = i % (c + 1) == 0 ? 1.0 : 0.0;
    int sweep, rotated = 1;
    for (sweep = 0; sweep < 64 && rotated; sweep++) {
        rotated = 0;
        for (LI p = 0; p + 1 < c; p++)
            for (LI k = p + 1; k < c; k++) {
                double alpha = 0.0, beta = 0.0, gamma = 0.0;
                for (LI i = 0; i < r; i++) {
                    alpha += w[p * r + i] * w[p * r + i];
                    beta += w[k * r + i] * w[k * r + i];
                    gamma += w[p * r + i] * w[k * r + i];
                }
                if (gamma == 0.0 || fabs(gamma) <= 2.220446049250313e-16 * sqrt(alpha * beta))
                    continue;
                rotated = 1;
                double zeta = (beta - alpha) / (2.0 * gamma);
                double t = (zeta >= 0.0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1.0 + zeta * zeta));
                double cs = 1.0 / sqrt(1.0 + t * t), sn = cs * t;
                for (LI i = 0; i < r; i++) {
                    double wp = w[p * r + i], wk = w[k * r + i];
                    w[p * r + i] = cs * wp - sn * wk;
                    w[k * r + i] = sn * wp + cs * wk;
                }
                for (LI i = 0; i < c; i++) {
                    double vp = v[p * c + i], vk = v[k * c + i];
                    v[p * c + i] = cs * vp - sn * vk;
                    v[k * c + i] = sn * vp + cs * vk;
                }
            }
    }
    for (LI j = 0; j < c; j++) {
        double norm = 0.0;
        for (LI i = 0; i < r; i++)
            norm += w[j * r + i] * w[j * r + i];
        sig[j] = sqrt(norm);
        order[j] = j;
    }
    for (LI j = 1; j < c; j++)  /* descending, ties in column order */
        for (LI i = j; i > 0 && sig[order[i]] > sig[order[i - 1]]; i--) {
            LI swap = order[i];
            order[i] = order[i - 1];
            order[i - 1] = swap;
        }
    LI filled = 0;
    for (LI j = 0; j < kq; j++) {
        if (j < c && sig[order[j]] > 0.0) {
            for (LI i = 0; i < r; i++)
                q[j * r + i] = w[order[j] * r + i] / sig[order[j]];
        } else {
            la_complete(q, r, filled);
        }
        filled++;
    }
    for (LI j = 0; j < c; j++)
        s[j] = sig[order[j]];
    /* a = q diag(s) v^T (of the transpose when tr): u and vt as LAPACK gives them */
    LI ku = jobz == 'A' ? m : c, kv = jobz == 'A' ? n : c;
    for (LI i = 0; i < m; i++)
        for (LI j = 0; j < ku; j++)
            u[i * ku + j] = tr ? v[order[j] * c + i] : q[j * r + i];
    for (LI i = 0; i < kv; i++)
        for (LI j = 0; j < n; j++)
            vt[i * n + j] = tr ? q[i * r + j] : v[order[i] * c + j];
    return rotated;
}

/* dgesv(n, nrhs, a, lda = max(n, 1), ipiv, b, ldb = lda): info */
static LI la_gesv(LI n, LI nrhs, double *a, void *ipiv, double *b)
{
    LI ld = la_max(n, 1), info = 0;
    if (!lapack_fn[1])
        return la_lu_solve(n, nrhs, a, (LI *)ipiv, b);
    if (lapack_ilp64) {
        ((gesv64_t)lapack_fn[1])(&n, &nrhs, a, &ld, (LI *)ipiv, b, &ld, &info);
        return info;
    }
    int n4 = (int)n, r4 = (int)nrhs, l4 = (int)ld, i4 = 0;
    ((gesv32_t)lapack_fn[1])(&n4, &r4, a, &l4, (int *)ipiv, b, &l4, &i4);
    return i4;
}

/* column-major copy dst (ld rows) of the row-major (rows, cols) src with row stride rs */
static void la_to_columns(const double *src, BL rows, BL cols, BL rs, double *dst, BL ld)
{
    for (BL j = 0; j < cols; j++)
        for (BL i = 0; i < rows; i++)
            dst[j * ld + i] = src[i * rs + j];
}

/* numpy.linalg.solve(A, B): A (n, n), B (n, nrhs) row-major (a vector: nrhs 1) into X
   (n, nrhs), which may be B; 0, > 0 for a singular A (numpy: LinAlgError "Singular
   matrix"; X is then unchanged). */
static LI rt_solve(const double *A, BL n, const double *B, BL nrhs, double *X)
{
    double a[DIM(n * n)], b[DIM(n * nrhs)];
    LI ipiv[DIM(n)];
    la_to_columns(A, n, n, n, a, n);
    la_to_columns(B, n, nrhs, nrhs, b, n);
    LI info = la_gesv(n, nrhs, a, ipiv, b);
    if (info == 0)
        la_to_columns(b, nrhs, n, n, X, nrhs);  /* back to row-major */
    return info;
}

/* numpy.linalg.inv(A): A (n, n) into X (n, n); as rt_solve with B the identity */
static LI rt_inv(const double *A, BL n, double *X)
{
    double a[DIM(n * n)], b[DIM(n * n)];
    LI ipiv[DIM(n)];
    la_to_columns(A, n, n, n, a, n);
    memset(b, 0, sizeof(double) * n * n);
    for (BL i = 0; i < n; i++)
        b[i * n + i] = 1.0;
    LI info = la_gesv(n, n, a, ipiv, b);
    if (info == 0)
        la_to_columns(b, n, n, n, X, n);
    return info;
}

/* dgesdd of the column-major (m, n) a: s (k), u and vt row-major, k = min(m, n); jobz 'S'
   (numpy.linalg.svd(A, full_matrices=False): u (m, k), vt (k, n)) or 'A' (full_matrices:
   u (m, m), vt (n, n)); the work size queried first, as numpy does */
static LI la_svd(char jobz, double *a, LI m, LI n, double *s, double *u, double *vt)
{
    if (!lapack_fn[2])
        return la_jacobi_svd(jobz, a, m, n, s, u, vt);
    LI k = m < n ? m : n, ku = jobz == 'A' ? m : k, kv = jobz == 'A' ? n : k;
    LI lda = la_max(m, 1), ldvt = la_max(1, kv), lwork = -1, info = 0;
    double uc[DIM(m * ku)], vtc[DIM(kv * n)], query = 0.0;
    LI iwork[DIM(8 * k)];
    int m4 = (int)m, n4 = (int)n, lda4 = (int)lda, ldvt4 = (int)ldvt, lw4 = -1, i4 = 0;
    const char job[2] = {jobz, 0};
    if (lapack_ilp64)
        ((gesdd64_t)lapack_fn[2])(job, &m, &n, a, &lda, s, uc, &lda, vtc, &ldvt, &query,
                                  &lwork, iwork, &info);
    else
        ((gesdd32_t)lapack_fn[2])(job, &m4, &n4, a, &lda4, s, uc, &lda4, vtc, &ldvt4, &query,
                                  &lw4, (int *)iwork, &i4);
    if (info != 0 || i4 != 0)
        return info != 0 ? info : i4;
    lwork = (LI)query;
    if (lwork == 0)
        lwork = 1;
    double work[lwork];
    lw4 = (int)lwork;
    if (lapack_ilp64)
        ((gesdd64_t)lapack_fn[2])(job, &m, &n, a, &lda, s, uc, &lda, vtc, &ldvt, work, &lwork,
                                  iwork, &info);
    else
        ((gesdd32_t)lapack_fn[2])(job, &m4, &n4, a, &lda4, s, uc, &lda4, vtc, &ldvt4, work,
                                  &lw4, (int *)iwork, &i4);
    if (info != 0 || i4 != 0)
        return info != 0 ? info : i4;
    la_to_columns(uc, ku, m, lda, u, ku);     /* column-major (m, ku) -> row-major */
    la_to_columns(vtc, n, kv, ldvt, vt, n);   /* column-major (kv, n) -> row-major */
    return 0;
}

/* numpy.linalg.svd(A) (full_matrices=True): A (m, n) row-major; u (m, m), s (min), vt (n, n) */
static LI rt_svd_full(const double *A, BL m, BL n, double *u, double *s, double *vt)
{
    double a[DIM(m * n)];
    la_to_columns(A, m, n, n, a, m);
    return la_svd('A', a, m, n, s, u, vt);
}

/* numpy.linalg.pinv(A) (rcond 1e-15): A (m, n) into X (n, m); *cond = s_max / s_min (the
   2-norm condition number, inf when A is rank-deficient). 0, > 0 when the SVD did not
   converge (numpy: LinAlgError "SVD did not converge"). */
static LI rt_pinv(const double *A, BL m, BL n, double *X, double *cond)
{
    BL k = m < n ? m : n;
    double a[DIM(m * n)], s[DIM(k)], u[DIM(m * k)], vt[DIM(k * n)], su[DIM(k * m)];
    la_to_columns(A, m, n, n, a, m);
    LI info = la_svd('S', a, m, n, s, u, vt);
    if (info != 0)
        return info;
    double smax = s[0];
    for (BL i = 1; i < k; i++)  /* numpy's amax: a NaN wins */
        if (isnan(s[i]) || s[i] > smax)
            smax = s[i];
    double cutoff = 1e-15 * smax;
    *cond = s[0] / s[k - 1];
    for (BL i = 0; i < k; i++)
        s[i] = s[i] > cutoff ? 1.0 / s[i] : 0.0;
    /* s[:, None] * u.T: (k, m), Fortran-ordered as numpy allocates it (u.T leads), i.e.
       row-major (m, k) su[i][j] = s[j] * u[i][j] */
    for (BL i = 0; i < m; i++)
        for (BL j = 0; j < k; j++)
            su[i * k + j] = s[j] * u[i * k + j];
    /* vt.T (n, k): strides (1, n); su (k, m): strides (1, k) */
    rt_matmul_ex(vt, 1, n, su, 1, k, n, k, m, X);
    return 0;
}

/* lstsq without LAPACK: x = V diag(1/s) U^T b over the singular values above dgelsd's
   cutoff rcond * s_max (rcond eps * max(m, n)), from la_jacobi_svd */
static LI la_lstsq(const double *A, BL m, BL n, const double *b, double *x)
{
    BL k = m < n ? m : n;
    double a[DIM(m * n)], s[DIM(k)], u[DIM(m * k)], vt[DIM(k * n)];
    la_to_columns(A, m, n, n, a, m);
    LI info = la_jacobi_svd('S', a, m, n, s, u, vt);
    if (info)
        return info;
    double cutoff = 2.220446049250313e-16 * (double)(m > n ? m : n) * (k ? s[0] : 0.0);
    for (BL j = 0; j < n; j++)
        x[j] = 0.0;
    for (BL i = 0; i < k && s[i] > cutoff; i++) {
        double c = 0.0;
        for (BL r = 0; r < m; r++)
            c += u[r * k + i] * b[r];
        c /= s[i];
        for (BL j = 0; j < n; j++)
            x[j] += c * vt[i * n + j];
    }
    return 0;
}

/* numpy.linalg.lstsq(A, b, rcond=None)[0]: A (m, n) row-major, b (m) into x (n); 0, > 0
   when the SVD did not converge. */
static LI rt_lstsq(const double *A, BL m, BL n, const double *b, double *x)
{
    if (!lapack_fn[3])
        return la_lstsq(A, m, n, b, x);
    LI M = m, N = n, nrhs = 1, lda = la_max(1, M), ldb = la_max(1, la_max(M, N)), rank = 0,
       lwork = -1, iquery = 0, info = 0, k = m < n ? m : n;
    double rcond = 2.220446049250313e-16 * (double)(m > n ? m : n), query = 0.0;
    double a[DIM(m * n)], bb[DIM(ldb)], s[DIM(k)];
    int M4 = (int)M, N4 = (int)N, r4 = 1, lda4 = (int)lda, ldb4 = (int)ldb, rank4 = 0, lw4 = -1,
        iq4 = 0, i4 = 0;
    la_to_columns(A, m, n, n, a, m);
    memset(bb, 0, sizeof bb);
    memcpy(bb, b, sizeof(double) * m);
    if (lapack_ilp64)
        ((gelsd64_t)lapack_fn[3])(&M, &N, &nrhs, a, &lda, bb, &ldb, s, &rcond, &rank, &query,
                                  &lwork, &iquery, &info);
    else
        ((gelsd32_t)lapack_fn[3])(&M4, &N4, &r4, a, &lda4, bb, &ldb4, s, &rcond, &rank4,
                                  &query, &lw4, &iq4, &i4);
    if (info != 0 || i4 != 0)
        return info != 0 ? info : i4;
    lwork = (LI)query;
    LI liwork = lapack_ilp64 ? iquery : iq4;
    double work[DIM(lwork)];
    LI iwork[DIM(liwork)];
    lw4 = (int)lwork;
    if (lapack_ilp64)
        ((gelsd64_t)lapack_fn[3])(&M, &N, &nrhs, a, &lda, bb, &ldb, s, &rcond, &rank, work,
                                  &lwork, iwork, &info);
    else
        ((gelsd32_t)lapack_fn[3])(&M4, &N4, &r4, a, &lda4, bb, &ldb4, s, &rcond, &rank4, work,
                                  &lw4, (int *)iwork, &i4);
    if (info != 0 || i4 != 0)
        return info != 0 ? info : i4;
    memcpy(x, bb, sizeof(double) * n);
    return 0;
}

/* ---- det and cond (numpy.linalg.det, numpy.linalg.cond) ---------------------------------- */
typedef void (*getrf64_t)(const LI *, const LI *, double *, const LI *, LI *, LI *);
typedef void (*getrf32_t)(const int *, const int *, double *, const int *, int *, int *);

/* numpy.linalg.det(A), A (n, n) row-major, as numpy/linalg/umath_linalg.cpp computes it:
   dgetrf of A (column-major), the sign from the row exchanges and the diagonal's signs,
   sign * exp(sum of log |u_ii|) with the C library's log and exp; 0 for a singular A. */
static double rt_det(const double *A, BL n)
{
    double a[DIM(n * n)];
    LI ipiv[DIM(n)], ld = la_max(n, 1), info = 0;
    int n4 = (int)n, l4 = (int)ld, i4 = 0;
    la_to_columns(A, n, n, n, a, n);
    int wide = 1;  /* ipiv holds LI (la_lu's, an ILP64 LAPACK's), else int */
    if (!lapack_fn[4]) {
        info = la_lu(n, a, ipiv);
    } else if (lapack_ilp64) {
        ((getrf64_t)lapack_fn[4])(&n, &n, a, &ld, ipiv, &info);
    } else {
        ((getrf32_t)lapack_fn[4])(&n4, &n4, a, &l4, (int *)ipiv, &i4);
        info = i4;
        wide = 0;
    }
    if (info != 0)
        return 0.0 * exp(-INFINITY);
    int swaps = 0;
    for (BL i = 0; i < n; i++)
        swaps += wide ? ipiv[i] != i + 1 : ((int *)ipiv)[i] != i + 1;
    double sign = swaps % 2 ? -1.0 : 1.0, logdet = 0.0;
    for (BL i = 0; i < n; i++) {
        double u = a[i * (n + 1)];
        if (u < 0.0) {
            sign = -sign;
            u = -u;
        }
        logdet += log(u);
    }
    return sign * exp(logdet);
}

/* numpy.linalg.svd(A, compute_uv=False): the singular values s (min(m, n)) of A (m, n)
   row-major, by dgesdd('N') with the work size numpy queries; 0, or > 0 when it did not
   converge */
static LI rt_singular_values(const double *A, BL m, BL n, double *s)
{
    LI k = m < n ? m : n, lda = la_max(m, 1), one = 1, lwork = -1, info = 0;
    double a[DIM(m * n)], query = 0.0, unused = 0.0;
    LI iwork[DIM(8 * k)];
    int m4 = (int)m, n4 = (int)n, lda4 = (int)lda, one4 = 1, lw4 = -1, i4 = 0;
    la_to_columns(A, m, n, n, a, m);
    if (!lapack_fn[2]) {
        double u[DIM(m * k)], vt[DIM(k * n)];
        return la_jacobi_svd('S', a, m, n, s, u, vt);
    }
    if (lapack_ilp64)
        ((gesdd64_t)lapack_fn[2])("N", &m, &n, a, &lda, s, &unused, &one, &unused, &one,
                                  &query, &lwork, iwork, &info);
    else
        ((gesdd32_t)lapack_fn[2])("N", &m4, &n4, a, &lda4, s, &unused, &one4, &unused, &one4,
                                  &query, &lw4, (int *)iwork, &i4);
    if (info != 0 || i4 != 0)
        return info != 0 ? info : i4;
    lwork = (LI)query;
    if (lwork < 1)
        lwork = 1;
    double work[lwork];
    lw4 = (int)lwork;
    if (lapack_ilp64)
        ((gesdd64_t)lapack_fn[2])("N", &m, &n, a, &lda, s, &unused, &one, &unused, &one, work,
                                  &lwork, iwork, &info);
    else
        ((gesdd32_t)lapack_fn[2])("N", &m4, &n4, a, &lda4, s, &unused, &one4, &unused, &one4,
                                  work, &lw4, (int *)iwork, &i4);
    return info != 0 ? info : i4;
}

/* numpy.linalg.cond(A) (the 2-norm): s_max / s_min of the singular values, inf where that
   is NaN and A has no NaN; 0, or > 0 when the SVD did not converge */
static LI rt_cond(const double *A, BL m, BL n, double *cond)
{
    BL k = m < n ? m : n;
    double s[DIM(k)];
    LI info = rt_singular_values(A, m, n, s);
    if (info != 0)
        return info;
    double r = s[0] / s[k - 1];
    if (isnan(r)) {
        int any_nan = 0;
        for (BL i = 0; i < m * n; i++)
            any_nan |= isnan(A[i]);
        if (!any_nan)
            r = INFINITY;
    }
    *cond = r;
    return 0;
}
