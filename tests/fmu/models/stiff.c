/* A stiff linear system with eigenvalues -1 and -k (eigenvectors [1, 1] and [1, -1]):
       x1' = -(1 + k)/2 x1 + (k - 1)/2 x2 + u,   x2' = (k - 1)/2 x1 - (1 + k)/2 x2.
   With u = 0 and x(0) = (2, 0): x1 = exp(-t) + exp(-k t), x2 = exp(-t) - exp(-k t). */
#include "fmu_model.h"

int model_values(Instance *m)
{
    double *v = m->v, slow = -(1.0 + v[V_k]) / 2.0, coupling = (v[V_k] - 1.0) / 2.0;
    v[V_der_x1] = slow * v[V_x1] + coupling * v[V_x2] + v[V_u];
    v[V_der_x2] = coupling * v[V_x1] + slow * v[V_x2];
    return MODEL_OK;
}

void model_indicators(Instance *m, double *z) { (void)m; (void)z; }

int model_event(Instance *m, int time_event) { (void)m; (void)time_event; return MODEL_OK; }

double model_partial(Instance *m, int unknown, int known)
{
    if (unknown == known)  /* an output that is a state */
        return 1.0;
    double k = m->v[V_k];
    if (unknown != V_der_x1 && unknown != V_der_x2)
        return 0.0;
    if (known == V_u)
        return unknown == V_der_x1 ? 1.0 : 0.0;
    if (known == V_x1)
        return unknown == V_der_x1 ? -(1.0 + k) / 2.0 : (k - 1.0) / 2.0;
    if (known == V_x2)
        return unknown == V_der_x1 ? (k - 1.0) / 2.0 : -(1.0 + k) / 2.0;
    return 0.0;
}
