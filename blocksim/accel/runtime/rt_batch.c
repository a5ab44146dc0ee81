/* Batches: many runs of one compiled diagram in one call, each run with its own values, its
   own steps, events and failure (no lockstep), the runs shared out among C threads.

   Every run of a batch is an RT of its own with buffers of its own (signals, states,
   indicators, watched inputs' rates, workspace), so the threads share nothing they write. What a run reads comes
   from Python's matrices: row i of the parameters, initial states, settings, exact series
   and first sample hits (a stride of 0: one row for every run), its data arrays and its
   time events. A thread takes the next run not started, runs it to its end in chunks of
   BATCH_CHUNK seconds (so that `rt_batch_stop` is seen within one, and a run over the
   per-run limit `rt_batch_limit` set is ended RT_TIMED_OUT) and takes the next.
   `rt_batch_start` returns at once: Python prepares the next batch while this one runs
   and waits with `rt_batch_wait` (ctypes releases the GIL in both). The threads are made
   by the first start that needs them and wait between batches for the next start (a
   sweep's batches reuse them: no thread made per batch); `rt_batch_free` ends them. */
#include <pthread.h>

#define BATCH_CHUNK 0.05

typedef struct {
    long long cap, n;               /* runs allocated, runs of the current batch */
    long long nw;                   /* the workspace's size */
    RT **rt;                        /* cap runs, created when first used */
    double **own;                   /* each run's own buffers (S, X, DX, XD, Z, DU, W) */
    int *status;                    /* RT_MORE until the run ends: RT_DONE, RT_FAILED or
                                       RT_TIMED_OUT */
    double limit;                   /* seconds a run may take (0: no limit) */
    double *seconds;                /* each run's wall time and its thread's CPU time */
    /* the runs' values (set by rt_batch_setup, read by the threads) */
    const void *arrays[RT_NBATCH];
    long long strides[RT_NBATCH];
    const double *const *data;      /* n x NDATA */
    const long long *ndata;
    const double *event_t;
    const int *event_block;
    const long long *event_off;     /* n + 1 */
    /* the threads: `made` of them alive, waiting on `go` for the next batch (`batch`
       counts the starts); the first `active` of them run it, `left` not yet finished */
    pthread_t *threads;
    int made, active, left, stop, quit;
    long long batch, next;
    pthread_mutex_t lock;
    pthread_cond_t finished, go;
} RtBatch;

typedef struct {
    RtBatch *b;
    int k;  /* the thread's number */
} BatchThread;

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

RtBatch *rt_batch_new(long long cap, long long nw)
{
    RtBatch *b = calloc(1, sizeof(RtBatch));
    if (!b)
        return NULL;
    b->cap = cap;
    b->nw = nw;
    b->rt = calloc((size_t)cap, sizeof(RT *));
    b->own = calloc((size_t)cap, sizeof(double *));
    b->status = calloc((size_t)cap, sizeof(int));
    b->seconds = calloc((size_t)(2 * cap), sizeof(double));
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->finished, NULL);
    pthread_cond_init(&b->go, NULL);
    if (!b->rt || !b->own || !b->status || !b->seconds) {
        free(b->rt);
        free(b->own);
        free(b->status);
        free(b->seconds);
        free(b);
        return NULL;
    }
    return b;
}

/* the threads end (after their current chunk, if a batch runs) and are joined, then the
   runs and their buffers freed */
void rt_batch_free(RtBatch *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&b->lock);
    b->quit = 1;
    __atomic_store_n(&b->stop, 1, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&b->go);
    pthread_mutex_unlock(&b->lock);
    for (int k = 0; k < b->made; k++)
        pthread_join(b->threads[k], NULL);
    for (long long i = 0; i < b->cap; i++) {
        rt_free(b->rt[i]);
        free(b->own[i]);
    }
    free(b->rt);
    free(b->own);
    free(b->status);
    free(b->seconds);
    free(b->threads);
    pthread_mutex_destroy(&b->lock);
    pthread_cond_destroy(&b->finished);
    pthread_cond_destroy(&b->go);
    free(b);
}

/* the values of the batch's n runs (see the file's comment): the arrays of boundary.BATCH
   (P, K, W0, X0, XD0, settings: doubles; series, first hits: long longs), each with its
   stride in elements;
   data: n x NDATA arrays and their lengths; time events: run i's are event_off[i] to
   event_off[i + 1]. Python keeps them alive until the batch is read. */
void rt_batch_setup(RtBatch *b, long long n, const void *const *arrays, const long long *strides,
                    const double *const *data, const long long *ndata, const double *event_t,
                    const int *event_block, const long long *event_off)
{
    b->n = n;
    for (int k = 0; k < RT_NBATCH; k++) {
        b->arrays[k] = arrays[k];
        b->strides[k] = strides[k];
    }
    b->data = data;
    b->ndata = ndata;
    b->event_t = event_t;
    b->event_block = event_block;
    b->event_off = event_off;
    for (long long i = 0; i < n; i++)
        b->status[i] = RT_MORE;
}

#define ROW(type, k, i) ((const type *)b->arrays[k] + (i) * b->strides[k])

/* run i bound to its own buffers and configured with its values; 0 without memory */
static int batch_begin(RtBatch *b, long long i)
{
    long long own = NS + 2 * (long long)NX + NXD + NZ + NDU + b->nw;
    if (!b->rt[i]) {
        b->rt[i] = rt_create();
        b->own[i] = calloc((size_t)DIM(own), sizeof(double));
        if (!b->rt[i] || !b->own[i])
            return 0;
    } else {
        rt_reset(b->rt[i]);
    }
    RT *rt = b->rt[i];
    double *S = b->own[i], *X = S + NS, *DX = X + NX, *XD = DX + NX, *Z = XD + NXD;
    double *DU = Z + NZ, *W = DU + NDU;
    memset(S, 0, sizeof(double) * (size_t)(own - b->nw));
    memcpy(W, b->arrays[RT_BATCH_W0], sizeof(double) * (size_t)b->nw);
    double *buffers[RT_NBIND];
    buffers[RT_B_S] = S;
    buffers[RT_B_X] = X;
    buffers[RT_B_DX] = DX;
    buffers[RT_B_XD] = XD;
    buffers[RT_B_Z] = Z;
    buffers[RT_B_W] = W;
    buffers[RT_B_P] = (double *)ROW(double, RT_BATCH_P, i);
    buffers[RT_B_K] = (double *)b->arrays[RT_BATCH_K];
    buffers[RT_B_X0] = (double *)ROW(double, RT_BATCH_X0, i);
    buffers[RT_B_XD0] = (double *)ROW(double, RT_BATCH_XD0, i);
    buffers[RT_B_DU] = DU;
    rt_bind(rt, buffers, (const double **)b->data + i * NDATA, b->ndata + i * NDATA);
    memcpy(X, ROW(double, RT_BATCH_X0, i), sizeof(double) * NX);
    long long e0 = b->event_off[i];
    rt_configure(rt, ROW(double, RT_BATCH_SETTINGS, i), ROW(long long, RT_BATCH_SERIES, i),
                 ROW(long long, RT_BATCH_CLK, i), b->event_t + e0, b->event_block + e0,
                 b->event_off[i + 1] - e0);
    return 1;
}

/* the runs of the current batch not started, taken one at a time until none is left or
   the batch is stopped */
static void batch_runs(RtBatch *b)
{
    for (;;) {
        if (__atomic_load_n(&b->stop, __ATOMIC_RELAXED))
            return;
        long long i = __atomic_fetch_add(&b->next, 1, __ATOMIC_RELAXED);
        if (i >= b->n)
            return;
        double wall = rt_now(), cpu = thread_cpu();
        int status = batch_begin(b, i) ? RT_MORE : RT_FAILED;
        while (status == RT_MORE && !__atomic_load_n(&b->stop, __ATOMIC_RELAXED)) {
            status = rt_run(b->rt[i], BATCH_CHUNK);
            if (status == RT_MORE && b->limit > 0 && rt_now() - wall > b->limit)
                status = RT_TIMED_OUT;
        }
        b->seconds[2 * i] = rt_now() - wall;
        b->seconds[2 * i + 1] = thread_cpu() - cpu;
        b->status[i] = status;
    }
}

/* thread k: runs each batch it is active in, then waits for the next, until freed */
static void *batch_thread(void *arg)
{
    BatchThread *self = arg;
    RtBatch *b = self->b;
    int k = self->k;
    free(self);
    long long seen = 0;
    pthread_mutex_lock(&b->lock);
    for (;;) {
        while (!b->quit && (b->batch == seen || k >= b->active)) {
            seen = b->batch;  /* a batch this thread is not in is skipped */
            pthread_cond_wait(&b->go, &b->lock);
        }
        if (b->quit)
            break;
        seen = b->batch;
        pthread_mutex_unlock(&b->lock);
        batch_runs(b);
        pthread_mutex_lock(&b->lock);
        if (--b->left == 0)
            pthread_cond_broadcast(&b->finished);
    }
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

/* start the batch's runs on `nthreads` threads (made when fewer are alive) and return; 0
   when no thread could be made (the runs are then not run) */
int rt_batch_start(RtBatch *b, int nthreads)
{
    if (nthreads > b->made) {
        pthread_t *threads = realloc(b->threads, (size_t)nthreads * sizeof(pthread_t));
        if (threads)
            b->threads = threads;
        for (int k = b->made; threads && k < nthreads; k++) {
            BatchThread *arg = malloc(sizeof(BatchThread));
            if (!arg)
                break;
            arg->b = b;
            arg->k = k;
            if (pthread_create(&b->threads[k], NULL, batch_thread, arg) != 0) {
                free(arg);
                break;
            }
            b->made++;
        }
    }
    if (b->made == 0)
        return 0;
    pthread_mutex_lock(&b->lock);
    b->next = 0;
    __atomic_store_n(&b->stop, 0, __ATOMIC_RELAXED);
    b->active = b->left = nthreads < b->made ? nthreads : b->made;
    b->batch++;
    pthread_cond_broadcast(&b->go);
    pthread_mutex_unlock(&b->lock);
    return 1;
}

/* the wall seconds each run of the following batches may take (0: no limit) */
void rt_batch_limit(RtBatch *b, double seconds)
{
    b->limit = seconds;
}

/* wait up to `seconds` for the batch's threads; 1 when they have all finished it */
int rt_batch_wait(RtBatch *b, double seconds)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    double end = until.tv_sec + 1e-9 * until.tv_nsec + seconds;
    until.tv_sec = (time_t)end;
    until.tv_nsec = (long)((end - (double)until.tv_sec) * 1e9);
    pthread_mutex_lock(&b->lock);
    while (b->left > 0)
        if (pthread_cond_timedwait(&b->finished, &b->lock, &until) != 0)
            break;
    int done = b->left == 0;
    pthread_mutex_unlock(&b->lock);
    return done;
}

/* the threads end after their current chunk: the runs not finished stay RT_MORE */
void rt_batch_stop(RtBatch *b) { __atomic_store_n(&b->stop, 1, __ATOMIC_RELAXED); }

/* run i of the batch (for rt_rows and rt_info: the rows of a run whose results are kept);
   NULL when it has not run */
RT *rt_batch_run(RtBatch *b, long long i) { return i < b->n ? b->rt[i] : NULL; }

/* per run, the numbers of boundary.OUTCOMES: status (RT_MORE: not run to its end), result
   rows, events, accepted and rejected steps, evaluations, wall and CPU seconds; out is
   n x RT_NOUT */
void rt_batch_outcomes(RtBatch *b, double *out)
{
    for (long long i = 0; i < b->n; i++) {
        double *o = out + RT_NOUT * i;
        RT *rt = b->rt[i];
        int ran = rt && b->status[i] == RT_DONE;
        int counted = ran || (rt && b->status[i] == RT_TIMED_OUT);  /* its steps so far */
        o[RT_OUT_STATUS] = b->status[i];
        o[RT_OUT_ROWS] = ran ? (double)rt->rec.n : 0.0;
        o[RT_OUT_EVENTS] = ran ? (double)rt->events.n : 0.0;
        o[RT_OUT_NSTEPS] = counted ? (double)rt->st.nsteps : 0.0;
        o[RT_OUT_NREJECTED] = counted ? (double)rt->st.nrejected : 0.0;
        o[RT_OUT_NFEV] = counted ? (double)rt->st.nfev : 0.0;
        o[RT_OUT_WALL] = b->seconds[2 * i];
        o[RT_OUT_CPU] = b->seconds[2 * i + 1];
    }
}

/* columns `cols` (ncols of them) of the result rows of the runs that ended (RT_DONE), one
   after another in run order, column by column: column cols[k] of all `total` rows is
   out + k * total */
void rt_batch_columns(RtBatch *b, int ncols, const int *cols, long long total, double *out)
{
    long long row = 0;
    for (long long i = 0; i < b->n; i++) {
        RT *rt = b->rt[i];
        if (!rt || b->status[i] != RT_DONE)
            continue;
        long long rows = rt->rec.n, width = rt->rec.width;
        for (int k = 0; k < ncols; k++) {
            const double *src = rt->rec.data + cols[k];
            double *dst = out + k * total + row;
            for (long long r = 0; r < rows; r++)
                dst[r] = src[r * width];
        }
        row += rows;
    }
}
