"""Buses (bus, bus_select): resolved to plain wires when loaded, so a diagram with buses runs
exactly as the same diagram wired without them (bit for bit, the same steps); recorded
element by element; checked with FILE:LINE errors; named in linearize; drawn as bars."""
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.cli import main
from bad_diagrams import check_bad

ROOT = Path(__file__).resolve().parents[2]
BUSES = ROOT / "tests" / "accel" / "corpus" / "buses.yaml"
PLAIN = Path(__file__).parent / "data" / "buses_unbundled.yaml"


@pytest.fixture(scope="module")
def runs():
    return blocksim.run(BUSES), blocksim.run(PLAIN)


def test_a_bus_is_its_wires_bit_for_bit(runs):
    bus, plain = runs
    # the independent truth: the same diagram with plain wires (tests/engine/data)
    assert bus.meta["solver"] == plain.meta["solver"]
    np.testing.assert_array_equal(bus.t, plain.t)
    for name, same in (("state.pos", "pos"), ("state.vel", "vel"), ("back.acc", "acc"),
                       ("kd", "kd")):
        np.testing.assert_array_equal(bus[name], plain[same], err_msg=name)


def test_a_bus_is_recorded_element_by_element(runs):
    bus, _ = runs
    assert [k for k in bus.keys() if k != "t"] == ["state.pos", "state.vel", "state.drive.force",
                                "state.drive.mode", "back.acc", "back.second", "kd"]
    assert bus["state.drive.mode"].shape == (len(bus.t), 3)
    np.testing.assert_array_equal(bus["back.second"], 2.0)  # Mode[1], picked and indexed
    # acc = force - c v - k x, the controller's sum (by hand from the recorded elements)
    np.testing.assert_allclose(bus["back.acc"], bus["state.drive.force"] - 0.4 * bus["state.vel"]
                               - 4.0 * bus["state.pos"], rtol=0, atol=1e-15)


def test_results_files_and_the_report_name_the_elements(tmp_path):
    blocksim.run(BUSES, out=tmp_path / "run", overrides={"simulation.stop": 0.1}, csv=True,
                 plots=True)
    with np.load(tmp_path / "run" / "results.npz") as data:
        assert "state.drive.mode" in data.files
    header = (tmp_path / "run" / "results.csv").read_text().splitlines()[0]
    assert "state.drive.mode[2]" in header.split(",")
    page = (tmp_path / "run" / "report.html").read_text()
    assert "<code>state.drive.mode</code></td><td>State (bus element)</td><td>(3,)" in page


def test_linearize_names_an_element_a_bus_select_picks():
    # the plant x'' = F - c x' - k x from the force to the velocity, through the buses
    a = blocksim.linearize(BUSES, inputs=["Force.y"], outputs=["Out.acc", "Velocity.y"])
    b = blocksim.linearize(PLAIN, inputs=["Force.y"], outputs=["Control.acc", "Velocity.y"])
    np.testing.assert_allclose(np.sort_complex(a.poles()), np.sort_complex(b.poles()))
    np.testing.assert_allclose(a.D, b.D)
    np.testing.assert_allclose(a.C @ np.linalg.solve(-a.A, a.B) + a.D,
                               b.C @ np.linalg.solve(-b.A, b.B) + b.D)


def test_check_explains_and_draw_draws_the_buses(tmp_path, capsys):
    assert main(["check", str(BUSES)]) == 0
    out = capsys.readouterr().out
    assert "State            bus         pos <- Position.y (), vel <- Velocity.y (), drive <- bus " \
           "Drive" in out
    assert "second <- Mode.y[1]" in out
    assert main(["draw", str(BUSES), "-o", str(tmp_path / "d.svg"), "--expand"]) == 0
    svg = (tmp_path / "d.svg").read_text()
    for key in ("box:State", "box:Control/Pick", "box:Out"):
        assert f'id="{key}"' in svg


BAD = {
    "a select picks an element the bus lacks": ("""\
        blocks:
          S: {type: sine}
          B: {type: bus, elements: [pos, vel]}
          Sel:
            type: bus_select
            elements:
              - pos
              - vell  # @LINE
          T: {type: terminator}
        wires: [S -> B.pos, S -> B.vel, B -> Sel, Sel.pos -> T]
        """, ["the bus has no element 'vell' (did you mean 'vel'?) (its elements: pos, vel)"]),
    "a wire into an element the bus lacks": ("""\
        blocks:
          S: {type: sine}
          B: {type: bus, elements: [pos, vel]}
        wires:
          - S -> B.pos
          - S -> B.poss  # @LINE
        """, ["bus 'B' has no element 'poss' (did you mean 'pos'?)"]),
    "a bus into a block's input": ("""\
        blocks:
          S: {type: sine}
          B: {type: bus, elements: [pos]}
          G: {type: gain, K: 1}
        wires:
          - S -> B.pos
          - B -> G  # @LINE
        """, ["'B' is a bus (pos): it goes into a bus_select, a bus or a subsystem's input"]),
    "an element left unconnected": ("""\
        blocks:
          S: {type: sine}
          B: {type: bus, elements: [pos, vel]}  # @LINE
        wires: [S -> B.pos]
        """, ["bus element 'B.vel' is not connected"]),
    "a bus_select fed a plain signal": ("""\
        blocks:
          S: {type: sine}
          Sel: {type: bus_select, elements: [a]}
        wires:
          - S -> Sel  # @LINE
        """, ["bus_select 'Sel' is fed 'S', which is not a bus"]),
    "an element named twice": ("""\
        blocks:
          B: {type: bus, elements: [a, a]}  # @LINE
        """, ["element(s) a named twice"]),
    "a recorded element the bus lacks": ("""\
        blocks:
          S: {type: sine}
          B: {type: bus, elements: [pos]}
          Sel: {type: bus_select, elements: [pos]}
        wires: [S -> B.pos, B -> Sel]
        record:
          x: Sel.vel  # @LINE
        """, ["bus_select 'Sel' has no output 'vel'"]),
    "a bus out of an enabled subsystem": ("""\
        blocks:
          S: {type: sine}
          Sub:
            type: subsystem
            enable: S.y
            diagram:
              inputs: {u: B.pos}
              outputs:
                s: B  # @LINE
              blocks:
                B: {type: bus, elements: [pos]}
        wires: [S -> Sub.u]
        """, ["block 'Sub' port 's': output 's' is a bus (pos): an enabled subsystem's "
              "outputs are signals", "make an output per element"]),
    "a bus as the diagram's output": ("""\
        blocks:
          S: {type: sine}
          B: {type: bus, elements: [pos]}
        wires: [S -> B.pos]
        outputs:
          s: B  # @LINE
        """, ["output 's' is a bus: a diagram's outputs are signals"]),
    "buses feeding each other": ("""\
        blocks:
          A: {type: bus, elements: [x]}
          B: {type: bus, elements: [y]}
          Sel: {type: bus_select, elements: [y]}
          T: {type: terminator}
        wires:
          - A -> B.y
          - B -> Sel
          - Sel.y -> A.x
          - Sel.y -> T  # @LINE
        """, ["is a bus (x)"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_buses(case, tmp_path, capsys):
    check_bad(*BAD[case], tmp_path, capsys)
