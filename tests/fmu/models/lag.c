/* A first-order lag x' = (u - x) / tau, y = x. Co-simulation steps it exactly with u held
   over the step: x(t + h) = u + (x(t) - u) exp(-h / tau). */
#include <math.h>
#include "fmu_model.h"

int model_values(Instance *m)
{
    double *v = m->v;
    v[V_der_x] = (v[V_u] - v[V_x]) / v[V_tau];
    v[V_y] = v[V_x];
    return MODEL_OK;
}

void model_indicators(Instance *m, double *z) { (void)m; (void)z; }

int model_event(Instance *m, int time_event) { (void)m; (void)time_event; return MODEL_OK; }

int model_do_step(Instance *m, double h)
{
    double *v = m->v;
    v[V_x] = v[V_u] + (v[V_x] - v[V_u]) * exp(-h / v[V_tau]);
    m->time += h;
    return model_values(m);
}
