/* A chart's instant in compiled code: blocks/chart/machine.py (Machine.step and what it
   calls) statement for statement, on the same tables (blocks/chart/program.py) and store.
   The chart's actions and conditions are its block's functions `act` and `guard`
   (generated from the same parsed text by blocks/chart/lowering.py). */

#define CHART_MAX_CHAIN 100
#define CHART_SNAP 1e-9

typedef struct {
    int n_states, n_every, parallel, n_tops, initial, discrete;
    int ACTIVE, ENTERED, COUNT, STARTED;
    const int *tops, *child0, *nchild, *children, *init_chain0, *init_nchain, *init_chain;
    const int *entry, *exit, *during;                /* per state: an action or -1 */
    const int *out0, *nout, *outgoing;               /* per state: its transitions */
    const int *t_source, *t_target, *t_guard, *t_do, *t_has_after, *t_exit;
    const int *t_enter0, *t_nenter, *enter;
    const int *every_state, *every_action;
    const char *const *names;                        /* the states' paths */
} ChartTables;

typedef struct {
    RT *rt;
    int self;
    const char *method;
    const ChartTables *T;
    double *store;
    const double *after, *period;                    /* per transition, per every action */
    void (*act)(RT *, double, int, const char *);
    void (*guard)(RT *, double, int, const char *, double *);
    double *pending;                                 /* a discrete chart's log: n, pairs */
    int chain[CHART_MAX_CHAIN + 1];
} Chart;

static int chart_due(const Chart *m, double t, double time)
{
    return m->T->discrete ? t >= time - CHART_SNAP * PYMAX(1.0, fabs(t)) : t >= time;
}

static void chart_run(Chart *m, double t, int action)
{
    if (action >= 0 && !m->rt->error)
        m->act(m->rt, t, action, m->method);
}

static int chart_holds(Chart *m, double t, int guard)
{
    if (guard < 0)
        return 1;
    double truth = 0.0;
    m->guard(m->rt, t, guard, m->method, &truth);
    return truth != 0.0;
}

static void chart_log(Chart *m, int state, int transition)
{
    if (m->pending) {
        long long n = (long long)m->pending[0];
        m->pending[1 + 2 * n] = state;
        m->pending[2 + 2 * n] = transition;
        m->pending[0] = (double)(n + 1);
    } else {
        rt_log(m->rt, m->self, state, transition);
    }
}

static int chart_active_child(const Chart *m, int s)
{
    const ChartTables *T = m->T;
    const int *kids = s < 0 ? T->tops : T->children + T->child0[s];
    int n = s < 0 ? T->n_tops : T->nchild[s];
    for (int i = 0; i < n; i++)
        if (m->store[T->ACTIVE + kids[i]] != 0.0)
            return kids[i];
    return -1;
}

static void chart_enter(Chart *m, const int *states, int n, double t, int transition)
{
    const ChartTables *T = m->T;
    for (int i = 0; i < n && !m->rt->error; i++) {
        int s = states[i];
        m->store[T->ACTIVE + s] = 1.0;
        m->store[T->ENTERED + s] = t;
        for (int e = 0; e < T->n_every; e++)
            if (T->every_state[e] == s) {
                m->store[T->COUNT + e] = 0.0;
                if (!T->discrete)
                    rt_schedule(m->rt, m->self, t + m->period[e]);
            }
        if (!T->discrete)
            for (int j = 0; j < T->nout[s]; j++) {
                int k = T->outgoing[T->out0[s] + j];
                if (T->t_has_after[k])
                    rt_schedule(m->rt, m->self, t + m->after[k]);
            }
        chart_log(m, s, transition);
        chart_run(m, t, T->entry[s]);
    }
}

static int chart_enabled(Chart *m, int s, double t)
{
    const ChartTables *T = m->T;
    for (int j = 0; j < T->nout[s]; j++) {
        int k = T->outgoing[T->out0[s] + j];
        if (T->t_has_after[k] && !chart_due(m, t, m->store[T->ENTERED + s] + m->after[k]))
            continue;
        int holds = chart_holds(m, t, T->t_guard[k]);
        if (m->rt->error)
            return -1;
        if (holds)
            return k;
    }
    return -1;
}

static void chart_take(Chart *m, int k, double t)
{
    const ChartTables *T = m->T;
    int chain[256], n = 0, c;  /* states nest at most 100 deep (the YAML reader's limit) */
    chain[n++] = T->t_exit[k];
    while ((c = chart_active_child(m, chain[n - 1])) >= 0 && n < 256)
        chain[n++] = c;
    for (int i = n - 1; i >= 0; i--) {
        chart_run(m, t, T->exit[chain[i]]);
        m->store[T->ACTIVE + chain[i]] = 0.0;
    }
    chart_run(m, t, T->t_do[k]);
    chart_enter(m, T->enter + T->t_enter0[k], T->t_nenter[k], t, k);
}

/* one pass; the transitions taken are appended to m->chain from *count on */
static int chart_pass(Chart *m, double t, int *count)
{
    const ChartTables *T = m->T;
    int regions = T->parallel ? T->n_tops : 1, taken = 0;
    for (int r = 0; r < regions && !m->rt->error; r++) {
        int s = T->parallel ? T->tops[r] : chart_active_child(m, -1);
        while (s >= 0) {
            int k = chart_enabled(m, s, t);
            if (m->rt->error)
                return taken;
            if (k >= 0) {
                chart_take(m, k, t);
                if (*count <= CHART_MAX_CHAIN)
                    m->chain[*count] = k;
                (*count)++;
                taken++;
                break;
            }
            s = chart_active_child(m, s);
        }
    }
    return taken;
}

/* Program.loop_text: the cycle the chain ended in, by its states */
static void chart_loop(Chart *m, double t)
{
    const ChartTables *T = m->T;
    int n = CHART_MAX_CHAIN + 1, last = m->chain[n - 1], from = 0;
    for (int k = n - 2; k >= 0; k--)
        if (m->chain[k] == last) {
            from = k + 1;
            break;
        }
    char text[400];
    size_t used = 0;
    used += (size_t)snprintf(text, sizeof text, "%s", T->names[T->t_source[m->chain[from]]]);
    for (int k = from; k < n && used < sizeof text; k++)
        used += (size_t)snprintf(text + used, sizeof text - used, " -> %s",
                                 T->names[T->t_target[m->chain[k]]]);
    rt_fail(m->rt, m->self, t, m->method, "transition loop: %s (more than %d transitions at "
            "one instant without the chart settling)", text, CHART_MAX_CHAIN);
}

static int chart_every(Chart *m, double t)
{
    const ChartTables *T = m->T;
    int ran = 0;
    for (int e = 0; e < T->n_every && !m->rt->error; e++) {
        int s = T->every_state[e];
        if (m->store[T->ACTIVE + s] == 0.0)
            continue;
        double start = m->store[T->ENTERED + s], count = m->store[T->COUNT + e];
        if (!chart_due(m, t, start + (count + 1.0) * m->period[e]))
            continue;
        count += 1.0;
        while (T->discrete && chart_due(m, t, start + (count + 1.0) * m->period[e]))
            count += 1.0;
        m->store[T->COUNT + e] = count;
        chart_run(m, t, T->every_action[e]);
        ran = 1;
        if (!T->discrete)
            rt_schedule(m->rt, m->self, start + (count + 1.0) * m->period[e]);
    }
    return ran;
}

/* Machine.step */
static int chart_step(Chart *m, double t)
{
    const ChartTables *T = m->T;
    double *store = m->store;
    int changed = 0;
    if (store[T->STARTED] == 0.0) {
        store[T->STARTED] = 1.0;
        int regions = T->parallel ? T->n_tops : 1;
        for (int r = 0; r < regions; r++) {
            int top = T->parallel ? T->tops[r] : T->initial;
            chart_enter(m, &top, 1, t, -1);
            chart_enter(m, T->init_chain + T->init_chain0[top], T->init_nchain[top], t, -1);
        }
        changed = 1;
    }
    int count = 0;
    while (!m->rt->error) {
        int taken = chart_pass(m, t, &count);
        if (!taken)
            break;
        if (count > CHART_MAX_CHAIN) {
            chart_loop(m, t);
            return 1;
        }
    }
    changed |= count > 0;
    changed |= chart_every(m, t);
    if (T->discrete)
        for (int s = 0; s < T->n_states && !m->rt->error; s++)
            if (store[T->ACTIVE + s] != 0.0 && store[T->ENTERED + s] < t)
                chart_run(m, t, T->during[s]);
    return changed;
}

/* the index of a region's active leaf (leaf_index: per state, -1 for a composite) */
static double chart_leaf(const Chart *m, int region, const int *leaf_index)
{
    const ChartTables *T = m->T;
    int s = T->parallel ? T->tops[region] : chart_active_child(m, -1), leaf = -1;
    while (s >= 0) {
        leaf = s;
        s = chart_active_child(m, s);
    }
    return leaf >= 0 ? (double)leaf_index[leaf] : -1.0;
}
