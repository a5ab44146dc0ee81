"""Messages a newcomer reads: every one names the file, and hints suggest the fix."""
import re

import pytest

from blocksim.cli import main


def test_a_diagram_without_stop_names_its_file(tmp_path, capsys):
    path = tmp_path / "nostop.yaml"
    path.write_text("blocksim: 1\nblocks:\n  C: {type: clock}\n")
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{path}: error: simulation.stop is required"), err
    assert "<diagram>" not in err


def test_an_unconnected_input_is_fed_a_constant_not_a_terminator(tmp_path, capsys):
    path = tmp_path / "open.yaml"
    path.write_text("blocksim: 1\nblocks:\n  Err: {type: sum, signs: '+-'}\n"
                    "  C: {type: constant, value: 1}\nwires: [C -> Err.u1]\n"
                    "simulation: {stop: 1}\n")
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:3: error: block 'Err' port 'u2': input is not connected" in err
    assert "`Zero: {type: constant, value: 0}`" in err and "`Zero -> Err.u2`" in err
    assert "terminator" not in err


def test_check_names_the_robot_kernels_in_use(capsys):
    from pathlib import Path

    from blocks.robot import backend
    demo1 = Path(__file__).resolve().parents[2] / "diagrams" / "demo1.yaml"
    assert main(["check", str(demo1)]) == 0
    out = capsys.readouterr().out
    expected = {"c": "C extension", "numba": "numba", "python": "plain Python"}[backend.name()]
    assert f"robot kernels: {expected}" in out


def test_a_span_beyond_the_largest_number_is_refused_at_stop(tmp_path):
    """issue 35 item 4: stop - start is computed in IEEE 754 doubles, whose largest value is
    1.7977e308: 8.9e307 - (-8.9e307) = 1.78e308 fits, 9e307 - (-9e307) = 1.8e308 does not
    (inf: the recording check's rows were NaN, a ValueError traceback)."""
    import blocksim
    from blocksim.errors import DiagramError
    path = tmp_path / "long.yaml"
    path.write_text("blocksim: 1\nblocks:\n  S: {type: sine}\n  I: {type: integrator}\n"
                    "wires: [S -> I]\nsimulation: {stop: 1}\nrecord: {x: I.y}\n")
    model = blocksim.load(path, {"simulation.start": -8.9e307, "simulation.stop": 8.9e307})
    assert model.settings.stop - model.settings.start == 1.78e308
    with pytest.raises(DiagramError, match=re.escape(
            "simulation.stop - start = 9e+307 - (-9e+307) is more than the largest number, "
            "1.798e+308")):
        blocksim.load(path, {"simulation.start": -9e307, "simulation.stop": 9e307})
