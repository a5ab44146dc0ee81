/* blocksim's FMU model contract: what a model's C file defines, and the instance both FMI
 * wrappers (fmi2.c, fmi3.c) keep. One model source serves FMI 2.0 and 3.0, model exchange
 * and co-simulation; blocksim/fmi/build.py writes model_vars.h (the variables' value
 * references V_<name>, N_VARS, the states and their derivatives, the event indicators,
 * the start values) from the model's description and compiles the model with a wrapper.
 *
 * Every variable is a double in `v` at offset V_<name> (an array's elements follow its
 * first; integer and boolean variables hold whole numbers); VR_OFFSET and VR_SIZE map a
 * value reference to its place. A model computes, from the states, inputs, parameters and
 * time in `v`, everything else (derivatives, outputs) in model_values; its event
 * indicators in model_indicators; what happens at an event in model_event (discrete
 * variables, state resets, the next time event). A status other than MODEL_OK (with a
 * message through model_log) is the FMU's error.
 */
#ifndef BLOCKSIM_FMU_MODEL_H
#define BLOCKSIM_FMU_MODEL_H

#include <stddef.h>
#include "model_vars.h"

enum { MODEL_OK = 0, MODEL_WARNING = 1, MODEL_DISCARD = 2, MODEL_ERROR = 3 };
enum { MODE_INSTANTIATED, MODE_INIT, MODE_EVENT, MODE_CONTINUOUS, MODE_STEP, MODE_TERMINATED };

typedef struct Instance {
    double v[N_VARS > 0 ? N_VARS : 1];
    double time;
    int mode, cosim;
    int early_return;  /* FMI 3.0 co-simulation: the importer lets doStep return early */
    /* what an event left: a time event ahead, states reset, asked to stop */
    int next_event_defined, states_changed, terminate;
    int dirty;  /* inputs, states or time set since model_values last ran */
    double next_event_time;
    double z_prev[N_Z > 0 ? N_Z : 1];  /* co-simulation: indicators before a substep */
    /* the importer's logger */
    void (*logger)(struct Instance *m, int status, const char *message);
    void *env, *logger_fn, *instance_name;
    void *model_data;  /* the model's own (HAS_MODEL_DATA: an exported diagram's run) */
} Instance;

/* the model's own functions */
int model_values(Instance *m);
void model_indicators(Instance *m, double *z);
int model_event(Instance *m, int time_event);
/* optional (HAS_PARTIALS in model_vars.h): d(unknown)/d(known) at the current values, both
   given as offsets into v */
double model_partial(Instance *m, int unknown, int known);
/* optional (HAS_DO_STEP): advance a co-simulation by h, inputs held (the FMU then offers
   co-simulation); m->time is where it got to, before t + h only when early_return allows
   (doStep then returns early there) */
int model_do_step(Instance *m, double h);
/* optional (HAS_STEP_EVENTS): after an accepted integrator step, whether the model needs an
   event there (a step event: completedIntegratorStep's enterEventMode) */
int model_step_event(Instance *m);

/* optional (HAS_MODEL_DATA): free what the model keeps in model_data and set it to NULL
   (at a reset and when the instance is freed) */
void model_release(Instance *m);

/* for models: log a line at a status (printf format) */
void model_log(Instance *m, int status, const char *format, ...);

/* the wrappers' shared part (fmu_common.c): what FMI 2.0 and 3.0 do alike, on doubles */
void fmu_start_values(Instance *m);
void fmu_release(Instance *m);
int fmu_refresh(Instance *m);
int fmu_get_values(Instance *m, const unsigned int *vr, size_t n, double *out, size_t nout);
int fmu_set_values(Instance *m, const unsigned int *vr, size_t n, const double *in, size_t nin);
void fmu_set_time(Instance *m, double time);
void fmu_set_states(Instance *m, const double *x, size_t n);
void fmu_get_states(Instance *m, double *x, size_t n);
int fmu_get_derivatives(Instance *m, double *dx, size_t n);
int fmu_get_indicators(Instance *m, double *z, size_t n);
int fmu_exit_initialization(Instance *m);
int fmu_discrete_states(Instance *m, int *again);
int fmu_update(Instance *m, int time_event, int *again);
int fmu_step(Instance *m, double t, double h, double *reached);
int fmu_completed_step(Instance *m, int *enter_event_mode);
double fmu_directional(Instance *m, int unknown, const unsigned int *known, const double *seed,
                       int nknown);

#endif
