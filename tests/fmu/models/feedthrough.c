/* y = enabled ? gain u + n : 0, element-wise over the two inputs (direct feedthrough, no state). */
#include "fmu_model.h"

int model_values(Instance *m)
{
    double *v = m->v;
    for (int i = 0; i < 2; i++)
        v[V_y + i] = v[V_enabled] != 0.0 ? v[V_gain] * v[V_u + i] + v[V_n] : 0.0;
    return MODEL_OK;
}

void model_indicators(Instance *m, double *z) { (void)m; (void)z; }

int model_event(Instance *m, int time_event) { (void)m; (void)time_event; return MODEL_OK; }
