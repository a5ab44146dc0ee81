/* A DC motor as an FMU (blocksim's model contract, blocksim/fmi/c/fmu_model.h): armature
   current i, speed w and angle theta driven by the voltage V against a load torque:
       L di/dt = V - R i - K w,   J dw/dt = K i - b w - tau_load,   dtheta/dt = w.
   Its partial derivatives are exact, so importers get its Jacobian (linearisation,
   implicit solvers) from the FMU's directional derivatives. */
#include "fmu_model.h"

int model_values(Instance *m)
{
    double *v = m->v;
    v[V_der_i] = (v[V_V] - v[V_R] * v[V_i] - v[V_K] * v[V_w]) / v[V_L];
    v[V_der_w] = (v[V_K] * v[V_i] - v[V_b] * v[V_w] - v[V_tau_load]) / v[V_J];
    v[V_der_theta] = v[V_w];
    v[V_speed] = v[V_w];
    v[V_angle] = v[V_theta];
    v[V_current] = v[V_i];
    return MODEL_OK;
}

void model_indicators(Instance *m, double *z) { (void)m; (void)z; }

int model_event(Instance *m, int time_event) { (void)m; (void)time_event; return MODEL_OK; }

double model_partial(Instance *m, int unknown, int known)
{
    const double *v = m->v;
    if (unknown == V_der_i)
        return known == V_V ? 1.0 / v[V_L] : known == V_i ? -v[V_R] / v[V_L]
             : known == V_w ? -v[V_K] / v[V_L] : 0.0;
    if (unknown == V_der_w)
        return known == V_i ? v[V_K] / v[V_J] : known == V_w ? -v[V_b] / v[V_J]
             : known == V_tau_load ? -1.0 / v[V_J] : 0.0;
    if (unknown == V_der_theta || unknown == V_speed)
        return known == V_w ? 1.0 : 0.0;
    if (unknown == V_angle)
        return known == V_theta ? 1.0 : 0.0;
    if (unknown == V_current)
        return known == V_i ? 1.0 : 0.0;
    return 0.0;
}
