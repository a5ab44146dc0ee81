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
