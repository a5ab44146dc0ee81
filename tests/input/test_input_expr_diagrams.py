"""Expressions as a diagram uses them: what a function block's expression may name, and the
messages of `blocksim check` for expressions that fail (FILE:LINE, block, parameter)."""
import math

import numpy as np

import blocksim
from blocksim.cli import main


def write(tmp_path, text, name="d.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def check(path, capsys, *args):
    code = main(["check", str(path), *args])
    return code, capsys.readouterr().err


def test_function_block_reads_a_robots_pose(tmp_path):
    # docs/language.md, Names: ROBOT.qz is robot ROBOT's pose, in every expression; the
    # Puma 560's qr is [0, pi/2, -pi/2, 0, 0, 0] (spec/robots.md), so y = pi/2 + 2*(-pi/2)
    path = write(tmp_path, "blocksim: 1\nrobots:\n  p: {model: puma560}\nblocks:\n"
                           "  C: {type: constant, value: 2}\n"
                           "  F: {type: function, expr: 'p.qr[1] + u * p.qr[2]'}\n"
                           "  T: {type: terminator}\nwires: [C -> F, F -> T]\n"
                           "simulation: {stop: 1}\nrecord: {y: F.y}\n")
    result = blocksim.run(path)
    np.testing.assert_allclose(result["y"], math.pi / 2 - math.pi, rtol=1e-15)


def test_a_failed_parameter_is_reported_once(tmp_path, capsys):
    # 'a' fails; what uses it (a parameter, a list, a block, a function block, a subsystem's
    # parameter, a simulation setting) is not reported again as "unknown name 'a'"
    path = write(tmp_path, """blocksim: 1
parameters:
  a: 1/0
  b: a + 1
  c: [a, 2]
blocks:
  C: {type: constant, value: b}
  D: {type: constant, value: c}
  F: {type: function, expr: 'u * a'}
  S:
    type: subsystem
    parameters: {x: a}
    diagram:
      parameters: {x: 1}
      blocks:
        K: {type: gain, K: x}
      inputs: {u: K.u}
      outputs: {y: K.y}
wires: [C -> F, F -> S]
simulation: {stop: 'b * 2'}
""")
    code, err = check(path, capsys)
    assert code == 2
    assert err.strip().splitlines() == [f"{path}:3: error: parameter 'a': division by zero "
                                        "in '1/0'"], err
    # the same through --set
    code, err = check(path, capsys, "--set", "parameters.a=log(0)")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("--set parameters.a: error: parameter 'a': infinite result"), err


def test_format_version_true_is_not_1(tmp_path, capsys):
    # YAML's `true` equals 1 in Python; `blocksim: true` is not the format version 1
    path = write(tmp_path, "blocksim: true\nblocks:\n  C: {type: constant, value: 1}\n"
                           "simulation: {stop: 1}\n")
    code, err = check(path, capsys)
    assert code == 2 and f"{path}:1: error: unsupported format version true" in err, err


def test_a_simulation_setting_given_a_list_says_it_needs_one_number(tmp_path, capsys):
    path = write(tmp_path, "blocksim: 1\nblocks:\n  C: {type: constant, value: 1}\n"
                           "simulation: {stop: '[1, 2]'}\n")
    code, err = check(path, capsys)
    assert code == 2, err
    assert f"{path}:4: error: simulation.stop: expected a single number, got shape (2,)" in err


def test_parameters_are_evaluated_in_dependency_order(tmp_path):
    """Issue 23 item 9: a workspace is unordered, so a parameter may use one written after
    it: wn = sqrt(k/m) with k = 4 and m = 0.25 below it is 4, zeta = c/(2 sqrt(k m)) = 0.5;
    in a subsystem too (its own parameters, and one the outer block sets)."""
    path = write(tmp_path, """blocksim: 1
parameters:
  wn: sqrt(k / m)
  zeta: c / (2 * sqrt(k * m))
  k: 4
  c: m * 4
  m: 0.25
blocks:
  W: {type: constant, value: [wn, zeta]}
  S:
    type: subsystem
    parameters: {g: wn}
    diagram:
      parameters: {h: 2 * g, g: 1}
      blocks: {K: {type: constant, value: h}}
      outputs: {y: K.y}
simulation: {stop: 1}
record: {w: W.y, h: S.y}
""")
    result = blocksim.run(path)
    np.testing.assert_allclose(result["w"][-1], [4.0, 0.5], rtol=1e-15)
    assert result["h"][-1] == 8.0  # h = 2 g, g = wn = 4 from the outer block
