"""The first-order lag tau*x' = u - x, x(0) = 0, that the sweep tests vary: its closed form
is x(t) = u (1 - exp(-t/tau)) (for tau < 0 it grows as exp(|t/tau|) and overflows)."""
import math

LAG = """\
blocksim: 1
name: lag
parameters: {tau: 1.0}
blocks:
  U: {type: constant, value: 1}
  S: {type: sum, signs: "+-"}
  G: {type: gain, K: 1/tau}
  I: {type: integrator}
wires: [U -> S.u1, S -> G, G -> I, I -> S.u2]
simulation: {stop: 2, rtol: 1e-10, atol: 1e-12, output_interval: 0.01}
record: {x: I.y}
"""

METRICS = """\
metrics:
  final_x: final(x)
  x_at_1: x[argmin(abs(t - 1))]
  peak: max(abs(x))
"""


def lag(u, tau, t):
    return u * (1 - math.exp(-t / tau))


def write_sweep(tmp_path, body, name="sweep.yaml"):
    """lag.yaml and a sweep file over it (`body` after the header) in tmp_path."""
    (tmp_path / "lag.yaml").write_text(LAG)
    path = tmp_path / name
    path.write_text("blocksim-sweep: 1\ndiagram: lag.yaml\n" + body)
    return path


def table_rows(out):
    """The rows of out/summary.csv, each cell as written (numbers as numbers)."""
    from blocksim.batch.table import cell_value, read_rows
    return [{k: cell_value(v) for k, v in row.items()}
            for _, row in read_rows(out / "summary.csv")]
