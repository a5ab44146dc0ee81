"""Vision: central-projection camera, point-feature interaction matrix, IBVS."""
