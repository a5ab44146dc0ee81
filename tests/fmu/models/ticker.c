/* x' = rate; after every accepted integrator step at which x has reached `next`, a step
   event (completedIntegratorStep asks for one) counts it and moves `next` on by 1. */
#include "fmu_model.h"

int model_values(Instance *m)
{
    m->v[V_der_x] = m->v[V_rate];
    return MODEL_OK;
}

void model_indicators(Instance *m, double *z) { (void)m; (void)z; }

int model_step_event(Instance *m) { return m->v[V_x] >= m->v[V_next]; }

int model_event(Instance *m, int time_event)
{
    (void)time_event;
    if (m->v[V_x] >= m->v[V_next]) {
        m->v[V_count] += 1.0;
        m->v[V_next] += 1.0;
    }
    return MODEL_OK;
}
