/* The history of a signal kept from the solver's steps, for blocks that look into the past
   of their input (the transport delay): blocks/delay.py's History operation by operation --
   pieces in Newton's form from the samples of each piece of a step, segments between the
   input's jumps, the arrays' growth and dropping, the lookup's cache -- so that a lookup
   gives the interpreted block's bits.

   Its scalars and the samples of the piece being added live in the block's workspace
   (HIST_WORK + 9 * size + HIST_DEGREE doubles at h), its arrays in growable memory slots slot0 ..
   slot0 + HIST_SLOTS - 1 (GROW). */

#define HIST_GROW 256
#define HIST_DEGREE 8
#define HIST_M (HIST_DEGREE + 1)
enum { H_NODES, H_END, H_COEF, H_DEGREE, H_SEG_FIRST, H_SEG_START, H_SEG_TIME, HIST_SLOTS };
/* the workspace: counts (as doubles), then last_u (size), pending times (8), pending u */
enum { H_CAP, H_COUNT, H_BASE, H_DROP, H_NSEG, H_SEG_BASE, H_HAS_LAST, H_LAST_T, H_STEP_START,
       H_NPENDING, H_CACHED, H_CACHE_S, H_CACHE_LO, H_CACHE_HI, H_CACHE_K, HIST_WORK };

typedef struct {
    RT *rt;
    int slot0, size;
    double *h;  /* the workspace */
} RtHistory;

static double *hist_mem(RtHistory *H, int slot) { return H->rt->mem[H->slot0 + slot].data; }

/* memory slot `slot` of at least n doubles (its content kept) */
static double *hist_room(RtHistory *H, int slot, long long n)
{
    return rt_grow(H->rt, H->slot0 + slot, n > 0 ? n : 1);
}

static double *hist_last_u(RtHistory *H) { return H->h + HIST_WORK; }
static double *hist_pend_t(RtHistory *H) { return H->h + HIST_WORK + H->size; }
static double *hist_pend_u(RtHistory *H) { return H->h + HIST_WORK + H->size + HIST_DEGREE; }

/* History.clear */
static void rt_hist_clear(RtHistory *H)
{
    double *h = H->h;
    h[H_CAP] = HIST_GROW;
    h[H_COUNT] = h[H_BASE] = h[H_DROP] = h[H_NSEG] = h[H_SEG_BASE] = 0;
    h[H_HAS_LAST] = h[H_NPENDING] = h[H_CACHED] = 0;
}

/* History.start_segment */
static void rt_hist_start(RtHistory *H, double t, const double *u)
{
    double *h = H->h;
    long long k = (long long)h[H_NSEG];
    hist_room(H, H_SEG_FIRST, k + 1)[k] = h[H_BASE] + h[H_COUNT];
    memcpy(hist_room(H, H_SEG_START, (k + 1) * H->size) + k * H->size, u,
           sizeof(double) * H->size);
    hist_room(H, H_SEG_TIME, k + 1)[k] = t;
    h[H_NSEG] = k + 1;
    memcpy(hist_last_u(H), u, sizeof(double) * H->size);
    h[H_LAST_T] = t;
    h[H_HAS_LAST] = 1;
    h[H_STEP_START] = t;
    h[H_NPENDING] = 0;
}

/* History._grow: drop the pieces no lookup needs when they are at least half, else double */
static void rt_hist_grow(RtHistory *H)
{
    double *h = H->h;
    long long keep = (long long)h[H_DROP], count = (long long)h[H_COUNT];
    h[H_CACHED] = 0;
    if (keep >= count / 2) {
        long long rest = count - keep;
        memmove(hist_mem(H, H_NODES), hist_mem(H, H_NODES) + keep * HIST_M,
                sizeof(double) * rest * HIST_M);
        memmove(hist_mem(H, H_END), hist_mem(H, H_END) + keep, sizeof(double) * rest);
        memmove(hist_mem(H, H_COEF), hist_mem(H, H_COEF) + keep * HIST_M * H->size,
                sizeof(double) * rest * HIST_M * H->size);
        memmove(hist_mem(H, H_DEGREE), hist_mem(H, H_DEGREE) + keep, sizeof(double) * rest);
        h[H_COUNT] = rest;
        h[H_BASE] += keep;
        h[H_DROP] = 0;
        return;
    }
    h[H_CAP] *= 2;
}

/* History._add_piece from the points (times[j], values row j), j < npoints */
static void rt_hist_piece(RtHistory *H, const double *times, double *table, int npoints)
{
    double *h = H->h;
    if (h[H_COUNT] == h[H_CAP])
        rt_hist_grow(H);
    long long cap = (long long)h[H_CAP], k = (long long)h[H_COUNT];
    int size = H->size;
    double *nodes = hist_room(H, H_NODES, cap * HIST_M) + k * HIST_M;
    double *coef = hist_room(H, H_COEF, cap * HIST_M * size) + k * HIST_M * size;
    double *end = hist_room(H, H_END, cap), *degree = hist_room(H, H_DEGREE, cap);
    for (int j = 0; j < HIST_M; j++)
        nodes[j] = times[0];
    memset(coef, 0, sizeof(double) * HIST_M * size);
    int increasing = 1;
    for (int j = 1; j < npoints; j++)
        if (!(times[j] - times[j - 1] > 0))
            increasing = 0;
    memcpy(coef, table, sizeof(double) * size);
    if (increasing) {
        memcpy(nodes, times, sizeof(double) * npoints);
        for (int j = 1; j < npoints; j++) {  /* divided differences, in place */
            for (int r = 0; r < npoints - j; r++)
                for (int i = 0; i < size; i++)
                    table[r * size + i] = (table[(r + 1) * size + i] - table[r * size + i])
                                          / (times[r + j] - times[r]);
            memcpy(coef + j * size, table, sizeof(double) * size);
        }
        degree[k] = npoints - 1;
    } else {  /* a step too short for distinct sample times: the straight line (a step of
                 no length at all, between a jump and its echo one float later: the value) */
        const double *last = table + (npoints - 1) * size;
        double span = times[npoints - 1] - times[0];
        if (span > 0)
            for (int i = 0; i < size; i++)
                coef[size + i] = (last[i] - table[i]) / span;
        degree[k] = span > 0 ? 1 : 0;
    }
    end[k] = times[npoints - 1];
    h[H_COUNT] = k + 1;
}

/* History.add_sample: a sample of the current piece; `last`: the piece's end */
static void rt_hist_sample(RtHistory *H, double t, const double *u, int last)
{
    double *h = H->h, *pt = hist_pend_t(H), *pu = hist_pend_u(H);
    int size = H->size, n = (int)h[H_NPENDING];
    if (n == HIST_DEGREE) {  /* only the last DEGREE samples are used */
        memmove(pt, pt + 1, sizeof(double) * (HIST_DEGREE - 1));
        memmove(pu, pu + size, sizeof(double) * (HIST_DEGREE - 1) * size);
        n--;
    }
    pt[n] = t;
    memcpy(pu + n * size, u, sizeof(double) * size);
    h[H_NPENDING] = ++n;
    if (!last)
        return;
    double times[HIST_M], table[HIST_M * size];
    times[0] = h[H_LAST_T];
    memcpy(table, hist_last_u(H), sizeof(double) * size);
    memcpy(times + 1, pt, sizeof(double) * n);
    memcpy(table + size, pu, sizeof(double) * n * size);
    rt_hist_piece(H, times, table, n + 1);
    h[H_LAST_T] = pt[n - 1];
    memcpy(hist_last_u(H), pu + (n - 1) * size, sizeof(double) * size);
    h[H_NPENDING] = 0;
}

/* History.forget_before: lookups from now on are at times >= t */
static void rt_hist_forget(RtHistory *H, double t)
{
    double *h = H->h;
    long long nseg = (long long)h[H_NSEG];
    h[H_DROP] = rt_search_left(hist_mem(H, H_END), (int)h[H_COUNT], t);
    long long done = rt_search_left(hist_mem(H, H_SEG_TIME), (int)nseg, t) - 1;
    if (done > PYMAX(64, nseg / 2)) {
        long long rest = nseg - done;
        memmove(hist_mem(H, H_SEG_FIRST), hist_mem(H, H_SEG_FIRST) + done, sizeof(double) * rest);
        memmove(hist_mem(H, H_SEG_START), hist_mem(H, H_SEG_START) + done * H->size,
                sizeof(double) * rest * H->size);
        memmove(hist_mem(H, H_SEG_TIME), hist_mem(H, H_SEG_TIME) + done, sizeof(double) * rest);
        h[H_NSEG] = rest;
        h[H_SEG_BASE] += done;
    }
}

/* History._find: the piece of segment s holding tau into the cache; 0 when the segment has
   no piece yet */
static int rt_hist_find(RtHistory *H, long long s, double tau)
{
    double *h = H->h, *first_of = hist_mem(H, H_SEG_FIRST), *end = hist_mem(H, H_END);
    long long i = s - (long long)h[H_SEG_BASE], base = (long long)h[H_BASE];
    long long first = PYMAX((long long)first_of[i] - base, 0);
    long long last = (i + 1 < (long long)h[H_NSEG] ? (long long)first_of[i + 1] - base
                                                    : (long long)h[H_COUNT]) - 1;
    if (last < first)
        return 0;
    long long k = PYMIN(rt_search_left(end + first, (int)(last - first + 1), tau) + first, last);
    h[H_CACHED] = 1;
    h[H_CACHE_S] = (double)s;
    h[H_CACHE_LO] = k > first ? hist_mem(H, H_NODES)[k * HIST_M] : -INFINITY;
    h[H_CACHE_HI] = end[k];
    h[H_CACHE_K] = (double)k;
    return 1;
}

/* History.value: u(tau) within segment s into out */
static void rt_hist_value(RtHistory *H, long long s, double tau, double *out)
{
    double *h = H->h;
    int size = H->size;
    if (!h[H_CACHED] || h[H_CACHE_S] != (double)s
        || !(h[H_CACHE_LO] <= tau && tau <= h[H_CACHE_HI])) {
        if (!rt_hist_find(H, s, tau)) {  /* no step yet in this segment: its start value */
            memcpy(out, hist_mem(H, H_SEG_START) + (s - (long long)h[H_SEG_BASE]) * size,
                   sizeof(double) * size);
            return;
        }
    }
    long long k = (long long)h[H_CACHE_K];
    int d = (int)hist_mem(H, H_DEGREE)[k];
    const double *nodes = hist_mem(H, H_NODES) + k * HIST_M;
    const double *coef = hist_mem(H, H_COEF) + k * HIST_M * size;
    if (size == 1) {  /* Horner's rule, c0 + (tau - t0)(c1 + ...) */
        double v = coef[d];
        for (int j = d - 1; j >= 0; j--)
            v = v * (tau - nodes[j]) + coef[j];
        out[0] = v;
        return;
    }
    double w[HIST_M];  /* Newton's form: numpy's cumprod, then dot */
    w[0] = 1.0;
    for (int j = 0; j < d; j++)
        w[j + 1] = tau - nodes[j];
    for (int j = 1; j <= d; j++)
        w[j] = w[j - 1] * w[j];
    rt_dot_vm(w, d + 1, coef, size, out);
}
