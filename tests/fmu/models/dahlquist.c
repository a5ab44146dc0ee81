/* Dahlquist's test equation x' = -k x; after fail_time the derivative reports an error
   (the importer's fault handling is tested with it). */
#include "fmu_model.h"

int model_values(Instance *m)
{
    double *v = m->v;
    v[V_der_x] = -v[V_k] * v[V_x];
    if (m->time > v[V_fail_time]) {
        model_log(m, MODEL_ERROR, "x = %g left the model's range at t = %g", v[V_x], m->time);
        return MODEL_ERROR;
    }
    return MODEL_OK;
}

void model_indicators(Instance *m, double *z) { (void)m; (void)z; }

int model_event(Instance *m, int time_event) { (void)m; (void)time_event; return MODEL_OK; }

double model_partial(Instance *m, int unknown, int known)
{
    if (unknown == known)  /* an output that is a state */
        return 1.0;
    if (unknown == V_der_x && known == V_x)
        return -m->v[V_k];
    if (unknown == V_der_x && known == V_k)
        return -m->v[V_x];
    return 0.0;
}
