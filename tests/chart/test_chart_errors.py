"""A chart's mistakes, each with exit 2 and FILE:LINE at the line that is wrong (`@LINE`
marks it in the text; the marker is stripped before the file is written), no traceback; an
unreachable state is a warning; a loop at one instant is exit 3 naming its states."""
import textwrap

import pytest

from blocksim.cli import main

HEAD = """\
blocksim: 1
blocks:
  Go: {type: step, time: 1}
  C:
    type: chart
    inputs: {go: 1}
    outputs: {u: 1}
    data: {n: 0}
"""
TAIL = """\
wires: [Go -> C.go]
simulation: {stop: 2}
"""


def case(tmp_path, body):
    text = HEAD + textwrap.indent(textwrap.dedent(body), "    ") + TAIL
    lines = text.splitlines()
    marked = [i + 1 for i, line in enumerate(lines) if "@LINE" in line]
    path = tmp_path / "chart.yaml"
    path.write_text(text.replace("  # @LINE", ""))
    return path, marked


CASES = {
    "unknown state": ("""\
        states:
          Idle: {initial: true}
          Track: {}
        transitions:
          - {from: Idle, to: Trak, when: "go > 0.5"}  # @LINE
        """, ["unknown state 'Trak'", "did you mean 'Track'"]),
    "no initial state": ("""\
        states:
          Idle: {}
          Track:  # @LINE
            states: {A: {}, B: {}}
        """, ["state 'Track' has no initial state", "mark one of A, B"]),
    "two initial states": ("""\
        states:
          Idle: {initial: true}
          Track: {initial: true}  # @LINE
        """, ["the chart has two initial states, Idle and Track"]),
    "active value": ("""\
        active:
          Idle: 2  # @LINE
        states:
          Idle: {initial: true}
        """, ["active: 'Idle: 2': 1 (or true) gives the state an output in_<State>"]),
    "assignment to an input": ("""\
        states:
          Idle: {initial: true, entry: "go = 1"}  # @LINE
        """, ["assignment to the input 'go'"]),
    "undeclared target": ("""\
        states:
          Idle: {initial: true, entry: "uu = 1"}  # @LINE
        """, ["undeclared name 'uu'", "did you mean 'u'"]),
    "undeclared name read": ("""\
        states:
          Idle: {initial: true}
          Track: {}
        transitions:
          - {from: Idle, to: Track, when: "goo > 0.5"}  # @LINE
        """, ["undeclared name 'goo'", "did you mean 'go'"]),
    "data changed by a continuous during": ("""\
        states:
          Idle: {initial: true, during: "n = n + 1"}  # @LINE
        """, ["may assign outputs only"]),
    "an output read by a continuous during before it is assigned": ("""\
        states:
          Idle: {initial: true, during: "u = u + go"}  # @LINE
        """, ["reads the output 'u' before assigning it"]),
    "a condition that cannot be located": ("""\
        states:
          Idle: {initial: true}
          Track: {}
        transitions:
          - {from: Idle, to: Track, when: "go"}  # @LINE
        """, ["'go' is not a comparison", "go > 0.5"]),
    "between parallel regions": ("""\
        parallel: true
        states:
          A: {states: {X: {initial: true}}}
          B: {states: {Y: {initial: true}}}
        transitions:
          - {from: A.X, to: B.Y, after: 1}  # @LINE
        """, ["parallel regions are always active"]),
    "after not positive": ("""\
        states:
          Idle: {initial: true}
          Track: {}
        transitions:
          - {from: Idle, to: Track, after: -1}  # @LINE
        """, ["parameter 'transitions'", "after must be a time > 0"]),
    "every not positive": ("""\
        states:
          Idle: {initial: true, during: [{every: -1, do: "u = 1"}]}  # @LINE
        """, ["parameter 'states'", "every must be a time > 0"]),
    "unquoted yes": ("""\
        states:
          Idle: {initial: true}
          Track: {}
        transitions:
          - {from: Idle, to: yes, after: 1}  # @LINE
        """, ["got True", "quote the name"]),
}


@pytest.mark.parametrize("name", CASES)
def test_bad_chart(tmp_path, capsys, name):
    body, words = CASES[name]
    path, (line,) = case(tmp_path, body)
    code = main(["check", str(path)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{path}:{line}: error: block 'C'" in err, err
    for word in words:
        assert word in err, err
    assert "Traceback" not in err


def test_unquoted_on_and_off_name_the_states_so_named(tmp_path, capsys):
    """YAML 1.1 reads an unquoted On / Off as true / false: in from: and to: they still
    name the states On and Off (keys stay text)."""
    path, _ = case(tmp_path, """\
        states:
          Off: {initial: true}
          On: {}
        transitions:
          - {from: Off, to: On, when: "go > 0.5"}
        """)
    assert main(["check", str(path)]) == 0, capsys.readouterr().err


def test_an_unreachable_state_is_a_warning(tmp_path, capsys):
    path, (line,) = case(tmp_path, """\
        states:
          Idle: {initial: true}
          Lost: {}  # @LINE
        """)
    assert main(["check", str(path)]) == 0
    err = capsys.readouterr().err
    assert f"{path}:{line}: warning: block 'C': state 'Lost' is unreachable" in err


def test_a_loop_at_one_instant_fails_the_run(tmp_path, capsys):
    path, _ = case(tmp_path, """\
        states:
          A: {initial: true}
          B: {}
        transitions:
          - {from: A, to: B, when: "go > 0.5"}
          - {from: B, to: A, when: "go > 0.5"}
        """)
    code = main(["run", str(path), "--out", str(tmp_path / "run"), "--no-plots", "--quiet"])
    err = capsys.readouterr().err
    assert code == 3
    assert "block 'C': transition loop: B -> A -> B" in err and "at t = 1" in err
