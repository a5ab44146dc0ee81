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
