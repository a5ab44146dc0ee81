/* What the expression language's compiled form (blocksim/accel/expression/) needs for one
   element where C has no operator for it, computed as numpy or blocksim's evaluator
   (blocksim/language/expr.py) computes it. */

#define RT_PI 3.141592653589793238462643383279502884

/* x % y and mod(x, y): numpy.remainder by numpy's own loop, and x where y is 0 */
static inline double rt_mod(double x, double y)
{
    if (y == 0.0)
        return x;
    double r;
    rt_ufunc2(RT_UF_REMAINDER, &x, 0, &y, 0, &r, 0, 1);
    return r;
}

/* round(x): half away from zero, t = trunc(x), t + sign(x) where |x - t| >= 0.5, + 0.0 */
static inline double rt_round(double x)
{
    double t = trunc(x);
    return (fabs(x - t) >= 0.5 ? t + rt_sign(x) : t) + 0.0;
}

/* numpy.clip of one element: NaN propagates, and numpy's comparisons (>=, <=) decide
   which zero a limit of 0 gives */
static inline double rt_clip_np(double x, double lo, double hi)
{
    double m = isnan(x) ? x : (x >= lo ? x : lo);
    return isnan(m) ? m : (m <= hi ? m : hi);
}

/* numpy's pairwise summation of n doubles s apart (numpy/_core/src/umath/loops_utils.h.src:
   sequential below 8, eight running sums up to 128, halves above) */
static double rt_pairwise_sum(const double *a, long long n, long long s)
{
    if (n < 8) {
        double res = -0.0;
        for (long long i = 0; i < n; i++)
            res += a[i * s];
        return res;
    }
    if (n <= 128) {
        double r[8], res;
        long long i;
        for (int j = 0; j < 8; j++)
            r[j] = a[j * s];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++)
                r[j] += a[(i + j) * s];
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res += a[i * s];
        return res;
    }
    long long n2 = n / 2;
    n2 -= n2 % 8;
    return rt_pairwise_sum(a, n2, s) + rt_pairwise_sum(a + n2 * s, n - n2, s);
}

/* numpy.dot of two vectors of n elements with positive strides (numpy's ddot with those
   strides; of one element, the product) */
static double rt_dot_strided(const double *a, long long sa, const double *b, long long sb,
                             long long n)
{
    if (n == 0)
        return 0.0;
    if (n == 1)
        return a[0] * b[0];
    return 0.0 + b_ddot(n, a, sa, b, sb);
}

/* Python's format(v, 'g') for a message: C's %g, and 'nan' for every NaN (glibc writes
   '-nan' for some) */
static const char *rt_pyg(double v, char *buf)
{
    if (isnan(v))
        return "nan";
    snprintf(buf, 32, "%g", v);
    return buf;
}

/* numpy's max(sum(abs(A), axis=0)), the 1-norm of A (rows, cols) with element strides
   (s0, s1): each column's sum in numpy's order (row after row; pairwise where numpy's |A|
   has its rows innermost, which numpy reduces as it sums a vector), the largest (NaN wins) */
static double rt_norm1(const double *A, long long rows, long long cols, long long s0,
                       long long s1, int pairwise)
{
    double m = 0.0, column[DIM(rows)];
    for (long long j = 0; j < cols; j++) {
        double s = fabs(A[j * s1]);
        if (pairwise) {
            for (long long i = 0; i < rows; i++)
                column[i] = fabs(A[i * s0 + j * s1]);
            s = 0.0 + rt_pairwise_sum(column, rows, 1);
        } else {
            for (long long i = 1; i < rows; i++)
                s += fabs(A[i * s0 + j * s1]);
        }
        if (j == 0 || isnan(s) || s > m)
            m = isnan(m) ? m : s;
    }
    return m;
}
