/* A sawtooth with an internal event, for co-simulation: x' = rate, and when x reaches 1 it
   drops to 0 and `count` goes up by 1 (at t = k / rate from x = 0). doStep steps it exactly;
   where the importer allows early return (FMI 3.0) it returns at the event, the values just
   after it, else it handles the event inside the step and goes on to its end. */
#include "fmu_model.h"

int model_values(Instance *m)
{
    m->v[V_der_x] = m->v[V_rate];
    return MODEL_OK;
}

void model_indicators(Instance *m, double *z) { (void)m; (void)z; }

int model_event(Instance *m, int time_event) { (void)m; (void)time_event; return MODEL_OK; }

int model_do_step(Instance *m, double h)
{
    double *v = m->v, end = m->time + h;
    for (;;) {
        double to_event = (1.0 - v[V_x]) / v[V_rate];
        if (m->time + to_event > end) {  /* a drop at the step's end is made there */
            v[V_x] += v[V_rate] * (end - m->time);
            m->time = end;
            return model_values(m);
        }
        m->time = m->time + to_event < end ? m->time + to_event : end;
        v[V_x] = 0.0;
        v[V_count] += 1.0;
        if (m->early_return && m->time < end)
            return model_values(m);
    }
}
