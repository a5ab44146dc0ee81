"""Zero-crossing events (issue 11): what they cost where unused, and against peers where used.

    pip install -e ".[bench]"            # pathsim (its ZeroCrossing events), for the peer rows
    python benchmarks/hybrid.py [--repeat N] [--before COMMIT] [--quick]

Tables (CPU times, medians of repeats, ratios measured in this one run; the machine is shared):
1. No events: demo1 and demo3 with the code before events existed (--before, default 9f2309e,
   extracted with `git archive` into a temporary directory with its C kernels built there)
   against this tree. Each side runs in its own worker process; the runs alternate old/new
   so that drift in the machine's load cancels. Steps must be identical; the ratio of the
   simulation times (blocksim.execute, no files, no figures) is the overhead (target < 3 %).
   Also: Python function calls per run (a count, free of noise), blocksim.load, the whole
   `blocksim run` process, and one derivative evaluation (engine.py's measure).
2. Bouncing ball, the first 20 impacts, and the thermostat's relay limit cycle (1800 s):
   blocksim, pathsim (the same model with its ZeroCrossing events / Relay block) and a bare
   scipy solve_ivp(events=...) loop (terminal event, reset, restart), all RK45 (pathsim:
   RKDP54, the same Dormand-Prince pair) at the diagram's rtol/atol and max_step. CPU time
   per run and the largest event-time error against the closed form; what each needed
   (steps, rejected steps, evaluations of f and of the event functions).
3. Where blocksim's event time goes: evaluations of the indicators per located crossing,
   time in location and in the event iteration (an instrumented run).
4. demo1 with friction=full: Coulomb friction as a smoothing band (version 1) against
   stick-slip with events (robot parameter `coulomb: events`), once that parameter exists.
"""
import argparse
import contextlib
import io
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "9f2309e"  # the last commit before zero-crossing events (0731676)
# Every time below is the process's CPU time: with 2 cores shared by several engineers the
# wall time of a 20 ms run varies by 2x from one run to the next, the CPU time far less.
CLOCK = time.process_time

# ---------------------------------------------------------------- 1. overhead without events
# A worker runs in a subprocess with PYTHONPATH set to one tree, so that the same code times
# the old and the new blocksim. It answers one JSON line per request on stdin.


def worker():
    import blocksim
    try:
        from blocksim.engine.simulator import Simulation
    except ImportError:  # a tree before the package layout
        from blocksim.simulator import Simulation
    print(json.dumps({"blocksim": blocksim.__file__}), flush=True)
    models = {}
    for line in sys.stdin:
        req = json.loads(line)
        if req["cmd"] == "run":  # blocksim.run in its two parts: load + compile, simulate
            t0 = CLOCK()
            model = blocksim.load(req["path"])
            load = CLOCK() - t0
            sims = []
            for _ in range(3):  # the median of three: less noise from what load left behind
                t0 = CLOCK()
                r = blocksim.execute(model)
                sims.append(CLOCK() - t0)
            s = r.meta["solver"]
            out = {"load": load, "sim": statistics.median(sims), "nsteps": s["nsteps"],
                   "nrejected": s["nrejected"], "nfev": s["nfev"]}
        elif req["cmd"] == "calls":  # Python function calls in one blocksim.execute: no noise
            import cProfile
            import pstats
            model = blocksim.load(req["path"])
            blocksim.execute(model)
            profile = cProfile.Profile()
            profile.runcall(blocksim.execute, model)
            out = {"calls": pstats.Stats(profile).total_calls}
        else:  # "feval": seconds per derivative evaluation, as benchmarks/engine.py
            model = models.get(req["path"]) or models.setdefault(req["path"],
                                                                 blocksim.load(req["path"]))
            sim = Simulation(model)
            y, f, number = model.x0.copy(), sim.f, req["number"]
            t0 = CLOCK()
            for _ in range(number):
                f(0.5, y)
            out = {"feval": (CLOCK() - t0) / number}
        print(json.dumps(out), flush=True)


class Worker:
    def __init__(self, tree):
        self.p = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  env=tree_env(tree), cwd=tree)
        where = Path(json.loads(self.p.stdout.readline())["blocksim"]).resolve()
        if not where.is_relative_to(Path(tree).resolve()):
            raise RuntimeError(f"the worker for {tree} imported blocksim from {where}")

    def ask(self, **req):
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def tree_env(tree):
    return {**os.environ, "PYTHONPATH": str(tree), "MPLBACKEND": "Agg"}


def process_cpu(tree, diagram, out):
    """CPU seconds of `blocksim run DIAGRAM --no-plots --quiet` in a new process (imports,
    load, simulate, files), with `tree`'s code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "blocksim", "run", str(diagram), "--no-plots",
                    "--quiet", "--out", str(out)], env=tree_env(tree), cwd=tree, check=True,
                   capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def alternate(repeat, measure):
    """{side: [measure(side) ...]} for side old and new, alternating which goes first."""
    out = {"old": [], "new": []}
    for k in range(repeat):
        for side in (("old", "new") if k % 2 == 0 else ("new", "old")):
            out[side].append(measure(side))
    return out


def old_tree(commit):
    """The source of `commit` with its C kernels built, in a cached temporary directory."""
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", commit],
                         check=True, capture_output=True, text=True).stdout.strip()
    tree = Path(tempfile.gettempdir()) / f"blocksim-bench-{sha}"
    if not list((tree / "blocks" / "robot").glob("_ckernels*.so")):
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", sha], check=True,
                                 capture_output=True).stdout
        tree.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tree, filter="data")
        subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-q"], cwd=tree,
                       check=True, capture_output=True)
    return sha, tree


def overhead(before, repeat, processes):
    sha, old = old_tree(before)
    trees = {"old": old, "new": ROOT}
    print(f"\n## 1. Diagrams without events: {sha} (before events) against this tree\n")
    workers = {side: Worker(tree) for side, tree in trees.items()}
    rows, fevals = [], []
    try:
        for name in ("demo1", "demo3"):
            paths = {side: str(tree / "diagrams" / f"{name}.yaml") for side, tree in trees.items()}
            same_file = Path(paths["old"]).read_bytes() == Path(paths["new"]).read_bytes()
            for side, w in workers.items():  # warm: imports, kernels, caches
                w.ask(cmd="run", path=paths[side])
            runs = alternate(repeat, lambda side: workers[side].ask(cmd="run", path=paths[side]))
            calls = {side: w.ask(cmd="calls", path=paths[side])["calls"]
                     for side, w in workers.items()}
            rows.append([name, same_file, runs, calls])
        with tempfile.TemporaryDirectory() as tmp:
            for row in rows:
                diagram = {side: tree / "diagrams" / f"{row[0]}.yaml"
                           for side, tree in trees.items()}
                row.append(alternate(processes, lambda side: process_cpu(
                    trees[side], diagram[side], Path(tmp) / side)))
            chain = Path(tmp) / "chain10.yaml"
            sys.path.insert(0, str(ROOT / "benchmarks"))
            from engine import chain as chain_text
            chain.write_text(chain_text(10))
            for label, number in (("demo3", 2000), ("chain of 10 gains", 5000)):
                path = {side: str(tree / "diagrams" / "demo3.yaml") if label == "demo3"
                        else str(chain) for side, tree in trees.items()}
                fevals.append((label, alternate(max(4, repeat // 4), lambda side: workers[side].ask(
                    cmd="feval", path=path[side], number=number)["feval"])))
    finally:
        for w in workers.values():
            w.close()

    print("| diagram | steps before / now | f evals | Python calls before / now | simulate "
          "before | simulate now | now / before | load before | load now | now / before | "
          "process before | process now | now / before |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, same_file, runs, calls, procs in rows:
        old_r, new_r = runs["old"], runs["new"]
        steps = {(r["nsteps"], r["nrejected"], r["nfev"]) for r in old_r + new_r}
        same = "identical" if len(steps) == 1 else f"DIFFER {sorted(steps)}"
        o, n = old_r[0], new_r[0]
        print(f"| {name}{'' if same_file else ' (diagram files differ)'} | "
              f"{o['nsteps']} / {n['nsteps']} ({same}) | {o['nfev']} / {n['nfev']} | "
              f"{calls['old']} / {calls['new']} | {_ms(old_r, 'sim')} | {_ms(new_r, 'sim')} | "
              f"{_paired(old_r, new_r, 'sim')} | "
              f"{_ms(old_r, 'load')} | {_ms(new_r, 'load')} | {_paired(old_r, new_r, 'load')} | "
              f"{statistics.median(procs['old']):.2f} s | "
              f"{statistics.median(procs['new']):.2f} s | "
              f"{statistics.median(n / o for o, n in zip(procs['old'], procs['new'])):.3f} |")
    print()
    print("| derivative evaluation | before (µs) | now (µs) | now / before |")
    print("|---|---|---|---|")
    for label, times in fevals:
        ratios = [n / o for o, n in zip(times["old"], times["new"])]
        print(f"| {label} | {statistics.median(times['old']) * 1e6:.1f} | "
              f"{statistics.median(times['new']) * 1e6:.1f} | {statistics.median(ratios):.3f} |")
    print(f"\n(CPU times; now / before: the median of the ratios of alternated pairs. Python "
          f"calls: function calls in one blocksim.execute (cProfile), a count free of the "
          f"machine's noise. simulate: blocksim.execute, no files, {repeat} pairs; load: "
          f"blocksim.load (parse, compile) "
          f"in a process that has loaded the diagram before; process: `blocksim run DIAGRAM "
          f"--no-plots --quiet` in a new process, {processes} pairs)")


def _ms(runs, key):
    return f"{statistics.median(r[key] for r in runs) * 1e3:.2f} ms"


def _paired(old, new, key):
    return f"{statistics.median(n[key] / o[key] for o, n in zip(old, new)):.3f}"


# ---------------------------------------------------------------- 2. bouncing ball
H, G, CR = 10.0, 9.81, 0.8
IMPACTS = 20
BALL_RTOL, BALL_ATOL = 1e-8, 1e-10  # bouncing_ball.yaml's
BALL_TOL = {"rtol": BALL_RTOL, "atol": BALL_ATOL}


def impact_times(n):
    """t1 = sqrt(2h/g), t(k+1) = t(k) + 2 cr^k sqrt(2gh)/g (hybrid.md): the closed form."""
    flights = 2 * CR ** np.arange(1, n) * math.sqrt(2 * G * H) / G
    return math.sqrt(2 * H / G) + np.concatenate([[0.0], np.cumsum(flights)])


BALL_EXACT = impact_times(IMPACTS + 1)
BALL_STOP = float(BALL_EXACT[IMPACTS - 1] + 0.5 * (BALL_EXACT[IMPACTS] - BALL_EXACT[IMPACTS - 1]))
BALL_MAX_STEP = BALL_STOP / 50  # blocksim's default max_step, given to the peers too

# The bouncing ball as small as blocksim can say it (no rest rule; the shipped diagram adds
# one, with three more blocks whose crossings are events too).
BALL_MINIMAL = f"""
blocksim: 1
name: ball_minimal
blocks:
  Gravity:  {{type: constant, value: {-G}}}
  Velocity: {{type: integrator, reset: falling, x0_source: port}}
  Position: {{type: integrator, x0: {H}, lower: 0}}
  Rebound:  {{type: gain, K: {-CR}}}
wires:
  - Gravity -> Velocity.u
  - Velocity -> Position.u
  - Position -> Velocity.reset
  - Velocity -> Rebound
  - Rebound -> Velocity.x0
simulation: {{stop: {BALL_STOP!r}, solver: rk45, rtol: {BALL_RTOL}, atol: {BALL_ATOL}}}
record: {{p: Position.y, v: Velocity.y}}
"""


def counted(fn):
    def wrapper(*args):
        wrapper.calls += 1
        return fn(*args)
    wrapper.calls = 0
    return wrapper


def scipy_ball():
    from scipy.integrate import solve_ivp

    def f(t, y):
        return [y[1], -G]

    @counted
    def floor(t, y):
        return y[0]
    floor.terminal, floor.direction = True, -1
    t, y, events = 0.0, np.array([H, 0.0]), []
    need = {"steps": 0, "nfev": 0}
    while True:
        sol = solve_ivp(f, (t, BALL_STOP), y, method="RK45", events=floor,
                        max_step=BALL_MAX_STEP, **BALL_TOL)
        need["steps"] += len(sol.t) - 1
        need["nfev"] += sol.nfev
        if sol.status != 1:
            break
        t = float(sol.t_events[0][0])
        events.append(t)
        y = np.array([0.0, -CR * sol.y_events[0][0][1]])
    need["zfev"] = floor.calls
    return np.array(events), need


def pathsim_ball(event_tol):
    from pathsim import Connection, Simulation
    from pathsim.blocks import Constant, Integrator
    from pathsim.events import ZeroCrossingDown
    from pathsim.solvers import RKDP54
    t0 = CLOCK()
    position, velocity, gravity = Integrator(H), Integrator(0.0), Constant(-G)

    @counted
    def floor(t):
        return position.outputs[0]

    def bounce(t):
        v = velocity.outputs[0]
        position.engine.set(0.0)
        velocity.engine.set(-CR * v)
    event = ZeroCrossingDown(func_evt=floor, func_act=bounce, tolerance=event_tol)
    sim = Simulation([position, velocity, gravity],
                     [Connection(gravity, velocity), Connection(velocity, position)], [event],
                     dt=None, dt_max=BALL_MAX_STEP, log=False, Solver=RKDP54,
                     tolerance_lte_rel=BALL_TOL["rtol"],
                     tolerance_lte_abs=BALL_TOL["atol"])
    sim._update = counted(sim._update)  # one evaluation of the whole system
    setup = CLOCK() - t0  # building the model is not timed (blocksim's load is not either)
    stats = sim.run(BALL_STOP)
    need = {"setup": setup, "steps": stats["successful_steps"], "nfev": sim._update.calls,
            "rejected": stats["total_steps"] - stats["successful_steps"], "zfev": floor.calls}
    return np.array(list(event)), need


def blocksim_events(result, name):
    return result.events_t[result.events_block == result.meta["event_blocks"].index(name)]


def blocksim_runner(model, block):
    """A function running `model`: (the event times of `block`, what the run needed). The
    evaluations of the indicators are counted once, in a first untimed run."""
    import blocksim
    from blocksim.engine.simulator import Simulation
    evals = []

    def run():
        if not evals:
            evals.append(0)
            indicators = Simulation.indicators

            def counting(self, t):
                evals[0] += 1
                indicators(self, t)
            Simulation.indicators = counting
            try:
                return run()
            finally:
                Simulation.indicators = indicators
        r = blocksim.execute(model)
        s = r.meta["solver"]
        need = {"steps": s["nsteps"], "rejected": s["nrejected"], "nfev": s["nfev"],
                "zfev": evals[0]}
        return blocksim_events(r, block), need
    return run


# ---------------------------------------------------------------- 2. relay (thermostat)
TAU, T_OUT, HEATING, SETPOINT, BAND, T0, T_STOP = 600.0, 10.0, 30.0, 20.0, 1.0, 15.0, 1800.0
RELAY_TOL = {"rtol": 1e-6, "atol": 1e-8}  # thermostat.yaml's
LOW, HIGH, HOT = SETPOINT - BAND / 2, SETPOINT + BAND / 2, T_OUT + HEATING
RELAY_MAX_STEP = T_STOP / 50


def switch_times():
    """dT/dt = (T_out + q - T)/tau. From T0 < T_low, heating: off at T_high after
    tau ln((T_hot - T0)/(T_hot - T_high)); then alternately off for
    tau ln((T_high - T_out)/(T_low - T_out)) and on for tau ln((T_hot - T_low)/(T_hot - T_high))."""
    off = TAU * math.log((HIGH - T_OUT) / (LOW - T_OUT))
    on = TAU * math.log((HOT - LOW) / (HOT - HIGH))
    times = [TAU * math.log((HOT - T0) / (HOT - HIGH))]
    while True:
        nxt = times[-1] + (off if len(times) % 2 else on)
        if nxt > T_STOP:
            return np.array(times)
        times.append(nxt)


def scipy_relay():
    from scipy.integrate import solve_ivp
    t, y, heating, events = 0.0, np.array([T0]), True, []
    need = {"steps": 0, "nfev": 0, "zfev": 0}
    while True:
        q = HEATING if heating else 0.0

        def f(t, y, q=q):
            return (T_OUT + q - y) / TAU

        @counted
        def threshold(t, y, level=HIGH if heating else LOW):
            return y[0] - level
        threshold.terminal, threshold.direction = True, 1 if heating else -1
        sol = solve_ivp(f, (t, T_STOP), y, method="RK45", events=threshold,
                        max_step=RELAY_MAX_STEP, **RELAY_TOL)
        need["steps"] += len(sol.t) - 1
        need["nfev"] += sol.nfev
        need["zfev"] += threshold.calls
        if sol.status != 1:
            break
        t, y = float(sol.t_events[0][0]), sol.y_events[0][0]
        events.append(t)
        heating = not heating
    return np.array(events), need


def pathsim_relay(event_tol):
    from pathsim import Connection, Simulation
    from pathsim.blocks import Adder, Amplifier, Constant, Integrator, Relay
    from pathsim.solvers import RKDP54
    t0 = CLOCK()
    # pathsim's Relay starts in its lower state: input T, lower state = heater on
    relay = Relay(threshold_up=HIGH, threshold_down=LOW, value_up=0.0, value_down=HEATING)
    calls = []
    for e in relay.events:
        e.tolerance = event_tol
        e.func_evt = counted(e.func_evt)
        calls.append(e.func_evt)
    outside, balance, rate, room = Constant(T_OUT), Adder("++-"), Amplifier(1 / TAU), Integrator(T0)
    wires = [Connection(outside, balance[0]), Connection(relay, balance[1]),
             Connection(room, balance[2]), Connection(balance, rate), Connection(rate, room),
             Connection(room, relay)]
    sim = Simulation([relay, outside, balance, rate, room], wires, dt=None,
                     dt_max=RELAY_MAX_STEP, log=False, Solver=RKDP54,
                     tolerance_lte_rel=RELAY_TOL["rtol"],
                     tolerance_lte_abs=RELAY_TOL["atol"])
    sim._update = counted(sim._update)
    setup = CLOCK() - t0
    stats = sim.run(T_STOP)
    need = {"setup": setup, "steps": stats["successful_steps"], "nfev": sim._update.calls,
            "rejected": stats["total_steps"] - stats["successful_steps"],
            "zfev": sum(c.calls for c in calls)}
    return np.array(sorted(t for e in relay.events for t in e)), need


# ---------------------------------------------------------------- 2. tables
def timed(fn, repeat):
    """(median CPU seconds, the last return value) of `repeat` calls; a return value
    (events, need) with need["setup"] has that set-up time taken off."""
    times, out = [], None
    for _ in range(repeat):
        t0 = CLOCK()
        out = fn()
        setup = out[1].pop("setup", 0.0) if isinstance(out, tuple) else 0.0
        times.append(CLOCK() - t0 - setup)
    return statistics.median(times), out


def peers_table(title, exact, rows, repeat):
    """rows: (who, fn) with fn() -> (event times, what it needed); the first row is the base."""
    print(f"\n## {title}\n")
    print("| tool | events | max abs error (s) | CPU ms per run | / blocksim | steps | rejected | "
          "f evals | indicator evals |")
    print("|---|---|---|---|---|---|---|---|---|")
    base = None
    for who, fn in rows:
        try:
            fn()  # warm (imports, compiled kernels)
        except ImportError as e:
            print(f"| {who} | not available: {e} (pip install -e '.[bench]') |||||||")
            continue
        cpu, (got, need) = timed(fn, repeat)
        base = base or cpu
        n = min(len(got), len(exact))
        err = np.abs(got[:n] - exact[:n]).max() if n else float("nan")
        count = f"{len(got)}" + ("" if len(got) == len(exact) else f" (of {len(exact)})")
        print(f"| {who} | {count} | {err:.1e} | {cpu * 1e3:.1f} | {cpu / base:.2f} | "
              f"{need.get('steps', '–')} | {need.get('rejected', 0)} | "
              f"{need.get('nfev', '–')} | "
              f"{need.get('zfev', '–')} |")


def hybrid_peers(repeat):
    import blocksim
    ball = blocksim.load(ROOT / "diagrams" / "bouncing_ball.yaml",
                         {"simulation.stop": BALL_STOP})
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ball_minimal.yaml"
        path.write_text(BALL_MINIMAL)
        minimal = blocksim.load(path)
        tight = blocksim.load(path, {"simulation.event_tol": 1e-13})

    peers_table(f"2a. Bouncing ball, first {IMPACTS} impacts (h = {H} m, e = {CR}), RK45 "
                f"rtol {BALL_TOL['rtol']:g} atol {BALL_TOL['atol']:g} max_step "
                f"{BALL_MAX_STEP:.3g}", BALL_EXACT[:IMPACTS], [
                    ("blocksim, bouncing_ball.yaml", blocksim_runner(ball, "Velocity")),
                    ("blocksim, 4-block ball", blocksim_runner(minimal, "Velocity")),
                    ("blocksim, 4-block ball, event_tol 1e-13", blocksim_runner(tight, "Velocity")),
                    ("pathsim, event tol 1e-10 m", lambda: pathsim_ball(1e-10)),
                    ("pathsim, event tol 1e-4 m (default)", lambda: pathsim_ball(1e-4)),
                    ("scipy solve_ivp loop", scipy_ball),
                ], repeat)

    relay = blocksim.load(ROOT / "diagrams" / "thermostat.yaml", {"simulation.stop": T_STOP})

    peers_table(f"2b. Relay: thermostat.yaml's limit cycle, {T_STOP:g} s, RK45 rtol "
                f"{RELAY_TOL['rtol']:g} atol {RELAY_TOL['atol']:g} max_step {RELAY_MAX_STEP:g}",
                switch_times(), [
                    ("blocksim, thermostat.yaml", blocksim_runner(relay, "Heater")),
                    ("pathsim Relay, event tol 1e-10 K", lambda: pathsim_relay(1e-10)),
                    ("pathsim Relay, event tol 1e-4 K (default)", lambda: pathsim_relay(1e-4)),
                    ("scipy solve_ivp loop", scipy_relay),
                ], repeat)
    return {"bouncing_ball.yaml": ball, "4-block ball": minimal,
            "4-block ball, event_tol 1e-13": tight, "thermostat.yaml": relay}


# ---------------------------------------------------------------- 3. where the event time goes
def event_profile(models):
    """Counts and times of location, event iteration and stepping in one instrumented run
    (CPU time around the Simulation methods; the instrumentation itself costs ~1 µs a call,
    so the shares are approximate)."""
    from blocksim.engine import events, simulator
    # what is timed: (owner, attribute), the simulator's locate and the root finder it calls
    # are module functions, z_at and at_event methods of the Simulation
    owners = {"locate": simulator, "illinois": events, "z_at": simulator.Simulation,
              "at_event": simulator.Simulation}
    originals = {name: getattr(owner, name) for name, owner in owners.items()}
    probes = {}

    def probe(name):
        fn = originals[name]

        def wrapper(*args, **kwargs):
            t0 = CLOCK()
            try:
                return fn(*args, **kwargs)
            finally:
                c = probes.setdefault(name, [0, 0.0])
                c[0] += 1
                c[1] += CLOCK() - t0
        return wrapper

    print("\n## 3. Where blocksim's event time goes (one instrumented run each)\n")
    print("| diagram | CPU ms | steps | located crossings | root-finder brackets | indicator "
          "evals in location | per crossing | location ms (share) | per crossing µs | event "
          "instants | event iteration ms (share) | per instant µs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    import blocksim
    try:
        for name, owner in owners.items():
            setattr(owner, name, probe(name))
        for label, model in models.items():
            probes.clear()
            t0 = CLOCK()
            r = blocksim.execute(model)
            cpu = CLOCK() - t0
            loc_n, loc_t = probes.get("locate", [0, 0.0])
            brackets = probes.get("illinois", [0, 0.0])[0]
            zn = probes.get("z_at", [0, 0.0])[0]
            ev_n, ev_t = probes.get("at_event", [0, 0.0])
            print(f"| {label} | {cpu * 1e3:.1f} | {r.meta['solver']['nsteps']} | {loc_n} | "
                  f"{brackets} | {zn} | {zn / max(loc_n, 1):.1f} | {loc_t * 1e3:.1f} "
                  f"({loc_t / cpu:.0%}) | {loc_t / max(loc_n, 1) * 1e6:.0f} | {ev_n} | "
                  f"{ev_t * 1e3:.1f} ({ev_t / cpu:.0%}) | {ev_t / max(ev_n, 1) * 1e6:.0f} |")
    finally:
        for name, fn in originals.items():
            setattr(owners[name], name, fn)


# ---------------------------------------------------------------- 4. stick-slip friction
def has_stick_slip():
    """Whether the robot block has the `coulomb: events | band` parameter (issue 11)."""
    from blocksim.language.library import Library
    return "coulomb" in {p.name for p in Library().block_class("robot").params}


def friction(repeat):
    import blocksim
    demo1 = ROOT / "diagrams" / "demo1.yaml"
    full = {"robots.p560.friction": "full"}
    has_events = has_stick_slip()
    rows = [("band (coulomb_band 1e-3, version 1)",
             {**full, "blocks.Robot.coulomb": "band"} if has_events else full)]
    if has_events:
        rows.append(("events (stick-slip)", {**full, "blocks.Robot.coulomb": "events"}))
    print("\n## 4. demo1 with friction=full (Puma falling from qz, 10 s, rk45 1e-3/1e-6)\n")
    print("| Coulomb friction | steps | rejected | f evals | events | CPU s | max abs qd(10) "
          "(rad/s) | joints with qd exactly 0 | all at rest from |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, overrides in rows:
        model = blocksim.load(demo1, overrides)
        cpu, r = timed(lambda: blocksim.execute(model), repeat)
        s = r.meta["solver"]
        qd = np.asarray(r["qd"])
        moving = np.flatnonzero(np.any(qd != 0.0, axis=1))
        rest = ("never" if len(moving) and moving[-1] == len(qd) - 1 else
                f"t = {r.t[moving[-1] + 1] if len(moving) else r.t[0]:.3f} s")
        events = r.meta.get("events", {}).get("total", 0)
        print(f"| {label} | {s['nsteps']} | {s['nrejected']} | {s['nfev']} | {events} | "
              f"{cpu:.3f} | {np.abs(qd[-1]).max():.2e} | {int(np.sum(qd[-1] == 0.0))} of "
              f"{qd.shape[1]} | {rest} |")
    if not has_events:
        print("| events (stick-slip) | not available: the robot block has no `coulomb` "
              "parameter in this tree yet ||||||||")
    print("\nTargets (issue 11): events ≤ 3,000 steps, every joint at rest exactly (qd = 0).")


# ---------------------------------------------------------------- main
def main():
    if "--worker" in sys.argv:
        return worker()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="repeats of every timed run (5)")
    ap.add_argument("--before", default=BEFORE, help=f"the commit before events ({BEFORE})")
    ap.add_argument("--quick", action="store_true", help="fewer repeats, for a smoke test")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    repeat = 2 if args.quick else args.repeat
    print(f"# blocksim hybrid benchmark: {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f} at start")
    overhead(args.before, 7 if args.quick else 12 * repeat + 1, 2 if args.quick else 7)
    models = hybrid_peers(repeat)
    if has_stick_slip():
        import blocksim
        models["demo1 friction=full, coulomb: events"] = blocksim.load(
            ROOT / "diagrams" / "demo1.yaml", {"robots.p560.friction": "full"})
        if (ROOT / "diagrams" / "stick_slip.yaml").exists():
            models["stick_slip.yaml"] = blocksim.load(ROOT / "diagrams" / "stick_slip.yaml")
    event_profile(models)
    friction(1 if args.quick else min(repeat, 3))
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end; versions: " + ", ".join(
        f"{m} {_version(m)}" for m in ("numpy", "scipy", "pathsim")))


def _version(module):
    with contextlib.suppress(Exception):
        from importlib.metadata import version
        return version(module)
    return "absent"


if __name__ == "__main__":
    main()
