"""Robotics toolbox core: serial-link robots, kinematics, dynamics, transforms, trajectories.

Importable without any diagram: ``from blocks.robot import load_robot``.
"""
