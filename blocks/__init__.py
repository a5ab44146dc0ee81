"""blocksim block library: generic blocks here, robot/vision/planar in subpackages."""
