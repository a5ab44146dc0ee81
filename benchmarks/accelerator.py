"""Accelerated mode against normal mode and against hand-written peers (issue 24's table).

    pip install -e ".[fast]"                 # numba, for the hand-written numba peers
    python benchmarks/accelerator.py [--steps 1000000] [--sweep-runs 1000] [--mc-runs 10000]

Sections, each printed as a table, side by side in one run (ratios are what to compare: the
machine is shared; its load average is printed), then issue 24's table, every row:

- compile: the compiler backend, measured on a generated 20-block diagram (a sine through
  six first-order lags in a chain, each a gain, a sum and an integrator, and a scope):
  generated C through the system compiler (codegen + cc -O2, into an empty cache; then the
  cached start: a new process's load of the cached library, codegen included) against numba
  compiling the same equations and a Dormand-Prince loop by hand (`import numba` apart).
- rk4: a sine feeding 10 integrators, 10^6 RK4 steps, every step recorded: accelerated mode
  against a hand-written numba loop of the same equations (compile excluded and reported),
  normal mode estimated from 10^4 steps.
- msd sweep: msd.yaml run 1,000 times with k varied (compiled batches on one thread), per
  run, against a hand-written scipy solve_ivp loop of the same equations and tolerances.
- pid_motor Monte Carlo: 10,000 samples of K and tau on 2 cores, wall time including the
  compile: compiled batches on 2 threads of this process (what `--workers 2` does) against
  the same batches on 2 local Dask worker processes (the cluster's start included).
- per run: thermostat, bouncing_ball, msd, pid_motor and demo3, `blocksim.execute` of a
  loaded model in each mode (compiled code cached), and the simulation alone.
- robots: the robot, vision and planar diagrams (demo1-6, scara, stick_slip, planar7r),
  accelerated against normal per run (demo3's target: at least 5x), loaded and simulated,
  and a model loaded once and run again (what blocksim.execute in a loop costs), and each
  one's first compile; a diagram with blocks that have no compiled form yet says which. Then demo3's
  two sweeps (sweeps/), per run in both modes: a gain grid (parameters only) and a Monte
  Carlo of perturbed controller models (each run builds its robot).
- whole process: `blocksim run diagrams/demo1.yaml` under auto against normal, the process's
  CPU time (which the machine's load disturbs less), with an empty cache and with demo1's
  compiled code cached; then bouncing_ball.yaml, short on paper and long in fact, with its
  code cached: what beginning it in normal mode costs auto against accelerated.

`--sections robots,per-run` runs only those sections (issue 24's table then has their rows).
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import blocksim  # noqa: E402
from blocksim.accel import build  # noqa: E402
from blocksim.accel.mode import simulate_model  # noqa: E402
from blocksim.engine.simulator import simulate  # noqa: E402
from blocksim.errors import DiagramError, DiagramErrors  # noqa: E402

DIAGRAMS = ROOT / "diagrams"
ISSUE = []  # issue 24's table: (work, measured, target), filled by the sections


def table(title, head, rows):
    print(f"\n### {title}\n")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in rows:
        print("| " + " | ".join(row) + " |")


def seconds(x):
    return f"{x * 1e3:.3g} ms" if x < 1 else f"{x:.3g} s"


def best(f, repeat=5):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def accelerated(path, *overrides, plots=False):
    return simulate_model(blocksim.load(path, [*overrides, "simulation.mode=accelerated"]),
                          plots=plots)


# ---- compile ----------------------------------------------------------------------------------
LAGS = 6


def chain_diagram(directory):
    """20 blocks: a sine, six lags (gain, sum, integrator), a scope."""
    blocks = ["  Src: {type: sine, frequency: 2}"]
    wires, prev = [], "Src"
    for k in range(1, LAGS + 1):
        blocks += [f"  G{k}: {{type: gain, K: {0.5 + 0.1 * k}}}",
                   f"  S{k}: {{type: sum, signs: '+-'}}", f"  I{k}: {{type: integrator}}"]
        wires += [f"{prev} -> S{k}.u1", f"G{k} -> S{k}.u2", f"S{k} -> I{k}", f"I{k} -> G{k}"]
        prev = f"I{k}"
    blocks.append("  Scope: {type: scope}")
    wires.append(f"{prev} -> Scope")
    path = Path(directory) / "chain20.yaml"
    path.write_text("blocksim: 1\nname: chain20\nblocks:\n" + "\n".join(blocks) +
                    f"\nwires: [{', '.join(wires)}]\nsimulation: {{stop: 10, rtol: 1e-8, "
                    f"atol: 1e-10}}\nrecord: {{y: {prev}.y}}\n")
    return path


NUMBA_SOURCE = """
import numpy as np
from numba import njit

@njit(cache=False)
def f(t, x, dx, g):
    prev = np.sin(2.0 * t)
    for k in range(x.size):
        dx[k] = prev - g[k] * x[k]
        prev = x[k]

A = np.array([[0, 0, 0, 0, 0, 0], [1/5, 0, 0, 0, 0, 0], [3/40, 9/40, 0, 0, 0, 0],
              [44/45, -56/15, 32/9, 0, 0, 0],
              [19372/6561, -25360/2187, 64448/6561, -212/729, 0, 0],
              [9017/3168, -355/33, 46732/5247, 49/176, -5103/18656, 0]], dtype=np.float64)
B = np.array([35/384, 0, 500/1113, 125/192, -2187/6784, 11/84], dtype=np.float64)
E = np.array([71/57600, 0, -71/16695, 71/1920, -17253/339200, 22/525, -1/40], dtype=np.float64)
C = np.array([0, 1/5, 3/10, 4/5, 8/9, 1], dtype=np.float64)

@njit(cache=False)
def dopri(t, t_end, x, g, rtol, atol):
    a, b, e, c = A, B, E, C
    n = x.size
    k = np.zeros((7, n))
    h, steps = 1e-3, 0
    while t < t_end:
        h = min(h, t_end - t)
        f(t, x, k[0], g)
        for s in range(1, 6):
            arg = x.copy()
            for j in range(s):
                arg += h * a[s, j] * k[j]
            f(t + c[s] * h, arg, k[s], g)
        y = x.copy()
        for s in range(6):
            y += h * b[s] * k[s]
        f(t + h, y, k[6], g)
        err = np.zeros(n)
        for s in range(7):
            err += h * e[s] * k[s]
        norm = np.sqrt(np.mean((err / (atol + rtol * np.maximum(np.abs(x), np.abs(y)))) ** 2))
        if norm <= 1:
            t, x, steps = t + h, y, steps + 1
        h *= min(10.0, max(0.2, 0.9 * norm ** -0.2)) if norm > 0 else 10.0
    return steps

g = 0.5 + 0.1 * np.arange(1, 7)
"""


def compile_section():
    with tempfile.TemporaryDirectory() as tmp, _cache_dir(str(Path(tmp) / "cache")):
        path = chain_diagram(tmp)
        t0 = time.perf_counter()
        _, _, info = accelerated(path)
        first = time.perf_counter() - t0
        build._LOADED.clear()
        t0 = time.perf_counter()
        accelerated(path)
        cached = time.perf_counter() - t0
        process = [sys.executable, "-m", "blocksim", "run", str(path), "--no-plots", "--quiet",
                   "--out", str(Path(tmp) / "out")]
        whole_cached = best(lambda: subprocess.run(process + ["--mode", "accelerated"],
                                                   check=True), 3)
        whole_normal = best(lambda: subprocess.run(process + ["--mode", "normal"], check=True), 3)
    numba_import = best(lambda: subprocess.run([sys.executable, "-c", "import numba"],
                                               check=True), 3) - \
        best(lambda: subprocess.run([sys.executable, "-c", "import numpy"], check=True), 3)
    namespace = {}
    exec(NUMBA_SOURCE, namespace)
    t0 = time.perf_counter()
    namespace["dopri"](0.0, 10.0, np.zeros(LAGS), namespace["g"], 1e-8, 1e-10)
    numba_compile = time.perf_counter() - t0
    table("compile: a 20-block diagram (the backend)", ["", "time", "target"], [
        ["generated C: codegen + cc -O2 (empty cache), and the run", seconds(first),
         "<= 5 s"],
        ["  of which the compiler", seconds(info["mode"]["compile_time"]), ""],
        ["cached start in this process (codegen, key, load, run)", seconds(cached), "<= 0.3 s"],
        ["whole process, accelerated from the cache", seconds(whole_cached), ""],
        ["whole process, normal mode", seconds(whole_normal), ""],
        ["numba: the same equations and a Dormand-Prince loop, first call", seconds(numba_compile),
         ""],
        ["numba: import numba (more than numpy)", seconds(numba_import), ""],
    ])
    ISSUE.append(("first compile of a 20-block diagram / cached start",
                  f"{seconds(first)} (compiler {seconds(info['mode']['compile_time'])}) / "
                  f"{seconds(cached)}; numba {seconds(numba_compile)}", "<= 5 s / <= 0.3 s"))


# ---- rk4: sine + 10 integrators ---------------------------------------------------------------
RK4 = """blocksim: 1
name: rk4_bench
blocks:
  Src: {{type: sine, frequency: 3}}
{integrators}
wires: [{wires}]
simulation: {{stop: {stop}, solver: rk4, step: 0.001, max_steps: 1e8}}
record: {{{record}}}
"""


def rk4_diagram(directory, steps):
    names = [f"I{k}" for k in range(10)]
    path = Path(directory) / "rk4.yaml"
    path.write_text(RK4.format(
        integrators="\n".join(f"  {n}: {{type: integrator}}" for n in names),
        wires=", ".join(f"Src -> {n}" for n in names), stop=steps * 0.001,
        record=", ".join(f"x{k}: {n}.y" for k, n in enumerate(names))))
    return path


RK4_NUMBA = """
import numpy as np
from numba import njit

@njit(cache=False)
def rk4(steps, h):
    n = 10
    x = np.zeros(n)
    rows = np.empty((steps + 1, n + 1))
    rows[0, 0] = 0.0
    rows[0, 1:] = x
    k1 = np.empty(n); k2 = np.empty(n); k3 = np.empty(n); k4 = np.empty(n)
    for i in range(steps):
        t = i * h
        k1[:] = np.sin(3.0 * t)
        k2[:] = np.sin(3.0 * (t + 0.5 * h))
        k3[:] = k2
        k4[:] = np.sin(3.0 * (t + h))
        x += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        rows[i + 1, 0] = (i + 1) * h
        rows[i + 1, 1:] = x
    return rows
"""


def rk4_section(steps):
    namespace = {}
    exec(RK4_NUMBA, namespace)
    t0 = time.perf_counter()
    namespace["rk4"](10, 0.001)
    numba_compile = time.perf_counter() - t0
    numba_run = best(lambda: namespace["rk4"](steps, 0.001), 3)
    with tempfile.TemporaryDirectory() as tmp:
        path = rk4_diagram(tmp, steps)
        with _cache_dir(str(Path(tmp) / "cache")):  # an empty cache: the compile is reported
            t, data, info = accelerated(path)
            compile_time = info["mode"]["compile_time"]
            ours = min(info["wall_time"], *(accelerated(path)[2]["wall_time"] for _ in range(2)))
        rows = namespace["rk4"](steps, 0.001)
        assert np.allclose(data["x3"], rows[:, 4], rtol=1e-9, atol=1e-12)
        small = rk4_diagram(tmp, 10_000)
        normal = simulate(blocksim.load(small, ["simulation.mode=normal"]))[2]["wall_time"]
    per_step = lambda s: f"{s / steps * 1e6:.3g} us"  # noqa: E731
    table(f"rk4: sine + 10 integrators, {steps:,} steps, all recorded",
          ["", "per step", "vs numba", "target"], [
              ["hand-written numba loop", per_step(numba_run), "1", ""],
              ["accelerated", per_step(ours), f"{ours / numba_run:.2g}x", "<= 3x"],
              ["normal (from 10^4 steps)", f"{normal / 10_000 * 1e6:.3g} us",
               f"{normal / 10_000 * steps / numba_run:.3g}x", ""],
              ["compile: C / numba", f"{seconds(compile_time)} / {seconds(numba_compile)}", "",
               ""]])
    ISSUE.append((f"sine + 10 integrators, {steps:,} RK4 steps, all recorded, vs a hand-written "
                  "numba loop", f"{ours / numba_run:.2g}x (normal mode "
                  f"{normal / 10_000 * steps / numba_run:.3g}x; compile {seconds(compile_time)})",
                  "<= 3x"))


# ---- sweeps ----------------------------------------------------------------------------------
MSD_SWEEP = """blocksim-sweep: 1
diagram: {diagram}
name: msd_bench
samples: {runs}
random:
  parameters.k: uniform(2, 6)
seed: 1
metrics:
  x: x[-1]
"""


def msd_scipy(k, m=1.0, c=0.4):
    """The hand-written peer: msd's equations by solve_ivp (RK45, the diagram's tolerances),
    integrated up to the force step at t = 1 and after it (the solver lands on it too)."""
    from scipy.integrate import solve_ivp

    def f(force):
        return lambda t, y: [y[1], (force - c * y[1] - k * y[0]) / m]
    first = solve_ivp(f(0.0), (0, 1), [0.0, 0.0], rtol=1e-6, atol=1e-9)
    return solve_ivp(f(1.0), (1, 20), first.y[:, -1], rtol=1e-6, atol=1e-9).y[0, -1]


def sweep_wall(path, mode, workers, keep="metrics"):
    """Wall seconds of a sweep, from reading the file to its table; the table."""
    from blocksim.batch.run import prepare
    t0 = time.perf_counter()
    sweep = prepare(path, overrides=[f"simulation.mode={mode}"])
    table = sweep.run(workers=workers, keep=keep)
    assert table.counts()["ok"] == len(table.rows)
    return time.perf_counter() - t0, table


def msd_sweep_section(runs):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "msd_sweep.yaml"
        path.write_text(MSD_SWEEP.format(diagram=DIAGRAMS / "msd.yaml", runs=runs))
        with _cache_dir(str(Path(tmp) / "cache")):  # its compile counts
            fast, _ = sweep_wall(path, "accelerated", 1)
        path.write_text(MSD_SWEEP.format(diagram=DIAGRAMS / "msd.yaml", runs=min(runs, 100)))
        slow, _ = sweep_wall(path, "normal", 1)
    rng = np.random.default_rng(1)
    ks = rng.uniform(2, 6, 100)
    t0 = time.perf_counter()
    for k in ks:
        msd_scipy(k)
    peer = (time.perf_counter() - t0) / len(ks)
    ours, normal = fast / runs, slow / min(runs, 100)
    rows = [["hand-written solve_ivp loop", seconds(peer), "1"],
            ["accelerated sweep, compiled batches on 1 thread (incl. its compile)",
             seconds(ours), f"{peer / ours:.3g}x faster"],
            ["normal sweep, 1 worker", seconds(normal), f"{peer / normal:.3g}x faster"]]
    table(f"msd sweep of {runs:,} runs (k varied), per run", ["", "per run", "vs solve_ivp"],
          rows)
    ISSUE.append((f"msd {runs:,}-run sweep, per run vs a hand-written solve_ivp loop",
                  f"{peer / ours:.3g}x faster ({seconds(ours)} vs {seconds(peer)}, compile "
                  "included)", ">= 10x"))


PID_MC = """blocksim-sweep: 1
diagram: {diagram}
name: pid_mc_bench
samples: {runs}
random:
  parameters.K: uniform(1.5, 2.5)
  parameters.tau: uniform(0.4, 0.6)
seed: 1
metrics:
  overshoot: max(theta) - 10
"""


def pid_section(runs):
    from blocksim.batch import run as sweep_run
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pid_mc.yaml"
        path.write_text(PID_MC.format(diagram=DIAGRAMS / "pid_motor.yaml", runs=runs))
        walls = {}
        for where in ("threads", "dask"):
            in_batches = sweep_run.in_batches
            if where == "dask":  # the same compiled batches, on local worker processes
                sweep_run.in_batches = lambda *args: False
            try:
                with _cache_dir(str(Path(tmp) / where)):  # the compile counts
                    walls[where], result = sweep_wall(path, "accelerated", 2)
            finally:
                sweep_run.in_batches = in_batches
            walls[where + " where"] = result.meta["execution"]["where"]
        path.write_text(PID_MC.format(diagram=DIAGRAMS / "pid_motor.yaml", runs=100))
        normal, _ = sweep_wall(path, "normal", 1)
    wall = walls["threads"]
    table(f"pid_motor Monte Carlo, {runs:,} samples on 2 cores (--keep metrics), wall incl. "
          "compile", ["", "wall", "vs 2 threads", "target"], [
              [f"accelerated: compiled batches, {walls['threads where']}", seconds(wall), "1",
               "<= 10 s"],
              [f"accelerated: the same batches on {walls['dask where']}, incl. the cluster's "
               "start", seconds(walls["dask"]), f"{walls['dask'] / wall:.3g}x", ""],
              ["normal (estimated from 100 runs on 1 worker / 2)",
               seconds(normal / 100 * runs / 2), f"{normal / 100 * runs / 2 / wall:.3g}x", ""]])
    ISSUE.append((f"pid_motor {runs:,}-sample Monte Carlo, wall on 2 cores incl. compile",
                  f"{seconds(wall)} (2 Dask worker processes: {seconds(walls['dask'])})",
                  "<= 10 s"))


# ---- per run and the whole process -----------------------------------------------------------
PER_RUN = (("thermostat", ">= 10x"), ("bouncing_ball", ">= 10x"), ("msd", ""), ("pid_motor", ""),
           ("demo3", ">= 5x"))


def per_run_section():
    """blocksim.execute of a loaded model in each mode (no files), compiled code cached."""
    rows = []
    for name, target in PER_RUN:
        path = DIAGRAMS / f"{name}.yaml"
        fast_model = blocksim.load(path, ["simulation.mode=accelerated"])
        try:
            blocksim.execute(fast_model)  # compiled once
        except (DiagramError, DiagramErrors) as e:
            why = str(e).splitlines()[0]
            rows.append([name, "-", "-", "no compiled form yet", ""])
            if target:
                ISSUE.append((f"{name}, accelerated vs normal per run", f"not run: {why}",
                              target))
            continue
        slow_model = blocksim.load(path, ["simulation.mode=normal"])
        fast = best(lambda: blocksim.execute(fast_model), 20)
        slow = best(lambda: blocksim.execute(slow_model), 3)
        sim_fast = min(blocksim.execute(fast_model).meta["wall_time"] for _ in range(5))
        sim_slow = min(blocksim.execute(slow_model).meta["wall_time"] for _ in range(3))
        rows.append([name, seconds(slow), seconds(fast), f"{slow / fast:.3g}x",
                     f"{sim_slow / sim_fast:.3g}x"])
        if target:
            ISSUE.append((f"{name}, accelerated vs normal per run (blocksim.execute of a "
                          "loaded model)", f"{slow / fast:.3g}x (simulation alone "
                                           f"{sim_slow / sim_fast:.3g}x)", target))
    table("per run: blocksim.execute of a loaded model (compiled code cached)",
          ["diagram", "normal", "accelerated", "speed-up", "simulation alone"], rows)


ROBOT_DIAGRAMS = ("demo1", "demo2", "demo3", "demo4", "demo5", "demo6", "scara", "stick_slip",
                  "planar7r")


def robot_section():
    from blocksim.accel.codegen import generate
    from blocksim.accel.compilable import NotCompilable

    rows = []
    for name in ROBOT_DIAGRAMS:
        path = DIAGRAMS / f"{name}.yaml"
        try:
            generate(blocksim.load(path))
        except NotCompilable as e:
            types = sorted({kind for _, kind, _ in e.blocks})
            rows.append([name, *[""] * 7, f"no compiled form yet: {', '.join(types)}"])
            continue
        with tempfile.TemporaryDirectory() as cache, _cache_dir(cache):  # an empty cache
            compile_time = accelerated(path)[2]["mode"]["compile_time"]
        accelerated(path)  # compiled into the cache the runs below use
        fast = best(lambda: accelerated(path), 5)
        slow = best(lambda: simulate_model(blocksim.load(path, ["simulation.mode=normal"])), 3)
        fast_model = blocksim.load(path, ["simulation.mode=accelerated"])
        slow_model = blocksim.load(path, ["simulation.mode=normal"])
        again_fast = best(lambda: simulate_model(fast_model), 5)
        again_slow = best(lambda: simulate_model(slow_model), 3)
        sim_fast = min(accelerated(path)[2]["wall_time"] for _ in range(5))
        sim_slow = min(simulate(blocksim.load(path))[2]["wall_time"] for _ in range(3))
        rows.append([name, seconds(compile_time), seconds(slow), seconds(fast),
                     f"{slow / fast:.3g}x", seconds(again_slow), seconds(again_fast),
                     f"{again_slow / again_fast:.3g}x", f"{sim_slow / sim_fast:.3g}x"])
    table("robot, vision and planar diagrams: per run, figures off; load and simulate, then "
          "a loaded model run again",
          ["diagram", "first compile", "normal", "accelerated", "speed-up", "normal again",
           "accelerated again", "speed-up again", "simulation alone"], rows)
    rows = []
    for name in ("demo3_gains", "demo3_robustness"):
        path = ROOT / "sweeps" / f"{name}.yaml"
        sweep_wall(path, "accelerated", 1)  # compiled into the cache the runs below use
        fast, done = sweep_wall(path, "accelerated", 1)
        slow, _ = sweep_wall(path, "normal", 1)
        runs = len(done.rows)
        rows.append([f"sweeps/{name}.yaml", str(runs), seconds(slow / runs),
                     seconds(fast / runs), f"{slow / fast:.3g}x"])
    table("demo3 in a sweep on 1 worker (the diagram loaded once), per run",
          ["sweep", "runs", "normal", "accelerated", "speed-up"], rows)


class _cache_dir:
    """BLOCKSIM_CACHE_DIR set to `path` while inside (and nothing compiled loaded)."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        import os
        self.before = os.environ.get("BLOCKSIM_CACHE_DIR"), dict(build._LOADED)
        os.environ["BLOCKSIM_CACHE_DIR"] = self.path
        build._LOADED.clear()

    def __exit__(self, *exc):
        import os
        before, loaded = self.before
        if before is None:
            os.environ.pop("BLOCKSIM_CACHE_DIR", None)
        else:
            os.environ["BLOCKSIM_CACHE_DIR"] = before
        build._LOADED.clear()
        build._LOADED.update(loaded)


def process(command, env=None):
    """(wall, CPU) seconds of a process running `command`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(command, check=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


RUN_ALONE = """
import sys, time
import blocksim
from blocksim.accel.mode import simulate_model
model = blocksim.load(sys.argv[1], ["simulation.mode=" + sys.argv[2]])
t0 = time.perf_counter()
t, data, info = simulate_model(model)
print(time.perf_counter() - t0, info["mode"]["why"], sep="\\n")
"""


def whole_process_section(repeat=20):
    """`blocksim run diagrams/demo1.yaml` under auto and normal, interleaved, with an empty
    cache (a machine's first run) and with demo1's compiled code cached: auto begins a
    short run in normal mode either way, and demo1 ends there. Then bouncing_ball, whose
    run auto begins in normal mode too but switches to its cached code past START_SECONDS:
    auto against accelerated and normal."""
    # as a user's installation runs: with its modules' bytecode written (a process that may
    # not write it compiles every module it imports, and auto imports a few more)
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    rows, issue = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name, cache, against in (("demo1", "empty", "normal"), ("demo1", "cached", "normal"),
                                     ("bouncing_ball", "cached", "accelerated")):
            diagram = str(DIAGRAMS / f"{name}.yaml")
            command = [sys.executable, "-m", "blocksim", "run", diagram, "--no-plots",
                       "--quiet", "--out", tmp]
            env = {**base, "BLOCKSIM_CACHE_DIR": str(Path(tmp) / f"{name}-{cache}")}
            if cache == "cached":
                process(command + ["--mode", "accelerated"], env)
            modes = ["normal", "auto"] + (["accelerated"] if against == "accelerated" else [])
            found = {m: [] for m in modes}
            for m in modes:  # bytecode written, files cached
                process(command + ["--mode", m], env)
            for _ in range(repeat):  # interleaved: the load changes over the minutes
                for m in modes:
                    found[m].append(process(command + ["--mode", m], env))
            # what auto adds, in a process of its own (its imports count), from the loaded
            # model to the results: deciding (and generating, loading, running compiled code)
            alone, why = {against: [], "auto": []}, ""
            for _ in range(repeat):
                for m in alone:
                    out = subprocess.run([sys.executable, "-c", RUN_ALONE, diagram, m],
                                         env=env, capture_output=True, text=True,
                                         check=True).stdout.splitlines()
                    alone[m].append(float(out[0]))
                    why = out[1] if m == "auto" else why
            cpu = {k: min(c for _, c in v) for k, v in found.items()}
            ratios = sorted(a[1] / n[1] for a, n in zip(found["auto"], found[against]))
            q = np.percentile(ratios, [25, 50, 75])
            middle = {k: float(np.median(v)) for k, v in alone.items()}
            added = middle["auto"] - middle[against]
            rows.append([f"{name}, {cache} cache: auto ({why})", against,
                         seconds(cpu[against]), seconds(cpu["auto"]),
                         f"{cpu['auto'] / cpu[against]:.3g} / {q[1]:.3g} ({q[0]:.3g}-{q[2]:.3g})",
                         f"{seconds(added)} to {seconds(middle[against])}",
                         seconds(cpu["normal"])])
            if name == "demo1":
                issue.append(f"{cache} cache: CPU {cpu['auto'] / cpu[against]:.3g} (best), "
                             f"{q[1]:.3g} (median of pairs), auto adds {seconds(added)} to "
                             f"{seconds(middle[against])} of simulation")
    table(f"whole process: blocksim run DIAGRAM --no-plots ({repeat} runs of each)",
          ["auto against", "mode", "its CPU (best)", "auto CPU (best)",
           "CPU ratio: best / median of pairs (IQR)", "simulate_model alone: auto adds",
           "normal CPU (best)"], rows)
    ISSUE.append(("whole-process `blocksim run diagrams/demo1.yaml` under auto vs normal",
                  "; ".join(issue), "no slower"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=1_000_000)
    p.add_argument("--sweep-runs", type=int, default=1000)
    p.add_argument("--mc-runs", type=int, default=10_000)
    p.add_argument("--sections", default="all", help="comma-separated: compile, rk4, msd, "
                   "pid, per-run, robots, process (default all)")
    args = p.parse_args()
    sections = {"compile": compile_section, "rk4": lambda: rk4_section(args.steps),
                "msd": lambda: msd_sweep_section(args.sweep_runs),
                "pid": lambda: pid_section(args.mc_runs), "per-run": per_run_section,
                "robots": robot_section, "process": whole_process_section}
    chosen = list(sections) if args.sections == "all" else args.sections.split(",")
    load = os.getloadavg()
    print(f"load average at the start: {load[0]:.1f} (1 min), {load[1]:.1f} (5 min) on "
          f"{os.cpu_count()} cores")
    for name in chosen:
        sections[name]()
    load = os.getloadavg()
    table(f"issue 24's table (load average at the end: {load[0]:.1f}, {load[1]:.1f} over "
          "5 min)", ["work", "measured", "target"], [list(row) for row in ISSUE])


if __name__ == "__main__":
    main()
