/* numpy's own inner loops of elementary functions (exp, log, tan, ...): numpy computes them
   with vectorised kernels of its own whose last bit differs from the C library's, so
   compiled code calls the very loop numpy calls (blocksim/accel/ufuncs.py finds them and
   hands their addresses over with rt_set_ufuncs), with the arguments numpy passes for a
   contiguous array: the same bits. RT_UF_<NAME> (codegen) indexes them. */

typedef void (*rt_ufunc_loop)(char **args, const intptr_t *dimensions, const intptr_t *steps,
                              void *data);

static rt_ufunc_loop ufunc_loop[RT_NUFUNC];
static void *ufunc_data[RT_NUFUNC];

void rt_set_ufuncs(void *const *loops, void *const *data)
{
    for (int k = 0; k < RT_NUFUNC; k++) {
        ufunc_loop[k] = (rt_ufunc_loop)loops[k];
        ufunc_data[k] = data[k];
    }
}

/* out[0:n] = f(in[0:n]) with numpy's loop of function `which` (found: the lowering checked) */
static void rt_ufunc(int which, const double *in, double *out, intptr_t n)
{
    char *args[2] = {(char *)in, (char *)out};
    intptr_t steps[2] = {sizeof(double), sizeof(double)};
    ufunc_loop[which](args, &n, steps, ufunc_data[which]);
}

/* out[k*so] = f(in[k*si]) for k < n (strides in elements; 0 repeats an element) */
static void rt_ufunc1(int which, const double *in, intptr_t si, double *out, intptr_t so,
                      intptr_t n)
{
    char *args[2] = {(char *)in, (char *)out};
    intptr_t steps[2] = {si * (intptr_t)sizeof(double), so * (intptr_t)sizeof(double)};
    ufunc_loop[which](args, &n, steps, ufunc_data[which]);
}

/* out[k*so] = f(a[k*sa], b[k*sb]) for k < n with numpy's loop of a function of two
   arguments: numpy passes a stride of 0 for an operand it broadcasts, and some loops take
   other paths then (power's exponent 2 is x * x), so the strides are numpy's */
static void rt_ufunc2(int which, const double *a, intptr_t sa, const double *b, intptr_t sb,
                      double *out, intptr_t so, intptr_t n)
{
    char *args[3] = {(char *)a, (char *)b, (char *)out};
    intptr_t steps[3] = {sa * (intptr_t)sizeof(double), sb * (intptr_t)sizeof(double),
                         so * (intptr_t)sizeof(double)};
    ufunc_loop[which](args, &n, steps, ufunc_data[which]);
}
