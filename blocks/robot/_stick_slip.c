/*
 * The robot block's stick-slip friction (coulomb: events) for compiled diagrams: the
 * constrained forward dynamics of Robot._constrained and the choice of the modes of the joints
 * at rest of Robot._rest_modes (blocks/robot/dynamics_blocks.py), operation by operation, over
 * the kernels' row functions (_kernel_rows.c, written in before this file) and numpy.linalg's
 * solve, matmul and maximum as numpy computes them (rt_solve, rt_matmul_ex, rt_maximum of
 * the accelerated mode's runtime).
 */

/* The plant of one robot block: the kernel arguments without Coulomb friction, the Coulomb
 * levels hi = |G| Tc+ and down = -|G| Tc- per joint, smooth (1 for a joint without Coulomb
 * friction), the tolerance of the rest modes' holding torques. */
typedef struct {
    const double *P, *W, *g, *hi, *down, *smooth;
    double tol;
    ptrdiff_t n;
} StickSlip;

/* Robot._constrained: qdd with the joints of modes == 0 held (qdd = 0 there) and their
 * holding torques hold (written at the stuck joints only): M_FF qdd_F = b_F,
 * hold_S = b_S - M_SF qdd_F, b = drive - (C qd + g + viscous). 0, or 1 when M_FF is singular. */
static int ss_constrained(const StickSlip *s, const double *q, const double *qd,
                          const double *drive, const double *modes, double *qdd, double *hold)
{
    ptrdiff_t n = s->n, nf = 0, ns = 0, fr[DIM(n)], st[DIM(n)];
    double M[DIM(n * n)], h[DIM(n)], b[DIM(n)], zero[DIM(n)], work[ROW_WORK(n)];
    const double F0[6] = {0};
    Call c = {s->P, s->W, s->g, F0, {q, NULL, NULL}, M, n, 1, 0, 0};
    inertia_kernel_row(&c, 0, work);
    for (ptrdiff_t i = 0; i < n; i++)
        zero[i] = 0.0;
    rne_row(s->P, s->W, n, s->g, q, qd, zero, F0, h, work);
    for (ptrdiff_t i = 0; i < n; i++) {
        b[i] = drive[i] - h[i];
        qdd[i] = 0.0;
        if (modes[i] != 0.0)
            fr[nf++] = i;
        else
            st[ns++] = i;
    }
    double Mff[DIM(nf * nf)], bf[DIM(nf)], x[DIM(nf)], Msf[DIM(ns * nf)], mq[DIM(ns)];
    if (nf) {
        for (ptrdiff_t i = 0; i < nf; i++) {
            bf[i] = b[fr[i]];
            for (ptrdiff_t j = 0; j < nf; j++)
                Mff[i * nf + j] = M[fr[i] * n + fr[j]];
        }
        if (rt_solve(Mff, nf, bf, 1, x) != 0)
            return 1;
        for (ptrdiff_t i = 0; i < nf; i++)
            qdd[fr[i]] = x[i];
    }
    for (ptrdiff_t i = 0; i < ns; i++)
        for (ptrdiff_t j = 0; j < nf; j++)
            Msf[i * nf + j] = M[st[i] * n + fr[j]];
    rt_matmul_ex(Msf, nf, 1, x, 1, 1, ns, nf, 1, mq);  /* M_SF @ qdd_F */
    for (ptrdiff_t i = 0; i < ns; i++)
        hold[st[i]] = b[st[i]] - mq[i];
    return 0;
}

/* One trial of Robot._rest_modes: the joints idx (k of them) at rest in the modes `choice`,
 * the others in `moving`; their excess torques beyond the friction band (-inf for released
 * joints), holding torques, and whether every released joint accelerates with its mode.
 * 0, or 1 when the inertia matrix of the free joints is singular. */
static int ss_attempt(const StickSlip *s, const double *q, const double *qd, const double *tau,
                      const double *moving, const ptrdiff_t *idx, ptrdiff_t k,
                      const char *broke, const double *choice, double *excess, double *held,
                      int *released_ok)
{
    ptrdiff_t n = s->n;
    double modes[DIM(n)], drive[DIM(n)], qdd[DIM(n)], hold[DIM(n)];
    for (ptrdiff_t i = 0; i < n; i++) {
        modes[i] = moving[i];
        drive[i] = qdd[i] = hold[i] = 0.0;
    }
    for (ptrdiff_t j = 0; j < k; j++)
        modes[idx[j]] = choice[j];
    subtract_coulomb_row(n, modes, tau, s->hi, s->down, 1.0, drive);
    if (ss_constrained(s, q, qd, drive, modes, qdd, hold))
        return 1;
    *released_ok = 1;
    for (ptrdiff_t j = 0; j < k; j++) {
        ptrdiff_t i = idx[j];
        double e = rt_maximum(hold[i] - s->hi[i], -s->down[i] - hold[i]);
        if (broke[j])
            e = rt_maximum(e, 2 * s->tol);
        if (choice[j] != 0.0) {
            e = -INFINITY;
            if (!(choice[j] * qdd[i] >= 0))
                *released_ok = 0;
        }
        excess[j] = e;
        held[j] = hold[i];
    }
    return 0;
}

/* numpy.argmax of v (k): the first maximum, or the first NaN */
static ptrdiff_t ss_argmax(const double *v, ptrdiff_t k)
{
    ptrdiff_t best = 0;
    for (ptrdiff_t j = 1; j < k && !isnan(v[best]); j++)
        if (isnan(v[j]) || v[j] > v[best])
            best = j;
    return best;
}

/* Robot._rest_modes: the modes `choice` (k) of the joints idx at rest, released one at a
 * time by the worst violation, else every combination, fewest released first (itertools'
 * product of (0, 1, -1) in its order, stably sorted by the number released). 0, or 1 when
 * an inertia matrix was singular. */
static int ss_rest_modes(const StickSlip *s, const double *q, const double *qd,
                         const double *tau, const double *moving, const ptrdiff_t *idx,
                         ptrdiff_t k, const char *broke, double *choice)
{
    double excess[DIM(k)], held[DIM(k)], option[DIM(k)];
    int released_ok;
    for (ptrdiff_t j = 0; j < k; j++)
        choice[j] = 0.0;
    for (ptrdiff_t it = 0; it < k + 1; it++) {
        if (ss_attempt(s, q, qd, tau, moving, idx, k, broke, choice, excess, held,
                       &released_ok))
            return 1;
        ptrdiff_t worst = ss_argmax(excess, k);
        if (excess[worst] <= s->tol) {
            if (released_ok)
                return 0;
            break;
        }
        choice[worst] = held[worst] > s->hi[idx[worst]] ? 1.0 : -1.0;
    }
    long long total = 1;
    for (ptrdiff_t j = 0; j < k; j++)
        total *= 3;
    static const double LEVELS[3] = {0.0, 1.0, -1.0};
    for (ptrdiff_t released = 0; released <= k; released++)
        for (long long code = 0; code < total; code++) {
            long long rest = code;
            ptrdiff_t count = 0;
            for (ptrdiff_t j = k - 1; j >= 0; j--) {  /* the last element varies fastest */
                option[j] = LEVELS[rest % 3];
                count += rest % 3 != 0;
                rest /= 3;
            }
            if (count != released)
                continue;
            if (ss_attempt(s, q, qd, tau, moving, idx, k, broke, option, excess, held,
                           &released_ok))
                return 1;
            int inside = 1;
            for (ptrdiff_t j = 0; j < k; j++)
                inside &= excess[j] <= s->tol;
            if (released_ok && inside) {
                for (ptrdiff_t j = 0; j < k; j++)
                    choice[j] = option[j];
                return 0;
            }
        }
    return 0;
}
