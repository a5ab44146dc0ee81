"""Planar n-R manipulators (Zlajpah, seed 001): kinematics, dynamics, redundancy indices."""
