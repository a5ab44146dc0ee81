"""The fmu block: its cost per step in normal and accelerated mode against fmpy's own
simulate_fmu on the same FMU.

    pip install -e ".[fast,test]"        # fmpy comes with the test extra (or the fmi extra)
    python benchmarks/fmu.py [--repeat N] [--steps N]

The FMUs are built here from the tests' C models (tests/fmu/models) with blocksim.fmi.build,
FMI 2.0: Van der Pol (2 states, model exchange) and the lag (co-simulation). Every row
integrates the same FMU over the same number of fixed steps of the same size:

- model exchange, forward Euler (one derivative evaluation per step, the one fixed-step
  solver fmpy's simulate_fmu has besides CVode): fmpy (`solver="Euler"`), blocksim normal
  mode, blocksim accelerated mode (compile excluded, reported); and blocksim's RK4 (four
  evaluations per step) in both modes;
- model exchange, adaptive: fmpy's CVode against blocksim's rk45 and radau at rtol 1e-6,
  cost per derivative evaluation (different steppers take different steps);
- co-simulation: one doStep per communication step, fmpy against blocksim's block in both
  modes.

CPU time (process_time), the median of --repeat runs; ratios within this one run. Every
blocksim row records every step (results in memory, no files), fmpy records every
output_interval (= the step), as its default recorder does.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CLOCK = time.process_time

import blocksim  # noqa: E402
from blocksim.accel.mode import simulate_model  # noqa: E402
from blocksim.fmi.build import build_fmu, model_from_yaml  # noqa: E402

MODELS = ROOT / "tests" / "fmu" / "models"


def timed(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        t0 = CLOCK()
        out = fn()
        times.append(CLOCK() - t0)
    return statistics.median(times), out


def blocksim_run(path, mode, repeat, count="nsteps"):
    """(seconds per run, steps (or `count`), compile seconds) of the diagram in `mode`."""
    model = blocksim.load(path, [f"simulation.mode={mode}"])
    _, _, first = simulate_model(model)  # the first run compiles (accelerated) or warms up
    seconds, (_, _, info) = timed(lambda: simulate_model(model), repeat)
    if mode == "accelerated":
        assert info["mode"]["mode"] == "accelerated", info["mode"]
    # the compiler runs in a child process: its time is the wall time meta.json reports
    compile_s = first["mode"].get("compile_time", 0.0) if mode == "accelerated" else 0.0
    return seconds, info["stats"][count], compile_s


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--steps", type=int, default=20000)
    args = p.parse_args()
    from fmpy import simulate_fmu
    import fmpy
    tmp = Path(tempfile.mkdtemp(prefix="blocksim-fmu-bench-"))
    os.environ["BLOCKSIM_CACHE_DIR"] = str(tmp / "cache")  # compile times measured, not cached
    vdp = build_fmu(model_from_yaml(MODELS / "vanderpol.yaml"), tmp / "vanderpol.fmu", 2)
    lag = build_fmu(model_from_yaml(MODELS / "lag.yaml"), tmp / "lag.fmu", 2)
    n, stop = args.steps, 20.0
    h = stop / n
    rows = []

    def diagram(name, text):
        path = tmp / f"{name}.yaml"
        path.write_text(text)
        return path

    # -- model exchange, fixed steps
    seconds, _ = timed(lambda: simulate_fmu(str(vdp), stop_time=stop, solver="Euler",
                                            step_size=h, output_interval=h), args.repeat)
    rows.append(("ME fixed", "fmpy Euler", n, seconds, 0.0))
    for solver in ("euler", "rk4"):
        path = diagram(f"vdp_{solver}", f"""blocksim: 1
name: vdp_{solver}
blocks:
  V: {{type: fmu, file: {vdp}}}
simulation: {{stop: {stop}, solver: {solver}, step: {h}}}
record: {{x0: V.x0, x1: V.x1}}
""")
        for mode in ("normal", "accelerated"):
            seconds, steps, compile_s = blocksim_run(path, mode, args.repeat)
            rows.append(("ME fixed", f"blocksim {solver} {mode}", steps, seconds, compile_s))
    # -- model exchange, adaptive: cost per derivative evaluation (different steppers)
    evals = [0]

    def count(message):
        evals[0] += message.startswith("fmi2GetDerivatives")
    simulate_fmu(str(vdp), stop_time=stop, relative_tolerance=1e-6, output_interval=stop / 200,
                 fmi_call_logger=count)
    seconds, _ = timed(lambda: simulate_fmu(str(vdp), stop_time=stop, relative_tolerance=1e-6,
                                            output_interval=stop / 200), args.repeat)
    rows.append(("ME adaptive", "fmpy CVode (rtol 1e-6)", evals[0], seconds, 0.0))
    for solver in ("rk45", "radau"):
        path = diagram(f"vdp_{solver}", f"""blocksim: 1
name: vdp_{solver}
blocks:
  V: {{type: fmu, file: {vdp}}}
simulation: {{stop: {stop}, solver: {solver}, rtol: 1e-6, atol: 1e-9}}
record: {{x0: V.x0, x1: V.x1}}
""")
        for mode in ("normal", "accelerated") if solver == "rk45" else ("normal",):
            seconds, nfev, compile_s = blocksim_run(path, mode, args.repeat, "nfev")
            rows.append(("ME adaptive", f"blocksim {solver} {mode}", nfev, seconds, compile_s))
    # -- co-simulation
    signal = np.array([(0.0, 1.0), (stop, 1.0)], dtype=[("time", float), ("u", float)])
    seconds, _ = timed(lambda: simulate_fmu(str(lag), fmi_type="CoSimulation", stop_time=stop,
                                            output_interval=h, input=signal), args.repeat)
    rows.append(("CS doStep", "fmpy", n, seconds, 0.0))
    path = diagram("lag_cs", f"""blocksim: 1
name: lag_cs
blocks:
  U: {{type: constant, value: 1.0}}
  L: {{type: fmu, file: {lag}, interface: co_simulation, step: {h}}}
wires: [U -> L.u]
simulation: {{stop: {stop}, output_interval: {h}}}
record: {{y: L.y}}
""")
    for mode in ("normal", "accelerated"):
        seconds, _, compile_s = blocksim_run(path, mode, args.repeat)
        rows.append(("CS doStep", f"blocksim {mode}", n, seconds, compile_s))

    print(f"FMU block cost per step: fmpy {fmpy.__version__}, {n} steps over {stop:g} s unless "
          f"adaptive, median of {args.repeat} (CPU time)\n")
    print(f"{'work':<12} {'who':<30} {'steps':>7} {'run (s)':>9} {'us/step':>9} "
          f"{'vs fmpy':>8} {'compile (s)':>12}")
    fmpy_rows = {work: (steps, s) for work, who, steps, s, _ in rows if who.startswith("fmpy")}
    for work, who, steps, seconds, compile_s in rows:
        per_step = seconds / max(steps, 1)
        ref_steps, ref_s = fmpy_rows[work]
        ratio = (ref_s / ref_steps) / per_step
        compiled = f"{compile_s:>12.2f}" if compile_s else ""
        print(f"{work:<12} {who:<30} {steps:>7} {seconds:>9.4f} {per_step * 1e6:>9.2f} "
              f"{ratio:>7.1f}x {compiled}")
    print("\nvs fmpy: fmpy's time per step over this row's (above 1: faster than fmpy). "
          "ME adaptive counts derivative evaluations, not steps (CVode and the Runge-Kutta "
          "and Radau steppers take different steps). compile: the first run's extra time "
          "(C generated and compiled, FMU unpacked), cache empty.")


if __name__ == "__main__":
    main()
