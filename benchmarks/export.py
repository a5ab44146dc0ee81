"""The exported C (blocksim export --c) against accelerated mode, per run.

    python benchmarks/export.py [--repeat 20]

For msd, pid_motor and demo3_controller (diagrams/): accelerated mode's simulation alone
(`simulate_model` on a loaded model, its compiled code cached: the C loop on numpy's BLAS
and ufunc loops, driven from Python in chunks, its rows turned into arrays), and the
exported library's `NAME_run` on its own C (no numpy), timed inside a C program that runs
it `--repeat` times (init, run, terminate; no CSV). Both take the same steps with a fixed
step; the table gives the steps too. Medians of `--repeat` runs; the ratio is
accelerated / exported (above 1: the export is faster). The machine is shared: its load
average is printed, and ratios are what to compare.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import blocksim  # noqa: E402
from blocksim.accel.export import c_name, export_c  # noqa: E402
from blocksim.accel.mode import simulate_model  # noqa: E402
from blocksim.accel.toolchain import compiler  # noqa: E402

CASES = [("msd", []), ("pid_motor", []), ("demo3_controller", []),
         ("pid_motor", ["simulation.solver=rk4", "simulation.step=1e-4"])]

TIMER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "NAME.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int repeat = atoi(argv[1]);
    for (int k = 0; k < repeat; k++) {
        double t0 = now();
        NAME_model *m = NAME_init();
        if (NAME_run(m) < 0)
            return 1;
        const double *rows;
        long long n = NAME_rows(m, &rows);
        NAME_terminate(m);
        printf("%.9f %lld\n", now() - t0, n);
    }
    return 0;
}
"""


def accelerated(path, sets, repeat):
    model = blocksim.load(path, overrides=sets + ["simulation.mode=accelerated"])
    simulate_model(model)  # compile (or load the cached library)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        t, _, info = simulate_model(model)
        times.append(time.perf_counter() - t0)
    assert info["mode"]["mode"] == "accelerated"
    return statistics.median(times), info["stats"]["nsteps"], len(t)


def exported(path, sets, repeat, tmp):
    model = blocksim.load(path, overrides=sets)
    name = c_name(model.name)
    export_c(model, tmp)
    (Path(tmp) / "main.c").write_text(TIMER.replace("NAME", name))
    cc = compiler()[0]
    subprocess.run([*cc, "-O2", "main.c", f"{name}.c", "-lm", "-o", "bench"], cwd=tmp,
                   check=True, capture_output=True)
    out = subprocess.run([str(Path(tmp) / "bench"), str(repeat)], check=True,
                         capture_output=True, text=True).stdout.split()
    return statistics.median(float(x) for x in out[0::2]), int(out[1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} (2 cores); medians of {args.repeat} runs")
    print(f"{'diagram':44s} {'steps':>7s} {'rows':>7s} {'accelerated':>12s} "
          f"{'exported C':>11s} {'ratio':>6s}")
    for name, sets in CASES:
        path = ROOT / "diagrams" / f"{name}.yaml"
        acc, steps, rows = accelerated(path, sets, args.repeat)
        with tempfile.TemporaryDirectory() as tmp:
            exp, exp_rows = exported(path, sets, args.repeat, tmp)
        label = name + (f" ({', '.join(s.split('.', 1)[1] for s in sets)})" if sets else "")
        print(f"{label:44s} {steps:7d} {rows:7d} {acc * 1e3:10.3f} ms {exp * 1e3:8.3f} ms "
              f"{acc / exp:6.1f}")


if __name__ == "__main__":
    main()
