"""The numba-compiled kernels and the plain-Python path (BLOCKSIM_NO_JIT=1) agree bit for bit."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import blocks.planar.kinematics as kinematics

ROOT = Path(__file__).resolve().parents[2]

# Evaluates every public function on fixed inputs and saves the results, in a fresh process.
SCRIPT = """
import sys
import numpy as np
import blocks.planar as P
rng = np.random.default_rng(7)
n = 7
q, qd, tau = rng.uniform(-3, 3, n), rng.uniform(-2, 2, n), rng.normal(size=n)
L = rng.uniform(0.3, 1.5, n)
Lc, m, ml = L * 0.4, rng.uniform(0.2, 3, n), rng.uniform(0, 1, n)
I, B, W = rng.uniform(0.01, 0.4, n), rng.uniform(0, 0.2, n), rng.normal(size=(n, n))
out = {}
out.update(("kin%d" % i, a) for i, a in enumerate(P.kinmodel(q, qd, L)))
out["link"] = P.kin_link(q, L)
out.update(("dyn%d" % i, a) for i, a in enumerate(P.dynmodel(q, qd, L, Lc, m, ml, I, B)))
out["Hd"] = P.inertia_rate(q, qd, L, Lc, m, ml, I, B)
out["fd"] = P.forward_dynamics(q, qd, tau, L, Lc, m, ml, I, B)
for name, (v, g) in [("man", P.idxman(q, L)), ("cn", P.idxcn(q, L)),
                     ("grav", P.idxgrav(q, L, Lc, m, ml, W))]:
    out[name] = np.concatenate([[v], g])
out["compiled"] = np.array([hasattr(P.kinematics._kinmodel, "py_func")])
np.savez(sys.argv[1], **out)
"""


def run(tmp_path, name, no_jit):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("BLOCKSIM_NO_JIT", None)
    if no_jit:
        env["BLOCKSIM_NO_JIT"] = "1"
    path = tmp_path / f"{name}.npz"
    subprocess.run([sys.executable, "-c", SCRIPT, str(path)], env=env, check=True, cwd=ROOT)
    return dict(np.load(path))


@pytest.mark.skipif(not hasattr(kinematics._kinmodel, "py_func"),
                    reason="numba not available or disabled: only the plain path exists")
def test_compiled_and_plain_paths_identical(tmp_path):
    compiled = run(tmp_path, "compiled", no_jit=False)
    plain = run(tmp_path, "plain", no_jit=True)
    assert compiled.pop("compiled")[0] and not plain.pop("compiled")[0]
    assert compiled.keys() == plain.keys()
    for key in compiled:
        np.testing.assert_array_equal(compiled[key], plain[key], err_msg=key)
