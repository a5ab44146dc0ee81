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

static fmi2Status refresh(Instance *m)
{
    if (!m->dirty)
        return fmi2OK;
    m->dirty = 0;
    m->v[V_time] = m->time;
    return (fmi2Status)model_values(m);
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
    f->m.dirty = 1;
    f->m.mode = MODE_INSTANTIATED;
    return f;
}

void fmi2FreeInstance(fmi2Component c) { free(c); }

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tol_defined, fmi2Real tol,
                               fmi2Real start, fmi2Boolean stop_defined, fmi2Real stop)
{
    (void)tol_defined; (void)tol; (void)stop_defined; (void)stop;
    Instance *m = c;
    m->time = start;
    m->dirty = 1;
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c)
{
    ((Instance *)c)->mode = MODE_INIT;
    return fmi2OK;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c)
{
    Instance *m = c;
    m->dirty = 1;
    fmi2Status s = refresh(m);
    /* the first event: time events ahead, discrete variables at the start */
    int again;
    fmi2Status u = (fmi2Status)fmu_update(m, 0, &again);
    m->mode = m->cosim ? MODE_STEP : MODE_EVENT;
    return u > s ? u : s;
}

fmi2Status fmi2Terminate(fmi2Component c)
{
    ((Instance *)c)->mode = MODE_TERMINATED;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component c)
{
    Instance *m = c;
    fmu_start_values(m);
    m->dirty = 1;
    m->mode = MODE_INSTANTIATED;
    return fmi2OK;
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real value[])
{
    Instance *m = c;
    fmi2Status s = refresh(m);
    for (size_t i = 0; i < n; i++) {
        if (vr[i] >= N_REFS)
            return fmi2Error;
        value[i] = m->v[VR_OFFSET[vr[i]]];
    }
    return s;
}

fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer value[])
{
    Instance *m = c;
    fmi2Status s = refresh(m);
    for (size_t i = 0; i < n; i++) {
        if (vr[i] >= N_REFS)
            return fmi2Error;
        value[i] = (fmi2Integer)m->v[VR_OFFSET[vr[i]]];
    }
    return s;
}

fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean value[])
{
    Instance *m = c;
    fmi2Status s = refresh(m);
    for (size_t i = 0; i < n; i++) {
        if (vr[i] >= N_REFS)
            return fmi2Error;
        value[i] = m->v[VR_OFFSET[vr[i]]] != 0.0;
    }
    return s;
}

fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2String value[])
{
    (void)c; (void)vr; (void)value;
    return n ? fmi2Error : fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real value[])
{
    Instance *m = c;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] >= N_REFS)
            return fmi2Error;
        m->v[VR_OFFSET[vr[i]]] = value[i];
    }
    m->dirty = 1;
    return fmi2OK;
}

fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer value[])
{
    Instance *m = c;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] >= N_REFS)
            return fmi2Error;
        m->v[VR_OFFSET[vr[i]]] = value[i];
    }
    m->dirty = 1;
    return fmi2OK;
}

fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Boolean value[])
{
    Instance *m = c;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] >= N_REFS)
            return fmi2Error;
        m->v[VR_OFFSET[vr[i]]] = value[i] ? 1.0 : 0.0;
    }
    m->dirty = 1;
    return fmi2OK;
}

fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2String value[])
{
    (void)c; (void)vr; (void)value;
    return n ? fmi2Error : fmi2OK;
}

/* FMU states: not offered (canGetAndSetFMUstate is false) */
fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *s) { (void)c; (void)s; return fmi2Error; }
fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate s) { (void)c; (void)s; return fmi2Error; }
fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *s) { (void)c; (void)s; return fmi2Error; }
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
    Instance *m = c;
    fmi2Status s = refresh(m);
    for (size_t i = 0; i < nu; i++)
        out[i] = fmu_directional(m, VR_OFFSET[unknown[i]], known, seed, (int)nk);
    return s;
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
    fmi2Status s = refresh(m);
    int time_event = m->next_event_defined && m->time >= m->next_event_time;
    int again;
    fmi2Status u = (fmi2Status)fmu_update(m, time_event, &again);
    info->newDiscreteStatesNeeded = again;
    info->terminateSimulation = m->terminate;
    info->nominalsOfContinuousStatesChanged = fmi2False;
    info->valuesOfContinuousStatesChanged = m->states_changed;
    info->nextEventTimeDefined = m->next_event_defined;
    info->nextEventTime = m->next_event_time;
    return u > s ? u : s;
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
    Instance *m = c;
    *enter_event_mode = m->event_pending;
    *terminate = m->terminate;
    return fmi2OK;
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time)
{
    Instance *m = c;
    m->time = time;
    m->dirty = 1;
    return fmi2OK;
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx)
{
    Instance *m = c;
    for (size_t i = 0; i < nx && i < N_X; i++)
        m->v[STATE_OFF[i]] = x[i];
    m->dirty = 1;
    return fmi2OK;
}

fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real dx[], size_t nx)
{
    Instance *m = c;
    fmi2Status s = refresh(m);
    for (size_t i = 0; i < nx && i < N_X; i++)
        dx[i] = m->v[DER_OFF[i]];
    return s;
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real z[], size_t nz)
{
    Instance *m = c;
    fmi2Status s = refresh(m);
    double all[N_Z > 0 ? N_Z : 1];
    model_indicators(m, all);
    for (size_t i = 0; i < nz && i < N_Z; i++)
        z[i] = all[i];
    return s;
}

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx)
{
    Instance *m = c;
    for (size_t i = 0; i < nx && i < N_X; i++)
        x[i] = m->v[STATE_OFF[i]];
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
    Instance *m = c;
    fmi2Status s = refresh(m);
    double reached;
    fmi2Status d = (fmi2Status)fmu_step(m, t, h, &reached);
    m->dirty = 1;
    return d > s ? d : s;
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
