/* A ball dropped from h: h' = v, v' = -g; at the floor (event indicator h, falling) it
   bounces, v <- -e v; an impact slower than v_min leaves it at rest on the floor (which it
   logs as a warning: the importer's handling of an FMU's log is tested with it). */
#include "fmu_model.h"

int model_values(Instance *m)
{
    double *v = m->v;
    v[V_der_h] = v[V_v];
    v[V_der_v] = v[V_resting] != 0.0 ? 0.0 : -v[V_g];
    return MODEL_OK;
}

void model_indicators(Instance *m, double *z)
{
    z[0] = m->v[V_resting] != 0.0 ? 1.0 : m->v[V_h];
}

int model_event(Instance *m, int time_event)
{
    (void)time_event;
    double *v = m->v;
    if (v[V_resting] == 0.0 && v[V_h] <= 0.0 && v[V_v] < 0.0) {
        v[V_v] = -v[V_e] * v[V_v];
        v[V_bounces] += 1.0;
        if (v[V_v] < v[V_v_min]) {
            v[V_v] = 0.0;
            v[V_h] = 0.0;
            v[V_resting] = 1.0;
            model_log(m, MODEL_WARNING, "the ball comes to rest at t = %g", m->time);
        }
        m->states_changed = 1;
    }
    return MODEL_OK;
}
