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
    for (int i = 0; i < N_VARS; i++)
        m->v[i] = START_VALUES[i];
    m->time = 0.0;
    m->next_event_defined = m->states_changed = m->terminate = m->event_pending = 0;
    m->next_event_time = 0.0;
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
    m->time = t;
    int status = model_do_step(m, h);
    *reached = m->time;
    return status;
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

#ifdef HAS_PARTIALS
double fmu_directional(Instance *m, int unknown, const unsigned int *known, const double *seed,
                       int nknown)
{
    double sum = 0.0;
    for (int j = 0; j < nknown; j++)
        sum += model_partial(m, unknown, VR_OFFSET[known[j]]) * seed[j];
    return sum;
}
#endif
