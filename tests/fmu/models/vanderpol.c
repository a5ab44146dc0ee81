/* The Van der Pol oscillator x0' = x1, x1' = mu (1 - x0^2) x1 - x0. */
#include "fmu_model.h"

int model_values(Instance *m)
{
    double *v = m->v;
    v[V_der_x0] = v[V_x1];
    v[V_der_x1] = v[V_mu] * (1.0 - v[V_x0] * v[V_x0]) * v[V_x1] - v[V_x0];
    return MODEL_OK;
}

void model_indicators(Instance *m, double *z) { (void)m; (void)z; }

int model_event(Instance *m, int time_event) { (void)m; (void)time_event; return MODEL_OK; }

double model_partial(Instance *m, int unknown, int known)
{
    if (unknown == known)  /* an output that is a state */
        return 1.0;
    double *v = m->v;
    if (unknown == V_der_x0)
        return known == V_x1 ? 1.0 : 0.0;
    if (unknown == V_der_x1 && known == V_x0)
        return -2.0 * v[V_mu] * v[V_x0] * v[V_x1] - 1.0;
    if (unknown == V_der_x1 && known == V_x1)
        return v[V_mu] * (1.0 - v[V_x0] * v[V_x0]);
    return 0.0;
}
