/* The FMI 2.0 functions of a blocksim model (fmu_model.h), model exchange and co-simulation,
 * written against the FMI 2.0 headers (fmi2Functions.h). */
#include <stdlib.h>
#include <string.h>
#include "fmi2Functions.h"
#include "fmu_model.h"

typedef struct {
    Instance m;  /* first: a Fmi2 is an Instance */
    fmi2CallbackFunctions cb;
    char name[128];
} Fmi2;

static void fmi2_log(Instance *m, int status, const char *message)
{
    Fmi2 *f = (Fmi2 *)m;
    if (f->cb.logger)
        f->cb.logger(f->cb.componentEnvironment, f->name, (fmi2Status)status,
                     status > MODEL_WARNING ? "logStatusError" : "logEvents", "%s", message);
}

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cats[])
{
    (void)c; (void)on; (void)n; (void)cats;
    return fmi2OK;
}

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid,
                              fmi2String resources, const fmi2CallbackFunctions *cb,
                              fmi2Boolean visible, fmi2Boolean logging)
{
    (void)resources; (void)visible; (void)logging;
    if (!cb || !guid || strcmp(guid, MODEL_GUID) != 0)
        return NULL;
#ifndef HAS_DO_STEP
    if (type == fmi2CoSimulation)
        return NULL;
#endif
    Fmi2 *f = calloc(1, sizeof(Fmi2));
    if (!f)
        return NULL;
    f->cb = *cb;
    strncpy(f->name, name ? name : "", sizeof f->name - 1);
    f->m.logger = fmi2_log;
    f->m.cosim = type == fmi2CoSimulation;
    fmu_start_values(&f->m);
    return f;
}

void fmi2FreeInstance(fmi2Component c)
{
    if (c)
        fmu_release(c);
    free(c);
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tol_defined, fmi2Real tol,
                               fmi2Real start, fmi2Boolean stop_defined, fmi2Real stop)
{
    (void)tol_defined; (void)tol; (void)stop_defined; (void)stop;
    fmu_set_time(c, start);
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c)
{
    ((Instance *)c)->mode = MODE_INIT;
    return fmi2OK;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c)
{
    return (fmi2Status)fmu_exit_initialization(c);
}

fmi2Status fmi2Terminate(fmi2Component c)
{
    ((Instance *)c)->mode = MODE_TERMINATED;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component c)
{
    fmu_start_values(c);
    return fmi2OK;
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real value[])
{
    return (fmi2Status)fmu_get_values(c, vr, n, value, n);
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                       const fmi2Real value[])
{
    return (fmi2Status)fmu_set_values(c, vr, n, value, n);
}

/* Integer and Boolean variables, one at a time through their double */
fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          fmi2Integer value[])
{
    int status = fmi2OK;
    for (size_t i = 0; i < n && status <= fmi2Warning; i++) {
        double d = 0.0;
        status = fmu_get_values(c, vr + i, 1, &d, 1);
        value[i] = (fmi2Integer)d;
    }
    return (fmi2Status)status;
}

fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          fmi2Boolean value[])
{
    int status = fmi2OK;
    for (size_t i = 0; i < n && status <= fmi2Warning; i++) {
        double d = 0.0;
        status = fmu_get_values(c, vr + i, 1, &d, 1);
        value[i] = d != 0.0;
    }
    return (fmi2Status)status;
}

fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          const fmi2Integer value[])
{
    int status = fmi2OK;
    for (size_t i = 0; i < n && status <= fmi2Warning; i++) {
        double d = value[i];
        status = fmu_set_values(c, vr + i, 1, &d, 1);
    }
    return (fmi2Status)status;
}

fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          const fmi2Boolean value[])
{
    int status = fmi2OK;
    for (size_t i = 0; i < n && status <= fmi2Warning; i++) {
        double d = value[i] ? 1.0 : 0.0;
        status = fmu_set_values(c, vr + i, 1, &d, 1);
    }
    return (fmi2Status)status;
}

fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                         fmi2String value[])
{
    (void)c; (void)vr; (void)value;
    return n ? fmi2Error : fmi2OK;
}

fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                         const fmi2String value[])
{
    (void)c; (void)vr; (void)value;
    return n ? fmi2Error : fmi2OK;
}
/* FMU states: not offered (canGetAndSetFMUstate is false) */
fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *s) { (void)c; (void)s; return fmi2Error; }
fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate s) { (void)c; (void)s; return fmi2Error; }
fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *s)
{
    (void)c; (void)s;
    return fmi2Error;
}
fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate s, size_t *n)
{
    (void)c; (void)s; (void)n;
    return fmi2Error;
}
fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate s, fmi2Byte b[], size_t n)
{
    (void)c; (void)s; (void)b; (void)n;
    return fmi2Error;
}
fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte b[], size_t n, fmi2FMUstate *s)
{
    (void)c; (void)b; (void)n; (void)s;
    return fmi2Error;
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference unknown[],
                                        size_t nu, const fmi2ValueReference known[], size_t nk,
                                        const fmi2Real seed[], fmi2Real out[])
{
#ifdef HAS_PARTIALS
    for (size_t i = 0; i < nu; i++)
        out[i] = fmu_directional(c, VR_OFFSET[unknown[i]], known, seed, (int)nk);
    return fmi2OK;
#else
    (void)c; (void)unknown; (void)nu; (void)known; (void)nk; (void)seed; (void)out;
    return fmi2Error;
#endif
}

/* ---- model exchange ---- */
fmi2Status fmi2EnterEventMode(fmi2Component c)
{
    ((Instance *)c)->mode = MODE_EVENT;
    return fmi2OK;
}

fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *info)
{
    Instance *m = c;
    int again;
    fmi2Status s = (fmi2Status)fmu_discrete_states(m, &again);
    info->newDiscreteStatesNeeded = again;
    info->terminateSimulation = m->terminate;
    info->nominalsOfContinuousStatesChanged = fmi2False;
    info->valuesOfContinuousStatesChanged = m->states_changed;
    info->nextEventTimeDefined = m->next_event_defined;
    info->nextEventTime = m->next_event_time;
    return s;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c)
{
    ((Instance *)c)->mode = MODE_CONTINUOUS;
    return fmi2OK;
}

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean no_set_state,
                                       fmi2Boolean *enter_event_mode, fmi2Boolean *terminate)
{
    (void)no_set_state;
    int enter;
    fmi2Status s = (fmi2Status)fmu_completed_step(c, &enter);
    *enter_event_mode = enter;
    *terminate = ((Instance *)c)->terminate;
    return s;
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time)
{
    fmu_set_time(c, time);
    return fmi2OK;
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx)
{
    fmu_set_states(c, x, nx);
    return fmi2OK;
}

fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real dx[], size_t nx)
{
    return (fmi2Status)fmu_get_derivatives(c, dx, nx);
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real z[], size_t nz)
{
    return (fmi2Status)fmu_get_indicators(c, z, nz);
}

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx)
{
    fmu_get_states(c, x, nx);
    return fmi2OK;
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x[], size_t nx)
{
    (void)c;
    for (size_t i = 0; i < nx; i++)
        x[i] = 1.0;
    return fmi2OK;
}

/* ---- co-simulation ---- */
fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                       const fmi2Integer order[], const fmi2Real value[])
{
    (void)c; (void)vr; (void)order; (void)value;
    return n ? fmi2Error : fmi2OK;
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                        const fmi2Integer order[], fmi2Real value[])
{
    (void)c; (void)vr; (void)order; (void)value;
    return n ? fmi2Error : fmi2OK;
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean no_set_state)
{
    (void)no_set_state;
    double reached;
    return (fmi2Status)fmu_step(c, t, h, &reached);
}

fmi2Status fmi2CancelStep(fmi2Component c) { (void)c; return fmi2Error; }

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind k, fmi2Status *v)
{
    (void)c; (void)k; (void)v;
    return fmi2Discard;
}
fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind k, fmi2Real *v)
{
    (void)c; (void)k; (void)v;
    return fmi2Discard;
}
fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind k, fmi2Integer *v)
{
    (void)c; (void)k; (void)v;
    return fmi2Discard;
}
fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind k, fmi2Boolean *v)
{
    Instance *m = c;
    if (k != fmi2Terminated)
        return fmi2Discard;
    *v = m->terminate;
    return fmi2OK;
}
fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind k, fmi2String *v)
{
    (void)c; (void)k; (void)v;
    return fmi2Discard;
}
