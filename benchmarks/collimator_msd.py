"""msd.yaml in Collimator (pycollimator): the peer of benchmarks/run_interface.py's grid row
(its spring constant over a grid, in one jitted call) and of its set + execute row (one jitted
call with a new spring constant), run by run_interface.py in a process of its own.

    python benchmarks/collimator_msd.py N                # prints one line of JSON
    python benchmarks/collimator_msd.py N --as-shipped   # jit(vmap), its host callback kept

pycollimator 2.2 pins numpy < 2 and jax 0.4.26: install it in a virtual environment of its
own (`pip install pycollimator`), whose python run_interface.py's --collimator names.

The same diagram (the force step at t = 1 as Collimator's Step block, whose timed event ends a
major step there as our solver lands on it), dopri5 at msd's tolerances (rtol 1e-6, atol
1e-9, x64) and largest step (0.4 s, as Collimator's max_minor_step_size: the solver's step
limit, as ours; max_major_step_length would instead cut the run into 0.4 s major steps), 20 s.

The fairest configuration, chosen by measuring the alternatives (figures in the commits):
- Collimator's dopri5 calls a host callback (jax.debug.callback, checking for a step size
  shrinking to nothing) on every step attempt, and JAX's vmap unrolls it into one callback
  per lane: 1,000 host calls per step attempt of a 1,000-value grid, 98 % of the time (2.4-2.6
  ms of processor time per run instead of 0.04) and 12-27 s of compiling. The check only
  raises for a diverging solution and changes no number (the answers are the same bits with
  and without it), and no option turns it off, so it is replaced by a no-op here: a user
  running grids would. `--as-shipped` measures jit(vmap) with it.
- The grid in jax.jit(jax.lax.map) and in jax.jit(jax.vmap) (the issue's figure): vmap runs
  its lanes in lock step until the last is done (a while loop over all lanes, every lane
  paying for the slowest lane's steps), lax.map one after the other, each stopping when done.
  Both are measured, interleaved; per_run_ms is the faster's median wall time (lax.map on
  this machine), per_run_cpu_ms its processor time.
- Returning only the final state (return_context False changes nothing measurable); the
  Simulator's advance_to, not collimator.simulate (the same loop plus a callback per lane
  after it: slower to compile, no faster).
- Tried and no faster: XLA's single-threaded CPU flags; the numpy backend (enable_tracing
  False: 0.85 s a run). Not the same problem: a source with no timed event in place of the
  Step block (the solver steps through the force step instead of landing on it).
- The single call: jax.jit of one run, called with a new spring constant (a Python float: no
  recompiling), returning the final state (call_ms), and recording x, v and F at every step
  and trimming them to arrays as our execute does (call_record_ms: Collimator records by a
  host callback per step); processor time, as our row's.
What differs from ours: recording cannot run under vmap (its buffer is written by io_callback:
'IO effect not supported in vmap-of-while'), so a grid run gives its final x, not max(x) over
its steps; its steps are its own controller's (it never shrinks the step after an accepted
one, so it takes more steps and rejects more: 132 and 64 rejected for k = 1, ours 89 and 12).
"""
import importlib
import json
import statistics
import sys
import time

import jax
import jax.numpy as jnp

import collimator
from collimator import DiagramBuilder, Parameter, SimulatorOptions, library

jax.config.update("jax_enable_x64", True)

OPTIONS = dict(rtol=1e-6, atol=1e-9, max_minor_step_size=0.4, ode_solver_method="dopri5",
               max_major_steps=200)


def msd():
    """(diagram, its context, {name: output port recorded}) with the spring constant a
    Parameter k."""
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
    record = {"x": position.output_ports[0], "v": velocity.output_ports[0],
              "F": force.output_ports[0]}
    return diagram, diagram.create_context(), record


def without_step_check():
    """Replace dopri5's per-attempt host callback (see the docstring) by a no-op."""
    dopri5 = importlib.import_module("collimator.backend._jax.dopri5")
    assert callable(dopri5.error_step_size_too_small), "pycollimator changed: look again"
    dopri5.error_step_size_too_small = lambda *args: None


def timed(fn):
    """(wall, processor) seconds of fn() to its result."""
    t0, c0 = time.perf_counter(), time.process_time()
    jax.block_until_ready(fn())
    return time.perf_counter() - t0, time.process_time() - c0


def main():
    n = int(sys.argv[1])
    as_shipped = "--as-shipped" in sys.argv[2:]
    if not as_shipped:
        without_step_check()
    diagram, context, record = msd()
    simulator = collimator.Simulator(diagram, options=SimulatorOptions(**OPTIONS))

    def final_x(k):
        end = simulator.advance_to(20.0, context.with_parameter("k", k))
        return end.context.continuous_state[1]  # [Velocity, Position]

    ks = jnp.linspace(1.0, 10.0, n)
    sweeps = {"vmap": jax.jit(jax.vmap(final_x))}
    if not as_shipped:
        sweeps["map"] = jax.jit(lambda ks: jax.lax.map(final_x, ks))
    compile_s = {name: timed(lambda: sweep(ks))[0] for name, sweep in sweeps.items()}
    runs = {name: [] for name in sweeps}
    for _ in range(5):  # interleaved: the machine's load falls on both alike
        for name, sweep in sweeps.items():
            runs[name].append(timed(lambda: sweep(ks)))
    per_run = {name: [1e3 * statistics.median(t) / n for t in zip(*r)]  # [wall, CPU]
               for name, r in runs.items()}
    x = {name: sweep(ks) for name, sweep in sweeps.items()}
    fastest = min(per_run, key=per_run.get)
    out = {"per_run_ms": per_run[fastest][0], "per_run_cpu_ms": per_run[fastest][1],
           "fastest": fastest, "vmap_ms": per_run["vmap"][0], "vmap_cpu_ms": per_run["vmap"][1],
           "compile_s": compile_s[fastest], "x_at_k1": float(x[fastest][0]),
           "patched": not as_shipped}
    if not as_shipped:
        assert abs(float(x["map"][0]) - float(x["vmap"][0])) < 1e-12, x
        out.update(single_calls(diagram, context, record, final_x))
    print(json.dumps(out))


def single_calls(diagram, context, record, final_x):
    """{call_ms, call_record_ms}: one jitted run with a new spring constant each call,
    median processor time per call."""
    recording = collimator.Simulator(diagram, options=SimulatorOptions(
        **OPTIONS, save_time_series=True, recorded_signals=record, buffer_length=1000))
    calls = {"call_ms": (jax.jit(final_x), float),
             "call_record_ms": (jax.jit(lambda k: recording.advance_to(
                 20.0, context.with_parameter("k", k)).results_data),
                 lambda data: data.finalize())}
    found = {}
    for name, (call, finish) in calls.items():
        finish(call(4.0))  # compiled here
        runs = []
        for _ in range(5):
            t0 = time.process_time()  # as run_interface.py's set + execute row
            for i in range(100):
                finish(call(3.0 + i / 100))
            runs.append((time.process_time() - t0) / 100)
        found[name] = 1e3 * statistics.median(runs)
    return found


if __name__ == "__main__":
    main()
