"""Joints are numbered 1..n as in the toolbox wherever they are shown: a scope's default
legend for a robot's signals (q1..q6, also of a slice of them), an xy graph's, the robot
table of `blocksim check`, the robot's own table."""
import subprocess
import sys
from pathlib import Path

import pytest

import blocks.sinks
import blocksim
from blocks.robot import load_robot

ROOT = Path(__file__).resolve().parents[2]

DIAGRAM = """blocksim: 1
robots:
  p560: {model: puma560, friction: none}
blocks:
  Zero:  {type: constant, value: [0, 0, 0, 0, 0, 0]}
  Robot: {type: robot, robot: p560, q0: p560.qn}
  Hold:  {type: gravload, robot: p560}
  Path:  {type: jtraj, q0: [0, 0], qf: [1, 2], tf: 1}
  Scope: {type: scope, inputs: 4}
  Named: {type: scope, labels: [a, b, c, d, e, f]}
  Phase: {type: xy_graph}
wires:
  - Zero -> Robot
  - Robot.q -> Scope.u1
  - Robot.qd[1:4] -> Scope.u2
  - Robot.q[4] -> Scope.u3
  - Hold -> Scope.u4
  - Robot.q -> Hold
  - Robot.qdd -> Named
  - Path.q -> Phase.x
  - Path.qd -> Phase.y
simulation: {stop: 0.05}
"""


@pytest.fixture
def figures(monkeypatch, tmp_path):
    saved = {}
    monkeypatch.setattr(blocks.sinks, "_save",
                        lambda block, run, fig: saved.__setitem__(block.name, fig))
    path = tmp_path / "d.yaml"
    path.write_text(DIAGRAM)
    blocksim.run(path, out=tmp_path / "out", plots=True)
    return saved


def legend(ax):
    return [line.get_label() for line in ax.lines]


def test_scope_legends_number_the_joints_from_one(figures):
    whole, part, single, torque = figures["Scope"].axes[:4]
    assert legend(whole) == ["q1", "q2", "q3", "q4", "q5", "q6"]
    assert legend(part) == ["qd2", "qd3", "qd4"]          # Robot.qd[1:4]: joints 2 to 4
    assert [t.get_text() for t in whole.get_legend().get_texts()] == legend(whole)
    assert single.get_ylabel() == "Robot.q[4]"            # one line: the signal's name
    assert legend(torque) == ["tau1", "tau2", "tau3", "tau4", "tau5", "tau6"]


def test_given_labels_win_and_xy_graphs_name_joints_too(figures):
    assert legend(figures["Named"].axes[0]) == ["a", "b", "c", "d", "e", "f"]
    assert legend(figures["Phase"].axes[0]) == ["qd1", "qd2"]


def test_a_signal_through_another_block_keeps_element_indices(tmp_path, monkeypatch):
    saved = {}
    monkeypatch.setattr(blocks.sinks, "_save",
                        lambda block, run, fig: saved.__setitem__(block.name, fig))
    path = tmp_path / "d.yaml"
    path.write_text(DIAGRAM.replace("  - Robot.q -> Scope.u1\n",
                                    "  - Robot.q -> Twice\n  - Twice -> Scope.u1\n")
                    .replace("  Scope: {", "  Twice: {type: gain, K: 2}\n  Scope: {"))
    blocksim.run(path, out=tmp_path / "out", plots=True)
    assert legend(saved["Scope"].axes[0]) == [f"[{i}]" for i in range(6)]


def test_check_prints_each_robot_with_joints_one_to_n(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text(DIAGRAM)
    out = subprocess.run([sys.executable, "-m", "blocksim", "check", str(path)], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert "robot p560: Puma 560 (Unimation): 6 axis, RRRRRR, standard DH" in out
    rows = [line.split("|")[1:3] for line in out.splitlines() if line.strip().startswith("| ")]
    assert [(j.strip(), theta.strip()) for j, theta in rows[1:]] == \
        [(str(j), f"q{j}") for j in range(1, 7)]
    assert "friction: none" in out


def test_the_robot_tables_number_joints_from_one():
    stanford = load_robot("stanford")
    text = str(stanford)
    assert "| 3 |     -1.5708 |          q3 |" in text         # joint 3 prismatic: d = q3
    assert "q0" not in text
    assert load_robot("puma560").dyn(0).startswith("link 1 (revolute):")
