"""ODE steppers driven one accepted step at a time by the simulator.

    stepper = make_stepper(name, fun, t0, y0, t_bound, rtol=, atol=, max_step=, step=, origin=)
    stepper.step()                 # one accepted step toward t_bound, landing on it exactly
    stepper.t, stepper.y           # current point (y is the stepper's buffer: copy to keep)
    stepper.dense(t)               # interpolant of the last step, t in [t_old, t]
    stepper.restart(t, y, t_bound) # continue after an event (caches dropped, step size kept)
    stepper.nfev, .nsteps, .nrejected

`fun(t, y)` returns dy/dt with the shape of y (it may return the same buffer every call and
must not keep y, which is a scratch buffer). Integration runs forward only. Fixed-step
methods use `step` and `origin` (default t0) and ignore the tolerances; adaptive ones use
`rtol`, `atol`, `max_step` and ignore `step`, `origin`. The implicit ones (IMPLICIT) take
`jac(t, y)`, the matrix d(dy/dt)/dy, where it is known (else they difference `fun`); the
others ignore it. Failures raise `SolverError`.
"""
from __future__ import annotations

import math

from .adaptive_rk import Dop853, EmbeddedRK
from .base import SolverError, StepBudgetError, StiffnessError, Stepper
from .fixed_step import FixedStepRK
from .tableaus import BS23, DOP853, DP54, EULER, HEUN, RK4

FIXED_STEP = ("euler", "rk2", "rk4")
IMPLICIT = ("radau", "bdf", "lsoda")  # scipy's: they take the state Jacobian
SOLVERS = FIXED_STEP + ("rk23", "rk45", "dop853") + IMPLICIT

_FIXED = {"euler": EULER, "rk2": HEUN, "rk4": RK4}
_EMBEDDED = {"rk23": (EmbeddedRK, BS23), "rk45": (EmbeddedRK, DP54), "dop853": (Dop853, DOP853)}

__all__ = ["make_stepper", "SOLVERS", "FIXED_STEP", "IMPLICIT", "SolverError", "StepBudgetError",
           "StiffnessError", "Stepper"]


def make_stepper(name, fun, t0, y0, t_bound, *, rtol=1e-3, atol=1e-6, max_step=math.inf,
                 step=None, origin=None, max_steps=math.inf, t_final=None, jac=None):
    """A stepper of method `name` (one of SOLVERS) for y' = fun(t, y), y(t0) = y0, up to
    t_bound. `step` is required by the fixed-step methods. At most `max_steps` accepted steps
    in all (`StepBudgetError`); the adaptive explicit methods stop earlier, with a
    `StiffnessError`, once the problem shows itself stiff and the steps still needed to
    reach `t_final` (default t_bound) would exceed `max_steps`. `jac`: the implicit methods'
    Jacobian (None: they difference `fun`)."""
    if name in _FIXED:
        if step is None:
            raise ValueError(f"solver {name!r} is fixed-step and needs `step`")
        stepper = FixedStepRK(name, _FIXED[name], fun, t0, y0, t_bound, step,
                              t0 if origin is None else origin)
    elif name in _EMBEDDED:
        cls, tableau = _EMBEDDED[name]
        stepper = cls(name, tableau, fun, t0, y0, t_bound, rtol, atol, max_step)
    elif name in SOLVERS:
        from .scipy_backed import ScipyStepper
        stepper = ScipyStepper(name, fun, t0, y0, t_bound, rtol, atol, max_step, jac)
    else:
        raise ValueError(f"unknown solver {name!r}; expected one of {', '.join(SOLVERS)}")
    stepper.max_steps = max_steps
    stepper.t_final = float(t_bound if t_final is None else t_final)
    return stepper
