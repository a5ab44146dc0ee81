/* blocksim accelerated mode: the run-time state and what block lowerings may use.
 *
 * The generated source of a diagram defines the sizes and tables first (NS signals, NX
 * continuous states, NXD discrete states, NZ indicators, NH blocks with indicators, NCLK
 * discrete blocks, NSER exact time series, NDATA data arrays, NMEM growable memories, the
 * solver's tableau RK_*), then includes this header, then the blocks' functions, then the
 * stepper and the loop (rt_stepper.c, rt_loop.c, rt_api.c): one translation unit, so the
 * compiler can inline the diagram's functions into the solver's stages.
 *
 * Every buffer is the model's own numpy array (signals, xbuf, dxbuf, xdbuf, zbuf), so what
 * the compiled code leaves behind is what the interpreted blocks and the diagnosis of a
 * fault read. Parameters are run-time arguments (P, one flat array): changing one never
 * recompiles. Compiled with IEEE semantics (-O2 -ffp-contract=off, no -ffast-math), the
 * arithmetic is numpy's up to the order of sums (BLAS) and the last bit of libm.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DIM(n) ((n) > 0 ? (n) : 1)
/* The functions Python calls through ctypes (rt_api.c, rt_set_*) are the library's symbols;
   an exported diagram (blocksim export) defines RT_API as static: its runtime is private to
   its one translation unit, so two exported diagrams link into one program. */
#ifndef RT_API
#define RT_API
#endif
/* Python's min(a, b) and max(a, b): the first argument unless the second is smaller
   (larger); NaN handling as Python's, which the steppers mirror */
#define PYMIN(a, b) ((b) < (a) ? (b) : (a))
#define PYMAX(a, b) ((b) > (a) ? (b) : (a))

typedef __int128 i128;

/* Exact times (block.exact_time): value j is (A + j*C)/L * 2^E rounded once to a double,
   as float(offset + j*period) of Python's fractions; sample hits, pulse edges. */
typedef struct { i128 A, C; long long L; int E; } RtSeries;

typedef struct { double t; long long seq; int block; } RtTimed;

/* Rows of doubles that grow by doubling (recorded results, events); `planned`: the count
   to grow to before growing past it (0: none; rows_add). */
typedef struct { double *data; long long n, cap, planned; int width; } RtRows;

/* Memory a block grows at run time (a history), freed with the run. */
typedef struct { double *data; long long size; } RtMem;

typedef struct {
    double t, t_old, t_bound, h_last;
    int has_last;                       /* an accepted step since the last (re)start */
    double Y[1 + RK_M][DIM(NX)];        /* Y[0] = y, Y[1 + s] = k_s */
    double y_new[DIM(NX)], y_old[DIM(NX)], arg[DIM(NX)];
    double F[3 + RK_ND][DIM(NX)];       /* dense-output coefficients of the last step */
    int F_ready;
    long long nfev, nsteps, nrejected;
    double tmp[DIM(NX)];
#if RK_KIND == RK_KIND_FIXED
    long long k;                        /* index of the last grid point at or before t */
    double tol;
    int f1_ready;                       /* f1 holds f(t, y) at the current point */
    double f1[DIM(NX)];
#else
    double coef[RK_M][1 + RK_M];        /* [1 | h * A] of the current step */
    double h;                           /* proposed next step size */
    int h_set, f0;                      /* f0: where f(t, y) is, see rt_stepper.c */
    double reach;
    double err[DIM(NX)], err3[DIM(NX)], scale[DIM(NX)], abs_y[DIM(NX)], abs_new[DIM(NX)];
    int stiff_count, nonstiff_count;
    double h_lambda, needed;            /* of a stiffness failure */
#endif
} RtStepper;

typedef struct RT RT;
struct RT {
    /* the model's buffers (numpy arrays shared with Python) and the run's arguments */
    double *S, *X, *DX, *XD, *Z, *W, *DU;
    const double *P, *K, *X0, *XD0;
    const double *data[DIM(NDATA)];
    long long ndata[DIM(NDATA)];
    RtMem mem[DIM(NMEM)];
    RtSeries series[DIM(NSER)];
    /* settings */
    double start, stop, rtol, atol, max_step, step, output_interval, event_tol;
    long long max_consecutive_events, max_steps;
    int edges, has_grid;
    /* the loop; an exported diagram's pause (blocksim export): with `pausing`, the loop
       stops at pause_t as at an event and returns RT_PAUSED (rt_loop.c) */
    int phase, has_stepper, pausing;
    double pause_t;
    double t, t_end, instant, last_time, progress_t;
    double y[DIM(NX)];
    RtStepper st;
    long long tick;
    /* discrete blocks: hit j of block b is series[CLK_SERIES[b]] at j */
    long long clk_j[DIM(NCLK)];
    double clk_next[DIM(NCLK)];
    char due[DIM(NCLK)];
    /* time events (a heap on (t, seq)) */
    RtTimed *heap;
    long long nheap, capheap, seq;
    /* zero crossings */
    double z_prev[DIM(NZ)], z_before[DIM(NZ)], z_hi[DIM(NZ)], z_a[DIM(NZ)], z_b[DIM(NZ)],
           z_c[DIM(NZ)];
    signed char crossed[DIM(NZ)];
    /* rates of watched inputs (engine/rates.py, hybrid.py): the last step's length, the
       indicators where the last crossing was located (has_located), the stencil's samples,
       the tangent's state and slope */
    double span, z_located[DIM(NZ)];
    int has_located;
    double rate_samples[2 * 3 * DIM(RATE_WIDTH)], tan_x[DIM(NX)], tan_dx[DIM(NX)];
    /* histories (engine/history_samples.py): the stack of pieces to check (their ends,
       depths and samples), the midpoints, the interpolant's guesses, the times to sample */
    double hs_a[HS_MAX_HALVINGS + 2], hs_b[HS_MAX_HALVINGS + 2];
    int hs_depth[HS_MAX_HALVINGS + 2];
    double hs_values[HS_MAX_HALVINGS + 2][(HS_K + 1) * DIM(HIST_WIDTH)];
    double hs_mids[HS_K * DIM(HIST_WIDTH)], hs_guess[HS_K * DIM(HIST_WIDTH)];
    double hs_both[(2 * HS_K + 1) * DIM(HIST_WIDTH)];
    RtRows hs_times;
    char changed[DIM(NH)], involved[DIM(NH)], chain_blocks[DIM(NH)];
    int step_event;                     /* an advance asked for an event at the step's end */
    long long chain;
    double last_event;
    /* recording */
    RtRows rec, sink, sink_rows, events, journal;
    long long grid_k, plot_k;
    int grid_done;
    int refine, ref_j;                  /* rows per step; the next refined row (rt_fill) */
    double ref_t0, ref_h;
    double plot_dt;
    double dense_buf[DIM(NX)];
    /* the outcome: a status (rt_api.c) and its details */
    int error;
    double error_t, error_num[4];
    int error_block;
    const char *error_method;
    char error_text[512];
};

/* For lowerings: schedule a time event of block `self` at `t_later` (kept when it lies in
   (now, stop], as Simulation.schedule), end the run with a block's own error, grow memory. */
static void rt_schedule(RT *rt, int block, double t_later);
static void rt_log(RT *rt, int block, double a, double b);
static void rt_fail(RT *rt, int block, double t, const char *method, const char *format, ...);
static double *rt_grow(RT *rt, int slot, long long size);
static double rt_series_at(const RtSeries *s, long long j);

/* numpy.clip(v, lo, hi) of one element (NaN stays NaN) */
static inline double rt_clip(double v, double lo, double hi)
{
    if (isnan(v))
        return v;
    double m = v > lo ? v : lo;
    return m < hi ? m : hi;
}

/* numpy.minimum and numpy.maximum of two elements: NaN wins, a tie gives the second */
static inline double rt_minimum(double a, double b) { return (a < b || isnan(a)) ? a : b; }
static inline double rt_maximum(double a, double b) { return (a > b || isnan(a)) ? a : b; }

/* numpy.sign of one element (sign(-0.0) is 0.0, NaN stays NaN) */
static inline double rt_sign(double v)
{
    return v > 0.0 ? 1.0 : v < 0.0 ? -1.0 : v == 0.0 ? 0.0 : v;
}

/* numpy.searchsorted(a, v, side="right") and side="left" on n sorted doubles: the number of
   elements <= v (< v), NaN sorting after every number as in numpy */
#define RT_LESS(a, b) ((a) < (b) || ((b) != (b) && (a) == (a)))
static inline int rt_search_right(const double *a, int n, double v)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (RT_LESS(v, a[mid]))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static inline int rt_search_left(const double *a, int n, double v)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (RT_LESS(a[mid], v))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* In a block's code (codegen declares self_, method_, mem0_ and ser0_ there): a time event
   of this block; the run's end with this block's error, a printf format and its values (the
   message normal mode gives); a row of the journal; growable memory slot k of at least n doubles; time j of the
   block's exact series k (Lowering.series: offset + j*period rounded once, as
   block.exact_time sums them); in "advance", an event instant at the end of the step. */
#define SCHEDULE(time) rt_schedule(rt, self_, (time))
/* a row (instant, block, a, b) of the run's journal (block.RunHandle.log) */
#define LOG(a, b) rt_log(rt, self_, (a), (b))
#define FAIL(...) rt_fail(rt, self_, t, method_, __VA_ARGS__)
#define GROW(slot, n) rt_grow(rt, mem0_ + (slot), (n))
#define SERIES(k, j) rt_series_at(&rt->series[ser0_ + (k)], (j))
#define STEP_EVENT() (rt->step_event = 1)
