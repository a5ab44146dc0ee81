/* The explicit Runge-Kutta steppers of blocksim/engine/solvers, operation by operation:
   fixed_step.FixedStepRK (RK_KIND_FIXED: euler, rk2, rk4), adaptive_rk.EmbeddedRK
   (RK_KIND_EMBEDDED: rk23, rk45) and adaptive_rk.Dop853 (RK_KIND_DOP853). The tableau
   (RK_C, RK_A, RK_B, RK_E, RK_E3, RK_D) is the Python one, written out by the code
   generator, and so are the step size factors (SAFETY, MIN_FACTOR, ...: boundary.py). Failures set rt->error (rt_api.c) and
   return non-zero. Comments name the Python each part mirrors. */

enum { F0_IN_K0, F0_IN_LAST, F0_UNKNOWN };

static int rt_f(RT *rt, double t, const double *y, double *dy);
static int rt_set_error(RT *rt, int code, double t);

/* n doubles from src to dst, one by one: a state or derivative copied for an evaluation was
   just stored one by one (by the sums, the blocks), and memcpy's wider loads of values
   still on their way to memory wait for them (a store-forwarding stall each, a quarter of
   msd's run), where loads of the same width are forwarded at once */
static void rt_copy(double *dst, const double *src, int n)
{
    for (int i = 0; i < n; i++)
        dst[i] = src[i];
}

/* math.ulp */
static double rt_ulp(double x)
{
    x = fabs(x);
    if (isinf(x))
        return x;
    if (x == 0.0)
        return 4.9406564584124654e-324;
    double up = nextafter(x, INFINITY);
    return isinf(up) ? x - nextafter(x, 0.0) : up - x;
}

#define K(s) (st->Y[1 + (s)])

/* ExplicitRK._accept (the step budget: StepBudgetError) */
static int rk_accept(RT *rt, RtStepper *st, double t, double t_new, double h)
{
    memcpy(st->y_old, st->Y[0], sizeof(double) * NX);
    memcpy(st->Y[0], st->y_new, sizeof(double) * NX);
    st->t_old = t;
    st->t = t_new;
    st->h_last = h;
    st->has_last = 1;
    st->F_ready = 0;
    st->nsteps++;
    if (st->nsteps > rt->max_steps)
        return rt_set_error(rt, RT_E_BUDGET, t_new);
    return 0;
}

/* ExplicitRK.restart: continue from (t, y) up to t_bound, every cached value of f dropped */
static void rk_restart_common(RtStepper *st, double t, const double *y, double t_bound)
{
    st->t_bound = t_bound;
    st->t = st->t_old = t;
    memcpy(st->Y[0], y, sizeof(double) * NX);
    st->has_last = 0;
    st->F_ready = 0;
}

/* ExplicitRK._hermite: F0..F2 of the cubic Hermite interpolant from y_old, y, f0, f1 */
static void rk_hermite(RtStepper *st, const double *f1)
{
    double h = st->h_last;
    for (int i = 0; i < NX; i++) {
        double delta = st->Y[0][i] - st->y_old[i];
        st->F[0][i] = delta;
        st->F[1][i] = h * K(0)[i] - delta;
        st->F[2][i] = 2.0 * delta - h * (K(0)[i] + f1[i]);
    }
}

#if RK_KIND == RK_KIND_FIXED
/* ---- fixed_step.FixedStepRK ------------------------------------------------------------ */
static void rk_set_grid(RT *rt, RtStepper *st)
{
    double origin = rt->start, step = rt->step;
    st->tol = 1e-9 * step + 4 * rt_ulp(PYMAX(fabs(origin), fabs(st->t_bound)));
    long long k = (long long)floor((st->t - origin) / step);
    while (origin + (double)(k + 1) * step <= st->t + st->tol)
        k++;
    while (origin + (double)k * step > st->t + st->tol)
        k--;
    st->k = k;
}

static void rk_restart(RT *rt, RtStepper *st, double t, const double *y, double t_bound)
{
    rk_restart_common(st, t, y, t_bound);
    st->f1_ready = 0;
    rk_set_grid(rt, st);
}

/* FixedStepRK._combine: out = y + sum of (h c_j) k_j over the non-zero c_j (n of them
   given), the products added left to right; as numpy's multiply and add do it, no BLAS */
static void rk_combine(RtStepper *st, const double *y, const double *c, int n, double h,
                       double *out)
{
    int first = 1;
    for (int j = 0; j < n; j++) {
        if (c[j] == 0.0)
            continue;
        const double hc = h * c[j], *k = K(j);
        if (first)
            for (int i = 0; i < NX; i++)
                out[i] = k[i] * hc;
        else
            for (int i = 0; i < NX; i++)
                out[i] = out[i] + k[i] * hc;
        first = 0;
    }
    if (first)
        memcpy(out, y, sizeof(double) * NX);
    else
        for (int i = 0; i < NX; i++)
            out[i] = y[i] + out[i];
}

static int rk_step(RT *rt, RtStepper *st)
{
    double t = st->t, t_bound = st->t_bound;
    long long k = st->k + 1;
    double t_new = rt->start + (double)k * rt->step;
    if (t_bound <= t_new + st->tol)
        t_new = t_bound;
    double h = t_new - t;
    if (st->f1_ready) {
        memcpy(K(0), st->f1, sizeof(double) * NX);
    } else {
        if (rt_f(rt, t, st->Y[0], K(0)))
            return 1;
        st->nfev++;
    }
    for (int s = 1; s < RK_S; s++) {
        rk_combine(st, st->Y[0], RK_A + s * RK_M, s, h, st->arg);
        if (rt_f(rt, t + RK_C[s] * h, st->arg, K(s)))
            return 1;
    }
    st->nfev += RK_S - 1;
    rk_combine(st, st->Y[0], RK_B, RK_S, h, st->y_new);
    int finite = 1;
    for (int i = 0; i < NX; i++)
        finite &= isfinite(st->y_new[i]) != 0;
    if (!finite) {  /* numpy: not isfinite(y_new . y_new) and not all finite, the same */
        rt->error_num[0] = t_new;
        rt->error_num[1] = h;
        return rt_set_error(rt, RT_E_FIXED_NONFINITE, t);
    }
    if (rk_accept(rt, st, t, t_new, h))
        return 1;
    st->k = k;
    st->f1_ready = 0;
    return 0;
}

static int rk_dense_coefficients(RT *rt, RtStepper *st)
{
    if (!st->f1_ready) {
        if (rt_f(rt, st->t, st->Y[0], st->f1))
            return 1;
        st->nfev++;
        st->f1_ready = 1;
    }
    rk_hermite(st, st->f1);
    return 0;
}

#elif RK_KIND == RK_KIND_EMBEDDED || RK_KIND == RK_KIND_DOP853
/* ---- adaptive_rk.EmbeddedRK and Dop853 ------------------------------------------------- */
/* EmbeddedRK._stages: stages first..stop-1 of a step of size h from (t, y); each stage's
   argument is [1, h a_s0, ..] . [y; k_0; ..] (numpy.dot), its row made by rk_row. Non-zero when a block failed
   (normal mode raises there, before counting the evaluations). */
static double *rk_row(RtStepper *st, int s, double h)
{
    double *row = st->coef[s];  /* [1, h a_s0 .. h a_s(s-1)]: A is lower triangular */
    row[0] = 1.0;
    for (int j = 0; j < s; j++)
        row[1 + j] = RK_A[s * RK_M + j] * h;
    return row;
}

static int rk_stages(RT *rt, RtStepper *st, double t, double h, int first, int stop)
{
    for (int s = first; s < stop; s++) {
        rt_dot_vm(rk_row(st, s, h), s + 1, st->Y[0], NX, st->arg);
        if (rt_f(rt, t + RK_C[s] * h, st->arg, K(s)))
            return 1;
    }
    st->nfev += stop - first;
    return 0;
}

static void rk_set_reach(RT *rt, RtStepper *st)
{
    st->reach = rt->max_step + 4 * rt_ulp(st->t_bound);
}

static void rk_restart(RT *rt, RtStepper *st, double t, const double *y, double t_bound)
{
    rk_restart_common(st, t, y, t_bound);
    for (int i = 0; i < NX; i++)
        st->abs_y[i] = fabs(st->Y[0][i]);
    st->f0 = F0_UNKNOWN;
    rk_set_reach(rt, st);
}

/* _rms: sqrt(x.dot(x) / n) */
static double rk_rms(const double *x)
{
    return sqrt(rt_dot(x, x, NX) / NX);
}

/* EmbeddedRK._initial_step (Hairer's); leaves f(t0, y0) in K[0] */
static double rk_initial_step(RT *rt, RtStepper *st)
{
    double t = st->t, interval = st->t_bound - st->t;
    if (NX == 0)
        return rt->max_step;
    double *y = st->Y[0], scale[DIM(NX)], a[DIM(NX)], b[DIM(NX)];
    if (rt_f(rt, t, y, K(0)))
        return 0.0;
    st->f0 = F0_IN_K0;
    for (int i = 0; i < NX; i++)
        scale[i] = rt->atol + rt->rtol * fabs(y[i]);
    for (int i = 0; i < NX; i++) {
        a[i] = y[i] / scale[i];
        b[i] = K(0)[i] / scale[i];
    }
    double d0 = rk_rms(a), d1 = rk_rms(b);
    double h0 = d0 < 1e-5 || d1 < 1e-5 ? 1e-6 : 0.01 * d0 / d1;
    h0 = PYMIN(PYMAX(h0, 4 * rt_ulp(PYMAX(fabs(t), 1.0))), interval);
    for (int i = 0; i < NX; i++)
        a[i] = y[i] + h0 * K(0)[i];
    if (rt_f(rt, t + h0, a, b))
        return 0.0;
    st->nfev += 2;
    for (int i = 0; i < NX; i++)
        a[i] = (b[i] - K(0)[i]) / scale[i];
    double d2 = rk_rms(a) / h0, h1;
    if (PYMAX(d1, d2) <= 1e-15)
        h1 = PYMAX(1e-6, h0 * 1e-3);
    else
        h1 = pow(0.01 / PYMAX(d1, d2), 1.0 / (RK_ERROR_ORDER + 1));
    return PYMIN(PYMIN(PYMIN(100 * h0, h1), interval), rt->max_step);
}

/* numpy.maximum: NaN wins */
static double rk_npmax(double a, double b)
{
    if (isnan(a))
        return a;
    if (isnan(b))
        return b;
    return a >= b ? a : b;
}

/* EmbeddedRK._error_norm (Dop853._error_norm for RK_KIND_DOP853) */
static double rk_error_norm(RT *rt, RtStepper *st, double h)
{
    double atol_rtol = rt->atol / rt->rtol;
    rt_dot_vm(RK_E, RK_S, K(0), NX, st->err);
    for (int i = 0; i < NX; i++) {
        st->abs_new[i] = fabs(st->y_new[i]);
        st->scale[i] = rk_npmax(st->abs_y[i], st->abs_new[i]) + atol_rtol;
        st->err[i] /= st->scale[i];
    }
#if RK_KIND == RK_KIND_DOP853
    rt_dot_vm(RK_E3, RK_S, K(0), NX, st->err3);
    for (int i = 0; i < NX; i++)
        st->err3[i] /= st->scale[i];
    double s5 = rt_dot(st->err, st->err, NX), s3 = rt_dot(st->err3, st->err3, NX);
    if (s5 == 0.0)
        return 0.0;
    return h / rt->rtol * s5 / sqrt((s5 + 0.01 * s3) * NX);
#else  /* RK_KIND_EMBEDDED */
    return h / rt->rtol * sqrt(rt_dot(st->err, st->err, NX) * (NX ? 1.0 / NX : 0.0));
#endif
}

/* EmbeddedRK.stiffness_estimate: |h lambda| from stages RK_STIFF_I and RK_STIFF_J */
static double rk_stiffness_estimate(RtStepper *st)
{
    double da[RK_S];
    for (int s = 0; s < RK_S; s++)
        da[s] = RK_A[RK_STIFF_J * RK_M + s] - RK_A[RK_STIFF_I * RK_M + s];
    rt_dot_vm(da, RK_S, K(0), NX, st->tmp);
    double den = sqrt(rt_dot(st->tmp, st->tmp, NX));
    if (den == 0.0)
        return 0.0;
    for (int i = 0; i < NX; i++)
        st->tmp[i] = K(RK_STIFF_J)[i] - K(RK_STIFF_I)[i];
    return sqrt(rt_dot(st->tmp, st->tmp, NX)) / den;
}

/* EmbeddedRK._test_stiffness */
static int rk_test_stiffness(RT *rt, RtStepper *st, double t, double h)
{
    double h_lambda = rk_stiffness_estimate(st);
    if (h_lambda > RK_STIFF_BOUND) {
        st->stiff_count++;
        st->nonstiff_count = 0;
        if (st->stiff_count >= STIFF_STEPS) {
            double needed = (rt->stop - t) / PYMAX(st->h, h);
            if ((double)st->nsteps + needed > (double)rt->max_steps) {
                rt->error_num[0] = h;
                rt->error_num[1] = h_lambda;
                rt->error_num[2] = needed;
                return rt_set_error(rt, RT_E_STIFF, t);
            }
        }
    } else {
        st->nonstiff_count++;
        if (st->nonstiff_count >= NONSTIFF_STEPS)
            st->stiff_count = st->nonstiff_count = 0;
    }
    return 0;
}

static int rk_step(RT *rt, RtStepper *st)
{
    double t = st->t, t_bound = st->t_bound, t_new, h_step, err;
    double h = st->h_set ? st->h : rk_initial_step(rt, st);
    if (rt->error)
        return 1;
    double min_step = 10.0 * rt_ulp(t);
    if (h < min_step)  /* tried from the round-off limit up; only rejections go below */
        h = PYMIN(min_step, rt->max_step);
    if (st->f0 == F0_IN_LAST) {
        memcpy(K(0), K(RK_S - 1), sizeof(double) * NX);
    } else if (st->f0 == F0_UNKNOWN) {
        if (rt_f(rt, t, st->Y[0], K(0)))
            return 1;
        st->nfev++;
    }
    st->f0 = F0_IN_K0;
    int rejected = 0, nonfinite = 0;
    double exponent = -1.0 / (RK_ERROR_ORDER + 1);
    for (;;) {
        double remaining = t_bound - t;
        if (remaining <= PYMIN(1.01 * h, st->reach)) {
            t_new = t_bound;
            h_step = remaining;
        } else {
            if (h < min_step) {
                rt->error_num[0] = h;
                rt->error_num[1] = nonfinite;
                return rt_set_error(rt, RT_E_ROUNDOFF, t);
            }
            t_new = t + h;
            h_step = t_new - t;
        }
        if (rk_stages(rt, st, t, h_step, 1, RK_S - 1))
            return 1;
        rt_dot_vm(rk_row(st, RK_S - 1, h_step), RK_S, st->Y[0], NX, st->y_new);
        if (rt_f(rt, t_new, st->y_new, K(RK_S - 1)))
            return 1;
        st->nfev++;
        err = rk_error_norm(rt, st, h_step);
        if (err <= 1.0)
            break;
        rejected = 1;
        st->nrejected++;
        nonfinite = !(err < INFINITY);
        double factor = nonfinite ? MIN_FACTOR : SAFETY * pow(err, exponent);
        h = h_step * PYMAX(MIN_FACTOR, factor);
    }
    double factor = err > 0.0 ? PYMIN(MAX_FACTOR, SAFETY * pow(err, exponent)) : MAX_FACTOR;
    if (rejected)
        factor = PYMIN(1.0, factor);
    double h_next = h_step * factor;
    if (t_new == t_bound && !rejected && h_next < h)
        h_next = h;
    st->h = PYMIN(h_next, rt->max_step);
    st->h_set = 1;
    if (rk_accept(rt, st, t, t_new, h_step))
        return 1;
    memcpy(st->abs_y, st->abs_new, sizeof(double) * NX);
    st->f0 = F0_IN_LAST;
    if (st->stiff_count || st->nsteps % STIFF_TEST_EVERY == 0)
        return rk_test_stiffness(rt, st, t_new, h_step);
    return 0;
}

/* EmbeddedRK._dense_coefficients: the extra stages, the Hermite part, h * D K */
static int rk_dense_coefficients(RT *rt, RtStepper *st)
{
    double h = st->h_last;
    for (int s = RK_S; s < RK_M; s++) {
        rt_dot_vm(RK_A + s * RK_M, s, K(0), NX, st->tmp);
        for (int i = 0; i < NX; i++)
            st->arg[i] = st->y_old[i] + h * st->tmp[i];
        if (rt_f(rt, st->t_old + RK_C[s] * h, st->arg, K(s)))
            return 1;
        st->nfev++;
    }
    rk_hermite(st, K(RK_S - 1));
    if (RK_ND) {
        rt_dot_mm(RK_D, RK_ND, RK_M, K(0), NX, st->F[3]);
        for (int r = 0; r < RK_ND; r++)
            for (int i = 0; i < NX; i++)
                st->F[3 + r][i] *= h;
    }
    return 0;
}

#endif

/* ExplicitRK.dense: y(t) on the last accepted step, into out */
static void rk_dense(RT *rt, RtStepper *st, double t, double *out)
{
    if (!st->F_ready) {
        if (rk_dense_coefficients(rt, st))
            return;
        st->F_ready = 1;
    }
    double x = (t - st->t_old) / st->h_last, x1 = 1.0 - x;
    for (int i = 0; i < NX; i++) {
        double acc = st->F[2 + RK_ND][i];
        for (int j = 1 + RK_ND; j >= 0; j--)
            acc = st->F[j][i] + ((j & 1) ? x : x1) * acc;
        out[i] = st->y_old[i] + x * acc;
    }
}
#undef K
