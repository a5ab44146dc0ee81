/* The FMI 3.0 functions of a blocksim model (fmu_model.h), model exchange and co-simulation,
 * written against the FMI 3.0 headers (fmi3Functions.h). Arrays are Float64 variables of
 * VR_SIZE elements; the types a model does not use answer fmi3Error. */
#include <stdlib.h>
#include <string.h>
#include "fmi3Functions.h"
#include "fmu_model.h"

typedef struct {
    Instance m;  /* first: a Fmi3 is an Instance */
    fmi3InstanceEnvironment env;
    fmi3LogMessageCallback log;
    char name[128];
} Fmi3;

static void fmi3_log(Instance *m, int status, const char *message)
{
    Fmi3 *f = (Fmi3 *)m;
    if (f->log)
        f->log(f->env, (fmi3Status)status,
               status > MODEL_WARNING ? "logStatusError" : "logEvents", message);
}

static fmi3Instance instantiate(fmi3String name, fmi3String token, int cosim,
                                fmi3InstanceEnvironment env, fmi3LogMessageCallback log)
{
    if (!token || strcmp(token, MODEL_GUID) != 0)
        return NULL;
    Fmi3 *f = calloc(1, sizeof(Fmi3));
    if (!f)
        return NULL;
    f->env = env;
    f->log = log;
    strncpy(f->name, name ? name : "", sizeof f->name - 1);
    f->m.logger = fmi3_log;
    f->m.cosim = cosim;
    fmu_start_values(&f->m);
    return f;
}

const char *fmi3GetVersion(void) { return fmi3Version; }

fmi3Status fmi3SetDebugLogging(fmi3Instance c, fmi3Boolean on, size_t n, const fmi3String cats[])
{
    (void)c; (void)on; (void)n; (void)cats;
    return fmi3OK;
}

fmi3Instance fmi3InstantiateModelExchange(fmi3String name, fmi3String token, fmi3String resources,
                                          fmi3Boolean visible, fmi3Boolean logging,
                                          fmi3InstanceEnvironment env, fmi3LogMessageCallback log)
{
    (void)resources; (void)visible; (void)logging;
    return instantiate(name, token, 0, env, log);
}

fmi3Instance fmi3InstantiateCoSimulation(fmi3String name, fmi3String token, fmi3String resources,
                                         fmi3Boolean visible, fmi3Boolean logging,
                                         fmi3Boolean event_mode, fmi3Boolean early_return,
                                         const fmi3ValueReference required[], size_t nrequired,
                                         fmi3InstanceEnvironment env, fmi3LogMessageCallback log,
                                         fmi3IntermediateUpdateCallback update)
{
    (void)resources; (void)visible; (void)logging; (void)event_mode;
    (void)required; (void)nrequired; (void)update;
#ifdef HAS_DO_STEP
    Fmi3 *f = instantiate(name, token, 1, env, log);
    if (f)
        f->m.early_return = early_return;
    return f;
#else
    (void)early_return;
    (void)name; (void)token; (void)env; (void)log;
    return NULL;
#endif
}

fmi3Instance fmi3InstantiateScheduledExecution(fmi3String name, fmi3String token,
                                               fmi3String resources, fmi3Boolean visible,
                                               fmi3Boolean logging, fmi3InstanceEnvironment env,
                                               fmi3LogMessageCallback log,
                                               fmi3ClockUpdateCallback clock,
                                               fmi3LockPreemptionCallback lock,
                                               fmi3UnlockPreemptionCallback unlock)
{
    (void)name; (void)token; (void)resources; (void)visible; (void)logging; (void)env;
    (void)log; (void)clock; (void)lock; (void)unlock;
    return NULL;
}

void fmi3FreeInstance(fmi3Instance c)
{
    if (c)
        fmu_release(c);
    free(c);
}

fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean tol_defined, fmi3Float64 tol,
                                       fmi3Float64 start, fmi3Boolean stop_defined,
                                       fmi3Float64 stop)
{
    (void)tol_defined; (void)tol; (void)stop_defined; (void)stop;
    fmu_set_time(c, start);
    ((Instance *)c)->mode = MODE_INIT;
    return fmi3OK;
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance c)
{
    return (fmi3Status)fmu_exit_initialization(c);
}

fmi3Status fmi3EnterEventMode(fmi3Instance c)
{
    ((Instance *)c)->mode = MODE_EVENT;
    return fmi3OK;
}

fmi3Status fmi3Terminate(fmi3Instance c)
{
    ((Instance *)c)->mode = MODE_TERMINATED;
    return fmi3OK;
}

fmi3Status fmi3Reset(fmi3Instance c)
{
    fmu_start_values(c);
    return fmi3OK;
}

/* Float64 values (scalars and arrays) by value reference */
fmi3Status fmi3GetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                          fmi3Float64 values[], size_t nvalues)
{
    return (fmi3Status)fmu_get_values(c, vr, n, values, nvalues);
}

fmi3Status fmi3SetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                          const fmi3Float64 values[], size_t nvalues)
{
    return (fmi3Status)fmu_set_values(c, vr, n, values, nvalues);
}

/* Int32 and Boolean scalars, one at a time through their double */
fmi3Status fmi3GetInt32(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                        fmi3Int32 values[], size_t nvalues)
{
    int status = fmi3OK;
    for (size_t i = 0; i < n && i < nvalues && status <= fmi3Warning; i++) {
        double d = 0.0;
        status = fmu_get_values(c, vr + i, 1, &d, 1);
        values[i] = (fmi3Int32)d;
    }
    return (fmi3Status)status;
}

fmi3Status fmi3SetInt32(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                        const fmi3Int32 values[], size_t nvalues)
{
    int status = fmi3OK;
    for (size_t i = 0; i < n && i < nvalues && status <= fmi3Warning; i++) {
        double d = values[i];
        status = fmu_set_values(c, vr + i, 1, &d, 1);
    }
    return (fmi3Status)status;
}

fmi3Status fmi3GetBoolean(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                          fmi3Boolean values[], size_t nvalues)
{
    int status = fmi3OK;
    for (size_t i = 0; i < n && i < nvalues && status <= fmi3Warning; i++) {
        double d = 0.0;
        status = fmu_get_values(c, vr + i, 1, &d, 1);
        values[i] = d != 0.0;
    }
    return (fmi3Status)status;
}

fmi3Status fmi3SetBoolean(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                          const fmi3Boolean values[], size_t nvalues)
{
    int status = fmi3OK;
    for (size_t i = 0; i < n && i < nvalues && status <= fmi3Warning; i++) {
        double d = values[i] ? 1.0 : 0.0;
        status = fmu_set_values(c, vr + i, 1, &d, 1);
    }
    return (fmi3Status)status;
}

/* the types the models do not use */
#define UNUSED_GET_SET(T, CT) \
    fmi3Status fmi3Get##T(fmi3Instance c, const fmi3ValueReference vr[], size_t n, \
                          CT values[], size_t nvalues) \
    { (void)c; (void)vr; (void)values; (void)nvalues; return n ? fmi3Error : fmi3OK; } \
    fmi3Status fmi3Set##T(fmi3Instance c, const fmi3ValueReference vr[], size_t n, \
                          const CT values[], size_t nvalues) \
    { (void)c; (void)vr; (void)values; (void)nvalues; return n ? fmi3Error : fmi3OK; }
UNUSED_GET_SET(Float32, fmi3Float32)
UNUSED_GET_SET(Int8, fmi3Int8)
UNUSED_GET_SET(UInt8, fmi3UInt8)
UNUSED_GET_SET(Int16, fmi3Int16)
UNUSED_GET_SET(UInt16, fmi3UInt16)
UNUSED_GET_SET(UInt32, fmi3UInt32)
UNUSED_GET_SET(Int64, fmi3Int64)
UNUSED_GET_SET(UInt64, fmi3UInt64)
UNUSED_GET_SET(String, fmi3String)

fmi3Status fmi3GetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                         size_t sizes[], fmi3Binary values[], size_t nvalues)
{
    (void)c; (void)vr; (void)sizes; (void)values; (void)nvalues;
    return n ? fmi3Error : fmi3OK;
}

fmi3Status fmi3SetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                         const size_t sizes[], const fmi3Binary values[], size_t nvalues)
{
    (void)c; (void)vr; (void)sizes; (void)values; (void)nvalues;
    return n ? fmi3Error : fmi3OK;
}

fmi3Status fmi3GetClock(fmi3Instance c, const fmi3ValueReference vr[], size_t n, fmi3Clock v[])
{
    (void)c; (void)vr; (void)v;
    return n ? fmi3Error : fmi3OK;
}

fmi3Status fmi3SetClock(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                        const fmi3Clock v[])
{
    (void)c; (void)vr; (void)v;
    return n ? fmi3Error : fmi3OK;
}

fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance c, fmi3ValueReference vr, size_t *n)
{
    (void)c; (void)vr; (void)n;
    return fmi3Error;
}

fmi3Status fmi3GetVariableDependencies(fmi3Instance c, fmi3ValueReference dependent,
                                       size_t element[], fmi3ValueReference independents[],
                                       size_t elements[], fmi3DependencyKind kinds[], size_t n)
{
    (void)c; (void)dependent; (void)element; (void)independents; (void)elements; (void)kinds;
    (void)n;
    return fmi3Error;
}

fmi3Status fmi3GetFMUState(fmi3Instance c, fmi3FMUState *s) { (void)c; (void)s; return fmi3Error; }
fmi3Status fmi3SetFMUState(fmi3Instance c, fmi3FMUState s) { (void)c; (void)s; return fmi3Error; }
fmi3Status fmi3FreeFMUState(fmi3Instance c, fmi3FMUState *s) { (void)c; (void)s; return fmi3Error; }
fmi3Status fmi3SerializedFMUStateSize(fmi3Instance c, fmi3FMUState s, size_t *n)
{
    (void)c; (void)s; (void)n;
    return fmi3Error;
}
fmi3Status fmi3SerializeFMUState(fmi3Instance c, fmi3FMUState s, fmi3Byte b[], size_t n)
{
    (void)c; (void)s; (void)b; (void)n;
    return fmi3Error;
}
fmi3Status fmi3DeserializeFMUState(fmi3Instance c, const fmi3Byte b[], size_t n, fmi3FMUState *s)
{
    (void)c; (void)b; (void)n; (void)s;
    return fmi3Error;
}

fmi3Status fmi3GetDirectionalDerivative(fmi3Instance c, const fmi3ValueReference unknowns[],
                                        size_t nu, const fmi3ValueReference knowns[], size_t nk,
                                        const fmi3Float64 seed[], size_t nseed,
                                        fmi3Float64 out[], size_t nout)
{
    (void)nseed;
#ifdef HAS_PARTIALS
    for (size_t i = 0; i < nu && i < nout; i++)
        out[i] = fmu_directional(c, VR_OFFSET[unknowns[i]], knowns, seed, (int)nk);
    return fmi3OK;
#else
    (void)c; (void)unknowns; (void)nu; (void)knowns; (void)nk; (void)seed; (void)out; (void)nout;
    return fmi3Error;
#endif
}

fmi3Status fmi3GetAdjointDerivative(fmi3Instance c, const fmi3ValueReference unknowns[],
                                    size_t nu, const fmi3ValueReference knowns[], size_t nk,
                                    const fmi3Float64 seed[], size_t nseed,
                                    fmi3Float64 out[], size_t nout)
{
    (void)c; (void)unknowns; (void)nu; (void)knowns; (void)nk; (void)seed; (void)nseed;
    (void)out; (void)nout;
    return fmi3Error;
}

fmi3Status fmi3EnterConfigurationMode(fmi3Instance c) { (void)c; return fmi3Error; }
fmi3Status fmi3ExitConfigurationMode(fmi3Instance c) { (void)c; return fmi3Error; }

fmi3Status fmi3GetIntervalDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                  fmi3Float64 intervals[], fmi3IntervalQualifier q[])
{
    (void)c; (void)vr; (void)n; (void)intervals; (void)q;
    return fmi3Error;
}
fmi3Status fmi3GetIntervalFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                   fmi3UInt64 counters[], fmi3UInt64 resolutions[],
                                   fmi3IntervalQualifier q[])
{
    (void)c; (void)vr; (void)n; (void)counters; (void)resolutions; (void)q;
    return fmi3Error;
}
fmi3Status fmi3GetShiftDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                               fmi3Float64 shifts[])
{
    (void)c; (void)vr; (void)n; (void)shifts;
    return fmi3Error;
}
fmi3Status fmi3GetShiftFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                fmi3UInt64 counters[], fmi3UInt64 resolutions[])
{
    (void)c; (void)vr; (void)n; (void)counters; (void)resolutions;
    return fmi3Error;
}
fmi3Status fmi3SetIntervalDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                  const fmi3Float64 intervals[])
{
    (void)c; (void)vr; (void)n; (void)intervals;
    return fmi3Error;
}
fmi3Status fmi3SetIntervalFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                   const fmi3UInt64 counters[], const fmi3UInt64 resolutions[])
{
    (void)c; (void)vr; (void)n; (void)counters; (void)resolutions;
    return fmi3Error;
}
fmi3Status fmi3SetShiftDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                               const fmi3Float64 shifts[])
{
    (void)c; (void)vr; (void)n; (void)shifts;
    return fmi3Error;
}
fmi3Status fmi3SetShiftFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                const fmi3UInt64 counters[], const fmi3UInt64 resolutions[])
{
    (void)c; (void)vr; (void)n; (void)counters; (void)resolutions;
    return fmi3Error;
}
fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance c) { (void)c; return fmi3OK; }

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance c, fmi3Boolean *again, fmi3Boolean *terminate,
                                    fmi3Boolean *nominals_changed, fmi3Boolean *values_changed,
                                    fmi3Boolean *next_defined, fmi3Float64 *next_time)
{
    Instance *m = c;
    int more;
    fmi3Status s = (fmi3Status)fmu_discrete_states(m, &more);
    *again = more;
    *terminate = m->terminate;
    *nominals_changed = fmi3False;
    *values_changed = m->states_changed;
    *next_defined = m->next_event_defined;
    *next_time = m->next_event_time;
    return s;
}

fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance c)
{
    ((Instance *)c)->mode = MODE_CONTINUOUS;
    return fmi3OK;
}

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance c, fmi3Boolean no_set_state,
                                       fmi3Boolean *enter_event_mode, fmi3Boolean *terminate)
{
    (void)no_set_state;
    int enter;
    fmi3Status s = (fmi3Status)fmu_completed_step(c, &enter);
    *enter_event_mode = enter;
    *terminate = ((Instance *)c)->terminate;
    return s;
}

fmi3Status fmi3SetTime(fmi3Instance c, fmi3Float64 time)
{
    fmu_set_time(c, time);
    return fmi3OK;
}

fmi3Status fmi3SetContinuousStates(fmi3Instance c, const fmi3Float64 x[], size_t nx)
{
    fmu_set_states(c, x, nx);
    return fmi3OK;
}

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance c, fmi3Float64 dx[], size_t nx)
{
    return (fmi3Status)fmu_get_derivatives(c, dx, nx);
}

fmi3Status fmi3GetEventIndicators(fmi3Instance c, fmi3Float64 z[], size_t nz)
{
    return (fmi3Status)fmu_get_indicators(c, z, nz);
}

fmi3Status fmi3GetContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t nx)
{
    fmu_get_states(c, x, nx);
    return fmi3OK;
}

fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t nx)
{
    (void)c;
    for (size_t i = 0; i < nx; i++)
        x[i] = 1.0;
    return fmi3OK;
}

fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance c, size_t *n)
{
    (void)c;
    *n = N_Z;
    return fmi3OK;
}

fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance c, size_t *n)
{
    (void)c;
    *n = N_X;
    return fmi3OK;
}

fmi3Status fmi3EnterStepMode(fmi3Instance c)
{
    ((Instance *)c)->mode = MODE_STEP;
    return fmi3OK;
}

fmi3Status fmi3GetOutputDerivatives(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                    const fmi3Int32 orders[], fmi3Float64 values[], size_t nvalues)
{
    (void)c; (void)vr; (void)orders; (void)values; (void)nvalues;
    return n ? fmi3Error : fmi3OK;
}

fmi3Status fmi3DoStep(fmi3Instance c, fmi3Float64 t, fmi3Float64 h, fmi3Boolean no_set_state,
                      fmi3Boolean *event_needed, fmi3Boolean *terminate, fmi3Boolean *early,
                      fmi3Float64 *last_time)
{
    (void)no_set_state;
    Instance *m = c;
    double reached;
    fmi3Status d = (fmi3Status)fmu_step(m, t, h, &reached);
    *event_needed = fmi3False;
    *terminate = m->terminate;
    *early = reached < t + h;
    *last_time = reached;
    return d;
}

fmi3Status fmi3ActivateModelPartition(fmi3Instance c, fmi3ValueReference clock,
                                      fmi3Float64 t)
{
    (void)c; (void)clock; (void)t;
    return fmi3Error;
}
