/* The run loop of blocksim/engine/simulator.py (Simulation.run, segment, at_event, settle,
   locate, _illinois, fill, record, locate_stop) in C, step for step, so that a compiled run
   takes the same steps, finds the same events and records the same rows. It runs in chunks:
   rt_run returns after a wall-time budget (RT_MORE) and resumes where it stopped, so that
   Python can move the progress bar and act on Ctrl-C between chunks. An exported diagram
   (blocksim export) also pauses it at its caller's times: with rt->pausing, pause_t is an
   event instant (the step ends there) and the loop returns RT_PAUSED once it has reached
   it. */

enum { PH_START, PH_OUTER, PH_SEGMENT, PH_DONE };
enum { SEG_END, SEG_STOP, SEG_CROSS, SEG_BUDGET, SEG_ERROR };

static int rt_set_error(RT *rt, int code, double t)
{
    if (rt->error == RT_E_NONE) {
        rt->error = code;
        rt->error_t = t;
    }
    return 1;
}

static void rt_fail(RT *rt, int block, double t, const char *method, const char *format, ...)
{
    if (rt->error == RT_E_NONE) {
        rt->error = RT_E_BLOCK;
        rt->error_t = t;
        rt->error_block = block;
        rt->error_method = method;
        va_list args;
        va_start(args, format);
        vsnprintf(rt->error_text, sizeof rt->error_text, format, args);
        va_end(args);
    }
}

/* ---- rows ---------------------------------------------------------------------------- */
/* a row more; a full table grows as recorder.next_capacity: twice the rows (256 at
   first), but only to `planned` when that lies between */
static double *rows_add(RT *rt, RtRows *r)
{
    if (r->n == r->cap) {
        long long cap = r->cap ? 2 * r->cap : 256;
        if (r->cap < r->planned && r->planned < cap)
            cap = r->planned;
        double *data = realloc(r->data, sizeof(double) * (size_t)(cap * r->width));
        if (!data) {
            rt_set_error(rt, RT_E_MEMORY, rt->t);
            return NULL;
        }
        r->data = data;
        r->cap = cap;
    }
    return r->data + (r->n++) * r->width;
}

static double *rt_grow(RT *rt, int slot, long long size)
{
    RtMem *m = &rt->mem[slot];
    if (size > m->size) {
        long long cap = m->size ? m->size : 64;
        while (cap < size)
            cap *= 2;
        double *data = realloc(m->data, sizeof(double) * (size_t)cap);
        if (!data) {
            rt_set_error(rt, RT_E_MEMORY, rt->t);
            return m->data;
        }
        memset(data + m->size, 0, sizeof(double) * (size_t)(cap - m->size));
        m->data = data;
        m->size = cap;
    }
    return m->data;
}

/* Recorder.sample over a table of channels {buffer, offset, size} */
static const double *rt_base(RT *rt, int buffer)
{
    switch (buffer) {
    case RT_BUF_S: return rt->S;
    case RT_BUF_X: return rt->X;
    case RT_BUF_XD: return rt->XD;
    case RT_BUF_DU: return rt->DU;
    case RT_BUF_K:
    default: return rt->K;
    }
}

static int rt_sample(RT *rt, RtRows *rows, const int (*channels)[3], int count, double t)
{
    if (rt->error)  /* a block failed computing these values: no row, as in normal mode */
        return 1;
    double *row = rows_add(rt, rows);
    if (!row)
        return 1;
    *row++ = t;
    for (int c = 0; c < count; c++) {
        memcpy(row, rt_base(rt, channels[c][0]) + channels[c][1], sizeof(double) * channels[c][2]);
        row += channels[c][2];
    }
    return 0;
}

/* ---- evaluation (Simulation.f, outputs, indicators) ---------------------------------- */
/* Simulation.f; non-zero when a block failed (normal mode raises there) */
static int rt_f(RT *rt, double t, const double *y, double *dy)
{
    rt->last_time = t;
    rt_copy(rt->X, y, NX);
    dg_cont(rt, t);
    dg_deriv(rt, t);
    if (dy != rt->DX)
        rt_copy(dy, rt->DX, NX);
    return rt->error;
}

static void rt_outputs(RT *rt, double t, const double *y)
{
    if (y != rt->X)
        rt_copy(rt->X, y, NX);
    dg_cont(rt, t);
}

static double rt_tolerance(RT *rt, double t)
{
    return PYMAX(rt->event_tol * PYMAX(1.0, fabs(t)), 4 * rt_ulp(t));
}

/* crossings() of one indicator: +1 rising, -1 falling, 0 */
static signed char rt_cross(double z_prev, double z, int dir)
{
    if (dir >= 0 && z_prev <= 0.0 && z > 0.0)
        return 1;
    if (dir <= 0 && z_prev >= 0.0 && z < 0.0)
        return -1;
    return 0;
}

static int rt_crossings(const double *z_prev, const double *z, signed char *out)
{
    int any = 0;
    for (int i = 0; i < NZ; i++) {
        out[i] = rt_cross(z_prev[i], z[i], ZDIR[i]);
        any |= out[i] != 0;
    }
    return any;
}

static int rt_crossed_any(const double *z_prev, const double *z)
{
    for (int i = 0; i < NZ; i++)
        if (rt_cross(z_prev[i], z[i], ZDIR[i]))
            return 1;
    return 0;
}

/* ---- time events ----------------------------------------------------------------------- */
static int timed_less(const RtTimed *a, const RtTimed *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void heap_push(RT *rt, double t, int block)
{
    if (rt->nheap == rt->capheap) {
        long long cap = rt->capheap ? 2 * rt->capheap : 16;
        RtTimed *heap = realloc(rt->heap, sizeof(RtTimed) * (size_t)cap);
        if (!heap) {
            rt_set_error(rt, RT_E_MEMORY, rt->t);
            return;
        }
        rt->heap = heap;
        rt->capheap = cap;
    }
    long long i = rt->nheap++;
    RtTimed item = {t, rt->seq++, block};
    while (i > 0) {
        long long parent = (i - 1) / 2;
        if (!timed_less(&item, &rt->heap[parent]))
            break;
        rt->heap[i] = rt->heap[parent];
        i = parent;
    }
    rt->heap[i] = item;
}

static RtTimed heap_pop(RT *rt)
{
    RtTimed top = rt->heap[0], last = rt->heap[--rt->nheap];
    long long i = 0, n = rt->nheap;
    for (;;) {
        long long c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && timed_less(&rt->heap[c + 1], &rt->heap[c]))
            c++;
        if (!timed_less(&rt->heap[c], &last))
            break;
        rt->heap[i] = rt->heap[c];
        i = c;
    }
    if (n)
        rt->heap[i] = last;
    return top;
}

/* Simulation.schedule: kept when it lies in (now, stop] */
static void rt_schedule(RT *rt, int block, double later)
{
    if (rt->instant < later && later <= rt->stop)
        heap_push(rt, later, block);
}

/* RunHandle.log: a row (the instant being handled, block, a, b) of the journal */
static void rt_log(RT *rt, int block, double a, double b)
{
    double *row = rows_add(rt, &rt->journal);
    if (!row)
        return;
    row[0] = rt->instant;
    row[1] = block;
    row[2] = a;
    row[3] = b;
}

/* Simulation.next_event: the earliest of stop, the next sample hit, the next time event
   that lies after t */
static double rt_next_event(RT *rt, double t)
{
    double best = rt->stop > t ? rt->stop : INFINITY;
    if (NCLK) {
        double hit = rt->clk_next[0];
        for (int b = 1; b < NCLK; b++)
            hit = PYMIN(hit, rt->clk_next[b]);
        if (hit > t && hit < best)
            best = hit;
    }
    if (rt->nheap && rt->heap[0].t > t && rt->heap[0].t < best)
        best = rt->heap[0].t;
    if (rt->pausing && rt->pause_t > t && rt->pause_t < best)
        best = rt->pause_t;
    return isinf(best) ? rt->stop : best;
}

/* ---- recording --------------------------------------------------------------------------- */
/* Simulation.record: the result row (and the sinks' row), then every signal and state must
   be finite (RT_E_NONFINITE_RECORD: Python names the block) */
static int rt_record(RT *rt, double t)
{
    if (rt_sample(rt, &rt->rec, REC_CHANNELS, rt->edges ? NREC_OWN : NREC, t))
        return 1;
    if (rt->edges) {
        double *index = rows_add(rt, &rt->sink_rows);
        if (!index)
            return 1;
        *index = (double)rt->sink.n;
        if (rt_sample(rt, &rt->sink, SINK_CHANNELS, NSINK, t))
            return 1;
    }
    for (int i = 0; i < NS; i++)
        if (!isfinite(rt->S[i]))
            return rt_set_error(rt, RT_E_NONFINITE_RECORD, t);
    for (int i = 0; i < NX; i++)
        if (!isfinite(rt->X[i]))
            return rt_set_error(rt, RT_E_NONFINITE_RECORD, t);
    return 0;
}

/* Simulation.record_row: a grid row tg snapped to the event at t holds the values after
   the event at its own time (sources at tg, the state moved along its derivative) */
static int rt_record_row(RT *rt, double tg, double t, const double *y)
{
    if (tg != t) {
        if (rt_f(rt, t, y, rt->DX))
            return 1;
        for (int i = 0; i < NX; i++)
            rt->X[i] = y[i] + (tg - t) * rt->DX[i];
        rt_outputs(rt, tg, rt->X);
    }
    return rt_record(rt, tg);
}

/* _Grid: start + k*interval, then the end time */
static double grid_time(RT *rt)
{
    double t = rt->start + (double)rt->grid_k * rt->output_interval;
    if (fabs(t - rt->stop) <= SNAP * PYMAX(1.0, fabs(rt->stop)) || t > rt->stop)
        return rt->stop;
    return t;
}

static int grid_has(RT *rt) { return rt->has_grid && !rt->grid_done; }

static int grid_snapped(RT *rt, double t_event)
{
    return grid_has(rt) && fabs(grid_time(rt) - t_event) <= SNAP * PYMAX(1.0, fabs(t_event));
}

static double grid_pop(RT *rt)
{
    double t = grid_time(rt);
    if (t >= rt->stop)
        rt->grid_done = 1;
    rt->grid_k++;
    return t;
}

/* _Refined: the rows inside the last step (simulation.refine = k): t_old + j (t_hi - t_old)/k
   for j = 1 .. k-1, set up after each step, read as the output grid is read */
static void refined_start(RT *rt, double t_old, double t_hi)
{
    rt->ref_t0 = t_old;
    rt->ref_h = (t_hi - t_old) / rt->refine;
    rt->ref_j = 1;
}

static int rows_has(RT *rt)
{
    return rt->has_grid ? grid_has(rt) : rt->refine > 1 && rt->ref_j < rt->refine;
}

static double rows_time(RT *rt)
{
    return rt->has_grid ? grid_time(rt) : rt->ref_t0 + (double)rt->ref_j * rt->ref_h;
}

static void rows_pop(RT *rt)
{
    if (rt->has_grid)
        grid_pop(rt);
    else
        rt->ref_j++;
}

/* Simulation.fill: the grid times (or the refined rows) and plotting times inside the last
   step, up to t_hi */
static int rt_fill(RT *rt, double t_hi, double t_event)
{
    RtStepper *st = &rt->st;
    for (;;) {
        int has_g = rows_has(rt), has_p = 0;
        double tg = has_g ? rows_time(rt) : 0.0, tp = 0.0;
        if (has_g && (tg > t_hi || (rt->has_grid && grid_snapped(rt, t_event))))
            has_g = 0;
        if (rt->edges) {
            tp = rt->start + (double)rt->plot_k * rt->plot_dt;
            has_p = !(tp >= t_hi);
        }
        if (!has_g && !has_p)
            return 0;
        if (has_p && (!has_g || tp < tg)) {
            rt->plot_k++;
            if (!has_g || !(fabs(tp - tg) <= SNAP * PYMAX(1.0, fabs(tg)))) {
                rk_dense(rt, st, tp, rt->dense_buf);
                rt_outputs(rt, tp, rt->dense_buf);
                if (rt_sample(rt, &rt->sink, SINK_CHANNELS, NSINK, tp))
                    return 1;
            }
            continue;
        }
        rows_pop(rt);
        rk_dense(rt, st, tg, rt->dense_buf);
        rt_outputs(rt, tg, rt->dense_buf);
        if (rt_record(rt, tg))
            return 1;
    }
}

static void rt_skip_plot_points(RT *rt, double t)
{
    if (rt->edges)
        while (rt->start + (double)rt->plot_k * rt->plot_dt <= t)
            rt->plot_k++;
}

static int rt_stopping(RT *rt)
{
    for (int c = 0; c < NSTOP; c++) {
        const double *v = rt_base(rt, STOP_CHANNELS[c][0]) + STOP_CHANNELS[c][1];
        for (int i = 0; i < STOP_CHANNELS[c][2]; i++)
            if (v[i] != 0.0)
                return 1;
    }
    return 0;
}

/* ---- rates of the inputs hybrid blocks watch (engine/rates.py, InputRates) ----------------- */
enum { CURVE_DENSE, CURVE_STEP, CURVE_TANGENT };

/* the state at s along a curve: the last step's dense output (CURVE_STEP: its end value at
   the step's end), or the tangent tan_x + (s - t) tan_dx from the event instant t */
static const double *rt_curve(RT *rt, int curve, double t, double s)
{
    if (curve == CURVE_STEP && s == rt->st.t)
        return rt->st.Y[0];
    if (curve == CURVE_TANGENT) {
        for (int i = 0; i < NX; i++)
            rt->dense_buf[i] = rt->tan_x[i] + (s - t) * rt->tan_dx[i];
        return rt->dense_buf;
    }
    rk_dense(rt, &rt->st, s, rt->dense_buf);
    return rt->dense_buf;
}

/* InputRates.along: du/dt of every watched input at t along a curve describing `span` of
   time, the seven-point central difference on h = min(span, longest)/16; leaves the outputs
   evaluated at t. Samples of input p: [side][k][element], side 0 at t + (k+1)h. */
static void rt_rates_along(RT *rt, double t, int curve, double span)
{
    double h = PYMIN(span, PYMIN(rt->max_step, rt->step)) / RATE_POINTS;
    for (int side = 0; side < 2; side++)
        for (int k = 0; k < 3; k++) {
            double s = side == 0 ? t + (k + 1) * h : t - (k + 1) * h;
            rt_outputs(rt, s, rt_curve(rt, curve, t, s));
            double *sample = rt->rate_samples;
            for (int p = 0; p < NRATE; p++) {
                int n = RATE_CHANNELS[p][2];
                memcpy(sample + (side * 3 + k) * n,
                       rt_base(rt, RATE_CHANNELS[p][0]) + RATE_CHANNELS[p][1],
                       sizeof(double) * n);
                sample += 6 * n;
            }
        }
    double *sample = rt->rate_samples;
    for (int p = 0; p < NRATE; p++) {
        int n = RATE_CHANNELS[p][2];
        double *du = rt->DU + RATE_CHANNELS[p][3];
        for (int i = 0; i < 3 * n; i++)
            sample[i] -= sample[3 * n + i];
        rt_dot_vm(RATE_W, 3, sample, n, du);
        for (int i = 0; i < n; i++)
            du[i] /= h;
        sample += 6 * n;
    }
    rt_outputs(rt, t, rt_curve(rt, curve, t, t));
}

/* ZeroCrossings.at_instant: the indicators at an event instant from the state in X, the
   watched inputs' rates the right derivatives (InputRates.tangent) */
static void rt_at_instant(RT *rt, double t)
{
    if (NRATE) {
        memcpy(rt->tan_x, rt->X, sizeof(double) * NX);
        rt_f(rt, t, rt->tan_x, rt->tan_dx);
        rt_rates_along(rt, t, CURVE_TANGENT, rt->span);
    }
    dg_indicators(rt, t);
}

/* ZeroCrossings.first_crossings: +-1 for crossings located along the last step, +-2 for
   those that jumped across 0 at this instant; a located crossing of a rate keeps the sign
   the root finder saw */
static void rt_first_crossings(RT *rt)
{
    for (int i = 0; i < NZ; i++) {
        signed char crossed = rt_cross(rt->z_prev[i], rt->Z[i], ZDIR[i]);
        if (rt->has_located) {
            double seen = RATE_Z[i] ? rt->z_located[i] : rt->Z[i];
            signed char along = rt_cross(rt->z_prev[i], rt->z_located[i], ZDIR[i]);
            crossed = rt_cross(rt->z_prev[i], seen, ZDIR[i]);
            rt->crossed[i] = crossed == along ? crossed : 2 * crossed;
        } else {
            rt->crossed[i] = 2 * crossed;
        }
    }
    rt->has_located = 0;
}

/* ---- events ------------------------------------------------------------------------------ */
/* Simulation.zeno_guard */
static int rt_zeno_guard(RT *rt, double t)
{
    if (t - rt->last_event < 10 * rt_tolerance(rt, t)) {
        rt->chain++;
        for (int k = 0; k < NH; k++)
            rt->chain_blocks[k] |= rt->involved[k];
        if (rt->chain > rt->max_consecutive_events) {
            rt->error_num[0] = 10 * rt_tolerance(rt, t);
            return rt_set_error(rt, RT_E_ZENO, t);
        }
    } else {
        rt->chain = 0;
        memcpy(rt->chain_blocks, rt->involved, sizeof rt->involved);
    }
    rt->last_event = t;
    return 0;
}

/* ZeroCrossings.settle: the event iteration of the hybrid blocks' handlers at t */
static int rt_settle(RT *rt, double t, int first)
{
    rt_at_instant(rt, t);
    if (first)
        memset(rt->crossed, 0, sizeof rt->crossed);
    else
        rt_first_crossings(rt);
    memset(rt->involved, 0, sizeof rt->involved);
    int round;
    for (round = 0; round < MAX_ROUNDS; round++) {
        memset(rt->changed, 0, sizeof rt->changed);
        dg_crossing(rt, t, rt->crossed, rt->changed);
        int changed = 0;
        for (int k = 0; k < NH; k++) {
            changed |= rt->changed[k];
            rt->involved[k] |= rt->changed[k];
        }
        if (!changed)
            break;
        memcpy(rt->z_before, rt->Z, sizeof(double) * NZ);
        dg_cont(rt, t);
        rt_at_instant(rt, t);
        rt_crossings(rt->z_before, rt->Z, rt->crossed);
        for (int i = 0; i < NZ; i++)  /* jumps, all of them */
            rt->crossed[i] *= 2;
    }
    if (rt->error)
        return 1;
    if (round == MAX_ROUNDS)
        return rt_set_error(rt, RT_E_SETTLE, t);
    memcpy(rt->z_prev, rt->Z, sizeof(double) * NZ);
    int any = 0;
    for (int k = 0; k < NH; k++)
        any |= rt->involved[k];
    if (!first && any) {
        for (int k = 0; k < NH; k++)
            if (rt->involved[k]) {
                double *row = rows_add(rt, &rt->events);
                if (!row)
                    return 1;
                row[0] = t;
                row[1] = k;
            }
        return rt_zeno_guard(rt, t);
    }
    return 0;
}

/* Simulation.at_event: switches, outputs of the due blocks, updates, the event iteration,
   the histories. y, the state at t, is updated in place. */
static int rt_at_event(RT *rt, double t, double *y, int first)
{
    rt->instant = t;
    while (rt->nheap && rt->heap[0].t <= t) {
        RtTimed e = heap_pop(rt);
        dg_event(rt, e.block, t);
    }
    for (int b = 0; b < NCLK; b++)
        rt->due[b] = rt->clk_next[b] == t;
    memcpy(rt->X, y, sizeof(double) * NX);
    dg_hit(rt, t, rt->due);
    if (first) {
        dg_initialize(rt, t);
        memcpy(y, rt->X, sizeof(double) * NX);
        dg_hit(rt, t, rt->due);
    }
    dg_update(rt, t, rt->due);
    for (int b = 0; b < NCLK; b++)
        if (rt->due[b])
            rt->clk_next[b] = rt_series_at(&rt->series[CLK_SERIES[b]], ++rt->clk_j[b]);
    if (NH) {
        if (rt_settle(rt, t, first))
            return 1;
        memcpy(y, rt->X, sizeof(double) * NX);
    }
    if (HISTORY)
        dg_remember(rt, t, RT_REMEMBER_EVENT);
    return rt->error != 0;
}

/* the state at tj inside the last step: its end value at its end, else the dense output */
static const double *rt_step_state(RT *rt, double tj)
{
    RtStepper *st = &rt->st;
    if (tj == st->t)
        return st->Y[0];
    rk_dense(rt, st, tj, rt->dense_buf);
    return rt->dense_buf;
}

/* the history blocks' inputs at tj inside the last step, concatenated into out */
static void rt_history_inputs(RT *rt, double tj, double *out)
{
    rt_outputs(rt, tj, rt_step_state(rt, tj));
    for (int c = 0; c < NHIST; c++) {
        memcpy(out, rt_base(rt, HIST_CHANNELS[c][0]) + HIST_CHANNELS[c][1],
               sizeof(double) * HIST_CHANNELS[c][2]);
        out += HIST_CHANNELS[c][2];
    }
}

static int rt_sample_time(RT *rt, double t, int last)
{
    double *row = rows_add(rt, &rt->hs_times);
    if (!row)
        return 1;
    row[0] = t;
    row[1] = last;
    return 0;
}

/* history_samples.sample_times: the times at which to sample [t0, t1], HS_K per piece, the
   pieces halved (depth first, left first) until the interpolant through each piece's
   samples reproduces the inputs at its midpoints to a quarter of the tolerance */
static int rt_sample_times(RT *rt, double t0, double t1)
{
    const int k = HS_K, m = HIST_WIDTH;
    double rtol = HS_MARGIN * PYMAX(rt->rtol, HS_FLOOR), atol = HS_MARGIN * rt->atol;
    rt->hs_times.n = 0;
    for (int j = 0; j <= k; j++)
        rt_history_inputs(rt, t0 + j * (t1 - t0) / k, rt->hs_values[0] + j * m);
    rt->hs_a[0] = t0;
    rt->hs_b[0] = t1;
    rt->hs_depth[0] = 0;
    int top = 1;
    while (top > 0) {
        top--;
        double a = rt->hs_a[top], b = rt->hs_b[top], h = (b - a) / k;
        int depth = rt->hs_depth[top];
        for (int j = 0; j < k; j++)
            rt_history_inputs(rt, a + (j + 0.5) * h, rt->hs_mids + j * m);
        rt_matmul(HS_W, k, k + 1, rt->hs_values[top], m, rt->hs_guess);
        int close = 1;
        if (depth != HS_MAX_HALVINGS)
            for (int i = 0; i < k * m && close; i++)
                close = fabs(rt->hs_guess[i] - rt->hs_mids[i])
                        <= rtol * fabs(rt->hs_mids[i]) + atol;
        if (close) {
            for (int j = 1; j <= k; j++)
                if (rt_sample_time(rt, j < k ? a + j * h : b, j == k))
                    return 1;
            continue;
        }
        for (int j = 0; j <= k; j++)
            memcpy(rt->hs_both + 2 * j * m, rt->hs_values[top] + j * m, sizeof(double) * m);
        for (int j = 0; j < k; j++)
            memcpy(rt->hs_both + (2 * j + 1) * m, rt->hs_mids + j * m, sizeof(double) * m);
        double middle = 0.5 * (a + b);
        double ends[2][2] = {{middle, b}, {a, middle}};  /* the right half first: popped last */
        for (int half = 0; half < 2; half++) {
            rt->hs_a[top] = ends[half][0];
            rt->hs_b[top] = ends[half][1];
            rt->hs_depth[top] = depth + 1;
            memcpy(rt->hs_values[top], rt->hs_both + (half == 0 ? k * m : 0),
                   sizeof(double) * (k + 1) * m);
            top++;
        }
    }
    return 0;
}

/* Simulation.remember after an accepted step (t its end, or the cut): the histories get
   the step's samples, "piece" at each piece's end, "end" at t */
static void rt_remember_step(RT *rt, double t)
{
    if (rt_sample_times(rt, rt->st.t_old, t))
        return;
    for (long long r = 0; r < rt->hs_times.n; r++) {
        double tj = rt->hs_times.data[2 * r];
        int kind = tj == t ? RT_REMEMBER_END
                 : rt->hs_times.data[2 * r + 1] != 0.0 ? RT_REMEMBER_PIECE : RT_REMEMBER_STEP;
        rt_outputs(rt, tj, rt_step_state(rt, tj));
        dg_remember(rt, tj, kind);
    }
}

/* ---- locating crossings -------------------------------------------------------------------- */
/* ZeroCrossings.z_at: the indicators at t inside the last step, modes frozen */
static void rt_z_at(RT *rt, double t, double *out)
{
    rk_dense(rt, &rt->st, t, rt->dense_buf);
    rt_outputs(rt, t, rt->dense_buf);
    if (NRATE)
        rt_rates_along(rt, t, CURVE_DENSE, rt->span);
    dg_indicators(rt, t);
    memcpy(out, rt->Z, sizeof(double) * NZ);
}

/* Simulation._illinois: shrink [a, b] around the crossing of indicator i; za, zb in/out */
static void rt_illinois(RT *rt, int i, double *pa, double *pb, double *za, double *zb)
{
    double a = *pa, b = *pb, z0 = za[i], fa = z0, fb = zb[i];
    int d = ZDIR[i], side = 0, stale_a = 0, stale_b = 0;
    double tol = rt_tolerance(rt, b);
    for (int k = 0; k < 200; k++) {
        if (b - a <= tol)
            break;
        int secant = fb != fa && k % 8 != 7 && !(stale_a || stale_b);
        double c = secant ? b - fb * (b - a) / (fb - fa) : 0.5 * (a + b);
        if (!(a <= c && c <= b) || !isfinite(c))
            c = 0.5 * (a + b);
        int probe = !(a + 0.5 * tol < c && c < b - 0.5 * tol);
        c = PYMIN(PYMAX(c, a + 0.5 * tol), b - 0.5 * tol);
        rt_z_at(rt, c, rt->z_c);
        double fc = rt->z_c[i];
        if (rt_cross(z0, fc, d)) {
            b = c;
            fb = fc;
            memcpy(zb, rt->z_c, sizeof(double) * NZ);
            stale_b = probe;
            if (side == -1)
                fa *= 0.5;
            side = -1;
        } else {
            a = c;
            fa = fc;
            memcpy(za, rt->z_c, sizeof(double) * NZ);
            stale_a = probe;
            if (side == 1)
                fb *= 0.5;
            side = 1;
        }
    }
    *pa = a;
    *pb = b;
}

/* Simulation.locate: the earliest crossing in the last step; returns t*, the right end of
   a bracket of width <= event_tol around it */
static double rt_locate(RT *rt, double t_hi)
{
    double t_lo = rt->st.t_old;
    memcpy(rt->z_hi, rt->Z, sizeof(double) * NZ);
    for (;;) {
        int pick = -1, first = -1;
        double best = 0.0;
        for (int k = 0; k < NZ; k++) {
            if (!rt_cross(rt->z_prev[k], rt->z_hi[k], ZDIR[k]))
                continue;
            if (first < 0)
                first = k;
            double frac = rt->z_prev[k] / (rt->z_prev[k] - rt->z_hi[k]);
            if (isnan(frac))
                continue;
            if (pick < 0 || frac < best) {
                pick = k;
                best = frac;
            }
        }
        int finite = 0;
        for (int k = 0; k < NZ; k++)
            if (rt_cross(rt->z_prev[k], rt->z_hi[k], ZDIR[k]) &&
                isfinite(rt->z_prev[k] / (rt->z_prev[k] - rt->z_hi[k])))
                finite = 1;
        int i = finite ? pick : first;
        double a = t_lo, b = t_hi;
        memcpy(rt->z_a, rt->z_prev, sizeof(double) * NZ);
        memcpy(rt->z_b, rt->z_hi, sizeof(double) * NZ);
        rt_illinois(rt, i, &a, &b, rt->z_a, rt->z_b);
        if (a > t_lo && rt_crossed_any(rt->z_prev, rt->z_a)) {
            t_hi = a;
            memcpy(rt->z_hi, rt->z_a, sizeof(double) * NZ);
            continue;
        }
        return b;
    }
}

/* ZeroCrossings.step_rates: for the blocks that watch rates, their indicators at the step's
   start again from this step's own dense output (the values a crossing is tested from),
   then the outputs and rates at its end */
static void rt_step_rates(RT *rt)
{
    double t0 = rt->st.t_old, t1 = rt->st.t;
    rt->span = t1 - t0;
    rt_z_at(rt, t0, rt->z_c);
    for (int i = 0; i < NZ; i++)
        if (RATE_Z[i])
            rt->z_prev[i] = rt->z_c[i];
    rt_rates_along(rt, t1, CURVE_STEP, rt->span);
}

/* Simulation.locate_stop: the first time a stop input is non-zero, by bisection */
static double rt_locate_stop(RT *rt, double hi)
{
    double lo = rt->st.t_old, tol = 1e-12 * PYMAX(1.0, fabs(hi));
    while (hi - lo > tol) {
        double mid = 0.5 * (lo + hi);
        rk_dense(rt, &rt->st, mid, rt->dense_buf);
        rt_outputs(rt, mid, rt->dense_buf);
        if (rt_stopping(rt))
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* ---- the run --------------------------------------------------------------------------- */
#ifdef RT_STANDALONE  /* an exported diagram runs without wall-time budgets (no clock) */
static double rt_now(void) { return 0.0; }
#else
static double rt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}
#endif

/* Simulation.segment: integrate up to t_end (SEG_END), a stop (SEG_STOP, rt->t its time) or
   a crossing (SEG_CROSS, rt->t and rt->y the point of the cut); SEG_BUDGET after the
   deadline, to be resumed */
static int rt_segment(RT *rt, double deadline)
{
    RtStepper *st = &rt->st;
    double t_end = rt->t_end;
    while (st->t < t_end) {
        if ((++rt->tick & 15) == 0 && rt_now() > deadline)
            return SEG_BUDGET;
        if (rk_step(rt, st) || rt->error)
            return SEG_ERROR;
        double t_new = st->t, t_hi = t_new;
        for (int i = 0; i < NX; i++)
            if (!isfinite(st->Y[0][i])) {
                rt_set_error(rt, RT_E_NONFINITE_STATE, t_new);
                return SEG_ERROR;
            }
        int cut = 0;
        if (NH) {  /* ZeroCrossings.after_step (a block may have no indicator: an FMU) */
            if (NRATE)
                rt_step_rates(rt);
            else
                rt_outputs(rt, t_new, st->Y[0]);
            dg_indicators(rt, t_new);
            if (rt_crossed_any(rt->z_prev, rt->Z)) {
                double t_star = rt_locate(rt, t_new);
                memcpy(rt->z_located, rt->z_b, sizeof(double) * NZ);
                rt->has_located = 1;
                if (rt->error)
                    return SEG_ERROR;
                cut = !(t_new == t_end && t_end - t_star <= rt_tolerance(rt, t_end));
                if (cut)
                    t_hi = t_star;
                else
                    rt_outputs(rt, t_new, st->Y[0]);
            } else {
                if (ADVANCE) {
                    dg_advance(rt, t_new);
                    dg_indicators(rt, t_new);
                }
                memcpy(rt->z_prev, rt->Z, sizeof(double) * NZ);
                if (rt->step_event) {  /* a step event: an event instant at the step's end */
                    rt->step_event = 0;
                    cut = 1;
                    t_hi = t_new;
                }
            }
        }
        if (HISTORY)
            rt_remember_step(rt, t_hi);
        if (rt->error)
            return SEG_ERROR;
        int fill = rt->has_grid || rt->edges || rt->refine > 1;
        if (rt->refine > 1)
            refined_start(rt, st->t_old, t_hi);
        if (NSTOP) {
            if (cut) {
                rk_dense(rt, st, t_hi, rt->dense_buf);
                rt_outputs(rt, t_hi, rt->dense_buf);
            } else {
                rt_outputs(rt, t_hi, st->Y[0]);
            }
            if (rt_stopping(rt)) {
                double t_stop = rt_locate_stop(rt, t_hi);
                if (rt_fill(rt, t_stop, t_stop))
                    return SEG_ERROR;
                rk_dense(rt, st, t_stop, rt->dense_buf);
                rt_outputs(rt, t_stop, rt->dense_buf);
                rt->t = t_stop;
                return rt_record(rt, t_stop) ? SEG_ERROR : SEG_STOP;
            }
        }
        if (cut) {
            if (fill && rt_fill(rt, t_hi, t_hi))
                return SEG_ERROR;
            rt->progress_t = t_hi;
            rk_dense(rt, st, t_hi, rt->y);
            rt->t = t_hi;
            return SEG_CROSS;
        }
        if (fill && rt_fill(rt, t_new, t_end))
            return SEG_ERROR;
        if (!rt->has_grid && t_new < t_end) {
            rt_outputs(rt, t_new, st->Y[0]);
            if (rt_record(rt, t_new))
                return SEG_ERROR;
            rt_skip_plot_points(rt, t_new);
        }
        if (rt->error)
            return SEG_ERROR;
        rt->progress_t = t_new;
    }
    return SEG_END;
}

/* Simulation.run, resumable: RT_MORE when the budget ran out, else the outcome */
static int rt_loop(RT *rt, double seconds)
{
    double deadline = rt_now() + seconds;
    if (rt->phase == PH_DONE)
        return RT_DONE;
    if (rt->phase == PH_START) {
        memcpy(rt->XD, rt->XD0, sizeof(double) * NXD);
        if (NS)  /* what a block not run yet shows */
            memset(rt->S, 0, sizeof(double) * NS);
        memcpy(rt->y, rt->X0, sizeof(double) * NX);
        dg_const(rt, rt->start);
        rt->t = rt->start;
        if (rt_at_event(rt, rt->t, rt->y, 1))
            return RT_FAILED;
        if (rt_record(rt, rt->t))
            return RT_FAILED;
        if (rt->has_grid)
            grid_pop(rt);
        rt->phase = PH_OUTER;
        if (NSTOP && rt_stopping(rt)) {
            rt->phase = PH_DONE;
            return RT_DONE;
        }
    }
    for (;;) {
        if (rt->phase == PH_OUTER) {
            if (!(rt->t < rt->stop)) {
                rt->phase = PH_DONE;
                return RT_DONE;
            }
            if (rt->pausing && rt->t >= rt->pause_t)
                return RT_PAUSED;
            rt->t_end = rt_next_event(rt, rt->t);
            if (!rt->has_stepper) {
                memset(&rt->st, 0, sizeof rt->st);
                rt->has_stepper = 1;
            }
            rk_restart(rt, &rt->st, rt->t, rt->y, rt->t_end);
            rt->phase = PH_SEGMENT;
        }
        int outcome = rt_segment(rt, deadline);
        if (outcome == SEG_BUDGET)
            return RT_MORE;
        if (outcome == SEG_ERROR)
            return RT_FAILED;
        if (outcome == SEG_STOP) {
            rt->phase = PH_DONE;
            return RT_DONE;
        }
        if (outcome == SEG_END) {
            rt->t = rt->t_end;
            memcpy(rt->y, rt->st.Y[0], sizeof(double) * NX);
        }
        double t = rt->t;
        if (rt->edges) {  /* Simulation.record_left */
            rt_outputs(rt, t, rt->y);
            if (rt_sample(rt, &rt->sink, SINK_CHANNELS, NSINK, t))
                return RT_FAILED;
        }
        if (rt_at_event(rt, t, rt->y, 0))
            return RT_FAILED;
        rt_skip_plot_points(rt, t);
        if (!rt->has_grid) {
            if (rt_record(rt, t))
                return RT_FAILED;
        } else {
            while (grid_has(rt) && grid_snapped(rt, t))
                if (rt_record_row(rt, grid_pop(rt), t, rt->y))
                    return RT_FAILED;
        }
        rt->progress_t = t;
        rt->phase = PH_OUTER;
        if (NSTOP && rt_stopping(rt)) {
            rt->phase = PH_DONE;
            return RT_DONE;
        }
    }
}
