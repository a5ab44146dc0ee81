"""A block type whose jacobian() raises or gives something other than a Jacobian of the
block's sizes (a plugin's) is named with the method in `linearize` (exit 2): it was a
traceback (the plugin's error, AttributeError, TypeError). The plugin is conftest's
`twice`, y = 2u: linearised, D = 2 (the reference: the block's equation)."""
import numpy as np
import pytest

import blocksim
from blocksim.block import Jacobian
from blocksim.cli import main


def _raises(self, pade=None):
    raise RuntimeError("a bug in the plugin")


FAULTS = {
    "jacobian_raises": (_raises, "it raised RuntimeError: a bug in the plugin"),
    "jacobian_text": (lambda self, pade=None: "D = 2",
                      "it gave a str, not a blocksim.block.Jacobian"),
    "jacobian_shape": (lambda self, pade=None: Jacobian(np.zeros((0, 0)), np.zeros((0, 1)),
                                                        np.zeros((1, 0)), np.eye(3)),
                       "it gave D of shape (3, 3), expected (1, 1)"),
    "jacobian_values": (lambda self, pade=None: Jacobian([], [], [], [["two"]]),
                        "it gave matrices that are not arrays of numbers"),
}


def test_a_sound_jacobian_linearises(plugin_diagram):
    linear = blocksim.linearize(plugin_diagram("twice", {}), inputs=["S.y"], outputs=["P.y"])
    np.testing.assert_array_equal(np.asarray(linear.D), [[2.0]])


@pytest.mark.parametrize("kind", FAULTS)
def test_a_faulty_jacobian_is_named_with_the_block(plugin_diagram, capsys, kind):
    path = plugin_diagram(kind, {kind: {"jacobian": FAULTS[kind][0]}})
    assert main(["linearize", str(path), "--input", "S.y", "--output", "P.y"]) == 2
    err = capsys.readouterr().err
    assert f"{kind}.yaml: error: block 'P': block type '{kind}' has a faulty jacobian(): " \
           f"{FAULTS[kind][1]}" in err and "Traceback" not in err
