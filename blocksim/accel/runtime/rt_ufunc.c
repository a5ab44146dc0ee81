/* numpy's own inner loops of elementary functions (exp, log, tan, ...): numpy computes them
   with vectorised kernels of its own whose last bit differs from the C library's, so
   compiled code calls the very loop numpy calls (blocksim/accel/ufuncs.py finds them and
   hands their addresses over with rt_set_ufuncs), with the arguments numpy passes for a
   contiguous array: the same bits. RT_UF_<NAME> (codegen) indexes them.

   Where no loop was handed over (an exported diagram, blocksim export, runs without numpy)
   the C library's function stands in, element by element: RT_UF_C1_LIST and RT_UF_C2_LIST
   (codegen, from ufuncs.FUNCTIONS) list them in the same order; numpy.remainder is
   rt_np_remainder below. */

typedef void (*rt_ufunc_loop)(char **args, const intptr_t *dimensions, const intptr_t *steps,
                              void *data);

static rt_ufunc_loop ufunc_loop[RT_NUFUNC];
static void *ufunc_data[RT_NUFUNC];

RT_API void rt_set_ufuncs(void *const *loops, void *const *data)
{
    for (int k = 0; k < RT_NUFUNC; k++) {
        ufunc_loop[k] = (rt_ufunc_loop)loops[k];
        ufunc_data[k] = data[k];
    }
}

/* numpy.remainder(a, b) of one element (npy_divmod's remainder: the sign of b, +0 or -0 as
   b's for an exact multiple, NaN for b = 0) */
static double rt_np_remainder(double a, double b)
{
    double mod = fmod(a, b);
    if (b == 0.0)
        return mod;
    if (mod != 0.0) {
        if ((b < 0.0) != (mod < 0.0))
            mod += b;
    } else {
        mod = copysign(0.0, b);
    }
    return mod;
}

static double (*const ufunc_c1[DIM(RT_NUFUNC1)])(double) = {RT_UF_C1_LIST};
static double (*const ufunc_c2[DIM(RT_NUFUNC - RT_NUFUNC1)])(double, double) = {RT_UF_C2_LIST};

/* out[k*so] = f(in[k*si]) for k < n (strides in elements; 0 repeats an element) */
static void rt_ufunc1(int which, const double *in, intptr_t si, double *out, intptr_t so,
                      intptr_t n)
{
    if (!ufunc_loop[which]) {
        for (intptr_t k = 0; k < n; k++)
            out[k * so] = ufunc_c1[which](in[k * si]);
        return;
    }
    char *args[2] = {(char *)in, (char *)out};
    intptr_t steps[2] = {si * (intptr_t)sizeof(double), so * (intptr_t)sizeof(double)};
    ufunc_loop[which](args, &n, steps, ufunc_data[which]);
}

/* out[0:n] = f(in[0:n]) with numpy's loop of function `which` (found: the lowering checked) */
static void rt_ufunc(int which, const double *in, double *out, intptr_t n)
{
    rt_ufunc1(which, in, 1, out, 1, n);
}

/* out[k*so] = f(a[k*sa], b[k*sb]) for k < n with numpy's loop of a function of two
   arguments: numpy passes a stride of 0 for an operand it broadcasts, and some loops take
   other paths then (power's exponent 2 is x * x), so the strides are numpy's */
static void rt_ufunc2(int which, const double *a, intptr_t sa, const double *b, intptr_t sb,
                      double *out, intptr_t so, intptr_t n)
{
    if (!ufunc_loop[which]) {
        for (intptr_t k = 0; k < n; k++)
            out[k * so] = ufunc_c2[which - RT_NUFUNC1](a[k * sa], b[k * sb]);
        return;
    }
    char *args[3] = {(char *)a, (char *)b, (char *)out};
    intptr_t steps[3] = {sa * (intptr_t)sizeof(double), sb * (intptr_t)sizeof(double),
                         so * (intptr_t)sizeof(double)};
    ufunc_loop[which](args, &n, steps, ufunc_data[which]);
}
