/* A stair: the output steps up by one at t = 1, 2, 3, ... (time events), and x integrates
   it, x' = step. */
#include <math.h>
#include "fmu_model.h"

int model_values(Instance *m)
{
    m->v[V_der_x] = m->v[V_step];
    return MODEL_OK;
}

void model_indicators(Instance *m, double *z) { (void)m; (void)z; }

int model_event(Instance *m, int time_event)
{
    if (time_event)
        m->v[V_step] += 1.0;
    m->next_event_defined = 1;
    m->next_event_time = floor(m->time) + 1.0;
    return MODEL_OK;
}
