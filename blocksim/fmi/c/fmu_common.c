/* The part of an FMU that both FMI wrappers share: start values, the event update, the
 * co-simulation step, directional derivatives from the model's partials, the log. */
#include <stdarg.h>
#include <stdio.h>
#include "fmu_model.h"

void model_log(Instance *m, int status, const char *format, ...)
{
    char text[512];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    if (m->logger)
        m->logger(m, status, text);
}

void fmu_start_values(Instance *m)
{
    fmu_release(m);
    for (int i = 0; i < N_VARS; i++)
        m->v[i] = START_VALUES[i];
    m->time = 0.0;
    m->next_event_defined = m->states_changed = m->terminate = 0;
    m->next_event_time = 0.0;
    m->dirty = 1;
    m->mode = MODE_INSTANTIATED;
}

/* what the model keeps of its own, freed (a reset, the instance freed) */
void fmu_release(Instance *m)
{
#ifdef HAS_MODEL_DATA
    model_release(m);
#else
    (void)m;
#endif
}

int fmu_refresh(Instance *m)
{
    if (!m->dirty)
        return MODEL_OK;
    m->dirty = 0;
    m->v[V_time] = m->time;
    return model_values(m);
}

/* values by value reference (an array's elements in order) into out (at most nout);
   MODEL_ERROR for an unknown reference */
int fmu_get_values(Instance *m, const unsigned int *vr, size_t n, double *out, size_t nout)
{
    int status = fmu_refresh(m);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] >= N_REFS || k + VR_SIZE[vr[i]] > nout)
            return MODEL_ERROR;
        for (int j = 0; j < VR_SIZE[vr[i]]; j++)
            out[k++] = m->v[VR_OFFSET[vr[i]] + j];
    }
    return status;
}

int fmu_set_values(Instance *m, const unsigned int *vr, size_t n, const double *in, size_t nin)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] >= N_REFS || k + VR_SIZE[vr[i]] > nin)
            return MODEL_ERROR;
        if (VR_FIXED[vr[i]] && m->mode != MODE_INSTANTIATED && m->mode != MODE_INIT) {
            model_log(m, MODEL_ERROR, "%s is a fixed parameter: it can be set only before "
                      "initialisation ends", VR_NAME[vr[i]]);
            return MODEL_ERROR;
        }
        for (int j = 0; j < VR_SIZE[vr[i]]; j++)
            m->v[VR_OFFSET[vr[i]] + j] = in[k++];
    }
    m->dirty = 1;
    return MODEL_OK;
}

void fmu_set_time(Instance *m, double time)
{
    m->time = time;
    m->dirty = 1;
}

void fmu_set_states(Instance *m, const double *x, size_t n)
{
    for (size_t i = 0; i < n && i < N_X; i++)
        m->v[STATE_OFF[i]] = x[i];
    m->dirty = 1;
}

void fmu_get_states(Instance *m, double *x, size_t n)
{
    for (size_t i = 0; i < n && i < N_X; i++)
        x[i] = m->v[STATE_OFF[i]];
}

int fmu_get_derivatives(Instance *m, double *dx, size_t n)
{
    int status = fmu_refresh(m);
    for (size_t i = 0; i < n && i < N_X; i++)
        dx[i] = m->v[DER_OFF[i]];
    return status;
}

int fmu_get_indicators(Instance *m, double *z, size_t n)
{
    int status = fmu_refresh(m);
    double all[N_Z > 0 ? N_Z : 1];
    model_indicators(m, all);
    for (size_t i = 0; i < n && i < N_Z; i++)
        z[i] = all[i];
    return status;
}

/* the end of initialisation: values, then the first event (time events ahead) */
int fmu_exit_initialization(Instance *m)
{
    m->dirty = 1;
    int status = fmu_refresh(m);
    int again, update = fmu_update(m, 0, &again);
    m->mode = m->cosim ? MODE_STEP : MODE_EVENT;
    return update > status ? update : status;
}

/* newDiscreteStates: a time event when its time has come, the model's event update */
int fmu_discrete_states(Instance *m, int *again)
{
    int status = fmu_refresh(m);
    int time_event = m->next_event_defined && m->time >= m->next_event_time;
    int update = fmu_update(m, time_event, again);
    return update > status ? update : status;
}

/* one round of the event iteration: the model's event, then its values again; *again says
   whether another round is needed (never: models settle in one) */
int fmu_update(Instance *m, int time_event, int *again)
{
    m->states_changed = 0;
    m->next_event_defined = 0;
    int status = model_event(m, time_event);
    if (status > MODEL_WARNING)
        return status;
    int values = model_values(m);
    *again = 0;
    return values > status ? values : status;
}

#ifdef HAS_DO_STEP
int fmu_step(Instance *m, double t, double h, double *reached)
{
    int status = fmu_refresh(m);
    m->time = t;
    int step = model_do_step(m, h);
    *reached = m->time;
    m->dirty = 1;
    return step > status ? step : status;
}
#else
int fmu_step(Instance *m, double t, double h, double *reached)
{
    (void)t; (void)h;
    *reached = m->time;
    model_log(m, MODEL_ERROR, "this model has no co-simulation step");
    return MODEL_ERROR;
}
#endif

/* completedIntegratorStep: whether the model asks for a step event */
int fmu_completed_step(Instance *m, int *enter_event_mode)
{
    int status = fmu_refresh(m);
#ifdef HAS_STEP_EVENTS
    *enter_event_mode = model_step_event(m);
#else
    *enter_event_mode = 0;
#endif
    return status;
}

#ifdef HAS_PARTIALS
double fmu_directional(Instance *m, int unknown, const unsigned int *known, const double *seed,
                       int nknown)
{
    fmu_refresh(m);
    double sum = 0.0;
    for (int j = 0; j < nknown; j++)
        sum += model_partial(m, unknown, VR_OFFSET[known[j]]) * seed[j];
    return sum;
}
#endif
