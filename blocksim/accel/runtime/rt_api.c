/* The functions Python calls through ctypes (blocksim/accel/runner.py): create a run, bind
   the model's buffers, configure it, run it in chunks, read its rows and outcome; and the
   compiled evaluations alone (f, outputs, indicators) for scipy's stiff solvers. */

RT_API RT *rt_create(void)
{
    RT *rt = calloc(1, sizeof(RT));
    if (!rt)
        return NULL;
    rt->sink.width = 1 + SINK_WIDTH;
    rt->sink_rows.width = 1;
    rt->events.width = 2;
    rt->journal.width = 4;
    rt->hs_times.width = 2;
    rt->last_event = -INFINITY;
    return rt;
}

/* ready for another run: every state of the last one dropped, its allocations kept */
RT_API void rt_reset(RT *rt)
{
    RtRows rows[6] = {rt->rec, rt->sink, rt->sink_rows, rt->events, rt->hs_times, rt->journal};
    RtTimed *heap = rt->heap;
    long long capheap = rt->capheap;
    dg_release(rt, 0);
    for (int m = 0; m < NMEM; m++)
        free(rt->mem[m].data);
    memset(rt, 0, sizeof(RT));
    rt->rec = rows[0];
    rt->sink = rows[1];
    rt->sink_rows = rows[2];
    rt->events = rows[3];
    rt->hs_times = rows[4];
    rt->journal = rows[5];
    rt->rec.n = rt->sink.n = rt->sink_rows.n = rt->events.n = rt->hs_times.n = 0;
    rt->journal.n = 0;
    rt->heap = heap;
    rt->capheap = capheap;
    rt->last_event = -INFINITY;
}

RT_API void rt_free(RT *rt)
{
    if (!rt)
        return;
    free(rt->rec.data);
    free(rt->sink.data);
    free(rt->sink_rows.data);
    free(rt->events.data);
    free(rt->hs_times.data);
    free(rt->journal.data);
    free(rt->heap);
    dg_release(rt, 0);
    for (int m = 0; m < NMEM; m++)
        free(rt->mem[m].data);
    free(rt);
}

/* buffers in the order of boundary.BIND (the model's signals, xbuf, dxbuf, xdbuf, zbuf,
   the workspace, params, constants, x0, xd0, dubuf); data: NDATA arrays and their lengths */
RT_API void rt_bind(RT *rt, double **b, const double **data, const long long *ndata)
{
    rt->S = b[RT_B_S];
    rt->X = b[RT_B_X];
    rt->DX = b[RT_B_DX];
    rt->XD = b[RT_B_XD];
    rt->Z = b[RT_B_Z];
    rt->W = b[RT_B_W];
    rt->P = b[RT_B_P];
    rt->K = b[RT_B_K];
    rt->X0 = b[RT_B_X0];
    rt->XD0 = b[RT_B_XD0];
    rt->DU = b[RT_B_DU];
    for (int k = 0; k < NDATA; k++) {
        rt->data[k] = data[k];
        rt->ndata[k] = ndata[k];
    }
}

/* settings: the row of boundary.SETTINGS (output_interval 0: none; refine: rows per step, 1
   with an output grid; the rows the recording is planned for); series: NSER rows of (A high, A low, C high, C low, L, E); clk_j:
   the first hit of each discrete block (Python's _Clock); the time events announced before
   the run, sorted */
RT_API void rt_configure(RT *rt, const double *s, const long long *series, const long long *clk_j,
                  const double *event_t, const int *event_block, long long nevents)
{
    rt->start = s[RT_S_START];
    rt->stop = s[RT_S_STOP];
    rt->rtol = s[RT_S_RTOL];
    rt->atol = s[RT_S_ATOL];
    rt->max_step = s[RT_S_MAX_STEP];
    rt->step = s[RT_S_STEP];
    rt->output_interval = s[RT_S_OUTPUT_INTERVAL];
    rt->has_grid = s[RT_S_OUTPUT_INTERVAL] > 0.0;
    rt->event_tol = s[RT_S_EVENT_TOL];
    rt->max_consecutive_events = (long long)s[RT_S_MAX_CONSECUTIVE_EVENTS];
    rt->max_steps = (long long)s[RT_S_MAX_STEPS];
    rt->edges = s[RT_S_EDGES] != 0.0;
    rt->refine = rt->has_grid ? 1 : (int)s[RT_S_REFINE];
    rt->rec.width = 1 + (rt->edges ? REC_WIDTH_OWN : REC_WIDTH);
    rt->rec.planned = (long long)s[RT_S_PLANNED_ROWS];
    rt->plot_dt = (rt->stop - rt->start) / PLOT_POINTS;
    rt->plot_k = 1;
    for (int k = 0; k < NSER; k++) {
        const long long *r = series + 6 * k;
        rt->series[k].A = (i128)r[0] * ((i128)1 << 64) + (i128)(unsigned long long)r[1];
        rt->series[k].C = (i128)r[2] * ((i128)1 << 64) + (i128)(unsigned long long)r[3];
        rt->series[k].L = r[4];
        rt->series[k].E = (int)r[5];
    }
    for (int b = 0; b < NCLK; b++) {
        rt->clk_j[b] = clk_j[b];
        rt->clk_next[b] = rt_series_at(&rt->series[CLK_SERIES[b]], clk_j[b]);
    }
    rt->instant = -INFINITY;
    rt->span = PYMIN(rt->max_step, rt->step);  /* ZeroCrossings.span: min(max_step, step) */
    for (long long e = 0; e < nevents; e++)
        heap_push(rt, event_t[e], event_block[e]);
}

/* rt_reset, rt_bind and rt_configure in one call: a model's next run from Python (one
   crossing of the boundary instead of three) */
RT_API void rt_again(RT *rt, double **b, const double **data, const long long *ndata,
                     const double *s, const long long *series, const long long *clk_j,
                     const double *event_t, const int *event_block, long long nevents)
{
    rt_reset(rt);
    rt_bind(rt, b, data, ndata);
    rt_configure(rt, s, series, clk_j, event_t, event_block, nevents);
}

RT_API int rt_run(RT *rt, double seconds)
{
    int status = rt_loop(rt, seconds);
    return rt->error != RT_E_NONE ? RT_FAILED : status;
}

/* the rows of boundary.ROWS: results, the sinks' own rows, the indices of result rows
   among those, events (t, hybrid block), the journal (t, block, a, b) */
RT_API long long rt_rows(RT *rt, int which, double **data)
{
    RtRows *r;
    switch (which) {
    case RT_ROWS_SINKS: r = &rt->sink; break;
    case RT_ROWS_SINK_ROWS: r = &rt->sink_rows; break;
    case RT_ROWS_EVENTS: r = &rt->events; break;
    case RT_ROWS_JOURNAL: r = &rt->journal; break;
    case RT_ROWS_RESULTS:
    default: r = &rt->rec; break;
    }
    *data = r->data;
    return r->n;
}

/* info: the numbers of boundary.INFO; the stepper's y goes to y */
RT_API void rt_info(RT *rt, double *out, double *y)
{
    out[RT_INFO_NSTEPS] = (double)rt->st.nsteps;
    out[RT_INFO_NREJECTED] = (double)rt->st.nrejected;
    out[RT_INFO_NFEV] = (double)rt->st.nfev;
    out[RT_INFO_ERROR] = rt->error;
    out[RT_INFO_ERROR_T] = rt->error_t;
    out[RT_INFO_ERROR_BLOCK] = rt->error_block;
    out[RT_INFO_ERROR_NUM0] = rt->error_num[0];
    out[RT_INFO_ERROR_NUM1] = rt->error_num[1];
    out[RT_INFO_ERROR_NUM2] = rt->error_num[2];
    out[RT_INFO_ERROR_NUM3] = rt->error_num[3];
    out[RT_INFO_PROGRESS_T] = rt->progress_t;
    out[RT_INFO_LAST_TIME] = rt->last_time;
    out[RT_INFO_STEPPER_T] = rt->has_stepper ? rt->st.t : rt->start;
    memcpy(y, rt->has_stepper ? rt->st.Y[0] : rt->y, sizeof(double) * NX);
}

/* the blocks involved in a failed event iteration or a Zeno chain (boundary.INVOLVED) */
RT_API void rt_blocks(RT *rt, int which, char *out)
{
    switch (which) {
    case RT_INVOLVED_ZENO: memcpy(out, rt->chain_blocks, NH); break;
    case RT_INVOLVED_ITERATION:
    default: memcpy(out, rt->involved, NH); break;
    }
}

/* a block's failure: its message and the method that failed */
RT_API const char *rt_error_text(RT *rt) { return rt->error_text; }

RT_API const char *rt_error_method(RT *rt) { return rt->error_method ? rt->error_method : ""; }

/* The evaluations scipy's steppers call, each returning the run's error status (non-zero
   once a block failed: normal mode raises there) */
RT_API int rt_eval_f(RT *rt, double t, const double *y, double *dy) { return rt_f(rt, t, y, dy); }

RT_API int rt_eval_outputs(RT *rt, double t, const double *y)
{
    rt_outputs(rt, t, y);
    return rt->error;
}

RT_API int rt_eval_indicators(RT *rt, double t)
{
    dg_indicators(rt, t);
    return rt->error;
}

/* the histories' sample at t (scipy's steppers: the simulator says when to land, so what
   they schedule is dropped) */
RT_API int rt_eval_remember(RT *rt, double t, int kind)
{
    long long n = rt->nheap;
    dg_remember(rt, t, kind);
    rt->nheap = n;
    return rt->error;
}
