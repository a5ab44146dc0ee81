"""msd.yaml in Collimator (pycollimator), its spring constant over a grid by jax.jit(jax.vmap):
the peer of benchmarks/run_interface.py's grid row, run by it in a process of its own.

    python benchmarks/collimator_msd.py N      # prints {"per_run_ms": ..., "compile_s": ...}

pycollimator 2.2 pins numpy < 2 and jax 0.4.26: install it in a virtual environment of its
own (`pip install pycollimator`), whose python run_interface.py's --collimator names.
The same diagram (the force step at t = 1 as Collimator's Step block), dopri5 at msd's
tolerances and largest step (rtol 1e-6, atol 1e-9, max step 0.4: Collimator's
max_major_step_length), 20 s. What differs: Collimator's recording cannot run under vmap
(its results buffer is written by io_callback: 'IO effect not supported in vmap-of-while'),
so each run gives its final x, not max(x), and its steps are its own controller's (it does
not stop at the force step).
"""
import json
import sys
import time

import jax
import jax.numpy as jnp

import collimator
from collimator import DiagramBuilder, Parameter, SimulatorOptions, library

jax.config.update("jax_enable_x64", True)


def msd():
    """(diagram, its context, the Position block) with the spring constant a Parameter k."""
    b = DiagramBuilder()
    k = Parameter(name="k", value=4.0)
    force = b.add(library.Step(start_value=0.0, end_value=1.0, step_time=1.0, name="Force"))
    total = b.add(library.Adder(3, operators="+--", name="Sum"))
    inv_mass = b.add(library.Gain(1.0, name="InvMass"))
    velocity = b.add(library.Integrator(0.0, name="Velocity"))
    position = b.add(library.Integrator(0.0, name="Position"))
    damping = b.add(library.Gain(0.4, name="Damping"))
    spring = b.add(library.Gain(k, name="Spring"))
    for src, dst in ((force, (total, 0)), (damping, (total, 1)), (spring, (total, 2)),
                     (total, (inv_mass, 0)), (inv_mass, (velocity, 0)),
                     (velocity, (position, 0)), (velocity, (damping, 0)),
                     (position, (spring, 0))):
        b.connect(src.output_ports[0], dst[0].input_ports[dst[1]])
    diagram = b.build(parameters={"k": k})
    return diagram, diagram.create_context()


def main():
    n = int(sys.argv[1])
    diagram, context = msd()
    options = SimulatorOptions(rtol=1e-6, atol=1e-9, max_major_step_length=0.4,
                               ode_solver_method="dopri5", max_major_steps=200)
    simulator = collimator.Simulator(diagram, options=options)

    def final_x(k):
        end = simulator.advance_to(20.0, context.with_parameter("k", k))
        return end.context.continuous_state[1]  # [Velocity, Position]

    sweep = jax.jit(jax.vmap(final_x))
    ks = jnp.linspace(1.0, 10.0, n)
    t0 = time.perf_counter()
    sweep(ks).block_until_ready()
    compile_s = time.perf_counter() - t0
    runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        x = sweep(ks).block_until_ready()
        runs.append(time.perf_counter() - t0)
    print(json.dumps({"per_run_ms": 1e3 * min(runs) / n, "compile_s": compile_s,
                      "x_at_k1": float(x[0])}))


if __name__ == "__main__":
    main()
