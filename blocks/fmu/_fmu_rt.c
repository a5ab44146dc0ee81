/* The fmu block's compiled form: an FMU's shared library opened with dlopen, its FMI 2.0 or
 * 3.0 functions found with dlsym, one instance per compiled run (kept in the block's memory
 * slot 0, freed with the run; under scipy's stiff solvers normal mode's instance,
 * attached). The types below are the FMI 2.0 / 3.0 C API's (fmpy ships
 * its headers), declared here because the diagram's source is compiled without them. */
#include <dlfcn.h>

typedef void *FmuComp;
typedef int (*fmu_set_time_t)(FmuComp, double);
typedef int (*fmu_vec_t)(FmuComp, double *, size_t);              /* derivatives, states */
typedef int (*fmu_cvec_t)(FmuComp, const double *, size_t);
typedef int (*fmu_get2_t)(FmuComp, const unsigned int *, size_t, double *);
typedef int (*fmu_set2_t)(FmuComp, const unsigned int *, size_t, const double *);
typedef int (*fmu_geti2_t)(FmuComp, const unsigned int *, size_t, int *);
typedef int (*fmu_seti2_t)(FmuComp, const unsigned int *, size_t, const int *);
typedef int (*fmu_get3_t)(FmuComp, const unsigned int *, size_t, double *, size_t);
typedef int (*fmu_set3_t)(FmuComp, const unsigned int *, size_t, const double *, size_t);
typedef int (*fmu_seti3_t)(FmuComp, const unsigned int *, size_t, const int *, size_t);
typedef int (*fmu_setb3_t)(FmuComp, const unsigned int *, size_t, const _Bool *, size_t);
typedef int (*fmu_geti3_t)(FmuComp, const unsigned int *, size_t, int *, size_t);
typedef int (*fmu_getb3_t)(FmuComp, const unsigned int *, size_t, _Bool *, size_t);
typedef int (*fmu_one_t)(FmuComp);
typedef void (*fmu_free_t)(FmuComp);
typedef struct {  /* fmi2EventInfo */
    int newDiscreteStatesNeeded, terminateSimulation, nominalsOfContinuousStatesChanged,
        valuesOfContinuousStatesChanged, nextEventTimeDefined;
    double nextEventTime;
} FmuEventInfo2;
typedef struct {  /* fmi2CallbackFunctions */
    void (*logger)(void *, const char *, int, const char *, const char *, ...);
    void *(*allocate)(size_t, size_t);
    void (*free)(void *);
    void (*step_finished)(void *, int);
    void *env;
} FmuCallbacks2;

static const char *FMU_STATUS[] = {"OK", "Warning", "Discard", "Error", "Fatal", "Pending"};

/* in a block's code: the run ends with the FMU's failure (as normal mode's FmuFault) */
#define FMU_FAILED(file, function, status) \
    FAIL("the FMU %s failed: %s returned %s; its log: %s", file, function, \
         FMU_STATUS[(status) >= 0 && (status) < 6 ? (status) : 4], F->log)

typedef struct {
    void *dll;
    FmuComp c;
    int fmi, me, attached;             /* attached: the instance is normal mode's (not freed) */
    FmuCallbacks2 cb;
    char log[400];                     /* the FMU's last log line */
    char *lines;                       /* the run's warnings and errors, lines of text (the
                                          block's data array `log`; NULL: not kept) */
    size_t nlines;                     /* its size in bytes */
    double next;                       /* its next time event (NAN: none) */
    fmu_set_time_t set_time;
    fmu_cvec_t set_x;
    fmu_vec_t get_dx, get_z, get_x;
    void *get_real, *set_real, *set_int, *set_bool, *get_int, *get_bool;
    fmu_one_t enter_event, enter_ct, exit_init, reset;
    void *new_states, *completed, *do_step, *enter_init, *setup;
    fmu_free_t free_instance;
} FmuRt;

/* a log line of the FMU: its last, and above OK one of the run's lines (the oldest make
   room when they fill the buffer), which the block reads after the run */
static void fmu_keep(FmuRt *F, int status, const char *text)
{
    snprintf(F->log, sizeof F->log, "[%s] %s", FMU_STATUS[status >= 0 && status < 6 ? status : 4],
             text);
    if (!F->lines || status == 0)
        return;
    size_t n = strlen(F->log), used = strlen(F->lines);
    if (n + 2 > F->nlines)
        return;
    while (used + n + 2 > F->nlines) {
        char *next = strchr(F->lines, '\n');
        size_t drop = next ? (size_t)(next - F->lines) + 1 : used;
        memmove(F->lines, F->lines + drop, used - drop + 1);
        used -= drop;
    }
    memcpy(F->lines + used, F->log, n);
    F->lines[used + n] = '\n';
    F->lines[used + n + 1] = '\0';
}

/* the run's lines kept in `buffer` (emptied) from now on */
static void fmu_keep_lines(FmuRt *F, double *buffer, long long n)
{
    F->lines = (char *)buffer;
    F->nlines = (size_t)n * sizeof(double);
    if (F->nlines)
        F->lines[0] = '\0';
}

static void fmu_log2(void *env, const char *name, int status, const char *category,
                     const char *message, ...)
{
    (void)name; (void)category;
    char text[300];
    va_list args;
    va_start(args, message);
    vsnprintf(text, sizeof text, message, args);
    va_end(args);
    fmu_keep(env, status, text);
}

static void fmu_log3(void *env, int status, const char *category, const char *message)
{
    (void)category;
    fmu_keep(env, status, message);
}

static void *fmu_sym(FmuRt *F, const char *name, int *missing)
{
    void *f = dlsym(F->dll, name);
    if (!f)
        *missing = 1;
    return f;
}

static void fmu_close(FmuRt *F)
{
    if (!F)
        return;
    if (F->c && F->free_instance && !F->attached)
        F->free_instance(F->c);
    if (F->dll)
        dlclose(F->dll);
    free(F);
}

/* the library at `path` opened and its functions found; with `component` that instance is
   used (attached), else one is made (NULL and `why` filled when that fails), a co-simulation
   one allowed to return early from doStep when `early` */
static FmuRt *fmu_open(const char *path, int fmi, int me, int early, const char *token,
                       const char *name, const char *resources, FmuComp component, char *why,
                       size_t nwhy)
{
    FmuRt *F = calloc(1, sizeof(FmuRt));
    if (!F) {
        snprintf(why, nwhy, "out of memory");
        return NULL;
    }
    F->fmi = fmi;
    F->me = me;
    F->next = NAN;
    F->dll = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!F->dll) {
        snprintf(why, nwhy, "cannot load %s: %s", path, dlerror());
        free(F);
        return NULL;
    }
    int missing = 0;
#define SYM(field, f2, f3) F->field = fmu_sym(F, fmi == 2 ? f2 : f3, &missing)
    SYM(set_time, "fmi2SetTime", "fmi3SetTime");
    SYM(set_x, "fmi2SetContinuousStates", "fmi3SetContinuousStates");
    SYM(get_dx, "fmi2GetDerivatives", "fmi3GetContinuousStateDerivatives");
    SYM(get_z, "fmi2GetEventIndicators", "fmi3GetEventIndicators");
    SYM(get_x, "fmi2GetContinuousStates", "fmi3GetContinuousStates");
    SYM(get_real, "fmi2GetReal", "fmi3GetFloat64");
    SYM(set_real, "fmi2SetReal", "fmi3SetFloat64");
    SYM(set_int, "fmi2SetInteger", "fmi3SetInt32");
    SYM(set_bool, "fmi2SetBoolean", "fmi3SetBoolean");
    SYM(get_int, "fmi2GetInteger", "fmi3GetInt32");
    SYM(get_bool, "fmi2GetBoolean", "fmi3GetBoolean");
    SYM(enter_event, "fmi2EnterEventMode", "fmi3EnterEventMode");
    SYM(enter_ct, "fmi2EnterContinuousTimeMode", "fmi3EnterContinuousTimeMode");
    SYM(exit_init, "fmi2ExitInitializationMode", "fmi3ExitInitializationMode");
    SYM(reset, "fmi2Reset", "fmi3Reset");
    SYM(new_states, "fmi2NewDiscreteStates", "fmi3UpdateDiscreteStates");
    SYM(completed, "fmi2CompletedIntegratorStep", "fmi3CompletedIntegratorStep");
    SYM(do_step, "fmi2DoStep", "fmi3DoStep");
    SYM(enter_init, "fmi2EnterInitializationMode", "fmi3EnterInitializationMode");
    SYM(free_instance, "fmi2FreeInstance", "fmi3FreeInstance");
    if (fmi == 2)
        F->setup = fmu_sym(F, "fmi2SetupExperiment", &missing);
#undef SYM
    if (missing) {
        snprintf(why, nwhy, "%s lacks FMI %d.0 functions", path, fmi);
        fmu_close(F);
        return NULL;
    }
    if (component) {
        F->c = component;
        F->attached = 1;
        return F;
    }
    if (fmi == 2) {
        typedef FmuComp (*inst2_t)(const char *, int, const char *, const char *,
                                   const FmuCallbacks2 *, int, int);
        inst2_t inst = (inst2_t)dlsym(F->dll, "fmi2Instantiate");
        F->cb.logger = fmu_log2;
        F->cb.allocate = calloc;
        F->cb.free = free;
        F->cb.env = F;
        F->c = inst ? inst(name, me ? 0 : 1, token, resources, &F->cb, 0, 1) : NULL;
    } else if (me) {
        typedef FmuComp (*inst3_t)(const char *, const char *, const char *, _Bool, _Bool,
                                   void *, void (*)(void *, int, const char *, const char *));
        inst3_t inst = (inst3_t)dlsym(F->dll, "fmi3InstantiateModelExchange");
        F->c = inst ? inst(name, token, resources, 0, 1, F, fmu_log3) : NULL;
    } else {
        typedef FmuComp (*inst3_t)(const char *, const char *, const char *, _Bool, _Bool,
                                   _Bool, _Bool, const unsigned int *, size_t, void *,
                                   void (*)(void *, int, const char *, const char *), void *);
        inst3_t inst = (inst3_t)dlsym(F->dll, "fmi3InstantiateCoSimulation");
        F->c = inst ? inst(name, token, resources, 0, 1, 0, early, NULL, 0, F, fmu_log3, NULL)
                    : NULL;
    }
    if (!F->c) {
        snprintf(why, nwhy, "the FMU could not be instantiated%s%s", F->log[0] ? ": " : "",
                 F->log);
        fmu_close(F);
        return NULL;
    }
    return F;
}

/* the instance kept in a block's memory slot (NULL before the first start) */
static FmuRt *fmu_of(double *slot)
{
    FmuRt *F = NULL;
    if (slot)
        memcpy(&F, slot, sizeof F);
    return F;
}

/* Under scipy's stiff solvers the handlers run interpreted: normal mode's instance (its
   address in the block's data array `instance`, written when it started) is the one the
   compiled evaluations call. The block's instance then: its own, or that one attached. */
static FmuRt *fmu_current(RT *rt, int slot, const double *instance, const char *path, int fmi,
                          int me)
{
    FmuRt *F = fmu_of(rt->mem[slot].size ? rt->mem[slot].data : NULL);
    if (F || instance[0] == 0.0)
        return F;
    FmuComp c;
    memcpy(&c, instance, sizeof c);
    char why[400];
    F = fmu_open(path, fmi, me, 0, "", "", "", c, why, sizeof why);
    if (F)
        memcpy(rt_grow(rt, slot, 1), &F, sizeof F);
    return F;
}

/* FMI calls, each returning the status (> 1: a failure) */
static int fmu_set_reals(FmuRt *F, const unsigned int *vr, size_t n, const double *v, size_t nv)
{
    return F->fmi == 2 ? ((fmu_set2_t)F->set_real)(F->c, vr, n, v)
                       : ((fmu_set3_t)F->set_real)(F->c, vr, n, v, nv);
}

static int fmu_get_reals(FmuRt *F, const unsigned int *vr, size_t n, double *v, size_t nv)
{
    return F->fmi == 2 ? ((fmu_get2_t)F->get_real)(F->c, vr, n, v)
                       : ((fmu_get3_t)F->get_real)(F->c, vr, n, v, nv);
}

static int fmu_set_int(FmuRt *F, unsigned int vr, double value)
{
    int v = (int)value;
    return F->fmi == 2 ? ((fmu_seti2_t)F->set_int)(F->c, &vr, 1, &v)
                       : ((fmu_seti3_t)F->set_int)(F->c, &vr, 1, &v, 1);
}

static int fmu_set_bool(FmuRt *F, unsigned int vr, double value)
{
    if (F->fmi == 2) {
        int v = value != 0.0;
        return ((fmu_seti2_t)F->set_bool)(F->c, &vr, 1, &v);
    }
    _Bool b = value != 0.0;
    return ((fmu_setb3_t)F->set_bool)(F->c, &vr, 1, &b, 1);
}

/* an Integer or Boolean variable read as a double (a port carries numbers) */
static int fmu_get_int(FmuRt *F, unsigned int vr, double *out)
{
    int v = 0;
    int status = F->fmi == 2 ? ((fmu_geti2_t)F->get_int)(F->c, &vr, 1, &v)
                             : ((fmu_geti3_t)F->get_int)(F->c, &vr, 1, &v, 1);
    *out = v;
    return status;
}

static int fmu_get_bool(FmuRt *F, unsigned int vr, double *out)
{
    int status;
    if (F->fmi == 2) {
        int v = 0;
        status = ((fmu_geti2_t)F->get_bool)(F->c, &vr, 1, &v);
        *out = v != 0;
    } else {
        _Bool b = 0;
        status = ((fmu_getb3_t)F->get_bool)(F->c, &vr, 1, &b, 1);
        *out = b;
    }
    return status;
}

static int fmu_start(FmuRt *F, double t)
{
    if (F->fmi == 2)
        return ((int (*)(FmuComp, int, double, double, int, double))F->setup)(F->c, 0, 0.0, t,
                                                                               0, 0.0);
    return 0;
}

static int fmu_enter_init(FmuRt *F, double t)
{
    if (F->fmi == 2)
        return ((fmu_one_t)F->enter_init)(F->c);
    return ((int (*)(FmuComp, _Bool, double, double, _Bool, double))F->enter_init)(F->c, 0, 0.0,
                                                                                   t, 0, 0.0);
}

/* newDiscreteStates (FMI 3.0: updateDiscreteStates) once: *again, *stop, *changed and the
   next time event (F->next, NAN for none) */
static int fmu_update(FmuRt *F, int *again, int *stop, int *changed)
{
    int status;
    if (F->fmi == 2) {
        FmuEventInfo2 info;
        memset(&info, 0, sizeof info);
        status = ((int (*)(FmuComp, FmuEventInfo2 *))F->new_states)(F->c, &info);
        *again = info.newDiscreteStatesNeeded;
        *stop = info.terminateSimulation;
        *changed = info.valuesOfContinuousStatesChanged;
        F->next = info.nextEventTimeDefined ? info.nextEventTime : NAN;
    } else {
        _Bool a = 0, s = 0, nom = 0, ch = 0, def = 0;
        double next = 0.0;
        status = ((int (*)(FmuComp, _Bool *, _Bool *, _Bool *, _Bool *, _Bool *, double *))
                  F->new_states)(F->c, &a, &s, &nom, &ch, &def, &next);
        *again = a;
        *stop = s;
        *changed = ch;
        F->next = def ? next : NAN;
    }
    return status;
}

static int fmu_completed(FmuRt *F, int *enter, int *stop)
{
    if (F->fmi == 2) {
        int e = 0, s = 0;
        int status = ((int (*)(FmuComp, int, int *, int *))F->completed)(F->c, 1, &e, &s);
        *enter = e;
        *stop = s;
        return status;
    }
    _Bool e = 0, s = 0;
    int status = ((int (*)(FmuComp, _Bool, _Bool *, _Bool *))F->completed)(F->c, 1, &e, &s);
    *enter = e;
    *stop = s;
    return status;
}

/* doStep from t over h; *reached: where it returned (before t + h only when it returned
   early, which an FMU instantiated with early return may do) */
static int fmu_do_step(FmuRt *F, double t, double h, int *stop, double *reached)
{
    *reached = t + h;
    if (F->fmi == 2) {
        *stop = 0;
        return ((int (*)(FmuComp, double, double, int))F->do_step)(F->c, t, h, 1);
    }
    _Bool ev = 0, s = 0, early = 0;
    double last = 0.0;
    int status = ((int (*)(FmuComp, double, double, _Bool, _Bool *, _Bool *, _Bool *, double *))
                  F->do_step)(F->c, t, h, 1, &ev, &s, &early, &last);
    *stop = s;
    if (early)
        *reached = last;
    return status;
}
